/**
 * nftables rule sets lowered once, as the iptables side is: every selector becomes a reader chosen
 * at load time, constants are converted to plain numbers wherever they fit in 32 bits, jumps are
 * resolved to chain objects, and set and map lookups over exact elements become nested hash maps
 * keyed on the concatenation's parts (kube-proxy's `ip daddr . meta l4proto . th dport vmap
 * @service-ips` is one map lookup per part, not a scan of every service). Statements with effects
 * (NAT, marks, zones, reject, TPROXY, notrack) run through the same code as the reference
 * interpreter ({@link NftEngine}), so the two can differ only in how fast they decide; a property
 * test holds them equal.
 *
 * @module
 */
import { BITMASK_TYPES, allOnes, selectorType } from '../../nftables/datatypes.js';
import type {
  NftAnonSet, NftChain, NftElement, NftPrefix, NftRange, NftRule, NftRuleset, NftSelector, NftSetRef, NftStatement, NftTable, NftValue,
} from '../../nftables/model.js';
import type { HookName } from '../../model/types.js';
import { NF_ACCEPT, NF_DROP } from './targets.js';
import type { TargetSite } from './targets.js';
import type { PacketState } from '../state/packet-state.js';
import type { TraceRecorder } from '../trace/events.js';
import { HOOK_NAME, NFT_JUMP_STACK_SIZE, NftEngine, PORT_PROTOCOLS, TRANSPORT, addrValue, ctStateBits, ifnameKey } from './nft-interpret.js';
import type { NftHookEntry, NftHost, Verdict } from './nft-interpret.js';

/** A selector's value: a number when it is below 2^32, a bigint above (so equal values compare equal). */
/** @internal */
export type Val = number | bigint;
/** @internal */
export type Reader = (p: PacketState, host: NftHost) => Val | null;
type PartTest = (v: Val) => boolean;

const U32 = 0xffffffffn;

/** @internal */
export function canon(v: bigint): Val {
  return v >= 0n && v <= U32 ? Number(v) : v;
}

const CONTINUE: Verdict = { code: 'continue' };
const FIXED: Readonly<Record<'accept' | 'drop' | 'return' | 'continue', Verdict>> = {
  accept: { code: 'accept' }, drop: { code: 'drop' }, return: { code: 'return' }, continue: CONTINUE,
};

/** @internal */
export function verdictOf(v: { readonly verdict: string; readonly chain?: string }): Verdict {
  if (v.verdict === 'jump' || v.verdict === 'goto') return { code: v.verdict, chain: v.chain! };
  return FIXED[v.verdict as keyof typeof FIXED];
}

/** One element's key part as a test on a canonical value (the reference's `inPart`). */
function partTest(k: NftValue | NftRange | NftPrefix): PartTest {
  if (k.kind === 'value') {
    const c = canon(k.value);
    return (v) => v === c;
  }
  if (k.kind === 'range') {
    const lo = canon(k.low.value);
    const hi = canon(k.high.value);
    return (v) => v >= lo && v <= hi;
  }
  const bits = k.value.bits;
  const mask = allOnes(bits) ^ allOnes(bits - k.length);
  const base = k.value.value & mask;
  if (bits <= 32) {
    const m = Number(mask) | 0;
    const b = Number(base);
    return (v) => (typeof v === 'number' ? ((v & m) >>> 0) === b : (v & mask) === base);
  }
  return (v) => (BigInt(v) & mask) === base;
}

/** Elements looked up by a key: nested maps when every element is exact, else a scan in order. */
interface Index {
  find(parts: readonly Val[]): NftElement | undefined;
}

/** Elements of exact values as maps nested per part of the key. @internal */
export type Nested = Map<Val, Nested | NftElement>;

/**
 * The elements of `width` parts as nested maps keyed on each part's value, or null when some
 * element has a prefix or range part (those are tested one by one). The first of equal elements
 * wins, as a scan finds it. @internal
 */
