:PREROUTING,OUTPUT
*mangle
-j DNPT --src-pfx fd00::/64 --dst-pfx 2001:db8::/64;=;OK
-j DNPT --dst-pfx 2001:db8::/48 --src-pfx fd00::/48;-j DNPT --src-pfx fd00::/48 --dst-pfx 2001:db8::/48;OK
-j DNPT --src-pfx fd00::/96 --dst-pfx 2001:db8::/64;;FAIL
-j DNPT --src-pfx fd00::1/64 --dst-pfx 2001:db8::/64;;FAIL
-j DNPT --src-pfx fd00::/64;;FAIL
:POSTROUTING
-j DNPT --src-pfx fd00::/64 --dst-pfx 2001:db8::/64;;FAIL
