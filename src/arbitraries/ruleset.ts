/**
 * Whole rule sets, valid by construction, in the three forms users meet them: the model
 * (`ruleset()`), the commands a generator runs (`rulesetCommands()`) and the text
 * `iptables-save` prints or `iptables-restore` reads (`rulesetText()`). All three come from the
 * same draft, so for one seed they describe the same rules.
 *
 * @module
 */
import * as fc from 'fast-check';
import { BUILTIN_CHAINS, TABLE_NAMES, type Chain, type Family, type Ruleset, type TableName } from '../model/types.js';
import { printIptablesSave } from '../iptables/print/save.js';
import { applyIptablesCommands } from '../iptables/syntax/apply.js';
import { catalogFor, KNOWN_MATCHES } from './catalog.js';
import { badConstraint, checkBool, checkFamily, checkInt, checkKnownKeys, checkTables } from './constraints.js';
import { chainName, resolveTable, ruleDraft, renderRuleBody, tableDraft, type TableDraft, type TableDraftOptions } from './draft.js';
import { expectArgument } from '../model/guard.js';

/**
 * The extensions rules may use. Names are as `-m NAME` and `-j NAME` write them.
 *
 * @example
 * ```ts
 * const m: ModuleConstraints = { matches: ['tcp', 'multiport', 'owner', 'comment'], targets: ['REDIRECT'] };
 * ```
 */
export interface ModuleConstraints {
  /**
   * Match extensions (`tcp`, `udp`, `icmp`, `icmp6`, `multiport`, `comment`, `owner`,
   * `conntrack`, `state`, `mark`, `connmark`, `addrtype`, `iprange`, `limit`, `statistic`, `sctp`,
   * `recent`, `rpfilter`, `socket`, `mac`).
   * `[]` for none.
   * @defaultValue every one of these that this build of netfilter-sim can parse
   */
  readonly matches?: readonly string[];
  /**
   * Target extensions (`REDIRECT`, `DNAT`, `SNAT`, `MASQUERADE`, `TPROXY`, `MARK`, `CONNMARK`,
   * `LOG`, `NFLOG`, `REJECT`, `CT`, `TRACE`, `NOTRACK`); the standard verdicts and jumps to user chains are always available.
   * `[]` for none.
   * @defaultValue every one of these that this build of netfilter-sim can parse
   */
  readonly targets?: readonly string[];
}

/**
 * Constraints of {@link ruleset}, {@link rulesetCommands} and {@link rulesetText}.
 *
 * @example
 * ```ts
 * const c: RulesetConstraints = { family: 6, tables: ['nat'], maxChains: 2, matches: ['tcp', 'owner'] };
 * ```
 */
export interface RulesetConstraints extends ModuleConstraints {
  /**
   * Address family: 4 (iptables) or 6 (ip6tables).
   * @defaultValue 4
   */
  readonly family?: Family;
  /**
   * Tables that may appear (each one may also be left out).
   * @defaultValue all five: `raw`, `mangle`, `nat`, `filter`, `security`
   */
  readonly tables?: readonly TableName[];
  /**
   * Most user chains per table.
   * @defaultValue 4
   */
  readonly maxChains?: number;
  /**
   * Most rules per chain.
   * @defaultValue 5
   */
  readonly maxRules?: number;
  /**
   * Most matches (`-m`) per rule.
   * @defaultValue 3
   */
  readonly maxMatches?: number;
  /**
   * Longest user chain name (iptables allows 28).
   * @defaultValue 28
   */
  readonly maxChainNameLength?: number;
  /**
   * Longest `--comment` (iptables allows 255).
   * @defaultValue 64
   */
  readonly maxCommentLength?: number;
  /**
   * Let jumps form cycles (a rule set the kernel refuses with ELOOP, for testing checkers).
   * @defaultValue false
   */
  readonly allowLoops?: boolean;
  /**
   * Generate `-g CHAIN` besides `-j CHAIN`.
   * @defaultValue true
   */
  readonly goto?: boolean;
  /**
   * Give built-in chains a DROP policy sometimes (never in nat, where iptables forbids it).
   * @defaultValue true
   */
  readonly policies?: boolean;
}

