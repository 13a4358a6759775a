/**
 * Native nftables chains, instrumented for `explore` as `instrument.ts` instruments the iptables
 * program: every comparison, set or map lookup whose operand can carry a probe's own field
 * (`ip/ip6 saddr/daddr`, `th/tcp/udp/sctp sport/dport`, `meta skuid/skgid`, the conntrack tuple's
 * addresses and ports, and masks of them that keep a prefix) also records the fact it established
 * into the same {@link FactRecorder}. Lookups into exact elements walk the nested hash maps part by
 * part: a hit at a level establishes "part == key", a miss "part ∉ the level's keys". Lookups into
 * interval elements establish "in this element and in none before it" (a hit) or "in none" (a
 * miss); with several parts, the first part that fails each element says why it was passed over.
 * Interface selectors, marks and conntrack state need no facts; `fib` and `socket` read routes and
 * sockets, which record the probe's namespace range as they read it (as `addrtype` and `socket` on
 * the iptables side).
 *
 * Only `explore` builds this engine; namespaces that are not explored keep {@link LoweredNftEngine}
 * as it is.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { BITMASK_TYPES, allOnes, selectorType } from '../nftables/datatypes.js';
import type {
  NftAnonSet, NftChain, NftElement, NftPrefix, NftRange, NftRule, NftRuleset, NftSelector, NftSetRef, NftStatement, NftTable, NftValue,
} from '../nftables/model.js';
import { printNftRule } from '../nftables/print.js';
import { LoweredNftEngine, canon, nestedIndex, verdictOf } from '../engine/rules/nft-lower.js';
import type { Nested, Reader, Step, Val } from '../engine/rules/nft-lower.js';
import type { NftHookEntry, NftHost, Verdict } from '../engine/rules/nft-interpret.js';
import type { PacketState } from '../engine/state/packet-state.js';
import type { TargetSite } from '../engine/rules/targets.js';
import { NF_DROP } from '../engine/rules/targets.js';
import type { TraceRecorder } from '../engine/trace/events.js';
import type { Family } from '../model/types.js';
import { bigToWords } from './instrument.js';
import type { FactRecorder, FieldKind } from './instrument.js';
import { EMPTY, normalize, range, subtract, union } from './intervals.js';
import type { IntervalSet } from './intervals.js';

const TOP = (1n << 128n) - 1n;

/** What a selector's value is, when it can be a probe's own field. */
interface Probe {
  readonly kind: FieldKind;
  /** The address family of an address (0: the packet's, for `ct saddr` without a family). */
  readonly family: 0 | Family;
  /** The field's value before any mask. */
  readonly raw: Reader;
  /** The raw values whose (masked) value lies in a set. */
  readonly pre: (s: IntervalSet) => IntervalSet;
}

interface Part {
  readonly read: Reader;
  readonly probe: Probe | null;
}

interface RuleAt {
  readonly rule: NftRule;
  readonly table: NftTable;
  readonly chain: NftChain;
  readonly index: number;
}

interface Context {
  readonly rec: FactRecorder;
  /** Each statement's rule (for the errors that name it). */
  readonly where: Map<NftStatement, RuleAt>;
  /** Map lookups of NAT and mark statements, recording (made while lowering, before fields exist). */
  readonly finders: Map<object, (p: PacketState, host: NftHost, vals: readonly Val[]) => NftElement | undefined>;
  /** Statements (not matches) that draw `numgen random`. */
  readonly drawing: Set<NftStatement>;
}

let building: Context | null = null;

/** A rule as a class names it: table, chain, and the rule as nft lists it (counters without their values). */
function ruleText(at: RuleAt): string {
  return `${at.table.family} ${at.table.name} ${at.chain.name}: ${printNftRule(at.rule, at.table).replace(/\bcounter packets \d+ bytes \d+/g, 'counter')}`;
}

