/**
 * The public types of {@link Netns}: its options, the connections and packets it is asked to
 * simulate, and what it answers.
 *
 * @module
 */
import type { Ruleset } from '../../model/types.js';
import type { CheckOptions } from '../../iptables/check/check.js';
import type { NftRuleset } from '../../nftables/model.js';
import type { NftEngine } from '../rules/nft-interpret.js';
import type { LoweredRuleset } from '../rules/iptables-lower.js';
import type { Ipset } from '../../model/ipset.js';
import type { ExtensionRegistry } from '../rules/registry.js';
import type { QueueReader } from '../rules/targets.js';
import type { InterfaceSpec, NamespaceObserver, RouteSpec, RuleSpec } from '../state/routing.js';
import type { TraceEvent } from '../trace/events.js';

/** A listening socket. */
export interface ListenerSpec {
  /** Bound address; absent: the wildcard of each family (0.0.0.0 and [::]). */
  readonly address?: string;
  readonly port: number;
  /** Absent: TCP and UDP. */
  readonly proto?: 'tcp' | 'udp';
  readonly uid?: number;
  readonly gid?: number;
  /** `IP_TRANSPARENT`, needed for TPROXY. */
  readonly transparent?: boolean;
}

/** Options of {@link Netns}. */
export interface NetnsOptions {
  /**
   * IPv4 rules: iptables-save text or a parsed rule set. Text is read as `iptables-restore` reads
   * it: what it would refuse (a typo'd `-m mutliport`, an unknown option) throws a
   * {@link NetfilterSimError} with the line and column, unless {@link lenient} is set.
   */
  readonly rules?: string | Ruleset;
  /** IPv6 rules (text read as `ip6tables-restore` reads it, unless {@link lenient} is set). */
  readonly rules6?: string | Ruleset;
  /**
   * Read `rules`/`rules6` text leniently, as `fmt --lenient` does (what generators feed fake
   * parsers: unquoted comments, CRLF, a missing COMMIT), dropping what cannot be read (an unknown
   * match or option) instead of refusing the text. Everything dropped or assumed is in
   * {@link Netns.warnings}. Default false.
   */
  readonly lenient?: boolean;
  /**
   * Native nftables rule sets (`nft -f` text or parsed), loaded in order into the same namespace;
   * their base chains run at their hooks and priorities beside the iptables tables. A `rules`
   * text whose first statement is an nft command is read as nft too.
   */
  readonly nft?: string | NftRuleset | readonly (string | NftRuleset)[];
  /**
   * Listeners: a port (bound to 0.0.0.0 and [::], TCP and UDP), `ADDR:PORT`, `[V6]:PORT`, with an
   * optional `/tcp` or `/udp` suffix, or a {@link ListenerSpec}.
   */
  readonly listen?: readonly (number | string | ListenerSpec)[];
  /**
   * Interfaces other than `lo` (which always has 127.0.0.1/8 and ::1/128): name → addresses with
   * prefix, in the order they are added (primary first: a later IPv4 address in the subnet of an
   * earlier one is secondary, never picked as a source). Default: `{ eth0: ['10.0.0.2/24', 'fd00::2/64'] }`.
   */
  readonly interfaces?: Readonly<Record<string, readonly string[]>> | readonly InterfaceSpec[];
  /** Default gateways (one per family). Default: the first host of eth0's networks (10.0.0.1, fd00::1). */
  readonly gateway?: string | readonly string[];
  /** Extra routes (`ip route add …`), e.g. `{ dst: '0.0.0.0/0', dev: 'lo', type: 'local', table: 133 }`. */
  readonly routes?: readonly RouteSpec[];
  /** Policy routing rules (`ip rule add fwmark M lookup T`). */
  readonly ipRules?: readonly RuleSpec[];
  /** `net.ipv4.conf.all.route_localnet` (default false). */
  readonly routeLocalnet?: boolean;
  /** `net.ipv4.ip_forward` (default false, as in a new namespace). */
  readonly ipForward?: boolean;
  /**
   * What hosts outside answer: address → listening ports. Addresses not listed accept every
   * connection (the default assumption: "anything not local is reached and accepts").
   */
  readonly peers?: Readonly<Record<string, readonly number[]>>;
  /** `lowered` (default, fast) or `reference` (the interpreters over the models), for iptables and nft rules alike. */
  readonly evaluator?: 'lowered' | 'reference';
  /** Seed of the RNG behind `statistic --mode random` (default 1). */
  readonly seed?: number;
  /**
   * The virtual clock's start, in seconds since the epoch (UTC; default 0). `time` matches read
   * it; {@link Netns.advance} moves it; rate limits and `recent` lists count on it.
   */
  readonly clock?: number;
  /** Extension modules (default: the built-in registry). */
  readonly registry?: ExtensionRegistry;
  /** Options for the load-time check. */
  readonly check?: CheckOptions;
  /**
   * Whether conntrack runs. Default: as the kernel decides per family, only when the rule set
   * needs it (NAT targets, conntrack/state/connmark matches, CT/CONNMARK targets).
   */
  readonly conntrack?: boolean;
  /**
   * Replaces each family's lowered program before it runs (`explore` records facts with it).
   * @internal
   */
  readonly instrument?: (program: LoweredRuleset) => LoweredRuleset;
  /**
   * Builds the lowered nft side instead of {@link LoweredNftEngine} (`explore` records facts with it).
   * @internal
   */
  readonly instrumentNft?: (ruleset: NftRuleset) => NftEngine;
  /**
   * Told of each address and port the namespace's routing, special-address checks, listeners
   * and peers read (`explore` records facts with it).
   * @internal
   */
  readonly observe?: NamespaceObserver;
  /**
   * `net.netfilter.nf_conntrack_max`: connections the table holds. A new connection past it is
   * dropped, and the trace says so ("nf_conntrack: table full, dropping packet"). Default 262144,
   * the kernel's value on a host with 8 GiB or more; at most 16777216.
   */
  readonly conntrackMax?: number;
  /**
   * The ipsets rules name with `-m set` / `-j SET`: `ipset save` text, or parsed sets. A rule
   * naming a set that is not given is refused, as the kernel refuses it (`UNKNOWN_SET`).
   */
  readonly ipsets?: string | readonly Ipset[];
  /**
   * A userspace program bound to the namespace's queues: `NFQUEUE` and nft `queue` hand it the
   * packet and apply its answer (accept, or drop), the trace saying that the packet was queued and
   * who answered. Without it (or when it answers null) a queue has no reader: the packet is
   * dropped, or accepted when the rule has bypass.
   */
  readonly queueReader?: QueueReader;
  /**
   * `net.ipv4.ip_local_port_range`: the ephemeral ports `connect()` picks source ports from
   * (default `[32768, 60999]`, the kernel's).
   */
  readonly localPortRange?: readonly [number, number];
  /**
   * Keep, per probe, what its last untraced {@link Netns.connect} did, and do it again for the
   * next connection of the same probe instead of sending its packets (default true). Results,
   * counters, conntrack entries and sockets are the same either way; see
   * {@link Netns.outcomeCacheOff} for when the namespace cannot use it.
   */
  readonly outcomeCache?: boolean;
}

