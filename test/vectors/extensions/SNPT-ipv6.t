:INPUT,POSTROUTING
*mangle
-j SNPT --src-pfx fd00::/64 --dst-pfx 2001:db8::/64;=;OK
-j SNPT --dst-pfx 2001:db8::/64;;FAIL
:PREROUTING
-j SNPT --src-pfx fd00::/64 --dst-pfx 2001:db8::/64;;FAIL
