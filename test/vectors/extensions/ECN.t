:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-p tcp -j ECN --ecn-tcp-remove;=;OK
-p tcp -j ECN --ecn-tcp-ece 0 --ecn-tcp-cwr 0;-p tcp -j ECN --ecn-tcp-remove;OK
-p tcp -j ECN --ecn-tcp-cwr 1;=;OK
-j ECN --ecn-ip-ect 2;=;OK
-p tcp -j ECN --ecn-tcp-ece 1 --ecn-ip-ect 1;=;OK
-j ECN --ecn-tcp-remove;;FAIL
-p tcp -j ECN --ecn-tcp-remove --ecn-tcp-cwr 1;;FAIL
-p tcp -j ECN --ecn-tcp-ece 2;;FAIL
-p tcp -j ECN;;FAIL
