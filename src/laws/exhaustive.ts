/**
 * The capture laws over every probe, not samples: each law is decided on the exact partition
 * that {@link explore} computes, cut further where the law's own expectation changes (excluded
 * ports and networks, the proxy's uids and gids, local and special addresses). One probe per
 * cell decides the cell, since both the outcome and the expectation are the same across it. A
 * law either holds, with the classes as its proof, or fails with its smallest counterexample,
 * which `netfilter-sim connect` replays.
 *
 * @module
 */
import { expectFields } from '../model/guard.js';
import { Netns } from '../engine/path/netns.js';
import type { NetnsOptions } from '../engine/path/netns.js';
import { addressText } from '../model/address.js';
import { parseAnyAddress } from '../engine/state/routing.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { explore, expectedFor } from '../explore/explore.js';
import type { ExploreClass, ExploreOutcome, ExploreResult } from '../explore/explore.js';
import { bigToWords, wordsToBig } from '../explore/instrument.js';
import type { Family } from '../model/types.js';
import { printIptablesSave } from '../iptables/print/save.js';
import { parseCidr } from '../model/address.js';
import {
  APP_TRAFFIC_REACHES_PROXY, EXCLUDED_NEVER_REDIRECTED, INBOUND_REACHES_PROXY, NON_TCP_NEVER_REDIRECTED, PROXY_NEVER_CAPTURES_ITSELF,
  addressedTo, broadcastsOf, dnsPort, expectInbound, expectOutbound, interfacesOf, isLocal, isProxy, isSpecial, parseEndpointText, parsed,
} from './capture.js';
import type { CaptureSetup } from './capture.js';
import { connectCommand } from './counterexample.js';
import type { Counterexample, LawProbe } from './counterexample.js';

/**
 * What an exhaustive law returns: a proof (the classes of every space the law speaks of, and how
 * many cells were decided) or the smallest counterexample.
 *
 * @example
 * ```ts
 * const r = proveAppTrafficReachesProxy(linkerdCapture({}));
 * if (!r.holds) console.log(explainCounterexample(r.counterexample));
 * ```
 */
export type LawProof =
  | { readonly law: string; readonly holds: true; readonly cells: number; readonly spaces: readonly ExploreResult[]; readonly warnings?: readonly string[] }
  | { readonly law: string; readonly holds: false; readonly counterexample: Counterexample; readonly spaces: readonly ExploreResult[]; readonly warnings?: readonly string[] };

type Range = readonly [bigint, bigint];
interface Cell {
  readonly cls: ExploreClass;
  readonly lo: readonly bigint[];
}

function listenOf(setup: CaptureSetup): { options: NonNullable<NetnsOptions['listen']>; text: (number | string)[] } {
  const ports = new Set<number>([setup.proxy.outboundPort]);
  if (setup.proxy.inboundPort !== undefined) ports.add(setup.proxy.inboundPort);
  if (setup.dns) ports.add(setup.dns.listenPort);
  const options = [...ports].map((p) => (p === setup.proxy.inboundPort && setup.proxy.transparentInbound ? { port: p, transparent: true } : p));
  return { options, text: [...ports] };
}

function namespaceOptions(setup: CaptureSetup): NetnsOptions {
  const p = parsed(setup);
  return {
    ...(setup.netns ?? {}),
    ...(p.rules4 ? { rules: p.rules4 } : {}),
    ...(p.rules6 ? { rules6: p.rules6 } : {}),
    ...(setup.nft !== undefined ? { nft: setup.nft } : {}),
    listen: listenOf(setup).options,
  };
}

const spaceCache = new WeakMap<CaptureSetup, Map<string, ExploreResult>>();

/** The families the setup's nft rules speak of. */
function nftFamilies(setup: CaptureSetup): Set<Family> {
  if (setup.nft === undefined) return new Set();
  if (setup.nftFamilies !== undefined) return new Set(setup.nftFamilies);
  const out = new Set<Family>();
  for (const t of new Netns({ nft: setup.nft }).nftRuleset.tables) {
    if (t.family !== 'ip6') out.add(4);
    if (t.family !== 'ip') out.add(6);
  }
  return out;
}

