/**
 * Lowering: a checked {@link Ruleset} turned into indices once, so evaluation does no string
 * comparison, no map lookup and no allocation per rule (`translate_table` to our `ipt_do_table`).
 * Chain names become indices, addresses word/mask pairs, interface names per-ifindex tables,
 * each match a closure, each target an opcode.
 *
 * @module
 */
import type { PacketView } from '../../model/packet.js';
import { HOOK_NAMES, TABLE_NAMES } from '../../model/types.js';
import type { Chain, Family, HookName, Negatable, Rule, Ruleset, Span, TableName } from '../../model/types.js';
import { parseProtocol } from '../../model/protocols.js';
import { MATCHES } from '../../iptables/extensions/registry.js';
import { portTestOf, type TcpOptions } from '../../iptables/extensions/match/tcp.js';
import { HOOK_INDEX, PROTO } from '../state/constants.js';
import type { LowerEnvironment, MatchExtension } from '../../iptables/extensions/types.js';
import type { ExtensionRegistry } from './registry.js';
import { isAssumed, ruleComment } from './registry.js';
import { EXT, NF_ACCEPT, NF_DROP, extOpcode } from './targets.js';

/** What a lowered rule's target does. */
export const VERDICT = { CONTINUE: 0, ACCEPT: 1, DROP: 2, RETURN: 3, JUMP: 4, GOTO: 5, EXT: 6 } as const;

/**
 * One rule, lowered. Nothing in it changes once lowered: its packet counter is slot {@link id}
 * of the namespace's counters, so namespaces built from the same rules can share it. @internal
 */
export interface LoweredRule {
  /** 1-based position in its chain. */
  readonly number: number;
  /** Its packet counter's slot (`ipt_entry.counters.pcnt`) among the program's {@link LoweredRuleset.slots}. */
  readonly id: number;
  readonly hasSrc: boolean;
  readonly invSrc: boolean;
  /** IPv4 address and mask as int32 (`ipt_ip.src`, `smsk`); 0 for IPv6. */
  readonly src0: number;
  readonly smsk0: number;
  /** IPv6 address and mask words (`ip6t_ip6.src`, `smsk`); zeros for IPv4. */
  readonly src: Uint32Array;
  readonly smsk: Uint32Array;
  readonly hasDst: boolean;
  readonly invDst: boolean;
  readonly dst0: number;
  readonly dmsk0: number;
  readonly dst: Uint32Array;
  readonly dmsk: Uint32Array;
  /** Per-ifindex table (index 0: no device); null when the rule has no `-i`. */
  readonly inIf: Uint8Array | null;
  readonly invIn: boolean;
  readonly outIf: Uint8Array | null;
  readonly invOut: boolean;
  /** Protocol number, or 0 for any. */
  readonly proto: number;
  readonly invProto: boolean;
  /** 0: no `-f`; 1: `-f`; 2: `! -f`. */
  readonly frag: number;
  /**
   * A `-m tcp`/`-m udp` port test lowered to data (`tcp_mt`/`udp_mt` without flags or options):
   * the protocol it requires, or 0 when the rule has none. It runs right after the base match,
   * which is where it stood: only comments came before it.
   */
  readonly l4: number;
  readonly spMin: number;
  readonly spMax: number;
  readonly spInv: boolean;
  readonly dpMin: number;
  readonly dpMax: number;
  readonly dpInv: boolean;
  /** The other matches, in order, each lowered by its module. */
  readonly matches: readonly ((p: PacketView) => boolean)[];
  /** Parallel to {@link matches}: the module name when it only assumes, else null. */
  readonly assumed: readonly (string | null)[];
  /** Parallel to {@link matches}: what the module assumes, for traces. */
  readonly assumptions: readonly (string | null)[];
  readonly anyAssumed: boolean;
  readonly verdict: number;
  /** Chain index for JUMP/GOTO. */
  readonly jumpTo: number;
  /** {@link EXT} opcode for extension targets. */
  readonly ext: number;
  readonly extOptions: unknown;
  /** Target as iptables names it, for traces. */
  readonly targetName: string;
  readonly action: 'verdict' | 'jump' | 'goto' | 'extension' | 'none';
  readonly text: string | null;
  readonly comment: string | null;
  readonly span: Span | null;
  readonly source: Rule;
}

