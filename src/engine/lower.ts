/**
 * Lowering: a checked {@link Ruleset} turned into indices once, so evaluation does no string
 * comparison, no map lookup and no allocation per rule (`translate_table` to our `ipt_do_table`).
 * Chain names become indices, addresses word/mask pairs, interface names per-ifindex tables,
 * each match a closure, each target an opcode.
 *
 * @module
 */
import type { PacketView } from '../model/packet.js';
import { HOOK_NAMES, TABLE_NAMES } from '../model/types.js';
import type { Chain, Family, HookName, Negatable, Rule, Ruleset, Span, TableName } from '../model/types.js';
import { parseProtocol } from '../syntax/protocols.js';
import { HOOK_INDEX } from './constants.js';
import type { ExtensionRegistry } from './registry.js';
import { isAssumed, ruleComment } from './registry.js';
import { EXT, NF_ACCEPT, NF_DROP, extOpcode } from './targets.js';

/** What a lowered rule's target does. */
export const VERDICT = { CONTINUE: 0, ACCEPT: 1, DROP: 2, RETURN: 3, JUMP: 4, GOTO: 5, EXT: 6 } as const;

/** One rule, lowered. @internal */
export interface LoweredRule {
  /** 1-based position in its chain. */
  readonly number: number;
  readonly hasSrc: boolean;
  readonly invSrc: boolean;
  readonly src: Uint32Array;
  readonly smsk: Uint32Array;
  readonly hasDst: boolean;
  readonly invDst: boolean;
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
  /** Packets that matched the rule (`ipt_entry.counters.pcnt`). */
  packets: number;
}

/** One chain, lowered. @internal */
export interface LoweredChain {
  readonly name: string;
  readonly builtin: boolean;
  /** NF_ACCEPT / NF_DROP for built-in chains. */
  readonly policy: number;
  readonly policyName: 'ACCEPT' | 'DROP';
  readonly rules: readonly LoweredRule[];
  /** Packets the policy decided (the chain's own counters). */
  policyPackets: number;
}

/** One table, lowered. @internal */
export interface LoweredTable {
  readonly name: TableName;
  readonly chains: readonly LoweredChain[];
  /** Chain index of each hook's built-in chain (by NF_INET index), -1 where the table has none. */
  readonly hookEntry: Int32Array;
  /** Jump stack slots (legacy `stacksize`: one per user-defined chain). */
  readonly stackSize: number;
  /** Scratch jump stack: [chain, next rule] pairs. */
  readonly jumpStack: Int32Array;
}

/** A lowered rule set of one family. @internal */
export interface LoweredRuleset {
  readonly family: Family;
  /** By table index in {@link TABLE_NAMES} order; null for tables the rule set does not have. */
  readonly tables: readonly (LoweredTable | null)[];
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

function words(a: readonly number[] | undefined): Uint32Array {
  const w = new Uint32Array(4);
  if (a) for (let i = 0; i < a.length && i < 4; i++) w[i] = a[i]! >>> 0;
  return w;
}

const NEVER = (): boolean => false;

function lowerRule(
  rule: Rule,
  number: number,
  family: Family,
  chainIndex: ReadonlyMap<string, number>,
  ifaceNames: readonly string[],
  registry: ExtensionRegistry,
): LoweredRule {
  const matches: ((p: PacketView) => boolean)[] = [];
  const assumed: (string | null)[] = [];
  const assumptions: (string | null)[] = [];
  for (const m of rule.matches) {
    const ext = registry.matches.get(m.name);
    // check() refuses unknown modules; a rule set lowered without it never matches such a rule.
    matches.push(ext ? ext.lower(m.options, family) : NEVER);
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
    hasSrc: s !== undefined,
    invSrc: s?.negated ?? false,
    src: words(s?.value.addr),
    smsk: words(s?.value.mask),
    hasDst: d !== undefined,
    invDst: d?.negated ?? false,
    dst: words(d?.value.addr),
    dmsk: words(d?.value.mask),
    inIf: rule.inInterface ? lowerInterface(rule.inInterface.value, ifaceNames) : null,
    invIn: rule.inInterface?.negated ?? false,
    outIf: rule.outInterface ? lowerInterface(rule.outInterface.value, ifaceNames) : null,
    invOut: rule.outInterface?.negated ?? false,
    proto: protocolNumber(rule.protocol),
    invProto: rule.protocol?.negated ?? false,
    frag,
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
    packets: 0,
  };
}

function lowerChain(
  chain: Chain,
  family: Family,
  chainIndex: ReadonlyMap<string, number>,
  ifaceNames: readonly string[],
  registry: ExtensionRegistry,
): LoweredChain {
  const policyName = chain.policy === 'DROP' ? 'DROP' : 'ACCEPT';
  return {
    name: chain.name,
    builtin: chain.builtin,
    policy: policyName === 'DROP' ? NF_DROP : NF_ACCEPT,
    policyName,
    rules: chain.rules.map((r, i) => lowerRule(r, i + 1, family, chainIndex, ifaceNames, registry)),
    policyPackets: 0,
  };
}

/**
 * Lowers a rule set for a namespace whose interfaces are `ifaceNames` (ifindex i+1 is
 * `ifaceNames[i]`). The rule set must have passed {@link check}; lowering does not validate.
 */
export function lowerRuleset(ruleset: Ruleset, ifaceNames: readonly string[], registry: ExtensionRegistry): LoweredRuleset {
  const tables: (LoweredTable | null)[] = TABLE_NAMES.map(() => null);
  for (const table of ruleset.tables) {
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
      chains: chains.map((c) => lowerChain(c, ruleset.family, chainIndex, ifaceNames, registry)),
      hookEntry,
      stackSize,
      jumpStack: new Int32Array(stackSize * 2 + 2),
    };
  }
  return { family: ruleset.family, tables };
}
