:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j TEE --gateway 10.0.0.9;=;OK
-j TEE --gateway 192.0.2.1 --oif eth1;=;OK
-j TEE;;FAIL
-j TEE --gateway fd00::1;;FAIL
