:INPUT,FORWARD,OUTPUT
-p ipcomp -m ipcomp --ipcompspi 18;=;OK
-p ipcomp -m ipcomp ! --ipcompspi 1:2 --compres;=;OK
-p ipcomp -m ipcomp --compres;-p ipcomp -m ipcomp --ipcompspi 0 --compres;OK
-m ipcomp --ipcompspi 18;;FAIL
