:PREROUTING,OUTPUT
*mangle
-j CONNMARK --save-mark;-j CONNMARK --save-mark --nfmask 0xffffffff --ctmask 0xffffffff;OK
-j CONNMARK --restore-mark --mask 0xff;-j CONNMARK --restore-mark --nfmask 0xff --ctmask 0xff;OK
-j CONNMARK --save-mark --ctmask 0xf --nfmask 0xf0;-j CONNMARK --save-mark --nfmask 0xf0 --ctmask 0xf;OK
-j CONNMARK --set-xmark 0x111/0xfff;=;OK
-j CONNMARK --set-mark 0x1;-j CONNMARK --set-xmark 0x1/0xffffffff;OK
-j CONNMARK --or-mark 0x2;-j CONNMARK --set-xmark 0x2/0x2;OK
-j CONNMARK --and-mark 0xff;-j CONNMARK --set-xmark 0x0/0xffffff00;OK
-j CONNMARK --save-mark --restore-mark;;FAIL
-j CONNMARK --save-mark --mask 1 --ctmask 2;;FAIL
-j CONNMARK --nfmask 1;;FAIL
