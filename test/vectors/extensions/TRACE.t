:PREROUTING,OUTPUT
*raw
-p tcp -j TRACE;=;OK
# iptables-nft traces natively (meta nftrace) in any table; only legacy's xt_TRACE is raw-only
:INPUT
*filter
-j TRACE;=;OK
