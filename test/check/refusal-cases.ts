/**
 * Rules that iptables 1.8.9 or the kernel refuses at load (and some near them that load), one per
 * refusal message, each naming where the message comes from. `refused` is what the kernel here
 * did (nf_tables back end; `legacy` where ip_tables differs): the suite asserts it still does,
 * and that `check` agrees.
 */

import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

/** One case: rules (restore text, one table or several), and what the load did. */
export interface RefusalCase {
  readonly name: string;
  /** The source of the refusal: `file: "message"`. */
  readonly source: string;
  readonly family?: 4 | 6;
  readonly text: string;
  /** Whether the load (nf_tables back end) fails. */
  readonly refused: boolean;
  /** Whether the legacy back end's load fails, where it differs. */
  readonly legacy?: boolean;
  /**
   * The refusal depends on what the loading machine has (a cgroup, a conntrack timeout policy):
   * `check` cannot know, and must warn (exit 0, a warning naming it) rather than refuse.
   */
  readonly machine?: boolean;
  /** ipset restore lines and nfacct objects that exist when the rules load. */
  readonly ipsets?: string;
  readonly nfacct?: readonly string[];
}

const t = (table: string, ...lines: string[]): string => `*${table}\n${lines.join('\n')}\nCOMMIT\n`;
const filter = (...lines: string[]): string => t('filter', ...lines);