/** A connection attempt from a process of the namespace. */
export interface LocalConnectSpec {
  readonly from: 'local';
  readonly uid: number;
  /** Default: the uid. */
  readonly gid?: number;
  readonly groups?: readonly number[];
  /** `IP:PORT` or `[V6]:PORT`. */
  readonly dst: string;
  readonly sport?: number;
  readonly proto?: 'tcp' | 'udp';
  /**
   * Source address the socket binds (default: chosen by routing). Binding an address the
   * namespace does not own fails as `bind()` fails (`error: "EADDRNOTAVAIL"`, outcome `refused`)
   * unless the socket is {@link transparent}.
   */
  readonly src?: string;
  /** `IP_TRANSPARENT` on the socket: it may bind an address the namespace does not own (a transparent proxy keeping its client's address). */
  readonly transparent?: boolean;
  /** `SO_MARK` of the socket. */
  readonly mark?: number;
}

/** A connection attempt arriving from outside. */
export interface RemoteConnectSpec {
  readonly from: 'remote';
  readonly src: string;
  readonly dst: string;
  readonly sport?: number;
  /** Interface it arrives on (default: the one whose network holds `src`, else eth0). */
  readonly iface?: string;
  readonly proto?: 'tcp' | 'udp';
}

/** What {@link Netns.connect} simulates. */
export type ConnectSpec = LocalConnectSpec | RemoteConnectSpec;