export function nestedIndex(elements: readonly NftElement[], width: number): Nested | null {
  const usable = elements.filter((e) => e.key.length === width);
  if (!usable.every((e) => e.key.every((k) => k.kind === 'value'))) return null;
  const root: Nested = new Map();
  for (const e of usable) {
    let m = root;
    for (let i = 0; i < width; i++) {
      const key = canon((e.key[i] as NftValue).value);
      if (i === width - 1) {
        if (!m.has(key)) m.set(key, e);
      } else {
        let next = m.get(key) as Nested | undefined;
        if (next === undefined) {
          next = new Map();
          m.set(key, next);
        }
        m = next;
      }
    }
  }
  return root;
}

function buildIndex(elements: readonly NftElement[], width: number): Index {
  const usable = elements.filter((e) => e.key.length === width);
  // nft_set_catchall_lookup: the catch-all element (`*`) answers what no element matched.
  const catchAll = elements.find((e) => e.key.length === 0);
  const root = nestedIndex(elements, width);
  if (root !== null) {
    return {
      find(parts) {
        let m: Nested | NftElement | undefined = root;
        for (let i = 0; i < parts.length; i++) {
          m = (m as Nested).get(parts[i]!);
          if (m === undefined) return catchAll;
        }
        return m as NftElement;
      },
    };
  }
  const tests = usable.map((e) => ({ e, tests: e.key.map(partTest) }));
  return {
    find(parts) {
      outer: for (const t of tests) {
        for (let i = 0; i < parts.length; i++) if (!t.tests[i]!(parts[i]!)) continue outer;
        return t.e;
      }
      return catchAll;
    },
  };
}

/** One lowered statement. @internal */
export type Step =
  | { readonly kind: 'match'; readonly test: (p: PacketState, host: NftHost) => boolean }
  | { readonly kind: 'verdict'; readonly verdict: Verdict }
  | { readonly kind: 'vmap'; readonly decide: (p: PacketState, host: NftHost) => Verdict | null }
  | { readonly kind: 'skip' }
  | { readonly kind: 'effect'; readonly statement: NftStatement };

interface LoweredRule {
  readonly rule: NftRule;
  readonly index: number;
  readonly steps: readonly Step[];
  /** Where the rule's statements act, one per hook (a regular chain runs at whichever reaches it). */
  readonly sites: readonly TargetSite[];
}

interface LoweredChain {
  readonly chain: NftChain;
  /** The table as traces name it (`inet pod-nat`). */
  readonly label: string;
  readonly rules: readonly LoweredRule[];
  /** Jump and goto targets by name, resolved once. */
  readonly targets: Map<string, LoweredChain>;
}

/**
 * The lowered nft side of a namespace: the same hooks, priorities and statements as
 * {@link NftEngine}, with matches and lookups decided on precomputed data.
 * @internal
 */
export class LoweredNftEngine extends NftEngine {
  private readonly chains = new Map<NftChain, LoweredChain>();

  constructor(ruleset: NftRuleset) {
    super(ruleset);
    for (const t of ruleset.tables) {
      const byName = new Map<string, LoweredChain>();
      for (const c of t.chains) {
        const lc: LoweredChain = { chain: c, label: `${t.family} ${t.name}`, rules: [], targets: byName };
        byName.set(c.name, lc);
        this.chains.set(c, lc);
      }
      for (const c of t.chains) {
        const rules = this.chains.get(c)!.rules as LoweredRule[];
        c.rules.forEach((rule, index) => {
          rules.push({
            rule, index, steps: rule.statements.map((s) => this.lowerStatement(s, t)),
            sites: HOOK_NAME.map((hook) => ({ hook, table: `${t.family} ${t.name}` as never, chain: c.name, rule: index + 1, name: 'nft' })),
          });
        });
      }
    }
  }

