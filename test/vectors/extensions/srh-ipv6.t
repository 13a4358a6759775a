:PREROUTING,INPUT,FORWARD,OUTPUT,POSTROUTING
*mangle
-m srh;=;OK
-m srh --srh-tag 5 --srh-lsid fd00::/8 --srh-nsid ::1/128 --srh-psid 2001:db8::1/64 --srh-last-entry-gt 1 --srh-segs-left-lt 3 --srh-hdr-len-eq 8 ! --srh-next-hdr 17;-m srh ! --srh-next-hdr 17 --srh-hdr-len-eq 8 --srh-segs-left-lt 3 --srh-last-entry-gt 1 --srh-tag 5 --srh-psid 2001:db8::1/64 --srh-nsid ::1/128 --srh-lsid fd00::/8;OK
-m srh ! --srh-hdr-len-gt 8 ! --srh-segs-left-eq 1 ! --srh-last-entry-lt 4 ! --srh-tag 0 ! --srh-psid fd00::1 ! --srh-nsid fd00::2/64 ! --srh-lsid fd00::3/0;-m srh ! --srh-hdr-len-gt 8 ! --srh-segs-left-eq 1 ! --srh-last-entry-lt 4 ! --srh-tag 0 ! --srh-psid fd00::1/128 ! --srh-nsid fd00::2/64 ! --srh-lsid fd00::3/0;OK
-m srh --srh-hdr-len-eq 1 --srh-hdr-len-gt 2;-m srh --srh-hdr-len-eq 2 --srh-hdr-len-gt 2;OK
-m srh ! --srh-segs-left-lt 9 --srh-segs-left-eq 3;-m srh --srh-segs-left-eq 3 ! --srh-segs-left-lt 3;OK
-m srh --srh-hdr-len-lt 0x10;-m srh --srh-hdr-len-lt 16;OK
-m srh --srh-nsid fd00::1/ffff:ffff::;-m srh --srh-nsid fd00::1/32;OK
-m srh --srh-next-hdr 256;;FAIL
-m srh --srh-next-hdr udp;;FAIL
-m srh --srh-tag 65536;;FAIL
-m srh --srh-segs-left-gt 256;;FAIL
-m srh --srh-psid fd00::1/129;;FAIL
-m srh --srh-psid 10.0.0.1;;FAIL
-m srh --srh-tag 1 --srh-tag 2;;FAIL
