:INPUT,FORWARD,OUTPUT
-p ah -m ah --ahspi 7;=;OK
-p ah -m ah ! --ahspi 7:9;=;OK
-p ah -m ah;=;OK
-m ah --ahspi 7;;FAIL
-p ah -m ah --ahlen 1;;FAIL