/** The explored space of a setup (cached per setup). */
function space(setup: CaptureSetup, from: 'local' | 'remote', proto: 'tcp' | 'udp'): ExploreResult {
  let m = spaceCache.get(setup);
  if (!m) spaceCache.set(setup, (m = new Map()));
  const key = `${from}/${proto}`;
  let r = m.get(key);
  // The laws speak of the families the setup has rules for (IPv4 when it has none).
  const p = parsed(setup);
  const nft = nftFamilies(setup);
  const families = [...(p.rules4 || nft.has(4) || (!p.rules6 && !nft.has(6)) ? [4 as const] : []), ...(p.rules6 || nft.has(6) ? [6 as const] : [])];
  if (!r) {
    const parts = families.map((family) => explore({ ...namespaceOptions(setup), from, proto, family }));
    r = { ...parts[0]!, classes: parts.flatMap((x) => x.classes) };
    m.set(key, r);
  }
  return r;
}

function cidrRange(text: string, family: Family): Range | null {
  const c = parseCidr(text, family);
  if (!c) return null;
  const bits = family === 4 ? 32 : 128;
  const m = wordsToBig(c.mask);
  const host = ((1n << BigInt(bits)) - 1n) ^ m;
  const base = wordsToBig(c.addr) & m;
  return [base, base | host];
}

/** Where the setup's expectation can change, per field of the space. */
function lawCuts(setup: CaptureSetup, from: 'local' | 'remote', family: Family): Map<string, bigint[]> {
  const cuts = new Map<string, bigint[]>();
  const add = (field: string, r: Range | null): void => {
    if (!r) return;
    let l = cuts.get(field);
    if (!l) cuts.set(field, (l = []));
    l.push(r[0], r[1] + 1n);
  };
  const one = (field: string, v: number): void => add(field, [BigInt(v), BigInt(v)]);
  const o = setup.outbound ?? {};
  const i = setup.inbound ?? {};
  for (const r of [...(o.excludedPorts ?? []), ...(i.excludedPorts ?? []), ...(i.includedPorts === '*' || i.includedPorts === undefined ? [] : i.includedPorts)]) add('dport', [BigInt(r.min), BigInt(r.max)]);
  for (const p of o.includedPorts ?? []) one('dport', p);
  for (const p of [setup.proxy.outboundPort, setup.proxy.inboundPort, setup.dns?.port, setup.dns?.listenPort]) if (p !== undefined) one('dport', p);
  const addrFields = from === 'local' ? ['dst'] : ['src', 'dst'];
  const special = family === 4 ? ['0.0.0.0/8', '224.0.0.0/3', '127.0.0.0/8'] : ['::/128', 'ff00::/8', 'fe80::/10', '::1/128'];
  for (const f of addrFields) {
    for (const t of special) add(f, cidrRange(t, family));
    for (const iface of interfacesOf(setup)) for (const a of iface.addresses) add(f, cidrRange(a.replace(/\/\d+$/, ''), family));
    if (family === 4) for (const b of broadcastsOf(setup)) add(f, [BigInt(b), BigInt(b)]);
  }
  const cidrList = (l: '*' | readonly string[] | undefined): readonly string[] => (l === undefined || l === '*' ? [] : l);
  for (const t of [...(o.excludedDestinations ?? []), ...cidrList(o.includedDestinations)]) add('dst', cidrRange(t, family));
  for (const t of i.excludedSources ?? []) add('src', cidrRange(t, family));
  for (const u of setup.proxy.uids) one('uid', u);
  for (const g of [...(setup.proxy.gids ?? []), ...(o.excludedGids ?? []), ...(o.includedGids === undefined || o.includedGids === '*' ? [] : o.includedGids)]) one('gid', g);
  return cuts;
}

function addrValue(text: string): bigint {
  return wordsToBig(parseAnyAddress(text)!.addr);
}

function splitRange(r: Range, cuts: readonly bigint[] | undefined): Range[] {
  if (!cuts) return [r];
  const inside = [...new Set(cuts.filter((c) => c > r[0] && c <= r[1]))].sort((a, b) => (a < b ? -1 : 1));
  const out: Range[] = [];
  let lo = r[0];
  for (const c of inside) {
    out.push([lo, c - 1n]);
    lo = c;
  }
  out.push([lo, r[1]]);
  return out;
}

