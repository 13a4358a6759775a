:INPUT,FORWARD,OUTPUT
-m length --length 60;=;OK
-m length ! --length 40:1500;=;OK
-m length --length :576;-m length --length 0:576;OK
-m length --length 9000:;-m length --length 9000:65535;OK
-m length --length 0x40;-m length --length 64;OK
-m length --length 65536;;FAIL
-m length --length 10:20:30;;FAIL
-m length --length ten;;FAIL
-m length;;FAIL
