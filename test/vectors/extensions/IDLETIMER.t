:INPUT,FORWARD,OUTPUT
-j IDLETIMER --timeout 10 --label idle;=;OK
-j IDLETIMER --label x --timeout 3600 --alarm;-j IDLETIMER --timeout 3600 --label x --alarm;OK
-j IDLETIMER --timeout 10;;FAIL
-j IDLETIMER --label x;;FAIL
