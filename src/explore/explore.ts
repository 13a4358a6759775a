/**
 * `explore`: the exact partition of a namespace's probe space into classes that share one
 * outcome. For local probes the space is uid × gid × destination address × destination port,
 * for remote ones source address × destination address × destination port × in-interface, per
 * family. The space is cut up front by interface; each region is run once through the concrete
 * engine (`Netns.connectAll`: every hook, conntrack, NAT, loopback, sockets, the answer's path,
 * and every `statistic` branch) with an instrumented program that records each fact a rule
 * established about a probe field, while the namespace records the range of its own (routes,
 * local and special addresses, listeners, peers) that holds each probe address or port it reads.
 * The facts bound the set of probes that take the same path; that set becomes (part of) a class
 * and the rest of the region is explored again.
 *
 * @module
 */
import { expectArgument, expectFields } from '../model/guard.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { Netns } from '../engine/path/netns.js';
import { expectNetnsOptions } from '../engine/path/shapes.js';
import type { ConnectResult, ConnectSpec, NetnsOptions } from '../engine/path/netns.js';
import { defaultRegistry } from '../engine/rules/registry.js';
import { addressText } from '../model/address.js';
import { parseAnyAddress } from '../engine/state/routing.js';
import type { Family, Ruleset } from '../model/types.js';
import type { NftAnonSet, NftElement, NftPrefix, NftRange, NftRuleset, NftSetRef, NftTable, NftValue } from '../nftables/model.js';
import type { LoweredRuleset } from '../engine/rules/iptables-lower.js';
import type { NatRange, PortRange } from '../iptables/extensions/target-options.js';
import { FactRecorder, bigToWords, instrumentProgram, wordsToBig } from './instrument.js';
import type { FieldKind } from './instrument.js';
import { instrumentNft } from './instrument-nft.js';
import { EMPTY, contains, intersect, isSingleton, leastFree, normalize, range, size, splitAt, subtract } from './intervals.js';
import { readNarrowing } from './narrow.js';
import type { ExploreNarrowing, NarrowSets } from './narrow.js';
import type { IntervalSet } from './intervals.js';

/** Where explored probes come from. */
export type ExploreFrom = 'local' | 'remote';

/**
 * Options of {@link explore}: the namespace (as {@link Netns} takes it, policy routing included),
 * the space, and what narrows it ({@link ExploreNarrowing}).
 */
export interface ExploreOptions extends Omit<NetnsOptions, 'evaluator' | 'instrument' | 'instrumentNft' | 'observe'>, ExploreNarrowing {
  readonly from: ExploreFrom;
  /** Default tcp. */
  readonly proto?: 'tcp' | 'udp';
  /** Explore only this family (default: IPv4, then IPv6). */
  readonly family?: Family;
  /**
   * The probes' source port (default: 41000 for local connections and 40000 for remote clients,
   * fixed ports of the ephemeral range 32768–60999, so that every probe uses the same one).
   */
  readonly sport?: number;
  /**
   * Most regions explored before giving up with `UNSUPPORTED` (default 2,000,000): a rule set
   * can split the space into more classes than is useful to list.
   */
  readonly maxRegions?: number;
}

/** One range per field: numbers, or addresses as first and last address. */
export interface ExploreBox {
  readonly uid?: readonly [number, number];
  readonly gid?: readonly [number, number];
  readonly src?: readonly [string, string];
  readonly dst?: readonly [string, string];
  readonly dport?: readonly [number, number];
  /** The interface a remote probe arrives on. */
  readonly iface?: string;
}

/** One outcome of a class (several when `statistic --mode random` draws decide). */
export interface ExploreOutcome {
  readonly outcome: ConnectResult['outcome'];
  /** The socket's or the destination's address; `"dst"`/`"src"` where it is the probe's own. */
  readonly address: string | null;
  /** `"dport"` where it is the probe's own destination port. */
  readonly port: number | 'dport' | null;
  /** `"dst"` where it is the probe's own destination (address and port). */
  readonly originalDestination: string | null;
  readonly probability: number;
}

/** A set of probes that share one outcome, and the rules that decided it. */
export interface ExploreClass {
  readonly family: Family;
  readonly outcome: ConnectResult['outcome'] | 'random';
  readonly address: string | null;
  readonly port: number | 'dport' | null;
  readonly originalDestination: string | null;
  /** The union of these boxes is the class. */
  readonly boxes: readonly ExploreBox[];
  /** One probe of the class, as `connect` takes it. */
  readonly example: Readonly<Record<string, string | number>>;
  /** The rules whose targets acted on the way (not the jumps), in order, and DROP policies. */
  readonly rules: readonly string[];
  /** With random draws: every branch with its probability. */
  readonly alternatives?: readonly ExploreOutcome[];
  /** Matches the engine assumes rather than evaluates on this class's path (`limit`, `socket`, …). */
  readonly assumptions?: readonly string[];
}

/** What {@link explore} returns (and `explore --json` prints). */
export interface ExploreResult {
  readonly from: ExploreFrom;
  readonly fields: readonly string[];
  readonly proto: 'tcp' | 'udp';
  readonly sport: number;
  readonly classes: readonly ExploreClass[];
  /** How many regions were run through the namespace (a measure of the work done). */
  readonly regions: number;
  /**
   * The explored space per family: how many probes it holds (a decimal integer; the product of
   * the fields' sizes, after narrowing). A family the narrowing leaves empty is not listed.
   */
  readonly spaces: readonly { readonly family: Family; readonly probes: string }[];
  /** The narrowing options as given (each a list of strings), when any was. */
  readonly narrowed?: Readonly<Partial<Record<keyof ExploreNarrowing, readonly string[]>>>;
}

