:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j TTL --ttl-set 64;=;OK
-j TTL --ttl-dec 1;=;OK
-j TTL --ttl-inc 255;=;OK
-j TTL --ttl-set 0;=;OK
-j TTL --ttl-dec 0;;FAIL
-j TTL --ttl-set 256;;FAIL
-j TTL --ttl-set 1 --ttl-inc 1;;FAIL
-j TTL;;FAIL
:INPUT
*filter
-j TTL --ttl-set 1;;FAIL
