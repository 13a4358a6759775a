:INPUT,FORWARD,OUTPUT
-m frag --fragid 7;=;OK
-m frag ! --fragid 1:100 --fraglen 8 --fragres --fragfirst --fragmore;=;OK
-m frag --fraglast;=;OK
-m frag;=;OK
-m frag --fragmore --fraglast;;FAIL
-m frag --fragid 4294967296;;FAIL