interface FieldDef {
  readonly name: 'uid' | 'gid' | 'src' | 'dst' | 'dport' | 'iface';
  readonly kind: FieldKind;
  readonly domain: IntervalSet;
  /** The ranges the namespace tells values apart by (routes, special ranges, listeners, …). */
  readonly sets: readonly (readonly [bigint, bigint])[];
  readonly constants: IntervalSet;
}

type Region = readonly IntervalSet[];

const U32 = 0xffffffffn;

function bad(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', message));
}

function prefixRange(addr: readonly number[], prefix: number, family: Family): [bigint, bigint] {
  const bits = family === 4 ? 32 : 128;
  const host = (1n << BigInt(bits - prefix)) - 1n;
  const base = wordsToBig(addr) & ~host & ((1n << BigInt(bits)) - 1n);
  return [base, base | host];
}

/** Ranges where the kernel's own address tests (martians, multicast, scope) change their answer. */
function specialRanges(family: Family): [bigint, bigint][] {
  const p = (text: string, prefix: number): [bigint, bigint] => prefixRange(parseAnyAddress(text)!.addr, prefix, family);
  if (family === 4) return [p('0.0.0.0', 32), p('0.0.0.0', 8), p('127.0.0.0', 8), p('224.0.0.0', 4), p('240.0.0.0', 4), p('255.255.255.255', 32)];
  return [p('::', 128), p('::1', 128), p('::ffff:0:0', 96), p('fe80::', 10), p('ff00::', 8)];
}

/** Every value of `kind` the rule sets' targets can write into a packet. */
function targetConstants(rulesets: readonly (Ruleset | NftRuleset)[], family: Family): { addrs: [bigint, bigint][]; ports: [bigint, bigint][] } {
  const addrs: [bigint, bigint][] = [];
  const ports: [bigint, bigint][] = [];
  const port = (r: PortRange | undefined): void => {
    if (r) ports.push([BigInt(r.min), BigInt(r.max)]);
  };
  for (const rs of rulesets) {
    if (isNftRuleset(rs) || rs.family !== family) continue;
    for (const t of rs.tables) {
      for (const c of t.chains) {
        for (const r of c.rules) {
          const tg = r.target;
          if (tg?.kind !== 'extension') continue;
          const o = tg.options as Record<string, unknown>;
          const to = o['to'] as NatRange | undefined;
          if (to) {
            if (to.addrMin) addrs.push([wordsToBig(to.addrMin), wordsToBig(to.addrMax ?? to.addrMin)]);
            port(to.ports);
          }
          port(o['toPorts'] as PortRange | undefined);
          if (typeof o['onPort'] === 'number') ports.push([BigInt(o['onPort']), BigInt(o['onPort'])]);
          const onIp = o['onIp'] as readonly number[] | undefined;
          if (onIp) addrs.push([wordsToBig(onIp), wordsToBig(onIp)]);
        }
      }
    }
  }
  for (const rs of rulesets) {
    if (!isNftRuleset(rs)) continue;
    const value = (v: NftValue | NftRange | NftPrefix, into: [bigint, bigint][]): void => {
      if (v.kind === 'value') into.push([v.value, v.value]);
      else if (v.kind === 'range') into.push([v.low.value, v.high.value]);
      else into.push([v.value.value, v.value.value]);
    };
    const addrOf = (v: NftValue | NftRange | NftPrefix): boolean => {
      const t = v.kind === 'value' ? v.type : v.kind === 'range' ? v.low.type : v.value.type;
      return t === (family === 4 ? 'ipv4_addr' : 'ipv6_addr');
    };
    const mapData = (m: NftAnonSet | NftSetRef, table: NftTable): NftElement[] => (m.kind === 'set' ? [...m.elements] : [...(table.sets.find((x) => x.name === m.name)?.elements ?? rs.tables.flatMap((t) => t.sets.filter((x) => x.name === m.name).flatMap((x) => x.elements)))]);
    for (const t of rs.tables) {
      for (const c of t.chains) {
        for (const r of c.rules) {
          for (const st of r.statements) {
            if (st.kind === 'nat') {
              if (st.addr) {
                if (st.addr.kind === 'map') {
                  for (const e of mapData(st.addr.mappings, t)) if (e.data?.kind === 'value' && addrOf(e.data)) value(e.data, addrs);
                } else if (addrOf(st.addr)) value(st.addr, addrs);
              }
              if (st.port && st.port.kind !== 'map') value(st.port, ports);
            } else if (st.kind === 'tproxy') {
              if (st.addr && addrOf(st.addr)) value(st.addr, addrs);
              if (st.port) value(st.port, ports);
            }
          }
        }
      }
    }
  }
  return { addrs, ports };
}

function isNftRuleset(r: Ruleset | NftRuleset): r is NftRuleset {
  return (r as { kind?: string }).kind === 'nftables';
}

