/**
 * Rule and table drafts: the structured form the rule arbitraries generate and shrink, and its
 * resolution into iptables argument vectors.
 *
 * A draft holds every option of a rule as a separate field, so shrinking removes options one by
 * one and rules one by one. Placement that depends on the whole table (which hooks reach a user
 * chain, which chain a jump lands in) is settled when the draft is resolved, by `map`, never by
 * `filter`: a jump is an index into the chains it may reach without a loop, and an option that
 * is not legal where its chain ends up reachable is left out.
 *
 * @module
 * @internal
 */
import * as fc from 'fast-check';
import { TARGETS } from '../iptables/extensions/registry.js';
import { BUILTIN_CHAINS, HOOK_NAMES, type Family, type HookName, type TableName } from '../model/types.js';
import { LOADABLE_TARGETS, STANDARD_TARGET_NAMES } from '../iptables/syntax/command.js';
import { cidr } from './address.js';
import { hooksFit, protocolFits, tableFits, type Catalog, type GenContext, type MatchGen, type TargetGen } from './catalog.js';

/** One match of a drafted rule. @internal */
export interface MatchDraft {
  readonly name: string;
  readonly hooks: readonly HookName[] | undefined;
  /** Written as `-p tcp --dport 80`, without `-m tcp`. */
  readonly implicit: boolean;
  readonly options: readonly string[];
}

/** The target of a drafted rule. @internal */
export type TargetDraft =
  | { readonly kind: 'none' }
  | { readonly kind: 'verdict'; readonly verdict: 'ACCEPT' | 'DROP' | 'RETURN' }
  /** A jump (`-j`) or goto (`-g`) to the `pick`-th (modulo) chain it may reach. */
  | { readonly kind: 'chain'; readonly goto: boolean; readonly pick: number }
  | { readonly kind: 'extension'; readonly name: string; readonly hooks: readonly HookName[] | undefined; readonly options: readonly string[] };

/** A drafted rule. @internal */
export interface RuleDraft {
  /** `[]`, `['-p', 'tcp']`, `['!', '-p', 'udp']`… */
  readonly protocol: readonly string[];
  readonly source: readonly string[] | undefined;
  readonly destination: readonly string[] | undefined;
  readonly inInterface: readonly string[] | undefined;
  readonly outInterface: readonly string[] | undefined;
  readonly fragment: readonly string[] | undefined;
  readonly matches: readonly MatchDraft[];
  readonly target: TargetDraft;
}

/** What a rule draft is generated for. @internal */
export interface DraftContext {
  readonly family: Family;
  readonly table: TableName;
  readonly catalog: Catalog;
  readonly maxMatches: number;
  readonly maxCommentLength: number;
  /** Whether rules may jump to (or go to) user chains. */
  readonly jumps: boolean;
  /** Whether `-g` is generated besides `-j`. */
  readonly goto: boolean;
  /** Whether standard verdicts and no-target rules are generated. */
  readonly verdicts: boolean;
  /** Limit to rules with this `-p` (canonical name), when set. */
  readonly protocol?: string | undefined;
}

interface ProtocolBranch {
  /** Canonical, for extension requirements; undefined when absent or negated. */
  readonly canonical: string | undefined;
  readonly argv: fc.Arbitrary<string[]>;
  readonly weight: number;
  /** Whether `-f` may be combined (not with port matches). */
  readonly fragments: boolean;
}

