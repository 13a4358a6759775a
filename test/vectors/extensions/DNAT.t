:PREROUTING,OUTPUT
*nat
-p tcp -j DNAT --to-destination 10.180.0.1:80;=;OK
-j DNAT --to-destination 10.180.0.1;=;OK
-p tcp -j DNAT --to-destination 10.0.0.1-10.0.0.4:8000-8010;=;OK
-p tcp -j DNAT --to-destination :8080;=;OK
-p tcp -j DNAT --to-destination 10.0.0.1:http;-p tcp -j DNAT --to-destination 10.0.0.1:80;OK
-p tcp -j DNAT --to-destination 10.0.0.1:8000-8010/100 --persistent --random;-p tcp -j DNAT --to-destination 10.0.0.1:8000-8010/100 --random --persistent;OK
-p udp -j DNAT --to-destination 10.0.0.1:53-53;-p udp -j DNAT --to-destination 10.0.0.1:53;OK
-p tcp -j DNAT --to-destination 10.0.0.1:80:90;;FAIL
-p tcp -j DNAT --to-destination 10.0.0.1:90-80;;FAIL
-p tcp -j DNAT --to-destination 10.0.0.1:80-http;;FAIL
-p tcp -j DNAT --to-destination 10.0.0.256;;FAIL
-j DNAT --to-destination 10.0.0.1:80;;FAIL
-j DNAT --to-destination [10.0.0.1]:80;;FAIL
-j DNAT --random;;FAIL
:INPUT
*nat
-j DNAT --to-destination 10.0.0.1;;FAIL
:PREROUTING
*filter
-j DNAT --to-destination 10.0.0.1;;FAIL
