:INPUT,FORWARD,OUTPUT
-m connbytes --connbytes 0:1000 --connbytes-mode bytes --connbytes-dir both;=;OK
-m connbytes --connbytes 10 --connbytes-dir original --connbytes-mode packets;-m connbytes --connbytes 10 --connbytes-mode packets --connbytes-dir original;OK
-m connbytes ! --connbytes 10:20 --connbytes-mode avgpkt --connbytes-dir reply;=;OK
-m connbytes --connbytes 5: --connbytes-mode bytes --connbytes-dir both;-m connbytes --connbytes 5 --connbytes-mode bytes --connbytes-dir both;OK
-m connbytes --connbytes 20:10 --connbytes-mode bytes --connbytes-dir both;;FAIL
-m connbytes --connbytes 1 --connbytes-mode octets --connbytes-dir both;;FAIL
-m connbytes --connbytes 1 --connbytes-mode bytes;;FAIL
