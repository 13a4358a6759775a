/**
 * The nft command text Istio's nftables code writes through sigs.k8s.io/knftables: one table's
 * operations as istio-cni's `addIstioTableRules` (and istio-nftables' equivalent) emit them, in
 * knftables' `Transaction.String()` form (`add table inet T`, `flush table inet T`,
 * `add chain inet T C { type … hook … priority N ; }`, `add rule …`, `insert rule … index N …`).
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';

/** A chain to declare: a base chain (type, hook, numeric priority) or a regular chain. @internal */
export interface NftChainSpec {
  readonly name: string;
  readonly type?: string;
  readonly hook?: string;
  readonly priority?: number;
}

/** A rule: its chain, the rule text (knftables `Concat` of the parameters), and an insert index. @internal */
export interface NftRuleSpec {
  readonly chain: string;
  readonly rule: string;
  /** Upstream's 0-based insert position; absent for an append. */
  readonly index?: number;
}

/**
 * `addIstioTableRules`: declares the table (add + flush), the chains that have rules (istio-cni:
 * or are the target of a `jump`), then the rules; an insert into a still empty chain (istio-nftables:
 * or past its end) becomes an append, as nft refuses such an index. Nothing at all when no chain
 * is used. @internal
 */
export function nftTableTransaction(
  table: string,
  chains: readonly NftChainSpec[],
  rules: readonly NftRuleSpec[],
  options: { readonly onlyChainsWithRules?: boolean; readonly indexPastEndAppends?: boolean } = {},
): string[] {
  const count = new Map<string, number>();
  for (const r of rules) count.set(r.chain, (count.get(r.chain) ?? 0) + 1);
  const referenced = new Set<string>();
  for (const r of rules) {
    const f = r.rule.split(/\s+/).filter((x) => x !== '');
    f.forEach((x, i) => {
      if (x === 'jump' && i + 1 < f.length) referenced.add(f[i + 1]!);
    });
  }
  // istio-cni (ambient) also declares chains that are only jumped to; istio-nftables does not.
  const used = chains.filter((c) => (count.get(c.name) ?? 0) > 0 || (!options.onlyChainsWithRules && referenced.has(c.name)));
  if (used.length === 0) return [];
  const out = [`add table inet ${table}`, `flush table inet ${table}`];
  for (const c of used) {
    out.push(c.type === undefined ? `add chain inet ${table} ${c.name}` : `add chain inet ${table} ${c.name} { type ${c.type} hook ${c.hook} priority ${c.priority} ; }`);
  }
  const added = new Map<string, number>();
  for (const r of rules) {
    const n = added.get(r.chain) ?? 0;
    // istio-nftables also appends when the index is past the chain's end.
    const append = r.index === undefined || n === 0 || (options.indexPastEndAppends === true && r.index >= n);
    if (!append) out.push(`insert rule inet ${table} ${r.chain} index ${r.index} ${r.rule}`);
    else out.push(`add rule inet ${table} ${r.chain} ${r.rule}`);
    added.set(r.chain, n + 1);
  }
  return out;
}

/** A rule as {@link NftablesRuleBuilder} holds it: the rule text, its chain, an insert position, and why it exists. */
export interface NftBuilderRule extends NftRuleSpec {
  /** Not part of what Istio writes: a short statement of the rule's purpose, carried for traces. */
  readonly why: string;
}

/**
 * Upstream's `NftablesRuleBuilder` (`tools/istio-nftables/pkg/builder`): rules per table, in call
 * order, each the parameters joined with single spaces as `knftables.Concat` joins them. The `…V6…`
 * methods add their rule only when IPv6 is enabled. {@link NftablesRuleBuilder.dump} writes what
 * upstream's builder test dumps from a knftables fake after applying the rules.
 *
 * @example
 * ```ts
 * const b = new NftablesRuleBuilder({ enableIPv6: true });
 * b.appendRule('test-chain', 'inet-table', 'tcp', 'dport', '15008', 'return');
 * b.insertRule('test-chain', 'inet-table', 0, 'ip', 'daddr', '127.0.0.1', 'return');
 * b.dump('inet-table', [{ name: 'test-chain' }]);
 * // 'add table inet inet-table\nadd chain inet inet-table test-chain\n'
 * // + 'add rule inet inet-table test-chain ip daddr 127.0.0.1 return\n'
 * // + 'add rule inet inet-table test-chain tcp dport 15008 return\n'
 * ```
 */
