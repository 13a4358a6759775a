:INPUT,FORWARD,OUTPUT
-m quota --quota 0;=;OK
-m quota ! --quota 1000000;=;OK
-m quota --quota 18446744073709551615;=;OK
-m quota --quota 0x100;-m quota --quota 256;OK
-m quota --quota 18446744073709551616;;FAIL
-m quota --quota 1k;;FAIL
-m quota;;FAIL
