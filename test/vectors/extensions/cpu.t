:INPUT,FORWARD,OUTPUT
-m cpu --cpu 0;=;OK
-m cpu ! --cpu 3;=;OK
-m cpu --cpu 0x10;-m cpu --cpu 16;OK
-m cpu --cpu -1;;FAIL
-m cpu;;FAIL
