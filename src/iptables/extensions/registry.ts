/**
 * The extension registry: `-m NAME` and `-j NAME` to their modules.
 *
 * Match aliases (`-m icmpv6` and `-m ipv6-icmp` for `icmp6`, as `xtables_find_match` maps them)
 * are keys too; the module's `name` is what iptables-save prints.
 *
 * @module
 */
import { addrtype } from './match/addrtype.js';
import { comment } from './match/comment.js';
import { connmark } from './match/connmark.js';
import { conntrack } from './match/conntrack.js';
import { icmp } from './match/icmp.js';
import { icmp6 } from './match/icmp6.js';
import { iprange } from './match/iprange.js';
import { limit } from './match/limit.js';
import { mac } from './match/mac.js';
import { mark } from './match/mark.js';
import { multiport } from './match/multiport.js';
import { nfacct } from './match/nfacct.js';
import { owner } from './match/owner.js';
import { policy } from './match/policy.js';
import { recent } from './match/recent.js';
import { rpfilter } from './match/rpfilter.js';
import { set } from './match/set.js';
import { sctp } from './match/sctp.js';
import { socket } from './match/socket.js';
import { state } from './match/state.js';
import { statistic } from './match/statistic.js';
import { tcp } from './match/tcp.js';
import { udp } from './match/udp.js';
import { length } from './match/length.js';
import { ttl } from './match/ttl.js';
import { hl } from './match/hl.js';
import { tos } from './match/tos.js';
import { dscp } from './match/dscp.js';
import { pkttype } from './match/pkttype.js';
import { helper } from './match/helper.js';
import { realm } from './match/realm.js';
import { devgroup } from './match/devgroup.js';
import { cpu } from './match/cpu.js';
import { quota } from './match/quota.js';
import { connlimit } from './match/connlimit.js';
import { esp } from './match/esp.js';
import { ah } from './match/ah.js';
import { ipcomp } from './match/ipcomp.js';
import { ecn } from './match/ecn.js';
import { tcpmss } from './match/tcpmss.js';
import { physdev } from './match/physdev.js';
import { cgroup } from './match/cgroup.js';
import { connbytes } from './match/connbytes.js';
import { connlabel } from './match/connlabel.js';
import { cluster } from './match/cluster.js';
import { string } from './match/string.js';
import { u32 } from './match/u32.js';
import { time } from './match/time.js';
import { rt } from './match/rt.js';
import { frag } from './match/frag.js';
import { hbh } from './match/hbh.js';
import { dst } from './match/dst.js';
import { ipv6header } from './match/ipv6header.js';
import { eui64 } from './match/eui64.js';
import { mh } from './match/mh.js';
import { hashlimit } from './match/hashlimit.js';
import { dccp } from './match/dccp.js';
import { srh } from './match/srh.js';
import { osf } from './match/osf.js';
import { bpf } from './match/bpf.js';
import { rateest } from './match/rateest.js';
import { CONNMARK } from './target/CONNMARK.js';
import { CT } from './target/CT.js';
import { DNAT } from './target/DNAT.js';
import { LOG } from './target/LOG.js';
import { MARK } from './target/MARK.js';
import { MASQUERADE } from './target/MASQUERADE.js';
import { NFLOG } from './target/NFLOG.js';
import { NOTRACK } from './target/NOTRACK.js';
import { REDIRECT } from './target/REDIRECT.js';
import { REJECT } from './target/REJECT.js';
import { SET } from './target/SET.js';
import { SNAT } from './target/SNAT.js';
import { TPROXY } from './target/TPROXY.js';
import { TRACE } from './target/TRACE.js';
import { CHECKSUM } from './target/CHECKSUM.js';
import { AUDIT } from './target/AUDIT.js';
import { CLASSIFY } from './target/CLASSIFY.js';
import { CONNSECMARK } from './target/CONNSECMARK.js';
import { SECMARK } from './target/SECMARK.js';
import { DSCP } from './target/DSCP.js';
import { TOS } from './target/TOS.js';
import { TTL } from './target/TTL.js';
import { HL } from './target/HL.js';
import { NFQUEUE } from './target/NFQUEUE.js';
import { TEE } from './target/TEE.js';
import { SYNPROXY } from './target/SYNPROXY.js';
import { IDLETIMER } from './target/IDLETIMER.js';
import { TCPMSS } from './target/TCPMSS.js';
import { TCPOPTSTRIP } from './target/TCPOPTSTRIP.js';
import { ECN } from './target/ECN.js';
import { NETMAP } from './target/NETMAP.js';
import { DNPT, SNPT } from './target/NPT.js';
import { HMARK } from './target/HMARK.js';
import { RATEEST } from './target/RATEEST.js';
import type { MatchExtension, TargetExtension } from './types.js';

const MATCH_LIST: readonly MatchExtension[] = [
  addrtype, comment, connmark, conntrack, icmp, icmp6, iprange, limit, mac, mark, multiport, nfacct,
  owner, policy, recent, rpfilter, sctp, set, socket, state, statistic, tcp, udp,
  length, ttl, hl, tos, dscp, pkttype, helper, realm, devgroup, cpu, quota, connlimit, esp, ah, ipcomp, ecn, tcpmss, physdev, cgroup, connbytes, connlabel, cluster, string, u32, time,
  rt, frag, hbh, dst, ipv6header, eui64, mh, hashlimit, dccp, srh, osf, bpf, rateest,
];

const TARGET_LIST: readonly TargetExtension[] = [
  CONNMARK, CT, DNAT, LOG, MARK, MASQUERADE, NFLOG, NOTRACK, REDIRECT, REJECT, SET, SNAT, TPROXY, TRACE,
  CHECKSUM, AUDIT, CLASSIFY, CONNSECMARK, SECMARK, DSCP, TOS, TTL, HL, NFQUEUE, TEE, SYNPROXY, IDLETIMER,
  TCPMSS, TCPOPTSTRIP, ECN, NETMAP, DNPT, SNPT, HMARK, RATEEST,
];

function byName<E extends MatchExtension | TargetExtension>(list: readonly E[]): Map<string, E> {
  const m = new Map<string, E>();
  for (const e of list) {
    m.set(e.name, e);
    for (const a of e.aliases ?? []) m.set(a, e);
  }
  return m;
}

/** Every match module, by name (and alias). */
export const MATCHES: ReadonlyMap<string, MatchExtension> = byName(MATCH_LIST);

/** Every target module, by name (the standard verdicts and chains are not here). */
export const TARGETS: ReadonlyMap<string, TargetExtension> = byName(TARGET_LIST);
