:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-m tos --tos 0x10;-m tos --tos 0x10/0xff;OK
-m tos ! --tos 0x08/0x0c;=;OK
-m tos --tos Minimize-Delay;-m tos --tos 0x10/0x3f;OK
-m tos --tos normal-service;-m tos --tos 0x00/0x3f;OK
-m tos --tos 16/255;-m tos --tos 0x10/0xff;OK
-m tos --tos 0x100;;FAIL
-m tos --tos Fastest;;FAIL
-m tos;;FAIL
