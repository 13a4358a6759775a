:PREROUTING,INPUT
*mangle
-m socket;=;OK
-m socket --nowildcard --transparent;-m socket --transparent --nowildcard;OK
-m socket --restore-skmark;=;OK
:OUTPUT
*mangle
-m socket;;FAIL
