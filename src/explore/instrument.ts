/**
 * The engine's lowered program, instrumented: every test a rule makes on a value that can carry
 * a probe's own field (an address, a port, a uid or gid) also records the fact it established
 * ("the destination is in 10.96.0.0/12: yes"), so that one concrete run through the namespace
 * yields the exact set of probes that take the same path. Tests on values no probe field
 * reaches (protocol, flags, marks, conntrack state, interfaces once the region fixes them) need
 * no fact: they come out the same for every probe of the region.
 *
 * The instrumented form is the engine's own {@link LoweredRuleset} with the base address and
 * port tests moved into closures; the dispatch index stays, and each skip it makes records what
 * it established about the skipped rules' keys. A front end that lowers into that form is
 * explored the same way.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import type { PacketView } from '../model/packet.js';
import type { Family, Rule } from '../model/types.js';
import type { DispatchRun, LoweredRule, LoweredRuleset, LoweredTable } from '../engine/rules/iptables-lower.js';
import type { ExtensionRegistry } from '../engine/rules/registry.js';
import { isAssumed } from '../engine/rules/registry.js';
import type { MultiportOptions } from '../iptables/extensions/match/multiport.js';
import type { OwnerOptions } from '../iptables/extensions/match/owner.js';
import type { IprangeOptions } from '../iptables/extensions/match/iprange.js';
import type { TcpOptions } from '../iptables/extensions/match/tcp.js';
import type { ConntrackOptions } from '../iptables/extensions/match/conntrack.js';
import type { RecentOptions } from '../iptables/extensions/match/recent.js';
import type { DnatOptions, PortRange, RedirectOptions } from '../iptables/extensions/target-options.js';
import { range, normalize } from './intervals.js';
import type { IntervalSet } from './intervals.js';

/** What kind of value a probe field is. @internal */
export type FieldKind = 'addr' | 'port' | 'uid' | 'gid' | 'iface';

/**
 * Collects the facts one run establishes. A value is a probe field's own when it equals that
 * field's representative: representatives are chosen apart from every constant the namespace
 * can put into a packet (see `explore.ts`), so equality means identity.
 * @internal
 */
export class FactRecorder {
  kinds: FieldKind[] = [];
  /** Representative per field: address words, or a one-element array for numbers. */
  reps: (readonly number[])[] = [];
  /** Whether the field still ranges over more than one value (else no fact is needed). */
  live: boolean[] = [];
  /** Facts: field index, set, whether the value is in it. */
  readonly fields: number[] = [];
  readonly sets: IntervalSet[] = [];
  readonly holds: boolean[] = [];
  readonly assumptions = new Set<string>();
  /** Whether a `statistic --mode random` draw was made on the way. */
  random = false;
  /** Texts of the rules whose targets acted (verdicts, RETURN, extension targets), in order. */
  readonly fired: string[] = [];
  /**
   * The namespace's own range (see `explore.ts`) that holds field f's representative: the set
   * of values the namespace's routing, special-address checks, listeners and peers cannot tell
   * from it. Null: no namespace ranges (nothing is recorded by {@link observeAddr}).
   */
  cellOf: ((f: number) => IntervalSet) | null = null;
  /** Fields whose namespace range is already a fact of this run. */
  private readonly observed: boolean[] = [];

  begin(kinds: FieldKind[], reps: (readonly number[])[], live: boolean[]): void {
    this.kinds = kinds;
    this.reps = reps;
    this.live = live;
    this.fields.length = 0;
    this.sets.length = 0;
    this.holds.length = 0;
    this.assumptions.clear();
    this.fired.length = 0;
    this.random = false;
    this.observed.length = 0;
  }

  /**
   * The namespace read an address (a route lookup, a local or special address test, a listener
   * or peer lookup): when it is a field's own, the field's namespace range becomes a fact.
   */
  observeAddr(words: readonly number[]): void {
    if (this.cellOf !== null) this.observe(this.addrField(words));
  }

  /** The namespace read a port (a listener or peer lookup). */
  observePort(v: number): void {
    if (this.cellOf !== null) this.observe(this.numField('port', v));
  }

  private observe(f: number): void {
    if (f < 0 || this.observed[f]) return;
    this.observed[f] = true;
    this.fact(f, this.cellOf!(f), true);
  }

  /** A rule matched and its target acts. */
  fire(text: string): void {
    if (!this.fired.includes(text)) this.fired.push(text);
  }

  private fact(f: number, set: IntervalSet, holds: boolean): void {
    this.fields.push(f);
    this.sets.push(set);
    this.holds.push(holds);
  }

