:INPUT,OUTPUT
-m nfacct --nfacct-name localhost_nps_accepted_pkts;-m nfacct --nfacct-name  localhost_nps_accepted_pkts;OK
-m nfacct --nfacct-name  localhost_nps_accepted_pkts;=;OK
-m nfacct;;FAIL
