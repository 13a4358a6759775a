:INPUT,FORWARD
-p tcp -j SYNPROXY --mss 1460 --wscale 7 --sack-perm --timestamp;-p tcp -j SYNPROXY --sack-perm --timestamp --wscale 7 --mss 1460;OK
-p tcp -m tcp --dport 80 -m conntrack --ctstate INVALID,UNTRACKED -j SYNPROXY --ecn;=;OK
-p tcp -j SYNPROXY;=;OK
-j SYNPROXY --mss 1460;;FAIL
:OUTPUT
-p tcp -j SYNPROXY;;FAIL
