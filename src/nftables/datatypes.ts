/**
 * nft datatypes: the symbols each type reads and how `nft list ruleset` prints its values
 * (`src/datatype.c`, `src/ct.c`, `src/meta.c`, `src/proto.c`, `src/exthdr.c`, `src/tcpopt.c` of
 * nftables 1.0.6), and the selectors (`ip saddr`, `meta mark`, `ct state`, `tcp option maxseg
 * size` …) with their types and widths. Service and protocol names are Debian 12's
 * `/etc/services` and `/etc/protocols` (netbase 6.4), which nft reads through the C library.
 *
 * @module
 */
import { formatIpv4, formatIpv6, parseIpv6 } from '../model/address.js';
import type { NftSelector, NftType, NftValue } from './model.js';

/** Symbol tables of the enumerated and bitmask types, in nft's order (bitmasks: by bit). */
const SYMBOLS: Partial<Record<NftType, readonly (readonly [string, number])[]>> = {
  ct_state: [['invalid', 1], ['established', 2], ['related', 4], ['new', 8], ['untracked', 64]],
  ct_status: [['expected', 1], ['seen-reply', 2], ['assured', 4], ['confirmed', 8], ['snat', 16], ['dnat', 32], ['dying', 512]],
  ct_event: [['new', 1], ['related', 2], ['destroy', 4], ['reply', 8], ['assured', 16], ['protoinfo', 32], ['helper', 64], ['mark', 128],
    ['seqadj', 256], ['secmark', 512], ['label', 1024]],
  ct_dir: [['original', 0], ['reply', 1]],
  tcp_flag: [['fin', 1], ['syn', 2], ['rst', 4], ['psh', 8], ['ack', 16], ['urg', 32], ['ecn', 64], ['cwr', 128]],
  nf_proto: [['ipv4', 2], ['ipv6', 10]],
  pkt_type: [['host', 0], ['unicast', 0], ['broadcast', 1], ['multicast', 2], ['other', 3]],
  fib_addrtype: [
    ['unspec', 0], ['unicast', 1], ['local', 2], ['broadcast', 3], ['anycast', 4], ['multicast', 5], ['blackhole', 6],
    ['unreachable', 7], ['prohibit', 8],
  ],
  icmp_type: [
    ['echo-reply', 0], ['destination-unreachable', 3], ['source-quench', 4], ['redirect', 5], ['echo-request', 8],
    ['router-advertisement', 9], ['router-solicitation', 10], ['time-exceeded', 11], ['parameter-problem', 12],
    ['timestamp-request', 13], ['timestamp-reply', 14], ['info-request', 15], ['info-reply', 16],
    ['address-mask-request', 17], ['address-mask-reply', 18],
  ],
  icmpv6_type: [
    ['destination-unreachable', 1], ['packet-too-big', 2], ['time-exceeded', 3], ['parameter-problem', 4],
    ['echo-request', 128], ['echo-reply', 129], ['mld-listener-query', 130], ['mld-listener-report', 131],
    ['mld-listener-done', 132], ['mld-listener-reduction', 132], ['nd-router-solicit', 133], ['nd-router-advert', 134],
    ['nd-neighbor-solicit', 135], ['nd-neighbor-advert', 136], ['nd-redirect', 137], ['router-renumbering', 138],
    ['ind-neighbor-solicit', 141], ['ind-neighbor-advert', 142], ['mld2-listener-report', 143],
  ],
  icmp_code: [
    ['net-unreachable', 0], ['host-unreachable', 1], ['prot-unreachable', 2], ['port-unreachable', 3],
    ['net-prohibited', 9], ['host-prohibited', 10], ['admin-prohibited', 13], ['frag-needed', 4],
  ],
  icmpv6_code: [
    ['no-route', 0], ['admin-prohibited', 1], ['addr-unreachable', 3], ['port-unreachable', 4],
    ['policy-fail', 5], ['reject-route', 6],
  ],
  icmpx_code: [['port-unreachable', 1], ['admin-prohibited', 3], ['no-route', 0], ['host-unreachable', 2]],
  boolean: [['exists', 1], ['missing', 0]],
  ether_type: [['ip', 0x0800], ['arp', 0x0806], ['ip6', 0x86dd], ['8021q', 0x8100], ['8021ad', 0x88a8], ['vlan', 0x8100]],
  arp_op: [['request', 1], ['reply', 2], ['rrequest', 3], ['rreply', 4], ['inrequest', 8], ['inreply', 9], ['nak', 10]],
  dscp: [
    ['cs0', 0x00], ['cs1', 0x08], ['cs2', 0x10], ['cs3', 0x18], ['cs4', 0x20], ['cs5', 0x28], ['cs6', 0x30], ['cs7', 0x38],
    ['df', 0x00], ['be', 0x00], ['lephb', 0x01], ['af11', 0x0a], ['af12', 0x0c], ['af13', 0x0e], ['af21', 0x12], ['af22', 0x14],
    ['af23', 0x16], ['af31', 0x1a], ['af32', 0x1c], ['af33', 0x1e], ['af41', 0x22], ['af42', 0x24], ['af43', 0x26], ['va', 0x2c],
    ['ef', 0x2e],
  ],
  ecn: [['not-ect', 0], ['ect1', 1], ['ect0', 2], ['ce', 3]],
  igmp_type: [['membership-query', 0x11], ['membership-report-v1', 0x12], ['membership-report-v2', 0x16], ['membership-report-v3', 0x22],
    ['leave-group', 0x17]],
  dccp_pkttype: [['request', 0], ['response', 1], ['data', 2], ['ack', 3], ['dataack', 4], ['closereq', 5], ['close', 6], ['reset', 7],
    ['sync', 8], ['syncack', 9]],
  iface_type: [['ether', 1], ['ppp', 512], ['ipip', 768], ['ipip6', 769], ['loopback', 772], ['sit', 776], ['ipgre', 778]],
  mh_type: [
    ['binding-refresh-request', 0], ['home-test-init', 1], ['careof-test-init', 2], ['home-test', 3], ['careof-test', 4],
    ['binding-update', 5], ['binding-acknowledgement', 6], ['binding-error', 7], ['fast-binding-update', 8],
    ['fast-binding-acknowledgement', 9], ['fast-binding-advertisement', 10], ['experimental-mobility-header', 11],
    ['home-agent-switch-message', 12],
  ],
  day: [['Sunday', 0], ['Monday', 1], ['Tuesday', 2], ['Wednesday', 3], ['Thursday', 4], ['Friday', 5], ['Saturday', 6]],
  // iproute2's /etc/iproute2/group and rt_realms as shipped by Debian 12.
  devgroup: [['default', 0]],
  realm: [['cosmos', 0]],
};

/** Types whose values are bit sets (printed as `a,b`, matched with `&` when implicit). */
export const BITMASK_TYPES: ReadonlySet<NftType> = new Set<NftType>(['ct_state', 'ct_status', 'tcp_flag', 'ct_event', 'ct_label']);

