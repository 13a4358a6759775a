:OUTPUT,POSTROUTING
*nat
-m owner --uid-owner 1337;=;OK
-m owner ! --uid-owner 1337;=;OK
-m owner --uid-owner root;-m owner --uid-owner 0;OK
-m owner --uid-owner nobody;-m owner --uid-owner 65534;OK
-m owner --gid-owner www-data;-m owner --gid-owner 33;OK
-m owner --uid-owner 1000-2000;=;OK
-m owner --uid-owner 1000:2000;-m owner --uid-owner 1000-2000;OK
-m owner --gid-owner 0x10;-m owner --gid-owner 16;OK
-m owner --uid-owner 5-5;-m owner --uid-owner 5;OK
-m owner --gid-owner 1337 --uid-owner 1337;-m owner --uid-owner 1337 --gid-owner 1337;OK
-m owner ! --socket-exists --uid-owner 1;-m owner ! --socket-exists --uid-owner 1;OK
-m owner --gid-owner 10 --suppl-groups --socket-exists;-m owner --socket-exists --gid-owner 10 --suppl-groups;OK
-m owner --uid-owner 4294967294;=;OK
-m owner --uid-owner 4294967295;;FAIL
-m owner --uid-owner -1;;FAIL
-m owner --uid-owner nosuchuser;;FAIL
-m owner --uid-owner 10-x;;FAIL
-m owner --gid-owner java;;FAIL
-m owner;;FAIL
-m owner --suppl-groups;;FAIL
-m owner --uid-owner 1 --uid-owner 2;;FAIL
:INPUT,FORWARD
*mangle
-m owner --uid-owner 0;;FAIL
:PREROUTING
*mangle
-m owner ! --uid-owner 0;;FAIL
