:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-m pkttype --pkt-type unicast;=;OK
-m pkttype ! --pkt-type broadcast;=;OK
-m pkttype --pkt-type MULTICAST;-m pkttype --pkt-type multicast;OK
-m pkttype --pkt-type host;-m pkttype --pkt-type unicast;OK
-m pkttype --pkt-type bcast;-m pkttype --pkt-type broadcast;OK
-m pkttype --pkt-type otherhost;=;OK
-m pkttype --pkt-type anycast;;FAIL
-m pkttype;;FAIL
