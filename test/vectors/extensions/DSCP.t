:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j DSCP --set-dscp 0;-j DSCP --set-dscp 0x00;OK
-j DSCP --set-dscp 0x3f;=;OK
-j DSCP --set-dscp-class ef;-j DSCP --set-dscp 0x2e;OK
-j DSCP --set-dscp 64;;FAIL
-j DSCP --set-dscp-class xx;;FAIL
-j DSCP --set-dscp 1 --set-dscp-class CS1;;FAIL
-j DSCP;;FAIL
:INPUT
*filter
-j DSCP --set-dscp 1;;FAIL
