:INPUT,FORWARD,OUTPUT
-m ipv6header --header hop;-m ipv6header --header hop-by-hop;OK
-m ipv6header ! --header frag,ipv6-route --soft;-m ipv6header ! --header ipv6-route,ipv6-frag --soft;OK
-m ipv6header --header dst,auth,esp,none,prot;-m ipv6header --header ipv6-opts,ah,esp,ipv6-nonxt,protocol;OK
-m ipv6header --header 44;-m ipv6header --header ipv6-frag;OK
-m ipv6header --header tcp;;FAIL
-m ipv6header --header bogus;;FAIL
-m ipv6header --soft;;FAIL
