:INPUT,FORWARD,OUTPUT
-m dst --dst-len 0;=;OK
-m dst ! --dst-len 16 --dst-opts 201:16;=;OK
-m dst --dst-opts 1,2,3;=;OK
-m dst --dst-opts 0:1;;FAIL