/** Types that print as hexadecimal when no symbol names the value (`basefmt`). */
const HEX_WIDTH: Partial<Record<NftType, number>> = { mark: 8, ether_type: 4, dscp: 2, ecn: 1 };

/** Debian 12 netbase `/etc/services`: name (or alias) and port, first entry of a name wins. */
const SERVICE_TEXT = [
  'tcpmux:1 echo:7 discard:9 sink:9 null:9 systat:11 users:11 daytime:13 netstat:15 qotd:17 quote:17 chargen:19',
  'ttytst:19 source:19 ftp-data:20 ftp:21 fsp:21 fspd:21 ssh:22 telnet:23 smtp:25 mail:25 time:37 timserver:37',
  'whois:43 nicname:43 tacacs:49 domain:53 bootps:67 bootpc:68 tftp:69 gopher:70 finger:79 http:80 www:80',
  'kerberos:88 kerberos5:88 krb5:88 kerberos-sec:88 iso-tsap:102 tsap:102 acr-nema:104 dicom:104 pop3:110',
  'pop-3:110 sunrpc:111 portmapper:111 auth:113 authentication:113 tap:113 ident:113 nntp:119 readnews:119',
  'untp:119 ntp:123 epmap:135 loc-srv:135 netbios-ns:137 netbios-dgm:138 netbios-ssn:139 imap2:143 imap:143',
  'snmp:161 snmp-trap:162 snmptrap:162 cmip-man:163 cmip-agent:164 mailq:174 xdmcp:177 bgp:179 smux:199',
  'qmtp:209 z3950:210 wais:210 ipx:213 ptp-event:319 ptp-general:320 pawserv:345 zserv:346 rpc2portmap:369',
  'codaauth2:370 clearcase:371 Clearcase:371 ldap:389 svrloc:427 https:443 snpp:444 microsoft-ds:445 kpasswd:464',
  'submissions:465 ssmtp:465 smtps:465 saft:487 isakmp:500 rtsp:554 nqs:607 asf-rmcp:623 qmqp:628 ipp:631',
  'ldp:646 exec:512 biff:512 comsat:512 login:513 who:513 whod:513 shell:514 cmd:514 syslog:514 printer:515',
  'spooler:515 talk:517 ntalk:518 route:520 router:520 routed:520 gdomap:538 uucp:540 uucpd:540 klogin:543',
  'kshell:544 krcmd:544 dhcpv6-client:546 dhcpv6-server:547 afpovertcp:548 nntps:563 snntp:563 submission:587',
  'ldaps:636 tinc:655 silc:706 kerberos-adm:749 domain-s:853 rsync:873 ftps-data:989 ftps:990 telnets:992',
  'imaps:993 pop3s:995 pop-3s:995 socks:1080 proofd:1093 rootd:1094 openvpn:1194 rmiregistry:1099',
  'lotusnote:1352 lotusnotes:1352 ms-sql-s:1433 ms-sql-m:1434 ingreslock:1524 datametrics:1645 old-radius:1645',
  'sa-msg-port:1646 old-radacct:1646 kermit:1649 groupwise:1677 l2f:1701 l2tp:1701 radius:1812 radius-acct:1813',
  'radacct:1813 cisco-sccp:2000 nfs:2049 gnunet:2086 rtcm-sc104:2101 gsigatekeeper:2119 gris:2135',
  'cvspserver:2401 venus:2430 venus-se:2431 codasrv:2432 codasrv-se:2433 mon:2583 dict:2628 f5-globalsite:2792',
  'gsiftp:2811 gpsd:2947 gds-db:3050 gds_db:3050 icpv2:3130 icp:3130 isns:3205 iscsi-target:3260 mysql:3306',
  'ms-wbt-server:3389 nut:3493 distcc:3632 daap:3689 svn:3690 subversion:3690 suucp:4031 sysrqd:4094',
  'sieve:4190 epmd:4369 remctl:4373 f5-iquery:4353 ntske:4460 ipsec-nat-t:4500 iax:4569 mtn:4691',
  'radmin-port:4899 sip:5060 sip-tls:5061 xmpp-client:5222 jabber-client:5222 xmpp-server:5269 jabber-server:5269',
  'cfengine:5308 mdns:5353 postgresql:5432 postgres:5432 freeciv:5556 rptp:5556 amqps:5671 amqp:5672 noclog:5354',
  'hostmon:5355 x11:6000 x11-0:6000 x11-1:6001 x11-2:6002 x11-3:6003 x11-4:6004 x11-5:6005 x11-6:6006',
  'x11-7:6007 gnutella-svc:6346 gnutella-rtr:6347 redis:6379 sge-qmaster:6444 sge_qmaster:6444 sge-execd:6445',
  'sge_execd:6445 mysql-proxy:6446 babel:6696 ircs-u:6697 bbs:7000 afs3-fileserver:7000 afs3-callback:7001',
  'afs3-prserver:7002 afs3-vlserver:7003 afs3-kaserver:7004 afs3-volser:7005 afs3-bos:7007 afs3-update:7008',
  'afs3-rmtsys:7009 font-service:7100 xfs:7100 http-alt:8080 webcache:8080 puppet:8140 bacula-dir:9101',
  'bacula-fd:9102 bacula-sd:9103 xmms2:9667 nbd:10809 zabbix-agent:10050 zabbix-trapper:10051 amanda:10080',
  'dicom-tls:2762 hkp:11371 db-lsp:17500 dcap:22125 gsidcap:22128 wnn6:22273 kerberos4:750 kerberos-iv:750',
  'kdc:750 kerberos-master:751 passwd-server:752 krb-prop:754 krb_prop:754 krb5_prop:754 zephyr-srv:2102',
  'zephyr-clt:2103 zephyr-hm:2104 iprop:2121 supfilesrv:871 supfiledbg:1127 poppassd:106 moira-db:775',
  'moira_db:775 moira-update:777 moira_update:777 moira-ureg:779 moira_ureg:779 spamd:783 skkserv:1178',
  'predict:1210 rmtcfg:1236 xtel:1313 xtelw:1314 zebrasrv:2600 zebra:2601 ripd:2602 ripngd:2603 ospfd:2604',
  'bgpd:2605 ospf6d:2606 ospfapi:2607 isisd:2608 fax:4557 hylafax:4559 munin:4949 lrrd:4949 rplay:5555',
  'nrpe:5666 nsca:5667 canna:5680 syslog-tls:6514 sane-port:6566 sane:6566 saned:6566 ircd:6667',
  'zope-ftp:8021 tproxy:8081 omniorb:8088 clc-build-daemon:8990 xinetd:9098 git:9418 zope:9673',
  'webmin:10000 kamanda:10081 amandaidx:10082 amidxtape:10083 sgi-cmsd:17001 sgi-crsd:17002 sgi-gcd:17003',
  'sgi-cad:17004 binkp:24554 asp:27374 csync2:30865 dircproxy:57000 tfido:60177 fido:60179',
].join(' ');

