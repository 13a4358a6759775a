:INPUT,FORWARD,OUTPUT
*filter
-m ipvs --ipvs;;FAIL
-m ipvs --vproto tcp --vaddr 10.0.0.1/32 --vport 80 --vdir ORIGINAL --vmethod MASQ;;FAIL
