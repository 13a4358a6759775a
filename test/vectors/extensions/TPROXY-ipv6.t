:PREROUTING
*mangle
-p tcp -j TPROXY --tproxy-mark 0x539/0xffffffff --on-port 15006;-p tcp -j TPROXY --on-port 15006 --on-ip :: --tproxy-mark 0x539/0xffffffff;OK
-p tcp -j TPROXY --on-port 15006 --on-ip ::1;-p tcp -j TPROXY --on-port 15006 --on-ip ::1 --tproxy-mark 0x0/0x0;OK
-p tcp -j TPROXY --on-port 15006 --on-ip 127.0.0.1;;FAIL
