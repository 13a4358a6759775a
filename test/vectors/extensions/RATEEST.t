:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-j RATEEST --rateest-name foo --rateest-interval 250ms --rateest-ewmalog 500ms;-j RATEEST --rateest-name foo --rateest-interval 250.0ms --rateest-ewmalog 500.0ms;OK
-j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s;-j RATEEST --rateest-name foo --rateest-interval 1.0s --rateest-ewmalog 4.0s;OK
-j RATEEST --rateest-name foo --rateest-interval 8s --rateest-ewmalog 64s;-j RATEEST --rateest-name foo --rateest-interval 8.0s --rateest-ewmalog 64.0s;OK
-j RATEEST --rateest-name foo --rateest-interval 100us --rateest-ewmalog 1ms;-j RATEEST --rateest-name foo --rateest-interval 250.0ms --rateest-ewmalog 2.0s;OK
-j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 1000s;-j RATEEST --rateest-name foo --rateest-interval 1.0s --rateest-ewmalog 512.0s;OK
-j RATEEST --rateest-name 0123456789abcdef --rateest-interval 1s --rateest-ewmalog 4s;-j RATEEST --rateest-name 0123456789abcde --rateest-interval 1.0s --rateest-ewmalog 4.0s;OK
-j RATEEST --rateest-name fooooooooooooooooooooooooooooooooooooo --rateest-interval 1s --rateest-ewmalog 4s;-j RATEEST --rateest-name foooooooooooooo --rateest-interval 1.0s --rateest-ewmalog 4.0s;OK
-j RATEEST --rateest-name foo --rateest-interval 1S --rateest-ewmalog 4SECS;-j RATEEST --rateest-name foo --rateest-interval 1.0s --rateest-ewmalog 4.0s;OK
-j RATEEST --rateest-name foo --rateest-interval 0.5s --rateest-ewmalog 3s;-j RATEEST --rateest-name foo --rateest-interval 500.0ms --rateest-ewmalog 2.0s;OK
-j RATEEST --rateest-name foo --rateest-interval 2000msec --rateest-ewmalog 1e1s;-j RATEEST --rateest-name foo --rateest-interval 2.0s --rateest-ewmalog 8.0s;OK
-j RATEEST --rateest-name foo --rateest-interval 0.5 --rateest-ewmalog 2;;FAIL
-j RATEEST --rateest-name foo --rateest-interval 9s --rateest-ewmalog 64s;;FAIL
-j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 1s;;FAIL
-j RATEEST --rateest-name foo --rateest-interval 1s;;FAIL
-j RATEEST --rateest-interval 1s --rateest-ewmalog 4s;;FAIL
-j RATEEST --rateest-name foo --rateest-interval 1x --rateest-ewmalog 4s;;FAIL
-j RATEEST --rateest-name foo --rateest-interval 3s --rateest-ewmalog 4s;;FAIL
-j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s --rateest-name bar;;FAIL
:INPUT,FORWARD,OUTPUT
*filter
-j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s;-j RATEEST --rateest-name foo --rateest-interval 1.0s --rateest-ewmalog 4.0s;OK