const SERVICES: ReadonlyMap<string, number> = new Map(SERVICE_TEXT.split(' ').map((e) => {
  const c = e.lastIndexOf(':');
  return [e.slice(0, c), Number(e.slice(c + 1))] as const;
}));

/** Debian 12 netbase `/etc/protocols`: names and aliases (for `getprotobyname`). */
const PROTOCOL_TEXT = [
  'ip:0 IP:0 hopopt:0 HOPOPT:0 icmp:1 ICMP:1 igmp:2 IGMP:2 ggp:3 GGP:3 ipencap:4 IP-ENCAP:4 st:5 ST:5 tcp:6',
  'TCP:6 egp:8 EGP:8 igp:9 IGP:9 pup:12 PUP:12 udp:17 UDP:17 hmp:20 HMP:20 xns-idp:22 XNS-IDP:22 rdp:27 RDP:27',
  'iso-tp4:29 ISO-TP4:29 dccp:33 DCCP:33 xtp:36 XTP:36 ddp:37 DDP:37 idpr-cmtp:38 IDPR-CMTP:38 ipv6:41 IPv6:41',
  'ipv6-route:43 IPv6-Route:43 ipv6-frag:44 IPv6-Frag:44 idrp:45 IDRP:45 rsvp:46 RSVP:46 gre:47 GRE:47 esp:50',
  'IPSEC-ESP:50 ah:51 IPSEC-AH:51 skip:57 SKIP:57 ipv6-icmp:58 IPv6-ICMP:58 ipv6-nonxt:59 IPv6-NoNxt:59',
  'ipv6-opts:60 IPv6-Opts:60 rspf:73 RSPF:73 CPHB:73 vmtp:81 VMTP:81 eigrp:88 EIGRP:88 ospf:89 OSPFIGP:89',
  'ax.25:93 AX.25:93 ipip:94 IPIP:94 etherip:97 ETHERIP:97 encap:98 ENCAP:98 pim:103 PIM:103 ipcomp:108',
  'IPCOMP:108 vrrp:112 VRRP:112 l2tp:115 L2TP:115 isis:124 IS-IS:124 sctp:132 SCTP:132 fc:133 FC:133',
  'mobility-header:135 Mobility-Header:135 udplite:136 UDPLite:136 mpls-in-ip:137 MPLS-in-IP:137 manet:138',
  'hip:139 HIP:139 shim6:140 Shim6:140 wesp:141 WESP:141 rohc:142 ROHC:142 ethernet:143 Ethernet:143',
].join(' ');

const PROTOCOLS: ReadonlyMap<string, number> = new Map(PROTOCOL_TEXT.split(' ').map((e) => {
  const c = e.lastIndexOf(':');
  return [e.slice(0, c), Number(e.slice(c + 1))] as const;
}));

/** `getprotobynumber`: the first name of each number. */
const PROTO_NAMES: ReadonlyMap<number, string> = (() => {
  const m = new Map<number, string>();
  for (const [name, n] of PROTOCOLS) if (!m.has(n) && name === name.toLowerCase()) m.set(n, name);
  return m;
})();

/**
 * Users and groups nft resolves by name (`getpwnam`, `getgrnam`): Debian 12's base-passwd
 * accounts, which every Debian system has (others depend on the host and are refused).
 */
const USERS: ReadonlyMap<string, number> = new Map([
  ['root', 0], ['daemon', 1], ['bin', 2], ['sys', 3], ['sync', 4], ['games', 5], ['man', 6], ['lp', 7], ['mail', 8], ['news', 9],
  ['uucp', 10], ['proxy', 13], ['www-data', 33], ['backup', 34], ['list', 38], ['irc', 39], ['_apt', 42], ['nobody', 65534],
]);
const GROUPS: ReadonlyMap<string, number> = new Map([
  ['root', 0], ['daemon', 1], ['bin', 2], ['sys', 3], ['adm', 4], ['tty', 5], ['disk', 6], ['lp', 7], ['mail', 8], ['news', 9],
  ['uucp', 10], ['man', 12], ['proxy', 13], ['kmem', 15], ['dialout', 20], ['fax', 21], ['voice', 22], ['cdrom', 24], ['floppy', 25],
  ['tape', 26], ['sudo', 27], ['audio', 29], ['dip', 30], ['www-data', 33], ['backup', 34], ['operator', 37], ['list', 38], ['irc', 39],
  ['src', 40], ['shadow', 42], ['utmp', 43], ['video', 44], ['sasl', 45], ['plugdev', 46], ['staff', 50], ['games', 60], ['users', 100],
  ['nogroup', 65534],
]);

/** The number of a protocol name, as nft reads it (`getprotobyname`), or undefined. */
export function protocolNumber(name: string): number | undefined {
  return PROTOCOLS.get(name);
}

/** What a selector reads: its datatype and width in bits. */
export interface SelectorType {
  readonly type: NftType;
  readonly bits: number;
  /** Byte order of the value in the kernel's registers (host order lists sets differently). */
  readonly host?: boolean;
}

/** A header field: its type, width and offset from the start of its header, in bits. */
export interface PayloadField extends SelectorType {
  readonly offset: number;
}

const f = (type: NftType, bits: number, offset: number): PayloadField => ({ type, bits, offset });
const int = (bits: number, offset: number): PayloadField => f('integer', bits, offset);

