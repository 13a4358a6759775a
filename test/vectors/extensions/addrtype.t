:PREROUTING,OUTPUT
*nat
-m addrtype --dst-type LOCAL;=;OK
-m addrtype ! --dst-type LOCAL;=;OK
-m addrtype --src-type local;-m addrtype --src-type LOCAL;OK
-m addrtype --dst-type LOC;-m addrtype --dst-type LOCAL;OK
-m addrtype --dst-type MULTICAST,BROADCAST,LOCAL;-m addrtype --dst-type LOCAL,BROADCAST,MULTICAST;OK
-m addrtype --dst-type LOCAL --src-type UNICAST;-m addrtype --src-type UNICAST --dst-type LOCAL;OK
-m addrtype --dst-type U;-m addrtype --dst-type UNSPEC;OK
-m addrtype --dst-type LOCAL,;;FAIL
-m addrtype --dst-type HOME;;FAIL
-m addrtype --limit-iface-in;;FAIL
:PREROUTING
*nat
-m addrtype --dst-type LOCAL --limit-iface-in;=;OK
-m addrtype --dst-type LOCAL --limit-iface-out;;FAIL
:OUTPUT
*nat
-m addrtype --src-type LOCAL --limit-iface-out;=;OK
-m addrtype --src-type LOCAL --limit-iface-in;;FAIL
