/**
 * The outcome cache of {@link Netns.connect}: which rule sets it may serve, and what it keeps of a
 * connection. A connection whose rules read only fields of its own packets and its own conntrack
 * entry has an outcome that is a function of its probe (source, destination, owner, mark,
 * interface, protocol) as long as nothing else in the namespace holds its tuples; the cache keeps,
 * per probe, what the connection did (result, counters, conntrack entry, sockets) and replays it
 * for the next connection of the same probe with that connection's own source port.
 *
 * @module
 * @internal
 */
import type { Match, Ruleset, Target } from '../../model/types.js';
import type { EntryTemplate } from '../state/conntrack.js';
import type { SocketView } from '../../model/packet.js';
import type { SocketRecord } from '../state/packet-state.js';
import type { RouteResult } from '../state/routing.js';

/** Matches that read only the packet, its route and its own conntrack entry. */
const PURE_MATCHES = new Set([
  'tcp', 'udp', 'icmp', 'icmp6', 'comment', 'owner', 'mark', 'connmark', 'state', 'conntrack', 'addrtype', 'iprange',
  'multiport', 'pkttype', 'length', 'tos', 'dscp', 'ttl', 'hl', 'ecn', 'tcpmss',
]);

/** Why a match keeps the cache off: it reads a source port, a timer or state beyond the packet. */
function matchRefusal(m: Match): string | null {
  if (!PURE_MATCHES.has(m.name)) return `-m ${m.name}`;
  const o = m.options as Record<string, unknown>;
  switch (m.name) {
    case 'tcp':
    case 'udp':
      return o['sport'] !== undefined ? `-m ${m.name} --sport` : null;
    case 'multiport':
      return o['direction'] !== 'destination' ? '-m multiport on source ports' : null;
    case 'conntrack':
      for (const k of ['origSrcPort', 'origDstPort', 'replSrcPort', 'replDstPort', 'expire']) if (o[k] !== undefined) return `-m conntrack ${k}`;
      return null;
    default:
      return null;
  }
}

/** Why a target keeps the cache off: a NAT whose choice can depend on the source port, or state. */
function targetRefusal(t: Target | null): string | null {
  if (t === null || t.kind !== 'extension') return null;
  const o = t.options as Record<string, unknown>;
  const single = (r: unknown): boolean => r === undefined || (r as { min: number; max: number }).min === (r as { min: number; max: number }).max;
  switch (t.name) {
    case 'MARK':
    case 'CONNMARK':
    case 'REJECT':
    case 'LOG':
      return null;
    case 'REDIRECT':
      return o['random'] === true || !single(o['toPorts']) ? '-j REDIRECT to a port range' : null;
    case 'DNAT': {
      const to = o['to'] as { ports?: unknown; baseport?: unknown };
      return o['random'] === true || o['persistent'] === true || !single(to.ports) || to.baseport !== undefined ? '-j DNAT to a port range' : null;
    }
    default:
      return `-j ${t.name}`;
  }
}

/**
 * Null when every rule of the rule sets is one the cache can serve, else the first match or target
 * that is not (named as iptables names it).
 */
export function outcomeCacheRefusal(rulesets: readonly Ruleset[]): string | null {
  for (const rs of rulesets) {
    for (const t of rs.tables) {
      for (const c of t.chains) {
        for (const r of c.rules) {
          for (const m of r.matches) {
            const why = matchRefusal(m);
            if (why !== null) return why;
          }
          const why = targetRefusal(r.target);
          if (why !== null) return why;
        }
      }
    }
  }
  return null;
}

/** A socket the connection left in the table, but for the client's end of its tuple. */
export interface SocketTemplate {
  readonly local: readonly number[];
  readonly localPort: number;
  readonly owner: SocketView;
  readonly transparent: boolean;
  readonly mark: number;
  readonly listener: SocketRecord | null;
  /** `SocketRecord.state`; a TIME_WAIT deadline is relative to the capture's clock. */
  readonly state: number;
}

/** What a probe's connections share: everything but the source port. */
export interface ProbeFields {
  readonly family: 4 | 6;
  readonly proto: number;
  /** The client's address and the destination it connected to (after connect()'s route). */
  readonly src: readonly number[];
  readonly dst: readonly number[];
  readonly dport: number;
  /** Local clients: the route, the socket's owner, mark and transparency. */
  readonly route: RouteResult | null;
  readonly owner: SocketView | null;
  readonly mark: number;
  readonly transparent: boolean;
  /** Remote clients: the interface the packets arrived on. */
  readonly dev: string | null;
}

/** What one connection of a probe did, to be done again for the next one. */
export interface OutcomeTemplate extends ProbeFields {
  /** Whether the client's socket stays, and its state then (TIME_WAIT relative). */
  readonly clientKept: boolean;
  readonly clientState: number;
  /** Whether the client's socket went to the TIME_WAIT list. */
  readonly clientTimeWait: boolean;
  /** The server's end the SYN went to: its address and port. */
  readonly serverAddr: readonly number[];
  readonly serverPort: number;
  /** The server's accepted socket when it stays. */
  readonly accepted: SocketTemplate | null;
  /** 0: no conntrack entry made; 1: made and given back unconfirmed; 2: made and confirmed. */
  readonly entry: 0 | 1 | 2;
  readonly ct: EntryTemplate | null;
  /** The counters its packets bumped: each bump's counters and slot (see `CounterLog`). */
  readonly counts: readonly Float64Array[];
  readonly slots: readonly number[];
  /** The result; `source` is the client's endpoint without its port (`10.0.0.2:`), or null. */
  readonly outcome: 'local' | 'remote' | 'refused' | 'dropped';
  readonly address: string | null;
  readonly port: number | null;
  readonly originalDestination: string | null;
  readonly source: string | null;
  readonly reason: string;
  readonly error: string | undefined;
  readonly errno: string | null;
}
