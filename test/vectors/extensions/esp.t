:INPUT,FORWARD,OUTPUT
-p esp -m esp --espspi 256;=;OK
-p esp -m esp ! --espspi 1:100;=;OK
-p esp -m esp --espspi 5:5;-p esp -m esp --espspi 5;OK
-p esp -m esp --espspi :9;-p esp -m esp --espspi 0:9;OK
-p esp -m esp --espspi 0:4294967295;-p esp -m esp;OK
-p esp -m esp;=;OK
-m esp --espspi 1;;FAIL
-p tcp -m esp --espspi 1;;FAIL
-p esp -m esp --espspi 4294967296;;FAIL