function protocolBranches(family: Family): ProtocolBranch[] {
  const icmp = family === 4 ? 'icmp' : 'ipv6-icmp';
  return [
    { canonical: undefined, argv: fc.constantFrom<string[]>([], ['-p', 'all']), weight: 3, fragments: true },
    { canonical: 'tcp', argv: fc.constantFrom('tcp', 'tcp', 'tcp', '6', 'TCP').map((p) => ['-p', p]), weight: 5, fragments: false },
    { canonical: 'udp', argv: fc.constantFrom('udp', 'udp', '17').map((p) => ['-p', p]), weight: 2, fragments: false },
    {
      canonical: icmp,
      argv: (family === 4 ? fc.constantFrom('icmp', '1') : fc.constantFrom('ipv6-icmp', 'icmpv6', '58')).map((p) => ['-p', p]),
      weight: 1, fragments: true,
    },
    { canonical: undefined, argv: fc.constantFrom('tcp', 'udp', icmp).map((p) => ['!', '-p', p]), weight: 1, fragments: true },
    { canonical: 'sctp', argv: fc.constantFrom('sctp', '132').map((p) => ['-p', p]), weight: 1, fragments: false },
    { canonical: undefined, argv: fc.constantFrom('gre', 'esp', '47', 'ah').map((p) => ['-p', p]), weight: 1, fragments: true },
  ];
}

/** The protocol branches, limited to one canonical protocol when asked. @internal */
export function branchesFor(family: Family, protocol: string | undefined): ProtocolBranch[] {
  const all = protocolBranches(family);
  if (protocol === undefined) return all;
  const b = all.find((x) => x.canonical === protocol);
  return b ? [b] : [{ canonical: protocol, argv: fc.constant(['-p', protocol]), weight: 1, fragments: true }];
}

function neg(argv: fc.Arbitrary<string[]>): fc.Arbitrary<string[]> {
  return fc.tuple(fc.oneof({ arbitrary: fc.constant(false), weight: 5 }, { arbitrary: fc.constant(true), weight: 1 }), argv)
    .map(([n, a]) => (n ? ['!', ...a] : a));
}

const INTERFACES = ['eth0', 'lo', 'eth1', 'eth+', 'veth+', 'cali1a2b3c4d5e', 'docker0', 'wg0', 'cni0', 'ens3'];

function interfaceName(): fc.Arbitrary<string> {
  const random = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength: 1, maxLength: 14 });
  return fc.oneof(
    { arbitrary: fc.constantFrom(...INTERFACES), weight: 4 },
    { arbitrary: fc.tuple(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), random, fc.boolean()).map(([a, b, plus]) => `${a}${b}`.slice(0, 15 - (plus ? 1 : 0)) + (plus ? '+' : '')), weight: 1 },
  );
}

/** A match draft for one extension. */
function matchDraft(gen: MatchGen, ctx: GenContext): fc.Arbitrary<MatchDraft> {
  const implicitOk = gen.implicit === true && ctx.protocol !== undefined;
  return fc.tuple(gen.options(ctx), implicitOk ? fc.boolean() : fc.constant(false)).map(([options, implicit]) => ({
    name: gen.name,
    hooks: gen.hooks,
    implicit: implicit && options.length > 0,
    options,
  }));
}

function targetDraftExt(gen: TargetGen, ctx: GenContext): fc.Arbitrary<TargetDraft> {
  return gen.options(ctx).map((options) => ({ kind: 'extension' as const, name: gen.name, hooks: gen.hooks, options }));
}

/** Target drafts legal in `ctx.table` for the branch's protocol. @internal */
export function targetDraft(dc: DraftContext, ctx: GenContext): fc.Arbitrary<TargetDraft> {
  const arbs: { arbitrary: fc.Arbitrary<TargetDraft>; weight: number }[] = [];
  if (dc.verdicts) {
    // iptables: "The nat table is not intended for filtering, the use of DROP is therefore inhibited."
    const verdicts = dc.table === 'nat' ? (['ACCEPT', 'RETURN'] as const) : (['ACCEPT', 'DROP', 'RETURN'] as const);
    arbs.push({ arbitrary: fc.constantFrom(...verdicts).map((verdict) => ({ kind: 'verdict' as const, verdict })), weight: 4 });
    arbs.push({ arbitrary: fc.constant({ kind: 'none' as const }), weight: 1 });
  }
  if (dc.jumps) {
    const gotoArb = dc.goto ? fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }) : fc.constant(false);
    arbs.push({ arbitrary: fc.record({ goto: gotoArb, pick: fc.nat(1000) }).map((r) => ({ kind: 'chain' as const, ...r })), weight: 4 });
  }
  for (const gen of dc.catalog.targets) {
    if (!tableFits(gen.tables, dc.table) || !protocolFits(gen.protocols, ctx.protocol)) continue;
    arbs.push({ arbitrary: targetDraftExt(gen, ctx), weight: 2 });
  }
  if (arbs.length === 0) return fc.constant({ kind: 'none' as const });
  return fc.oneof(...arbs);
}

