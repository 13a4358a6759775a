:PREROUTING,OUTPUT
*raw
-j CT --zone 1;=;OK
-p udp -m udp --dport 53 -j CT --zone 2;=;OK
-j CT --notrack;=;OK
-j CT --zone 0;-j CT;OK
-j CT --zone-orig 3;=;OK
-j CT --zone-reply mark;=;OK
-j CT --zone MARK;-j CT --zone mark;OK
-j CT --zone-orig 3 --zone-reply 3;-j CT --zone 3;OK
-j CT --zone 4 --notrack;-j CT --notrack --zone 4;OK
-j CT --zone 0x10;-j CT --zone 16;OK
-j CT --ctevents related,new --expevents new;-j CT --ctevents new,related --expevents new;OK
-j CT --zone 65536;;FAIL
-j CT --ctevents bogus;;FAIL
:PREROUTING
*mangle
-j CT --zone 1;;FAIL
