/**
 * Capture laws: what a sidecar proxy's rules must do with each connection. A {@link CaptureSetup}
 * says what the rules are for (the proxy's identity and ports, what its configuration exempts);
 * each law probes one connection through a fresh `Netns` and returns a {@link Counterexample}
 * when the rules do something else.
 *
 * @module
 */
import { Netns, type ConnectResult, type NetnsOptions } from '../engine/path/netns.js';
import { diagnostic, NetfilterSimError } from '../model/errors.js';
import type { InterfaceSpec } from '../engine/state/routing.js';
import type { Cidr, Family, Ruleset } from '../model/types.js';
import { printIptablesSave } from '../iptables/print/save.js';
import { cidrContains, formatAddress, parseAddress, parseCidr } from '../model/address.js';
import { parseIptablesSave } from '../iptables/syntax/save.js';
import { connectCommand, type Counterexample, type LawProbe } from './counterexample.js';
import { expectArgument } from '../model/guard.js';

/**
 * An inclusive port range (`{ min: 4190, max: 4191 }`).
 *
 * @example
 * ```ts
 * const r: LawPortRange = { min: 8000, max: 8080 };
 * ```
 */
export interface LawPortRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Which outbound connections the rules are meant to send to the proxy. Every field is optional;
 * the defaults describe "capture every TCP connection that leaves the pod".
 *
 * @example
 * ```ts
 * const out: OutboundPolicy = { excludedPorts: [{ min: 4567, max: 4568 }], excludedDestinations: ['10.96.0.0/12'] };
 * ```
 */
export interface OutboundPolicy {
  /**
   * Destination ports never captured.
   * @defaultValue []
   */
  readonly excludedPorts?: readonly LawPortRange[];
  /**
   * Destination networks never captured (`10.96.0.0/12`).
   * @defaultValue []
   */
  readonly excludedDestinations?: readonly string[];
  /**
   * Destination networks captured: `'*'` for all, or a list.
   * @defaultValue '*'
   */
  readonly includedDestinations?: '*' | readonly string[];
  /**
   * Destination ports captured whatever the destination network (Istio `-q`).
   * @defaultValue []
   */
  readonly includedPorts?: readonly number[];
  /**
   * GIDs whose traffic is never captured.
   * @defaultValue []
   */
  readonly excludedGids?: readonly number[];
  /**
   * GIDs whose traffic is captured: `'*'`, or only these.
   * @defaultValue '*'
   */
  readonly includedGids?: '*' | readonly number[];
  /**
   * Interfaces whose traffic is never captured (Istio `-c`).
   * @defaultValue []
   */
  readonly excludedInterfaces?: readonly string[];
}

/**
 * Which inbound connections (arriving on `eth0` for the pod's own address) the rules are meant
 * to send to the inbound proxy port.
 *
 * @example
 * ```ts
 * const inb: InboundPolicy = { excludedPorts: [{ min: 4190, max: 4191 }], excludedSources: ['10.244.0.0/16'] };
 * ```
 */
export interface InboundPolicy {
  /**
   * Ports captured: `'*'` for all, or a list.
   * @defaultValue '*'
   */
  readonly includedPorts?: '*' | readonly LawPortRange[];
  /**
   * Ports never captured.
   * @defaultValue []
   */
  readonly excludedPorts?: readonly LawPortRange[];
  /**
   * Source networks never captured.
   * @defaultValue []
   */
  readonly excludedSources?: readonly string[];
  /**
   * Interfaces whose traffic is never captured.
   * @defaultValue []
   */
  readonly excludedInterfaces?: readonly string[];
  /**
   * Interfaces whose inbound traffic is deliberately handled otherwise (Istio `-k`: treated as
   * outbound); nothing is asserted for them.
   * @defaultValue []
   */
  readonly reroutedInterfaces?: readonly string[];
}

/**
 * What a capture rule set is for: the rules, the proxy they protect, and what is exempt.
 *
 * @example
 * ```ts
 * const setup: CaptureSetup = {
 *   rules: iptablesSaveText,
 *   proxy: { uids: [2102], outboundPort: 4140, inboundPort: 4143 },
 *   outbound: { excludedPorts: [{ min: 4567, max: 4568 }] },
 *   inbound: { excludedPorts: [{ min: 4190, max: 4191 }] },
 * };
 * ```
 */
