:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j TOS --set-tos 0x10;-j TOS --set-tos 0x10/0xff;OK
-j TOS --set-tos Minimize-Cost;-j TOS --set-tos 0x02/0x3f;OK
-j TOS --set-tos 0x04/0x0c;=;OK
-j TOS --and-tos 0x1;-j TOS --set-tos 0x00/0xfe;OK
-j TOS --or-tos 0x8;-j TOS --set-tos 0x08/0x08;OK
-j TOS --xor-tos 0x4;-j TOS --set-tos 0x04/0x00;OK
-j TOS --set-tos 256;;FAIL
-j TOS --and-tos 1 --or-tos 2;;FAIL
-j TOS;;FAIL
