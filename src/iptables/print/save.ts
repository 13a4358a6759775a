/**
 * The canonical printer: a rule set exactly as `iptables-save` (iptables 1.8.9, nf_tables)
 * prints it once loaded, without the `# Generated`/`# Completed` lines.
 *
 * Order (iptables/iptables-save, xtables-save.c, `save_rule_details`): tables in the nf_tables
 * backend's fixed order; per table the built-in chains in hook order, then user chains sorted by
 * `strcmp`; then every rule, chain by chain in that order. A rule is `-A CHAIN`, `-s`, `-d`, `-i`,
 * `-o`, `-p`, `-f`, each match as `-m NAME options`, then `-j TARGET options` or `-g CHAIN`.
 *
 * @module
 */
import { TARGETS } from '../extensions/registry.js';
import { savedMatches } from './nft-matches.js';
import { BUILTIN_CHAINS, type Chain, type Family, type Rule, type Ruleset, type Table, type TableName } from '../../model/types.js';
import { formatCidr } from '../../model/address.js';
import { expectArgument, expectFields } from '../../model/guard.js';

/** The order in which the nf_tables backend's `iptables-save` lists tables. */
export const SAVE_TABLE_ORDER: readonly TableName[] = ['mangle', 'security', 'raw', 'filter', 'nat'];

/** Options for {@link printIptablesSave}. */
export interface PrintOptions {
  /** Only these tables (`iptables-save -t nat`). */
  readonly tables?: readonly TableName[];
  /** Print rule counters as `[p:b] ` prefixes, as `iptables-save -c`. */
  readonly counters?: boolean;
}

/**
 * Prints a rule set as iptables-save does.
 *
 * @example
 * ```ts
 * printIptablesSave(parseIptablesSaveOrThrow(text), { tables: ['nat'] });
 * ```
 */
export function printIptablesSave(ruleset: Ruleset, options: PrintOptions = {}): string {
  expectArgument(ruleset, 'object', 'ruleset');
  expectArgument(options, 'object', 'options');
  expectFields(ruleset, { tables: 'array', family: 'integer' }, 'ruleset');
  let out = '';
  for (const name of SAVE_TABLE_ORDER) {
    if (options.tables && !options.tables.includes(name)) continue;
    const table = ruleset.tables.find((t) => t.name === name);
    if (!table) continue;
    out += printTable(table, ruleset.family, options.counters ?? false);
  }
  return out;
}

/** Prints one table block, `*name` to `COMMIT`. */
export function printTable(table: Table, family: Family, counters = false): string {
  const chains = orderedChains(table);
  let out = `*${table.name}\n`;
  for (const c of chains) {
    const p = c.builtin ? (c.policy ?? 'ACCEPT') : '-';
    out += `:${c.name} ${p} [${c.counters.packets}:${c.counters.bytes}]\n`;
  }
  for (const c of chains) for (const r of c.rules) out += printRule(r, c.name, family, counters) + '\n';
  return out + 'COMMIT\n';
}

/** Chains in save order: built-ins in hook order, then user chains by `strcmp`. */
export function orderedChains(table: Table): Chain[] {
  const builtinOrder = BUILTIN_CHAINS[table.name] as readonly string[];
  const builtins = table.chains.filter((c) => c.builtin).sort((a, b) => builtinOrder.indexOf(a.name) - builtinOrder.indexOf(b.name));
  const users = table.chains.filter((c) => !c.builtin).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return [...builtins, ...users];
}

/**
 * Prints one rule in canonical form, starting with `-A CHAIN`.
 *
 * @example
 * ```ts
 * printRule(rule, 'OUTPUT', 4); // "-A OUTPUT -p tcp -m tcp --dport 80 -j ACCEPT"
 * ```
 */
export function printRule(rule: Rule, chain: string, family: Family, counters = false): string {
  expectArgument(rule, 'object', 'rule');
  expectArgument(chain, 'string', 'chain');
  expectFields(rule, { matches: 'array' }, 'rule');
  let s = counters ? `[${rule.counters?.packets ?? 0}:${rule.counters?.bytes ?? 0}] -A ${chain}` : `-A ${chain}`;
  s += printRuleBody(rule, family);
  return s;
}

/** The part of a rule after `-A CHAIN`, with a leading space (or empty). */
export function printRuleBody(rule: Rule, family: Family): string {
  let s = '';
  const neg = (n: boolean): string => (n ? ' !' : '');
  // A zero mask is no test and is not printed, unless negated (legacy keeps "! -s 0.0.0.0/0";
  // the nf_tables kernel refuses it at load, which check() reports).
  if (rule.source && (!isAny(rule.source.value.mask) || rule.source.negated)) s += `${neg(rule.source.negated)} -s ${formatCidr(rule.source.value)}`;
  if (rule.destination && (!isAny(rule.destination.value.mask) || rule.destination.negated)) s += `${neg(rule.destination.negated)} -d ${formatCidr(rule.destination.value)}`;
  if (rule.inInterface) s += `${neg(rule.inInterface.negated)} -i ${rule.inInterface.value}`;
  if (rule.outInterface) s += `${neg(rule.outInterface.negated)} -o ${rule.outInterface.value}`;
  if (rule.protocol) s += `${neg(rule.protocol.negated)} -p ${rule.protocol.value}`;
  if (rule.fragment) s += `${neg(rule.fragment.negated)} -f`;
  // Matches as iptables-nft lists them back (tcp and udp tests merged; print/nft-matches.ts).
  for (const m of savedMatches(rule.matches, family)) s += ` ${m}`;
  const t = rule.target;
  if (t) {
    switch (t.kind) {
      case 'verdict':
        s += ` -j ${t.verdict}`;
        break;
      case 'jump':
        s += ` -j ${t.chain}`;
        break;
      case 'goto':
        s += ` -g ${t.chain}`;
        break;
      case 'extension': {
        const ext = TARGETS.get(t.name);
        const opts = ext ? ext.save(t.options, family) : '';
        s += ` -j ${t.name}${opts ? ' ' + opts : ''}`;
        break;
      }
    }
  }
  return s;
}

function isAny(mask: readonly number[]): boolean {
  return mask.every((w) => w === 0);
}