export interface CaptureSetup {
  /**
   * IPv4 rules: `iptables-save` text or a rule set. Text is read as `iptables-restore` reads it:
   * what it would refuse (a typo'd `-m mutliport`) throws a `BAD_CONFIG` error with the line and
   * column, unless {@link lenient} is set.
   */
  readonly rules?: string | Ruleset;
  /** IPv6 rules (text read as `ip6tables-restore` reads it). */
  readonly rules6?: string | Ruleset;
  /**
   * Native nftables rules (an `nft -f` script or `nft list ruleset` text), alone or beside
   * {@link rules} and {@link rules6}, as a node that has both.
   */
  readonly nft?: string;
  /**
   * The families the laws speak of for the {@link nft} rules.
   * @defaultValue the families of its tables (`ip` IPv4, `ip6` IPv6, `inet` both)
   */
  readonly nftFamilies?: readonly Family[];
  /**
   * Read rule text leniently (as `fmt --lenient`), dropping what cannot be read instead of
   * refusing it; every counterexample and proof then lists what was dropped in `warnings`.
   * @defaultValue false
   */
  readonly lenient?: boolean;
  readonly proxy: {
    /** UIDs the proxy runs as (its own connections must never be captured). */
    readonly uids: readonly number[];
    /**
     * GIDs that mark the proxy's traffic too.
     * @defaultValue []
     */
    readonly gids?: readonly number[];
    /** The port outbound connections are sent to. */
    readonly outboundPort: number;
    /** The port inbound connections are sent to, when the rules capture inbound traffic. */
    readonly inboundPort?: number;
    /**
     * Whether the inbound listener is transparent (TPROXY capture).
     * @defaultValue false
     */
    readonly transparentInbound?: boolean;
  };
  /**
   * What outbound traffic is captured.
   * @defaultValue capture every TCP connection that leaves the pod
   */
  readonly outbound?: OutboundPolicy;
  /**
   * What inbound traffic is captured; absent when the rules do not capture inbound traffic
   * (the inbound laws then assert nothing).
   */
  readonly inbound?: InboundPolicy;
  /**
   * DNS capture: connections to this port are meant for another listener (`listenPort`), so the
   * laws assert nothing about them.
   */
  readonly dns?: { readonly port: number; readonly listenPort: number };
  /** Namespace settings the rules rely on (policy routing for TPROXY, other interfaces). */
  readonly netns?: Pick<NetnsOptions, 'routes' | 'ipRules' | 'interfaces' | 'gateway'>;
  /** The configuration the rules were compiled from, shown in counterexamples. */
  readonly config?: unknown;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

interface Parsed {
  readonly rules4: Ruleset | undefined;
  readonly rules6: Ruleset | undefined;
  /** What lenient reading dropped, as `IPv4 rules, line 3, column 18: message`. */
  readonly warnings: readonly string[];
}

const parsedCache = new WeakMap<CaptureSetup, Parsed>();

function loadRules(rules: string | Ruleset | undefined, family: Family, lenient: boolean, warnings: string[]): Ruleset | undefined {
  if (rules === undefined || typeof rules !== 'string') return rules;
  const r = parseIptablesSave(rules, { family, mode: lenient ? 'lenient' : 'strict' });
  const error = r.diagnostics.find((d) => d.severity === 'error');
  if (error) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `CaptureSetup: the IPv${family} rules do not parse: ${error.message}`, error.span, error.token));
  for (const d of r.diagnostics) {
    if (d.severity === 'warning') warnings.push(`IPv${family} rules${d.span ? `, line ${d.span.line}, column ${d.span.column}` : ''}: ${d.message}`);
  }
  return r.ruleset;
}

/** @internal */
export function parsed(setup: CaptureSetup): Parsed {
  let p = parsedCache.get(setup);
  if (!p) {
    const warnings: string[] = [];
    const lenient = setup.lenient ?? false;
    p = { rules4: loadRules(setup.rules, 4, lenient, warnings), rules6: loadRules(setup.rules6, 6, lenient, warnings), warnings };
    parsedCache.set(setup, p);
  }
  return p;
}