/** Drafts of one rule for a table. @internal */
export function ruleDraft(dc: DraftContext): fc.Arbitrary<RuleDraft> {
  const branches = branchesFor(dc.family, dc.protocol);
  return fc.oneof(...branches.map((b) => ({ arbitrary: ruleDraftFor(dc, b), weight: b.weight })));
}

function ruleDraftFor(dc: DraftContext, branch: ProtocolBranch): fc.Arbitrary<RuleDraft> {
  const ctx: GenContext = { family: dc.family, table: dc.table, protocol: branch.canonical, maxCommentLength: dc.maxCommentLength };
  const matchGens = dc.catalog.matches.filter((g) => tableFits(g.tables, dc.table) && protocolFits(g.protocols, branch.canonical));
  // Protocol matches first: they are the ones a reader expects, and the ones implicit loading needs.
  matchGens.sort((a, b) => Number(b.protocols !== undefined) - Number(a.protocols !== undefined));
  const matches: fc.Arbitrary<MatchDraft[]> = matchGens.length === 0 || dc.maxMatches === 0
    ? fc.constant([])
    : fc.uniqueArray(fc.oneof(...matchGens.map((g) => matchDraft(g, ctx))), { selector: (m) => m.name, maxLength: dc.maxMatches });
  // `! -s 0.0.0.0/0` never matches, and iptables-nft refuses it (a zero-length prefix cannot be
  // inverted: RULE_APPEND fails with EINVAL), so a negated address has a prefix.
  const addr = (flag: string): fc.Arbitrary<string[] | undefined> =>
    fc.option(
      fc.oneof(
        { arbitrary: cidr({ family: dc.family }).map((c) => [flag, c]), weight: 5 },
        { arbitrary: cidr({ family: dc.family, minPrefix: 1 }).map((c) => ['!', flag, c]), weight: 1 },
      ),
      { nil: undefined, freq: 3 },
    );
  const iface = (flag: string): fc.Arbitrary<string[] | undefined> =>
    fc.option(neg(interfaceName().map((n) => [flag, n])), { nil: undefined, freq: 4 });
  return fc.record({
    protocol: branch.argv,
    source: addr('-s'),
    destination: addr('-d'),
    inInterface: iface('-i'),
    outInterface: iface('-o'),
    fragment: dc.family === 4 && branch.fragments ? fc.option(neg(fc.constant(['-f'])), { nil: undefined, freq: 12 }) : fc.constant(undefined),
    matches,
    target: targetDraft(dc, ctx),
  });
}

/** Where a drafted rule ends up: its chain, the hooks that reach it, the chains it may jump to. @internal */
export interface RulePlace {
  readonly chain: string;
  readonly hooks: readonly HookName[];
  readonly jumpTargets: readonly string[];
}

/**
 * The arguments of a drafted rule after `-A CHAIN`, with everything that is not legal where it
 * landed left out. @internal
 */
