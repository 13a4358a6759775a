:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-m ttl --ttl-eq 64;=;OK
-m ttl ! --ttl-eq 1;=;OK
-m ttl --ttl-lt 10;=;OK
-m ttl --ttl-gt 254;=;OK
-m ttl --ttl 5;-m ttl --ttl-eq 5;OK
-m ttl --ttl-eq 256;;FAIL
-m ttl ! --ttl-lt 5;;FAIL
-m ttl --ttl-lt 5 --ttl-gt 2;;FAIL
-m ttl;;FAIL
