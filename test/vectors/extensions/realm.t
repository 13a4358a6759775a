:INPUT,FORWARD,OUTPUT
-m realm --realm 1;-m realm --realm 0x1;OK
-m realm ! --realm 0x10/0xff;=;OK
-m realm --realm 4294967295;-m realm --realm 0xffffffff;OK
-m realm --realm office;;FAIL
-m realm;;FAIL
:PREROUTING
*mangle
-m realm --realm 1;;FAIL
