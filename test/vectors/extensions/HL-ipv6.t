:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j HL --hl-set 255;=;OK
-j HL --hl-dec 2;=;OK
-j HL --hl-inc 1;=;OK
-j HL --hl-inc 0;;FAIL
-j HL;;FAIL
