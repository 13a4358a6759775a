:INPUT,FORWARD,OUTPUT
-j NFLOG;=;OK
-j NFLOG --nflog-group 5 --nflog-prefix "dropped: ";-j NFLOG --nflog-prefix "dropped: " --nflog-group 5;OK
-j NFLOG --nflog-threshold 10 --nflog-size 128;-j NFLOG --nflog-size 128 --nflog-threshold 10;OK
-j NFLOG --nflog-group 70000;;FAIL
