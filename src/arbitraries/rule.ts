/**
 * Single rules and their parts: `rule()` (the model), `ruleArgs()` (the `iptables` arguments),
 * `match()` and `target()` (argument fragments to build rules of your own).
 *
 * @module
 */
import * as fc from 'fast-check';
import { BUILTIN_CHAINS, type Family, type HookName, type Rule, type TableName } from '../model/types.js';
import { parseIptablesArgv } from '../iptables/syntax/command.js';
import { catalogFor, hooksFit, KNOWN_MATCHES, protocolFits, tableFits, type GenContext } from './catalog.js';
import { badConstraint, checkFamily, checkInt, checkKnownKeys, checkTables } from './constraints.js';
import { renderRuleBody, ruleDraft, targetDraft, type DraftContext, type TargetDraft } from './draft.js';
import type { ModuleConstraints } from './ruleset.js';

/**
 * Constraints of {@link rule} and {@link ruleArgs}.
 *
 * @example
 * ```ts
 * const c: RuleConstraints = { table: 'nat', chain: 'OUTPUT', jumpTargets: ['PROXY_INIT_OUTPUT'] };
 * ```
 */
export interface RuleConstraints extends ModuleConstraints {
  /**
   * Address family.
   * @defaultValue 4
   */
  readonly family?: Family;
  /**
   * The rule's table.
   * @defaultValue 'filter'
   */
  readonly table?: TableName;
  /**
   * The rule's chain: a built-in chain of the table or a user chain.
   * @defaultValue 'OUTPUT'
   */
  readonly chain?: string;
  /**
   * For a user chain, the hooks it is reachable from (what the rule may use depends on them).
   * @defaultValue [] (reachable from no hook: anything legal in the table)
   */
  readonly hooks?: readonly HookName[];
  /**
   * User chains the rule may jump to (`-j`) or go to (`-g`).
   * @defaultValue []
   */
  readonly jumpTargets?: readonly string[];
  /**
   * Only rules with this protocol (`tcp`, `udp`, `icmp`, `ipv6-icmp`, …), as iptables-save
   * prints it.
   * @defaultValue any protocol, or none
   */
  readonly protocol?: string;
  /**
   * Most matches (`-m`).
   * @defaultValue 3
   */
  readonly maxMatches?: number;
  /**
   * Longest `--comment`.
   * @defaultValue 64
   */
  readonly maxCommentLength?: number;
}

interface RuleSettings {
  readonly dc: DraftContext;
  readonly chain: string;
  readonly hooks: readonly HookName[];
  readonly jumpTargets: readonly string[];
}

function ruleSettings(name: string, c: RuleConstraints): RuleSettings {
  checkKnownKeys(name, c, ['family', 'table', 'chain', 'hooks', 'jumpTargets', 'protocol', 'maxMatches', 'maxCommentLength', 'matches', 'targets']);
  const family = checkFamily(name, c.family);
  const [table] = checkTables(name, c.table === undefined ? undefined : [c.table], ['filter']);
  const builtins = BUILTIN_CHAINS[table!] as readonly string[];
  const chainName = c.chain ?? (builtins.includes('OUTPUT') ? 'OUTPUT' : builtins[0]!);
  if (typeof chainName !== 'string' || chainName.length === 0 || chainName.length > 28 || /\s/.test(chainName)) {
    badConstraint(name, 'chain', `must be a chain name of 1 to 28 characters without blanks, got ${JSON.stringify(c.chain)}`);
  }
  const isBuiltin = builtins.includes(chainName);
  const hooks: readonly HookName[] = isBuiltin ? [chainName as HookName] : (c.hooks ?? []);
  if (!Array.isArray(hooks) || hooks.some((h) => !builtins.includes(h))) {
    badConstraint(name, 'hooks', `must list hooks of the ${table} table (${builtins.join(', ')}), got ${JSON.stringify(c.hooks)}`);
  }
  const jumpTargets = c.jumpTargets ?? [];
  if (!Array.isArray(jumpTargets) || jumpTargets.some((j) => typeof j !== 'string' || j.length === 0 || j.length > 28 || /\s/.test(j))) {
    badConstraint(name, 'jumpTargets', 'must be an array of chain names');
  }
  if (c.protocol !== undefined && (typeof c.protocol !== 'string' || c.protocol.length === 0)) {
    badConstraint(name, 'protocol', `must be a protocol name, got ${JSON.stringify(c.protocol)}`);
  }
  const catalog = catalogFor(family, c.matches, c.targets, (f, m) => badConstraint(name, f, m));
  return {
    dc: {
      family, table: table!, catalog,
      maxMatches: checkInt(name, 'maxMatches', c.maxMatches, 0, KNOWN_MATCHES.length, 3),
      maxCommentLength: checkInt(name, 'maxCommentLength', c.maxCommentLength, 1, 255, 64),
      jumps: jumpTargets.length > 0, goto: true, verdicts: true, protocol: c.protocol,
    },
    chain: chainName,
    hooks,
    jumpTargets,
  };
}