function refuse(at: RuleAt | undefined, what: string): never {
  const where = at ? `table ${at.table.family} ${at.table.name} chain ${at.chain.name} rule ${at.index + 1} (${printNftRule(at.rule, at.table)})` : 'an nft rule';
  throw new NetfilterSimError(diagnostic('UNSUPPORTED', `explore cannot evaluate ${what} of ${where} over sets of probes exactly`, at?.rule.span, at ? printNftRule(at.rule, at.table) : undefined));
}

/** The values an element's key part holds. */
function partSet(k: NftValue | NftRange | NftPrefix): IntervalSet {
  if (k.kind === 'value') return range(k.value, k.value);
  if (k.kind === 'range') return range(k.low.value, k.high.value);
  const host = allOnes(k.value.bits - k.length);
  const base = k.value.value & (allOnes(k.value.bits) ^ host);
  return range(base, base | host);
}

/** Values `v` with `v OP c`. */
function compareSet(op: string, c: bigint): IntervalSet {
  switch (op) {
    case '<': return c === 0n ? EMPTY : range(0n, c - 1n);
    case '<=': return range(0n, c);
    case '>': return range(c + 1n, TOP);
    default: return range(c, TOP);
  }
}

function inSet(set: IntervalSet, v: Val): boolean {
  const b = typeof v === 'bigint' ? v : BigInt(v);
  for (let i = 0; i < set.length; i += 2) if (b >= set[i]! && b <= set[i + 1]!) return true;
  return false;
}

/** Whether `mask` keeps a prefix of `bits` (its zero bits are the low ones). */
function hostOfPrefixMask(mask: bigint, bits: number): bigint | null {
  const host = allOnes(bits) ^ (mask & allOnes(bits));
  return (host & (host + 1n)) === 0n ? host : null;
}

/** Raw values `v` with `v & ~host` in `s`. */
function prefixPreimage(s: IntervalSet, host: bigint): IntervalSet {
  const block = host + 1n;
  const out: [bigint, bigint][] = [];
  for (let i = 0; i < s.length; i += 2) {
    const lo = ((s[i]! + host) / block) * block;
    const hi = (s[i + 1]! / block) * block + host;
    if (lo <= hi) out.push([lo, hi]);
  }
  return normalize(out);
}

const ID = (s: IntervalSet): IntervalSet => s;

/**
 * The lowered nft engine with recording selectors. Build it with {@link instrumentNft}.
 * @internal
 */
export class InstrumentedNftEngine extends LoweredNftEngine {
  private ctx: Context | null = null;
  private host: NftHost | null = null;
  /** Whether a statement with an effect ran in the current rule. */
  private acted = false;
  /** Whether the last rule that decided dropped (else a drop is the policy's). */
  private ruleDropped = false;
  private readonly texts = new Map<NftRule, string>();

  constructor(ruleset: NftRuleset, ctx: Context) {
    super(ruleset);
    this.ctx = ctx;
  }

  private get c(): Context {
    return this.ctx ?? building!;
  }

  private note(probe: Probe, p: PacketState, host: NftHost, set: IntervalSet, holds: boolean): void {
    const raw = probe.raw(p, host);
    if (raw === null) return;
    const rec = this.c.rec;
    if (probe.kind === 'addr') {
      const fam = probe.family === 0 ? p.family : probe.family;
      rec.addr(bigToWords(typeof raw === 'bigint' ? raw : BigInt(raw), fam), set, holds);
    } else rec.num(probe.kind, Number(raw), set, holds);
  }