/** The fields of the space, their domains, where the namespace cuts them, and its constants. */
function fieldDefs(ns: Netns, options: ExploreOptions, family: Family, sport: number): FieldDef[] {
  const routing = ns.routing;
  const addrCuts: [bigint, bigint][] = [];
  const addrConst: [bigint, bigint][] = [[0n, 0n]];
  const cutRange = (r: [bigint, bigint]): void => {
    addrCuts.push(r);
  };
  const point = (w: readonly number[]): void => {
    const v = wordsToBig(w);
    addrCuts.push([v, v]);
    addrConst.push([v, v]);
  };
  for (const r of specialRanges(family)) cutRange(r);
  addrConst.push(family === 4 ? [0x7f000001n, 0x7f000001n] : [1n, 1n]);
  for (const table of routing.tables.values()) {
    for (const r of table) {
      if (r.family !== family) continue;
      cutRange(prefixRange(r.dst, r.prefix, family));
      if (r.prefix === (family === 4 ? 32 : 128)) addrConst.push([wordsToBig(r.dst), wordsToBig(r.dst)]);
      if (r.via) point(r.via);
      if (r.prefsrc) point(r.prefsrc);
    }
  }
  for (const i of routing.ifaces) for (const a of family === 4 ? i.addrs4 : i.addrs6) point(a.addr);
  for (const l of options.listen ?? []) {
    const text = typeof l === 'number' ? null : typeof l === 'string' ? l : (l.address ?? null);
    if (text === null) continue;
    const m = /^\[([^\]]+)\]|^([^:/]+(?=:)|[0-9a-f:]*:[0-9a-f:]*(?=\]))/i.exec(text);
    const a = parseAnyAddress(m ? (m[1] ?? m[2] ?? '') : text.replace(/\/(tcp|udp)$/i, ''));
    if (a && a.family === family) point(a.addr);
  }
  for (const addr of Object.keys(options.peers ?? {})) {
    const a = parseAnyAddress(addr);
    if (a && a.family === family) point(a.addr);
  }
  const rulesets = [ns.ruleset4, ns.ruleset6, ns.nftRuleset];
  const tc = targetConstants(rulesets, family);
  for (const [a, b] of tc.addrs) {
    addrConst.push([a, b]);
  }
  const portCuts: [bigint, bigint][] = [];
  const portConst: [bigint, bigint][] = [[0n, 0n], [BigInt(sport), BigInt(sport)], ...tc.ports];
  const uidConst: [bigint, bigint][] = [[0n, 0n], [U32, U32]];
  const gidConst: [bigint, bigint][] = [[0n, 0n], [U32, U32]];
  for (const l of options.listen ?? []) {
    const spec = typeof l === 'number' ? { port: l } : typeof l === 'string' ? { port: Number(/(\d+)(?:\/(?:tcp|udp))?$/i.exec(l)?.[1] ?? 0) } : l;
    const p = BigInt(spec.port);
    portCuts.push([p, p]);
    portConst.push([p, p]);
    if (typeof l === 'object') {
      if (l.uid !== undefined) uidConst.push([BigInt(l.uid), BigInt(l.uid)]);
      const g = l.gid ?? l.uid;
      if (g !== undefined) gidConst.push([BigInt(g), BigInt(g)]);
    }
  }
  for (const ports of Object.values(options.peers ?? {})) for (const p of ports) {
    portCuts.push([BigInt(p), BigInt(p)]);
    portConst.push([BigInt(p), BigInt(p)]);
  }
  const addrMax = family === 4 ? U32 : (1n << 128n) - 1n;
  const addrDef = (name: 'src' | 'dst'): FieldDef => ({ name, kind: 'addr', domain: range(0n, addrMax), sets: addrCuts, constants: normalize(addrConst) });
  const dport: FieldDef = { name: 'dport', kind: 'port', domain: range(1n, 65535n), sets: portCuts, constants: normalize(portConst) };
  if (options.from === 'local') {
    return [
      { name: 'uid', kind: 'uid', domain: range(0n, U32), sets: [], constants: normalize(uidConst) },
      { name: 'gid', kind: 'gid', domain: range(0n, U32), sets: [], constants: normalize(gidConst) },
      addrDef('dst'),
      dport,
    ];
  }
  const ifaces = routing.ifaces.filter((i) => !i.loopback).map((i) => BigInt(i.index));
  if (ifaces.length === 0) bad('explore --from remote needs an interface other than lo');
  const ifaceSet = normalize(ifaces.map((i) => [i, i] as const));
  return [
    addrDef('src'),
    addrDef('dst'),
    dport,
    { name: 'iface', kind: 'iface', domain: ifaceSet, sets: ifaces.map((i) => [i, i] as const), constants: EMPTY },
  ];
}

/**
 * The field's values grouped by the namespace's sets that hold them: values in exactly the same
 * sets are told apart by nothing the namespace decides outside the rules (a longest-prefix match,
 * a local or special address, a listener, a peer), so they need not be cut apart up front. Each
 * group is one set (a union of ranges), ascending by its least value.
 */
