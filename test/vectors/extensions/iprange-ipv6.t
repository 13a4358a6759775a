:INPUT
-m iprange --src-range 2001:db8::1-2001:db8::ff;=;OK
-m iprange ! --dst-range fd00:0:0:0::1-fd00::2;-m iprange ! --dst-range fd00::1-fd00::2;OK
-m iprange --src-range 10.0.0.1-10.0.0.2;;FAIL