/**
 * Rules as the arguments of one `iptables` command that appends them:
 * `['-t', 'nat', '-A', 'OUTPUT', '-p', 'tcp', '-m', 'owner', '!', '--uid-owner', '1337', '-j', 'REDIRECT', '--to-ports', '15001']`.
 * Every option is legal where the rule sits; shrinking drops options one at a time.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { ruleArgs } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(ruleArgs({ table: 'nat', chain: 'PREROUTING' }), (argv) => {
 *   myTranslator.translate(argv); // must not throw on anything iptables accepts
 * }));
 * ```
 */
export function ruleArgs(constraints: RuleConstraints = {}): fc.Arbitrary<string[]> {
  const s = ruleSettings('ruleArgs', constraints);
  return ruleDraft(s.dc).map((d) => ['-t', s.dc.table, '-A', s.chain, ...renderRuleBody(d, { chain: s.chain, hooks: s.hooks, jumpTargets: s.jumpTargets })]);
}

/**
 * Rules as the model holds them (`Rule`), parsed from {@link ruleArgs} by netfilter-sim's own
 * command parser.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { printRule } from 'netfilter-sim';
 * import { rule } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(rule({ table: 'nat', chain: 'OUTPUT' }), (r) => printRule(r, 'OUTPUT', 4).startsWith('-A OUTPUT')));
 * ```
 */
export function rule(constraints: RuleConstraints = {}): fc.Arbitrary<Rule> {
  const s = ruleSettings('rule', constraints);
  return ruleDraft(s.dc).map((d) => {
    const argv = ['-t', s.dc.table, '-A', s.chain, ...renderRuleBody(d, { chain: s.chain, hooks: s.hooks, jumpTargets: s.jumpTargets })];
    return parseIptablesArgv(argv, { family: s.dc.family, mode: 'strict', text: argv.join(' ') }).rules[0]!;
  });
}

/**
 * Constraints of {@link match} and {@link target}: where the fragment will be used.
 *
 * @example
 * ```ts
 * const c: FragmentConstraints = { table: 'nat', hooks: ['OUTPUT'], protocol: 'tcp' };
 * ```
 */
export interface FragmentConstraints extends ModuleConstraints {
  /**
   * Address family.
   * @defaultValue 4
   */
  readonly family?: Family;
  /**
   * The table of the rule the fragment goes into.
   * @defaultValue 'filter'
   */
  readonly table?: TableName;
  /**
   * Hooks the rule's chain is reachable from.
   * @defaultValue [] (no restriction)
   */
  readonly hooks?: readonly HookName[];
  /**
   * The rule's `-p` (canonical name), which protocol extensions need (`tcp`, `multiport`,
   * `TPROXY`…).
   * @defaultValue none
   */
  readonly protocol?: string;
  /**
   * Longest `--comment`.
   * @defaultValue 64
   */
  readonly maxCommentLength?: number;
  /**
   * (target only) User chains a `-j`/`-g` may name.
   * @defaultValue []
   */
  readonly jumpTargets?: readonly string[];
  /**
   * (target only) Whether `ACCEPT`/`DROP`/`RETURN` are generated besides extensions.
   * @defaultValue true
   */
  readonly verdicts?: boolean;
}

