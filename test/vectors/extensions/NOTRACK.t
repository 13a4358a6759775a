:PREROUTING,OUTPUT
*raw
-j NOTRACK;=;OK
-p tcp -m tcp --dport 80 -j NOTRACK;=;OK
-j NOTRACK --zone 1;;FAIL
:OUTPUT
*filter
-j NOTRACK;;FAIL