/** Header fields of every protocol (`proto.c`). */
const PAYLOAD: Readonly<Record<string, Readonly<Record<string, PayloadField>>>> = {
  ether: { daddr: f('ether_addr', 48, 0), saddr: f('ether_addr', 48, 48), type: f('ether_type', 16, 96) },
  vlan: { pcp: int(3, 0), dei: int(1, 3), cfi: int(1, 3), id: int(12, 4), type: f('ether_type', 16, 16) },
  arp: {
    htype: int(16, 0), ptype: f('ether_type', 16, 16), hlen: int(8, 32), plen: int(8, 40), operation: f('arp_op', 16, 48),
    'saddr ether': f('ether_addr', 48, 64), 'saddr ip': f('ipv4_addr', 32, 112), 'daddr ether': f('ether_addr', 48, 144),
    'daddr ip': f('ipv4_addr', 32, 192),
  },
  ip: {
    version: int(4, 0), hdrlength: int(4, 4), dscp: f('dscp', 6, 8), ecn: f('ecn', 2, 14), length: int(16, 16), id: int(16, 32),
    'frag-off': int(16, 48), ttl: int(8, 64), protocol: f('inet_proto', 8, 72), checksum: int(16, 80), saddr: f('ipv4_addr', 32, 96),
    daddr: f('ipv4_addr', 32, 128),
  },
  ip6: {
    version: int(4, 0), dscp: f('dscp', 6, 4), ecn: f('ecn', 2, 10), flowlabel: int(20, 12), length: int(16, 32),
    nexthdr: f('inet_proto', 8, 48), hoplimit: int(8, 56), saddr: f('ipv6_addr', 128, 64), daddr: f('ipv6_addr', 128, 192),
  },
  icmp: {
    type: f('icmp_type', 8, 0), code: f('icmp_code', 8, 8), checksum: int(16, 16), id: int(16, 32), sequence: int(16, 48),
    gateway: int(32, 32), mtu: int(16, 48),
  },
  icmpv6: {
    type: f('icmpv6_type', 8, 0), code: f('icmpv6_code', 8, 8), checksum: int(16, 16), 'parameter-problem': int(32, 32),
    mtu: int(32, 32), id: int(16, 32), sequence: int(16, 48), 'max-delay': int(16, 32),
  },
  igmp: { type: f('igmp_type', 8, 0), mrt: int(8, 8), checksum: int(16, 16), group: int(32, 32) },
  tcp: {
    sport: f('inet_service', 16, 0), dport: f('inet_service', 16, 16), sequence: int(32, 32), ackseq: int(32, 64), doff: int(4, 96),
    reserved: int(4, 100), flags: f('tcp_flag', 8, 104), window: int(16, 112), checksum: int(16, 128), urgptr: int(16, 144),
  },
  udp: { sport: f('inet_service', 16, 0), dport: f('inet_service', 16, 16), length: int(16, 32), checksum: int(16, 48) },
  udplite: { sport: f('inet_service', 16, 0), dport: f('inet_service', 16, 16), csumcov: int(16, 32), checksum: int(16, 48) },
  sctp: { sport: f('inet_service', 16, 0), dport: f('inet_service', 16, 16), vtag: int(32, 32), checksum: int(32, 64) },
  dccp: { sport: f('inet_service', 16, 0), dport: f('inet_service', 16, 16), type: f('dccp_pkttype', 4, 67) },
  th: { sport: f('inet_service', 16, 0), dport: f('inet_service', 16, 16) },
  ah: { nexthdr: f('inet_proto', 8, 0), hdrlength: int(8, 8), reserved: int(16, 16), spi: int(32, 32), sequence: int(32, 64) },
  esp: { spi: int(32, 0), sequence: int(32, 32) },
  comp: { nexthdr: f('inet_proto', 8, 0), flags: f('xinteger', 8, 8), cpi: int(16, 16) },
};

/** The protocol numbers of transport headers, for nft's protocol context. */
export const L4_PROTOCOLS: Readonly<Record<string, number>> = {
  tcp: 6, udp: 17, sctp: 132, icmp: 1, icmpv6: 58, igmp: 2, udplite: 136, dccp: 33, ah: 51, esp: 50, comp: 108,
};

/** IPv6 extension headers (`exthdr.c`): fields with type, width and offset. */
const EXTHDR: Readonly<Record<string, Readonly<Record<string, PayloadField>>>> = {
  hbh: { nexthdr: f('inet_proto', 8, 0), hdrlength: int(8, 8) },
  rt: { nexthdr: f('inet_proto', 8, 0), hdrlength: int(8, 8), type: int(8, 16), 'seg-left': int(8, 24) },
  rt0: { reserved: int(32, 32) },
  rt2: { addr: f('ipv6_addr', 128, 64) },
  srh: { 'last-entry': int(8, 32), flags: int(8, 40), tag: int(16, 48), 'sid[1]': f('ipv6_addr', 128, 64), 'sid[2]': f('ipv6_addr', 128, 192) },
  frag: { nexthdr: f('inet_proto', 8, 0), reserved: int(8, 8), 'frag-off': int(13, 16), reserved2: int(2, 29), 'more-fragments': int(1, 31), id: int(32, 32) },
  dst: { nexthdr: f('inet_proto', 8, 0), hdrlength: int(8, 8) },
  mh: { nexthdr: f('inet_proto', 8, 0), hdrlength: int(8, 8), type: f('mh_type', 8, 16), reserved: int(8, 24), checksum: int(16, 32) },
};

/**
 * IPv4 options nft reads (`ipopt.c` of nftables 1.0.6): fields with width. `addr` is the first
 * address of a route option, an integer in this version.
 */
const IPOPT: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  lsrr: { type: 8, length: 8, ptr: 8, addr: 32 }, rr: { type: 8, length: 8, ptr: 8, addr: 32 }, ssrr: { type: 8, length: 8, ptr: 8, addr: 32 },
  ra: { type: 8, length: 8, value: 16 },
};
/** The fields of an IPv4 option and their widths, or undefined. */
export function ipOptionFields(option: string): Readonly<Record<string, number>> | undefined {
  return IPOPT[option];
}

/** TCP options (`tcpopt.c`): fields with width; `kind`/`length` are the option's own. */
const TCPOPT: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  eol: { kind: 8 }, nop: { kind: 8 }, maxseg: { kind: 8, length: 8, size: 16 }, window: { kind: 8, length: 8, count: 8 },
  'sack-perm': { kind: 8, length: 8 }, sack: { kind: 8, length: 8, left: 32, right: 32 }, sack0: { kind: 8, length: 8, left: 32, right: 32 },
  sack1: { left: 32, right: 32 }, sack2: { left: 32, right: 32 }, sack3: { left: 32, right: 32 },
  timestamp: { kind: 8, length: 8, tsval: 32, tsecr: 32 }, fastopen: { kind: 8, length: 8 }, md5sig: { kind: 8, length: 8 },
  mptcp: { kind: 8, length: 8, subtype: 4 },
};
/** SCTP chunk types (RFC 9260 and its extensions) and the fields nft reads in each, in bits. */
const SCTP_CHUNK_COMMON = { type: 8, flags: 8, length: 16 } as const;
const SCTP_INIT = { 'init-tag': 32, 'a-rwnd': 32, 'num-outbound-streams': 16, 'num-inbound-streams': 16, 'initial-tsn': 32 } as const;
export const SCTP_CHUNKS: Readonly<Record<string, { readonly type: number; readonly fields: Readonly<Record<string, number>> }>> = {
  data: { type: 0, fields: { tsn: 32, stream: 16, ssn: 16, ppid: 32 } },
  init: { type: 1, fields: SCTP_INIT },
  'init-ack': { type: 2, fields: SCTP_INIT },
  sack: { type: 3, fields: { 'cum-tsn-ack': 32, 'a-rwnd': 32, 'num-gap-ack-blocks': 16, 'num-dup-tsns': 16 } },
  heartbeat: { type: 4, fields: {} },
  'heartbeat-ack': { type: 5, fields: {} },
  abort: { type: 6, fields: {} },
  shutdown: { type: 7, fields: { 'cum-tsn-ack': 32 } },
  'shutdown-ack': { type: 8, fields: {} },
  error: { type: 9, fields: {} },
  'cookie-echo': { type: 10, fields: {} },
  'cookie-ack': { type: 11, fields: {} },
  ecne: { type: 12, fields: { 'lowest-tsn': 32 } },
  cwr: { type: 13, fields: { 'lowest-tsn': 32 } },
  'shutdown-complete': { type: 14, fields: {} },
  'asconf-ack': { type: 0x80, fields: { seqno: 32 } },
  'forward-tsn': { type: 0xc0, fields: { 'new-cum-tsn': 32 } },
  asconf: { type: 0xc1, fields: { seqno: 32 } },
};
/** The width of a field of an SCTP chunk, if the chunk has it. */
export function sctpChunkFieldBits(chunk: string, field: string): number | undefined {
  const c = SCTP_CHUNKS[chunk];
  if (c === undefined) return undefined;
  return (SCTP_CHUNK_COMMON as Record<string, number>)[field] ?? c.fields[field];
}