/**
 * An index over a run of consecutive rules that each test an exact destination port (and, with
 * {@link byDst}, an exact destination address) with the protocol: kube-proxy's `KUBE-SERVICES`
 * (`-d VIP/32 -p tcp -m comment … -m tcp --dport P -j KUBE-SVC-…`), `KUBE-NODEPORTS`. A packet's
 * key selects, in rule order, the only rules of the run that can match it; the others fail their
 * base or port test, which records nothing and changes nothing, so skipping them keeps the
 * first match, the counters and the trace exactly as the linear walk. @internal
 */
export interface DispatchRun {
  /** First rule of the run (0-based) and one past its last. */
  readonly start: number;
  readonly end: number;
  /** Whether the key includes the destination address (else protocol and port only). */
  readonly byDst: boolean;
  /** Buckets - 1 (a power of two minus one). */
  readonly mask: number;
  /** CSR layout: bucket b holds `rules[bucketStart[b] .. bucketStart[b + 1])`, ascending. */
  readonly bucketStart: Int32Array;
  readonly bucketRules: Int32Array;
  /**
   * Told of every skip, rules `from` to `to - 1` of the chain, none of whose keys is the
   * packet's (explore records what the skip established); absent in the engine's own program.
   */
  readonly skipped?: (from: number, to: number, p: PacketView) => void;
}

/** One chain, lowered. @internal */
export interface LoweredChain {
  readonly name: string;
  /** The counter slot of the packets its policy decided (the chain's own counters). */
  readonly id: number;
  readonly builtin: boolean;
  /** NF_ACCEPT / NF_DROP for built-in chains. */
  readonly policy: number;
  readonly policyName: 'ACCEPT' | 'DROP';
  readonly rules: readonly LoweredRule[];
  /** Per rule, the index in {@link runs} of the run it belongs to, or -1; null without runs. */
  readonly runAt: Int32Array | null;
  readonly runs: readonly DispatchRun[];
}

/** One table, lowered. @internal */
export interface LoweredTable {
  readonly name: TableName;
  readonly chains: readonly LoweredChain[];
  /** Chain index of each hook's built-in chain (by NF_INET index), -1 where the table has none. */
  readonly hookEntry: Int32Array;
  /** Jump stack slots (legacy `stacksize`: one per user-defined chain). */
  readonly stackSize: number;
  /**
   * Scratch jump stack: [chain, next rule] pairs. A walk uses it from its start to its verdict
   * and nothing else runs a table meanwhile, so the namespaces that share the table share it.
   */
  readonly jumpStack: Int32Array;
}

/** A lowered rule set of one family. @internal */
export interface LoweredRuleset {
  readonly family: Family;
  /** By table index in {@link TABLE_NAMES} order; null for tables the rule set does not have. */
  readonly tables: readonly (LoweredTable | null)[];
  /** Table indices in the order the rule set lists its tables. */
  readonly order: readonly number[];
  /** Counter slots: one per rule and one per chain (its policy), numbered in rule-set order. */
  readonly slots: number;
}

/** Table index of a name, in {@link TABLE_NAMES} order. */
export const TABLE_INDEX: { readonly [T in TableName]: number } = { raw: 0, mangle: 1, nat: 2, filter: 3, security: 4 };

/** Hooks each table registers (iptable_*.c `valid_hooks`). */
export const TABLE_HOOKS: { readonly [T in TableName]: readonly HookName[] } = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/**
 * `ifname_compare_aligned` with iptables' mask: `eth0` is exact, `eth+` a prefix, `+` anything
 * (also no device). Returns, per ifindex (0 = no device), whether the name matches.
 */
export function lowerInterface(pattern: string, ifaceNames: readonly string[]): Uint8Array {
  const table = new Uint8Array(ifaceNames.length + 1);
  const prefix = pattern.endsWith('+');
  const stem = prefix ? pattern.slice(0, -1) : pattern;
  table[0] = prefix && stem === '' ? 1 : 0;
  for (let i = 0; i < ifaceNames.length; i++) {
    const name = ifaceNames[i]!;
    table[i + 1] = (prefix ? name.startsWith(stem) : name === stem) ? 1 : 0;
  }
  return table;
}

