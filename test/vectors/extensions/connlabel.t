:INPUT,FORWARD,OUTPUT
-m connlabel --label 0;-m connlabel --label "0";OK
-m connlabel ! --label 127;-m connlabel ! --label "127";OK
-m connlabel --label 5 --set;-m connlabel --label "5" --set;OK
-m connlabel --label 128;;FAIL
-m connlabel --label blue;;FAIL
