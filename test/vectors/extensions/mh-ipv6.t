:INPUT,FORWARD,OUTPUT
-p mh -m mh --mh-type 5;-p mobility-header -m mh --mh-type 5;OK
-p mh -m mh ! --mh-type bu;-p mobility-header -m mh ! --mh-type 5;OK
-p mh -m mh --mh-type home:careof-test;-p mobility-header -m mh --mh-type 1:4;OK
-p mh -m mh --mh-type :6;-p mobility-header -m mh --mh-type 0:6;OK
-p mh -m mh --mh-type 0:255;-p mobility-header -m mh;OK
-p mh --mh-type 1;-p mobility-header -m mh --mh-type 1;OK
-p mh -m mh --mh-type 7:2;;FAIL
-p mh -m mh --mh-type nosuch;;FAIL
-m mh --mh-type 1;;FAIL
