:INPUT,FORWARD,OUTPUT
# ports: single, range, open ends, names
-p tcp -m tcp --dport 443;=;OK
-p tcp -m tcp --sport 1024:65535 --dport 80;=;OK
-p tcp -m tcp --dport https;-p tcp -m tcp --dport 443;OK
-p tcp -m tcp --destination-port ssh;-p tcp -m tcp --dport 22;OK
-p tcp -m tcp --source-port 0x50;-p tcp -m tcp --sport 80;OK
-p tcp -m tcp --dport 8000:;-p tcp -m tcp --dport 8000:65535;OK
-p tcp -m tcp --dport :1023;-p tcp -m tcp --dport 0:1023;OK
-p tcp -m tcp --dport 0:65535;-p tcp -m tcp;OK
# iptables-nft writes no test for a negated full range, and lists no match without tests
-p tcp -m tcp ! --dport 0:65535;-p tcp;OK
-p tcp -m tcp ! --dport 0:1023;-p tcp -m tcp --dport 1024:65535;OK
-p tcp -m tcp ! --sport :65534;-p tcp -m tcp --sport 65535;OK
-p tcp -m tcp ! --dport 0;=;OK
-p tcp -m tcp ! --dport 1024:65535;=;OK
-p tcp -m tcp --dport 0:0;-p tcp -m tcp --dport 0;OK
-p tcp -m tcp --dport 9:8;;FAIL
-p tcp -m tcp --dport 70000;;FAIL
-p tcp -m tcp --dport syslog;-p tcp -m tcp --dport 514;OK
-p tcp -m tcp --dport 22 --dport 23;;FAIL
-p tcp -m tcp --dport 22 --destination-port 23;;FAIL
# implicit match: options after -p load it where they appear
-p tcp --dport 80;-p tcp -m tcp --dport 80;OK
-p tcp ! --dport 53;-p tcp -m tcp ! --dport 53;OK
-p tcp -m comment --comment x --dport 80;-p tcp -m comment --comment x -m tcp --dport 80;OK
--dport 80;;FAIL
-p udp -m tcp --dport 80;;FAIL
! -p tcp -m tcp --dport 80;=;OK
# flags: names in print order, ALL and NONE
-p tcp -m tcp --tcp-flags SYN,ACK SYN;-p tcp -m tcp --tcp-flags SYN,ACK SYN;OK
-p tcp -m tcp --tcp-flags ack,syn,fin syn;-p tcp -m tcp --tcp-flags FIN,SYN,ACK SYN;OK
-p tcp -m tcp --tcp-flags ALL NONE;-p tcp -m tcp --tcp-flags FIN,SYN,RST,PSH,ACK,URG NONE;OK
-p tcp -m tcp --tcp-flags ALL ALL;-p tcp -m tcp --tcp-flags FIN,SYN,RST,PSH,ACK,URG FIN,SYN,RST,PSH,ACK,URG;OK
-p tcp -m tcp ! --syn;-p tcp -m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN;OK
-p tcp --syn;-p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN;OK
-p tcp -m tcp --tcp-flags NONE NONE;-p tcp -m tcp;OK
-p tcp -m tcp --tcp-flags SYN;;FAIL
-p tcp -m tcp --tcp-flags SYN,BOGUS SYN;;FAIL
-p tcp -m tcp --syn --tcp-flags SYN SYN;;FAIL
# order of the saved options: sport, dport, tcp-option, tcp-flags
-p tcp -m tcp --syn --dport 22 --sport 1000;-p tcp -m tcp --sport 1000 --dport 22 --tcp-flags FIN,SYN,RST,ACK SYN;OK
-p tcp -m tcp --tcp-option 2 --dport 22;-p tcp -m tcp --dport 22 --tcp-option 2;OK
-p tcp -m tcp ! --tcp-option 8;=;OK
-p tcp -m tcp --tcp-option 0;;FAIL
-p tcp -m tcp --tcp-option 256;;FAIL
