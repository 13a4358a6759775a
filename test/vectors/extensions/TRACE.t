:PREROUTING,OUTPUT
*raw
-p tcp -j TRACE;=;OK
:INPUT
*filter
-j TRACE;;FAIL
