:INPUT,FORWARD,OUTPUT
-p sctp -m sctp --dport 50000;=;OK
-p sctp --dport 5060;-p sctp -m sctp --dport 5060;OK
-p sctp -m sctp ! --sport 1:1023 --dport 9;=;OK
-p sctp -m sctp --dport :;-p sctp -m sctp --dport 0:65535;OK
-p tcp -m sctp --dport 1;;FAIL
-p sctp -m sctp --dport ssh;;FAIL
-p sctp -m sctp --dport 4:3;;FAIL
-p sctp -m sctp ! --dport 0:10;=;OK