function fragmentContext(name: string, c: FragmentConstraints, keys: readonly string[]): { ctx: GenContext; hooks: readonly HookName[]; dc: DraftContext } {
  checkKnownKeys(name, c, keys);
  const family = checkFamily(name, c.family);
  const [table] = checkTables(name, c.table === undefined ? undefined : [c.table], ['filter']);
  const hooks = c.hooks ?? [];
  const builtins = BUILTIN_CHAINS[table!] as readonly string[];
  if (!Array.isArray(hooks) || hooks.some((h) => !builtins.includes(h))) {
    badConstraint(name, 'hooks', `must list hooks of the ${table} table (${builtins.join(', ')}), got ${JSON.stringify(c.hooks)}`);
  }
  const catalog = catalogFor(family, c.matches, c.targets, (f, m) => badConstraint(name, f, m));
  const maxCommentLength = checkInt(name, 'maxCommentLength', c.maxCommentLength, 1, 255, 64);
  const jumpTargets = c.jumpTargets ?? [];
  return {
    ctx: { family, table: table!, protocol: c.protocol, maxCommentLength },
    hooks,
    dc: {
      family, table: table!, catalog, maxMatches: 1, maxCommentLength,
      jumps: jumpTargets.length > 0, goto: true, verdicts: c.verdicts ?? true, protocol: c.protocol,
    },
  };
}

/**
 * One match as arguments (`['-m', 'owner', '!', '--uid-owner', '2102']`), legal in a rule of the
 * given table, protocol and hooks. Throws when no allowed match fits there.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { match } from 'netfilter-sim/arbitraries';
 * const m = match({ table: 'nat', hooks: ['OUTPUT'], protocol: 'tcp' });
 * fc.sample(m, { seed: 2, numRuns: 1 }); // e.g. [['-m', 'multiport', '--dports', '80,443']]
 * ```
 */
export function match(constraints: FragmentConstraints = {}): fc.Arbitrary<string[]> {
  const name = 'match';
  const { ctx, hooks } = fragmentContext(name, constraints, ['family', 'table', 'hooks', 'protocol', 'maxCommentLength', 'matches', 'targets']);
  const gens = catalogFor(ctx.family, constraints.matches, [], (f, m) => badConstraint(name, f, m)).matches
    .filter((g) => tableFits(g.tables, ctx.table) && protocolFits(g.protocols, ctx.protocol) && hooksFit(g.hooks, hooks));
  if (gens.length === 0) {
    badConstraint(name, 'matches', `leaves no match that is legal in ${ctx.table}${hooks.length ? ` from ${hooks.join('/')}` : ''}${ctx.protocol ? ` with -p ${ctx.protocol}` : ''}`);
  }
  return fc.oneof(...gens.map((g) => g.options(ctx).map((o) => ['-m', g.name, ...o])));
}

/**
 * One target as arguments (`['-j', 'REDIRECT', '--to-ports', '15001']`, `['-j', 'ACCEPT']`,
 * `['-g', 'MY_CHAIN']`), legal in a rule of the given table, protocol and hooks.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { target } from 'netfilter-sim/arbitraries';
 * fc.sample(target({ table: 'nat', hooks: ['OUTPUT'], protocol: 'tcp', verdicts: false }), { seed: 4, numRuns: 1 });
 * // e.g. [['-j', 'DNAT', '--to-destination', '10.0.0.5:8080']]
 * ```
 */
export function target(constraints: FragmentConstraints = {}): fc.Arbitrary<string[]> {
  const name = 'target';
  const { ctx, hooks, dc } = fragmentContext(name, constraints, ['family', 'table', 'hooks', 'protocol', 'maxCommentLength', 'targets', 'matches', 'jumpTargets', 'verdicts']);
  const legal = { ...dc, catalog: { ...dc.catalog, targets: dc.catalog.targets.filter((g) => hooksFit(g.hooks, hooks)) } };
  if (!legal.verdicts && !legal.jumps && !legal.catalog.targets.some((g) => tableFits(g.tables, ctx.table) && protocolFits(g.protocols, ctx.protocol))) {
    badConstraint(name, 'targets', `leaves no target that is legal in ${ctx.table}${hooks.length ? ` from ${hooks.join('/')}` : ''}${ctx.protocol ? ` with -p ${ctx.protocol}` : ''}`);
  }
  const jumpTargets = constraints.jumpTargets ?? [];
  return targetDraft(legal, ctx).map((t: TargetDraft) => {
    switch (t.kind) {
      case 'none':
        return ['-j', 'ACCEPT'];
      case 'verdict':
        return ['-j', t.verdict];
      case 'chain':
        return [t.goto ? '-g' : '-j', jumpTargets[t.pick % jumpTargets.length]!];
      case 'extension':
        return ['-j', t.name, ...t.options];
    }
  });
}
