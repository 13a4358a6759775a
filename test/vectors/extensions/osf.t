:PREROUTING,INPUT,FORWARD
*mangle
-p tcp -m osf --genre Linux;=;OK
-p tcp -m osf ! --genre Linux --ttl 0 --log 2;=;OK
-p tcp -m osf --genre Windows --log 1 --ttl 2;-p tcp -m osf --genre Windows --ttl 2 --log 1;OK
-p tcp -m osf --genre abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz;-p tcp -m osf --genre abcdefghijklmnopqrstuvwxyzabcde;OK
-p tcp -m osf --genre Linux --ttl 3;;FAIL
-p tcp -m osf --genre Linux --log 3;;FAIL
-p tcp -m osf --ttl 1;;FAIL
-p tcp -m osf --genre Linux ! --ttl 1;;FAIL
-p udp -m osf --genre Linux;;FAIL
-m osf --genre Linux;;FAIL
:OUTPUT
-p tcp -m osf --genre Linux;;FAIL
