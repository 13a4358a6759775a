:POSTROUTING
*nat
-j MASQUERADE;=;OK
-p tcp -j MASQUERADE --to-ports 40000-50000;=;OK
-p udp -j MASQUERADE --to-ports 40000 --random;=;OK
-j MASQUERADE --random-fully --random;-j MASQUERADE --random --random-fully;OK
-p tcp -j MASQUERADE --to-ports 2-1;;FAIL
-p tcp -j MASQUERADE --to-ports http;-p tcp -j MASQUERADE --to-ports 80;OK
-p tcp -j MASQUERADE --to-ports 10-20/5;-p tcp -j MASQUERADE --to-ports 10-20/0;OK
-p tcp -j MASQUERADE --to-ports 10:20;;FAIL
-p tcp -j MASQUERADE --to-ports 10-ssh;;FAIL
-j MASQUERADE --to-ports 1024;;FAIL
:OUTPUT,PREROUTING,INPUT
*nat
-j MASQUERADE;;FAIL
