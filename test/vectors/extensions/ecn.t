:INPUT,FORWARD,OUTPUT
-p tcp -m ecn --ecn-tcp-cwr;=;OK
-p tcp -m ecn ! --ecn-tcp-ece;=;OK
-p tcp -m ecn --ecn-tcp-cwr --ecn-tcp-ece;-p tcp -m ecn --ecn-tcp-ece --ecn-tcp-cwr;OK
-m ecn --ecn-ip-ect 3;=;OK
-m ecn ! --ecn-ip-ect 0;=;OK
-m ecn --ecn-tcp-cwr;;FAIL
-m ecn --ecn-ip-ect 4;;FAIL
-m ecn;;FAIL