/** TCP option kinds nft names (`tcpopt.c`); other kinds are written and listed as numbers. */
export const TCPOPT_KINDS: Readonly<Record<number, string>> = {
  0: 'eol', 1: 'nop', 2: 'maxseg', 3: 'window', 4: 'sack-perm', 5: 'sack', 8: 'timestamp', 19: 'md5sig', 30: 'mptcp', 34: 'fastopen',
};

/** Spellings of TCP options the scanner folds together. */
export const TCPOPT_ALIASES: Readonly<Record<string, string>> = {
  mss: 'maxseg', 'sack-permitted': 'sack-perm', noop: 'nop', sack0: 'sack',
};

const m = (type: NftType, bits: number, host = true): SelectorType => ({ type, bits, host });

/** `meta` keys (`meta.c`), with their types. */
export const META_KEYS: Readonly<Record<string, SelectorType>> = {
  length: m('integer', 32), protocol: m('ether_type', 16, false), nfproto: m('nf_proto', 8), l4proto: m('inet_proto', 8),
  priority: m('tc_handle', 32), mark: m('mark', 32), iif: m('iface_index', 32), iifname: m('ifname', 128), iiftype: m('iface_type', 16),
  oif: m('iface_index', 32), oifname: m('ifname', 128), oiftype: m('iface_type', 16), skuid: m('uid', 32), skgid: m('gid', 32),
  nftrace: m('integer', 1), rtclassid: m('realm', 32), ibrname: m('ifname', 128), obrname: m('ifname', 128), pkttype: m('pkt_type', 8),
  cpu: m('integer', 32), iifgroup: m('devgroup', 32), oifgroup: m('devgroup', 32), cgroup: m('integer', 32), random: m('integer', 32, false),
  ipsec: m('boolean', 1), secpath: m('boolean', 1), iifkind: m('ifname', 128), oifkind: m('ifname', 128), ibrpvid: m('integer', 16),
  ibrvproto: m('ether_type', 16, false), time: m('date', 64), day: m('day', 8), hour: m('hour', 32), secmark: m('integer', 32),
  sdif: m('iface_index', 32), sdifname: m('ifname', 128), ibriport: m('ifname', 128), obriport: m('ifname', 128),
};
/** Meta keys nft lists without the `meta` keyword (`meta_key_is_unqualified`). */
export const UNQUALIFIED_META: ReadonlySet<string> = new Set(['iif', 'oif', 'iifname', 'oifname', 'iifgroup', 'oifgroup']);
/** Meta keys that may be written without `meta` (the parser's `meta_key_unqualified`). */
export const BARE_META: ReadonlySet<string> = new Set(['mark', 'iif', 'iifname', 'iiftype', 'oif', 'oifname', 'oiftype', 'skuid', 'skgid', 'nftrace', 'rtclassid', 'ibriport', 'obriport', 'ibrname', 'obrname', 'pkttype', 'cpu', 'iifgroup', 'oifgroup', 'cgroup', 'time', 'day', 'hour']);
/** Meta keys a rule may set (`meta KEY set …`). */
export const SETTABLE_META: ReadonlySet<string> = new Set(['mark', 'priority', 'pkttype', 'nftrace', 'secmark']);

const CT_KEYS: Readonly<Record<string, SelectorType>> = {
  state: m('ct_state', 32), direction: m('ct_dir', 8), status: m('ct_status', 32), mark: m('mark', 32), expiration: m('time', 32),
  helper: m('string', 128), l3proto: m('nf_proto', 8), protocol: m('inet_proto', 8, false), 'proto-src': m('inet_service', 16, false),
  'proto-dst': m('inet_service', 16, false), label: m('ct_label', 128), bytes: m('integer', 64), packets: m('integer', 64),
  avgpkt: m('integer', 64), zone: m('integer', 16), event: m('ct_event', 32), secmark: m('integer', 32), id: m('integer', 32, false),
};
/** ct keys that take a direction (`ct original bytes`) and those that need one (`ct original saddr`). */
export const CT_DIRECTIONAL: ReadonlySet<string> = new Set(['l3proto', 'protocol', 'proto-src', 'proto-dst', 'bytes', 'packets', 'avgpkt', 'zone', 'saddr', 'daddr']);

/** The payload fields of a protocol, or undefined. */
export function payloadFields(protocol: string): Readonly<Record<string, PayloadField>> | undefined {
  return PAYLOAD[protocol];
}
/** The fields of an IPv6 extension header, or undefined. */
export function exthdrFields(header: string): Readonly<Record<string, PayloadField>> | undefined {
  return EXTHDR[header];
}
/** The fields of a TCP option and their widths, or undefined. */
export function tcpOptionFields(option: string): Readonly<Record<string, number>> | undefined {
  return TCPOPT[option];
}
/** The ct key's type, or undefined. */
export function ctKeyType(key: string): SelectorType | undefined {
  return CT_KEYS[key];
}