function fieldClasses(def: FieldDef): IntervalSet[] {
  const starts = new Map<bigint, number[]>();
  const ends = new Map<bigint, number[]>();
  const cuts: bigint[] = [];
  def.sets.forEach(([a, b], id) => {
    let l = starts.get(a);
    if (!l) starts.set(a, (l = []));
    l.push(id);
    let e = ends.get(b + 1n);
    if (!e) ends.set(b + 1n, (e = []));
    e.push(id);
    cuts.push(a, b + 1n);
  });
  const active = new Map<number, number>();
  const groups = new Map<string, [bigint, bigint][]>();
  const sorted = [...new Set(cuts)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  let k = 0;
  for (const piece of splitAt(def.domain, cuts)) {
    const lo = piece[0]!;
    // Every boundary at or below the piece's start has been passed.
    while (k < sorted.length && sorted[k]! <= lo) {
      const c = sorted[k]!;
      for (const id of ends.get(c) ?? []) active.set(id, (active.get(id) ?? 1) - 1);
      for (const id of starts.get(c) ?? []) active.set(id, (active.get(id) ?? 0) + 1);
      k++;
    }
    const ids: number[] = [];
    for (const [id, n] of active) if (n > 0) ids.push(id);
    ids.sort((a, b) => a - b);
    // Sets of equal ranges (one route in two tables, a point named twice) tell nothing more.
    const key = def.kind === 'iface' ? String(lo) : ids.map((id) => `${def.sets[id]![0]}-${def.sets[id]![1]}`).join(',');
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    for (let i = 0; i < piece.length; i += 2) g.push([piece[i]!, piece[i + 1]!]);
  }
  return [...groups.values()].map((g) => normalize(g));
}

/** The group (of {@link fieldClasses}) that holds a value, by a binary search over the groups' ranges. */
function cellLookup(groups: readonly IntervalSet[]): (v: bigint) => IntervalSet {
  const starts: bigint[] = [];
  const owner: IntervalSet[] = [];
  const pieces: [bigint, IntervalSet][] = [];
  for (const g of groups) for (let i = 0; i < g.length; i += 2) pieces.push([g[i]!, g]);
  pieces.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  for (const [lo, g] of pieces) {
    starts.push(lo);
    owner.push(g);
  }
  return (v) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= v) lo = mid;
      else hi = mid - 1;
    }
    return owner[lo]!;
  };
}

/** The representative of each field: the least value no constant and no other field's representative takes. */
function representatives(fields: readonly FieldDef[], region: Region): { reps: bigint[]; pinned: boolean[] } {
  const reps: bigint[] = [];
  const pinned: boolean[] = [];
  for (let f = 0; f < fields.length; f++) {
    const def = fields[f]!;
    const set = region[f]!;
    const taken: bigint[] = [];
    for (let g = 0; g < f; g++) if (fields[g]!.kind === def.kind) taken.push(reps[g]!);
    // The least value outside the constants that no other field of the kind took.
    const rep = leastFree(set, def.constants, taken);
    if (rep !== null) {
      reps.push(rep);
      pinned.push(false);
    } else {
      reps.push(set[0]!);
      pinned.push(!isSingleton(set));
    }
  }
  return { reps, pinned };
}

function pairs(s: IntervalSet): [bigint, bigint][] {
  const out: [bigint, bigint][] = [];
  for (let i = 0; i < s.length; i += 2) out.push([s[i]!, s[i + 1]!]);
  return out;
}

/** `outer ∖ inner` for products with `inner ⊆ outer`, as disjoint products. */
function difference(outer: Region, inner: Region): Region[] {
  const out: Region[] = [];
  for (let f = 0; f < outer.length; f++) {
    const rest = subtract(outer[f]!, inner[f]!);
    if (rest.length === 0) continue;
    out.push(outer.map((s, g) => (g < f ? inner[g]! : g === f ? rest : s)));
  }
  return out;
}

function addrText(v: bigint, family: Family): string {
  return addressText(bigToWords(v, family), family);
}

function endpointText(addr: string, port: number | bigint, family: Family): string {
  return family === 6 ? `[${addr}]:${port}` : `${addr}:${port}`;
}

/** Where a local connection to `addr` is addressed: 0.0.0.0 and :: are the host (127.0.0.1, ::1). */
function addressedText(addr: string, family: Family): string {
  return addr === '0.0.0.0' || addr === '::' ? (family === 4 ? '127.0.0.1' : '::1') : addr;
}

/** The probe a representative stands for, as `connect` takes it. */
function probeSpec(fields: readonly FieldDef[], reps: readonly bigint[], family: Family, from: ExploreFrom, proto: 'tcp' | 'udp', sport: number, ifaceName: (i: number) => string): { spec: ConnectSpec; example: Record<string, string | number> } {
  const get = (n: FieldDef['name']): bigint => reps[fields.findIndex((f) => f.name === n)]!;
  const dst = endpointText(addrText(get('dst'), family), get('dport'), family);
  if (from === 'local') {
    const uid = Number(get('uid'));
    const gid = Number(get('gid'));
    return { spec: { from: 'local', uid, gid, dst, sport, proto }, example: { uid, gid, dst } };
  }
  const src = addrText(get('src'), family);
  const iface = ifaceName(Number(get('iface')));
  return { spec: { from: 'remote', src, dst, sport, proto, iface }, example: { src, dst, iface } };
}

interface Signature {
  readonly outcomes: ExploreOutcome[];
  readonly rules: string[];
  readonly assumptions: string[];
}

/**
 * Explores every probe of the space: the classes are disjoint, cover it, and for each probe
 * `Netns.connect` (in a namespace with no earlier connections, with the same source port) gives
 * the outcome of the class that holds it.
 *
 * iptables rules and native nft rules (`nft` option, or nft text as `rules`) are explored alike,
 * alone or together.
 *
 * Throws `UNSUPPORTED` naming the rule when a match cannot be split exactly (`statistic --mode
 * nth`, nft `limit` and `numgen inc`, `recent` with a short `--mask` or comparing a source with a
 * destination, masks that are not prefixes, DNAT to an address range).
 *
 * @example
 * ```ts
 * const r = explore({ rules: saveText, listen: [4140, 4143], from: 'local' });
 * for (const c of r.classes) console.log(c.outcome, c.boxes.length, c.rules);
 * ```
 */
