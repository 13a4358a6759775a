:INPUT,FORWARD
-m physdev --physdev-is-bridged;=;OK
-m physdev ! --physdev-is-bridged;=;OK
-m physdev --physdev-in veth+;=;OK
-m physdev --physdev-out eth0 --physdev-in eth1 --physdev-is-in;-m physdev --physdev-is-in --physdev-in eth1 --physdev-out eth0;OK
-m physdev ! --physdev-is-out ! --physdev-out br-lan0;=;OK
-m physdev;;FAIL
