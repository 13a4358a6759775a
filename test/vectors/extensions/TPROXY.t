:PREROUTING
*mangle
-p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff;=;OK
-p tcp -j TPROXY --tproxy-mark 1337/0xffffffff --on-port 15006;-p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff;OK
-p udp -j TPROXY --on-port 0 --on-ip 127.0.0.1;-p udp -j TPROXY --on-port 0 --on-ip 127.0.0.1 --tproxy-mark 0x0/0x0;OK
-p tcp -j TPROXY --on-port http --tproxy-mark 0x1;-p tcp -j TPROXY --on-port 80 --on-ip 0.0.0.0 --tproxy-mark 0x1/0xffffffff;OK
-p tcp -j TPROXY --on-ip 127.0.0.1;;FAIL
-p tcp -j TPROXY --on-port 70000;-p tcp -j TPROXY --on-port 4464 --on-ip 0.0.0.0 --tproxy-mark 0x0/0x0;OK
-p tcp -j TPROXY --on-port 0x50;;FAIL
-j TPROXY --on-port 1;;FAIL
-p icmp -j TPROXY --on-port 1;;FAIL
:OUTPUT
*mangle
-p tcp -j TPROXY --on-port 1;;FAIL
:PREROUTING
*nat
-p tcp -j TPROXY --on-port 1;;FAIL
