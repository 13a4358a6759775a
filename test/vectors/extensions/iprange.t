:INPUT,FORWARD,OUTPUT
-m iprange --src-range 127.0.0.1-127.0.10.0;=;OK
-m iprange ! --dst-range 10.0.0.0-10.255.255.255;=;OK
-m iprange --dst-range 10.0.0.1;-m iprange --dst-range 10.0.0.1-10.0.0.1;OK
-m iprange --dst-range 10.0.0.9-10.0.0.1;=;OK
-m iprange --dst-range 10.0.0.1-10.0.0.2 --src-range 10.0.0.3-10.0.0.4;-m iprange --src-range 10.0.0.3-10.0.0.4 --dst-range 10.0.0.1-10.0.0.2;OK
-m iprange --src-range 10.0.0.1/24-10.0.0.3;;FAIL
-m iprange --src-range 10.0.0.256-10.0.1.0;;FAIL
-m iprange;;FAIL
