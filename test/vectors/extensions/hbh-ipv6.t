:INPUT,FORWARD,OUTPUT
-m hbh --hbh-len 0;=;OK
-m hbh ! --hbh-len 8 --hbh-opts 1:4,194,5;=;OK
-m hbh --hbh-opts 0x05:0x02;-m hbh --hbh-opts 5:2;OK
-m hbh;=;OK
-m hbh --hbh-opts 0:2;;FAIL
-m hbh --hbh-opts x;;FAIL
