:INPUT,FORWARD,OUTPUT
*mangle
-j SECMARK --selctx system_u:object_r:ssh_packet_t:s0;;FAIL
-j SECMARK;;FAIL