/** One kernel TRACE line: a rule that matched, the end of a user chain, or a policy. */
export interface ConnectStep {
  readonly hook: string;
  readonly table: string;
  readonly chain: string;
  readonly rule: number;
  readonly event: 'rule' | 'return' | 'policy';
  readonly target: string;
  readonly text: string | null;
  /** Which packet of the exchange (`SYN`, `SYN-ACK`, `ACK`, `RST`, `UDP`; `FIN` and `ACK` of a close). */
  readonly packet: string;
}

/** The result of {@link Netns.connect}: exactly what `connect --json` prints. */
export interface ConnectResult {
  readonly outcome: 'local' | 'remote' | 'refused' | 'dropped';
  /** `local`: the accepting socket's local address; `remote`: the destination after NAT; else null. */
  readonly address: string | null;
  readonly port: number | null;
  /** `local`: what `SO_ORIGINAL_DST` reports on the accepted socket (null without conntrack); else null. */
  readonly originalDestination: string | null;
  /**
   * The address and port the accepting side saw as the connection's source, after any
   * SNAT/MASQUERADE (`local`: the accepted socket's peer, as `getpeername()` reports it;
   * `remote`: the source the peer saw on the wire); null otherwise.
   */
  readonly source: string | null;
  /**
   * What the client's `connect()` (or, for UDP, its `send()`/`recv()`) returns, as an errno name;
   * null when the connection was made (`local`, `remote`). `ECONNREFUSED`: a RST or ICMP port
   * unreachable; `EHOSTUNREACH`, `ENETUNREACH`, `EACCES` (IPv6 administratively prohibited),
   * `ENOPROTOOPT`: a REJECT's ICMP error, converted as the kernel converts it (`icmp_err_convert`,
   * `icmpv6_err_convert`); `ETIMEDOUT`: nothing came back (TCP gives up after its SYN
   * retransmissions); `EPERM`: a UDP datagram a local OUTPUT or POSTROUTING rule dropped or
   * rejected (the `send()` fails); and the {@link error} of a `connect()` that failed before any
   * packet left.
   */
  readonly errno: string | null;
  readonly steps: readonly ConnectStep[];
  /** Why the attempt ended as it did, in words. */
  readonly reason: string;
  /** The full event list (only when tracing). */
  readonly trace?: readonly TraceEvent[];
  /** Rule-level events left out of {@link trace} past 65536 (`MAX_TRACE_RULE_EVENTS`); absent when none were. */
  readonly traceOmitted?: number;
  /** With {@link Netns.connectAll}: the probability of this branch of `statistic` draws. */
  readonly probability?: number;
  /**
   * The errno of a `connect()` that failed before any packet left (`EADDRNOTAVAIL`: no free
   * source port; `ENETUNREACH`, `EHOSTUNREACH`, `EACCES`, `EINVAL`: the route); absent otherwise.
   * The outcome is then `refused`.
   */
  readonly error?: string;
}

/** Options of a call. */
export interface CallOptions {
  /** Record steps and events (default true). */
  readonly trace?: boolean;
  /**
   * After an established TCP handshake, close the connection (default false): the client's
   * FIN-ACK, the server's FIN-ACK and the client's last ACK go through the hooks like any packet;
   * the server's socket closes, the client's stays in TIME_WAIT for 60 s and the conntrack entry
   * for 120 s (the kernel's defaults), until {@link Netns.advance} passes them. Ignored by
   * {@link Netns.connectAll} and {@link Netns.trace}.
   */
  readonly close?: boolean;
}