const RULESET_KEYS = [
  'family', 'tables', 'maxChains', 'maxRules', 'maxMatches', 'maxChainNameLength', 'maxCommentLength',
  'allowLoops', 'goto', 'policies', 'matches', 'targets',
] as const;

/** Validated ruleset constraints. @internal */
export interface RulesetSettings extends TableDraftOptions {
  readonly tables: readonly TableName[];
  readonly allowLoops: boolean;
}

/** Validates {@link RulesetConstraints} for the arbitrary `name`. @internal */
export function rulesetSettings(name: string, c: RulesetConstraints, keys: readonly string[] = RULESET_KEYS): RulesetSettings {
  checkKnownKeys(name, c, keys);
  const family = checkFamily(name, c.family);
  const catalog = catalogFor(family, c.matches, c.targets, (field, message) => badConstraint(name, field, message));
  return {
    family,
    catalog,
    tables: checkTables(name, c.tables, TABLE_NAMES),
    maxChains: checkInt(name, 'maxChains', c.maxChains, 0, 1000, 4),
    maxRules: checkInt(name, 'maxRules', c.maxRules, 0, 10000, 5),
    maxMatches: checkInt(name, 'maxMatches', c.maxMatches, 0, KNOWN_MATCHES.length, 3),
    maxChainNameLength: checkInt(name, 'maxChainNameLength', c.maxChainNameLength, 1, 28, 28),
    maxCommentLength: checkInt(name, 'maxCommentLength', c.maxCommentLength, 1, 255, 64),
    allowLoops: checkBool(name, 'allowLoops', c.allowLoops, false),
    goto: checkBool(name, 'goto', c.goto, true),
    policies: checkBool(name, 'policies', c.policies, true),
    jumps: true,
    verdicts: true,
  };
}

/** The drafts of every table, each of which may be left out. @internal */
export function rulesetDraft(s: RulesetSettings): fc.Arbitrary<TableDraft[]> {
  return fc
    .tuple(...s.tables.map((t) => fc.option(tableDraft(t, s), { nil: undefined, freq: 3 })))
    .map((ts) => ts.filter((t): t is TableDraft => t !== undefined));
}

/** The commands of resolved table drafts, table by table. @internal */
export function draftCommands(tables: readonly TableDraft[], allowLoops: boolean): string[][] {
  return tables.flatMap((t) => resolveTable(t, allowLoops).commands);
}

/**
 * Rule sets as the `iptables` (or `ip6tables`) commands that build them from an empty network
 * namespace, one argument vector per command, binary name left out:
 * `['-t', 'nat', '-N', 'PROXY_INIT_OUTPUT']`, `['-t', 'nat', '-A', 'OUTPUT', '-j', 'PROXY_INIT_OUTPUT']`.
 * Chains are created before any rule refers to them; shrinking removes rules, options and chains.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { applyIptablesCommands } from 'netfilter-sim';
 * import { rulesetCommands } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(rulesetCommands({ tables: ['nat'] }), (commands) => {
 *   applyIptablesCommands(undefined, commands, { family: 4 }); // never throws: every command is legal
 * }));
 * ```
 */
export function rulesetCommands(constraints: RulesetConstraints = {}): fc.Arbitrary<string[][]> {
  const s = rulesetSettings('rulesetCommands', constraints);
  return rulesetDraft(s).map((tables) => draftCommands(tables, s.allowLoops));
}

/**
 * Rule sets as the model (`Ruleset`): the commands of {@link rulesetCommands} applied to an
 * empty namespace by netfilter-sim's own parser.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { check } from 'netfilter-sim';
 * import { ruleset } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(ruleset({ family: 6 }), (rs) => check(rs).every((d) => d.severity !== 'error')));
 * ```
 */
export function ruleset(constraints: RulesetConstraints = {}): fc.Arbitrary<Ruleset> {
  const s = rulesetSettings('ruleset', constraints);
  return rulesetDraft(s).map((tables) => applyIptablesCommands(undefined, draftCommands(tables, s.allowLoops), { family: s.family, mode: 'strict' }));
}

/**
 * Constraints of {@link rulesetText}: those of {@link ruleset}, and the text format.
 *
 * @example
 * ```ts
 * const c: RulesetTextConstraints = { format: 'restore', tables: ['nat', 'mangle'] };
 * ```
 */
