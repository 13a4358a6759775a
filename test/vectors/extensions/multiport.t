:INPUT,FORWARD,OUTPUT
-p tcp -m multiport --dports 80,443;=;OK
-p tcp --match multiport --dports 4190,4191;-p tcp -m multiport --dports 4190,4191;OK
-p tcp -m multiport --destination-ports http,https;-p tcp -m multiport --dports 80,443;OK
-p tcp -m multiport --source-ports 1000:2000,3000;-p tcp -m multiport --sports 1000:2000,3000;OK
-p udp -m multiport ! --ports 53,123;=;OK
-p tcp -m multiport ! --dports 15090,15021,15020;=;OK
# fifteen slots; a range takes two
-p tcp -m multiport --dports 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15;=;OK
-p tcp -m multiport --dports 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16;;FAIL
-p tcp -m multiport --dports 443,1000:2000,1:2,3:4,5:6,7:8,9:10,11:12;=;OK
-p tcp -m multiport --dports 1,2,3,4,5,6,7,8,9,10,11,12,13,14:15;=;OK
-p tcp -m multiport --dports 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15:16;;FAIL
-p tcp -m multiport --dports 1,2,3,4,5,6,7,8,9,10,11,12,13:14;=;OK
# a range must go upwards; no open ends, no empty items
-p tcp -m multiport --dports 80:80;;FAIL
-p tcp -m multiport --dports 90:80;;FAIL
-p tcp -m multiport --dports 1024:;;FAIL
-p tcp -m multiport --dports 80,,81;;FAIL
-p tcp -m multiport --dports 80,;;FAIL
# protocol needed and one of the three options only
-m multiport --dports 80;;FAIL
-p icmp -m multiport --dports 80;;FAIL
! -p tcp -m multiport --dports 80;;FAIL
-p tcp -m multiport --dports 80 --sports 90;;FAIL
-p tcp -m multiport;;FAIL
-p sctp -m multiport --dports 5060;=;OK
-p dccp -m multiport --sports 1,2;=;OK
-p udplite -m multiport --ports 7;=;OK