/** Every cell: a box of a class, cut where the law's expectation may change; its lowest probe. */
function cells(r: ExploreResult, setup: CaptureSetup): Cell[] {
  const out: Cell[] = [];
  const ifaces = new Map<string, bigint>();
  for (const family of [4, 6] as const) {
    const cuts = lawCuts(setup, r.from, family);
    for (const cls of r.classes) {
      if (cls.family !== family) continue;
      for (const b of cls.boxes) {
        const ranges: Range[] = r.fields.map((f) => {
          const v = (b as Record<string, unknown>)[f];
          if (f === 'iface') {
            if (!ifaces.has(v as string)) ifaces.set(v as string, BigInt(ifaces.size));
            const k = ifaces.get(v as string)!;
            return [k, k] as const;
          }
          const [lo, hi] = v as readonly [string | number, string | number];
          return typeof lo === 'string' ? ([addrValue(lo), addrValue(hi as string)] as const) : ([BigInt(lo), BigInt(hi as number)] as const);
        });
        // The law speaks of connections arriving on eth0 only.
        if (r.from === 'remote' && b.iface !== 'eth0') continue;
        let los: bigint[][] = [[]];
        r.fields.forEach((f, k) => {
          const pieces = splitRange(ranges[k]!, cuts.get(f));
          los = los.flatMap((l) => pieces.map((p) => [...l, p[0]]));
        });
        for (const lo of los) out.push({ cls, lo });
      }
    }
  }
  return out;
}

function probeAt(r: ExploreResult, cell: Cell, family: Family, proto: 'tcp' | 'udp'): LawProbe {
  const at = (f: string): bigint => cell.lo[r.fields.indexOf(f)]!;
  const text = (v: bigint): string => addressText(bigToWords(v, family), family);
  const port = Number(at('dport'));
  const dst = family === 6 ? `[${text(at('dst'))}]:${port}` : `${text(at('dst'))}:${port}`;
  if (r.from === 'local') return { from: 'local', uid: Number(at('uid')), gid: Number(at('gid')), dst, proto };
  return { from: 'remote', src: text(at('src')), dst, proto };
}

type Outcome = ReturnType<typeof expectedFor>;

function outcomes(cls: ExploreClass, probe: LawProbe): Outcome[] {
  const list: (ExploreClass | ExploreOutcome)[] = cls.alternatives ? [...cls.alternatives] : [cls];
  return list.map((o) => expectedFor(o, probe.from === 'remote' ? { src: probe.src, dst: probe.dst } : { dst: probe.dst }));
}

function endpoint(address: string, port: number): string {
  const a = parseAnyAddress(address);
  if (!a) return `${address}:${port}`;
  const t = addressText(a.addr, a.family);
  return a.family === 6 ? `[${t}]:${port}` : `${t}:${port}`;
}

function redirected(o: Outcome, probe: LawProbe): boolean {
  if ((o.outcome !== 'local' && o.outcome !== 'remote') || o.address === null || o.port === null) return false;
  const dst = parseEndpointText(probe.dst);
  const d = probe.from === 'local' ? addressedTo(dst) : dst;
  return endpoint(o.address, o.port) !== endpoint(addressText(d.addr, d.family), d.port);
}

function capturedAt(o: Outcome, probe: LawProbe, port: number): boolean {
  return o.outcome === 'local' && o.port === port && redirected(o, probe);
}

function describe(o: Outcome): string {
  const at = o.address !== null ? `${o.address.includes(':') ? `[${o.address}]` : o.address}:${o.port}` : '';
  switch (o.outcome) {
    case 'local': return `it is delivered to ${at}`;
    case 'remote': return `it leaves the pod for ${at}`;
    default: return `it is ${o.outcome}`;
  }
}

function probeText(p: LawProbe): string {
  const proto = (p.proto ?? 'tcp').toUpperCase();
  return p.from === 'local' ? `a ${proto} connection from uid ${p.uid} gid ${p.gid ?? p.uid} to ${p.dst}` : `a ${proto} connection from ${p.src} to ${p.dst}`;
}

/** A law over cells: the message of a broken cell, or null. */
type CellLaw = (setup: CaptureSetup, probe: LawProbe, o: Outcome) => string | null;

