:POSTROUTING,INPUT
*nat
-j SNAT --to-source 192.0.2.1;=;OK
-j SNAT --to-source 192.0.2.1-192.0.2.9;=;OK
-p udp -j SNAT --to-source 192.0.2.1:1024-2048;=;OK
-p tcp -j SNAT --to-source :1000;=;OK
-j SNAT --to-source 192.0.2.1 --persistent --random-fully --random;-j SNAT --to-source 192.0.2.1 --random --random-fully --persistent;OK
-p tcp -j SNAT --to-source 192.0.2.1:0;=;OK
-p tcp -j SNAT --to-source 192.0.2.1:ssh;-p tcp -j SNAT --to-source 192.0.2.1:22;OK
-p tcp -j SNAT --to-source 192.0.2.1:1000-2000/100;-p tcp -j SNAT --to-source 192.0.2.1:1000-2000/0;OK
-p tcp -j SNAT --to-source 192.0.2.1:1000-2000/0;;FAIL
-p tcp -j SNAT --to-source 192.0.2.1:10:20;;FAIL
-j SNAT --to-source 192.0.2.1:1000;;FAIL
-j SNAT;;FAIL
:OUTPUT,PREROUTING
*nat
-j SNAT --to-source 192.0.2.1;;FAIL