  /** What a selector is, as a probe field (null: nothing a probe varies within a region). */
  private probeOf(sel: NftSelector, at: RuleAt | undefined): Probe | null {
    switch (sel.kind) {
      case 'payload': {
        const raw = (): Reader => super.lowerRead(sel);
        if (sel.protocol === 'ip' || sel.protocol === 'ip6') {
          if (sel.field !== 'saddr' && sel.field !== 'daddr') return null;
          return { kind: 'addr', family: sel.protocol === 'ip' ? 4 : 6, raw: raw(), pre: ID };
        }
        if (sel.field !== 'sport' && sel.field !== 'dport') return null;
        return { kind: 'port', family: 0, raw: raw(), pre: ID };
      }
      case 'meta':
        if (sel.key === 'skuid' || sel.key === 'skgid') return { kind: sel.key === 'skuid' ? 'uid' : 'gid', family: 0, raw: super.lowerRead(sel), pre: ID };
        return null;
      case 'ct':
        if (sel.key === 'saddr' || sel.key === 'daddr') return { kind: 'addr', family: sel.family === 'ip' ? 4 : sel.family === 'ip6' ? 6 : 0, raw: super.lowerRead(sel), pre: ID };
        if (sel.key === 'proto-src' || sel.key === 'proto-dst') return { kind: 'port', family: 0, raw: super.lowerRead(sel), pre: ID };
        return null;
      case 'bitwise': {
        const inner = this.probeOf(sel.operand, at);
        if (inner === null) return null;
        const host = sel.xor === 0n ? hostOfPrefixMask(sel.mask, sel.bits) : null;
        if (host === null) refuse(at, 'a mask (or xor) of a probe field that does not keep a prefix');
        return { ...inner, pre: (s) => inner.pre(prefixPreimage(s, host)) };
      }
      default:
        return null;
    }
  }

  private partsOf(sel: NftSelector, at: RuleAt | undefined): Part[] {
    const items = sel.kind === 'concat' ? sel.items : [sel];
    return items.map((i) => ({ read: this.lowerRead(i), probe: this.probeOf(i, at) }));
  }

  /**
   * A lookup into `elements` keyed on `parts` that records what its answer established about
   * every probe part: the first element the reference's scan finds, or none.
   */
  private finder(elements: readonly NftElement[], parts: readonly Part[]): (p: PacketState, host: NftHost, vals: readonly Val[]) => NftElement | undefined {
    const find = this.keyedFinder(elements, parts);
    // nft_set_catchall_lookup: the catch-all element (`*`, no key) answers what no element
    // matched; the miss is what the keyed lookup has recorded, so the answer stays exact.
    const catchAll = elements.find((e) => e.key.length === 0);
    if (catchAll === undefined) return find;
    return (p, host, vals) => find(p, host, vals) ?? catchAll;
  }

  private keyedFinder(elements: readonly NftElement[], parts: readonly Part[]): (p: PacketState, host: NftHost, vals: readonly Val[]) => NftElement | undefined {
    const width = parts.length;
    const usable = elements.filter((e) => e.key.length === width);
    const root = nestedIndex(usable, width);
    if (root !== null) {
      const keySets = new Map<Nested, IntervalSet>();
      const keysOf = (m: Nested, probe: Probe): IntervalSet => {
        let s = keySets.get(m);
        if (s === undefined) {
          s = probe.pre(normalize([...m.keys()].map((k) => [BigInt(k), BigInt(k)] as const)));
          keySets.set(m, s);
        }
        return s;
      };
      return (p, host, vals) => {
        let m: Nested | NftElement | undefined = root;
        for (let i = 0; i < width; i++) {
          const v = vals[i]!;
          const next: Nested | NftElement | undefined = (m as Nested).get(v);
          const probe = parts[i]!.probe;
          if (probe !== null) {
            if (next === undefined) this.note(probe, p, host, keysOf(m as Nested, probe), false);
            else {
              const b = BigInt(v);
              this.note(probe, p, host, probe.pre(range(b, b)), true);
            }
          }
          if (next === undefined) return undefined;
          m = next;
        }
        return m as NftElement;
      };
    }
    const sets = usable.map((e) => e.key.map(partSet));
    if (width === 1 && parts[0]!.probe !== null) {
      // One part: "in this element and in none before it", or "in none".
      const probe = parts[0]!.probe;
      let before: IntervalSet = EMPTY;
      const own = sets.map(([s]) => {
        const mine = probe.pre(subtract(s!, before));
        before = union(before, s!);
        return mine;
      });
      const none = probe.pre(before);
      return (p, host, vals) => {
        const v = vals[0]!;
        for (let i = 0; i < sets.length; i++) {
          if (inSet(sets[i]![0]!, v)) {
            this.note(probe, p, host, own[i]!, true);
            return usable[i];
          }
        }
        this.note(probe, p, host, none, false);
        return undefined;
      };
    }
    const pre = sets.map((e) => e.map((s, j) => (parts[j]!.probe === null ? s : parts[j]!.probe!.pre(s))));
    return (p, host, vals) => {
      outer: for (let i = 0; i < sets.length; i++) {
        const e = sets[i]!;
        for (let j = 0; j < width; j++) {
          if (!inSet(e[j]!, vals[j]!)) {
            // The first part that fails the element is why it is passed over.
            const probe = parts[j]!.probe;
            if (probe !== null) this.note(probe, p, host, pre[i]![j]!, false);
            continue outer;
          }
        }
        for (let j = 0; j < width; j++) {
          const probe = parts[j]!.probe;
          if (probe !== null) this.note(probe, p, host, pre[i]![j]!, true);
        }
        return usable[i];
      }
      return undefined;
    };
  }

