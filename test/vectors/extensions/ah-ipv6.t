:INPUT,FORWARD,OUTPUT
-m ah --ahspi 7;=;OK
-m ah --ahspi 1:2 ! --ahlen 0 --ahres;=;OK
-m ah --ahlen 0;-m ah;OK
-m ah --ahlen 4;=;OK
-m ah --ahres;=;OK
