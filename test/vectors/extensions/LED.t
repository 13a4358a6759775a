:INPUT,FORWARD,OUTPUT
*filter
-j LED --led-trigger-id ssh;;FAIL
-j LED --led-trigger-id ssh --led-delay 100 --led-always-blink;;FAIL
