/**
 * `Netns`: a modelled network namespace (a pod by default) that evaluates connections and packets
 * with the kernel's semantics and reports what `netfilter-sim connect --json` prints.
 *
 * @module
 */
import type { Family, Ruleset } from '../../model/types.js';
import type { Diagnostic } from '../../model/errors.js';
import { detectRulesSyntax } from '../../nftables/detect.js';
import type { NftRuleset } from '../../nftables/model.js';
import { NftEngine } from '../rules/nft-interpret.js';
import { LoweredNftEngine } from '../rules/nft-lower.js';
import { ConntrackTable } from '../state/conntrack.js';
import { addressText } from '../../model/address.js';
import type { ConntrackSnapshot } from '../state/conntrack.js';
import { LoweredEvaluator } from '../rules/iptables-evaluate.js';
import type { RuleCounter, TableEvaluator } from '../rules/iptables-evaluate.js';
import { ReferenceInterpreter } from '../rules/iptables-interpret.js';
import { Kernel, SocketTable } from './kernel.js';
import { lowerRuleset } from '../rules/iptables-lower.js';
import { checkIpsetReferences, ipsetTable } from '../state/ipset.js';
import { rateEstimatorTable } from '../state/rate-estimators.js';
import { parseIpsetSave } from '../../iptables/syntax/ipset.js';
import { parsePacketSpec } from './probe.js';
import type { PacketSpec } from './probe.js';
import { defaultRegistry } from '../rules/registry.js';
import { Routing, parseAnyAddress } from '../state/routing.js';
import type { InterfaceSpec, RoutingConfig } from '../state/routing.js';
import { TraceRecorder } from '../trace/events.js';
import type { TraceSink } from '../trace/events.js';
import { MAX_CONNTRACK_MAX, pushAll } from '../../model/limits.js';
import { outcomeCacheRefusal } from './outcome-cache.js';
import { expectArgument, expectFields, expectOneOf } from '../../model/guard.js';
import { expectCallOptions, expectConnectSpec, expectNetnsOptions } from './shapes.js';
import type { CallOptions, ConnectResult, ConnectSpec, NetnsOptions } from './api.js';
import { ConnectionDriver } from './driver.js';
import { OutcomeCache } from './capture.js';
import { LOCAL_PORT_RANGE, SourcePorts } from './ports.js';
import { DEFAULT_INTERFACES, gatewayFor, loadNft, loadRules, needsConntrack } from './setup.js';
import { bad } from './helpers.js';
import { NetnsExchange } from './exchange.js';
import { isKeptNft, keptRules, listenersOf, loweredProgram, readNft, readRules, routingFor } from './shared.js';
import type { SharedRules } from './shared.js';

