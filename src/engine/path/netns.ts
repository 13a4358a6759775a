/**
 * `Netns`: a modelled network namespace (a pod by default) that evaluates connections and packets
 * with the kernel's semantics and reports what `netfilter-sim connect --json` prints.
 *
 * @module
 */
import { CT_STATE, TCP_FLAGS } from '../../model/packet.js';
import type { PacketSocket, SocketView } from '../../model/packet.js';
import type { Family, Ruleset } from '../../model/types.js';
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import type { Diagnostic } from '../../model/errors.js';
import { check } from '../../iptables/check/check.js';
import type { CheckOptions } from '../../iptables/check/check.js';
import { prefixMask } from '../../model/address.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import { detectRulesSyntax } from '../../nftables/detect.js';
import { nftLoadErrors } from '../../nftables/index.js';
import type { NftRuleset } from '../../nftables/model.js';
import { NftEngine } from '../rules/nft-interpret.js';
import { LoweredNftEngine } from '../rules/nft-lower.js';
import { PROTO } from '../state/constants.js';
import { ConntrackTable, IP_CT_DIR_ORIGINAL, IP_CT_DIR_REPLY, NF_NAT_MANIP_SRC, TCP_CT, T_DPORT, T_DST, T_SPORT, T_SRC, sameAddr } from '../state/conntrack.js';
import { addressText, formatEndpoint } from '../../model/address.js';
import type { ConntrackSnapshot } from '../state/conntrack.js';
import { LoweredEvaluator, logCounters } from '../rules/iptables-evaluate.js';
import type { CounterLog } from '../rules/iptables-evaluate.js';
import type { RuleCounter, TableEvaluator } from '../rules/iptables-evaluate.js';
import { ReferenceInterpreter } from '../rules/iptables-interpret.js';
import { Kernel, SocketTable } from './kernel.js';
import type { PathResult } from './kernel.js';
import { lowerRuleset } from '../rules/iptables-lower.js';
import type { LoweredRuleset } from '../rules/iptables-lower.js';
import { checkIpsetReferences, ipsetTable } from '../state/ipset.js';
import { rateEstimatorTable } from '../state/rate-estimators.js';
import type { Ipset } from '../../model/ipset.js';
import { parseIpsetSave } from '../../iptables/syntax/ipset.js';
import { PacketState, SOCKET_FULL, SOCKET_HALF_OPEN } from '../state/packet-state.js';
import type { PacketHost, SocketRecord } from '../state/packet-state.js';
import { parseEndpoint, parsePacketSpec } from './probe.js';
import type { Endpoint, PacketSpec } from './probe.js';
import { defaultRegistry } from '../rules/registry.js';
import type { ExtensionRegistry } from '../rules/registry.js';
import { Routing, isLoopback, parseAnyAddress, parseIfaceAddress } from '../state/routing.js';
import type { InterfaceSpec, NamespaceObserver, RouteSpec, RuleSpec } from '../state/routing.js';
import { TraceRecorder } from '../trace/events.js';
import type { TraceEvent, TraceSink } from '../trace/events.js';
import { MAX_CONNTRACK_MAX, MAX_OUTCOME_TEMPLATES, pushAll } from '../../model/limits.js';
import { outcomeCacheRefusal } from './outcome-cache.js';
import type { OutcomeTemplate, ProbeFields, SocketTemplate } from './outcome-cache.js';
import type { RouteResult } from '../state/routing.js';
import { expectArgument, expectFields } from '../../model/guard.js';
import { NetnsExchange } from './exchange.js';

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

/**
 * The length Linux gives the packets the engine makes (IP header included): a SYN or SYN-ACK
 * carries MSS, SACK-permitted, timestamps and window scale (20 option bytes), the handshake's
 * ACK timestamps (12), a reset none; a datagram or ICMP message has a small payload.
 */
function packetLength(family: Family, proto: number, flags: number): number {
  const ip = family === 4 ? 20 : 40;
  if (proto === PROTO.TCP) {
    if (flags & TCP_FLAGS.RST) return ip + 20;
    return ip + 20 + (flags & TCP_FLAGS.SYN ? 20 : 12);
  }
  if (proto === PROTO.UDP) return ip + 8 + 1;
  return ip + 8;
}

/** Matches whose `checkentry` calls `nf_ct_netns_get`. */
const CONNTRACK_MATCHES: ReadonlySet<string> = new Set(['conntrack', 'state', 'connmark', 'connbytes', 'connlimit', 'connlabel', 'helper', 'cluster']);
/** Targets whose `checkentry` calls `nf_ct_netns_get`. */
const CONNTRACK_TARGETS: ReadonlySet<string> = new Set(['CT', 'CONNMARK', 'CONNSECMARK', 'DNAT', 'SNAT', 'MASQUERADE', 'REDIRECT', 'NETMAP']);

/**
 * Whether loading the rule set turns conntrack on for its family: some match or target whose
 * `checkentry` takes a reference (`nf_ct_netns_get`). The nat table itself does not: without a
 * NAT target in it, packets stay untracked and nat chains are never traversed.
 */