export interface RulesetTextConstraints extends RulesetConstraints {
  /**
   * `save`: exactly what `iptables-save` prints once the rules are loaded (the canonical form).
   * `restore`: `iptables-restore` input written the way generators write it (options in the
   * order and spelling they were generated in, chain declarations, `COMMIT` per table).
   * @defaultValue 'save'
   */
  readonly format?: 'save' | 'restore';
}

/**
 * Rule sets as text, the form rule-set tools read: `iptables-save` output (default) or
 * `iptables-restore` input (`format: 'restore'`).
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { rulesetText } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(rulesetText({ tables: ['nat'] }), (text) => {
 *   myTool.load(text); // the tool under test must accept everything iptables-save prints
 * }));
 * ```
 */
export function rulesetText(constraints: RulesetTextConstraints = {}): fc.Arbitrary<string> {
  expectArgument(constraints, 'object', 'constraints');
  const { format, ...rest } = constraints;
  if (format !== undefined && format !== 'save' && format !== 'restore') {
    badConstraint('rulesetText', 'format', `must be "save" or "restore", got ${JSON.stringify(format)}`);
  }
  const s = rulesetSettings('rulesetText', rest);
  return rulesetDraft(s).map((tables) => {
    if (format === 'restore') return restoreText(tables, s.allowLoops);
    return printIptablesSave(applyIptablesCommands(undefined, draftCommands(tables, s.allowLoops), { family: s.family, mode: 'strict' }));
  });
}

/**
 * Quotes one argument for an `iptables-restore` line: in double quotes, with `"` and `\`
 * escaped, when it is empty or holds a blank, a quote or a backslash.
 *
 * @example
 * ```ts
 * quoteRestoreArgument('proxy-init/ignore port'); // '"proxy-init/ignore port"'
 * ```
 */