/** The type and width of a selector. */
export function selectorType(s: NftSelector): SelectorType {
  switch (s.kind) {
    case 'const': return { type: s.value.type, bits: s.value.bits };
    case 'payload': return PAYLOAD[s.protocol]![s.field]!;
    case 'rawpayload': return { type: 'xinteger', bits: s.length };
    case 'exthdr': return s.field === undefined ? { type: 'boolean', bits: 1 } : EXTHDR[s.header]![s.field]!;
    case 'ipopt': return s.field === undefined ? { type: 'boolean', bits: 1 } : { type: 'integer', bits: IPOPT[s.option]![s.field]! };
    case 'sctpchunk':
      return s.field === undefined ? { type: 'boolean', bits: 1 } : { type: 'integer', bits: sctpChunkFieldBits(s.chunk, s.field)! };
    case 'tcpopt': {
      if (s.raw !== undefined) return { type: 'integer', bits: s.raw.length };
      if (s.field === undefined) return { type: 'boolean', bits: 1 };
      const bits = TCPOPT[s.option]?.[s.field] ?? 8;
      return { type: 'integer', bits };
    }
    case 'meta': return META_KEYS[s.key]!;
    case 'ct':
      if (s.key === 'saddr' || s.key === 'daddr') return s.family === 'ip6' ? { type: 'ipv6_addr', bits: 128 } : { type: 'ipv4_addr', bits: 32 };
      return CT_KEYS[s.key]!;
    case 'fib':
      return s.result === 'type' ? { type: 'fib_addrtype', bits: 32, host: true } : s.result === 'oif' ? { type: 'iface_index', bits: 32, host: true } : { type: 'ifname', bits: 128 };
    case 'socket':
      return s.key === 'mark' ? { type: 'mark', bits: 32, host: true } : s.key === 'cgroupv2' ? { type: 'cgroupv2', bits: 64, host: true } : { type: 'integer', bits: 1 };
    case 'numgen': return { type: 'integer', bits: 32, host: true };
    case 'hash': return { type: 'integer', bits: 32, host: true };
    case 'rt':
      switch (s.key) {
        case 'classid': return { type: 'realm', bits: 32, host: true };
        case 'nexthop': return s.family === 'ip6' ? { type: 'ipv6_addr', bits: 128 } : { type: 'ipv4_addr', bits: 32 };
        case 'mtu': return { type: 'integer', bits: 16, host: true };
        case 'ipsec': return { type: 'boolean', bits: 1 };
      }
      return { type: 'integer', bits: 32 };
    case 'osf': return { type: 'string', bits: 128 };
    case 'ipsec':
      if (s.key === 'saddr' || s.key === 'daddr') return s.family === 'ip6' ? { type: 'ipv6_addr', bits: 128 } : { type: 'ipv4_addr', bits: 32 };
      return { type: 'integer', bits: 32 };
    case 'bitwise': return { type: s.type, bits: s.bits };
    case 'shift': return { type: s.type, bits: s.bits };
    case 'concat': return { type: 'integer', bits: s.items.reduce((n, i) => n + selectorType(i).bits, 0) };
  }
}

/** Why a symbol could not be read as a type. */
export class DatatypeError extends Error {}

/** `strtoull(s, &end, 0)` with a full-string check: decimal, 0x hex or 0 octal. */
function parseNumber(text: string): bigint | undefined {
  if (/^0x[0-9a-f]+$/i.test(text)) return BigInt(text);
  if (/^0[0-7]+$/.test(text)) return BigInt('0o' + text.slice(1));
  if (/^[0-9]+$/.test(text)) return BigInt(text);
  return undefined;
}

function parseInteger(text: string, bits: number, what: string): bigint {
  const v = parseNumber(text);
  if (v === undefined) throw new DatatypeError(`Could not parse ${what}`);
  if (bits < 64 && v >= 1n << BigInt(bits)) throw new DatatypeError(`Value ${text} exceeds valid range 0-${(1n << BigInt(bits)) - 1n}`);
  return v;
}

/** `inet_aton` as getaddrinfo reads a numeric IPv4 address: 1 to 4 parts, decimal, octal or hex. */
function inetAton(text: string): number | null {
  const parts = text.split('.');
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let v: number;
    if (/^0x[0-9a-f]*$/i.test(p)) v = p.length === 2 ? 0 : parseInt(p.slice(2), 16);
    else if (/^0[0-7]*$/.test(p)) v = p.length === 1 ? 0 : parseInt(p.slice(1), 8);
    else if (/^[1-9][0-9]*$/.test(p)) v = Number(p);
    else return null;
    nums.push(v);
  }
  const last = nums[nums.length - 1]!;
  const lead = nums.slice(0, -1);
  if (lead.some((n) => n > 255) || last >= 2 ** (8 * (5 - nums.length))) return null;
  let v = 0;
  lead.forEach((n, i) => (v += n * 2 ** (24 - 8 * i)));
  return (v + last) >>> 0;
}

function parseEther(text: string): bigint | null {
  const parts = text.split(':');
  if (parts.length !== 6 || !parts.every((p) => /^[0-9a-f]{1,2}$/i.test(p))) return null;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(parseInt(p, 16)), 0n);
}

/** Relative times: `1d2h3m4s5ms` → milliseconds (`time_parse`). */
export function parseTime(text: string): number | undefined {
  // A bare number is seconds (`ct expiration 233`).
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const mm = /^(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m(?!s))?(?:([0-9]+)s)?(?:([0-9]+)ms)?$/.exec(text);
  if (!mm || text === '') return undefined;
  const [d, h, mi, s, ms] = mm.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number];
  return (((d * 24 + h) * 60 + mi) * 60 + s) * 1000 + ms;
}

/** Milliseconds as nft prints a relative time (`time_print`): `1d2h3m4s5ms`, `0s` for none. */
export function printTime(ms: number): string {
  let rest = ms;
  const days = Math.floor(rest / 86400000); rest -= days * 86400000;
  const hours = Math.floor(rest / 3600000); rest -= hours * 3600000;
  const minutes = Math.floor(rest / 60000); rest -= minutes * 60000;
  const seconds = Math.floor(rest / 1000); rest -= seconds * 1000;
  let out = '';
  if (days > 0) out += `${days}d`;
  if (hours > 0) out += `${hours}h`;
  if (minutes > 0) out += `${minutes}m`;
  if (seconds > 0) out += `${seconds}s`;
  if (rest > 0) out += `${rest}ms`;
  return out === '' ? '0s' : out;
}

/**
 * Reads one symbol (no range, prefix or list) as a value of `type`. Throws {@link DatatypeError}
 * with nft's message when it cannot.
 */