export function needsConntrack(rs: Ruleset): boolean {
  expectArgument(rs, 'object', 'ruleset');
  expectFields(rs, { tables: 'array', family: 'integer' }, 'ruleset');
  for (const t of rs.tables) {
    for (const c of t.chains) {
      for (const r of c.rules) {
        if (r.matches.some((m) => CONNTRACK_MATCHES.has(m.name))) return true;
        const t = r.target;
        // xt_ct_tg_check: `--notrack` (and NOTRACK) take no reference on conntrack.
        if (t?.kind === 'extension' && CONNTRACK_TARGETS.has(t.name) && !(t.name === 'CT' && t.options['notrack'] === true)) return true;
      }
    }
  }
  return false;
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
  /** Source address the socket binds (default: chosen by routing); an address the host does not own makes the socket IP_TRANSPARENT, as binding one requires. */
  readonly src?: string;
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

/**
 * The kernel's own control socket (`ipv4.tcp_sk`, the ICMP socket), which sends RSTs for ports
 * without a listener: it exists, but has no file, so xt_owner finds no uid or gid (a positive
 * `--uid-owner` fails, a negated one passes, `--socket-exists` holds). INVALID_UID (-1) can never
 * be inside a parsed owner range, which gives exactly that.
 */
const KERNEL_SOCKET: SocketView = { uid: 0xffffffff, gid: 0xffffffff, groups: [] };

const DEFAULT_INTERFACES: readonly InterfaceSpec[] = [{ name: 'eth0', addresses: ['10.0.0.2/24', 'fd00::2/64'] }];
/** `net.ipv4.ip_local_port_range`'s default. */
const LOCAL_PORT_RANGE: readonly [number, number] = [32768, 60999];
/**
 * Slots of the source-port perturbation table of `__inet_hash_connect` (`INET_TABLE_PERTURB_SIZE`:
 * 256 as introduced in Linux 5.17; later kernels use 65536 — the choice only spreads destinations).
 */
const PERTURB_SIZE = 256;
/** `TCP_TIMEWAIT_LEN`: a socket's TIME_WAIT, in seconds. */
const TCP_TIMEWAIT_LEN = 60;
/** Where a remote client's source ports start (its own stack picks them; ours counts up). */
const REMOTE_FIRST = 40000;
const MAX_BRANCHES = 4096;
const PARSE_CACHE_SIZE = 4096;

function bad(code: 'BAD_PROBE' | 'BAD_CONFIG', message: string): never {
  throw new NetfilterSimError(diagnostic(code, message));
}

/** murmur3's 32-bit finaliser. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** mulberry32: small, seedable, good enough for `statistic --mode random`. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** nft inputs loaded in order, each on top of the last, refused as `nft -f` would refuse them. */
function loadNft(inputs: readonly (string | NftRuleset)[]): NftRuleset {
  let ruleset: NftRuleset = { kind: 'nftables', tables: [] };
  for (const input of inputs) {
    if (typeof input !== 'string') {
      ruleset = { kind: 'nftables', tables: [...ruleset.tables, ...input.tables] };
      continue;
    }
    const r = nftLoadErrors(input, { base: ruleset });
    if (r.diagnostics.length > 0) throw new NetfilterSimError(r.diagnostics);
    ruleset = r.ruleset;
  }
  return ruleset;
}

function loadRules(rules: string | Ruleset | undefined, family: Family, registry: ExtensionRegistry, options: CheckOptions | undefined, lenient: boolean, warnings: Diagnostic[]): Ruleset {
  if (rules === undefined) return { family, tables: [] };
  let ruleset: Ruleset;
  if (typeof rules === 'string') {
    const r = parseIptablesSave(rules, { family, mode: lenient ? 'lenient' : 'strict' });
    const errors = r.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new NetfilterSimError(errors);
    for (const d of r.diagnostics) if (d.severity === 'warning') warnings.push({ ...d, message: `IPv${family} rules: ${d.message}` });
    ruleset = r.ruleset;
  } else ruleset = rules;
  if (ruleset.family !== family) bad('BAD_CONFIG', `the IPv${family} rules are an IPv${ruleset.family} rule set`);
  const diags: Diagnostic[] = check(ruleset, { ...options, registry });
  const errors = diags.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new NetfilterSimError(errors);
  return ruleset;
}

function gatewayFor(spec: InterfaceSpec | undefined, family: Family): string | null {
  const a = spec?.addresses.map(parseIfaceAddress).find((x) => x.family === family);
  if (!a || a.prefix >= (family === 4 ? 31 : 127)) return null;
  const mask = prefixMask(a.prefix, family);
  const words = a.addr.map((w, i) => (w & mask[i]!) >>> 0);
  // The first host of the network (10.0.0.1 for 10.0.0.2/24), or the next one if that is ours.
  words[words.length - 1] = (words[words.length - 1]! + 1) >>> 0;
  if (sameAddr(words, a.addr)) words[words.length - 1] = (words[words.length - 1]! + 1) >>> 0;
  return addressText(words, family);
}

/** Where the exchange's second end lives. */
type ServerEnd =
  | { readonly kind: 'socket'; readonly socket: SocketRecord }
  | { readonly kind: 'peer'; readonly dev: string; readonly family: Family; readonly addr: number[]; readonly port: number; readonly clientAddr: number[]; readonly clientPort: number };

/** Where the exchange's first end lives. */
type ClientEnd =
  | { readonly kind: 'socket'; readonly socket: SocketRecord }
  | { readonly kind: 'remote'; readonly dev: string; readonly family: Family; readonly addr: number[]; readonly port: number; readonly dstAddr: number[]; readonly dstPort: number };

/**
 * A network namespace: interfaces, routes, listeners, rule sets and a conntrack table kept
 * across calls.
 *
 * @example
 * ```ts
 * const ns = new Netns({ rules: saveText, listen: [4140, 4143, 8080] });
 * ns.connect({ from: 'local', uid: 1000, gid: 1000, dst: '10.96.0.10:80' });
 * // → { outcome: 'local', address: '127.0.0.1', port: 4140, originalDestination: '10.96.0.10:80', steps: [...] }
 * ```
 */
export class Netns {
  /** The IPv4 and IPv6 rule sets in use. */
  readonly ruleset4: Ruleset;
  readonly ruleset6: Ruleset;
  /** The native nftables tables of the namespace (empty without any). */
  readonly nftRuleset: NftRuleset;
  /**
   * What reading the rule text reported without refusing it: with {@link NetnsOptions.lenient},
   * every match, option or line it dropped (each with its line and column). Empty when nothing was.
   */
  readonly warnings: readonly Diagnostic[];
  /** @internal */
  readonly routing: Routing;
  private kernel: Kernel;
  private readonly peers = new Map<string, readonly number[]>();
  private readonly rng: () => number;
  /** `table_perturb` of `__inet_hash_connect`. */
  private perturb = new Uint32Array(PERTURB_SIZE);
  /** The secret of the source-port hash (`secure_ipv4_port_ephemeral`'s key), from the seed. */
  private readonly portSecret: number;
  private readonly portLow: number;
  private readonly portHigh: number;
  private nextRemotePort = REMOTE_FIRST;
  /** Client sockets in TIME_WAIT, oldest first (every one lasts {@link TCP_TIMEWAIT_LEN}). */
  private timeWait: SocketRecord[] = [];
  private timeWaitHead = 0;
  /** The sockets the current call opened, and whether its handshake completed. */
  private opened: SocketRecord[] = [];
  private handshakeDone = false;
  private closing = false;
  /** Enumeration state of `statistic` draws (connectAll). */
  private branch: { script: boolean[]; pos: number; taken: boolean[]; free: boolean[]; p: number } | null = null;
  private readonly host: PacketHost;
  /** Packet records, reused from one connection to the next (see {@link packet}). */
  private readonly packets: PacketState[] = [];
  private packetsUsed = 0;
  /** Whether packet records are reused; off, every packet is a new one. @internal */
  reusePackets = true;
  /** The virtual clock (seconds since the epoch). */
  private clock: number;
  /** `recent` lists by name (`xt_recent` tables are per namespace). */
  private recent = new Map<string, Map<string, { stamps: number[]; ttl: number }>>();
  /**
   * Why this namespace does not keep connection outcomes (a rule that reads a source port, a
   * timer or state beyond the connection's own packets and entry, native nft rules, the reference
   * evaluator, or `outcomeCache: false`), or null when it does.
   */
  readonly outcomeCacheOff: string | null;
  /** Probe → what its last connection did (see {@link NetnsOptions.outcomeCache}). */
  private readonly outcomes: Map<string, OutcomeTemplate> | null;
  /** Probes connected once, without a recording yet. */
  private readonly seen = new Set<string>();
  /** The connection being recorded for the cache, while its packets run. */
  private capture: Capture | null = null;
  /** Connections the cache recorded, and replayed, since it last judged itself. */
  private cacheRecorded = 0;
  private cacheReplayed = 0;
  /** Connections left before the cache is used again, after it found its records seldom replayed. */
  private cacheResting = 0;
  private replays = 0;

  /** Connections the outcome cache has replayed so far (tests check that it serves). @internal */
  get outcomeReplays(): number {
    return this.replays;
  }

  constructor(options: NetnsOptions = {}) {
    expectArgument(options, 'object', 'options');
    const registry = options.registry ?? defaultRegistry();
    const nftInputs: (string | NftRuleset)[] = options.nft === undefined ? [] : Array.isArray(options.nft) ? [...(options.nft as readonly (string | NftRuleset)[])] : [options.nft as string | NftRuleset];
    let rules4 = options.rules;
    let rules6 = options.rules6;
    if (typeof rules4 === 'string' && detectRulesSyntax(rules4) === 'nft') {
      nftInputs.unshift(rules4);
      rules4 = undefined;
    }
    if (typeof rules6 === 'string' && detectRulesSyntax(rules6) === 'nft') {
      nftInputs.push(rules6);
      rules6 = undefined;
    }
    const warnings: Diagnostic[] = [];
    this.ruleset4 = loadRules(rules4, 4, registry, options.check, options.lenient ?? false, warnings);
    this.ruleset6 = loadRules(rules6, 6, registry, options.check, options.lenient ?? false, warnings);
    this.warnings = warnings;
    this.nftRuleset = loadNft(nftInputs);
    const ifaces: InterfaceSpec[] = options.interfaces === undefined
      ? [...DEFAULT_INTERFACES]
      : Array.isArray(options.interfaces)
        ? [...(options.interfaces as readonly InterfaceSpec[])]
        : Object.entries(options.interfaces as Record<string, readonly string[]>).map(([name, addresses]) => ({ name, addresses }));
    const eth = ifaces.find((i) => i.name === 'eth0') ?? ifaces.find((i) => i.name !== 'lo');
    let gateways: string[];
    if (options.gateway !== undefined) gateways = typeof options.gateway === 'string' ? [options.gateway] : [...options.gateway];
    else gateways = [gatewayFor(eth, 4), gatewayFor(eth, 6)].filter((g): g is string => g !== null);
    // A given v4 gateway does not remove the default v6 one, and vice versa.
    if (options.gateway !== undefined) {
      for (const fam of [4, 6] as const) {
        if (!gateways.some((g) => parseAnyAddress(g)?.family === fam)) {
          const g = gatewayFor(eth, fam);
          if (g !== null) gateways.push(g);
        }
      }
    }
    this.routing = new Routing({
      interfaces: ifaces,
      gateways,
      routes: options.routes ?? [],
      rules: options.ipRules ?? [],
      routeLocalnet: options.routeLocalnet ?? false,
    });
    for (const [addr, ports] of Object.entries(options.peers ?? {})) {
      const a = parseAnyAddress(addr);
      if (!a) bad('BAD_CONFIG', `bad peer address "${addr}"`);
      this.peers.set(addressText(a.addr, a.family), ports);
    }
    const sockets = new SocketTable();
    this.routing.observer = options.observe ?? null;
    sockets.observer = options.observe ?? null;
    for (const l of options.listen ?? []) pushAll(sockets.listeners, parseListener(l));
    const names = this.routing.ifaces.map((i) => i.name);
    const ipsets = ipsetTable(typeof options.ipsets === 'string' ? parseIpsetSave(options.ipsets) : (options.ipsets ?? []));
    checkIpsetReferences(this.ruleset4, ipsets);
    checkIpsetReferences(this.ruleset6, ipsets);
    const rateEstimators = rateEstimatorTable([this.ruleset4, this.ruleset6], options.clock ?? 0);
    const env = { ipsets, rateEstimators };
    const evaluator = (rs: Ruleset): TableEvaluator =>
      options.evaluator === 'reference'
        ? new ReferenceInterpreter(rs, registry, env)
        : new LoweredEvaluator(options.instrument ? options.instrument(lowerRuleset(rs, names, registry, env)) : lowerRuleset(rs, names, registry, env));
    this.rng = mulberry32(options.seed ?? 1);
    this.portSecret = mulberry32((options.seed ?? 1) ^ 0x5eed0f00)();
    const range = options.localPortRange ?? LOCAL_PORT_RANGE;
    if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n) && n >= 1 && n <= 65535) || range[0]! > range[1]!) {
      bad('BAD_CONFIG', `localPortRange (ip_local_port_range) must be two ports [low, high] with low <= high, not ${JSON.stringify(range)}`);
    }
    this.portLow = range[0]!;
    this.portHigh = range[1]!;
    this.clock = options.clock ?? 0;
    if (!Number.isFinite(this.clock) || this.clock < 0) bad('BAD_CONFIG', `clock must be a number of seconds since the epoch, not ${String(options.clock)}`);
    this.host = {
      addressType: (family, addr, iface) => this.routing.addressType(family, addr, iface),
      statisticRandom: (probability) => this.statisticRandom(probability),
      now: () => this.clock,
      connCount: (family, addr, prefix, daddr) => this.connCount(family, addr, prefix, daddr),
      socketLookup: (p) => this.socketOf(p),
      recentTable: (name) => {
        let t = this.recent.get(name);
        if (t === undefined) {
          t = new Map();
          this.recent.set(name, t);
        }
        return t;
      },
    };
    const ct = new ConntrackTable();
    if (options.conntrackMax !== undefined) {
      if (!Number.isSafeInteger(options.conntrackMax) || options.conntrackMax < 1 || options.conntrackMax > MAX_CONNTRACK_MAX) {
        bad('BAD_CONFIG', `conntrackMax (nf_conntrack_max) must be an integer from 1 to ${MAX_CONNTRACK_MAX}, not ${String(options.conntrackMax)}`);
      }
      ct.max = options.conntrackMax;
    }
    this.kernel = new Kernel(this.routing, ct, sockets, evaluator(this.ruleset4), evaluator(this.ruleset6), options.ipForward ?? false);
    this.kernel.now = this.clock;
    this.kernel.ipsets = ipsets;
    this.kernel.rateEstimators = rateEstimators;
    this.kernel.ctEnabled4 = options.conntrack ?? needsConntrack(this.ruleset4);
    this.kernel.ctEnabled6 = options.conntrack ?? needsConntrack(this.ruleset6);
    if (this.nftRuleset.tables.length > 0) {
      const nft = options.evaluator === 'reference' ? new NftEngine(this.nftRuleset) : options.instrumentNft ? options.instrumentNft(this.nftRuleset) : new LoweredNftEngine(this.nftRuleset);
      this.kernel.nft = nft;
      if (options.conntrack === undefined) {
        this.kernel.ctEnabled4 ||= nft.usesConntrack(4);
        this.kernel.ctEnabled6 ||= nft.usesConntrack(6);
      }
    }
    if (options.outcomeCache !== undefined && typeof options.outcomeCache !== 'boolean') bad('BAD_CONFIG', `outcomeCache must be true or false, not ${String(options.outcomeCache)}`);
    this.outcomeCacheOff =
      options.outcomeCache === false ? 'turned off (outcomeCache: false)'
        : options.evaluator === 'reference' ? 'the reference evaluator'
          : options.instrument !== undefined || options.instrumentNft !== undefined || options.observe !== undefined ? 'an instrumented namespace'
            : this.nftRuleset.tables.length > 0 ? 'native nft rules'
              : outcomeCacheRefusal([this.ruleset4, this.ruleset6]);
    this.outcomes = this.outcomeCacheOff === null ? new Map() : null;
  }

  private exchanger: NetnsExchange | null = null;

  /**
   * The namespace's packet path, for a driver that joins namespaces (the cluster): packets in
   * and out by interface, sockets, answers (see `exchange.ts`). @internal
   */
  exchange(): NetnsExchange {
    return (this.exchanger ??= new NetnsExchange({
      kernel: () => this.kernel,
      host: this.host,
      ephemeral: (proto, family, src, dst, dport) => this.ephemeral(proto, family, src, dst, dport),
    }));
  }

  /** The conntrack table, compact. */
  conntrack(): ConntrackSnapshot[] {
    return this.kernel.conntrack.snapshot();
  }

  /**
   * Packet counters of the rules (and built-in policies) that counted something, as
   * `iptables -L -v` shows them; `rule` is the chain's length + 1 for its policy.
   */
  counters(family: Family = 4): RuleCounter[] {
    return (family === 4 ? this.kernel.ev4 : this.kernel.ev6).counters();
  }

  /** The virtual clock, in seconds since the epoch. */
  get now(): number {
    return this.clock;
  }

  /**
   * Moves the virtual clock on by `seconds` (rate limits refill, `recent` stamps age, `time`
   * windows open and close, conntrack entries whose timer fired leave the table and sockets
   * whose TIME_WAIT ended close).
   */
  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) bad('BAD_CONFIG', `advance takes a non-negative number of seconds, not ${String(seconds)}`);
    this.clock += seconds;
    this.kernel.now = this.clock;
    this.kernel.conntrack.expire(this.clock);
    const q = this.timeWait;
    let h = this.timeWaitHead;
    while (h < q.length && q[h]!.state <= this.clock) {
      const s = q[h]!;
      // A socket whose tuple connect() reused early has left the table already.
      if (this.kernel.sockets.find(s.family, s.proto, s.local!, s.localPort, s.remote!, s.remotePort) === s) this.kernel.sockets.removeConnection(s);
      h++;
    }
    if (h > 1024 && h * 2 > q.length) {
      this.timeWait = q.slice(h);
      h = 0;
    }
    this.timeWaitHead = h;
  }

  /** Empties every `recent` list (`explore` runs each probe against empty lists). @internal */
  clearRecent(): void {
    this.recent.clear();
  }

  /** The namespace's `recent` lists: name → addresses with their time stamps. */
  recentLists(): Record<string, { address: string; stamps: number[] }[]> {
    const out: Record<string, { address: string; stamps: number[] }[]> = {};
    for (const [name, t] of this.recent) {
      out[name] = [...t].map(([key, e]) => {
        const [fam, words] = key.split('|') as [string, string];
        return { address: addressText(words.split('.').map(Number), fam === '4' ? 4 : 6), stamps: [...e.stamps] };
      });
    }
    return out;
  }

  /** Confirmed connections of `family` whose original source (or destination) is in `addr/prefix`. */
  private connCount(family: Family, addr: readonly number[], prefix: number, daddr: boolean): number {
    const ct = this.kernel.conntrack;
    const words: number[] = [];
    let n = 0;
    for (const e of ct.entries()) {
      if (ct.family[e] !== family) continue;
      ct.readAddr(e, 0, daddr ? T_DST : T_SRC, words);
      let inside = true;
      for (let i = 0; i < words.length && inside; i++) {
        const bits = Math.max(0, Math.min(32, prefix - i * 32));
        const m = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
        inside = ((words[i]! & m) >>> 0) === ((addr[i]! & m) >>> 0);
      }
      if (inside) n++;
    }
    return n;
  }

  /** Forgets every connection (`conntrack -F`) and accepted socket. */
  flushConntrack(): void {
    this.kernel.conntrack.flush();
    this.kernel.sockets.clearConnections();
    this.timeWait = [];
    this.timeWaitHead = 0;
  }

  /** Parsed `IP:PORT` texts of recent calls (probes repeat their destinations). */
  private readonly endpoints = new Map<string, Endpoint>();
  private readonly addresses = new Map<string, { family: Family; addr: number[] } | null>();

  private endpoint(text: string): Endpoint {
    let e = this.endpoints.get(text);
    if (e === undefined) {
      e = parseEndpoint(text, true);
      if (this.endpoints.size >= PARSE_CACHE_SIZE) this.endpoints.clear();
      this.endpoints.set(text, e);
    }
    return e;
  }

  private address(text: string): { family: Family; addr: number[] } | null {
    let a = this.addresses.get(text);
    if (a === undefined) {
      a = parseAnyAddress(text);
      if (this.addresses.size >= PARSE_CACHE_SIZE) this.addresses.clear();
      this.addresses.set(text, a);
    }
    return a;
  }

  private statisticRandom(probability: number): boolean {
    // xt_statistic: (get_random_u32() & 0x7FFFFFFF) < probability
    if (probability <= 0) return false;
    if (probability >= 0x80000000) return true;
    const b = this.branch;
    if (b === null) return (this.rng() & 0x7fffffff) < probability;
    const q = probability / 0x80000000;
    let v: boolean;
    if (b.pos < b.script.length) v = b.script[b.pos]!;
    else v = true;
    b.pos++;
    b.taken.push(v);
    b.free.push(true);
    b.p *= v ? q : 1 - q;
    return v;
  }

  /**
   * Simulates a connection attempt: for TCP the SYN, the answer (SYN-ACK or RST) and the ACK, each
   * through every hook it crosses; for UDP one datagram. The result is what `connect --json`
   * prints.
   */
  connect(spec: ConnectSpec, options: CallOptions = {}): ConnectResult {
    expectArgument(spec, 'object', 'spec');
    expectArgument(options, 'object', 'options');
    return this.connectWith(spec, options.close === true, options.trace === false ? null : new TraceRecorder());
  }

  /**
   * {@link connect} with a trace whose events go to `sink` as they are recorded; the result's
   * `steps` and `trace` are empty. Returns `traceOmitted` beside it (0 when none were left out).
   * @internal
   */
  connectInto(spec: ConnectSpec, close: boolean, sink: TraceSink): { readonly result: ConnectResult; readonly omitted: number } {
    expectArgument(spec, 'object', 'spec');
    const tr = new TraceRecorder(sink);
    return { result: this.connectWith(spec, close, tr), omitted: tr.omitted };
  }

  private connectWith(spec: ConnectSpec, close: boolean, tr: TraceRecorder | null): ConnectResult {
    this.closing = close;
    let r: ConnectResult;
    let c: Capture | null = null;
    let opened: SocketRecord[] = [];
    try {
      r = this.run(spec, tr);
    } finally {
      c = this.capture;
      if (c !== null) {
        this.capture = null;
        logCounters(null);
        opened = this.opened.slice();
      }
      this.closing = false;
      this.settleSockets();
      this.kernel.releaseUnconfirmed();
    }
    if (c !== null) this.endCapture(c, opened, r);
    return r;
  }

  /**
   * After a call: the sockets of an attempt that did not complete close (connect() failed or
   * timed out), as do a UDP socket the caller closed; those of an established connection stay.
   */
  private settleSockets(): void {
    const opened = this.opened;
    if (opened.length !== 0) {
      if (!this.handshakeDone) for (let i = 0; i < opened.length; i++) this.kernel.sockets.removeConnection(opened[i]!);
      opened.length = 0;
    }
    this.handshakeDone = false;
  }

  /**
   * Like {@link connect}, but explores every outcome of `statistic --mode random` draws instead of
   * drawing, each branch on a copy of the conntrack table (the namespace is left unchanged).
   * Results carry the probability of their branch.
   */
  connectAll(spec: ConnectSpec, options: CallOptions = {}): ConnectResult[] {
    expectArgument(spec, 'object', 'spec');
    expectArgument(options, 'object', 'options');
    const out: ConnectResult[] = [];
    const saved = this.kernel;
    const ports = [this.perturb.slice(), this.nextRemotePort] as const;
    const recent = this.recent;
    const copyRecent = (): Map<string, Map<string, { stamps: number[]; ttl: number }>> =>
      new Map([...recent].map(([k, t]) => [k, new Map([...t].map(([a, e]) => [a, { stamps: [...e.stamps], ttl: e.ttl }]))]));
    let script: boolean[] = [];
    try {
      for (let n = 0; n < MAX_BRANCHES; n++) {
        this.kernel = new Kernel(saved.routing, saved.conntrack.clone(), saved.sockets.clone(), saved.ev4, saved.ev6, saved.forwarding);
        this.kernel.ctEnabled4 = saved.ctEnabled4;
        this.kernel.ctEnabled6 = saved.ctEnabled6;
        this.kernel.nft = saved.nft;
        this.kernel.now = saved.now;
        this.perturb = ports[0].slice();
        this.nextRemotePort = ports[1];
        this.recent = copyRecent();
        this.branch = { script, pos: 0, taken: [], free: [], p: 1 };
        const tr = options.trace === false ? null : new TraceRecorder();
        const r = this.run(spec, tr);
        this.opened.length = 0;
        this.handshakeDone = false;
        const b = this.branch;
        out.push({ ...r, probability: b.p });
        let i = b.taken.length - 1;
        while (i >= 0 && !(b.taken[i] && b.free[i])) i--;
        if (i < 0) break;
        script = [...b.taken.slice(0, i), false];
      }
    } finally {
      this.kernel = saved;
      this.recent = recent;
      this.branch = null;
      this.perturb = ports[0];
      this.nextRemotePort = ports[1];
    }
    return out;
  }

  /**
   * Traces one packet: `tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0` (arriving) or
   * `tcp > 10.96.0.10:80 uid 1000` (sent by a local process). See {@link parsePacketSpec}.
   */
  trace(packet: string | PacketSpec, options: CallOptions = {}): ConnectResult {
    expectArgument(packet, ['string', 'object'], 'packet');
    expectArgument(options, 'object', 'options');
    if (typeof packet !== 'string') expectFields(packet, { family: 'integer', proto: 'integer', dst: 'array', groups: 'array', origin: 'string' }, 'packet');
    const spec = typeof packet === 'string' ? parsePacketSpec(packet) : packet;
    const tr = options.trace === false ? null : new TraceRecorder();
    try {
      return this.traceOne(spec, tr);
    } finally {
      this.kernel.releaseUnconfirmed();
    }
  }

  private traceOne(spec: PacketSpec, tr: TraceRecorder | null): ConnectResult {
    this.beginPackets();
    const family = spec.family;
    const proto = spec.proto;
    if (spec.origin === 'local') {
      const owner: SocketView | null = spec.uid === null ? null : { uid: spec.uid, gid: spec.gid ?? spec.uid, groups: spec.groups };
      const route = this.routing.routeOutput(family, spec.dst, spec.mark, spec.src);
      const src = spec.src ?? (route.src ? route.src.slice() : family === 4 ? [0] : [0, 0, 0, 0]);
      // 0.0.0.0 and :: are the host itself (route.dst: 127.0.0.1, ::1, or the bound source).
      const to = route.dst ?? spec.dst;
      const sport = spec.sport ?? this.ephemeral(proto, family, src, to, spec.dport);
      const p = this.packet(family, proto, src, sport < 0 ? this.portLow : sport, to, spec.dport, spec.flags);
      p.route = route;
      p.mark = spec.mark;
      p.socket = owner;
      p.icmpType = spec.icmpType;
      p.icmpCode = spec.icmpCode;
      p.fragment = spec.fragment;
      this.startPacket(tr, 0, spec.label, p, 'local', null);
      return this.single(this.kernel.sendLocal(p, tr), tr);
    }
    const dev = this.routing.byName.get(spec.iface ?? this.defaultIface(family, spec.src!));
    if (!dev) bad('BAD_PROBE', `no interface "${spec.iface}"`);
    const sport = spec.sport ?? this.nextRemote(proto, family, spec.src!, spec.dst, spec.dport);
    const p = this.packet(family, proto, spec.src!, sport < 0 ? REMOTE_FIRST : sport, spec.dst, spec.dport, spec.flags);
    p.mark = spec.mark;
    p.icmpType = spec.icmpType;
    p.icmpCode = spec.icmpCode;
    p.fragment = spec.fragment;
    this.startPacket(tr, 0, spec.label, p, 'remote', dev.name);
    return this.single(this.kernel.receive(p, dev, false, tr), tr);
  }

  // ---- internals -----------------------------------------------------------------------------

  /**
   * `__inet_hash_connect`: the source port `connect()` binds. A keyed hash of the addresses and
   * destination port (`secure_ipv4_port_ephemeral`), plus the perturbation its table slot has
   * accumulated, gives an offset into `ip_local_port_range`; from there the ports of the range's
   * parity are tried in steps of two, then the others. A port is skipped when a listener holds it
   * (its bind bucket) or when a connection with the same 4-tuple exists (`__inet_check_established`),
   * unless that one is a TIME_WAIT socket `tcp_twsk_unique` lets go (below). At most every port of
   * the range is tried once: -1 when none is free (`EADDRNOTAVAIL`).
   */
  private ephemeral(proto: number, family: Family, src: readonly number[], dst: readonly number[], dport: number): number {
    const low = this.portLow;
    const high = this.portHigh + 1;
    let remaining = high - low;
    if (remaining > 1) remaining &= ~1;
    let h = Math.imul(this.portSecret ^ dport, 0x9e3779b1);
    for (let i = 0; i < src.length; i++) h = Math.imul(h ^ src[i]!, 0x01000193) + 0x7feb352d;
    for (let i = 0; i < dst.length; i++) h = Math.imul(h ^ dst[i]!, 0x01000193) + 0x68e31da4;
    const h1 = fmix32(h);
    const h2 = fmix32(h1 ^ 0x85ebca6b);
    const index = h1 & (PERTURB_SIZE - 1);
    let offset = ((this.perturb[index]! + h2) >>> 0) % remaining;
    // The first pass tries ports of low's parity (bind() prefers the other one).
    if (remaining > 1) offset &= ~1;
    const sockets = this.kernel.sockets;
    const ct = this.kernel.conntrack;
    const step = remaining > 1 ? 2 : 1;
    for (;;) {
      let port = low + offset;
      for (let i = 0; i < remaining; i += step, port += step) {
        if (port >= high) port -= remaining;
        if (sockets.portBound(proto, port)) continue;
        const s = sockets.find(family, proto, src, port, dst, dport);
        if (s !== null && !this.timeWaitReusable(s)) continue;
        // The kernel looks at sockets only. A tuple conntrack still tracks as live (not a closed
        // TCP connection, which a SYN re-opens) is skipped too: it has no socket here only when
        // another end of the simulation made it (a transparent proxy reusing a client's
        // address), and a SYN sent into it would join the other connection.
        const ref = ct.lookup(0, proto, src, port, dst, dport);
        if (ref >= 0 && !(proto === PROTO.TCP && (ct.tcpState[ref >> 1] === TCP_CT.TIME_WAIT || ct.tcpState[ref >> 1] === TCP_CT.CLOSE))) continue;
        if (s !== null) sockets.removeConnection(s);
        // The next connection to the same slot starts past this one (the kernel adds up to
        // 7 random steps more on a quiet table; this stays deterministic).
        this.perturb[index] = (this.perturb[index]! + i + step) >>> 0;
        return port;
      }
      offset++;
      if (!((offset & 1) && remaining > 1)) return -1;
    }
  }

  // ---- the outcome cache -----------------------------------------------------------------------

  /**
   * Whether this untraced call may use the cache. Every {@link CACHE_JUDGE_AFTER} recordings the
   * cache judges itself: when it replayed fewer than one connection per eight recordings (probes
   * that seldom repeat, where recording costs more than replaying saves), it drops its recordings
   * and rests for {@link CACHE_REST} calls, then records again.
   */
  private cacheUsable(): boolean {
    if (this.outcomes === null || this.branch !== null) return false;
    if (this.cacheResting > 0) {
      this.cacheResting--;
      return false;
    }
    if (this.cacheRecorded >= CACHE_JUDGE_AFTER) {
      if (this.cacheReplayed * 8 < this.cacheRecorded) {
        // The recordings were seldom replayed: they go, and the cache rests.
        this.cacheResting = CACHE_REST;
        this.outcomes.clear();
      }
      this.cacheRecorded = 0;
      this.cacheReplayed = 0;
      return this.cacheResting === 0;
    }
    return true;
  }

  /**
   * Whether a probe without a recording came before: the cache records a probe's second
   * connection, so that probes seen once (every connection to another address) cost no recording.
   */
  private seenBefore(key: string): boolean {
    const seen = this.seen;
    if (seen.has(key)) return true;
    if (seen.size >= MAX_SEEN_PROBES) seen.clear();
    seen.add(key);
    return false;
  }

  /**
   * Starts recording a connection for the cache, when nothing in the namespace holds its tuple and
   * the conntrack table has room: the recording then shows what any connection of the probe does.
   */
  private beginCapture(key: string, family: Family, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number, route: RouteResult | null, owner: SocketView | null, mark: number, transparent: boolean, dev: string | null): void {
    const ct = this.kernel.conntrack;
    if (ct.count >= ct.max || ct.lookup(0, proto, src, sport, dst, dport) >= 0) return;
    const log: CounterLog = { rules: [], chains: [] };
    this.cacheRecorded++;
    this.capture = {
      key, family, proto, src, sport, dst, dport, route, owner, mark, transparent, dev, log,
      ids: ct.nextEntryId, entries: ct.count, sockets: this.kernel.sockets.connections, timeWait: this.timeWait.length,
    };
    logCounters(log);
  }

  /**
   * Keeps what the recorded connection did, when it is what every connection of its probe would do
   * with another source port: one conntrack entry at most, of its own tuple, whose reply goes back
   * to that port; sockets of its own tuple only; no text that shows the port but its source.
   */
  private endCapture(c: Capture, opened: readonly SocketRecord[], r: ConnectResult): void {
    const ct = this.kernel.conntrack;
    const sockets = this.kernel.sockets;
    const now = this.kernel.now;
    const { family, proto, src, sport, dst, dport } = c;
    const ids = ct.nextEntryId - c.ids;
    const ref = ct.lookup(0, proto, src, sport, dst, dport);
    let entry: 0 | 1 | 2 = 0;
    let kept: OutcomeTemplate['ct'] = null;
    let serverAddr = dst;
    let serverPort = dport;
    if (ids === 1 && ref >= 0) {
      const e = ref >> 1;
      if ((ref & 1) !== 0 || ct.id[e] !== c.ids || ct.count !== c.entries + 1) return;
      kept = ct.captureEntry(e, now, ct.lastConfirmExpires);
      const w = kept.reply;
      if (kept.zone !== 0 || w[T_DPORT] !== sport) return;
      for (let i = 0; i < 4; i++) if (w[T_DST + i] !== (i < src.length ? src[i] : 0)) return;
      serverAddr = family === 4 ? [w[T_SRC]!] : w.slice(T_SRC, T_SRC + 4);
      serverPort = w[T_SPORT]!;
      entry = 2;
    } else if (ids === 1) {
      if (ct.count !== c.entries) return;
      entry = 1;
    } else if (ids !== 0 || ref >= 0 || ct.count !== c.entries) return;
    // Sockets: the client's (local clients) and the server's accepted one, nothing else.
    let clientKept = false;
    let clientState = 0;
    let accepted: SocketTemplate | null = null;
    let live = 0;
    for (let i = 0; i < opened.length; i++) {
      const o = opened[i]!;
      if (sockets.find(o.family, o.proto, o.local!, o.localPort, o.remote!, o.remotePort) !== o) continue;
      live++;
      const state = o.state >= 0 ? o.state - now : o.state;
      if (i === 0 && c.route !== null) {
        clientKept = true;
        clientState = state;
      } else if (o.remotePort === sport && sameAddr(o.remote!, src) && !(o.localPort === sport && sameAddr(o.local!, src))) {
        accepted = { local: o.local!, localPort: o.localPort, owner: o.owner, transparent: o.transparent, mark: o.mark, listener: o.listener, state };
      } else return;
    }
    if (sockets.connections !== c.sockets + live) return;
    const held = sockets.find(family, proto, serverAddr, serverPort, src, sport);
    if (held !== null && !opened.includes(held)) return;
    const tw = this.timeWait.length - c.timeWait;
    if (tw < 0 || tw > 1 || (tw === 1 && (!clientKept || this.timeWait[this.timeWait.length - 1] !== opened[0]))) return;
    // The result: its source is the client's endpoint (as the result prints it, but for the
    // port); nothing else may show the port.
    const endpoint = formatEndpoint(src, 0, family).slice(0, -1);
    let sourced = false;
    if (r.source !== null) {
      if (r.source !== endpoint + sport) return;
      sourced = true;
    }
    const port = String(sport);
    if (r.port === sport || r.reason.includes(port) || r.address?.includes(port) || r.originalDestination?.includes(port) || r.error?.includes(port)) return;
    if (this.outcomes!.size >= MAX_OUTCOME_TEMPLATES) this.outcomes!.clear();
    this.outcomes!.set(c.key, {
      family, proto, src, dst, dport, route: c.route, owner: c.owner, mark: c.mark, transparent: c.transparent, dev: c.dev,
      clientKept, clientState, clientTimeWait: tw === 1, serverAddr, serverPort, accepted, entry, ct: kept,
      rules: c.log.rules, chains: c.log.chains,
      outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination, source: sourced ? endpoint : null, reason: r.reason, error: r.error,
    });
  }

  /**
   * Does again what the probe's last connection did, for a connection from `sport`; null (nothing
   * done) when the namespace now holds one of its tuples or its conntrack table is full, which
   * the connection's packets would meet.
   */
  private replay(t: OutcomeTemplate, sport: number): ConnectResult | null {
    const ct = this.kernel.conntrack;
    const sockets = this.kernel.sockets;
    const { family, proto, src, dst, dport } = t;
    if (ct.lookup(0, proto, src, sport, dst, dport) >= 0) return null;
    if (t.entry !== 0 && ct.count >= ct.max) return null;
    if (t.entry === 2 && ct.lookup(0, proto, t.serverAddr, t.serverPort, src, sport) >= 0) return null;
    if (sockets.find(family, proto, t.serverAddr, t.serverPort, src, sport) !== null) return null;
    this.cacheReplayed++;
    this.replays++;
    const now = this.kernel.now;
    if (t.clientKept) {
      const sock: SocketRecord = {
        family, proto, local: src, localPort: sport, remote: dst, remotePort: dport,
        owner: t.owner!, transparent: t.transparent, mark: t.mark, listener: null, state: t.clientState >= 0 ? now + t.clientState : t.clientState,
      };
      sockets.addConnection(sock);
      if (t.clientTimeWait) this.timeWait.push(sock);
    }
    if (t.entry !== 0) {
      const e = ct.create(family, proto, 0, src, sport, dst, dport);
      if (t.entry === 2) ct.restoreConfirmed(e, t.ct!, now);
      else ct.release(e);
    }
    const a = t.accepted;
    if (a !== null) {
      sockets.addConnection({
        family, proto, local: a.local, localPort: a.localPort, remote: src, remotePort: sport,
        owner: a.owner, transparent: a.transparent, mark: a.mark, listener: a.listener, state: a.state >= 0 ? now + a.state : a.state,
      });
    }
    const rules = t.rules;
    for (let i = 0; i < rules.length; i++) rules[i]!.packets++;
    const chains = t.chains;
    for (let i = 0; i < chains.length; i++) chains[i]!.policyPackets++;
    const r: { -readonly [K in keyof ConnectResult]: ConnectResult[K] } = {
      outcome: t.outcome,
      address: t.address,
      port: t.port,
      originalDestination: t.originalDestination,
      source: t.source === null ? null : t.source + sport,
      steps: [],
      reason: t.reason,
    };
    if (t.error !== undefined) r.error = t.error;
    return r;
  }

  /**
   * `tcp_twsk_unique` with `net.ipv4.tcp_tw_reuse = 2` (the default): a TIME_WAIT socket gives its
   * tuple to a new connection when one of its addresses is loopback and its last timestamp is from
   * an earlier second.
   */
  private timeWaitReusable(s: SocketRecord): boolean {
    const until = s.state;
    if (until < 0) return false;
    if (!isLoopback(s.local!, s.family) && !isLoopback(s.remote!, s.family)) return false;
    return Math.floor(this.clock) > Math.floor(until - TCP_TIMEWAIT_LEN);
  }

  /**
   * A remote client's source port: its own stack picks one; ours counts up through 32768–60999,
   * skipping tuples the namespace still tracks or has a socket for; -1 when every one is.
   */
  private nextRemote(proto: number, family: Family, src: readonly number[], dst: readonly number[], dport: number): number {
    const [low, high] = LOCAL_PORT_RANGE;
    for (let n = 0; n <= high - low; n++) {
      const p = this.nextRemotePort;
      this.nextRemotePort = p >= high ? low : p + 1;
      if (this.kernel.conntrack.lookup(0, proto, src, p, dst, dport) >= 0) continue;
      if (this.kernel.sockets.find(family, proto, dst, dport, src, p) !== null) continue;
      return p;
    }
    return -1;
  }

  private defaultIface(family: Family, src: readonly number[]): string {
    const dev = this.routing.connectedDevice(family, src);
    if (dev && !dev.loopback) return dev.name;
    return this.routing.byName.has('eth0') ? 'eth0' : (this.routing.ifaces[1]?.name ?? 'lo');
  }

  /**
   * A packet of the current connection, with copies of `src` and `dst`. Its record is one of the
   * namespace's, reused by later connections ({@link beginPackets}): nothing keeps a packet once
   * its connection is done.
   */
  private packet(family: Family, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number, flags: number): PacketState {
    const tcpFlags = proto === PROTO.TCP ? flags : 0;
    const pool = this.packets;
    let p: PacketState;
    if (this.packetsUsed < pool.length) p = pool[this.packetsUsed]!.reset(family, proto, src, sport, dst, dport, tcpFlags);
    else {
      p = new PacketState(this.host, family, proto, src.slice(), sport, dst.slice(), dport, tcpFlags);
      if (this.reusePackets && pool.length < MAX_PACKET_RECORDS) pool.push(p);
    }
    this.packetsUsed++;
    p.length = packetLength(family, proto, tcpFlags);
    return p;
  }

  /** A connection (or a lone packet) begins: the packet records of the last one are free again. */
  private beginPackets(): void {
    this.packetsUsed = 0;
  }

  private startPacket(tr: TraceRecorder | null, index: number, label: string, p: PacketState, origin: 'local' | 'remote', iface: string | null): void {
    if (tr === null) return;
    tr.packet = index;
    tr.label = label;
    tr.push({
      packet: tr.packet, label: tr.label, type: 'packet', family: p.family, proto: protoName(p.proto), src: addressText(p.src, p.family), sport: p.sport,
      dst: addressText(p.dst, p.family), dport: p.dport, flags: flagNames(p.tcpFlags), origin, iface,
      uid: p.socket === KERNEL_SOCKET ? null : (p.socket?.uid ?? null), gid: p.socket === KERNEL_SOCKET ? null : (p.socket?.gid ?? null), mark: p.mark,
    });
  }

  private single(r: PathResult, tr: TraceRecorder | null): ConnectResult {
    const p = r.p;
    switch (r.kind) {
      case 'local':
        return this.result('local', p.dst, p.dport, p.family, origDst(p), `delivered to a socket (${r.socket.remote === null ? 'listener' : 'connection'})`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
      case 'wire':
        return this.result('remote', p.dst, p.dport, p.family, null, `left through ${r.dev.name}`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
      case 'refused':
        return this.result('refused', p.dst, p.dport, p.family, null, `no socket at ${formatEndpoint(p.dst, p.dport, p.family)}`, tr);
      case 'dropped':
        return this.result(r.reject ? 'refused' : 'dropped', p.dst, p.dport, p.family, null, r.reason, tr);
    }
  }

  /** `connect()` found no free source port: it fails with EADDRNOTAVAIL before any packet. */
  /** connect() fails before any packet leaves: the caller sees the system call's error. */
  private refuseConnect(dst: Endpoint, family: Family, label: string, errno: string, why: string, tr: TraceRecorder | null): ConnectResult {
    const to = addressText(dst.addr, family);
    if (tr !== null) {
      tr.packet = 0;
      tr.label = label;
      tr.push({ packet: 0, label, type: 'route', hook: null, dst: to, result: 'unreachable', dev: null, via: null, src: null, table: null, reason: why });
    }
    return this.result('refused', dst.addr, dst.port, family, null, `connect(): ${errno}: ${why} (${to})`, tr, errno);
  }

  private noPort(family: Family, src: readonly number[], dst: Endpoint, label: string, tr: TraceRecorder | null): ConnectResult {
    const range = `${this.portLow}–${this.portHigh}`;
    const why = `connect(): EADDRNOTAVAIL: no free source port in ${range} from ${addressText(src, family)} to ${formatEndpoint(dst.addr, dst.port, family)}`;
    if (tr !== null) {
      tr.packet = 0;
      tr.label = label;
      tr.push({ packet: 0, label, type: 'drop', hook: null, reason: why, reject: null });
    }
    return this.result('refused', dst.addr, dst.port, family, null, why, tr, 'EADDRNOTAVAIL');
  }

  private result(outcome: ConnectResult['outcome'], addr: readonly number[] | null, port: number | null, family: Family, original: string | null, reason: string, tr: TraceRecorder | null, error?: string, source: string | null = null): ConnectResult {
    // As connect --json: address and port only for an accepted (local) or departed (remote) attempt.
    const placed = outcome === 'local' || outcome === 'remote';
    const r: { -readonly [K in keyof ConnectResult]: ConnectResult[K] } = {
      outcome,
      address: placed && addr ? addressText(addr, family) : null,
      port: placed ? port : null,
      originalDestination: original,
      source: placed ? source : null,
      steps: tr === null ? [] : stepsOf(tr.events),
      reason,
    };
    if (tr !== null) r.trace = tr.events;
    if (tr !== null && tr.omitted > 0) r.traceOmitted = tr.omitted;
    if (error !== undefined) r.error = error;
    return r;
  }

  /** A loopback source on the wire: the receiver drops it (martian / ip6_rcv_core). */
  private martianOnWire(p: PacketState): boolean {
    this.routing.observer?.addr(p.src);
    if (p.family === 4) return p.src[0]! >>> 24 === 127;
    return p.src[0] === 0 && p.src[1] === 0 && p.src[2] === 0 && p.src[3] === 1;
  }

  private peerAccepts(addr: readonly number[], family: Family, port: number): boolean {
    const o = this.routing.observer;
    o?.addr(addr);
    const ports = this.peers.get(addressText(addr, family));
    if (ports !== undefined) o?.port(port);
    return ports === undefined || ports.includes(port);
  }

  private run(spec: ConnectSpec, tr: TraceRecorder | null): ConnectResult {
    this.beginPackets();
    const proto = spec.proto === 'udp' ? PROTO.UDP : spec.proto === undefined || spec.proto === 'tcp' ? PROTO.TCP : bad('BAD_PROBE', `unknown protocol "${String(spec.proto)}"`);
    // The cached words are shared: nothing below writes to dst.addr or src.addr.
    let dst = this.endpoint(spec.dst);
    // A local connection reads its destination at once (connect()'s own checks, then its route).
    if (spec.from === 'local') this.routing.observer?.addr(dst.addr);
    // tcp_v6_connect / __ip6_datagram_connect: a local IPv6 socket (not IPV6_V6ONLY) connecting
    // to an IPv4-mapped address (::ffff:a.b.c.d) makes an IPv4 connection.
    if (spec.from === 'local' && dst.family === 6 && isV4Mapped(dst.addr)) dst = { family: 4, addr: [dst.addr[3]!], port: dst.port };
    const family = dst.family;
    let client: ClientEnd;
    let first: PathResult;
    const label = proto === PROTO.TCP ? 'SYN' : 'UDP';
    const flags = proto === PROTO.TCP ? TCP_FLAGS.SYN : 0;
    if (spec.from === 'local') {
      if (!Number.isInteger(spec.uid) || spec.uid < 0 || spec.uid > 0xffffffff) bad('BAD_PROBE', `bad uid "${spec.uid}" (a uid is from 0 to 4294967295)`);
      if (spec.gid !== undefined && (!Number.isInteger(spec.gid) || spec.gid < 0 || spec.gid > 0xffffffff)) bad('BAD_PROBE', `bad gid "${spec.gid}" (a gid is from 0 to 4294967295)`);
      let src: number[] | null = null;
      if (spec.src !== undefined) {
        const a = this.address(spec.src);
        if (!a || a.family !== family) bad('BAD_PROBE', `bad source address "${spec.src}"`);
        src = a.addr.slice();
      }
      const mark = (spec.mark ?? 0) >>> 0;
      const key = tr === null && spec.sport === undefined && this.cacheUsable() ? localKey(spec, proto, mark, this.closing) : null;
      const t = key === null ? undefined : this.outcomes!.get(key);
      let route: RouteResult;
      let srcAddr: number[] | readonly number[];
      let to: readonly number[];
      let sport: number;
      let transparent: boolean;
      let sharedOwner: SocketView;
      if (t !== undefined) {
        // The probe's last connection passed every check below: only the source port is new.
        sport = this.ephemeral(proto, family, t.src, t.dst, dst.port);
        if (sport < 0) return this.noPort(family, t.src, dst, label, tr);
        const again = this.replay(t, sport);
        if (again !== null) return again;
        route = t.route!;
        srcAddr = t.src;
        to = t.dst;
        transparent = t.transparent;
        sharedOwner = t.owner!;
      } else {
        // tcp_v6_connect refuses a multicast destination before routing.
        if (family === 6 && proto === PROTO.TCP && dst.addr[0]! >>> 24 === 0xff) {
          return this.refuseConnect(dst, family, label, 'ENETUNREACH', 'a TCP connection cannot go to a multicast address', tr);
        }
        // connect(): ip_route_connect picks the source address from the route.
        route = this.routing.routeOutput(family, dst.addr, mark, src);
        const from = src ?? (route.src ? route.src.slice() : null);
        if (from === null) {
          if (tr !== null) {
            tr.packet = 0;
            tr.label = label;
            tr.push({ packet: tr.packet, label: tr.label, type: 'route', hook: null, dst: addressText(dst.addr, family), result: 'unreachable', dev: null, via: null, src: null, table: null, reason: 'no route' });
          }
          // connect() fails at once with the route's error (fib_props): the caller sees a refusal.
          const errno = route.type === 'prohibit' ? 'EACCES' : route.type === 'blackhole' ? 'EINVAL' : route.table === 0 || route.type !== 'unreachable' ? 'ENETUNREACH' : 'EHOSTUNREACH';
          return this.result('refused', dst.addr, dst.port, family, null, `connect(): ${errno}: no route to ${addressText(dst.addr, family)}`, tr, errno);
        }
        srcAddr = from;
        // tcp_v4_connect: a broadcast or multicast route (RTCF_BROADCAST, RTCF_MULTICAST) refuses a
        // connection; ip4_datagram_connect refuses a broadcast without SO_BROADCAST.
        if (family === 4) {
          const d = dst.addr[0]! >>> 0;
          const broadcast = route.type === 'broadcast' || d === 0xffffffff;
          if (proto === PROTO.TCP && (broadcast || d >>> 28 === 0xe)) {
            return this.refuseConnect(dst, family, label, 'ENETUNREACH', `a TCP connection cannot go to a ${broadcast ? 'broadcast' : 'multicast'} address`, tr);
          }
          if (proto === PROTO.UDP && broadcast) return this.refuseConnect(dst, family, label, 'EACCES', 'a broadcast address without SO_BROADCAST', tr);
        }
        // A local route (a policy `local default dev lo` for the socket's mark) to an address the
        // host does not own gives that address as the source, which output routing then refuses:
        // connect() fails at once (observed: ENETUNREACH).
        if (family === 4 && src === null && route.type === 'local' && !this.routing.isLocalAddress(4, srcAddr)) {
          if (tr !== null) {
            tr.packet = 0;
            tr.label = label;
            tr.push({ packet: 0, label, type: 'route', hook: null, dst: addressText(dst.addr, family), result: 'unreachable', dev: null, via: null, src: addressText(srcAddr, family), table: route.table, reason: 'a local route to an address the host does not own' });
          }
          return this.result('refused', dst.addr, dst.port, family, null, `connect(): ENETUNREACH: the local route to ${addressText(dst.addr, family)} (table ${route.table}) gives a source the host does not own`, tr, 'ENETUNREACH');
        }
        // connect() to 0.0.0.0 or :: reaches the host itself: the route says where (127.0.0.1, ::1).
        to = route.dst ?? dst.addr;
        sport = spec.sport ?? this.ephemeral(proto, family, srcAddr, to, dst.port);
        if (sport < 0) return this.noPort(family, srcAddr, dst, label, tr);
        // bind() to an address the host does not own succeeds only on an IP_TRANSPARENT socket (a
        // transparent proxy keeping its client's address): such a socket is one.
        transparent = src !== null && !this.routing.isLocalAddress(family, src);
        sharedOwner = this.ownerOf({ uid: spec.uid, gid: spec.gid ?? spec.uid, groups: spec.groups ?? [] });
        if (key !== null && this.seenBefore(key)) this.beginCapture(key, family, proto, this.interned(family, srcAddr), sport, this.interned(family, to), dst.port, route, sharedOwner, mark, transparent, null);
      }
      // Every field is given, in one order, so that all sockets share one shape; addresses and
      // owners are shared between sockets, never written to.
      const sock: SocketRecord = {
        family, proto, local: this.interned(family, srcAddr), localPort: sport, remote: this.interned(family, to), remotePort: dst.port,
        owner: sharedOwner, transparent, mark, listener: null, state: SOCKET_FULL,
      };
      this.kernel.sockets.addConnection(sock);
      this.opened.push(sock);
      client = { kind: 'socket', socket: sock };
      const p = this.packet(family, proto, srcAddr, sport, to, dst.port, flags);
      p.route = route;
      p.mark = mark;
      p.socket = sharedOwner;
      p.sender = sock;
      this.startPacket(tr, 0, label, p, 'local', null);
      first = this.kernel.sendLocal(p, tr);
    } else {
      const s = this.address(spec.src);
      if (!s || s.family !== family) bad('BAD_PROBE', `bad source address "${spec.src}"`);
      const devName = spec.iface ?? this.defaultIface(family, s.addr);
      const dev = this.routing.byName.get(devName);
      if (!dev) bad('BAD_PROBE', `no interface "${devName}"`);
      const key = tr === null && spec.sport === undefined && this.cacheUsable() ? remoteKey(spec, proto, devName, this.closing) : null;
      const t = key === null ? undefined : this.outcomes!.get(key);
      const sport = spec.sport ?? this.nextRemote(proto, family, s.addr, dst.addr, dst.port);
      if (sport < 0) return this.noPort(family, s.addr, dst, label, tr);
      if (t !== undefined) {
        const again = this.replay(t, sport);
        if (again !== null) return again;
      } else if (key !== null && this.seenBefore(key)) this.beginCapture(key, family, proto, this.interned(family, s.addr), sport, this.interned(family, dst.addr), dst.port, null, null, 0, false, dev.name);
      client = { kind: 'remote', dev: dev.name, family, addr: s.addr, port: sport, dstAddr: dst.addr, dstPort: dst.port };
      const p = this.packet(family, proto, s.addr, sport, dst.addr, dst.port, flags);
      this.startPacket(tr, 0, label, p, 'remote', dev.name);
      first = this.kernel.receive(p, dev, false, tr);
    }
    if (proto === PROTO.UDP) {
      // A connected UDP socket stays open whatever came of the datagram, until closed.
      this.handshakeDone = !this.closing;
      return this.finishUdp(client, first, tr);
    }
    return this.finishTcp(client, first, tr);
  }

  private finishUdp(client: ClientEnd, first: PathResult, tr: TraceRecorder | null): ConnectResult {
    const p = first.p;
    switch (first.kind) {
      case 'local':
        return this.result('local', p.dst, p.dport, p.family, origDst(p), `delivered to ${describe(first.socket)}`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
      case 'refused':
        return this.answer(client, p, 'icmp-port-unreachable', `no socket at ${formatEndpoint(p.dst, p.dport, p.family)}: ICMP port unreachable`, tr);
      case 'dropped':
        if (first.reject) return this.answer(client, p, first.reject, `rejected (${first.reject})`, tr);
        return this.result('dropped', p.dst, p.dport, p.family, null, first.reason, tr);
      case 'wire':
        if (this.martianOnWire(p)) return this.result('dropped', p.dst, p.dport, p.family, null, 'the receiver drops a loopback source (martian)', tr);
        if (!this.peerAccepts(p.dst, p.family, p.dport)) return this.result('refused', p.dst, p.dport, p.family, null, `${formatEndpoint(p.dst, p.dport, p.family)} has no listener: ICMP port unreachable`, tr);
        return this.result('remote', p.dst, p.dport, p.family, null, `left through ${first.dev.name}`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
    }
  }

  /**
   * The answer to a rejected or undeliverable packet: a TCP RST (`nf_send_reset`) or an ICMP
   * error (`icmp_send`), attached to the packet's connection as RELATED in the reply direction
   * (`nf_ct_attach`), sent through OUTPUT and POSTROUTING like any local packet, to the packet's
   * sender. No answer is made to a RST with a RST, nor to an ICMP error with an ICMP error; an
   * answer to an answer is not answered again. Returns where the answer ended, or null when none
   * was sent.
   */
  private sendAnswer(orig: PacketState, kind: string, index: number, tr: TraceRecorder | null): PathResult | null {
    const family = orig.family;
    let a: PacketState;
    let label: string;
    if (kind === 'tcp-reset' && orig.proto === PROTO.TCP) {
      // nf_send_reset: never a RST for a RST.
      if (orig.tcpFlags & TCP_FLAGS.RST) return null;
      a = this.packet(family, PROTO.TCP, orig.dst, orig.dport, orig.src, orig.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
      // nf_send_reset/nf_send_reset6 build the RST in a fresh, unowned skb.
      a.socket = null;
      label = 'RST';
    } else {
      // icmp_send / icmpv6_send: never an ICMP error about an ICMP error.
      if (isIcmpError(orig)) return null;
      // icmp_send: the error comes from the destination when it is ours, else from the address
      // routing picks towards the sender.
      const from = this.routing.isLocalAddress(family, orig.dst) ? orig.dst : (this.routing.routeOutput(family, orig.src, 0, null).src ?? orig.dst);
      a = this.packet(family, family === 4 ? PROTO.ICMP : PROTO.ICMPV6, from, 0, orig.src, 0, 0);
      const [type, code] = icmpError(family, kind);
      a.icmpType = type;
      a.icmpCode = code;
      // icmp_send / icmpv6_send: the per-namespace ICMP socket owns the error (no file).
      a.socket = KERNEL_SOCKET;
      label = 'ICMP';
    }
    if (orig.ctEntry >= 0) a.setConntrack(orig.ctTable!, orig.ctEntry, 1 - orig.ctDir, CT_STATE.RELATED);
    // nf_conntrack_attach of an untracked packet: RELATED, no entry (an INVALID one has no
    // skb->_nfct, and nothing is attached).
    else if (orig.untracked || orig.ctState === CT_STATE.UNTRACKED) a.ctAttachedNone = true;
    this.startPacket(tr, index, label, a, 'local', null);
    return this.kernel.sendLocal(a, tr);
  }

  /**
   * The answer to a packet the client sent (its SYN, its datagram, its ACK) that was rejected or
   * found no socket. The attempt is `refused` when the RST or ICMP error reaches the client,
   * `dropped` when a rule or the route loses it.
   */
  private answer(client: ClientEnd, orig: PacketState, kind: string, why: string, tr: TraceRecorder | null, index = 1): ConnectResult {
    const family = orig.family;
    const r = this.sendAnswer(orig, kind, index, tr);
    if (r === null) return this.result('dropped', orig.dst, orig.dport, family, null, `${why}; no answer is sent to it`, tr);
    const p = r.p;
    const rst = p.proto === PROTO.TCP;
    let reached: boolean;
    if (client.kind === 'socket') {
      const c = client.socket;
      reached = (r.kind === 'local' || r.kind === 'refused') && sameAddr(p.dst, c.local!) && (!rst || p.dport === c.localPort);
    } else {
      reached = r.kind === 'wire' && sameAddr(p.dst, client.addr) && (!rst || p.dport === client.port);
    }
    if (reached) return this.result('refused', orig.dst, orig.dport, family, null, why, tr);
    const what = `the ${rst ? 'RST' : 'ICMP error'} answering it`;
    if (r.kind === 'dropped') {
      // A rejected answer is answered (if at all) towards its own sender, the namespace.
      if (r.reject) this.sendAnswer(p, r.reject, index + 1, tr);
      return this.result('dropped', p.dst, p.dport, p.family, null, `${why}; ${what}: ${r.reason}${r.reject ? ', which answers the namespace, not the client' : ''}`, tr);
    }
    return this.result('dropped', p.dst, p.dport, p.family, null, `${why}; ${what} did not reach the client`, tr);
  }

  /** Sends a packet from one end of the exchange. */
  private sendFrom(end: ClientEnd | ServerEnd, p: PacketState, owner: SocketView | null, sender: SocketRecord | null, index: number, label: string, tr: TraceRecorder | null): PathResult {
    if (end.kind === 'socket') {
      p.socket = owner;
      p.sender = sender;
      // skb->mark = sk->sk_mark on every packet the socket sends (its ACKs, its FIN).
      if (sender !== null && sender.mark !== 0) p.mark = sender.mark;
      p.checkSource = sender !== null && !sender.transparent;
      this.startPacket(tr, index, label, p, 'local', null);
      return this.kernel.sendLocal(p, tr);
    }
    const dev = this.routing.byName.get(end.dev)!;
    this.startPacket(tr, index, label, p, 'remote', dev.name);
    return this.kernel.receive(p, dev, false, tr);
  }

  /** Whether a packet's journey ended at the given end of the exchange. */
  private arrived(r: PathResult, end: ClientEnd | ServerEnd): boolean {
    if (end.kind === 'socket') return r.kind === 'local' && r.socket === end.socket;
    if (r.kind !== 'wire') return false;
    const p = r.p;
    if (end.kind === 'remote') {
      return sameAddr(p.dst, end.addr) && p.dport === end.port && sameAddr(p.src, end.dstAddr) && p.sport === end.dstPort;
    }
    return sameAddr(p.dst, end.addr) && p.dport === end.port;
  }

  /**
   * A packet of the exchange other than the client's first did not reach the other end. When a
   * REJECT stopped it, its answer goes back to the packet's sender: the client hears of it only
   * when the packet was its own (the ACK); a rejected SYN-ACK or RST is answered towards the
   * server, and the client waits in vain (`dropped`).
   */
  private failure(r: PathResult, tr: TraceRecorder | null, what: string, client: ClientEnd, fromClient: boolean, index: number): ConnectResult {
    const p = r.p;
    if (r.kind === 'dropped' && r.reject) {
      if (fromClient) return this.answer(client, p, r.reject, `${what}: ${r.reason}`, tr, index + 1);
      this.sendAnswer(p, r.reject, index + 1, tr);
      return this.result('dropped', p.dst, p.dport, p.family, null, `${what}: ${r.reason}; the answer goes to its sender, not to the client, which hears nothing`, tr);
    }
    if (r.kind === 'dropped') return this.result('dropped', p.dst, p.dport, p.family, null, `${what}: ${r.reason}`, tr);
    return this.result('dropped', p.dst, p.dport, p.family, null, `${what} did not reach the other end`, tr);
  }

  private finishTcp(client: ClientEnd, first: PathResult, tr: TraceRecorder | null): ConnectResult {
    const syn = first.p;
    const family = syn.family;
    let server: ServerEnd;
    switch (first.kind) {
      case 'dropped':
        if (first.reject) return this.answer(client, syn, first.reject, `rejected (${first.reject})`, tr);
        return this.result('dropped', syn.dst, syn.dport, family, null, first.reason, tr);
      case 'refused': {
        // tcp_v4_send_reset: the RST leaves from the kernel's control socket, which owns it (a
        // socket without a file); tcp_v6_send_response leaves it unowned.
        const rst = this.packet(family, PROTO.TCP, syn.dst, syn.dport, syn.src, syn.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
        rst.socket = family === 4 ? KERNEL_SOCKET : null;
        rst.checkSource = true;
        this.startPacket(tr, 1, 'RST', rst, 'local', null);
        const r = this.kernel.sendLocal(rst, tr);
        if (this.arrived(r, client)) return this.result('refused', syn.dst, syn.dport, family, null, `no listener at ${formatEndpoint(syn.dst, syn.dport, family)}: connection reset`, tr);
        return this.failure(r, tr, 'the RST', client, false, 1);
      }
      case 'local': {
        const l = first.socket;
        if (l.remote !== null) return this.result('dropped', syn.dst, syn.dport, family, null, 'the SYN reached an established connection', tr);
        const req: SocketRecord = {
          family, proto: PROTO.TCP, local: this.interned(family, syn.dst), localPort: syn.dport, remote: this.interned(family, syn.src), remotePort: syn.sport,
          owner: l.owner, transparent: l.transparent, mark: 0, listener: l, state: SOCKET_HALF_OPEN,
        };
        this.kernel.sockets.addConnection(req);
        this.opened.push(req);
        server = { kind: 'socket', socket: req };
        break;
      }
      case 'wire': {
        if (this.martianOnWire(syn)) return this.result('dropped', syn.dst, syn.dport, family, null, 'the receiver drops a loopback source (martian)', tr);
        server = { kind: 'peer', dev: first.dev.name, family, addr: syn.dst.slice(), port: syn.dport, clientAddr: syn.src.slice(), clientPort: syn.sport };
        if (!this.peerAccepts(syn.dst, family, syn.dport)) {
          const rst = this.packet(family, PROTO.TCP, syn.dst, syn.dport, syn.src, syn.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
          const r = this.sendFrom(server, rst, null, null, 1, 'RST', tr);
          if (this.arrived(r, client)) return this.result('refused', syn.dst, syn.dport, family, null, `${formatEndpoint(syn.dst, syn.dport, family)} refused the connection`, tr);
          return this.failure(r, tr, 'the RST', client, false, 1);
        }
        break;
      }
    }
    // SYN-ACK from the server end to what it saw as the client.
    let synack: PacketState;
    if (server.kind === 'socket') {
      const s = server.socket;
      synack = this.packet(family, PROTO.TCP, s.local!, s.localPort, s.remote!, s.remotePort, TCP_FLAGS.SYN | TCP_FLAGS.ACK);
      // The SYN-ACK belongs to the request socket; owner matches see its listener (skb_to_full_sk).
      const r2 = this.sendFrom(server, synack, s.owner, s, 1, 'SYN-ACK', tr);
      if (!this.arrived(r2, client)) return this.failure(r2, tr, 'the SYN-ACK', client, false, 1);
    } else {
      synack = this.packet(family, PROTO.TCP, server.addr, server.port, server.clientAddr, server.clientPort, TCP_FLAGS.SYN | TCP_FLAGS.ACK);
      const r2 = this.sendFrom(server, synack, null, null, 1, 'SYN-ACK', tr);
      if (!this.arrived(r2, client)) return this.failure(r2, tr, 'the SYN-ACK', client, false, 1);
    }
    // ACK from the client.
    let ack: PacketState;
    if (client.kind === 'socket') {
      const c = client.socket;
      ack = this.packet(family, PROTO.TCP, c.local!, c.localPort, c.remote!, c.remotePort, TCP_FLAGS.ACK);
      const r3 = this.sendFrom(client, ack, c.owner, c, 2, 'ACK', tr);
      if (!this.arrived(r3, server)) return this.misdirected(r3, client, tr) ?? this.failure(r3, tr, 'the ACK', client, true, 2);
    } else {
      ack = this.packet(family, PROTO.TCP, client.addr, client.port, client.dstAddr, client.dstPort, TCP_FLAGS.ACK);
      const r3 = this.sendFrom(client, ack, null, null, 2, 'ACK', tr);
      if (!this.arrived(r3, server)) return this.misdirected(r3, client, tr) ?? this.failure(r3, tr, 'the ACK', client, true, 2);
    }
    this.handshakeDone = true;
    if (server.kind === 'socket') server.socket.state = SOCKET_FULL;
    const closed = this.closing ? this.close(client, server, family, tr) : '';
    if (server.kind === 'socket') {
      const s = server.socket;
      return this.result('local', s.local, s.localPort, family, this.originalDst(s), `accepted by ${describe(s.listener ?? s)}${closed}`, tr, undefined, formatEndpoint(s.remote!, s.remotePort, family));
    }
    return this.result('remote', server.addr, server.port, family, null, `connected through ${server.dev}${closed}`, tr, undefined, formatEndpoint(server.clientAddr, server.clientPort, family));
  }

  /**
   * The client's ACK reached a TCP other than the one that answered its SYN (a NAT rule applied
   * to the ACK alone, when conntrack never saw the SYN): a listener or a closed port there has no
   * such connection and answers with a RST (`tcp_v4_send_reset`: the ACK's acknowledgment number
   * as its sequence, no ACK flag), which resets the client's connection when it reaches it.
   * Returns null when the ACK met no TCP (dropped, or lost on the way).
   */
  private misdirected(r: PathResult, client: ClientEnd, tr: TraceRecorder | null): ConnectResult | null {
    const p = r.p;
    const family = p.family;
    const rst = this.packet(family, PROTO.TCP, p.dst, p.dport, p.src, p.sport, TCP_FLAGS.RST);
    let back: PathResult;
    let where: string;
    if (r.kind === 'local' || r.kind === 'refused') {
      if (r.kind === 'local' && r.socket.remote !== null) return null;
      const l = r.kind === 'local' ? r.socket : this.kernel.sockets.listener(family, PROTO.TCP, p.dst, p.dport);
      where = l !== null ? `${describe(l)}, which has no such connection` : `${formatEndpoint(p.dst, p.dport, family)}, where no socket listens`;
      // The reset leaves from the kernel's control socket (IPv4) or unowned (IPv6), as for a SYN.
      rst.socket = family === 4 ? KERNEL_SOCKET : null;
      rst.checkSource = true;
      this.startPacket(tr, 3, 'RST', rst, 'local', null);
      back = this.kernel.sendLocal(rst, tr);
    } else if (r.kind === 'wire' && !this.martianOnWire(p)) {
      where = `${formatEndpoint(p.dst, p.dport, family)}, which has no such connection`;
      const peer: ServerEnd = { kind: 'peer', dev: r.dev.name, family, addr: p.dst.slice(), port: p.dport, clientAddr: p.src.slice(), clientPort: p.sport };
      back = this.sendFrom(peer, rst, null, null, 3, 'RST', tr);
    } else return null;
    const why = `the ACK reached ${where}`;
    if (this.arrived(back, client)) return this.result('refused', p.dst, p.dport, family, null, `${why}: connection reset`, tr);
    return this.failure(back, tr, `${why}; its RST`, client, false, 3);
  }

  /**
   * An active close by the client (`close()` on an established connection): its FIN-ACK, the
   * server's FIN-ACK (an immediate close on its side) and the client's last ACK, each through
   * the hooks. Then the server's socket is gone (LAST_ACK → CLOSED) and the client's stays in
   * TIME_WAIT for 60 s; conntrack has moved the entry to TIME_WAIT (120 s) on the way. When a
   * packet of the close is lost the sockets are gone all the same (the kernel gives up on an
   * orphaned socket) and the reason says so. Returns the text added to the reason.
   */
  private close(client: ClientEnd, server: ServerEnd, family: Family, tr: TraceRecorder | null): string {
    const FIN_ACK = TCP_FLAGS.FIN | TCP_FLAGS.ACK;
    const steps: [ClientEnd | ServerEnd, ClientEnd | ServerEnd, number, string][] = [
      [client, server, FIN_ACK, 'FIN'],
      [server, client, FIN_ACK, 'FIN'],
      [client, server, TCP_FLAGS.ACK, 'ACK'],
    ];
    let lost: string | null = null;
    for (let i = 0; i < steps.length; i++) {
      const [from, to, flags, label] = steps[i]!;
      const p = this.endPacket(from, family, flags);
      const owner = from.kind === 'socket' ? from.socket.owner : null;
      const r = this.sendFrom(from, p, owner, from.kind === 'socket' ? from.socket : null, 3 + i, label, tr);
      if (!this.arrived(r, to)) {
        lost = r.kind === 'dropped' ? `the ${i === 1 ? "server's" : "client's"} ${label}: ${r.reason}` : `the ${i === 1 ? "server's" : "client's"} ${label} did not reach the other end`;
        break;
      }
    }
    const sockets = this.kernel.sockets;
    if (server.kind === 'socket') sockets.removeConnection(server.socket);
    if (client.kind === 'socket') {
      const c = client.socket;
      if (lost !== null) sockets.removeConnection(c);
      else {
        c.state = this.clock + TCP_TIMEWAIT_LEN;
        this.timeWait.push(c);
      }
    }
    return lost === null ? '; closed (client in TIME_WAIT)' : `; the close did not complete: ${lost}`;
  }

  /** IPv4 addresses and owners shared by the sockets that have them (read-only everywhere). */
  private readonly addrIntern = new Map<number, readonly number[]>();
  private readonly ownerIntern = new Map<number, Map<number, SocketView>>();

  /** One shared array per IPv4 address (IPv6 addresses are copied). */
  private interned(family: Family, addr: readonly number[]): readonly number[] {
    if (family !== 4) return addr.slice();
    const w = addr[0]!;
    let a = this.addrIntern.get(w);
    if (a === undefined) {
      if (this.addrIntern.size >= 65536) this.addrIntern.clear();
      a = [w];
      this.addrIntern.set(w, a);
    }
    return a;
  }

  /** One shared owner per uid and gid without supplementary groups. */
  private ownerOf(o: SocketView): SocketView {
    if (o.groups.length !== 0) return o;
    let byGid = this.ownerIntern.get(o.uid);
    if (byGid === undefined) {
      if (this.ownerIntern.size >= 4096) this.ownerIntern.clear();
      byGid = new Map();
      this.ownerIntern.set(o.uid, byGid);
    }
    let v = byGid.get(o.gid);
    if (v === undefined) {
      v = o;
      byGid.set(o.gid, v);
    }
    return v;
  }

  /**
   * `nf_sk_lookup_slow_v4`/`_v6` for an arriving packet: the socket TPROXY assigned it, else the
   * connection with its 4-tuple (any state: a request, TIME_WAIT), else the listener of its
   * destination. An IPv4 answer of a source-NATed connection is looked up by the original
   * source it is coming back to. ICMP errors carry the packet they answer, which the engine does
   * not keep: for them no socket is found (documented).
   */
  private socketOf(p: PacketState): PacketSocket | null {
    // A locally generated packet still carries its socket (skb->sk) in OUTPUT and POSTROUTING.
    let s: SocketRecord | null = p.assignedSocket ?? (p.inIface === null ? p.sender : null);
    if (s === null) {
      if (p.proto !== PROTO.TCP && p.proto !== PROTO.UDP) return null;
      let daddr: readonly number[] = p.dst;
      let dport = p.dport;
      const e = p.ctEntry;
      const t = p.ctTable;
      if (p.family === 4 && e >= 0 && t !== null && p.ctDir === IP_CT_DIR_REPLY && p.ctState === CT_STATE.ESTABLISHED && t.natDone[e]! & NF_NAT_MANIP_SRC) {
        daddr = t.readAddr(e, IP_CT_DIR_ORIGINAL, T_SRC, []);
        dport = t.port(e, IP_CT_DIR_ORIGINAL, T_SPORT);
      }
      const sockets = this.kernel.sockets;
      s = sockets.find(p.family, p.proto, daddr, dport, p.src, p.sport) ?? sockets.listener(p.family, p.proto, daddr, dport);
      if (s === null) return null;
    }
    return { wildcard: s.local === null, transparent: s.transparent, full: s.state === SOCKET_FULL, mark: s.mark };
  }

  /**
   * `SO_ORIGINAL_DST` on an accepted socket (`getorigdst`): the connection conntrack holds for the
   * socket's own addresses, in the default zone and either direction, gives its original
   * destination. Whatever packets of the exchange went untracked or into another zone, the
   * lookup finds the entry that a later packet made.
   */
  private originalDst(s: SocketRecord): string | null {
    const t = this.kernel.conntrack;
    const ref = t.lookup(0, s.proto, s.local!, s.localPort, s.remote!, s.remotePort);
    if (ref < 0) return null;
    const e = ref >> 1;
    return formatEndpoint(t.readAddr(e, IP_CT_DIR_ORIGINAL, T_DST, this.scratchAddr), t.port(e, IP_CT_DIR_ORIGINAL, T_DPORT), s.family);
  }

  /** Words of an address read and printed at once (see {@link originalDst}). */
  private readonly scratchAddr: number[] = [];

  /** A packet from one end of an established exchange to the other. */
  private endPacket(end: ClientEnd | ServerEnd, family: Family, flags: number): PacketState {
    if (end.kind === 'socket') {
      const s = end.socket;
      return this.packet(family, PROTO.TCP, s.local!, s.localPort, s.remote!, s.remotePort, flags);
    }
    if (end.kind === 'remote') return this.packet(family, PROTO.TCP, end.addr, end.port, end.dstAddr, end.dstPort, flags);
    return this.packet(family, PROTO.TCP, end.addr, end.port, end.clientAddr, end.clientPort, flags);
  }
}

/** Packet records a namespace keeps for reuse (a connection with its close sends six packets; answers add a few). */
const MAX_PACKET_RECORDS = 16;

/** Recordings after which the outcome cache judges whether it pays (see `Netns.cacheUsable`). */
const CACHE_JUDGE_AFTER = 4096;
/** Probes seen once that the outcome cache remembers (a probe seen again is recorded). */
const MAX_SEEN_PROBES = 4096;
/** Calls the outcome cache sits out when it does not pay. */
const CACHE_REST = 16 * 1024;

/** The connection being recorded for the outcome cache (see {@link Netns.connect}). */
interface Capture extends ProbeFields {
  readonly key: string;
  readonly sport: number;
  readonly log: CounterLog;
  /** The conntrack table's next id, entries, the sockets and the TIME_WAIT list before. */
  readonly ids: number;
  readonly entries: number;
  readonly sockets: number;
  readonly timeWait: number;
}

/** The outcome cache's key of a local probe (every field its packets depend on), or null for none. */
function localKey(spec: LocalConnectSpec, proto: number, mark: number, closing: boolean): string | null {
  const groups = spec.groups;
  if (groups !== undefined && !(Array.isArray(groups) && groups.every((g) => Number.isInteger(g)))) return null;
  // Optional fields only when given, each after '|' and a letter of its own; no value holds '|'.
  let key = `${closing ? 'L' : 'l'}${proto}|${spec.dst}|${spec.uid}`;
  if (spec.gid !== undefined) key += `|g${spec.gid}`;
  if (groups !== undefined) key += `|G${groups.join(',')}`;
  if (spec.src !== undefined) key += `|s${spec.src}`;
  if (mark !== 0) key += `|m${mark}`;
  return key;
}

/** The outcome cache's key of a remote probe. */
function remoteKey(spec: RemoteConnectSpec, proto: number, dev: string, closing: boolean): string {
  return `${closing ? 'R' : 'r'}${proto}|${spec.dst}|${spec.src}|${dev}`;
}

function describe(s: SocketRecord): string {
  const a = s.local === null ? (s.family === 4 ? '0.0.0.0' : '::') : addressText(s.local, s.family);
  return `${s.remote === null ? 'the listener' : 'the socket'} ${s.family === 6 ? `[${a}]` : a}:${s.localPort}${s.transparent ? ' (IP_TRANSPARENT)' : ''}`;
}

/** `SO_ORIGINAL_DST` for the socket that received `p` (a datagram): its connection's original destination (default zone only). */
function origDst(p: PacketState): string | null {
  const e = p.ctEntry;
  const t = p.ctTable;
  if (e < 0 || t === null || t.zone[e] !== 0 || p.ctState === CT_STATE.UNTRACKED) return null;
  const family = t.family[e] as Family;
  return formatEndpoint(t.readAddr(e, IP_CT_DIR_ORIGINAL, T_DST, []), t.port(e, IP_CT_DIR_ORIGINAL, T_DPORT), family);
}

/** `ipv6_addr_v4mapped`: ::ffff:0:0/96. */
function isV4Mapped(a: readonly number[]): boolean {
  return a[0] === 0 && a[1] === 0 && a[2] === 0xffff;
}

/** Whether `p` is an ICMP error (`icmp_pointers[type].error`, or a type past 18; ICMPv6 types below 128). */
function isIcmpError(p: PacketState): boolean {
  if (p.proto === PROTO.ICMP) return p.icmpType === 3 || p.icmpType === 4 || p.icmpType === 5 || p.icmpType === 11 || p.icmpType === 12 || p.icmpType > 18;
  if (p.proto === PROTO.ICMPV6) return p.icmpType >= 0 && p.icmpType < 128;
  return false;
}

/** ICMP type and code of a REJECT answer (`--reject-with`). */
function icmpError(family: Family, kind: string): [number, number] {
  if (family === 4) {
    const codes: Record<string, number> = {
      'icmp-net-unreachable': 0, 'icmp-host-unreachable': 1, 'icmp-proto-unreachable': 2, 'icmp-port-unreachable': 3,
      'icmp-net-prohibited': 9, 'icmp-host-prohibited': 10, 'icmp-admin-prohibited': 13,
    };
    return [3, codes[kind] ?? 3];
  }
  const codes: Record<string, number> = {
    'icmp6-no-route': 0, 'icmp6-adm-prohibited': 1, 'icmp6-addr-unreachable': 3, 'icmp6-port-unreachable': 4,
    'icmp6-policy-fail': 5, 'icmp6-reject-route': 6,
  };
  return [1, codes[kind] ?? 4];
}

function protoName(n: number): string {
  return n === PROTO.TCP ? 'tcp' : n === PROTO.UDP ? 'udp' : n === PROTO.ICMP ? 'icmp' : n === PROTO.ICMPV6 ? 'ipv6-icmp' : String(n);
}

/** `SYN,ACK` style flag names. */
export function flagNames(f: number): string {
  let names = FLAG_NAMES[f];
  if (names === undefined) {
    const out: string[] = [];
    for (const [name, bit] of Object.entries(TCP_FLAGS)) if (f & bit) out.push(name);
    names = out.join(',');
    if (f >= 0 && f < 256) FLAG_NAMES[f] = names;
  }
  return names;
}

/** {@link flagNames} of each flags byte, as computed. */
const FLAG_NAMES: string[] = [];

/** The kernel TRACE lines of an event list, as `connect --json` prints them. */
export function stepsOf(events: readonly TraceEvent[]): ConnectStep[] {
  const steps: ConnectStep[] = [];
  for (const e of events) {
    if (e.type === 'rule') steps.push({ hook: e.hook, table: e.table, chain: e.chain, rule: e.rule, event: 'rule', target: e.target, text: e.text, packet: e.label });
    else if (e.type === 'return') steps.push({ hook: e.hook, table: e.table, chain: e.chain, rule: e.rule, event: 'return', target: 'RETURN', text: null, packet: e.label });
    else if (e.type === 'policy') steps.push({ hook: e.hook, table: e.table, chain: e.chain, rule: e.rule, event: 'policy', target: e.policy, text: null, packet: e.label });
  }
  return steps;
}

function parseListener(l: number | string | ListenerSpec): SocketRecord[] {
  const spec: ListenerSpec = typeof l === 'number' ? { port: l } : typeof l === 'string' ? listenerFromString(l) : l;
  if (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535) bad('BAD_CONFIG', `bad listening port "${String(spec.port)}"`);
  const owner: SocketView = { uid: spec.uid ?? 0, gid: spec.gid ?? spec.uid ?? 0, groups: [] };
  const protos = spec.proto === undefined ? [PROTO.TCP, PROTO.UDP] : [spec.proto === 'udp' ? PROTO.UDP : PROTO.TCP];
  const out: SocketRecord[] = [];
  let binds: { family: Family; addr: number[] | null }[];
  if (spec.address === undefined || spec.address === '*') binds = [{ family: 4, addr: null }, { family: 6, addr: null }];
  else {
    const a = parseAnyAddress(spec.address);
    if (!a) bad('BAD_CONFIG', `bad listening address "${spec.address}"`);
    const wildcard = a.addr.every((w) => w === 0);
    binds = [{ family: a.family, addr: wildcard ? null : a.addr }];
  }
  for (const b of binds) {
    for (const proto of protos) {
      out.push({ family: b.family, proto, local: b.addr, localPort: spec.port, remote: null, remotePort: 0, owner, transparent: spec.transparent ?? false, mark: 0, listener: null, state: SOCKET_FULL });
    }
  }
  return out;
}

/** A listener string (`4140`, `127.0.0.1:15001`, `[::1]:53/udp`) as a {@link ListenerSpec}. @internal */
export function listenerFromString(text: string): ListenerSpec {
  let t = text.trim();
  let proto: 'tcp' | 'udp' | undefined;
  const m = /\/(tcp|udp)$/i.exec(t);
  if (m) {
    proto = m[1]!.toLowerCase() as 'tcp' | 'udp';
    t = t.slice(0, m.index);
  }
  if (/^\d+$/.test(t)) return proto ? { port: Number(t), proto } : { port: Number(t) };
  const e = parseEndpoint(t, true);
  const address = addressText(e.addr, e.family);
  return proto ? { address, port: e.port, proto } : { address, port: e.port };
}
