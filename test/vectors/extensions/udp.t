:INPUT,OUTPUT,FORWARD
-p udp -m udp --dport 53;=;OK
-p udp -m udp --dport domain;-p udp -m udp --dport 53;OK
-p udp -m udp --sport ntp;-p udp -m udp --sport 123;OK
-p udp -m udp --dport ssh;-p udp -m udp --dport 22;OK
-p udp --sport 67:68 --dport 67:68;-p udp -m udp --sport 67:68 --dport 67:68;OK
-p udp -m udp ! --sport 1024: ! --dport :1023;-p udp -m udp ! --sport 1024:65535 --dport 1024:65535;OK
-p udp -m udp --dport 65535:0;=;OK
-m udp --dport 53;;FAIL
-p udp -m udp --tcp-flags SYN SYN;;FAIL
