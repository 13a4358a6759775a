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
import type { MatchExtension, TargetExtension } from './types.js';

const MATCH_LIST: readonly MatchExtension[] = [
  addrtype, comment, connmark, conntrack, icmp, icmp6, iprange, limit, mac, mark, multiport, nfacct,
  owner, policy, recent, rpfilter, sctp, set, socket, state, statistic, tcp, udp,
];

const TARGET_LIST: readonly TargetExtension[] = [
  CONNMARK, CT, DNAT, LOG, MARK, MASQUERADE, NFLOG, NOTRACK, REDIRECT, REJECT, SET, SNAT, TPROXY, TRACE,
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