export class NftablesRuleBuilder {
  readonly enableIPv6: boolean;
  readonly rules: Map<string, NftBuilderRule[]> = new Map();
  /** The reason attached to the rules added next. */
  why = '';

  constructor(options: { readonly enableIPv6: boolean }) {
    expectArgument(options, 'object', 'options');
    this.enableIPv6 = options.enableIPv6;
  }

  /** The rules of one table, in call order. */
  rulesOf(table: string): readonly NftBuilderRule[] {
    return this.rules.get(table) ?? [];
  }

  /** `AppendRule`. */
  appendRule(chain: string, table: string, ...params: string[]): this {
    this.add(table, { chain, rule: params.join(' '), why: this.why });
    return this;
  }

  /** `AppendV6RuleIfSupported`. */
  appendV6RuleIfSupported(chain: string, table: string, ...params: string[]): this {
    return this.enableIPv6 ? this.appendRule(chain, table, ...params) : this;
  }

  /** `InsertRule`: `position` counts from 0, as nft's `index`. */
  insertRule(chain: string, table: string, position: number, ...params: string[]): this {
    this.add(table, { chain, rule: params.join(' '), index: position, why: this.why });
    return this;
  }

  /** `InsertV6RuleIfSupported`. */
  insertV6RuleIfSupported(chain: string, table: string, position: number, ...params: string[]): this {
    return this.enableIPv6 ? this.insertRule(chain, table, position, ...params) : this;
  }

  /**
   * The builder test's `buildRules`: the table and the given chains are added to an empty knftables
   * fake, then the table's rules (an insert into an empty chain, or at or past its end, becomes an
   * append, as nft refuses such an index); the result is the fake's `Dump()`: `add table`, then
   * each chain in name order followed by its rules as they now stand.
   */
  dump(table: string, chains: readonly NftChainSpec[], family = 'inet'): string {
    return knftablesFakeDump(family, table, chains, this.rulesOf(table));
  }

  private add(table: string, rule: NftBuilderRule): void {
    let list = this.rules.get(table);
    if (list === undefined) {
      list = [];
      this.rules.set(table, list);
    }
    list.push(rule);
  }
}

/**
 * What a knftables fake dumps after a transaction that adds one table, its chains and the rules
 * (inserts placed before the rule at their index, the append fallback of
 * {@link NftablesRuleBuilder.dump} applied). @internal
 */
export function knftablesFakeDump(family: string, table: string, chains: readonly NftChainSpec[], rules: readonly NftRuleSpec[]): string {
  const state = new Map<string, string[]>(chains.map((c) => [c.name, []]));
  for (const r of rules) {
    const list = state.get(r.chain);
    if (list === undefined) fail('BAD_CONFIG', `no such chain "${r.chain}" in table ${family} ${table}`, undefined, r.chain);
    // knftables checks that a jump or goto names an existing chain.
    const words = r.rule.split(' ');
    words.forEach((w, i) => {
      const target = words[i + 1];
      if ((w === 'jump' || w === 'goto') && target !== undefined && !state.has(target)) fail('BAD_CONFIG', `no such chain "${target}" in table ${family} ${table}`, undefined, target);
    });
    if (r.index === undefined || list.length === 0 || r.index >= list.length) list.push(r.rule);
    else list.splice(r.index, 0, r.rule);
  }
  const out = [`add table ${family} ${table}\n`];
  const byName = [...chains].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const c of byName) {
    out.push(c.type === undefined ? `add chain ${family} ${table} ${c.name}\n` : `add chain ${family} ${table} ${c.name} { type ${c.type} hook ${c.hook} priority ${c.priority} ; }\n`);
    for (const rule of state.get(c.name)!) out.push(`add rule ${family} ${table} ${c.name} ${rule}\n`);
  }
  return out.join('');
}
