:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j MARK --set-mark 1337;-j MARK --set-xmark 0x539/0xffffffff;OK
-j MARK --set-mark 0x539/0xfff;-j MARK --set-xmark 0x539/0xfff;OK
-j MARK --set-mark 0x1/0x10;-j MARK --set-xmark 0x1/0x11;OK
-j MARK --set-xmark 0x4000/0x4000;=;OK
-j MARK --or-mark 0x4000;-j MARK --set-xmark 0x4000/0x4000;OK
-j MARK --xor-mark 0x4000;-j MARK --set-xmark 0x4000/0x0;OK
-j MARK --and-mark 0xffff00ff;-j MARK --set-xmark 0x0/0xff00;OK
-j MARK --set-xmark 0;-j MARK --set-xmark 0x0/0xffffffff;OK
-j MARK --set-mark 1 --or-mark 2;;FAIL
-j MARK --or-mark 0x1/0x1;;FAIL
-j MARK;;FAIL
:PREROUTING,OUTPUT
*nat
-j MARK --set-xmark 0x1/0x1;=;OK