  override runBaseChain(e: NftHookEntry, hook: number, p: PacketState, host: NftHost, tr: TraceRecorder | null): number {
    const stack: { chain: LoweredChain; rule: number }[] = [];
    const base = this.chains.get(e.chain)!;
    let chain = base;
    let i = 0;
    const hookName = HOOK_NAME[hook]!;
    const tableLabel = base.label;
    for (;;) {
      if (i >= chain.rules.length) {
        const top = stack.pop();
        if (top === undefined) {
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook: hookName, table: tableLabel as never, chain: e.chain.name, rule: e.chain.rules.length + 1, policy: e.base.policy === 'accept' ? 'ACCEPT' : 'DROP' });
          if (e.base.policy === 'drop') p.dropReason = `policy drop of ${tableLabel} ${e.chain.name}`;
          return e.base.policy === 'accept' ? NF_ACCEPT : NF_DROP;
        }
        if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'return', hook: hookName, table: tableLabel as never, chain: chain.chain.name, rule: chain.rules.length + 1 });
        chain = top.chain;
        i = top.rule;
        continue;
      }
      const v = this.runLowered(chain.rules[i]!, e.table, chain.chain, hook, tableLabel, p, host, tr);
      i++;
      switch (v.code) {
        case 'continue':
          continue;
        case 'accept':
          return NF_ACCEPT;
        case 'drop':
          return NF_DROP;
        case 'return': {
          const top = stack.pop();
          if (top === undefined) {
            if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook: hookName, table: tableLabel as never, chain: e.chain.name, rule: i, policy: e.base.policy === 'accept' ? 'ACCEPT' : 'DROP' });
            return e.base.policy === 'accept' ? NF_ACCEPT : NF_DROP;
          }
          chain = top.chain;
          i = top.rule;
          continue;
        }
        case 'jump': case 'goto': {
          const next = base.targets.get(v.chain);
          if (next === undefined) return NF_DROP;
          if (v.code === 'jump') {
            if (stack.length >= NFT_JUMP_STACK_SIZE) {
              p.dropReason = 'nft jump stack overflow';
              return NF_DROP;
            }
            stack.push({ chain, rule: i });
          }
          chain = next;
          i = 0;
          continue;
        }
      }
    }
  }

  protected runLowered(lr: LoweredRule, table: NftTable, chain: NftChain, hookIndex: number, tableLabel: string, p: PacketState, host: NftHost, tr: TraceRecorder | null): Verdict {
    const steps = lr.steps;
    const hook: HookName = HOOK_NAME[hookIndex]!;
    for (let k = 0; k < steps.length; k++) {
      const s = steps[k]!;
      let r: Verdict | null;
      switch (s.kind) {
        case 'match':
          if (!s.test(p, host)) return CONTINUE;
          continue;
        case 'skip':
          continue;
        case 'verdict':
          r = s.verdict;
          break;
        case 'vmap':
          r = s.decide(p, host);
          if (r === null) return CONTINUE;
          break;
        case 'effect': {
          const x = this.statement(s.statement, table, p, host, tr, lr.sites[hookIndex]!);
          if (x === 'break') return CONTINUE;
          if (x === 'next') continue;
          r = x;
          break;
        }
      }
      if (tr !== null) {
        const jumps = r.code === 'jump' || r.code === 'goto';
        this.traceRule(tr, hook, tableLabel, chain, lr.index, lr.rule, table, jumps ? (r as { chain: string }).chain : r.code, jumps ? r.code as 'jump' | 'goto' : 'verdict');
      }
      return r;
    }
    if (tr !== null) this.traceRule(tr, hook, tableLabel, chain, lr.index, lr.rule, table, '', 'none');
    return CONTINUE;
  }

  // ---- lowering --------------------------------------------------------------------------------

  protected lowerStatement(s: NftStatement, table: NftTable): Step {
    switch (s.kind) {
      case 'match': return { kind: 'match', test: this.lowerMatch(s, table) };
      case 'verdict': return { kind: 'verdict', verdict: verdictOf(s) };
      case 'vmap': {
        const keys = this.lowerParts(s.key);
        const index = buildIndex(this.elements(s.mappings, table), keys.length);
        const verdicts = new Map<NftElement, Verdict>();
        const parts: Val[] = new Array<Val>(keys.length);
        return {
          kind: 'vmap',
          decide: (p, host) => {
            for (let i = 0; i < keys.length; i++) {
              const v = keys[i]!(p, host);
              if (v === null) return null;
              parts[i] = v;
            }
            const e = index.find(parts);
            if (e === undefined || e.data?.kind !== 'verdict') return null;
            let d = verdicts.get(e);
            if (d === undefined) {
              d = verdictOf(e.data);
              verdicts.set(e, d);
            }
            return d;
          },
        };
      }
      case 'counter': return { kind: 'skip' };
      default: return { kind: 'effect', statement: s };
    }
  }

  /** A named set's elements as the reference finds them: the rule's table first, then any table. */
  protected elements(m: NftAnonSet | NftSetRef, table: NftTable | undefined): readonly NftElement[] {
    if (m.kind === 'set') return m.elements;
    return table?.sets.find((x) => x.name === m.name)?.elements ?? this.findSet(m.name)?.elements ?? [];
  }

  protected lowerParts(sel: NftSelector): Reader[] {
    return sel.kind === 'concat' ? sel.items.map((i) => this.lowerRead(i)) : [this.lowerRead(sel)];
  }

  protected lowerMatch(s: Extract<NftStatement, { kind: 'match' }>, table: NftTable): (p: PacketState, host: NftHost) => boolean {
    const neg = s.op === '!=';
    const readers = this.lowerParts(s.left);
    const right = s.right;
    const one = readers.length === 1 ? readers[0]! : null;
    const readAll = (p: PacketState, host: NftHost, out: Val[]): boolean => {
      for (let i = 0; i < readers.length; i++) {
        const v = readers[i]!(p, host);
        if (v === null) return false;
        out[i] = v;
      }
      return true;
    };
    if (s.flagMask) {
      const m = canon(s.flagMask.value);
      const want = canon((right as NftValue).value);
      const read = readers[0]!;
      return (p, host) => {
        // Every part must be readable, as in the reference; only the first is compared.
        for (let i = 1; i < readers.length; i++) if (readers[i]!(p, host) === null) return false;
        const v = read(p, host);
        if (v === null) return false;
        return typeof v === 'number' && typeof m === 'number' ? ((v & m) >>> 0) === want : (BigInt(v) & BigInt(m)) === BigInt(want);
      };
    }
    if (right.kind === 'set' || right.kind === 'setref') {
      const index = buildIndex(this.elements(right, table), readers.length);
      const parts: Val[] = new Array<Val>(readers.length);
      const named = right.kind === 'setref' ? table.sets.find((x) => x.name === right.name) ?? this.findSet(right.name) : undefined;
      if (named !== undefined && this.fedFromPacketPath(named)) {
        return (p, host) => {
          if (!readAll(p, host, parts)) return false;
          const hit = index.find(parts) !== undefined || this.dynamicHas(named, parts, p.now);
          return neg ? !hit : hit;
        };
      }
      return (p, host) => {
        if (!readAll(p, host, parts)) return false;
        const hit = index.find(parts) !== undefined;
        return neg ? !hit : hit;
      };
    }
    if (right.kind === 'concat-value') {
      const tests = right.items.map(partTest);
      const parts: Val[] = new Array<Val>(readers.length);
      return (p, host) => {
        if (!readAll(p, host, parts)) return false;
        let hit = true;
        for (let i = 0; hit && i < tests.length; i++) hit = tests[i]!(parts[i]!);
        return neg ? !hit : hit;
      };
    }
    if (one === null) {
      // A concatenation compared with a single constant: the reference compares its first part.
      const test = partTest(right);
      const parts: Val[] = new Array<Val>(readers.length);
      return (p, host) => {
        if (!readAll(p, host, parts)) return false;
        const hit = test(parts[0]!);
        return s.op === '!=' ? !hit : s.op === 'implicit' || s.op === '==' ? hit : compare(s.op, parts[0]!, canon((right as NftValue).value));
      };
    }
    const st = s.left.kind === 'concat' ? undefined : selectorType(s.left);
    if (right.kind === 'value' && st && s.left.kind !== 'bitwise' && BITMASK_TYPES.has(st.type) && (s.op === 'implicit' || s.op === '!=')) {
      const flags = canon(st.type === 'ct_label' ? 1n << right.value : right.value);
      return (p, host) => {
        const v = one(p, host);
        if (v === null) return false;
        const hit = typeof v === 'number' && typeof flags === 'number' ? (v & flags) !== 0 : (BigInt(v) & BigInt(flags)) !== 0n;
        return neg ? !hit : hit;
      };
    }
    if (s.op === 'implicit' || s.op === '==' || s.op === '!=') {
      const test = partTest(right);
      return (p, host) => {
        const v = one(p, host);
        if (v === null) return false;
        return neg ? !test(v) : test(v);
      };
    }
    const c = canon((right as NftValue).value);
    const op = s.op;
    return (p, host) => {
      const v = one(p, host);
      return v !== null && compare(op, v, c);
    };
  }

  /** A selector's reader; the hot ones specialised, the rest through the reference's `read`. */
  protected lowerRead(sel: NftSelector): Reader {
    const generic: Reader = (p, host) => {
      const v = this.read(sel, p, host);
      return v === null ? null : canon(v);
    };
    switch (sel.kind) {
      case 'payload': {
        const proto = sel.protocol;
        if (proto === 'ip' || proto === 'ip6') {
          const fam = proto === 'ip' ? 4 : 6;
          switch (sel.field) {
            case 'saddr':
              return fam === 4 ? (p) => (p.family === 4 ? p.src[0]! >>> 0 : null) : (p) => (p.family === 6 ? canon(addrValue(p.src, 6)) : null);
            case 'daddr':
              return fam === 4 ? (p) => (p.family === 4 ? p.dst[0]! >>> 0 : null) : (p) => (p.family === 6 ? canon(addrValue(p.dst, 6)) : null);
            case 'protocol': case 'nexthdr':
              return (p) => (p.family === fam ? p.proto : null);
            default:
              return generic;
          }
        }
        const field = sel.field;
        if (field !== 'sport' && field !== 'dport') return generic;
        const sport = field === 'sport';
        if (proto === 'th') return (p) => (!PORT_PROTOCOLS.has(p.proto) || p.fragment ? null : sport ? p.sport : p.dport);
        const want = TRANSPORT[proto];
        if (want === undefined) return generic;
        return (p) => (p.proto !== want || p.fragment ? null : sport ? p.sport : p.dport);
      }
      case 'meta':
        switch (sel.key) {
          case 'mark': return (p) => p.mark >>> 0;
          case 'l4proto': return (p) => p.proto;
          case 'nfproto': return (p) => (p.family === 4 ? 2 : 10);
          case 'iifname': return (p) => (p.inIface === null ? 0 : ifnameKey(p.inIface));
          case 'oifname': return (p) => (p.outIface === null ? 0 : ifnameKey(p.outIface));
          case 'skuid': return (p) => (p.socket === null ? null : canon(BigInt(p.socket.uid)));
          case 'skgid': return (p) => (p.socket === null ? null : canon(BigInt(p.socket.gid)));
          default: return generic;
        }
      case 'ct':
        if (sel.key === 'state') return (p) => ctStateBits(p);
        return generic;
      case 'bitwise': {
        const operand = this.lowerRead(sel.operand);
        const { mask, xor } = sel;
        if (mask <= U32 && xor <= U32 && mask >= 0n && xor >= 0n) {
          const m = Number(mask) | 0;
          const x = Number(xor) | 0;
          return (p, host) => {
            const v = operand(p, host);
            if (v === null) return null;
            return typeof v === 'number' ? ((v & m) ^ x) >>> 0 : canon((v & mask) ^ xor);
          };
        }
        return (p, host) => {
          const v = operand(p, host);
          return v === null ? null : canon((BigInt(v) & mask) ^ xor);
        };
      }
      default:
        return generic;
    }
  }
}

function compare(op: string, v: Val, c: Val): boolean {
  switch (op) {
    case '<': return v < c;
    case '>': return v > c;
    case '<=': return v <= c;
    case '>=': return v >= c;
    case '==': case 'implicit': return v == c; // eslint-disable-line eqeqeq -- number and bigint of one value
    default: return v != c; // eslint-disable-line eqeqeq
  }
}