interface Endpoint {
  readonly family: Family;
  readonly addr: readonly number[];
  readonly port: number;
}

/** @internal */
export function parseEndpointText(text: string): Endpoint {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  if (!m) throw new NetfilterSimError(diagnostic('BAD_PROBE', `bad endpoint "${text}" (expected IP:PORT or [IPv6]:PORT)`));
  const family: Family = m[1]!.includes(':') ? 6 : 4;
  const addr = parseAddress(m[1]!, family);
  if (!addr) throw new NetfilterSimError(diagnostic('BAD_PROBE', `bad address "${m[1]}" in "${text}"`));
  return { family, addr, port: Number(m[2]) };
}

/** An IPv6 socket connecting to ::ffff:a.b.c.d makes an IPv4 connection to a.b.c.d. @internal */
export function unmapped(e: Endpoint): Endpoint {
  return e.family === 6 && e.addr[0] === 0 && e.addr[1] === 0 && e.addr[2] === 0xffff ? { family: 4, addr: [e.addr[3]!], port: e.port } : e;
}

/**
 * Where a local connection to `e` is addressed: 0.0.0.0 and :: are the host itself, and
 * `connect()` sends to 127.0.0.1 and ::1 instead. @internal
 */
export function addressedTo(e: Endpoint): Endpoint {
  e = unmapped(e);
  if (!e.addr.every((w) => w === 0)) return e;
  return { ...e, addr: e.family === 4 ? [0x7f000001] : [0, 0, 0, 1] };
}

function endpointText(e: Endpoint): string {
  const a = formatAddress(e.addr, e.family);
  return e.family === 6 ? `[${a}]:${e.port}` : `${a}:${e.port}`;
}

function cidrs(list: readonly string[] | undefined, family: Family): Cidr[] {
  return (list ?? []).map((t) => parseCidr(t, family)).filter((c): c is Cidr => c !== null);
}

function inRanges(port: number, ranges: readonly LawPortRange[] | undefined): boolean {
  return (ranges ?? []).some((r) => port >= r.min && port <= r.max);
}

const DEFAULT_INTERFACES: readonly InterfaceSpec[] = [{ name: 'eth0', addresses: ['10.0.0.2/24', 'fd00::2/64'] }];

/** @internal */
export function interfacesOf(setup: CaptureSetup): readonly InterfaceSpec[] {
  const i = setup.netns?.interfaces;
  if (i === undefined) return DEFAULT_INTERFACES;
  if (Array.isArray(i)) return i as readonly InterfaceSpec[];
  return Object.entries(i as Record<string, readonly string[]>).map(([name, addresses]) => ({ name, addresses }));
}

/** Loopback, the pod's own addresses: routed through `lo`. */
/** @internal */
export function isLocal(setup: CaptureSetup, e: Endpoint): boolean {
  if (e.family === 4 && e.addr[0]! >>> 24 === 127) return true;
  if (e.family === 6 && e.addr.every((w, i) => (i < 3 ? w === 0 : w === 1))) return true;
  for (const iface of interfacesOf(setup)) {
    for (const a of iface.addresses) {
      const addr = parseAddress(a.replace(/\/\d+$/, ''), e.family);
      if (addr && addr.every((w, i) => w === e.addr[i])) return true;
    }
  }
  return false;
}

/**
 * The IPv4 broadcast addresses of the setup's namespace: each interface subnet's (a prefix
 * shorter than /31) and loopback's 127.255.255.255.
 * @internal
 */
export function broadcastsOf(setup: CaptureSetup): number[] {
  const out = [0x7fffffff];
  for (const iface of interfacesOf(setup)) {
    for (const a of iface.addresses) {
      const m = /^([^/]+)\/(\d+)$/.exec(a);
      const addr = m ? parseAddress(m[1]!, 4) : null;
      const prefix = m ? Number(m[2]) : 32;
      if (addr === null || prefix >= 31) continue;
      const host = prefix === 0 ? 0xffffffff : (2 ** (32 - prefix) - 1) >>> 0;
      const b = (addr[0]! | host) >>> 0;
      if (!out.includes(b)) out.push(b);
    }
  }
  return out;
}

