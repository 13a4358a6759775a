:FORWARD
-m devgroup --src-group 1;-m devgroup --src-group 0x1;OK
-m devgroup ! --src-group 0x2/0xf --dst-group 3;-m devgroup ! --src-group 0x2/0xf --dst-group 0x3;OK
-m devgroup;;FAIL
:INPUT
-m devgroup --src-group 1;-m devgroup --src-group 0x1;OK
-m devgroup --dst-group 1;;FAIL
:OUTPUT
-m devgroup --dst-group 0x5;=;OK
-m devgroup --src-group 1;;FAIL
