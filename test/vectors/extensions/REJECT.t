:INPUT,FORWARD,OUTPUT
-j REJECT;-j REJECT --reject-with icmp-port-unreachable;OK
-j REJECT --reject-with icmp-host-prohibited;=;OK
-j REJECT --reject-with admin-prohib;-j REJECT --reject-with icmp-admin-prohibited;OK
-j REJECT --reject-with net-unreach;-j REJECT --reject-with icmp-net-unreachable;OK
-j REJECT --reject-with icmp-proto;-j REJECT --reject-with icmp-proto-unreachable;OK
-j REJECT --reject-with icmp-host;-j REJECT --reject-with icmp-host-unreachable;OK
-j REJECT --reject-with ICMP-NET-PROHIBITED;-j REJECT --reject-with icmp-net-prohibited;OK
-p tcp -j REJECT --reject-with tcp-reset;=;OK
-p tcp -j REJECT --reject-with tcp-rst;-p tcp -j REJECT --reject-with tcp-reset;OK
-j REJECT --reject-with tcp-reset;;FAIL
-p udp -j REJECT --reject-with tcp-reset;;FAIL
! -p tcp -j REJECT --reject-with tcp-reset;;FAIL
-j REJECT --reject-with echo-reply;;FAIL
-j REJECT --reject-with icmp6-port-unreachable;;FAIL
:PREROUTING,POSTROUTING
*mangle
-j REJECT;;FAIL
:INPUT
*mangle
-j REJECT;;FAIL