/**
 * Not a unicast address (or port) a TCP connection can go to or come from: with the setup, its
 * namespace's broadcast addresses too (connect() to one fails).
 */
/** @internal */
export function isSpecial(e: Endpoint, setup?: CaptureSetup): boolean {
  if (e.port === 0) return true;
  if (e.family === 4) {
    const first = e.addr[0]! >>> 24;
    return first === 0 || first >= 224 || (setup !== undefined && broadcastsOf(setup).includes(e.addr[0]! >>> 0));
  }
  const top = e.addr[0]! >>> 16;
  return e.addr.every((w) => w === 0) || top >>> 8 === 0xff || (top & 0xffc0) === 0xfe80;
}

/** @internal */
export type Expectation =
  | { readonly kind: 'captured'; readonly why: string }
  | { readonly kind: 'bypass'; readonly why: string }
  | { readonly kind: 'free' };

/** @internal */
export function isProxy(setup: CaptureSetup, probe: LawProbe): boolean {
  if (probe.from !== 'local') return false;
  const gid = probe.gid ?? probe.uid;
  return setup.proxy.uids.includes(probe.uid) || (setup.proxy.gids ?? []).includes(gid);
}

/** @internal */
export function dnsPort(setup: CaptureSetup, port: number): boolean {
  return setup.dns !== undefined && port === setup.dns.port;
}

/** What the setup says should happen to an app's outbound TCP connection. */
/** @internal */
export function expectOutbound(setup: CaptureSetup, probe: LawProbe & { from: 'local' }): Expectation {
  const dst = unmapped(parseEndpointText(probe.dst));
  const o = setup.outbound ?? {};
  if (dnsPort(setup, dst.port) || isSpecial(dst, setup)) return { kind: 'free' };
  if (inRanges(dst.port, o.excludedPorts)) return { kind: 'bypass', why: `port ${dst.port} is an excluded outbound port` };
  if (isLocal(setup, dst)) return { kind: 'free' };
  if ((o.excludedInterfaces ?? []).includes('eth0')) return { kind: 'bypass', why: 'eth0, the interface it leaves through, is excluded' };
  const ex = cidrs(o.excludedDestinations, dst.family).find((c) => cidrContains(c, dst.addr));
  if (ex) return { kind: 'bypass', why: `${formatAddress(dst.addr, dst.family)} is in the excluded network ${formatAddress(ex.addr, ex.family)}` };
  const gid = probe.gid ?? probe.uid;
  if ((o.excludedGids ?? []).includes(gid)) return { kind: 'bypass', why: `group ${gid} is excluded` };
  const ig = o.includedGids ?? '*';
  if (ig !== '*' && !ig.includes(gid)) return { kind: 'bypass', why: `group ${gid} is not among the captured groups` };
  if ((o.includedPorts ?? []).includes(dst.port)) return { kind: 'captured', why: `port ${dst.port} is always captured` };
  const inc = o.includedDestinations ?? '*';
  if (inc === '*') return { kind: 'captured', why: 'every destination is captured' };
  if (cidrs(inc, dst.family).some((c) => cidrContains(c, dst.addr))) return { kind: 'captured', why: 'its destination is in a captured network' };
  return { kind: 'free' };
}

