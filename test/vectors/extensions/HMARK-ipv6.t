:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j HMARK --hmark-tuple src,dst,sport,dport,proto --hmark-mod 10 --hmark-offset 100 --hmark-rnd 0xdeadbeef;-j HMARK --hmark-src-prefix 128 --hmark-dst-prefix 128 --hmark-sport-mask 0xffff --hmark-dport-mask 0xffff --hmark-proto-mask 0xffff --hmark-rnd 0xdeadbeef --hmark-mod 10 --hmark-offset 100;OK
-j HMARK --hmark-src-prefix 64 --hmark-dst-prefix 128 --hmark-mod 10 --hmark-offset 100 --hmark-rnd 0xdeadbeef;-j HMARK --hmark-src-prefix 64 --hmark-dst-prefix 128 --hmark-rnd 0xdeadbeef --hmark-mod 10 --hmark-offset 100;OK
-j HMARK --hmark-src-prefix ffff:: --hmark-mod 10 --hmark-offset 100 --hmark-rnd 0xdeadbeef;-j HMARK --hmark-src-prefix 16 --hmark-rnd 0xdeadbeef --hmark-mod 10 --hmark-offset 100;OK
-j HMARK --hmark-tuple ct,sport --hmark-mod 3 --hmark-rnd 0xdeadbeef;-j HMARK --hmark-sport-mask 0xffff --hmark-rnd 0xdeadbeef --hmark-mod 3 --hmark-tuple ct;OK
-j HMARK --hmark-src-prefix 129 --hmark-mod 10 --hmark-offset 100 --hmark-rnd 0xdeadbeef;;FAIL
