:PREROUTING,OUTPUT
*nat
-j DNAT --to-destination fd00::10;=;OK
-p tcp -j DNAT --to-destination [fd00::10]:8080;=;OK
-p tcp -j DNAT --to-destination [fd00:0::10]:8080-8081;-p tcp -j DNAT --to-destination [fd00::10]:8080-8081;OK
-j DNAT --to-destination fd00::1-fd00::9;=;OK
-p tcp -j DNAT --to-destination [fd00::10;;FAIL
-j DNAT --to-destination 10.0.0.1;;FAIL
