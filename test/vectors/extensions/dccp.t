:INPUT,FORWARD,OUTPUT
-p dccp -m dccp --dport 5004;=;OK
-p dccp -m dccp ! --sport 1000:2000 --dport ssh;-p dccp -m dccp ! --sport 1000:2000 --dport 22;OK
-p dccp -m dccp --dport 9:1;=;OK
-p dccp -m dccp --dccp-types request,ACK;-p dccp -m dccp --dccp-types REQUEST,ACK;OK
-p dccp -m dccp ! --dccp-types INVALID --dccp-option 2;=;OK
-p dccp --sport 5;-p dccp -m dccp --sport 5;OK
-p dccp -m dccp --dccp-types NONE;;FAIL
-p dccp -m dccp --dccp-option 0;;FAIL
-m dccp --dport 1;;FAIL