  protected override lowerRead(sel: NftSelector): Reader {
    const r = super.lowerRead(sel);
    if (sel.kind !== 'numgen' || sel.mode !== 'random') return r;
    // A draw: every branch, with its probability, as `connect --enumerate`.
    return (p, host) => {
      this.c.rec.random = true;
      return r(p, host);
    };
  }

  protected override lowerMatch(s: Extract<NftStatement, { kind: 'match' }>, table: NftTable): (p: PacketState, host: NftHost) => boolean {
    if (s.left.kind === 'meta' && (s.left.key === 'iifname' || s.left.key === 'oifname')) return super.lowerMatch(s, table);
    const at = this.c.where.get(s);
    const parts = this.partsOf(s.left, at);
    if (parts.every((x) => x.probe === null)) return super.lowerMatch(s, table);
    const neg = s.op === '!=';
    const right = s.right;
    const readAll = (p: PacketState, host: NftHost, out: Val[]): boolean => {
      for (let i = 0; i < parts.length; i++) {
        const v = parts[i]!.read(p, host);
        if (v === null) return false;
        out[i] = v;
      }
      return true;
    };
    const vals: Val[] = new Array<Val>(parts.length);
    if (s.flagMask) {
      if (parts.length !== 1) refuse(at, 'a masked test of a concatenation');
      const probe = parts[0]!.probe!;
      const m = s.flagMask.value;
      const want = (right as NftValue).value;
      const bits = s.flagMask.bits;
      const host = hostOfPrefixMask(m, bits);
      if (host === null) refuse(at, 'a mask of a probe field that does not keep a prefix');
      const set = (want & host) !== 0n ? EMPTY : probe.pre(prefixPreimage(range(want, want), host));
      return (p, h) => {
        if (!readAll(p, h, vals)) return false;
        const hit = (BigInt(vals[0]!) & m) === want;
        this.note(probe, p, h, set, hit);
        return hit;
      };
    }
    if (right.kind === 'set' || right.kind === 'setref') {
      const find = this.finder(this.elements(right, table), parts);
      return (p, h) => {
        if (!readAll(p, h, vals)) return false;
        const hit = find(p, h, vals) !== undefined;
        return neg ? !hit : hit;
      };
    }
    if (right.kind === 'concat-value') {
      const tests = right.items.map(partSet);
      const pre = tests.map((t, i) => (parts[i]?.probe ? parts[i]!.probe!.pre(t) : t));
      return (p, h) => {
        if (!readAll(p, h, vals)) return false;
        let hit = true;
        for (let i = 0; hit && i < tests.length; i++) {
          hit = inSet(tests[i]!, vals[i]!);
          const probe = parts[i]!.probe;
          if (probe !== null) this.note(probe, p, h, pre[i]!, hit);
        }
        return neg ? !hit : hit;
      };
    }
    if (parts.length !== 1) refuse(at, 'a concatenation compared with one constant');
    const probe = parts[0]!.probe!;
    const read = parts[0]!.read;
    const st = selectorType(s.left);
    if (right.kind === 'value' && st && BITMASK_TYPES.has(st.type) && (s.op === 'implicit' || s.op === '!=')) refuse(at, 'a flag test of a probe field');
    const set = s.op === 'implicit' || s.op === '==' || s.op === '!=' ? partSet(right) : compareSet(s.op, (right as NftValue).value);
    const rawSet = probe.pre(set);
    return (p, h) => {
      const v = read(p, h);
      if (v === null) return false;
      const hit = inSet(set, v);
      this.note(probe, p, h, rawSet, hit);
      return neg ? !hit : hit;
    };
  }