/** What the setup says should happen to an inbound TCP connection. */
/** @internal */
export function expectInbound(setup: CaptureSetup, probe: LawProbe & { from: 'remote' }): Expectation {
  const i = setup.inbound;
  const dst = parseEndpointText(probe.dst);
  const src = parseAddress(probe.src, dst.family);
  if (!i || setup.proxy.inboundPort === undefined || !src || !isLocal(setup, dst) || isSpecial(dst, setup) || isSpecial({ ...dst, addr: src }, setup)) return { kind: 'free' };
  if (isLocal(setup, { ...dst, addr: src })) return { kind: 'free' };
  // Loopback is not an address a remote client reaches (IPv6 drops ::1 off lo before any hook).
  if (dst.family === 4 ? dst.addr[0]! >>> 24 === 127 : dst.addr.every((w, k) => w === (k === 3 ? 1 : 0))) return { kind: 'free' };
  if ((i.reroutedInterfaces ?? []).includes('eth0')) return { kind: 'free' };
  // A TPROXY delivery leaves the address alone: to another listener's port it cannot be told apart.
  if (setup.proxy.transparentInbound && (dst.port === setup.proxy.outboundPort || dst.port === setup.dns?.listenPort)) return { kind: 'free' };
  if ((i.excludedInterfaces ?? []).includes('eth0')) return { kind: 'bypass', why: 'eth0, the interface it arrives on, is excluded' };
  if (inRanges(dst.port, i.excludedPorts)) return { kind: 'bypass', why: `port ${dst.port} is an excluded inbound port` };
  const ex = cidrs(i.excludedSources, dst.family).find((c) => cidrContains(c, src));
  if (ex) return { kind: 'bypass', why: `${probe.src} is in the excluded source network ${formatAddress(ex.addr, ex.family)}` };
  const inc = i.includedPorts ?? '*';
  if (inc === '*' || inRanges(dst.port, inc)) return { kind: 'captured', why: inc === '*' ? 'every inbound port is captured' : `port ${dst.port} is a captured inbound port` };
  return { kind: 'free' };
}

/**
 * The listeners a probe's namespace has: the proxy's ports, DNS, and the probe's own port. With
 * TPROXY capture the probe's port is left out for inbound probes, so that a delivery to it can
 * only come from the transparent inbound listener.
 */
function listeners(setup: CaptureSetup, probe: LawProbe): { options: NonNullable<NetnsOptions['listen']>; text: (number | string)[]; probePort: boolean } {
  const ports = new Set<number>([setup.proxy.outboundPort]);
  if (setup.proxy.inboundPort !== undefined) ports.add(setup.proxy.inboundPort);
  if (setup.dns) ports.add(setup.dns.listenPort);
  const dport = parseEndpointText(probe.dst).port;
  const probePort = !(setup.proxy.transparentInbound && probe.from === 'remote') || ports.has(dport);
  if (probePort && dport > 0) ports.add(dport);
  const options: (number | { port: number; transparent: boolean })[] = [];
  for (const p of ports) {
    options.push(p === setup.proxy.inboundPort && setup.proxy.transparentInbound ? { port: p, transparent: true } : p);
  }
  return { options, text: [...ports], probePort };
}

interface Run {
  readonly result: ConnectResult;
  readonly listen: (number | string)[];
  /** Delivered by TPROXY to the transparent inbound listener (the address is unchanged). */
  readonly tproxied: boolean;
}

/**
 * Runs one probe through a fresh namespace with the setup's rules (fresh, so that a result never
 * depends on an earlier probe: conntrack, ephemeral ports and `statistic` draws start over).
 * Without `trace` the steps are not recorded; a counterexample is re-run with them.
 */
function run(setup: CaptureSetup, probe: LawProbe, trace = false): Run {
  const p = parsed(setup);
  const { options, text, probePort } = listeners(setup, probe);
  const ns = new Netns({
    ...(setup.netns ?? {}),
    ...(p.rules4 ? { rules: p.rules4 } : {}),
    ...(p.rules6 ? { rules6: p.rules6 } : {}),
    ...(setup.nft !== undefined ? { nft: setup.nft } : {}),
    listen: options,
  });
  const result = ns.connect(probe, { trace });
  const dst = parseEndpointText(probe.dst);
  const tproxied = !probePort && result.outcome === 'local' && result.port === dst.port;
  return { result, listen: text, tproxied };
}

function resultEndpoint(r: ConnectResult, family: Family): string | null {
  if (r.address === null || r.port === null) return null;
  const a = parseAddress(r.address, family) ?? parseAddress(r.address, family === 4 ? 6 : 4);
  if (!a) return null;
  return endpointText({ family: a.length === 1 ? 4 : 6, addr: a, port: r.port });
}