  /** A test of an address (one word for IPv4, four for IPv6). */
  addr(words: readonly number[], set: IntervalSet, holds: boolean): void {
    const f = this.addrField(words);
    if (f >= 0) this.fact(f, set, holds);
  }

  /**
   * The live address field whose representative `words` is, or -1. Live fields of one kind have
   * different representatives, so at most one is.
   */
  private addrField(words: readonly number[]): number {
    for (let f = 0; f < this.kinds.length; f++) {
      if (this.kinds[f] !== 'addr' || !this.live[f]) continue;
      const r = this.reps[f]!;
      if (r.length !== words.length) continue;
      let eq = true;
      for (let i = 0; i < r.length; i++) if (r[i]! >>> 0 !== words[i]! >>> 0) eq = false;
      if (eq) return f;
    }
    return -1;
  }

  /**
   * Two addresses were compared for equality. Both a field's own (or both fixed over the region):
   * the answer is the same for every probe, no fact. One a field's own and the other fixed: the
   * field is not that value. Returns false when they are two fields' own values, whose equality
   * no product of ranges can state.
   */
  compareAddrs(a: readonly number[], b: readonly number[]): boolean {
    const fa = this.addrField(a);
    const fb = this.addrField(b);
    if (fa === fb) return true;
    if (fa >= 0 && fb >= 0) return false;
    const [f, other] = fa >= 0 ? [fa, b] : [fb, a];
    const v = wordsToBig(other);
    this.fact(f, range(v, v), false);
    return true;
  }

  /** A test of a number field (port, uid, gid). */
  num(kind: FieldKind, v: number, set: IntervalSet, holds: boolean): void {
    const f = this.numField(kind, v);
    if (f >= 0) this.fact(f, set, holds);
  }

  /** The live field of `kind` whose representative is `v`, or -1. */
  private numField(kind: FieldKind, v: number): number {
    for (let f = 0; f < this.kinds.length; f++) if (this.kinds[f] === kind && this.live[f] && this.reps[f]![0] === v) return f;
    return -1;
  }
}

/** The value of address words as one number. @internal */
export function wordsToBig(w: readonly number[]): bigint {
  let v = 0n;
  for (const x of w) v = (v << 32n) | BigInt(x >>> 0);
  return v;
}

/** Address words of a number. @internal */
export function bigToWords(v: bigint, family: Family): number[] {
  if (family === 4) return [Number(v & 0xffffffffn)];
  return [Number((v >> 96n) & 0xffffffffn), Number((v >> 64n) & 0xffffffffn), Number((v >> 32n) & 0xffffffffn), Number(v & 0xffffffffn)];
}

function unsupported(rule: Rule, table: string, chain: string, number: number, what: string): never {
  const where = `${table} ${chain} rule ${number}${rule.text ? ` (${rule.text})` : ''}`;
  throw new NetfilterSimError(diagnostic('UNSUPPORTED', `explore cannot evaluate ${what} of ${where} over sets of probes exactly`, rule.span, rule.text));
}

/** The addresses `addr/mask` covers, as one interval; null when the mask is not a prefix. */
export function prefixSet(addr: readonly number[], mask: readonly number[]): IntervalSet | null {
  const bits = mask.length * 32;
  const m = wordsToBig(mask);
  const full = (1n << BigInt(bits)) - 1n;
  const host = full ^ m;
  if ((host & (host + 1n)) !== 0n) return null;
  const base = wordsToBig(addr) & m;
  return range(base, base | host);
}

function portSet(r: PortRange): IntervalSet {
  return range(BigInt(r.min), BigInt(r.max));
}

function addrRange(from: readonly number[], to: readonly number[]): IntervalSet {
  return range(wordsToBig(from), wordsToBig(to));
}

function inSet(set: IntervalSet, v: number): boolean {
  const b = BigInt(v);
  for (let i = 0; i < set.length; i += 2) if (b >= set[i]! && b <= set[i + 1]!) return true;
  return false;
}

function inAddrSet(set: IntervalSet, w: readonly number[]): boolean {
  if (w.length === 1 && set.length === 2) {
    // One IPv4 interval (every prefix test): plain numbers.
    const v = w[0]! >>> 0;
    return v >= Number(set[0]!) && v <= Number(set[1]!);
  }
  const b = wordsToBig(w);
  for (let i = 0; i < set.length; i += 2) if (b >= set[i]! && b <= set[i + 1]!) return true;
  return false;
}

/**
 * Matches whose result no probe field reaches but through routing and sockets, which record the
 * probe's namespace range as they read it (`FactRecorder.observeAddr`).
 */