  protected override lowerStatement(s: NftStatement, table: NftTable): Step {
    const at = this.c.where.get(s);
    switch (s.kind) {
      case 'vmap': {
        const parts = this.partsOf(s.key, at);
        if (parts.every((x) => x.probe === null)) break;
        const find = this.finder(this.elements(s.mappings, table), parts);
        const vals: Val[] = new Array<Val>(parts.length);
        return {
          kind: 'vmap',
          decide: (p, host) => {
            for (let i = 0; i < parts.length; i++) {
              const v = parts[i]!.read(p, host);
              if (v === null) return null;
              vals[i] = v;
            }
            const e = find(p, host, vals);
            return e === undefined || e.data?.kind !== 'verdict' ? null : verdictOf(e.data);
          },
        };
      }
      case 'limit':
        refuse(at, '"limit" (its bucket depends on earlier packets)');
        break;
      case 'nat': {
        const a = s.addr;
        if (a && ((a.kind === 'range' && a.low.value !== a.high.value) || (a.kind === 'prefix' && a.length < a.value.bits))) refuse(at, `"${s.type}" to an address range`);
        if (s.port?.kind === 'map') refuse(at, `"${s.type}" to a port map`);
        if (a?.kind === 'map') this.c.finders.set(a.mappings, this.finder(this.elements(a.mappings, undefined), this.partsOf(a.key, at)));
        break;
      }
      case 'mangle': {
        const v = s.value;
        if (v.kind === 'map') this.c.finders.set(v.mappings, this.finder(this.elements(v.mappings, undefined), this.partsOf(v.key, at)));
        else if (v.kind !== 'value' && v.kind !== 'concat-value' && v.kind !== 'numgen' && this.probeOf(v, at) !== null) refuse(at, 'a copy of a probe field into a mark');
        break;
      }
      default:
        break;
    }
    return super.lowerStatement(s, table);
  }

  protected override lookup(m: NftAnonSet | NftSetRef, table: NftTable | undefined, sel: NftSelector, key: bigint | bigint[], p: PacketState): NftElement | undefined {
    const find = this.c.finders.get(m);
    if (find === undefined || this.host === null) return super.lookup(m, table, sel, key, p);
    const keys = Array.isArray(key) ? key : [key];
    return find(p, this.host, keys.map(canon));
  }

  protected override statement(s: NftStatement, table: NftTable, p: PacketState, host: NftHost, tr: TraceRecorder | null, site: TargetSite): 'next' | 'break' | Verdict {
    this.host = host;
    // Statements read their selectors through the reference's `read`, not the lowered readers.
    if (this.c.drawing.has(s)) this.c.rec.random = true;
    if (s.kind === 'nat' && (s.type === 'dnat' || s.type === 'redirect') && s.port?.kind === 'range' && s.port.low.value !== s.port.high.value) {
      // get_unique_tuple keeps a destination port inside the range and maps one outside it to
      // the range's start: which of the two depends on the probe's port.
      const set = range(s.port.low.value, s.port.high.value);
      this.c.rec.num('port', p.dport, set, inSet(set, p.dport));
    }
    const r = super.statement(s, table, p, host, tr, site);
    if (r !== 'break' && (s.kind === 'nat' || s.kind === 'mangle' || s.kind === 'reject' || s.kind === 'tproxy' || s.kind === 'notrack')) this.acted = true;
    return r;
  }