/** The protocol number of a rule's `-p` (0 for `all`). */
export function protocolNumber(p: Negatable<string> | undefined): number {
  if (!p) return 0;
  const n = parseProtocol(p.value.toLowerCase());
  return n ?? 0;
}

/** Shared by every IPv4 rule: IPv4 tests read the int32 fields instead. */
const NO_WORDS = new Uint32Array(4);

function words(a: readonly number[] | undefined, family: Family): Uint32Array {
  if (family === 4 || a === undefined) return NO_WORDS;
  const w = new Uint32Array(4);
  for (let i = 0; i < a.length && i < 4; i++) w[i] = a[i]! >>> 0;
  return w;
}

function word0(a: readonly number[] | undefined, family: Family): number {
  return family === 4 && a !== undefined ? a[0]! | 0 : 0;
}

const NEVER = (): boolean => false;

const BUILTIN_COMMENT = MATCHES.get('comment');
const BUILTIN_TCP = MATCHES.get('tcp');
const BUILTIN_UDP = MATCHES.get('udp');

/** A port test lowered to data. */
interface PortTest {
  readonly proto: number;
  readonly spMin: number;
  readonly spMax: number;
  readonly spInv: boolean;
  readonly dpMin: number;
  readonly dpMax: number;
  readonly dpInv: boolean;
}

/**
 * The built-in `tcp`/`udp` match as data, when that is all it tests (`tcp_mt` with no
 * `--tcp-flags`/`--syn`/`--tcp-option`; `udp_mt`) and the rule's `-p` names its protocol.
 */
function portTest(ext: MatchExtension | undefined, o: TcpOptions, proto: number, invProto: boolean): PortTest | null {
  let l4: number;
  if (ext === BUILTIN_TCP && ext !== undefined) l4 = PROTO.TCP;
  else if (ext === BUILTIN_UDP && ext !== undefined) l4 = PROTO.UDP;
  else return null;
  if (proto !== l4 || invProto || o.flags !== undefined || o.option !== undefined) return null;
  // A negated full range tests nothing under iptables-nft (portTestOf).
  const sport = portTestOf(o.sport);
  const dport = portTestOf(o.dport);
  return {
    proto: l4,
    spMin: sport?.value.min ?? 0,
    spMax: sport?.value.max ?? 65535,
    spInv: sport?.negated ?? false,
    dpMin: dport?.value.min ?? 0,
    dpMax: dport?.value.max ?? 65535,
    dpInv: dport?.negated ?? false,
  };
}

/** Shortest run of keyed rules worth an index; below it the linear walk is as fast. */
const MIN_DISPATCH_RUN = 8;

/** The dispatch key a rule has: 0 none, 1 protocol and port, 2 with the destination too. */
function keyKind(r: LoweredRule, family: Family): number {
  if (r.l4 === 0 || r.dpInv || r.dpMin !== r.dpMax) return 0;
  if (!r.hasDst) return 1;
  if (r.invDst) return 0;
  if (family === 4) return r.dmsk0 === -1 ? 2 : 0;
  for (let i = 0; i < 4; i++) if (r.dmsk[i] !== 0xffffffff) return 0;
  return 2;
}

/** The hash a {@link DispatchRun} buckets by: protocol, port and (with `dst`) the address words. */
export function dispatchHash(proto: number, port: number, dst: ArrayLike<number> | null, n: number): number {
  let h = Math.imul((proto << 16) | port, 0x9e3779b1);
  if (dst !== null) for (let i = 0; i < n; i++) h = Math.imul(h ^ dst[i]!, 0x01000193) + 0x7feb352d;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h ^ (h >>> 16);
}