export function parseSymbol(text: string, type: NftType, bits: number, quoted = false): NftValue {
  const value = (v: bigint, extra?: { text: string }): NftValue => ({ kind: 'value', type, bits, value: v, ...(extra ?? {}) });
  switch (type) {
    case 'ipv4_addr': {
      const v = text === 'localhost' ? 0x7f000001 : inetAton(text);
      if (v === null) throw new DatatypeError(`Could not resolve hostname: ${/^[0-9.]+$/.test(text) || /[a-z]/i.test(text) ? 'Name or service not known' : 'Name or service not known'}`);
      return value(BigInt(v >>> 0));
    }
    case 'ipv6_addr': {
      const w = text === 'localhost' || text === 'ip6-localhost' || text === 'ip6-loopback' ? [0, 0, 0, 1]
        : /^[0-9a-f:.]+$/i.test(text) ? parseIpv6(text) : null;
      if (w === null) throw new DatatypeError('Could not resolve hostname: Name or service not known');
      return value(w.reduce((acc, x) => (acc << 32n) | BigInt(x >>> 0), 0n));
    }
    case 'ether_addr': {
      const v = parseEther(text);
      if (v === null) throw new DatatypeError('Invalid lladdr');
      return value(v);
    }
    case 'inet_service': {
      const n = parseNumber(text);
      if (n !== undefined) return value(parseInteger(text, 16, 'inet_service'));
      const s = SERVICES.get(text);
      if (s === undefined) throw new DatatypeError('Could not resolve service: Servname not supported for ai_socktype');
      return value(BigInt(s));
    }
    case 'inet_proto': {
      if (parseNumber(text) !== undefined) return value(parseInteger(text, 8, 'protocol'));
      // The scanner's protocol keywords that /etc/protocols spells otherwise.
      const n = text === 'icmpv6' ? 58 : text === 'comp' ? 108 : PROTOCOLS.get(text);
      if (n === undefined || n > 255) throw new DatatypeError('Could not resolve protocol name');
      return value(BigInt(n));
    }
    case 'uid': case 'gid': {
      if (parseNumber(text) !== undefined) return value(parseInteger(text, 32, type));
      const id = (type === 'uid' ? USERS : GROUPS).get(text);
      if (id !== undefined) return value(BigInt(id));
      throw new DatatypeError(type === 'uid' ? 'User does not exist' : 'Group does not exist');
    }
    case 'ifname': case 'string': {
      if (text === '') throw new DatatypeError('Empty string is not allowed');
      if (text.length >= bits / 8) throw new DatatypeError(type === 'ifname' ? 'Interface name too long' : 'String too long');
      return value(ifnameValue(text, bits / 8), { text });
    }
    case 'iface_index':
      // A fresh namespace has only `lo`; nft resolves other names against the host (see `interfaces`).
      if (text === 'lo') return value(1n, { text: 'lo' });
      if (parseNumber(text) !== undefined) return value(parseInteger(text, 32, 'iface_index'));
      throw new DatatypeError(`Interface does not exist`);
    case 'tc_handle': {
      if (text === 'root') return value(0xffffffffn);
      if (text === 'none') return value(0n);
      const mm = /^([0-9a-f]{1,4}):([0-9a-f]{0,4})$/i.exec(text);
      if (mm) return value((BigInt(parseInt(mm[1]!, 16)) << 16n) | BigInt(mm[2] ? parseInt(mm[2], 16) : 0));
      if (parseNumber(text) !== undefined) return value(parseInteger(text, 32, 'classid'));
      throw new DatatypeError('Could not parse classid');
    }
    case 'date': {
      // nft reads a date in the host's time zone; the kernel here, and we, use UTC. An integer is
      // seconds since the epoch. The kernel compares nanoseconds.
      if (/^[0-9]+$/.test(text)) return value(BigInt(text) * 1_000_000_000n);
      const d = /^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?: ([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,2}))?)?$/.exec(text);
      if (!d) throw new DatatypeError('Cannot parse date');
      const [y, mo, da, h, mi, se] = d.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number, number, number];
      if (mo < 1 || mo > 12 || da < 1 || da > 31 || h > 23 || mi > 59 || se > 60) throw new DatatypeError('Cannot parse date');
      return value(BigInt(Date.UTC(y, mo - 1, da, h, mi, se) / 1000) * 1_000_000_000n);
    }
    case 'hour': {
      // Seconds since midnight (UTC, as the date above).
      const h = /^([0-9]{1,2}):([0-9]{1,2})(?::([0-9]{1,2}))?$/.exec(text);
      if (!h) {
        if (parseNumber(text) !== undefined) return value(parseInteger(text, bits, 'Hour of day of packet reception'));
        throw new DatatypeError('Can\'t parse hour of day');
      }
      const [hh, mm, ss] = [Number(h[1]), Number(h[2]), Number(h[3] ?? 0)];
      if (hh > 23 || mm > 59 || ss > 59) throw new DatatypeError('wrong time format');
      return value(BigInt(hh * 3600 + mm * 60 + ss));
    }
    case 'day': {
      const hit = SYMBOLS.day!.find(([n]) => n.toLowerCase() === text.toLowerCase() || (text.length === 3 && n.slice(0, 3).toLowerCase() === text.toLowerCase()));
      if (hit) return value(BigInt(hit[1]));
      if (parseNumber(text) !== undefined) {
        const n = parseInteger(text, bits, 'Day of week of packet reception');
        if (n > 6n) throw new DatatypeError(`Value ${n} exceeds valid range 0-6`);
        return value(n);
      }
      throw new DatatypeError('Could not parse Day of week of packet reception');
    }
    case 'time': {
      const ms = parseTime(text);
      if (ms === undefined) throw new DatatypeError('Wrong time format');
      return value(BigInt(ms));
    }
    case 'verdict':
      throw new DatatypeError('verdict expected');
    default: {
      const hit = SYMBOLS[type]?.find(([n]) => n === text);
      if (hit) return value(BigInt(hit[1]));
      if (parseNumber(text) !== undefined) return value(parseInteger(text, bits, TYPE_DESCRIPTION[type] ?? type));
      void quoted;
      throw new DatatypeError(`Could not parse ${TYPE_DESCRIPTION[type] ?? type}`);
    }
  }
}

/** nft's type descriptions (`desc`), for messages. */
export const TYPE_DESCRIPTION: Partial<Record<NftType, string>> = {
  ct_state: 'conntrack state', ct_status: 'conntrack status', ct_dir: 'conntrack direction', tcp_flag: 'TCP flag',
  nf_proto: 'netfilter protocol', pkt_type: 'packet type', fib_addrtype: 'fib address type', icmp_type: 'ICMP type',
  icmpv6_type: 'ICMPv6 type', boolean: 'boolean type', integer: 'integer', xinteger: 'integer', mark: 'packet mark', ether_type: 'Ethernet protocol',
  arp_op: 'ARP operation', dscp: 'Differentiated Services Code Point', ecn: 'Explicit Congestion Notification',
  ipv4_addr: 'IPv4 address', ipv6_addr: 'IPv6 address', inet_service: 'internet network service', inet_proto: 'Internet protocol',
  ifname: 'network interface name', iface_index: 'network interface index', uid: 'user ID', gid: 'group ID', ether_addr: 'Ethernet address',
  ct_event: 'conntrack event bits', ct_label: 'conntrack label', realm: 'routing realm', devgroup: 'device group',
  iface_type: 'network interface type', tc_handle: 'TC classid', igmp_type: 'IGMP type', dccp_pkttype: 'DCCP packet type',
  icmp_code: 'icmp code', icmpv6_code: 'icmpv6 code', icmpx_code: 'icmpx code', string: 'string', time: 'relative time',
  day: 'Day of week of packet reception', hour: 'Hour of day of packet reception', date: 'Relative time of packet reception', verdict: 'netfilter verdict',
};

/** The name `type` declarations use for a type (`datatype_lookup_byname`), and back. */
const TYPE_NAMES: Partial<Record<NftType, string>> = { tc_handle: 'classid', cgroupv2: 'cgroupsv2', icmpv6_type: 'icmpv6_type' };
/** Types a set declaration may name. */
const DECLARABLE: readonly NftType[] = [
  'ipv4_addr', 'ipv6_addr', 'ether_addr', 'inet_proto', 'inet_service', 'mark', 'ifname', 'iface_index', 'uid', 'gid', 'ct_state',
  'ct_status', 'ct_dir', 'ct_event', 'ct_label', 'tcp_flag', 'nf_proto', 'pkt_type', 'icmp_type', 'icmpv6_type', 'icmp_code',
  'icmpv6_code', 'icmpx_code', 'fib_addrtype', 'boolean', 'ether_type', 'arp_op', 'dscp', 'ecn', 'realm', 'devgroup', 'iface_type',
  'tc_handle', 'igmp_type', 'dccp_pkttype', 'day', 'hour', 'time', 'integer', 'string', 'cgroupv2', 'verdict',
];