export type { CallOptions, ConnectResult, ConnectSpec, ConnectStep, ListenerSpec, LocalConnectSpec, NetnsOptions, RemoteConnectSpec } from './api.js';
export { flagNames, stepsOf } from './helpers.js';
export { listenerFromString, needsConntrack } from './setup.js';

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
  /** The connection driver: the namespace's packet path, its state and the calls' packets. */
  private readonly driver: ConnectionDriver;
  /**
   * Why this namespace does not keep connection outcomes (a rule that reads a source port, a
   * timer or state beyond the connection's own packets and entry, native nft rules, the reference
   * evaluator, or `outcomeCache: false`), or null when it does.
   */
  readonly outcomeCacheOff: string | null;

  /** Whether packet records are reused; off, every packet is a new one. @internal */
  get reusePackets(): boolean {
    return this.driver.reusePackets;
  }

  set reusePackets(on: boolean) {
    this.driver.reusePackets = on;
  }

  /** The namespace's packet path (the driver's, which `connectAll` swaps for each branch). */
  private get kernel(): Kernel {
    return this.driver.kernel;
  }

  /** Connections the outcome cache has replayed so far (tests check that it serves). @internal */
  get outcomeReplays(): number {
    const cache = this.driver.cache;
    return cache === null ? 0 : cache.replays;
  }

  constructor(options: NetnsOptions = {}) {
    expectNetnsOptions(options);
    const registry = options.registry ?? defaultRegistry();
    const nftInputs: (string | NftRuleset)[] = options.nft === undefined ? [] : Array.isArray(options.nft) ? [...(options.nft as readonly (string | NftRuleset)[])] : [options.nft as string | NftRuleset];
    let rules4 = options.rules;
    let rules6 = options.rules6;
    const lenient = options.lenient ?? false;
    // A text a namespace has read before is iptables text; only a new one is looked at.
    if (typeof rules4 === 'string' && keptRules(rules4, 4, registry, options.check, lenient) === undefined && (isKeptNft(rules4) || detectRulesSyntax(rules4) === 'nft')) {
      nftInputs.unshift(rules4);
      rules4 = undefined;
    }
    if (typeof rules6 === 'string' && keptRules(rules6, 6, registry, options.check, lenient) === undefined && (isKeptNft(rules6) || detectRulesSyntax(rules6) === 'nft')) {
      nftInputs.push(rules6);
      rules6 = undefined;
    }
    const read4 = typeof rules4 === 'string' ? readRules(rules4, 4, registry, options.check, lenient) : null;
    const read6 = typeof rules6 === 'string' ? readRules(rules6, 6, registry, options.check, lenient) : null;
    const warnings: Diagnostic[] = [];
    this.ruleset4 = read4 !== null ? read4.ruleset : loadRules(rules4, 4, registry, options.check, lenient, warnings);
    if (read4 !== null) pushAll(warnings, read4.warnings);
    this.ruleset6 = read6 !== null ? read6.ruleset : loadRules(rules6, 6, registry, options.check, lenient, warnings);
    if (read6 !== null) pushAll(warnings, read6.warnings);
    this.warnings = warnings;
    const ifaces: InterfaceSpec[] = options.interfaces === undefined
      ? [...DEFAULT_INTERFACES]
      : Array.isArray(options.interfaces)
        ? [...(options.interfaces as readonly InterfaceSpec[])]
        : Object.entries(options.interfaces as Record<string, readonly string[]>).map(([name, addresses]) => ({ name, addresses }));
    // nft resolves interface names (iif, oif, devices) against the namespace's interfaces.
    // One nft text (the usual case) is loaded once for every namespace given it with these interfaces.
    const nftInterfaces = ifaces.map((i) => i.name).filter((n) => n !== 'lo');
    this.nftRuleset = nftInputs.length === 1 && typeof nftInputs[0] === 'string' ? readNft(nftInputs[0], nftInterfaces) : loadNft(nftInputs, nftInterfaces);
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
    const config: RoutingConfig = {
      interfaces: ifaces,
      gateways,
      routes: options.routes ?? [],
      rules: options.ipRules ?? [],
      routeLocalnet: options.routeLocalnet ?? false,
    };
    const routing = options.observe === undefined ? routingFor(config) : new Routing(config);
    const peers = new Map<string, readonly number[]>();
    for (const [addr, ports] of Object.entries(options.peers ?? {})) {
      const a = parseAnyAddress(addr);
      if (!a) bad('BAD_CONFIG', `bad peer address "${addr}"`);
      peers.set(addressText(a.addr, a.family), ports);
    }
    const sockets = new SocketTable();
    if (options.observe !== undefined) {
      routing.observer = options.observe;
      sockets.observer = options.observe;
    }
    if (options.listen !== undefined && options.listen.length > 0) sockets.listeners = listenersOf(options.listen);
    const names = routing.ifaces.map((i) => i.name);
    const ipsets = ipsetTable(typeof options.ipsets === 'string' ? parseIpsetSave(options.ipsets) : (options.ipsets ?? []));
    if (read4 === null || read4.namesSets) checkIpsetReferences(this.ruleset4, ipsets);
    if (read6 === null || read6.namesSets) checkIpsetReferences(this.ruleset6, ipsets);
    const rateEstimators = rateEstimatorTable([this.ruleset4, this.ruleset6], options.clock ?? 0);
    const env = { ipsets, rateEstimators };
    const evaluator = (rs: Ruleset, read: SharedRules | null): TableEvaluator =>
      options.evaluator === 'reference'
        ? new ReferenceInterpreter(rs, registry, env)
        : new LoweredEvaluator(
          options.instrument ? options.instrument(lowerRuleset(rs, names, registry, env)) : read !== null ? loweredProgram(read, names, registry, env) : lowerRuleset(rs, names, registry, env),
        );
    const range = options.localPortRange ?? LOCAL_PORT_RANGE;
    if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isInteger(n) && n >= 1 && n <= 65535) || range[0]! > range[1]!) {
      bad('BAD_CONFIG', `localPortRange (ip_local_port_range) must be two ports [low, high] with low <= high, not ${JSON.stringify(range)}`);
    }
    const clock = options.clock ?? 0;
    if (!Number.isFinite(clock) || clock < 0) bad('BAD_CONFIG', `clock must be a number of seconds since the epoch, not ${String(options.clock)}`);
    const ct = new ConntrackTable();
    if (options.conntrackMax !== undefined) {
      if (!Number.isSafeInteger(options.conntrackMax) || options.conntrackMax < 1 || options.conntrackMax > MAX_CONNTRACK_MAX) {
        bad('BAD_CONFIG', `conntrackMax (nf_conntrack_max) must be an integer from 1 to ${MAX_CONNTRACK_MAX}, not ${String(options.conntrackMax)}`);
      }
      ct.max = options.conntrackMax;
    }
    const kernel = new Kernel(routing, ct, sockets, evaluator(this.ruleset4, read4), evaluator(this.ruleset6, read6), options.ipForward ?? false);
    kernel.now = clock;
    kernel.ipsets = ipsets;
    kernel.rateEstimators = rateEstimators;
    if (options.queueReader !== undefined) {
      if (typeof options.queueReader !== 'function') bad('BAD_CONFIG', 'queueReader must be a function (packet) => answer | null');
      kernel.queueReader = options.queueReader;
    }
    kernel.ctEnabled4 = options.conntrack ?? (read4 !== null ? read4.needsConntrack : needsConntrack(this.ruleset4));
    kernel.ctEnabled6 = options.conntrack ?? (read6 !== null ? read6.needsConntrack : needsConntrack(this.ruleset6));
    if (this.nftRuleset.tables.length > 0) {
      const nft = options.evaluator === 'reference' ? new NftEngine(this.nftRuleset) : options.instrumentNft ? options.instrumentNft(this.nftRuleset) : new LoweredNftEngine(this.nftRuleset);
      kernel.nft = nft;
      if (options.conntrack === undefined) {
        kernel.ctEnabled4 ||= nft.usesConntrack(4);
        kernel.ctEnabled6 ||= nft.usesConntrack(6);
      }
    }
    if (options.outcomeCache !== undefined && typeof options.outcomeCache !== 'boolean') bad('BAD_CONFIG', `outcomeCache must be true or false, not ${String(options.outcomeCache)}`);
    this.outcomeCacheOff =
      options.outcomeCache === false ? 'turned off (outcomeCache: false)'
        : options.evaluator === 'reference' ? 'the reference evaluator'
          : options.instrument !== undefined || options.instrumentNft !== undefined || options.observe !== undefined ? 'an instrumented namespace'
            : this.nftRuleset.tables.length > 0 ? 'native nft rules'
              : (read4 !== null ? read4.cacheRefusal : outcomeCacheRefusal([this.ruleset4])) ?? (read6 !== null ? read6.cacheRefusal : outcomeCacheRefusal([this.ruleset6]));
    this.routing = routing;
    const seed = options.seed ?? 1;
    this.driver = new ConnectionDriver({ routing, kernel, peers, seed, ports: new SourcePorts(seed, range), clock, cache: this.outcomeCacheOff === null ? new OutcomeCache() : null });
  }

  private exchanger: NetnsExchange | null = null;

  /**
   * The namespace's packet path, for a driver that joins namespaces (the cluster): packets in
   * and out by interface, sockets, answers (see `exchange.ts`). @internal
   */
  exchange(): NetnsExchange {
    const d = this.driver;
    return (this.exchanger ??= new NetnsExchange({
      kernel: () => d.kernel,
      host: d.host,
      ephemeral: (proto, family, src, dst, dport) => d.ports.ephemeral(d.kernel, d.clock, proto, family, src, dst, dport),
    }));
  }

  /**
   * The next `statistic --mode random` / `numgen random` draws of this namespace take the script's
   * values, then true; null gives them back to the RNG. @internal
   */
  scriptDraws(script: readonly boolean[] | null): void {
    this.driver.scriptDraws(script);
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
    expectOneOf(family, [4, 6], 'family');
    return (family === 4 ? this.kernel.ev4 : this.kernel.ev6).counters();
  }

  /**
   * Packets counted in counter slot `slot` of the family's lowered program (a rule's or a
   * policy's, see `LoweredRule.id`); 0 with the reference evaluator. @internal
   */
  counterAt(family: Family, slot: number): number {
    const ev = family === 4 ? this.kernel.ev4 : this.kernel.ev6;
    return ev instanceof LoweredEvaluator ? (ev.counts[slot] ?? 0) : 0;
  }

  /** The virtual clock, in seconds since the epoch. */
  get now(): number {
    return this.driver.clock;
  }

  /**
   * Moves the virtual clock on by `seconds` (rate limits refill, `recent` stamps age, `time`
   * windows open and close, conntrack entries whose timer fired leave the table and sockets
   * whose TIME_WAIT ended close).
   */
  advance(seconds: number): void {
    if (!Number.isFinite(seconds) || seconds < 0) bad('BAD_CONFIG', `advance takes a non-negative number of seconds, not ${String(seconds)}`);
    const d = this.driver;
    d.clock += seconds;
    this.kernel.now = d.clock;
    this.kernel.conntrack.expire(d.clock);
    d.ports.expire(d.clock, this.kernel.sockets);
  }

  /** Empties every `recent` list (`explore` runs each probe against empty lists). @internal */
  clearRecent(): void {
    this.driver.recent.clear();
  }

  /** The namespace's `recent` lists: name → addresses with their time stamps. */
  recentLists(): Record<string, { address: string; stamps: number[] }[]> {
    const out: Record<string, { address: string; stamps: number[] }[]> = {};
    for (const [name, t] of this.driver.recent) {
      out[name] = [...t].map(([key, e]) => {
        const [fam, words] = key.split('|') as [string, string];
        return { address: addressText(words.split('.').map(Number), fam === '4' ? 4 : 6), stamps: [...e.stamps] };
      });
    }
    return out;
  }

  /** Forgets every connection (`conntrack -F`) and accepted socket. */
  flushConntrack(): void {
    this.kernel.conntrack.flush();
    this.kernel.sockets.clearConnections();
    this.driver.ports.flush();
  }

  /**
   * Simulates a connection attempt: for TCP the SYN, the answer (SYN-ACK or RST) and the ACK, each
   * through every hook it crosses; for UDP one datagram. The result is what `connect --json`
   * prints.
   */
  connect(spec: ConnectSpec, options: CallOptions = {}): ConnectResult {
    expectConnectSpec(spec);
    expectCallOptions(options);
    return this.driver.connectWith(spec, options.close === true, options.trace === false ? null : new TraceRecorder());
  }

  /**
   * {@link connect} with a trace whose events go to `sink` as they are recorded; the result's
   * `steps` and `trace` are empty. Returns `traceOmitted` beside it (0 when none were left out).
   * @internal
   */
  connectInto(spec: ConnectSpec, close: boolean, sink: TraceSink): { readonly result: ConnectResult; readonly omitted: number } {
    expectConnectSpec(spec);
    const tr = new TraceRecorder(sink);
    return { result: this.driver.connectWith(spec, close, tr), omitted: tr.omitted };
  }

  /**
   * Like {@link connect}, but explores every outcome of `statistic --mode random` draws instead of
   * drawing, each branch on a copy of the conntrack table (the namespace is left unchanged).
   * Results carry the probability of their branch.
   */
  connectAll(spec: ConnectSpec, options: CallOptions = {}): ConnectResult[] {
    expectConnectSpec(spec);
    expectCallOptions(options);
    return this.driver.connectAll(spec, options.trace !== false);
  }

  /**
   * Traces one packet: `tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0` (arriving) or
   * `tcp > 10.96.0.10:80 uid 1000` (sent by a local process). See {@link parsePacketSpec}.
   */
  trace(packet: string | PacketSpec, options: CallOptions = {}): ConnectResult {
    expectArgument(packet, ['string', 'object'], 'packet');
    expectCallOptions(options);
    if (typeof packet !== 'string') expectFields(packet, { family: 'integer', proto: 'integer', dst: 'array', groups: 'array', origin: 'string' }, 'packet');
    const spec = typeof packet === 'string' ? parsePacketSpec(packet) : packet;
    const tr = options.trace === false ? null : new TraceRecorder();
    try {
      return this.driver.traceOne(spec, tr);
    } finally {
      this.kernel.releaseUnconfirmed();
    }
  }
}
