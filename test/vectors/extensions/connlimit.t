:INPUT,FORWARD,OUTPUT
-m connlimit --connlimit-above 2;-m connlimit --connlimit-above 2 --connlimit-mask 32 --connlimit-saddr;OK
-m connlimit --connlimit-upto 10 --connlimit-mask 24;-m connlimit --connlimit-upto 10 --connlimit-mask 24 --connlimit-saddr;OK
-m connlimit ! --connlimit-upto 1 --connlimit-daddr;-m connlimit --connlimit-above 1 --connlimit-mask 32 --connlimit-daddr;OK
-m connlimit ! --connlimit-above 3 --connlimit-mask 0;-m connlimit --connlimit-upto 3 --connlimit-mask 0 --connlimit-saddr;OK
-m connlimit --connlimit-above 1 --connlimit-mask 33;-m connlimit --connlimit-above 1 --connlimit-mask 32 --connlimit-saddr;OK
-m connlimit --connlimit-above 1 --connlimit-mask 129;;FAIL
-m connlimit --connlimit-above 1 --connlimit-upto 2;;FAIL
-m connlimit --connlimit-above 1 --connlimit-saddr --connlimit-daddr;;FAIL
-m connlimit --connlimit-mask 24;;FAIL