function prove(law: string, setup: CaptureSetup, from: 'local' | 'remote', proto: 'tcp' | 'udp', check: CellLaw): LawProof {
  const r = space(setup, from, proto);
  const all = cells(r, setup);
  let worst: { probe: LawProbe; message: string; key: bigint[]; family: Family } | null = null;
  for (const cell of all) {
    const family = cell.cls.family;
    const probe = probeAt(r, cell, family, proto);
    for (const o of outcomes(cell.cls, probe)) {
      const message = check(setup, probe, o);
      if (message === null) continue;
      const key = [BigInt(family), ...cell.lo];
      if (worst === null || less(key, worst.key)) worst = { probe, message, key, family };
      break;
    }
  }
  // What lenient reading of the setup's rule text dropped, so that a proof never hides it.
  const warned = parsed(setup).warnings;
  const warnings = warned.length > 0 ? { warnings: warned } : {};
  if (worst === null) return { law, holds: true, cells: all.length, spaces: [r], ...warnings };
  return { law, holds: false, counterexample: counterexample(law, setup, worst.probe, worst.family, worst.message), spaces: [r], ...warnings };
}

function less(a: readonly bigint[], b: readonly bigint[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

function counterexample(law: string, setup: CaptureSetup, probe: LawProbe, family: Family, message: string): Counterexample {
  const ns = new Netns(namespaceOptions(setup));
  const sport = probe.from === 'local' ? 41000 : 40000;
  const result = ns.connect({ ...probe, sport, ...(probe.from === 'remote' ? { iface: 'eth0' } : {}) } as Parameters<Netns['connect']>[0], { trace: true });
  const p = parsed(setup);
  const rs = family === 4 ? p.rules4 : p.rules6;
  return {
    law, message, family,
    rules: rs ? printIptablesSave(rs) : (setup.nft ?? ''),
    command: connectCommand(probe, listenOf(setup).text, family, {
      ...(setup.netns?.interfaces !== undefined ? { interfaces: interfacesOf(setup) } : {}),
      ...(setup.netns?.gateway !== undefined ? { gateway: typeof setup.netns.gateway === 'string' ? [setup.netns.gateway] : setup.netns.gateway } : {}),
    }),
    probe, result,
    ...(setup.config !== undefined ? { config: setup.config } : {}),
    details: `the smallest of every probe that breaks the law (explored exhaustively; the namespace listens on ${listenOf(setup).text.join(', ')})`,
    ...(p.warnings.length > 0 ? { warnings: p.warnings } : {}),
  };
}

/**
 * {@link proxyNeverCapturesItself} over every connection from the proxy's uids and gids.
 *
 * @example
 * ```ts
 * proveProxyNeverCapturesItself(linkerdCapture({})).holds; // true
 * ```
 */
export function proveProxyNeverCapturesItself(setup: CaptureSetup): LawProof {
  expectFields(setup, { proxy: 'object' }, 'setup');
  return prove(PROXY_NEVER_CAPTURES_ITSELF, setup, 'local', 'tcp', (s, probe, o) => {
    if (!isProxy(s, probe) || !capturedAt(o, probe, s.proxy.outboundPort)) return null;
    return `${probeText(probe)} (the proxy's own) is sent to the outbound proxy port ${s.proxy.outboundPort}: ${describe(o)}.`;
  });
}

/**
 * {@link appTrafficReachesProxy} over every app connection (every uid, gid, destination and port).
 *
 * @example
 * ```ts
 * const r = proveAppTrafficReachesProxy(setup);
 * if (!r.holds) throw new Error(explainCounterexample(r.counterexample));
 * ```
 */
export function proveAppTrafficReachesProxy(setup: CaptureSetup): LawProof {
  expectFields(setup, { proxy: 'object' }, 'setup');
  return prove(APP_TRAFFIC_REACHES_PROXY, setup, 'local', 'tcp', (s, probe, o) => {
    if (probe.from !== 'local' || isProxy(s, probe)) return null;
    const e = expectOutbound(s, probe);
    if (e.kind !== 'captured' || capturedAt(o, probe, s.proxy.outboundPort)) return null;
    return `${probeText(probe)} should reach the outbound proxy port ${s.proxy.outboundPort} (${e.why}), but ${describe(o)}.`;
  });
}

/**
 * {@link excludedNeverRedirected} over every app connection and every inbound connection.
 *
 * @example
 * ```ts
 * proveExcludedNeverRedirected(istioCapture({})).holds;
 * ```
 */
export function proveExcludedNeverRedirected(setup: CaptureSetup): LawProof {
  expectFields(setup, { proxy: 'object' }, 'setup');
  const check: CellLaw = (s, probe, o) => {
    if (isProxy(s, probe)) return null;
    const e = probe.from === 'local' ? expectOutbound(s, probe) : expectInbound(s, probe);
    if (e.kind !== 'bypass' || !redirected(o, probe)) return null;
    return `${probeText(probe)} is exempt (${e.why}), but ${describe(o)}.`;
  };
  const local = prove(EXCLUDED_NEVER_REDIRECTED, setup, 'local', 'tcp', check);
  if (!local.holds || setup.proxy.transparentInbound) return local;
  const remote = prove(EXCLUDED_NEVER_REDIRECTED, setup, 'remote', 'tcp', check);
  return remote.holds ? { ...local, cells: local.cells + remote.cells, spaces: [...local.spaces, ...remote.spaces] } : remote;
}

/**
 * {@link nonTcpNeverRedirected} over every UDP datagram, local and remote.
 *
 * @example
 * ```ts
 * proveNonTcpNeverRedirected(linkerdCapture({})).holds; // true
 * ```
 */
export function proveNonTcpNeverRedirected(setup: CaptureSetup): LawProof {
  expectFields(setup, { proxy: 'object' }, 'setup');
  const check: CellLaw = (s, probe, o) => {
    const dst = parseEndpointText(probe.dst);
    if (dnsPort(s, dst.port) || isSpecial(dst, s)) return null;
    if (probe.from === 'remote') {
      const src = parseAnyAddress(probe.src);
      if (!src || isSpecial({ ...dst, addr: src.addr }, s) || isLocal(s, { ...dst, addr: src.addr })) return null;
    }
    if (!redirected(o, probe)) return null;
    return `${probeText(probe)} should end where it was addressed, but ${describe(o)}.`;
  };
  const local = prove(NON_TCP_NEVER_REDIRECTED, setup, 'local', 'udp', check);
  if (!local.holds) return local;
  const remote = prove(NON_TCP_NEVER_REDIRECTED, setup, 'remote', 'udp', check);
  return remote.holds ? { ...local, cells: local.cells + remote.cells, spaces: [...local.spaces, ...remote.spaces] } : remote;
}

/**
 * {@link inboundReachesProxy} over every connection arriving on eth0. Setups with TPROXY
 * capture are refused (`UNSUPPORTED`): their delivery cannot be told apart from a direct one
 * by the class alone.
 *
 * @example
 * ```ts
 * proveInboundReachesProxy(linkerdCapture({})).holds; // true
 * ```
 */
export function proveInboundReachesProxy(setup: CaptureSetup): LawProof {
  expectFields(setup, { proxy: 'object' }, 'setup');
  if (setup.proxy.transparentInbound) throw new NetfilterSimError(diagnostic('UNSUPPORTED', 'proveInboundReachesProxy: TPROXY capture (transparentInbound) is not decided exhaustively; use the sampled law'));
  return prove(INBOUND_REACHES_PROXY, setup, 'remote', 'tcp', (s, probe, o) => {
    if (probe.from !== 'remote') return null;
    const e = expectInbound(s, probe);
    if (e.kind !== 'captured' || (o.outcome === 'local' && o.port === s.proxy.inboundPort)) return null;
    return `${probeText(probe)} should reach the inbound proxy port ${s.proxy.inboundPort} (${e.why}), but ${describe(o)}.`;
  });
}

/**
 * Every capture law, exhaustively: the first that fails (with its smallest counterexample), or
 * the proof of the last when all hold.
 *
 * @example
 * ```ts
 * const r = proveCaptureLaws(linkerdCapture({ portsToRedirect: [] }));
 * expect(r.holds).toBe(true);
 * ```
 */
export function proveCaptureLaws(setup: CaptureSetup): LawProof {
  expectFields(setup, { proxy: 'object' }, 'setup');
  const laws = [proveProxyNeverCapturesItself, proveAppTrafficReachesProxy, proveExcludedNeverRedirected, proveNonTcpNeverRedirected];
  let last: LawProof | null = null;
  for (const law of laws) {
    last = law(setup);
    if (!last.holds) return last;
  }
  if (!setup.proxy.transparentInbound) {
    last = proveInboundReachesProxy(setup);
  }
  return last!;
}