export function explore(options: ExploreOptions, internal?: { readonly eagerCuts?: boolean }): ExploreResult {
  expectNetnsOptions(options, 'options', {
    from: { kind: 'string', oneOf: ['local', 'remote'] },
    proto: { kind: ['string', 'undefined'], oneOf: ['tcp', 'udp'] },
    family: { kind: ['integer', 'undefined'], oneOf: [4, 6] },
    sport: ['integer', 'undefined'],
    maxRegions: ['integer', 'undefined'],
  });
  const from = options.from;
  if (from !== 'local' && from !== 'remote') bad(`explore: from is local or remote, not "${String(from)}"`);
  const proto = options.proto ?? 'tcp';
  const sport = options.sport ?? (from === 'local' ? 41000 : 40000);
  if (!Number.isInteger(sport) || sport < 1 || sport > 65535) bad(`explore: bad source port "${sport}"`);
  const rec = new FactRecorder();
  const registry = options.registry ?? defaultRegistry();
  const { from: _f, proto: _p, family: _fam, sport: _s, maxRegions: _m, dst: _nd, src: _ns, dport: _np, uid: _nu, gid: _ng, iface: _ni, ...nsOptions } = options;
  const narrow = readNarrowing(options, from);
  // Built-in chains whose policy is DROP: a run that moved one's counter was dropped by it.
  const dropPolicies: { family: Family; slot: number; text: string; seen: number }[] = [];
  const instrument = (program: LoweredRuleset): LoweredRuleset => {
    const out = instrumentProgram(program, registry, rec);
    for (const t of out.tables) {
      if (t === null) continue;
      for (const c of t.chains) if (c.builtin && c.policyName === 'DROP') dropPolicies.push({ family: program.family, slot: c.id, text: `-P ${c.name} DROP (${t.name})`, seen: 0 });
    }
    return out;
  };
  // Native nft chains record into the same recorder (instrument-nft.ts).
  // The namespace's own reads of addresses and ports record which of its ranges they were in.
  const observe = { addr: (w: readonly number[]): void => rec.observeAddr(w), port: (v: number): void => rec.observePort(v) };
  const ns = new Netns({ ...nsOptions, registry, evaluator: 'lowered', instrument, instrumentNft: (ruleset) => instrumentNft(ruleset, rec), observe });
  const maxRegions = options.maxRegions ?? 2_000_000;
  let explored = 0;
  const classes: ExploreClass[] = [];
  const spaces: { family: Family; probes: string }[] = [];
  for (const family of options.family ? [options.family] : ([4, 6] as const)) {
    const fields = narrowFields(fieldDefs(ns, options, family, sport), narrow, family, ns);
    if (fields.some((f) => f.domain.length === 0)) continue;
    spaces.push({ family, probes: fields.reduce((n, f) => n * size(f.domain), 1n).toString() });
    const kinds = fields.map((f) => f.kind);
    const ifaceName = (i: number): string => ns.routing.ifaceByIndex(i)?.name ?? '?';
    // The namespace's own ranges, field by field. Interfaces are cut apart up front; addresses
    // and ports only where a run reads them (routing, special addresses, listeners, peers), so
    // that a region the rules decide alone is never cut by them. With eagerCuts (a check of the
    // lazy cuts), every field is cut up front.
    const groups = fields.map(fieldClasses);
    const cells = groups.map(cellLookup);
    let reps: bigint[] = [];
    rec.cellOf = (f) => cells[f]!(reps[f]!);
    let work: Region[] = [[]];
    fields.forEach((def, f) => {
      const pieces = internal?.eagerCuts || (def.kind !== 'addr' && def.kind !== 'port') ? groups[f]! : [def.domain];
      work = work.flatMap((r) => pieces.map((p) => [...r, p]));
    });
    // A stack: the lowest regions first, so that a class's example is the first of its probes the
    // search meets.
    work.reverse();
    const byKey = new Map<string, { sig: Signature; regions: Region[]; example: Record<string, string | number> }>();
    const flexible: { key: string; sig: Signature; litKey: string; lit: Signature; region: Region; example: Record<string, string | number> }[] = [];
    while (work.length > 0) {
      let region = work.pop()!;
      if (++explored > maxRegions) {
        throw new NetfilterSimError(diagnostic('UNSUPPORTED', `explore: more than ${maxRegions} regions; the rule set splits the space too finely to list (raise maxRegions)`));
      }
      const chosen = representatives(fields, region);
      reps = chosen.reps;
      const pinned = chosen.pinned;
      if (pinned.some((p) => p)) {
        const at = region.map((s, f) => (pinned[f] ? range(reps[f]!, reps[f]!) : s));
        work.push(...difference(region, at));
        region = at;
      }
      const live = region.map((s) => !isSingleton(s));
      rec.begin(kinds, reps.map((v, f) => (kinds[f] === 'addr' ? bigToWords(v, family) : [Number(v)])), live);
      const { spec, example } = probeSpec(fields, reps, family, from, proto, sport, ifaceName);
      for (const d of dropPolicies) d.seen = ns.counterAt(d.family, d.slot);
      let results: readonly ConnectResult[] = [ns.connect(spec, { trace: false })];
      ns.flushConntrack();
      ns.clearRecent();
      if (rec.random) {
        // A `statistic --mode random` draw was on the path: every branch, as connect --enumerate.
        rec.begin(kinds, rec.reps, live);
        for (const d of dropPolicies) d.seen = ns.counterAt(d.family, d.slot);
        results = ns.connectAll(spec, { trace: false });
      }
      // Policies that dropped (rules name themselves as they fire), in the program's order.
      const policies: string[] = [];
      for (const d of dropPolicies) if (ns.counterAt(d.family, d.slot) !== d.seen) policies.push(d.text);
      // The facts, per field: every set the value was in, none it was not in.
      const inside: IntervalSet[] = region.slice();
      const outside: IntervalSet[][] = fields.map(() => []);
      for (let k = 0; k < rec.fields.length; k++) {
        const f = rec.fields[k]!;
        const set = rec.sets[k]!;
        if (rec.holds[k]) inside[f] = intersect(inside[f]!, set);
        else if (!outside[f]!.includes(set)) outside[f]!.push(set);
      }
      const same: Region = inside.map((s, f) => outside[f]!.reduce((acc, o) => subtract(acc, o), s));
      for (let f = 0; f < fields.length; f++) {
        if (!contains(same[f]!, reps[f]!)) {
          throw new NetfilterSimError(diagnostic('UNSUPPORTED', `explore: internal inconsistency on field ${fields[f]!.name} (the probe ${JSON.stringify(example)} is outside its own class)`));
        }
      }
      work.push(...difference(region, same));
      const assumptions = [...rec.assumptions].sort();
      const rules = policies.length > 0 ? [...rec.fired, ...policies] : rec.fired.slice();
      const sig = signature(results, fields, reps, live, family, rules, assumptions, false);
      const key = JSON.stringify(sig);
      // The literal reading differs only where the region fixes a field to one value.
      const lit = live.every((l, f) => l || (fields[f]!.name !== 'dst' && fields[f]!.name !== 'dport' && fields[f]!.name !== 'src')) ? sig : signature(results, fields, reps, live, family, rules, assumptions, true);
      const litKey = lit === sig ? key : JSON.stringify(lit);
      if (key === litKey) {
        const entry = byKey.get(key);
        if (entry) entry.regions.push(same);
        else byKey.set(key, { sig, regions: [same], example });
      } else flexible.push({ key, sig, litKey, lit, region: same, example });
    }
    // Regions whose outcome reads either way join a class that already has one of the readings.
    for (const f of flexible) {
      const entry = byKey.get(f.litKey) ?? byKey.get(f.key);
      if (entry) entry.regions.push(f.region);
      else byKey.set(f.key, { sig: f.sig, regions: [f.region], example: f.example });
    }
    // Classes in the order of their least probe (fields compared in their order).
    const built = [...byKey.values()].map(({ sig, regions, example }) => toClass(sig, regions, example, fields, family, ifaceName));
    built.sort((a, b) => compareBoxes(a.first, b.first));
    for (const b of built) classes.push(b.cls);
  }
  if (spaces.length === 0) {
    throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `explore: the narrowed space is empty (no ${options.family ? `IPv${options.family} ` : ''}probe has every narrowed field's value)`));
  }
  const result: { -readonly [K in keyof ExploreResult]: ExploreResult[K] } = { from, fields: from === 'local' ? ['uid', 'gid', 'dst', 'dport'] : ['src', 'dst', 'dport', 'iface'], proto, sport, classes, regions: explored, spaces };
  const given: Partial<Record<keyof ExploreNarrowing, readonly string[]>> = {};
  for (const k of ['uid', 'gid', 'src', 'dst', 'dport', 'iface'] as const) {
    const v = options[k];
    if (v !== undefined) given[k] = (Array.isArray(v) ? (v as readonly (string | number)[]) : [v as string | number]).flatMap((x) => String(x).split(',').map((t) => t.trim()));
  }
  if (Object.keys(given).length > 0) result.narrowed = given;
  return result;
}

