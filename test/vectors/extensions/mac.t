:PREROUTING,INPUT,FORWARD
*mangle
-m mac --mac-source 00:11:22:aa:bb:cc;=;OK
-m mac ! --mac-source 02:42:AC:11:00:02;-m mac ! --mac-source 02:42:ac:11:00:02;OK
-m mac --mac-source 0:1:2:a:b:c;-m mac --mac-source 00:01:02:0a:0b:0c;OK
-m mac --mac-source 000:11:22:aa:bb:cc;;FAIL
-m mac --mac-source 00-11-22-aa-bb-cc;;FAIL
-m mac --mac-source 00:11:22:aa:bb;;FAIL
-m mac --mac-source XX:XX:XX:XX:XX:XX;;FAIL
-m mac;;FAIL
:OUTPUT,POSTROUTING
*mangle
-m mac --mac-source 00:11:22:33:44:55;;FAIL
