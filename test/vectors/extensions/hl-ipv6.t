:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-p ipv6-icmp -m hl --hl-eq 255;=;OK
-m hl ! --hl-eq 64;=;OK
-m hl --hl-lt 2;=;OK
-m hl --hl-gt 0;=;OK
-m hl --hl 1;-m hl --hl-eq 1;OK
-m hl --hl-eq 300;;FAIL
-m hl --hl-eq 1 --hl-gt 1;;FAIL
-m hl;;FAIL
