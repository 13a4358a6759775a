:INPUT,FORWARD,OUTPUT
-m helper --helper ftp;=;OK
-m helper ! --helper sip-5060;=;OK
-m helper --helper "a b";=;OK
-m helper;;FAIL
