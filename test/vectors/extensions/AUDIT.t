:INPUT,FORWARD,OUTPUT
-j AUDIT --type accept;=;OK
-j AUDIT --type DROP;-j AUDIT --type drop;OK
-j AUDIT --type reject;=;OK
-j AUDIT --type log;;FAIL
-j AUDIT;;FAIL