export const REFUSAL_CASES: readonly RefusalCase[] = [
  // iptables' own parser (xshared.c do_parse, nft.c): refused before the kernel is asked.
  { name: 'DROP in a nat built-in chain', source: 'xshared.c: "The \\"nat\\" table is not intended for filtering"', text: t('nat', '-A PREROUTING -j DROP'), refused: true },
  { name: 'DROP in a nat user chain, behind a match', source: 'xshared.c: "The \\"nat\\" table is not intended for filtering"', text: t('nat', ':X - [0:0]', '-A X -p tcp -m tcp --dport 22 -j DROP'), refused: true },
  { name: 'goto DROP in nat', source: 'xshared.c: "The \\"nat\\" table is not intended for filtering"', text: t('nat', ':X - [0:0]', '-A X -g DROP'), refused: true },
  { name: '-P DROP in nat', source: 'xshared.c: "The \\"nat\\" table is not intended for filtering"', text: t('nat', '-P OUTPUT DROP'), refused: true },
  { name: 'a DROP policy on a nat chain line loads', source: 'xtables-restore.c (chain lines skip do_parse)', text: t('nat', ':OUTPUT DROP [0:0]'), refused: false },
  { name: '! -p all', source: 'xshared.c: "rule would never match protocol"', text: filter('-A INPUT ! -p all -j ACCEPT'), refused: true },
  { name: '-R with two sources', source: 'xshared.c: "Replacement rule does not specify a unique address"', text: filter('-A INPUT -j ACCEPT', '-R INPUT 1 -s 10.0.0.1,10.0.0.2 -j ACCEPT'), refused: true },
  { name: '! -s with two addresses', source: 'xshared.c: "! not allowed with multiple source or destination IP addresses"', text: filter('-A INPUT ! -s 10.0.0.1,10.0.0.2 -j ACCEPT'), refused: true },
  { name: '-m udp without -p udp', source: 'nft.c: "UDP match requires \'-p udp\'"', text: filter('-A INPUT -m udp --dport 53 -j ACCEPT'), refused: true },
  { name: '-m tcp without -p tcp', source: 'nft.c: "TCP match requires \'-p tcp\'"', text: filter('-A INPUT -m tcp --dport 22 -j ACCEPT'), refused: true },
  { name: '-o in INPUT', source: 'xshared.c: "Can\'t use -o with INPUT"', text: filter('-A INPUT -o eth0 -j ACCEPT'), refused: true },
  { name: '-i in a user chain reached from OUTPUT loads', source: 'xshared.c (the check is for built-in chains only)', text: filter(':X - [0:0]', '-A OUTPUT -j X', '-A X -i eth0 -j ACCEPT'), refused: false },
  { name: '-N of a target name', source: 'xshared.c: "chain name may not clash with target name"', text: filter('-N MARK'), refused: true },
  // Commands the load refuses though --test takes them.
  { name: '-X of a chain still jumped to', source: 'nf_tables_api.c nf_tables_delchain: EBUSY ("CHAIN_DEL failed (Device or resource busy)")', text: filter(':FOO - [0:0]', '-A INPUT -j FOO', '-X FOO'), refused: true },
  { name: '-X of a chain with rules', source: 'nf_tables_api.c nf_tables_delchain: EBUSY', text: filter(':FOO - [0:0]', '-A FOO -j ACCEPT', '-X FOO'), refused: true },
  { name: 'bare -X with a chain that has rules', source: 'nf_tables_api.c nf_tables_delchain: EBUSY', text: filter(':FOO - [0:0]', ':BAR - [0:0]', '-A FOO -j ACCEPT', '-X'), refused: true },
  { name: '-X of an empty, unreferenced chain', source: 'nft.c nft_chain_user_del', text: filter(':FOO - [0:0]', '-X FOO'), refused: false },
  { name: '-X of a built-in chain', source: 'nft.c: "No chain/target/match by that name"', text: filter('-X INPUT'), refused: true },
  { name: '-P on a user chain', source: 'nft.c: "Bad built-in chain name"', text: filter(':FOO - [0:0]', '-P FOO DROP'), refused: true },
  { name: '-D of a rule that is not there', source: 'nft.c: "Bad rule (does a matching rule exist in that chain?)"', text: filter('-D INPUT -j ACCEPT'), refused: true },
  { name: '-I past the end', source: 'nft.c: "Index of insertion too big"', text: filter('-I INPUT 3 -j ACCEPT'), refused: true },
  { name: '-E onto an existing chain', source: 'nft.c: "File exists"', text: filter(':FOO - [0:0]', ':BAR - [0:0]', '-E FOO BAR'), refused: true },
  { name: '-N of an existing chain', source: 'nft.c: "Chain already exists"', text: filter(':FOO - [0:0]', '-N FOO'), refused: true },
  // Named objects.
  { name: 'a set that does not exist', source: 'libxt_set.h get_set_byname: "Set %s doesn\'t exist."', text: filter('-A INPUT -m set --match-set nosuch src -j DROP'), refused: true },
  { name: 'a set that exists', source: 'libxt_set.h get_set_byname', text: filter('-A INPUT -m set --match-set s src -j DROP'), ipsets: 'create s hash:ip family inet\n', refused: false },
  { name: 'an IPv6 set in iptables', source: 'libxt_set.h: "The protocol family of set %s is %s, which is not applicable."', text: filter('-A INPUT -m set --match-set s6 src -j DROP'), ipsets: 'create s6 hash:ip family inet6\n', refused: true },
  { name: 'a list:set serves IPv6 too', source: 'libxt_set.h (NFPROTO_UNSPEC)', family: 6, text: filter('-A INPUT -m set --match-set l src -j DROP'), ipsets: 'create l list:set\n', refused: false },
  { name: 'a bitmap:port set serves IPv6 too', source: 'libxt_set.h (NFPROTO_UNSPEC)', family: 6, text: filter('-A INPUT -m set --match-set p dst -j DROP'), ipsets: 'create p bitmap:port range 0-1024\n', refused: false },
  { name: 'SET --add-set of a set that does not exist', source: 'libxt_set.h get_set_byname: "Set %s doesn\'t exist."', text: filter('-A INPUT -j SET --add-set nosuch src'), refused: true },
  { name: 'nfacct object that does not exist', source: 'xt_nfacct.c nfacct_mt_checkentry: "cannot find nfacct object" (ENOENT)', text: filter('-A INPUT -m nfacct --nfacct-name nosuch'), refused: true },
  { name: 'nfacct object that exists', source: 'xt_nfacct.c nfacct_mt_checkentry', text: filter('-A INPUT -m nfacct --nfacct-name acct1'), nfacct: ['acct1'], refused: false },
  { name: 'a 300-byte comment loads, cut to 255', source: 'libxt_comment.c (XTOPT_PUT cuts to the field)', text: filter(`-A INPUT -m comment --comment ${'c'.repeat(300)} -j ACCEPT`), refused: false },
  // The kernel's checkentry and x_tables.c (xt_check_match / xt_check_target).
  { name: 'REJECT tcp-reset without -p tcp', source: 'ipt_REJECT.c reject_tg_check: "TCP_RESET invalid for non-tcp"', text: filter('-A INPUT -j REJECT --reject-with tcp-reset'), refused: true },
  { name: 'REJECT tcp-reset with ! -p tcp', source: 'ipt_REJECT.c reject_tg_check: "TCP_RESET invalid for non-tcp"', text: filter('-A INPUT ! -p tcp -j REJECT --reject-with tcp-reset'), refused: true },
  { name: 'REJECT tcp-reset (IPv6) without -p tcp', source: 'ip6t_REJECT.c reject_tg6_check: "TCP_RESET illegal for non-tcp"', family: 6, text: filter('-A INPUT -j REJECT --reject-with tcp-reset'), refused: true },
  { name: 'REJECT in mangle', source: 'xt_check_target: "REJECT target: only valid in filter table"', text: t('mangle', '-A INPUT -j REJECT'), refused: true },
  { name: 'REJECT in raw', source: 'xt_check_target table', text: t('raw', '-A PREROUTING -j REJECT'), refused: true },
  { name: 'REJECT in security', source: 'xt_check_target table', text: t('security', '-A INPUT -j REJECT'), refused: true },
  { name: 'DNAT with a port without -p', source: 'libipt_DNAT.c: "Need TCP, UDP, SCTP or DCCP with port specification"', text: t('nat', '-A PREROUTING -j DNAT --to-destination 10.0.0.1:80'), refused: true },
  { name: 'REDIRECT --to-ports without -p', source: 'libxt_REDIRECT.c: "Need TCP, UDP, SCTP or DCCP with port specification"', text: t('nat', '-A PREROUTING -j REDIRECT --to-ports 80'), refused: true },
  { name: 'MASQUERADE --to-ports without -p', source: 'libipt_MASQUERADE.c: "Need TCP, UDP, SCTP or DCCP with port specification"', text: t('nat', '-A POSTROUTING -j MASQUERADE --to-ports 1000'), refused: true },
  { name: 'SNAT in PREROUTING', source: 'xt_nat.c .hooks (POSTROUTING, INPUT)', text: t('nat', '-A PREROUTING -j SNAT --to-source 10.0.0.1'), refused: true },
  { name: 'SNAT in INPUT', source: 'xt_nat.c .hooks', text: t('nat', '-A INPUT -j SNAT --to-source 10.0.0.1'), refused: false },
  { name: 'MASQUERADE in OUTPUT', source: 'xt_MASQUERADE.c .hooks (POSTROUTING)', text: t('nat', '-A OUTPUT -j MASQUERADE'), refused: true },
  { name: 'NETMAP in INPUT', source: 'xt_NETMAP.c .hooks', text: t('nat', '-A INPUT -j NETMAP --to 10.0.0.0/24'), refused: false },
  { name: 'TPROXY without -p', source: 'xt_TPROXY.c tproxy_tg4_check: "Can be used only with -p tcp or -p udp"', text: t('mangle', '-A PREROUTING -j TPROXY --on-port 1 --tproxy-mark 1'), refused: true },
  { name: 'TPROXY in a user chain from OUTPUT', source: 'xt_TPROXY.c .hooks (PREROUTING)', text: t('mangle', ':X - [0:0]', '-A OUTPUT -j X', '-A X -p tcp -j TPROXY --on-port 1'), refused: true },
  { name: 'TPROXY in filter', source: 'xt_TPROXY.c .table "mangle"', text: filter(':X - [0:0]', '-A X -p tcp -j TPROXY --on-port 1'), refused: true },
  { name: 'TCPMSS --clamp-mss-to-pmtu in INPUT', source: 'xt_TCPMSS.c: "path-MTU clamping only supported in FORWARD, OUTPUT and POSTROUTING hooks"', text: t('mangle', '-A INPUT -p tcp -j TCPMSS --clamp-mss-to-pmtu'), refused: true },
  { name: 'TCPMSS --clamp-mss-to-pmtu in a user chain from INPUT', source: 'xt_TCPMSS.c (checkentry sees no hooks under nft; legacy passes the hooks of the chain)', text: t('mangle', ':X - [0:0]', '-A INPUT -j X', '-A X -p tcp -m tcp --syn -j TCPMSS --clamp-mss-to-pmtu'), refused: false, legacy: true },
  { name: 'TCPMSS without a SYN test', source: 'xt_TCPMSS.c: "Only works on TCP SYN packets" (not under nft_compat)', text: t('mangle', '-A POSTROUTING -p tcp -j TCPMSS --set-mss 1400'), refused: false, legacy: true },
  { name: 'TCPMSS without -p tcp', source: 'xt_TCPMSS.c .proto', text: t('mangle', '-A POSTROUTING -j TCPMSS --set-mss 1400'), refused: true },
  { name: 'ECN --ecn-tcp-remove without -p tcp', source: 'ipt_ECN.c: "cannot use operation on non-tcp rule"', text: t('mangle', '-A POSTROUTING -j ECN --ecn-tcp-remove'), refused: true },
  { name: 'ECN in filter', source: 'ipt_ECN.c .table "mangle"', text: filter('-A OUTPUT -p tcp -j ECN --ecn-tcp-remove'), refused: true },
  { name: 'ecn --ecn-tcp-cwr without -p tcp', source: 'xt_ecn.c: "cannot match TCP bits for non-tcp packets"', text: filter('-A INPUT -m ecn --ecn-tcp-cwr'), refused: true },
  { name: 'ecn --ecn-ip-ect without -p', source: 'xt_ecn.c', text: filter('-A INPUT -m ecn --ecn-ip-ect 1'), refused: false },
  { name: 'CT --helper without -p', source: 'xt_CT.c xt_ct_set_helper: "You must specify a L4 protocol and not use inversions on it"', text: t('raw', '-A PREROUTING -j CT --helper ftp'), refused: true },
  { name: 'CT --helper ftp with -p tcp', source: 'xt_CT.c', text: t('raw', '-A PREROUTING -p tcp -j CT --helper ftp'), refused: false },
  { name: 'CT --helper of no helper', source: 'xt_CT.c: "No such helper"', text: t('raw', '-A PREROUTING -p tcp -j CT --helper nosuch'), refused: true },
  { name: 'CT --timeout of no policy', source: 'xt_CT.c xt_ct_set_timeout: "No such timeout policy" (ENOENT)', text: t('raw', '-A PREROUTING -p tcp -j CT --timeout nosuch'), refused: true, machine: true },
  { name: 'CT --helper of a protocol it has no helper for', source: 'xt_CT.c: "No such helper"', text: t('raw', '-A PREROUTING -p udp -j CT --helper ftp'), refused: true },
  { name: 'CT --helper irc over IPv6', source: 'xt_CT.c (nf_conntrack_irc is IPv4 only)', family: 6, text: t('raw', '-A PREROUTING -p tcp -j CT --helper irc'), refused: true },
  { name: 'CT --helper sip over udp', source: 'xt_CT.c', text: t('raw', '-A PREROUTING -p udp -j CT --helper sip'), refused: false },
  { name: 'CT in filter', source: 'xt_CT.c .table "raw"', text: filter('-A INPUT -j CT --notrack'), refused: true },
  { name: 'NOTRACK in mangle', source: 'xt_CT.c .table "raw"', text: t('mangle', '-A PREROUTING -j NOTRACK'), refused: true },
  { name: 'SYNPROXY without -p tcp', source: 'ipt_SYNPROXY.c: proto must be tcp, not inverted', text: filter('-A INPUT -j SYNPROXY --mss 1460'), refused: true },
  { name: 'SYNPROXY in OUTPUT', source: 'ipt_SYNPROXY.c .hooks (INPUT, FORWARD)', text: filter('-A OUTPUT -p tcp -j SYNPROXY --mss 1460'), refused: true },
  { name: 'SYNPROXY in INPUT', source: 'ipt_SYNPROXY.c', text: filter('-A INPUT -p tcp -j SYNPROXY --mss 1460'), refused: false },
  { name: 'CONNSECMARK in filter', source: 'xt_CONNSECMARK.c: "only valid in \'mangle\' or \'security\' table"', text: filter('-A INPUT -j CONNSECMARK --save'), refused: true },
  { name: 'SECMARK without SELinux', source: 'xt_SECMARK.c checkentry: "invalid security context" (no LSM to map it)', text: t('mangle', '-A INPUT -j SECMARK --selctx system_u:object_r:ssh_packet_t:s0'), refused: true },
  { name: 'HMARK --hmark-mod 0', source: 'xt_HMARK.c: "hash modulus can\'t be zero"', text: t('mangle', '-A PREROUTING -j HMARK --hmark-tuple src --hmark-mod 0'), refused: true },
  { name: 'IDLETIMER --timeout 0', source: 'xt_IDLETIMER.c: "timeout value is zero"', text: t('mangle', '-A INPUT -j IDLETIMER --timeout 0 --label x'), refused: true },
  { name: 'IDLETIMER --timeout INT_MAX / 1000', source: 'xt_IDLETIMER.c: "timeout value is too big"', text: t('mangle', '-A INPUT -j IDLETIMER --timeout 2147483 --label x'), refused: true },
  { name: 'IDLETIMER --timeout just below', source: 'xt_IDLETIMER.c', text: t('mangle', '-A INPUT -j IDLETIMER --timeout 2147482 --label x'), refused: false },
  { name: 'IDLETIMER with an empty label', source: 'xt_IDLETIMER.c: "label is empty or not nul-terminated"', text: t('mangle', '-A INPUT -j IDLETIMER --timeout 1 --label ""'), refused: true },
  { name: 'NFQUEUE --queue-balance reversed', source: 'xt_NFQUEUE.c: "queue range wrong"', text: filter('-A INPUT -j NFQUEUE --queue-balance 5:2'), refused: true },
  { name: 'LOG --log-level 8', source: 'xt_LOG.c: "level %u >= 8"', text: filter('-A INPUT -j LOG --log-level 8'), refused: true },
  { name: 'TEE in filter INPUT', source: 'xt_TEE.c (any table)', text: filter('-A INPUT -j TEE --gateway 10.0.0.1'), refused: false },
  { name: 'DSCP in filter', source: 'xt_DSCP.c .table "mangle"', text: filter('-A INPUT -j DSCP --set-dscp 1'), refused: true },
  { name: 'TOS in filter', source: 'xt_DSCP.c (TOS) .table "mangle"', text: filter('-A INPUT -j TOS --set-tos 0x10'), refused: true },
  { name: 'TTL in filter', source: 'xt_HL.c .table "mangle"', text: filter('-A INPUT -j TTL --ttl-set 5'), refused: true },
  { name: 'TTL --ttl-dec 0', source: 'libipt_TTL.c: "TTL: decreasing by 0?"', text: t('mangle', '-A INPUT -j TTL --ttl-dec 0'), refused: true },
  { name: 'CHECKSUM in filter', source: 'xt_CHECKSUM.c .table "mangle"', text: filter('-A INPUT -p udp -j CHECKSUM --checksum-fill'), refused: true },
  { name: 'MARK in filter', source: 'xt_mark.c (any table)', text: filter('-A INPUT -j MARK --set-mark 1'), refused: false },
  { name: 'CONNMARK --restore-mark in nat', source: 'xt_connmark.c (any table)', text: t('nat', '-A PREROUTING -j CONNMARK --restore-mark'), refused: false },
  { name: 'CLASSIFY in filter FORWARD', source: 'xt_CLASSIFY.c (any table; OUTPUT, FORWARD, POSTROUTING)', text: filter('-A FORWARD -j CLASSIFY --set-class 1:1'), refused: false },
  { name: 'CLASSIFY in INPUT', source: 'xt_CLASSIFY.c .hooks', text: t('mangle', '-A INPUT -j CLASSIFY --set-class 1:1'), refused: true },
  { name: 'TRACE in filter', source: 'nft: meta nftrace in any table; xt_TRACE.c .table "raw"', text: filter('-A INPUT -j TRACE'), refused: false, legacy: true },
  { name: 'AUDIT --type drop', source: 'xt_AUDIT.c', text: filter('-A INPUT -j AUDIT --type drop'), refused: false },
  // Matches.
  { name: 'recent --hitcount 65536', source: 'xt_recent.c: "hitcount (%u) is larger than allowed maximum (%u)" (XT_RECENT_MAX_NSTAMPS 65536)', text: filter('-A INPUT -m recent --rcheck --hitcount 65536 --name x'), refused: true },
  { name: 'recent --hitcount 65535', source: 'xt_recent.c', text: filter('-A INPUT -m recent --rcheck --hitcount 65535 --name x'), refused: false },
  { name: 'recent --name with a slash', source: 'x_tables.c xt_check_proc_name', text: filter('-A INPUT -m recent --rcheck --name a/b'), refused: true },
  { name: 'recent --name ..', source: 'x_tables.c xt_check_proc_name', text: filter('-A INPUT -m recent --rcheck --name ..'), refused: true },
  { name: 'hashlimit --hashlimit-name .', source: 'x_tables.c xt_check_proc_name', text: filter('-A INPUT -m hashlimit --hashlimit-upto 1/sec --hashlimit-name .'), refused: true },
  { name: 'recent --reap without --seconds', source: 'libxt_recent.c: "--reap is only valid with --seconds"', text: filter('-A INPUT -m recent --rcheck --reap --name x'), refused: true },
  { name: 'recent with two names of one list, masks differ', source: 'xt_recent.c: "... different mask"', text: filter('-A INPUT -m recent --set --name x --mask 255.255.255.0', '-A INPUT -m recent --rcheck --name x --mask 255.255.0.0'), refused: false },
  { name: 'limit --limit-burst 10001', source: 'libxt_limit.c (XTOPT_PUT range 0-10000)', text: filter('-A INPUT -m limit --limit 1/day --limit-burst 10000', '-A INPUT -m limit --limit 1/day --limit-burst 10001'), refused: true },
  { name: 'hashlimit that overflows', source: 'xt_hashlimit.c: "overflow, rate too high"', text: filter('-A INPUT -m hashlimit --hashlimit-upto 1/day --hashlimit-burst 100000 --hashlimit-name h'), refused: true },
  { name: 'multiport without -p', source: 'libxt_multiport.c: "multiport needs `-p tcp\', `-p udp\', `-p udplite\', `-p sctp\' or `-p dccp\'"', text: filter('-A INPUT -m multiport --dports 1,2'), refused: true },
  { name: 'multiport with ! -p tcp', source: 'xt_multiport.c check_proto: "multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP"', text: filter('-A INPUT ! -p tcp -m multiport --dports 1,2'), refused: true },
  { name: 'owner in INPUT', source: 'xt_owner.c .hooks (OUTPUT, POSTROUTING)', text: filter('-A INPUT -m owner --uid-owner 0'), refused: true },
  { name: 'owner in a user chain from INPUT', source: 'xt_owner.c .hooks (enforced in user chains)', text: filter(':X - [0:0]', '-A INPUT -j X', '-A X -m owner --uid-owner 0'), refused: true },
  { name: 'mac in OUTPUT', source: 'xt_mac.c .hooks (PREROUTING, INPUT, FORWARD)', text: filter('-A OUTPUT -m mac --mac-source 00:11:22:33:44:55'), refused: true },
  { name: 'rpfilter in filter', source: 'xt_rpfilter: .table raw and mangle', text: filter('-A INPUT -m rpfilter'), refused: true },
  { name: 'rpfilter in mangle INPUT', source: 'ipt_rpfilter.c .hooks (PREROUTING)', text: t('mangle', '-A INPUT -m rpfilter'), refused: true },
  { name: 'rpfilter in raw PREROUTING', source: 'ipt_rpfilter.c', text: t('raw', '-A PREROUTING -m rpfilter'), refused: false },
  { name: 'realm in PREROUTING', source: 'xt_realm.c .hooks (no PREROUTING)', text: t('mangle', '-A PREROUTING -m realm --realm 1'), refused: true },
  { name: 'realm in IPv6', source: 'xt_realm.c (IPv4 only)', family: 6, text: filter('-A INPUT -m realm --realm 1'), refused: true },
  { name: 'cgroup in FORWARD', source: 'xt_cgroup.c .hooks (INPUT, OUTPUT, POSTROUTING)', text: filter('-A FORWARD -m cgroup --cgroup 1'), refused: true },
  { name: 'cgroup --path of no cgroup', source: 'xt_cgroup.c: "invalid path, errno=%ld"', text: filter('-A OUTPUT -m cgroup --path /no/such/cgroup'), refused: true, machine: true },
  { name: 'cgroup --path /', source: 'xt_cgroup.c', text: filter('-A OUTPUT -m cgroup --path /'), refused: false },
  { name: 'devgroup --src-group in OUTPUT', source: 'xt_devgroup.c devgroup_mt_checkentry', text: filter('-A OUTPUT -m devgroup --src-group 1'), refused: true },
  { name: 'policy --dir in in OUTPUT', source: 'xt_policy.c: "output policy not valid in PREROUTING and INPUT"', text: filter('-A OUTPUT -m policy --dir in --pol none'), refused: true },
  { name: 'physdev --physdev-out in OUTPUT', source: 'xt_physdev.c: "--physdev-out and --physdev-is-out only supported in the FORWARD and POSTROUTING chains with bridged traffic"', text: filter('-A OUTPUT -m physdev --physdev-out eth0'), refused: true },
  { name: 'physdev --physdev-out --physdev-is-bridged in OUTPUT', source: 'xt_physdev.c', text: filter('-A OUTPUT -m physdev --physdev-out eth0 --physdev-is-bridged'), refused: false },
  { name: 'addrtype --limit-iface-in in OUTPUT', source: 'xt_addrtype.c: "both incoming and outgoing interface limitation cannot be selected" / hooks', text: filter('-A OUTPUT -m addrtype --dst-type LOCAL --limit-iface-in'), refused: true },
  { name: 'connlabel bit 128', source: 'libxt_connlabel.c / xt_connlabel.c: bit > 127', text: filter('-A INPUT -m connlabel --label 128'), refused: true },
  { name: 'cluster with more than 32 nodes', source: 'xt_cluster.c: "you have exceeded the maximum number of cluster nodes"', text: filter('-A INPUT -m cluster --cluster-total-nodes 33 --cluster-local-node 1'), refused: true },
  { name: 'string --from past --to', source: 'xt_string.c: from_offset > to_offset', text: filter('-A INPUT -m string --string x --algo bm --from 10 --to 5'), refused: true },
  { name: 'time --contiguous with start before stop', source: 'libxt_time.c: "time: --contiguous only makes sense when stoptime is smaller than starttime"', text: filter('-A INPUT -m time --timestart 01:00 --timestop 02:00 --contiguous'), refused: true },
  { name: 'icmp with ! -p icmp', source: 'xt_check_match: icmp match needs -p icmp, not inverted', text: filter('-A INPUT ! -p icmp -m icmp --icmp-type 8'), refused: true },
  { name: 'tcpmss with -p udp', source: 'xt_tcpmss.c .proto', text: filter('-A INPUT -p udp -m tcpmss --mss 1'), refused: true },
  { name: 'sctp match with -p tcp', source: 'xt_sctp.c .proto', text: filter('-A INPUT -p tcp -m sctp --dport 1'), refused: true },
  { name: 'dccp with -p dccp', source: 'xt_dccp.c', text: filter('-A INPUT -p dccp -m dccp --dport 1'), refused: false },
  { name: 'state in raw', source: 'xt_state.c (any table)', text: t('raw', '-A PREROUTING -m state --state NEW'), refused: false },
  { name: 'conntrack in raw', source: 'xt_conntrack.c (any table)', text: t('raw', '-A PREROUTING -m conntrack --ctstate NEW'), refused: false },
  { name: 'socket in OUTPUT', source: 'xt_socket.c .hooks (PREROUTING, INPUT)', text: t('mangle', '-A OUTPUT -m socket'), refused: true },
  { name: 'eui64 in OUTPUT', source: 'ip6t_eui64.c .hooks (PREROUTING, INPUT, FORWARD)', family: 6, text: filter('-A OUTPUT -m eui64'), refused: true },
  { name: 'osf in OUTPUT', source: 'xt_osf.c .hooks (PREROUTING, INPUT, FORWARD)', text: filter('-A OUTPUT -p tcp -m osf --genre Linux'), refused: true },
  { name: 'l2tp without -p', source: 'xt_l2tp.c: "missing protocol rule (udp|l2tpip)"', text: filter('-A INPUT -m l2tp --tunnel-id 1'), refused: true },
];

/** `check` on a case, told which ipsets and nfacct objects exist: its exit status and stderr. */
export async function checkCase(c: RefusalCase, backend: 'nft' | 'legacy'): Promise<{ code: number; err: string }> {
  const io = memoryIO({ 'sets.txt': c.ipsets ?? '', 'nfacct.txt': (c.nfacct ?? []).join('\n') }, c.text);
  const code = await run(['check', '--backend', backend, ...((c.family ?? 4) === 6 ? ['-6'] : []), '--ipsets', 'sets.txt', '--nfacct', 'nfacct.txt', '-'], io);
  return { code, err: io.err };
}

/** Whether check's answer agrees with a load that did (`refused`) or did not fail. */
export function agrees(c: RefusalCase, refused: boolean, r: { code: number; err: string }): boolean {
  // What depends on the loading machine is a warning: check cannot know.
  if (c.machine === true && refused) return r.code === 0 && /warning: .*(unless|exist)/.test(r.err);
  return (r.code !== 0) === refused;
}
