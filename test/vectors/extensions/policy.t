:INPUT,FORWARD,PREROUTING
*mangle
-m policy --dir in --pol ipsec;=;OK
-m policy --pol none --dir in;-m policy --dir in --pol none;OK
-m policy --dir in --pol ipsec --proto esp --mode tunnel --tunnel-src 192.0.2.1;-m policy --dir in --pol ipsec --proto esp --mode tunnel --tunnel-src 192.0.2.1;OK
-m policy --dir in --pol ipsec --strict --reqid 1 --next --spi 0x100 ! --proto ah;-m policy --dir in --pol ipsec --strict --reqid 1 --next --spi 0x100 ! --proto ah;OK
-m policy --dir in --pol ipsec --reqid 1 --next --reqid 2;;FAIL
-m policy --dir in --pol none --strict;;FAIL
-m policy --dir in;-m policy --dir in --pol ipsec;OK
-m policy --pol none;;FAIL
-m policy --dir in --pol ipsec --tunnel-src 10.0.0.1;;FAIL
-m policy --dir in --pol ipsec --proto 50 --spi 16;-m policy --dir in --pol ipsec --spi 0x10 --proto esp;OK
-m policy --dir in --pol ipsec --mode tunnel --reqid 5 --tunnel-dst 1.2.3.4 --tunnel-src 5.6.7.8/24;-m policy --dir in --pol ipsec --reqid 5 --mode tunnel --tunnel-dst 1.2.3.4 --tunnel-src 5.6.7.8/24;OK
-m policy --dir in --pol maybe;;FAIL
:INPUT,PREROUTING
*mangle
-m policy --dir out --pol ipsec;;FAIL
:OUTPUT,POSTROUTING
*mangle
-m policy --dir out --pol ipsec;=;OK
-m policy --dir in --pol ipsec;;FAIL
:FORWARD
*mangle
-m policy --dir out --pol ipsec;=;OK
