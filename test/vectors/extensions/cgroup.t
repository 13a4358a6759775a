:INPUT,OUTPUT,POSTROUTING
*mangle
-m cgroup --cgroup 1;=;OK
-m cgroup ! --cgroup 0x100001;-m cgroup ! --cgroup 1048577;OK
-m cgroup --path /;-m cgroup --path "/";OK
-m cgroup --path / --cgroup 1;;FAIL
-m cgroup;;FAIL