/** The fields with their domains cut down to the narrowing (addresses of `family`). */
function narrowFields(fields: FieldDef[], narrow: NarrowSets, family: Family, ns: Netns): FieldDef[] {
  return fields.map((def) => {
    let allowed: IntervalSet | undefined;
    switch (def.name) {
      case 'dst':
      case 'src':
        allowed = narrow[def.name]?.[family];
        break;
      case 'dport':
      case 'uid':
      case 'gid':
        allowed = narrow[def.name];
        break;
      case 'iface':
        if (narrow.iface) {
          allowed = normalize(
            narrow.iface.map((name) => {
              const i = ns.routing.ifaces.find((x) => x.name === name);
              if (!i) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `explore: iface: the namespace has no interface "${name}" (it has ${ns.routing.ifaces.map((x) => x.name).join(', ')})`));
              if (i.loopback) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `explore: iface: remote probes do not arrive on the loopback interface "${name}"`));
              return [BigInt(i.index), BigInt(i.index)] as const;
            }),
          );
        }
        break;
    }
    return allowed === undefined ? def : { ...def, domain: intersect(def.domain, allowed) };
  });
}

function signature(results: readonly ConnectResult[], fields: readonly FieldDef[], reps: readonly bigint[], live: readonly boolean[], family: Family, rules: string[], assumptions: string[], literal: boolean): Signature {
  const idx = (n: string): number => fields.findIndex((f) => f.name === n);
  const dstText = addrText(reps[idx('dst')]!, family);
  const srcIdx = idx('src');
  const srcText = srcIdx >= 0 ? addrText(reps[srcIdx]!, family) : null;
  const dport = Number(reps[idx('dport')]!);
  // SO_ORIGINAL_DST of a local connection to 0.0.0.0 (::) names 127.0.0.1 (::1), where it went.
  const toText = srcIdx >= 0 ? dstText : addressedText(dstText, family);
  const original = endpointText(toText, dport, family);
  // A value equal to a field that the region fixes to one value is both the probe's own and a
  // literal: `literal` picks the second reading.
  const dIdx = idx('dst');
  const pIdx = idx('dport');
  const own = (f: number, _v: bigint): boolean => !literal || live[f]!;
  const outcomes: ExploreOutcome[] = results.map((r) => ({
    outcome: r.outcome,
    address: r.address === null ? null : r.address === toText && own(dIdx, reps[dIdx]!) ? 'dst' : srcIdx >= 0 && r.address === srcText && own(srcIdx, reps[srcIdx]!) ? 'src' : r.address,
    port: r.port === null ? null : r.port === dport && own(pIdx, reps[pIdx]!) ? 'dport' : r.port,
    originalDestination: r.originalDestination === null ? null : r.originalDestination === original ? 'dst' : r.originalDestination,
    probability: r.probability ?? 1,
  }));
  return { outcomes, rules, assumptions };
}