const FIELD_FREE = new Set(['comment', 'mark', 'connmark', 'state', 'icmp', 'icmp6', 'addrtype', 'nfacct', 'sctp', 'socket']);

type Closure = (p: PacketView) => boolean;

/** One model match as a recording closure. */
function recordingMatch(
  rule: Rule, table: string, chain: string, number: number,
  m: Rule['matches'][number], family: Family, registry: ExtensionRegistry, rec: FactRecorder,
): Closure | null {
  const ext = registry.matches.get(m.name);
  if (!ext) unsupported(rule, table, chain, number, `the unknown match "${m.name}"`);
  const orig = ext.lower(m.options, family) as Closure;
  const o = m.options as Record<string, unknown>;
  const assumption = ext.assumption?.(m.options);
  let facts: ((p: PacketView) => void) | null = null;
  switch (m.name) {
    case 'tcp':
    case 'udp': {
      const t = m.options as unknown as TcpOptions;
      const sp = t.sport ? portSet(t.sport.value) : null;
      const dp = t.dport ? portSet(t.dport.value) : null;
      facts = (p) => {
        if (sp !== null) rec.num('port', p.sport, sp, inSet(sp, p.sport));
        if (dp !== null) rec.num('port', p.dport, dp, inSet(dp, p.dport));
      };
      break;
    }
    case 'multiport': {
      const t = m.options as unknown as MultiportOptions;
      const set = normalize(t.ports.map((r) => [BigInt(r.min), BigInt(r.max)] as const));
      const src = t.direction !== 'destination';
      const dst = t.direction !== 'source';
      facts = (p) => {
        if (src) rec.num('port', p.sport, set, inSet(set, p.sport));
        if (dst) rec.num('port', p.dport, set, inSet(set, p.dport));
      };
      break;
    }
    case 'owner': {
      const t = m.options as unknown as OwnerOptions;
      const uid = t.uid ? range(BigInt(t.uid.value.min), BigInt(t.uid.value.max)) : null;
      const gid = t.gid ? range(BigInt(t.gid.value.min), BigInt(t.gid.value.max)) : null;
      facts = (p) => {
        const s = p.socket;
        if (s === null) return;
        if (uid !== null) rec.num('uid', s.uid, uid, inSet(uid, s.uid));
        if (gid !== null) rec.num('gid', s.gid, gid, inSet(gid, s.gid));
      };
      break;
    }
    case 'iprange': {
      const t = m.options as unknown as IprangeOptions;
      const src = t.src ? addrRange(t.src.value.from, t.src.value.to) : null;
      const dst = t.dst ? addrRange(t.dst.value.from, t.dst.value.to) : null;
      facts = (p) => {
        if (src !== null) rec.addr(p.src, src, inAddrSet(src, p.src));
        if (dst !== null) rec.addr(p.dst, dst, inAddrSet(dst, p.dst));
      };
      break;
    }
    case 'conntrack': {
      // The tuples hold the probe's own addresses and ports (or NAT's constants).
      const t = m.options as unknown as ConntrackOptions;
      const addrTests: [number, IntervalSet][] = [];
      ([t.origSrc, t.origDst, t.replSrc, t.replDst] as const).forEach((v, which) => {
        if (!v) return;
        const set = prefixSet(v.value.addr, v.value.mask);
        if (set === null) unsupported(rule, table, chain, number, '"-m conntrack" with an address mask that is not a prefix');
        addrTests.push([which, set]);
      });
      const portTests: [number, IntervalSet][] = [];
      ([t.origSrcPort, t.origDstPort, t.replSrcPort, t.replDstPort] as const).forEach((v, which) => {
        if (v) portTests.push([which, portSet(v.value)]);
      });
      if (addrTests.length > 0 || portTests.length > 0) {
        facts = (p) => {
          const c = p.ct;
          if (c === null) return;
          for (const [which, set] of addrTests) {
            const k = which === 0 ? c.origSrc : which === 1 ? c.origDst : which === 2 ? c.replySrc : c.replyDst;
            rec.addr(k, set, inAddrSet(set, k));
          }
          for (const [which, set] of portTests) {
            const v = which === 0 ? c.origSport : which === 1 ? c.origDport : which === 2 ? c.replySport : c.replyDport;
            rec.num('port', v, set, inSet(set, v));
          }
        };
      }
      break;
    }
    case 'statistic':
      if (o['mode'] !== 'random') unsupported(rule, table, chain, number, '"-m statistic --mode nth" (a counter over earlier packets)');
      // Each draw becomes a branch of Netns.connectAll, with its probability.
      facts = () => {
        rec.random = true;
      };
      break;
    case 'recent': {
      // Each probe meets empty lists (explore clears them between runs): what a lookup finds was
      // added by the probe's own earlier packets, by address equality, which each entry records.
      const t = m.options as unknown as RecentOptions;
      if (!t.mask.every((w) => w >>> 0 === 0xffffffff)) unsupported(rule, table, chain, number, '"-m recent --mask" with a mask that keeps fewer bits than the address');
      facts = (p) => {
        const list = p.recentTable?.(t.name);
        if (list === undefined) return;
        const from = t.side === 'dest' ? p.dst : p.src;
        for (const key of list.keys()) {
          const bar = key.indexOf('|');
          if (Number(key.slice(0, bar)) !== p.family) continue;
          const words = key.slice(bar + 1).split('.').map(Number);
          if (!rec.compareAddrs(from, words)) unsupported(rule, table, chain, number, '"-m recent" comparing one probe field with another (a source with a destination)');
        }
      };
      break;
    }
    default:
      // Field-free matches, and assumed ones (they read no probe field).
      if (!FIELD_FREE.has(m.name) && !isAssumed(ext)) unsupported(rule, table, chain, number, `"-m ${m.name}"`);
  }
  const text = isAssumed(ext) || assumption !== undefined ? `${m.name}: ${assumption ?? 'assumed, not evaluated'}` : null;
  if (facts === null && text === null) return orig;
  const record = facts;
  return (p) => {
    if (record !== null) record(p);
    if (text !== null) rec.assumptions.add(text);
    return orig(p);
  };
}

