:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-p udp -m udp --dport 68 -j CHECKSUM --checksum-fill;=;OK
-j CHECKSUM --checksum-fill;=;OK
-j CHECKSUM;;FAIL
:INPUT
*filter
-j CHECKSUM --checksum-fill;;FAIL