function buildRun(rules: readonly LoweredRule[], start: number, end: number, byDst: boolean, family: Family): DispatchRun {
  const n = family === 4 ? 1 : 4;
  let buckets = 1;
  while (buckets < (end - start) * 2) buckets *= 2;
  const mask = buckets - 1;
  const bucketOf = new Int32Array(end - start);
  const counts = new Int32Array(buckets + 1);
  for (let i = start; i < end; i++) {
    const r = rules[i]!;
    const b = dispatchHash(r.l4, r.dpMin, byDst ? (family === 4 ? [r.dst0] : r.dst) : null, n) & mask;
    bucketOf[i - start] = b;
    counts[b + 1]!++;
  }
  const bucketStart = new Int32Array(buckets + 1);
  for (let b = 0; b < buckets; b++) bucketStart[b + 1] = bucketStart[b]! + counts[b + 1]!;
  const fill = bucketStart.slice(0, buckets);
  const bucketRules = new Int32Array(end - start);
  // In rule order, so each bucket lists its rules ascending.
  for (let i = start; i < end; i++) bucketRules[fill[bucketOf[i - start]!]!++] = i;
  return { start, end, byDst, mask, bucketStart, bucketRules };
}

/** Finds the runs of a chain's rules that share a dispatch key kind. */
function dispatchRuns(rules: readonly LoweredRule[], family: Family): { runAt: Int32Array | null; runs: DispatchRun[] } {
  const runs: DispatchRun[] = [];
  let runAt: Int32Array | null = null;
  let i = 0;
  while (i < rules.length) {
    const kind = keyKind(rules[i]!, family);
    let j = i + 1;
    if (kind !== 0) while (j < rules.length && keyKind(rules[j]!, family) === kind) j++;
    if (kind !== 0 && j - i >= MIN_DISPATCH_RUN) {
      runAt ??= new Int32Array(rules.length).fill(-1);
      runAt.fill(runs.length, i, j);
      runs.push(buildRun(rules, i, j, kind === 2, family));
    }
    i = j;
  }
  return { runAt, runs };
}

function lowerRule(
  rule: Rule,
  number: number,
  id: number,
  family: Family,
  chainIndex: ReadonlyMap<string, number>,
  ifaceNames: readonly string[],
  registry: ExtensionRegistry,
  env: LowerEnvironment,
): LoweredRule {
  const matches: ((p: PacketView) => boolean)[] = [];
  const assumed: (string | null)[] = [];
  const assumptions: (string | null)[] = [];
  const proto = protocolNumber(rule.protocol);
  let ports: PortTest | null = null;
  let onlyComments = true;
  for (const m of rule.matches) {
    const ext = registry.matches.get(m.name);
    // The built-in comment match always holds and records nothing: it needs no test.
    if (ext === BUILTIN_COMMENT) continue;
    if (onlyComments && ports === null) {
      ports = portTest(ext, m.options as TcpOptions, proto, rule.protocol?.negated ?? false);
      if (ports !== null) continue;
    }
    onlyComments = false;
    // check() refuses unknown modules; a rule set lowered without it never matches such a rule.
    matches.push(ext ? ext.lower(m.options, family, env) : NEVER);
    const a = ext?.assumption?.(m.options);
    assumed.push(ext && (isAssumed(ext) || a !== undefined) ? m.name : null);
    assumptions.push(a ?? null);
  }
  let verdict: number = VERDICT.CONTINUE;
  let jumpTo = -1;
  let ext: number = EXT.OTHER_CONTINUE;
  let extOptions: unknown = null;
  let targetName = '';
  let action: LoweredRule['action'] = 'none';
  const t = rule.target;
  if (t !== null) {
    switch (t.kind) {
      case 'verdict':
        verdict = t.verdict === 'ACCEPT' ? VERDICT.ACCEPT : t.verdict === 'DROP' ? VERDICT.DROP : VERDICT.RETURN;
        targetName = t.verdict;
        action = 'verdict';
        break;
      case 'jump':
      case 'goto':
        verdict = t.kind === 'jump' ? VERDICT.JUMP : VERDICT.GOTO;
        jumpTo = chainIndex.get(t.chain) ?? -1;
        targetName = t.chain;
        action = t.kind;
        break;
      case 'extension': {
        const te = registry.targets.get(t.name);
        verdict = VERDICT.EXT;
        ext = extOpcode(t.name, te ? te.terminal : true);
        extOptions = t.options;
        targetName = t.name;
        action = 'extension';
        break;
      }
    }
  }
  const s = rule.source;
  const d = rule.destination;
  const frag = rule.fragment ? (rule.fragment.negated ? 2 : 1) : 0;
  return {
    number,
    id,
    hasSrc: s !== undefined,
    invSrc: s?.negated ?? false,
    src0: word0(s?.value.addr, family),
    smsk0: word0(s?.value.mask, family),
    src: words(s?.value.addr, family),
    smsk: words(s?.value.mask, family),
    hasDst: d !== undefined,
    invDst: d?.negated ?? false,
    dst0: word0(d?.value.addr, family),
    dmsk0: word0(d?.value.mask, family),
    dst: words(d?.value.addr, family),
    dmsk: words(d?.value.mask, family),
    inIf: rule.inInterface ? lowerInterface(rule.inInterface.value, ifaceNames) : null,
    invIn: rule.inInterface?.negated ?? false,
    outIf: rule.outInterface ? lowerInterface(rule.outInterface.value, ifaceNames) : null,
    invOut: rule.outInterface?.negated ?? false,
    proto,
    invProto: rule.protocol?.negated ?? false,
    frag,
    l4: ports?.proto ?? 0,
    spMin: ports?.spMin ?? 0,
    spMax: ports?.spMax ?? 65535,
    spInv: ports?.spInv ?? false,
    dpMin: ports?.dpMin ?? 0,
    dpMax: ports?.dpMax ?? 65535,
    dpInv: ports?.dpInv ?? false,
    matches,
    assumed,
    assumptions,
    anyAssumed: assumed.some((a) => a !== null),
    verdict,
    jumpTo,
    ext,
    extOptions,
    targetName,
    action,
    text: rule.text ?? null,
    comment: ruleComment(rule.matches),
    span: rule.span ?? null,
    source: rule,
  };
}