function instrumentRule(r: LoweredRule, table: string, chain: string, family: Family, registry: ExtensionRegistry, rec: FactRecorder): LoweredRule {
  const rule = r.source;
  const closures: Closure[] = [];
  const v4 = family === 4;
  if (r.hasSrc) {
    const set = prefixSet(v4 ? [r.src0 >>> 0] : [...r.src], v4 ? [r.smsk0 >>> 0] : [...r.smsk]);
    if (set === null) unsupported(rule, table, chain, r.number, 'a source mask that is not a prefix');
    const inv = r.invSrc;
    closures.push((p) => {
      const hit = inAddrSet(set, p.src);
      rec.addr(p.src, set, hit);
      return hit !== inv;
    });
  }
  if (r.hasDst) {
    const set = prefixSet(v4 ? [r.dst0 >>> 0] : [...r.dst], v4 ? [r.dmsk0 >>> 0] : [...r.dmsk]);
    if (set === null) unsupported(rule, table, chain, r.number, 'a destination mask that is not a prefix');
    const inv = r.invDst;
    closures.push((p) => {
      const hit = inAddrSet(set, p.dst);
      rec.addr(p.dst, set, hit);
      return hit !== inv;
    });
  }
  if (r.l4 !== 0) {
    const l4 = r.l4;
    const sp = range(BigInt(r.spMin), BigInt(r.spMax));
    const dp = range(BigInt(r.dpMin), BigInt(r.dpMax));
    const spInv = r.spInv;
    const dpInv = r.dpInv;
    closures.push((p) => {
      // xt_tcpudp.c: a fragment never matches.
      if (p.proto !== l4 || p.fragment) return false;
      const sh = inSet(sp, p.sport);
      rec.num('port', p.sport, sp, sh);
      const dh = inSet(dp, p.dport);
      rec.num('port', p.dport, dp, dh);
      return sh !== spInv && dh !== dpInv;
    });
  }
  let folded = r.l4 !== 0;
  for (const m of rule.matches) {
    if (m.name === 'comment') continue;
    if (folded) {
      // lowerRule folded the first non-comment match (a plain tcp/udp port test) into l4.
      folded = false;
      continue;
    }
    const c = recordingMatch(rule, table, chain, r.number, m, family, registry, rec);
    if (c !== null) closures.push(c);
  }
  const t = rule.target;
  if (t?.kind === 'extension' && (t.name === 'DNAT' || t.name === 'REDIRECT')) {
    // get_unique_tuple keeps a destination port inside the range and maps one outside it to the
    // range's start: which of the two depends on the probe's port.
    const ports = t.name === 'DNAT' ? (t.options as unknown as DnatOptions).to.ports : (t.options as unknown as RedirectOptions).toPorts;
    if (ports !== undefined && ports.min !== ports.max) {
      const set = portSet(ports);
      closures.push((p) => {
        rec.num('port', p.dport, set, inSet(set, p.dport));
        return true;
      });
    }
  }
  if (t?.kind === 'extension' && t.name === 'DNAT') {
    const to = (t.options as unknown as DnatOptions).to;
    if (to.addrMin && to.addrMax && wordsToBig(to.addrMin) !== wordsToBig(to.addrMax)) {
      unsupported(rule, table, chain, r.number, `"-j ${t.name}" to an address range`);
    }
  }
  if (r.action === 'verdict' || r.action === 'extension') {
    const text = rule.text ?? `${table} ${chain} rule ${r.number}`;
    closures.push(() => {
      rec.fire(text);
      return true;
    });
  }
  return {
    ...r,
    hasSrc: false,
    hasDst: false,
    l4: 0,
    matches: closures,
    assumed: closures.map(() => null),
    assumptions: closures.map(() => null),
    anyAssumed: false,
  };
}