export function renderRuleBody(draft: RuleDraft, place: RulePlace): string[] {
  const out: string[] = [...draft.protocol];
  if (draft.source) out.push(...draft.source);
  if (draft.destination) out.push(...draft.destination);
  // do_parse refuses -i on OUTPUT/POSTROUTING and -o on PREROUTING/INPUT; in a user chain reached
  // from there the option could never match, so it is left out too.
  if (draft.inInterface && !place.hooks.some((h) => h === 'OUTPUT' || h === 'POSTROUTING')) out.push(...draft.inInterface);
  if (draft.outInterface && !place.hooks.some((h) => h === 'PREROUTING' || h === 'INPUT')) out.push(...draft.outInterface);
  if (draft.fragment) out.push(...draft.fragment);
  const legal = draft.matches.filter((m) => hooksFit(m.hooks, place.hooks));
  for (const m of legal) if (m.implicit) out.push(...m.options);
  for (const m of legal) if (!m.implicit) out.push('-m', m.name, ...m.options);
  out.push(...renderTarget(draft.target, place));
  return out;
}

function renderTarget(t: TargetDraft, place: RulePlace): string[] {
  switch (t.kind) {
    case 'none':
      return [];
    case 'verdict':
      return ['-j', t.verdict];
    case 'chain': {
      if (place.jumpTargets.length === 0) return [];
      return [t.goto ? '-g' : '-j', place.jumpTargets[t.pick % place.jumpTargets.length]!];
    }
    case 'extension':
      return hooksFit(t.hooks, place.hooks) ? ['-j', t.name, ...t.options] : [];
  }
}

/** The chain a drafted target jumps to, once placed. @internal */
export function jumpOf(t: TargetDraft, jumpTargets: readonly string[]): string | undefined {
  if (t.kind !== 'chain' || jumpTargets.length === 0) return undefined;
  return jumpTargets[t.pick % jumpTargets.length];
}

// ---------------------------------------------------------------------------------------------
// Tables

/** A drafted user chain. @internal */
export interface ChainDraft {
  readonly name: string;
  readonly rules: readonly RuleDraft[];
}

/** A drafted table. @internal */
export interface TableDraft {
  readonly name: TableName;
  /** Policies of the built-in chains, in `BUILTIN_CHAINS` order. */
  readonly policies: readonly ('ACCEPT' | 'DROP')[];
  /** Rules of the built-in chains, in `BUILTIN_CHAINS` order. */
  readonly builtin: readonly (readonly RuleDraft[])[];
  readonly chains: readonly ChainDraft[];
}

const RESERVED = new Set<string>([...HOOK_NAMES, 'ACCEPT', 'DROP', 'RETURN', 'QUEUE', 'NFQUEUE', 'CONTINUE']);

/** Names a user chain cannot take: built-in chains, verdicts, any target iptables could load. */
function isReserved(name: string): boolean {
  return RESERVED.has(name) || STANDARD_TARGET_NAMES.has(name) || LOADABLE_TARGETS.has(name) || TARGETS.has(name);
}
const NAME_PREFIXES = ['', '', 'KUBE-SVC-', 'PROXY_INIT_', 'ISTIO_', 'cali-', 'DOCKER-', 'CNI-'];
const NAME_CHARS = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-'];

/** User chain names: realistic prefixes, at most `maxLength` characters, never a target's name. @internal */
export function chainName(maxLength: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...NAME_PREFIXES), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'), fc.string({ unit: fc.constantFrom(...NAME_CHARS), maxLength: maxLength - 1 }))
    .map(([prefix, first, rest]) => {
      let name = (prefix.length + 1 <= maxLength ? prefix : '') + first + rest;
      name = name.slice(0, maxLength);
      // iptables refuses a chain named like a target ("chain name conflicts with a target").
      if (isReserved(name)) name = name.length < maxLength ? `${name}_` : `${name.slice(0, -1)}_`;
      return name;
    });
}

/** Sizes and switches of a table draft. @internal */
export interface TableDraftOptions extends Omit<DraftContext, 'table'> {
  readonly maxChains: number;
  readonly maxRules: number;
  readonly maxChainNameLength: number;
  readonly policies: boolean;
}