export function quoteRestoreArgument(arg: string): string {
  expectArgument(arg, 'string', 'arg');
  if (arg.length > 0 && !/[\s"\\']/.test(arg)) return arg;
  return `"${arg.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Restore text of resolved table drafts. */
function restoreText(tables: readonly TableDraft[], allowLoops: boolean): string {
  let out = '';
  for (const t of tables) {
    const { commands } = resolveTable(t, allowLoops);
    // A table no command touches does not exist after the commands either: leave it out here too.
    if (commands.length === 0) continue;
    out += `*${t.name}\n`;
    BUILTIN_CHAINS[t.name].forEach((h, i) => {
      out += `:${h} ${t.policies[i]} [0:0]\n`;
    });
    for (const c of t.chains) out += `:${c.name} - [0:0]\n`;
    for (const cmd of commands) {
      // Drop `-t TABLE`; -N and -P are expressed by the declarations above.
      const rest = cmd.slice(2);
      if (rest[0] !== '-A') continue;
      out += rest.map(quoteRestoreArgument).join(' ') + '\n';
    }
    out += 'COMMIT\n';
  }
  return out;
}

/**
 * Constraints of {@link chain}.
 *
 * @example
 * ```ts
 * const c: ChainConstraints = { table: 'nat', hooks: ['OUTPUT'], matches: ['tcp', 'owner'] };
 * ```
 */
export interface ChainConstraints extends ModuleConstraints {
  /**
   * Address family.
   * @defaultValue 4
   */
  readonly family?: Family;
  /**
   * The chain's table.
   * @defaultValue 'filter'
   */
  readonly table?: TableName;
  /**
   * The chain's name: a built-in chain of the table, or a user chain's name. Generated when
   * absent.
   * @defaultValue a generated user-chain name
   */
  readonly name?: string;
  /**
   * Hooks the chain is reachable from, which decide what its rules may use (`owner` only from
   * OUTPUT/POSTROUTING, REDIRECT only from PREROUTING/OUTPUT…). Ignored for a built-in chain.
   * @defaultValue [] (a user chain no hook reaches: anything legal in the table)
   */
  readonly hooks?: readonly ('PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING')[];
  /**
   * Most rules.
   * @defaultValue 8
   */
  readonly maxRules?: number;
  /**
   * Most matches per rule.
   * @defaultValue 3
   */
  readonly maxMatches?: number;
  /**
   * Longest `--comment`.
   * @defaultValue 64
   */
  readonly maxCommentLength?: number;
}

/**
 * One chain with its rules, as the model holds it. Rules do not jump to other chains (a lone
 * chain has none to jump to); they use the verdicts and the extensions legal for the table and
 * for the hooks the chain is reachable from.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { chain } from 'netfilter-sim/arbitraries';
 * fc.sample(chain({ table: 'nat', name: 'OUTPUT' }), { seed: 3, numRuns: 1 })[0].rules.length; // 0 to 8
 * ```
 */
export function chain(constraints: ChainConstraints = {}): fc.Arbitrary<Chain> {
  const name = 'chain';
  checkKnownKeys(name, constraints, ['family', 'table', 'name', 'hooks', 'maxRules', 'maxMatches', 'maxCommentLength', 'matches', 'targets']);
  const family = checkFamily(name, constraints.family);
  const [table] = checkTables(name, constraints.table === undefined ? undefined : [constraints.table], ['filter']);
  const builtins = BUILTIN_CHAINS[table!];
  const fixed = constraints.name;
  if (fixed !== undefined && (typeof fixed !== 'string' || fixed.length === 0 || fixed.length > 28 || /[\s]/.test(fixed) || fixed.startsWith('-') || fixed.startsWith('!'))) {
    badConstraint(name, 'name', `must be a chain name of 1 to 28 characters without blanks, got ${JSON.stringify(fixed)}`);
  }
  const isBuiltin = fixed !== undefined && (builtins as readonly string[]).includes(fixed);
  if (fixed !== undefined && !isBuiltin && (['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING', 'ACCEPT', 'DROP', 'RETURN'] as readonly string[]).includes(fixed)) {
    badConstraint(name, 'name', `"${fixed}" is not a chain of the ${table} table and cannot name a user chain`);
  }
  const hooks = constraints.hooks ?? [];
  if (!Array.isArray(hooks) || hooks.some((h) => !(builtins as readonly string[]).includes(h))) {
    badConstraint(name, 'hooks', `must list hooks of the ${table} table (${builtins.join(', ')}), got ${JSON.stringify(constraints.hooks)}`);
  }
  const catalog = catalogFor(family, constraints.matches, constraints.targets, (f, m) => badConstraint(name, f, m));
  const draftCtx = {
    family, table: table!, catalog,
    maxMatches: checkInt(name, 'maxMatches', constraints.maxMatches, 0, KNOWN_MATCHES.length, 3),
    maxCommentLength: checkInt(name, 'maxCommentLength', constraints.maxCommentLength, 1, 255, 64),
    jumps: false, goto: false, verdicts: true,
  };
  const maxRules = checkInt(name, 'maxRules', constraints.maxRules, 0, 10000, 8);
  const policy = isBuiltin && table !== 'nat' ? fc.constantFrom('ACCEPT' as const, 'DROP' as const) : fc.constant('ACCEPT' as const);
  return fc
    .record({
      chainName: fixed !== undefined ? fc.constant(fixed) : chainName(28),
      policy,
      rules: fc.array(ruleDraft(draftCtx), { maxLength: maxRules }),
    })
    .map(({ chainName: n, policy: p, rules }) => {
      const chainHooks = isBuiltin ? [n as (typeof hooks)[number]] : hooks;
      const commands: string[][] = [];
      if (!isBuiltin) commands.push(['-t', table!, '-N', n]);
      else if (p !== 'ACCEPT') commands.push(['-t', table!, '-P', n, p]);
      for (const r of rules) commands.push(['-t', table!, '-A', n, ...renderRuleBody(r, { chain: n, hooks: chainHooks, jumpTargets: [] })]);
      const rs = applyIptablesCommands(undefined, commands, { family, mode: 'strict' });
      const t = rs.tables.find((x) => x.name === table);
      return t?.chains.find((c) => c.name === n) ?? { name: n, builtin: isBuiltin, policy: isBuiltin ? p : null, counters: { packets: 0, bytes: 0 }, rules: [] };
    });
}