  protected override runLowered(lr: Parameters<LoweredNftEngine['runLowered']>[0], table: NftTable, chain: NftChain, hookIndex: number, tableLabel: string, p: PacketState, host: NftHost, tr: TraceRecorder | null): Verdict {
    this.acted = false;
    const v = super.runLowered(lr, table, chain, hookIndex, tableLabel, p, host, tr);
    if (this.acted || v.code === 'accept' || v.code === 'drop' || v.code === 'return') {
      let text = this.texts.get(lr.rule);
      if (text === undefined) this.texts.set(lr.rule, (text = ruleText({ rule: lr.rule, table, chain, index: lr.index })));
      this.c.rec.fire(text);
      this.ruleDropped = v.code === 'drop';
    }
    return v;
  }

  override runBaseChain(e: NftHookEntry, hook: number, p: PacketState, host: NftHost, tr: TraceRecorder | null): number {
    this.ruleDropped = false;
    const r = super.runBaseChain(e, hook, p, host, tr);
    if (r === NF_DROP && !this.ruleDropped && p.dropReason !== 'nft jump stack overflow') this.c.rec.fire(`policy drop (${e.table.family} ${e.table.name} ${e.chain.name})`);
    return r;
  }
}

/**
 * The nft side of a namespace for `explore`: {@link LoweredNftEngine} whose probe-dependent tests
 * record into `rec`. Throws `UNSUPPORTED`, naming the rule, for what cannot be split exactly
 * (`limit`, `numgen inc`, masks that keep no prefix, NAT to an address range).
 * @internal
 */
export function instrumentNft(ruleset: NftRuleset, rec: FactRecorder): InstrumentedNftEngine {
  const where = new Map<NftStatement, RuleAt>();
  const drawing = new Set<NftStatement>();
  for (const table of ruleset.tables) {
    for (const chain of table.chains) {
      chain.rules.forEach((rule, index) => {
        for (const s of rule.statements) {
          where.set(s, { rule, table, chain, index });
          const numgenInc = (sel: NftSelector | undefined): boolean =>
            sel !== undefined && ((sel.kind === 'numgen' && sel.mode === 'inc') || (sel.kind === 'bitwise' && numgenInc(sel.operand)) || (sel.kind === 'concat' && sel.items.some(numgenInc)));
          const sels: (NftSelector | undefined)[] = s.kind === 'match' ? [s.left] : s.kind === 'vmap' ? [s.key]
            : s.kind === 'mangle' ? [s.value.kind === 'map' ? s.value.key : s.value.kind === 'value' || s.value.kind === 'concat-value' ? undefined : s.value]
              : s.kind === 'nat' ? [s.addr?.kind === 'map' ? s.addr.key : undefined] : [];
          if (sels.some(numgenInc)) refuse({ rule, table, chain, index }, '"numgen inc" (a counter over earlier packets)');
          const draws = (sel: NftSelector | undefined): boolean =>
            sel !== undefined && ((sel.kind === 'numgen' && sel.mode === 'random') || (sel.kind === 'bitwise' && draws(sel.operand)) || (sel.kind === 'concat' && sel.items.some(draws)));
          if (s.kind !== 'match' && s.kind !== 'vmap' && sels.some(draws)) drawing.add(s);
        }
      });
    }
  }
  const ctx: Context = { rec, where, finders: new Map(), drawing };
  building = ctx;
  try {
    return new InstrumentedNftEngine(ruleset, ctx);
  } finally {
    building = null;
  }
}