function lowerChain(
  chain: Chain,
  slots: { next: number },
  family: Family,
  chainIndex: ReadonlyMap<string, number>,
  ifaceNames: readonly string[],
  registry: ExtensionRegistry,
  env: LowerEnvironment,
): LoweredChain {
  const policyName = chain.policy === 'DROP' ? 'DROP' : 'ACCEPT';
  const rules = chain.rules.map((r, i) => lowerRule(r, i + 1, slots.next++, family, chainIndex, ifaceNames, registry, env));
  const { runAt, runs } = dispatchRuns(rules, family);
  return {
    name: chain.name,
    id: slots.next++,
    builtin: chain.builtin,
    policy: policyName === 'DROP' ? NF_DROP : NF_ACCEPT,
    policyName,
    rules,
    runAt,
    runs,
  };
}

/**
 * Lowers a rule set for a namespace whose interfaces are `ifaceNames` (ifindex i+1 is
 * `ifaceNames[i]`). The rule set must have passed {@link check}; lowering does not validate.
 */
export function lowerRuleset(ruleset: Ruleset, ifaceNames: readonly string[], registry: ExtensionRegistry, env: LowerEnvironment = {}): LoweredRuleset {
  const tables: (LoweredTable | null)[] = TABLE_NAMES.map(() => null);
  const order: number[] = [];
  const slots = { next: 0 };
  for (const table of ruleset.tables) {
    order.push(TABLE_INDEX[table.name]);
    const chains: Chain[] = [...table.chains];
    // A table always registers all its hooks; a built-in chain missing from a dump has policy ACCEPT.
    for (const hook of TABLE_HOOKS[table.name]) {
      if (!chains.some((c) => c.builtin && c.name === hook)) {
        chains.push({ name: hook, builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [] });
      }
    }
    const chainIndex = new Map<string, number>();
    chains.forEach((c, i) => chainIndex.set(c.name, i));
    const hookEntry = new Int32Array(HOOK_NAMES.length).fill(-1);
    for (const hook of TABLE_HOOKS[table.name]) {
      hookEntry[HOOK_INDEX[hook]] = chains.findIndex((c) => c.builtin && c.name === hook);
    }
    const stackSize = chains.filter((c) => !c.builtin).length;
    tables[TABLE_INDEX[table.name]] = {
      name: table.name,
      chains: chains.map((c) => lowerChain(c, slots, ruleset.family, chainIndex, ifaceNames, registry, env)),
      hookEntry,
      stackSize,
      jumpStack: new Int32Array(stackSize * 2 + 2),
    };
  }
  return { family: ruleset.family, tables, order, slots: slots.next };
}
