:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-p tcp -j TCPOPTSTRIP --strip-options timestamp,mss;-p tcp -j TCPOPTSTRIP --strip-options 2,8;OK
-p tcp -j TCPOPTSTRIP --strip-options sack-permitted,sack,md5,wscale;-p tcp -j TCPOPTSTRIP --strip-options 3,4,5,19;OK
-p tcp -j TCPOPTSTRIP;=;OK
-p tcp -j TCPOPTSTRIP --strip-options 2,2;;FAIL
-p tcp -j TCPOPTSTRIP --strip-options nop;;FAIL
-j TCPOPTSTRIP --strip-options 2;;FAIL
