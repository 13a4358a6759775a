:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-m dscp --dscp 0;-m dscp --dscp 0x00;OK
-m dscp --dscp 46;-m dscp --dscp 0x2e;OK
-m dscp ! --dscp 0x3f;=;OK
-m dscp --dscp-class EF;-m dscp --dscp 0x2e;OK
-m dscp ! --dscp-class af41;-m dscp ! --dscp 0x22;OK
-m dscp --dscp 64;;FAIL
-m dscp --dscp-class AF99;;FAIL
-m dscp --dscp 1 --dscp-class CS1;;FAIL
-m dscp;;FAIL
