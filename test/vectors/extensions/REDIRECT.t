:PREROUTING,OUTPUT
*nat
-p tcp -j REDIRECT --to-ports 15001;=;OK
-p tcp -j REDIRECT --to-port 4140;-p tcp -j REDIRECT --to-ports 4140;OK
-p tcp -j REDIRECT --to 4140;-p tcp -j REDIRECT --to-ports 4140;OK
-p udp -j REDIRECT --to-ports 15053;=;OK
-p tcp -j REDIRECT --to-ports 8000-8010 --random;=;OK
-p tcp -j REDIRECT --to-ports http;-p tcp -j REDIRECT --to-ports 80;OK
-p tcp -j REDIRECT --to-ports 0x50;-p tcp -j REDIRECT --to-ports 80;OK
-p tcp -j REDIRECT --to-ports 7-7;-p tcp -j REDIRECT --to-ports 7;OK
-p tcp -j REDIRECT;=;OK
-j REDIRECT;=;OK
-p tcp -j REDIRECT --to-ports 10-5;;FAIL
-p tcp -j REDIRECT --to-ports 10:20;;FAIL
-p tcp -j REDIRECT --to-ports 10-20/30;;FAIL
-p tcp -j REDIRECT --to-ports 1-ssh;;FAIL
-p icmp -j REDIRECT --to-ports 1;=;OK
-p gre -j REDIRECT --to-ports 1;;FAIL
-p tcp -j REDIRECT --to-ports 1 --to-ports 2;;FAIL
-p tcp -m comment --comment proxy-init/redirect -j REDIRECT --to-ports 4143;-p tcp -m comment --comment "proxy-init/redirect" -j REDIRECT --to-ports 4143;OK
-p tcp -j REDIRECT --to-port 4143 -m comment --comment proxy-init/redirect;-p tcp -m comment --comment "proxy-init/redirect" -j REDIRECT --to-ports 4143;OK
:INPUT,POSTROUTING
*nat
-p tcp -j REDIRECT --to-ports 1;;FAIL
:PREROUTING
*mangle
-p tcp -j REDIRECT --to-ports 1;;FAIL