/** Drafts of one table. @internal */
export function tableDraft(table: TableName, o: TableDraftOptions): fc.Arbitrary<TableDraft> {
  const dc: DraftContext = { ...o, table };
  const rules = fc.array(ruleDraft(dc), { maxLength: o.maxRules });
  const hooks = BUILTIN_CHAINS[table];
  const policy = o.policies && table !== 'nat'
    ? fc.oneof({ arbitrary: fc.constant('ACCEPT' as const), weight: 3 }, { arbitrary: fc.constant('DROP' as const), weight: 1 })
    : fc.constant('ACCEPT' as const);
  return fc.record({
    name: fc.constant(table),
    policies: fc.tuple(...hooks.map(() => policy)),
    builtin: fc.tuple(...hooks.map(() => rules)),
    chains: o.maxChains === 0
      ? fc.constant([])
      : fc.uniqueArray(fc.record({ name: chainName(o.maxChainNameLength), rules }), { selector: (c) => c.name, maxLength: o.maxChains }),
  });
}

/** A table draft resolved: every command, and each user chain's reaching hooks. @internal */
export interface ResolvedTable {
  readonly commands: string[][];
  /** Hooks each user chain is reachable from. */
  readonly reach: ReadonlyMap<string, readonly HookName[]>;
}

/**
 * Resolves a table draft into `iptables` commands: `-N` for every user chain, `-P` for every
 * policy that is not ACCEPT, then `-A` for every rule, chain by chain.
 *
 * Without `allowLoops`, a rule may jump only to user chains created after its own chain (and a
 * built-in chain to any), so the jump graph is acyclic.
 * @internal
 */
export function resolveTable(t: TableDraft, allowLoops: boolean): ResolvedTable {
  const hooks = BUILTIN_CHAINS[t.name];
  const names = t.chains.map((c) => c.name);
  const targetsOf = (index: number): readonly string[] => (index < 0 || allowLoops ? names : names.slice(index + 1));

  // Reachability over the resolved jumps (which do not depend on placement).
  const reach = new Map<string, Set<HookName>>(names.map((n) => [n, new Set<HookName>()]));
  const edges = new Map<string, string[]>();
  const addEdges = (from: string, rules: readonly RuleDraft[], index: number): void => {
    const out: string[] = [];
    for (const r of rules) {
      const j = jumpOf(r.target, targetsOf(index));
      if (j !== undefined) out.push(j);
    }
    edges.set(from, out);
  };
  hooks.forEach((h, i) => addEdges(`:${h}`, t.builtin[i]!, -1));
  t.chains.forEach((c, i) => addEdges(c.name, c.rules, i));
  hooks.forEach((h) => {
    const stack = [...(edges.get(`:${h}`) ?? [])];
    while (stack.length > 0) {
      const n = stack.pop()!;
      const s = reach.get(n)!;
      if (s.has(h)) continue;
      s.add(h);
      stack.push(...(edges.get(n) ?? []));
    }
  });
  const reachOf = (n: string): HookName[] => hooks.filter((h) => reach.get(n)!.has(h));

  const commands: string[][] = [];
  const T = ['-t', t.name];
  for (const n of names) commands.push([...T, '-N', n]);
  hooks.forEach((h, i) => {
    if (t.policies[i] !== 'ACCEPT') commands.push([...T, '-P', h, t.policies[i]!]);
  });
  hooks.forEach((h, i) => {
    for (const r of t.builtin[i]!) commands.push([...T, '-A', h, ...renderRuleBody(r, { chain: h, hooks: [h], jumpTargets: targetsOf(-1) })]);
  });
  t.chains.forEach((c, i) => {
    const place = { chain: c.name, hooks: reachOf(c.name), jumpTargets: targetsOf(i) };
    for (const r of c.rules) commands.push([...T, '-A', c.name, ...renderRuleBody(r, place)]);
  });
  return { commands, reach: new Map(names.map((n) => [n, reachOf(n)])) };
}
