:PREROUTING
*raw
-m rpfilter;=;OK
-m rpfilter --invert;=;OK
-m rpfilter --invert --loose --accept-local --validmark;-m rpfilter --loose --validmark --accept-local --invert;OK
:PREROUTING
*mangle
-m rpfilter --loose;=;OK
:PREROUTING
*nat
-m rpfilter;;FAIL
:INPUT
*mangle
-m rpfilter;;FAIL