/** The connection's destination was rewritten (it ended somewhere else), or TPROXY took it. */
function redirected(r: ConnectResult, probe: LawProbe, tproxied = false): boolean {
  if (tproxied) return true;
  if (r.outcome !== 'local' && r.outcome !== 'remote') return false;
  const dst = parseEndpointText(probe.dst);
  const at = resultEndpoint(r, dst.family);
  return at !== null && at !== endpointText(probe.from === 'local' ? addressedTo(dst) : dst);
}

/** The connection was delivered to `port` and had not been addressed there. */
function capturedAt(r: ConnectResult, probe: LawProbe, port: number): boolean {
  return r.outcome === 'local' && r.port === port && redirected(r, probe);
}

function describe(r: ConnectResult, tproxied = false): string {
  const at = r.address !== null ? `${r.address.includes(':') ? `[${r.address}]` : r.address}:${r.port}` : '';
  switch (r.outcome) {
    case 'local': return `it was delivered to ${at} (${r.reason})${tproxied ? ', taken by TPROXY' : ''}`;
    case 'remote': return `it left the pod for ${at}`;
    case 'refused': return `it was refused (${r.reason})`;
    case 'dropped': return `it was dropped (${r.reason})`;
  }
}

function probeText(p: LawProbe): string {
  const proto = p.proto ?? 'tcp';
  return p.from === 'local'
    ? `a ${proto.toUpperCase()} connection from uid ${p.uid} gid ${p.gid ?? p.uid} to ${p.dst}`
    : `a ${proto.toUpperCase()} connection from ${p.src} to ${p.dst}`;
}

