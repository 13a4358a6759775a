:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-m mark --mark 0x1;=;OK
-m mark --mark 1;-m mark --mark 0x1;OK
-m mark --mark 0x539/0xfff;=;OK
-m mark ! --mark 0x539/0xfff;=;OK
-m mark --mark 0x4000/0x4000;=;OK
-m mark --mark 010;-m mark --mark 0x8;OK
-m mark --mark 0x1/0xffffffff;-m mark --mark 0x1;OK
-m mark --mark 0x1/;;FAIL
-m mark --mark 0x1/0x1x;;FAIL
-m mark --mark 0x100000000;;FAIL
-m mark --mark abc;;FAIL
-m mark;;FAIL
