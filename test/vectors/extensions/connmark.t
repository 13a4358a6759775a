:PREROUTING,OUTPUT
*mangle
-m connmark --mark 0x539;=;OK
-m connmark --mark 1337/0xfff;-m connmark --mark 0x539/0xfff;OK
-m connmark ! --mark 0x0/0x1;=;OK
-m connmark --mark 0x1 -m mark --mark 0x2;=;OK
-m connmark;;FAIL
