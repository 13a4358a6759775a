:INPUT,FORWARD,OUTPUT
-j REJECT;-j REJECT --reject-with icmp6-port-unreachable;OK
-j REJECT --reject-with icmp6-adm-prohibited;=;OK
-j REJECT --reject-with no-route;-j REJECT --reject-with icmp6-no-route;OK
-j REJECT --reject-with addr-unreach;-j REJECT --reject-with icmp6-addr-unreachable;OK
-p tcp -j REJECT --reject-with tcp-reset;=;OK
-p tcp -j REJECT --reject-with tcp-rst;;FAIL
-j REJECT --reject-with icmp-port-unreachable;;FAIL
