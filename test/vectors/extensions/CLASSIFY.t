:FORWARD,OUTPUT,POSTROUTING
*mangle
-j CLASSIFY --set-class 1:1;-j CLASSIFY --set-class 0001:0001;OK
-j CLASSIFY --set-class ffff:ABCD;-j CLASSIFY --set-class ffff:abcd;OK
-j CLASSIFY --set-class 1;;FAIL
-j CLASSIFY;;FAIL
:PREROUTING,INPUT
-j CLASSIFY --set-class 1:1;;FAIL
