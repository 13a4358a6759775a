:INPUT,FORWARD,OUTPUT
-m rt --rt-type 0 --rt-segsleft 0;=;OK
-m rt ! --rt-type 2;=;OK
-m rt ! --rt-segsleft 1:5 ! --rt-len 8;=;OK
-m rt --rt-type 0 --rt-0-res --rt-0-addrs fd00::1,::2 --rt-0-not-strict;=;OK
-m rt --rt-segsleft 0:4294967295;-m rt;OK
-m rt --rt-0-res;;FAIL
-m rt --rt-type 1 --rt-0-addrs ::1;;FAIL
-m rt --rt-type 0 --rt-0-not-strict;;FAIL
-m rt --rt-type 0 --rt-0-addrs 1.2.3.4;;FAIL
