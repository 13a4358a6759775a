:INPUT,FORWARD,OUTPUT
-m state --state NEW;=;OK
-m state --state ESTABLISHED,RELATED;-m state --state RELATED,ESTABLISHED;OK
-m state ! --state INVALID;=;OK
-m state --state RELATED,ESTABLISHED,UNTRACKED;=;OK
-m state --state ESTABLISHED,NEW,RELATED,UNTRACKED;-m state --state NEW,RELATED,ESTABLISHED,UNTRACKED;OK
-m state --state new;-m state --state NEW;OK
-m state --state DNAT;;FAIL
-m state --state;;FAIL
-p tcp -m state --state NEW --dport 22;-p tcp -m state --state NEW -m tcp --dport 22;OK