function counterexample(law: string, setup: CaptureSetup, probe: LawProbe, untraced: Run, message: string): Counterexample {
  const { result, listen } = run(setup, probe, true);
  void untraced;
  const family: Family = parseEndpointText(probe.dst).family;
  const p = parsed(setup);
  const rs = family === 4 ? p.rules4 : p.rules6;
  const extras = setup.netns && (setup.netns.routes?.length || setup.netns.ipRules?.length || setup.proxy.transparentInbound)
    ? 'Note: the namespace also had policy routing and a transparent inbound listener (TPROXY), which the command line does not set.'
    : undefined;
  return {
    law, message, family,
    rules: rs ? printIptablesSave(rs) : (setup.nft ?? ''),
    command: connectCommand(probe, listen, family, {
      ...(setup.netns?.interfaces !== undefined ? { interfaces: interfacesOf(setup) } : {}),
      ...(setup.netns?.gateway !== undefined ? { gateway: typeof setup.netns.gateway === 'string' ? [setup.netns.gateway] : setup.netns.gateway } : {}),
    }),
    probe, result,
    ...(setup.config !== undefined ? { config: setup.config } : {}),
    ...(extras ? { details: extras } : {}),
    ...(p.warnings.length > 0 ? { warnings: p.warnings } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// Laws

/**
 * The name of {@link proxyNeverCapturesItself}, as counterexamples carry it in `law`.
 *
 * @example
 * ```ts
 * if (cx?.law === PROXY_NEVER_CAPTURES_ITSELF) console.log(explainCounterexample(cx));
 * ```
 */
export const PROXY_NEVER_CAPTURES_ITSELF = 'the proxy never captures its own traffic';
/**
 * The name of {@link appTrafficReachesProxy}, as counterexamples carry it in `law`.
 *
 * @example
 * ```ts
 * if (cx?.law === APP_TRAFFIC_REACHES_PROXY) console.log(explainCounterexample(cx));
 * ```
 */
export const APP_TRAFFIC_REACHES_PROXY = 'every TCP connection from an app reaches the outbound proxy unless its port or destination is excluded';
/**
 * The name of {@link excludedNeverRedirected}, as counterexamples carry it in `law`.
 *
 * @example
 * ```ts
 * if (cx?.law === EXCLUDED_NEVER_REDIRECTED) console.log(explainCounterexample(cx));
 * ```
 */
export const EXCLUDED_NEVER_REDIRECTED = 'excluded ports and ranges are never redirected';
/**
 * The name of {@link nonTcpNeverRedirected}, as counterexamples carry it in `law`.
 *
 * @example
 * ```ts
 * if (cx?.law === NON_TCP_NEVER_REDIRECTED) console.log(explainCounterexample(cx));
 * ```
 */
export const NON_TCP_NEVER_REDIRECTED = 'non-TCP traffic is never redirected';
/**
 * The name of {@link inboundReachesProxy}, as counterexamples carry it in `law`.
 *
 * @example
 * ```ts
 * if (cx?.law === INBOUND_REACHES_PROXY) console.log(explainCounterexample(cx));
 * ```
 */
export const INBOUND_REACHES_PROXY = 'inbound connections reach the inbound proxy unless skipped';

/**
 * Law: the proxy never captures its own traffic. The probe's destination (and protocol) is
 * connected to from each of the proxy's UIDs, then from each proxy GID; none may be delivered
 * to the outbound proxy port. Remote probes are not applicable (returns `undefined`).
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { connection } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(connection({ from: 'local' }), (probe) => {
 *   const cx = proxyNeverCapturesItself(setup, probe);
 *   if (cx) throw new Error(explainCounterexample(cx));
 * }));
 * ```
 */
export function proxyNeverCapturesItself(setup: CaptureSetup, probe: LawProbe): Counterexample | undefined {
  expectArgument(setup, 'object', 'setup');
  expectArgument(probe, 'object', 'probe');
  if (probe.from !== 'local') return undefined;
  const gids = setup.proxy.gids ?? [];
  const tries: LawProbe[] = [
    ...setup.proxy.uids.map((uid): LawProbe => ({ from: 'local', uid, gid: gids[0] ?? uid, dst: probe.dst, ...(probe.proto ? { proto: probe.proto } : {}) })),
    ...gids.map((gid): LawProbe => ({ from: 'local', uid: probe.uid, gid, dst: probe.dst, ...(probe.proto ? { proto: probe.proto } : {}) })),
  ];
  for (const t of tries) {
    const r = run(setup, t);
    if (capturedAt(r.result, t, setup.proxy.outboundPort)) {
      return counterexample(PROXY_NEVER_CAPTURES_ITSELF, setup, t, r,
        `${probeText(t)} (the proxy's own) was sent to the outbound proxy port ${setup.proxy.outboundPort}: ${describe(r.result)}.`);
    }
  }
  return undefined;
}

/**
 * Law: every TCP connection from an app (a local process that is not the proxy) reaches the
 * outbound proxy port, unless its port or destination is excluded by the setup. Connections to
 * the pod itself or loopback, DNS when captured, and probes from the proxy are not asserted.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(connection({ from: 'local', uids: [1000] }), (probe) => {
 *   const cx = appTrafficReachesProxy(setup, probe);
 *   if (cx) throw new Error(explainCounterexample(cx));
 * }));
 * ```
 */
export function appTrafficReachesProxy(setup: CaptureSetup, probe: LawProbe): Counterexample | undefined {
  expectArgument(setup, 'object', 'setup');
  expectArgument(probe, 'object', 'probe');
  if (probe.from !== 'local' || (probe.proto ?? 'tcp') !== 'tcp' || isProxy(setup, probe)) return undefined;
  const e = expectOutbound(setup, probe);
  if (e.kind !== 'captured') return undefined;
  const r = run(setup, probe);
  if (capturedAt(r.result, probe, setup.proxy.outboundPort)) return undefined;
  return counterexample(APP_TRAFFIC_REACHES_PROXY, setup, probe, r,
    `${probeText(probe)} should reach the outbound proxy port ${setup.proxy.outboundPort} (${e.why}), but ${describe(r.result)}.`);
}

/**
 * Law: excluded ports and ranges (and excluded networks, groups and interfaces) are never
 * redirected: a connection they exempt ends where it was addressed. Applies to app connections
 * (outbound exclusions) and to remote ones (inbound exclusions).
 *
 * @example
 * ```ts
 * fc.assert(fc.property(connection({ ports: [{ min: 4567, max: 4568 }] }), (probe) =>
 *   excludedNeverRedirected(setup, probe) === undefined));
 * ```
 */
export function excludedNeverRedirected(setup: CaptureSetup, probe: LawProbe): Counterexample | undefined {
  expectArgument(setup, 'object', 'setup');
  expectArgument(probe, 'object', 'probe');
  if ((probe.proto ?? 'tcp') !== 'tcp' || isProxy(setup, probe)) return undefined;
  const e = probe.from === 'local' ? expectOutbound(setup, probe) : expectInbound(setup, probe);
  if (e.kind !== 'bypass') return undefined;
  const r = run(setup, probe);
  if (!redirected(r.result, probe, r.tproxied)) return undefined;
  return counterexample(EXCLUDED_NEVER_REDIRECTED, setup, probe, r,
    `${probeText(probe)} is exempt (${e.why}), but ${describe(r.result, r.tproxied)}.`);
}

/**
 * Law: non-TCP traffic is never redirected. A UDP probe (local or remote) must end where it was
 * addressed, except DNS when the setup captures it. TCP probes are not applicable.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(connection({ protocols: ['udp'] }), (probe) => nonTcpNeverRedirected(setup, probe) === undefined));
 * ```
 */
export function nonTcpNeverRedirected(setup: CaptureSetup, probe: LawProbe): Counterexample | undefined {
  expectArgument(setup, 'object', 'setup');
  expectArgument(probe, 'object', 'probe');
  if ((probe.proto ?? 'tcp') === 'tcp') return undefined;
  const dst = parseEndpointText(probe.dst);
  if (dnsPort(setup, dst.port) || isSpecial(dst, setup)) return undefined;
  if (probe.from === 'remote') {
    const src = parseAddress(probe.src, dst.family);
    if (!src || isSpecial({ ...dst, addr: src }, setup) || isLocal(setup, { ...dst, addr: src })) return undefined;
  }
  const r = run(setup, probe);
  if (!redirected(r.result, probe, r.tproxied)) return undefined;
  return counterexample(NON_TCP_NEVER_REDIRECTED, setup, probe, r,
    `${probeText(probe)} should end where it was addressed, but ${describe(r.result, r.tproxied)}.`);
}

/**
 * Law: inbound connections reach the inbound proxy unless skipped. A remote TCP connection to
 * the pod's own address reaches the inbound proxy port, unless its port, source network or
 * interface is excluded (or the setup captures no inbound traffic).
 *
 * @example
 * ```ts
 * fc.assert(fc.property(connection({ from: 'remote' }), (probe) => inboundReachesProxy(setup, probe) === undefined));
 * ```
 */
export function inboundReachesProxy(setup: CaptureSetup, probe: LawProbe): Counterexample | undefined {
  expectArgument(setup, 'object', 'setup');
  expectArgument(probe, 'object', 'probe');
  if (probe.from !== 'remote' || (probe.proto ?? 'tcp') !== 'tcp') return undefined;
  const e = expectInbound(setup, probe);
  if (e.kind !== 'captured') return undefined;
  const r = run(setup, probe);
  if (r.tproxied || (r.result.outcome === 'local' && r.result.port === setup.proxy.inboundPort)) return undefined;
  return counterexample(INBOUND_REACHES_PROXY, setup, probe, r,
    `${probeText(probe)} should reach the inbound proxy port ${setup.proxy.inboundPort} (${e.why}), but ${describe(r.result)}.`);
}

/**
 * Every capture law on one probe: the first counterexample, or `undefined` when all hold.
 *
 * @example
 * ```ts
 * import { test } from '@fast-check/vitest';
 * import { connection } from 'netfilter-sim/arbitraries';
 * test.prop([connection({ protocols: ['tcp', 'udp'] })])('my rules obey the capture laws', (probe) => {
 *   const cx = checkCaptureLaws(setup, probe);
 *   if (cx) throw new Error(explainCounterexample(cx));
 * });
 * ```
 */
export function checkCaptureLaws(setup: CaptureSetup, probe: LawProbe): Counterexample | undefined {
  expectArgument(setup, 'object', 'setup');
  expectArgument(probe, 'object', 'probe');
  return proxyNeverCapturesItself(setup, probe)
    ?? appTrafficReachesProxy(setup, probe)
    ?? excludedNeverRedirected(setup, probe)
    ?? nonTcpNeverRedirected(setup, probe)
    ?? inboundReachesProxy(setup, probe);
}
