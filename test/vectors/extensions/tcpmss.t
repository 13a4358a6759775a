:INPUT,FORWARD,OUTPUT
-p tcp -m tcpmss --mss 1460;=;OK
-p tcp -m tcpmss ! --mss 536:1460;=;OK
-p tcp -m tcpmss --mss :1000;-p tcp -m tcpmss --mss 0:1000;OK
-p tcp -m tcpmss --mss 1000:100;;FAIL
-p udp -m tcpmss --mss 1;;FAIL
-m tcpmss --mss 1;;FAIL
-p tcp -m tcpmss;;FAIL
