:FORWARD,OUTPUT,POSTROUTING
*mangle
-p tcp -m tcp --tcp-flags SYN,RST SYN -j TCPMSS --clamp-mss-to-pmtu;=;OK
-p tcp -j TCPMSS --set-mss 1400;=;OK
-p tcp -j TCPMSS --set-mss 1400 --clamp-mss-to-pmtu;-p tcp -j TCPMSS --clamp-mss-to-pmtu;OK
-p tcp -j TCPMSS --clamp-mss-to-pmtu --set-mss 1400;-p tcp -j TCPMSS --set-mss 1400;OK
-p tcp -j TCPMSS --set-mss 65516;;FAIL
-j TCPMSS --set-mss 1400;;FAIL
-p tcp -j TCPMSS;;FAIL
:PREROUTING,INPUT
-p tcp -j TCPMSS --clamp-mss-to-pmtu;;FAIL
-p tcp -j TCPMSS --set-mss 536;=;OK
