/**
 * The nft command text Istio's nftables code writes through sigs.k8s.io/knftables: one table's
 * operations as istio-cni's `addIstioTableRules` (and istio-nftables' equivalent) emit them, in
 * knftables' `Transaction.String()` form (`add table inet T`, `flush table inet T`,
 * `add chain inet T C { type … hook … priority N ; }`, `add rule …`, `insert rule … index N …`).
 *
 * @module
 */

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