function toClass(sig: Signature, regions: readonly Region[], example: Record<string, string | number>, fields: readonly FieldDef[], family: Family, ifaceName: (i: number) => string): { cls: ExploreClass; first: Box } {
  const boxes = coalesce(mergeRegions(regions).flatMap((r) => expand(r, fields)), fields);
  const first = sig.outcomes[0]!;
  const all = (k: 'outcome' | 'address' | 'port' | 'originalDestination'): unknown => (sig.outcomes.every((o) => o[k] === first[k]) ? first[k] : null);
  const single = sig.outcomes.length === 1;
  const c: { -readonly [K in keyof ExploreClass]: ExploreClass[K] } = {
    family,
    outcome: single ? first.outcome : ((all('outcome') as ExploreClass['outcome'] | null) ?? 'random'),
    address: all('address') as string | null,
    port: all('port') as number | 'dport' | null,
    originalDestination: all('originalDestination') as string | null,
    boxes: boxes.map((b) => boxJson(b, fields, family, ifaceName)),
    example,
    rules: sig.rules,
  };
  if (!single) c.alternatives = sig.outcomes;
  if (sig.assumptions.length > 0) c.assumptions = sig.assumptions;
  return { cls: c, first: boxes[0]! };
}

type Box = readonly (readonly [bigint, bigint])[];

/**
 * Unites regions that are equal in every field but one (in that field), until none are: the
 * same set as the regions, in fewer products, before they are expanded into boxes.
 */
function mergeRegions(regions: readonly Region[]): Region[] {
  if (regions.length < 2) return regions.slice();
  const texts = new Map<IntervalSet, string>();
  const text = (set: IntervalSet): string => {
    let t = texts.get(set);
    if (t === undefined) texts.set(set, (t = set.join(',')));
    return t;
  };
  let cur = regions.slice();
  for (let round = 0; round < 8; round++) {
    let changed = false;
    for (let f = 0; f < cur[0]!.length; f++) {
      const groups = new Map<string, Region[]>();
      for (const r of cur) {
        let key = '';
        for (let g = 0; g < r.length; g++) if (g !== f) key += `${text(r[g]!)}|`;
        let list = groups.get(key);
        if (!list) groups.set(key, (list = []));
        list.push(r);
      }
      if (groups.size === cur.length) continue;
      const next: Region[] = [];
      for (const list of groups.values()) {
        if (list.length === 1) {
          next.push(list[0]!);
          continue;
        }
        changed = true;
        const all: [bigint, bigint][] = [];
        for (const r of list) all.push(...pairs(r[f]!));
        const united = normalize(all);
        next.push(list[0]!.map((s, g) => (g === f ? united : s)));
      }
      cur = next;
    }
    if (!changed) break;
  }
  return cur;
}

function expand(r: Region, fields: readonly FieldDef[]): Box[] {
  let out: [bigint, bigint][][] = [[]];
  for (let f = 0; f < r.length; f++) {
    const s = r[f]!;
    // A box names one interface: regions united across interfaces with adjacent indexes part again.
    const ps = fields[f]!.kind === 'iface' ? pairs(s).flatMap(([a, b]) => Array.from({ length: Number(b - a) + 1 }, (_, i) => [a + BigInt(i), a + BigInt(i)] as [bigint, bigint])) : pairs(s);
    out = out.flatMap((b) => ps.map((p) => [...b, p]));
  }
  return out;
}

/** Merges boxes that differ in one field only and touch there, until none do. */
function coalesce(boxes: Box[], fields: readonly FieldDef[]): Box[] {
  let cur = boxes;
  for (let round = 0; round < 8; round++) {
    let changed = false;
    for (let f = 0; f < fields.length; f++) {
      if (fields[f]!.kind === 'iface') continue;
      const groups = new Map<string, Box[]>();
      for (const b of cur) {
        const key = b.map((p, g) => (g === f ? '' : `${p[0]}-${p[1]}`)).join('|');
        let list = groups.get(key);
        if (!list) groups.set(key, (list = []));
        list.push(b);
      }
      const next: Box[] = [];
      for (const list of groups.values()) {
        list.sort((a, b) => (a[f]![0] < b[f]![0] ? -1 : 1));
        let acc = list[0]!;
        for (let i = 1; i < list.length; i++) {
          const b = list[i]!;
          if (b[f]![0] <= acc[f]![1] + 1n) {
            acc = acc.map((p, g) => (g === f ? ([p[0], b[f]![1] > p[1] ? b[f]![1] : p[1]] as const) : p));
            changed = true;
          } else {
            next.push(acc);
            acc = b;
          }
        }
        next.push(acc);
      }
      cur = next;
    }
    if (!changed) break;
  }
  return cur.sort(compareBoxes);
}