/** The type a declaration's name stands for (`type ipv4_addr`), or undefined. */
export function typeByName(name: string): NftType | undefined {
  return DECLARABLE.find((t) => (TYPE_NAMES[t] ?? t) === name);
}
/** A type's name in declarations and listings. */
export function typeName(t: NftType): string {
  return TYPE_NAMES[t] ?? t;
}
/** The width of a type in set keys, in bits. */
export function typeBits(t: NftType): number {
  switch (t) {
    case 'ipv6_addr': case 'ifname': case 'string': case 'ct_label': return 128;
    case 'ether_addr': return 48;
    case 'inet_service': case 'ether_type': case 'arp_op': case 'iface_type': return 16;
    case 'inet_proto': case 'nf_proto': case 'pkt_type': case 'ct_dir': case 'tcp_flag': case 'icmp_type': case 'icmpv6_type':
    case 'icmp_code': case 'icmpv6_code': case 'icmpx_code': case 'igmp_type': case 'day': return 8;
    case 'dscp': return 6;
    case 'ecn': return 2;
    case 'dccp_pkttype': return 4;
    case 'boolean': return 1;
    case 'cgroupv2': case 'time': case 'date': return 64;
    case 'verdict': return 0;
    default: return 32;
  }
}

function hex(v: bigint, digits: number): string {
  return '0x' + v.toString(16).padStart(digits, '0');
}

function printString(text: string): string {
  return `"${text}"`;
}

/**
 * Prints a value as `nft list ruleset` does. `numeric`: as inside a range, where nft prints
 * symbolic constants as numbers (`meta l4proto 33-45`).
 */
export function printValue(v: NftValue, numeric = false): string {
  if (numeric && v.type === 'time') return `${Number(v.value) / 1000}s`;
  if (numeric && (SYMBOLS[v.type] !== undefined || v.type === 'inet_proto') && !BITMASK_TYPES.has(v.type)) {
    const w = HEX_WIDTH[v.type];
    return w !== undefined ? hex(v.value, w) : v.value.toString();
  }
  switch (v.type) {
    case 'ipv4_addr': return formatIpv4(Number(v.value & 0xffffffffn));
    case 'ipv6_addr': {
      const w: number[] = [];
      for (let i = 3; i >= 0; i--) w.push(Number((v.value >> BigInt(32 * i)) & 0xffffffffn));
      return formatIpv6(w);
    }
    case 'ether_addr': {
      const b: string[] = [];
      for (let i = 5; i >= 0; i--) b.push(Number((v.value >> BigInt(8 * i)) & 0xffn).toString(16).padStart(2, '0'));
      return b.join(':');
    }
    case 'inet_service': case 'integer': case 'uid': case 'gid': case 'cgroupv2': return v.value.toString();
    // Integers nft prints in hex (raw payloads, bitmask fields such as `comp flags`).
    case 'xinteger': return `0x${v.value.toString(16)}`;
    case 'inet_proto': return PROTO_NAMES.get(Number(v.value)) ?? v.value.toString();
    case 'ifname': case 'string': return printString(v.text ?? ifnameText(v.value, v.bits / 8));
    case 'iface_index': return v.text !== undefined ? printString(v.text) : v.value === 1n ? '"lo"' : v.value.toString();
    case 'tc_handle': {
      if (v.value === 0xffffffffn) return 'root';
      if (v.value === 0n) return 'none';
      return `${(v.value >> 16n).toString(16)}:${(v.value & 0xffffn).toString(16)}`;
    }
    case 'time': return printTime(Number(v.value));
    case 'date': {
      const d = new Date(Number(v.value / 1_000_000n));
      const two = (n: number): string => String(n).padStart(2, '0');
      return `"${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}"`;
    }
    case 'hour': {
      const s = Number(v.value % 86400n);
      const two = (n: number): string => String(n).padStart(2, '0');
      return `"${two(Math.floor(s / 3600))}:${two(Math.floor(s / 60) % 60)}${s % 60 !== 0 ? `:${two(s % 60)}` : ''}"`;
    }
    case 'day': {
      const hit = SYMBOLS.day!.find(([, n]) => BigInt(n) === v.value);
      return hit ? printString(hit[0]) : v.value.toString();
    }
    case 'devgroup': case 'realm': {
      // rt_symbol_table types (iproute2's names) print quoted.
      const hit = SYMBOLS[v.type]!.find(([, n]) => BigInt(n) === v.value);
      return hit ? printString(hit[0]) : v.value.toString();
    }
    case 'ct_state': case 'ct_status': case 'tcp_flag': case 'ct_event': {
      const names: string[] = [];
      let rest = v.value;
      for (const [n, bit] of SYMBOLS[v.type]!) {
        if ((rest & BigInt(bit)) !== 0n) {
          names.push(n);
          rest &= ~BigInt(bit);
        }
      }
      if (rest !== 0n || names.length === 0) names.push(hex(rest, 0));
      return names.join(',');
    }
    case 'ct_label': return v.value.toString();
    default: {
      const hit = SYMBOLS[v.type]?.find(([, n]) => BigInt(n) === v.value);
      if (hit) return hit[0];
      const w = HEX_WIDTH[v.type];
      return w !== undefined ? hex(v.value, w) : v.value.toString();
    }
  }
}

/**
 * A name as the kernel compares it: its bytes first, zeros after, `size` bytes in all (IFNAMSIZ,
 * 16, for interface names), read here as one big-endian number. A wildcard `eth*` keeps the
 * bytes before the `*` (it matches the names that start with them, see {@link ifnameWildcardBits}).
 */
export function ifnameValue(name: string, size = 16): bigint {
  const text = name.endsWith('*') && !name.endsWith('\\*') ? name.slice(0, -1) : name;
  let v = 0n;
  for (let i = 0; i < size; i++) v = (v << 8n) | BigInt(i < text.length ? text.charCodeAt(i) & 0xff : 0);
  return v;
}

function ifnameText(v: bigint, size: number): string {
  let s = '';
  for (let i = size - 1; i >= 0; i--) {
    const c = Number((v >> BigInt(8 * i)) & 0xffn);
    if (c === 0) break;
    s += String.fromCharCode(c);
  }
  return s;
}

/**
 * For a wildcard interface name (`eth*`), how many leading bits of {@link ifnameValue} a name must
 * share to match it; undefined for an exact name.
 */
export function ifnameWildcardBits(v: NftValue): number | undefined {
  if ((v.type !== 'ifname' && v.type !== 'string') || v.text === undefined || !v.text.endsWith('*') || v.text.endsWith('\\*')) return undefined;
  return (v.text.length - 1) * 8;
}

/** All ones of a width. */
export function allOnes(bits: number): bigint {
  return (1n << BigInt(bits)) - 1n;
}