/**
 * A dispatch run's skip as facts. Every rule of the run tests `-p PROTO [-d ADDR/max] --dport
 * PORT`; skipping rules `from`..`to - 1` means none of their keys is the packet's. When the
 * destination is none of the run's addresses, "the destination is outside all of them" says it
 * for every port at once (one fact for the whole run: kube-proxy's `KUBE-SERVICES`); else the
 * destination is that address and the port none of the skipped rules' ports for it. A run
 * without addresses: the port is none of the run's, or is this port.
 */
function skipRecorder(rules: readonly LoweredRule[], run: DispatchRun, family: Family, rec: FactRecorder): (from: number, to: number, p: PacketView) => void {
  const v4 = family === 4;
  const keyOf = (w: ArrayLike<number>): string => (v4 ? String(w[0]! >>> 0) : `${w[0]! >>> 0}:${w[1]! >>> 0}:${w[2]! >>> 0}:${w[3]! >>> 0}`);
  const byAddr = new Map<string, number[]>();
  const addrs: [bigint, bigint][] = [];
  const ports: [bigint, bigint][] = [];
  for (let i = run.start; i < run.end; i++) {
    const r = rules[i]!;
    ports.push([BigInt(r.dpMin), BigInt(r.dpMin)]);
    if (!run.byDst) continue;
    const w = v4 ? [r.dst0 >>> 0] : [...r.dst];
    const k = keyOf(w);
    let list = byAddr.get(k);
    if (list === undefined) {
      byAddr.set(k, (list = []));
      const v = wordsToBig(w);
      addrs.push([v, v]);
    }
    list.push(i);
  }
  const addrSet = normalize(addrs);
  const portSetAll = normalize(ports);
  const skippedPorts = (list: readonly number[], from: number, to: number, proto: number): IntervalSet => {
    const out: [bigint, bigint][] = [];
    for (const i of list) if (i >= from && i < to && rules[i]!.l4 === proto) out.push([BigInt(rules[i]!.dpMin), BigInt(rules[i]!.dpMin)]);
    return normalize(out);
  };
  if (!run.byDst) {
    return (_from, _to, p) => {
      // Outside every port of the run, or this very port (which none of the skipped rules has).
      if (!inSet(portSetAll, p.dport)) rec.num('port', p.dport, portSetAll, false);
      else rec.num('port', p.dport, range(BigInt(p.dport), BigInt(p.dport)), true);
    };
  }
  return (from, to, p) => {
    const list = byAddr.get(keyOf(p.dst));
    if (list === undefined) {
      rec.addr(p.dst, addrSet, false);
      return;
    }
    const v = wordsToBig(p.dst);
    rec.addr(p.dst, range(v, v), true);
    const skipped = skippedPorts(list, from, to, p.proto);
    if (skipped.length > 0) rec.num('port', p.dport, skipped, false);
  };
}

/**
 * The lowered program with every probe-dependent test recording into `rec`, and with the
 * dispatch index recording what each skip established. Throws `UNSUPPORTED`, naming the rule, for a match explore cannot split
 * exactly (`recent`, `statistic --mode nth`, conntrack tuple tests, non-prefix masks).
 * @internal
 */
export function instrumentProgram(program: LoweredRuleset, registry: ExtensionRegistry, rec: FactRecorder): LoweredRuleset {
  const tables = program.tables.map((t): LoweredTable | null => {
    if (t === null) return null;
    return {
      ...t,
      chains: t.chains.map((c) => ({
        ...c,
        rules: c.rules.map((r) => instrumentRule(r, t.name, c.name, program.family, registry, rec)),
        runs: c.runs.map((run) => ({ ...run, skipped: skipRecorder(c.rules, run, program.family, rec) })),
      })),
      jumpStack: new Int32Array(t.jumpStack.length),
    };
  });
  return { ...program, tables };
}