/** Boxes by their least corner, fields compared in their order. */
function compareBoxes(a: Box, b: Box): number {
  for (let g = 0; g < a.length; g++) if (a[g]![0] !== b[g]![0]) return a[g]![0] < b[g]![0] ? -1 : 1;
  return 0;
}

function boxJson(b: Box, fields: readonly FieldDef[], family: Family, ifaceName: (i: number) => string): ExploreBox {
  const out: Record<string, unknown> = {};
  fields.forEach((def, g) => {
    const [lo, hi] = b[g]!;
    if (def.kind === 'addr') out[def.name] = [addrText(lo, family), addrText(hi, family)];
    else if (def.kind === 'iface') out[def.name] = ifaceName(Number(lo));
    else out[def.name] = [Number(lo), Number(hi)];
  });
  return out as ExploreBox;
}

/**
 * The class that holds a probe, or undefined when none does (the probe is outside the space).
 *
 * @example
 * ```ts
 * const c = classOf(explore({ rules, from: 'local' }), { uid: 1000, gid: 1000, dst: '10.96.0.10:80' });
 * ```
 */
export function classOf(result: ExploreResult, probe: { uid?: number; gid?: number; src?: string; dst: string; iface?: string }): ExploreClass | undefined {
  expectFields(result, { classes: 'array', fields: 'array' }, 'result');
  expectFields(probe, { dst: 'string', uid: ['integer', 'undefined'], gid: ['integer', 'undefined'], src: ['string', 'undefined'], iface: ['string', 'undefined'] }, 'probe');
  const m = /^\[([^\]]+)\]:(\d+)$|^([^:]+):(\d+)$/.exec(probe.dst);
  if (!m) bad(`classOf: bad destination "${probe.dst}"`);
  const dst = parseAnyAddress(m[1] ?? m[3]!);
  if (!dst) bad(`classOf: bad destination "${probe.dst}"`);
  const dport = Number(m[2] ?? m[4]);
  const dv = wordsToBig(dst.addr);
  const src = probe.src !== undefined ? parseAnyAddress(probe.src) : null;
  const inAddr = (r: readonly [string, string] | undefined, v: bigint, fam: Family): boolean => {
    if (!r) return true;
    const lo = parseAnyAddress(r[0]);
    const hi = parseAnyAddress(r[1]);
    return lo !== null && hi !== null && lo.family === fam && wordsToBig(lo.addr) <= v && v <= wordsToBig(hi.addr);
  };
  const inNum = (r: readonly [number, number] | undefined, v: number | undefined): boolean => !r || (v !== undefined && r[0] <= v && v <= r[1]);
  for (const c of result.classes) {
    if (c.family !== dst.family) continue;
    for (const b of c.boxes) {
      if (!inAddr(b.dst, dv, dst.family) || !inNum(b.dport, dport)) continue;
      if (result.from === 'local') {
        if (inNum(b.uid, probe.uid) && inNum(b.gid, probe.gid ?? probe.uid)) return c;
      } else if (src !== null && inAddr(b.src, wordsToBig(src.addr), src.family) && b.iface === probe.iface) return c;
    }
  }
  return undefined;
}

/**
 * What a class (or an outcome of one, or of a summary) says `connect` gives for one of its probes: the literal `"dst"`/`"dport"`/`"src"`
 * replaced by the probe's own values (a local probe's destination 0.0.0.0 or :: by 127.0.0.1 or ::1,
 * where `connect()` sends it). With random draws, the first alternative.
 */
export function expectedFor(c: ExploreClass | ExploreOutcome | (Pick<ExploreOutcome, 'address' | 'port' | 'originalDestination'> & { readonly outcome: string }), probe: { src?: string; dst: string }): { outcome: string; address: string | null; port: number | null; originalDestination: string | null } {
  expectArgument(c, 'object', 'class');
  expectFields(probe, { dst: 'string', uid: ['integer', 'undefined'], gid: ['integer', 'undefined'], src: ['string', 'undefined'], iface: ['string', 'undefined'] }, 'probe');
  if (!/^\[([^\]]+)\]:(\d+)$|^([^:]+):(\d+)$/.test(probe.dst)) bad(`expectedFor: bad destination "${probe.dst}"`);
  const m = /^\[([^\]]+)\]:(\d+)$|^([^:]+):(\d+)$/.exec(probe.dst)!;
  const addr = m[1] ?? m[3]!;
  const port = Number(m[2] ?? m[4]);
  const canon = parseAnyAddress(addr)!;
  const text = addressText(canon.addr, canon.family);
  const srcText = probe.src !== undefined ? addressText(parseAnyAddress(probe.src)!.addr, parseAnyAddress(probe.src)!.family) : null;
  // A local probe to 0.0.0.0 (::) is addressed to 127.0.0.1 (::1): that is its destination.
  const to = probe.src === undefined ? addressedText(text, canon.family) : text;
  return {
    outcome: c.outcome,
    address: c.address === 'dst' ? to : c.address === 'src' ? srcText : c.address,
    port: c.port === 'dport' ? port : c.port,
    originalDestination: c.originalDestination === 'dst' ? endpointText(to, port, canon.family) : c.originalDestination,
  };
}
