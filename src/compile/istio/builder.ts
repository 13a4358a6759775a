/**
 * A port of istio-iptables' rule builder (`tools/istio-iptables/pkg/builder/iptables_builder_impl.go`
 * and `helper.go`): rules are appended or inserted per family, then written either as
 * individual `iptables` argument lists or as one `iptables-restore` text per family.
 *
 * @module
 */
import { BUILTIN_CHAINS_AND_TARGETS, RESTORE_BASE_TABLES } from './defaults.js';
import { expectArgument } from '../../model/guard.js';

/**
 * Why a rule exists: a short statement of its purpose and the option (flag, env var or
 * annotation) that produced it. Not part of what istio-iptables writes; carried for traces.
 *
 * @example
 * ```ts
 * const note: IstioRuleNote = { why: 'Envoy itself is never redirected', option: '-u/--proxy-uid' };
 * ```
 */
export interface IstioRuleNote {
  readonly why: string;
  readonly option?: string;
}

/**
 * One rule as the builder holds it (upstream `builder.Rule`): its chain, table and the
 * parameters starting with `-A CHAIN` or `-I CHAIN N`.
 *
 * @example
 * ```ts
 * const r: BuilderRule = { chain: 'ISTIO_OUTPUT', table: 'nat', params: ['-A', 'ISTIO_OUTPUT', '-j', 'ISTIO_REDIRECT'] };
 * ```
 */
export interface BuilderRule {
  readonly chain: string;
  readonly table: string;
  readonly params: readonly string[];
  readonly note?: IstioRuleNote;
}

/**
 * Upstream's `IptablesRuleBuilder`. `…V4` methods write only IPv4 rules; `…V6` methods only IPv6
 * rules, and only when `enableIPv6` is set (otherwise they do nothing, as upstream); the plain
 * methods write both.
 *
 * @example
 * ```ts
 * const b = new IptablesRuleBuilder({ enableIPv6: true });
 * b.appendRuleV4('chain', 'table', ['-f', 'foo', '-b', 'bar']);
 * b.insertRuleV4('chain', 'table', 2, ['-f', 'foo', '-b', 'bar']);
 * b.buildV4();        // [['-t','table','-N','chain'], ['-t','table','-A','chain','-f','foo','-b','bar'], …]
 * b.buildV4Restore(); // '* table\n-N chain\n-A chain -f foo -b bar\n-I chain 2 -f foo -b bar\nCOMMIT\n'
 * ```
 */
export class IptablesRuleBuilder {
  readonly enableIPv6: boolean;
  readonly rulesV4: BuilderRule[] = [];
  readonly rulesV6: BuilderRule[] = [];

  constructor(options: { readonly enableIPv6: boolean }) {
    expectArgument(options, 'object', 'options');
    this.enableIPv6 = options.enableIPv6;
  }

  /** `InsertRule`: `-I CHAIN POSITION …` for both families. */
  insertRule(chain: string, table: string, position: number, params: readonly string[], note?: IstioRuleNote): this {
    this.insertRuleV4(chain, table, position, params, note);
    this.insertRuleV6(chain, table, position, params, note);
    return this;
  }

  /** `InsertRuleV4`. */
  insertRuleV4(chain: string, table: string, position: number, params: readonly string[], note?: IstioRuleNote): this {
    this.rulesV4.push(rule(chain, table, ['-I', chain, String(position), ...params], note));
    return this;
  }

  /** `InsertRuleV6` (no-op without IPv6). */
  insertRuleV6(chain: string, table: string, position: number, params: readonly string[], note?: IstioRuleNote): this {
    if (!this.enableIPv6) return this;
    this.rulesV6.push(rule(chain, table, ['-I', chain, String(position), ...params], note));
    return this;
  }

  /** `AppendRule`: `-A CHAIN …` for both families. */
  appendRule(chain: string, table: string, params: readonly string[], note?: IstioRuleNote): this {
    this.appendRuleV4(chain, table, params, note);
    this.appendRuleV6(chain, table, params, note);
    return this;
  }

  /** `AppendRuleV4`. */
  appendRuleV4(chain: string, table: string, params: readonly string[], note?: IstioRuleNote): this {
    this.rulesV4.push(rule(chain, table, ['-A', chain, ...params], note));
    return this;
  }

  /** `AppendRuleV6` (no-op without IPv6). */
  appendRuleV6(chain: string, table: string, params: readonly string[], note?: IstioRuleNote): this {
    if (!this.enableIPv6) return this;
    this.rulesV6.push(rule(chain, table, ['-A', chain, ...params], note));
    return this;
  }

  /**
   * `AppendVersionedRule`: appends the rule to both families with every
   * {@link IP_VERSION_SPECIFIC} parameter replaced by the family's value.
   */
  appendVersionedRule(
    ipv4: string,
    ipv6: string,
    chain: string,
    table: string,
    params: readonly string[],
    note?: IstioRuleNote,
  ): this {
    this.appendRuleV4(chain, table, replaceVersionSpecific(ipv4, params), note);
    this.appendRuleV6(chain, table, replaceVersionSpecific(ipv6, params), note);
    return this;
  }

  /** `BuildV4`: `-N` for every new chain that receives a rule, then every rule, each as `-t TABLE …`. */
  buildV4(): string[][] {
    return buildRules(this.rulesV4);
  }

  /** `BuildV6`. */
  buildV6(): string[][] {
    return buildRules(this.rulesV6);
  }

  /** `BuildV4Restore`: the `iptables-restore --noflush` input. */
  buildV4Restore(): string {
    return buildRestore(this.rulesV4);
  }

  /** `BuildV6Restore`: the `ip6tables-restore --noflush` input (empty without IPv6). */
  buildV6Restore(): string {
    return buildRestore(this.rulesV6);
  }

  /** `BuildCheckV4`: every rule as `-t TABLE -C CHAIN …` (the idempotency check). */
  buildCheckV4(): string[][] {
    return checkRules(this.rulesV4).map((r) => ['-t', r.table, ...r.params]);
  }

  /** `BuildCheckV6`. */
  buildCheckV6(): string[][] {
    return checkRules(this.rulesV6).map((r) => ['-t', r.table, ...r.params]);
  }

  /** `BuildCleanupV4`: undo the rules in reverse order, then `-F`/`-X` every new chain. */
  buildCleanupV4(): string[][] {
    return buildCleanupRules(this.rulesV4);
  }

  /** `BuildCleanupV6`. */
  buildCleanupV6(): string[][] {
    return buildCleanupRules(this.rulesV6);
  }

  /** `BuildGuardrails`: filter-table DROP rules installed while rules are rebuilt. */
  buildGuardrails(): string[][] {
    return guardrails().map((r) => ['-t', r.table, ...r.params]);
  }

  /** `BuildCleanupGuardrails`: the `-D` commands that remove the guardrails. */
  buildCleanupGuardrails(): string[][] {
    return undoRules(guardrails()).map((r) => ['-t', r.table, ...r.params]);
  }
}

/**
 * The placeholder `AppendVersionedRule` replaces (`constants.IPVersionSpecific`).
 *
 * @example
 * ```ts
 * builder.appendVersionedRule('127.0.0.1/32', '::1/128', 'ISTIO_OUTPUT', 'nat', ['-d', IP_VERSION_SPECIFIC, '-j', 'RETURN']);
 * ```
 */
export const IP_VERSION_SPECIFIC = 'PLACEHOLDER_IP_VERSION_SPECIFIC';

function rule(chain: string, table: string, params: readonly string[], note: IstioRuleNote | undefined): BuilderRule {
  return note ? { chain, table, params, note } : { chain, table, params };
}

function replaceVersionSpecific(contents: string, inputs: readonly string[]): string[] {
  return inputs.map((i) => (i === IP_VERSION_SPECIFIC ? contents : i));
}

function isBuiltin(name: string): boolean {
  return BUILTIN_CHAINS_AND_TARGETS.includes(name);
}

function buildRules(rules: readonly BuilderRule[]): string[][] {
  const out: string[][] = [];
  const seen = new Set<string>();
  for (const r of rules) {
    const key = `${r.chain}:${r.table}`;
    if (!seen.has(key) && !isBuiltin(r.chain)) {
      out.push(['-t', r.table, '-N', r.chain]);
      seen.add(key);
    }
  }
  for (const r of rules) out.push(['-t', r.table, ...r.params]);
  return out;
}

function buildRestore(rules: readonly BuilderRule[]): string {
  const tables = new Map<string, string[]>(RESTORE_BASE_TABLES.map((t) => [t, []]));
  const lines = (t: string): string[] => {
    let l = tables.get(t);
    if (!l) tables.set(t, (l = []));
    return l;
  };
  const seen = new Set<string>();
  // Go's sets.InsertContains: the key is recorded even for built-in chains.
  const insertContains = (key: string): boolean => {
    if (seen.has(key)) return true;
    seen.add(key);
    return false;
  };
  for (const r of rules) {
    if (!insertContains(`${r.chain}:${r.table}`) && !isBuiltin(r.chain)) lines(r.table).push(`-N ${r.chain}`);
  }
  // "Also look for chains we jump to, even if we have no rules in them": a rule ending in -j X.
  for (const r of rules) {
    const p = r.params;
    if (p.length >= 2 && p[p.length - 2] === '-j') {
      const target = p[p.length - 1]!;
      if (!insertContains(`${target}:${r.table}`) && !isBuiltin(target)) lines(r.table).push(`-N ${target}`);
    }
  }
  for (const r of rules) lines(r.table).push(r.params.join(' '));
  let out = '';
  // Go sorts the table names as strings (byte order).
  for (const t of [...tables.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const l = tables.get(t)!;
    if (l.length === 0) continue;
    out += `* ${t}\n${l.join('\n')}\nCOMMIT\n`;
  }
  return out;
}

/** `CheckRules` (`helper.go`): `-A`/`-I` become `-C`, an insert position is dropped. */
function checkRules(rules: readonly BuilderRule[]): BuilderRule[] {
  return rules.map((r) => {
    const out: string[] = [];
    let insertIndex = -1;
    r.params.forEach((e, i) => {
      if (insertIndex >= 0 && i === insertIndex + 2) return;
      if (e === '-A' || e === '--append') out.push('-C');
      else if (e === '-I' || e === '--insert') {
        insertIndex = i;
        out.push('-C');
      } else out.push(e);
    });
    return { chain: r.chain, table: r.table, params: out };
  });
}

/**
 * `UndoRules` (`helper.go`): `-A`/`-I` become `-D`; rules inside `ISTIO_*` chains are skipped
 * (the chain is flushed anyway) unless they jump to another `ISTIO_*` chain.
 */
function undoRules(rules: readonly BuilderRule[]): BuilderRule[] {
  const out: BuilderRule[] = [];
  for (const r of rules) {
    const params: string[] = [];
    let skip = false;
    let insertIndex = -1;
    r.params.forEach((e, i) => {
      if (insertIndex >= 0 && i === insertIndex + 2) return;
      const isAppend = e === '-A' || e === '--append';
      const isInsert = e === '-I' || e === '--insert';
      if (isAppend) params.push('-D');
      else if (isInsert) {
        insertIndex = i;
        params.push('-D');
      } else params.push(e);
      const next = r.params[i + 1];
      if ((isAppend || isInsert) && next !== undefined && next.startsWith('ISTIO_')) skip = true;
      else if ((e === '-j' || e === '--jump') && next !== undefined && next.startsWith('ISTIO_')) skip = false;
    });
    if (!skip) out.push({ chain: r.chain, table: r.table, params });
  }
  return out;
}

function buildCleanupRules(rules: readonly BuilderRule[]): string[][] {
  const reversed = [...rules].reverse();
  const out = undoRules(reversed).map((r) => ['-t', r.table, ...r.params]);
  const seen = new Set<string>();
  for (const r of reversed) {
    const key = `${r.chain}:${r.table}`;
    if (!seen.has(key) && !isBuiltin(r.chain)) {
      out.push(['-t', r.table, '-F', r.chain], ['-t', r.table, '-X', r.chain]);
      seen.add(key);
    }
  }
  return out;
}

function guardrails(): BuilderRule[] {
  const g = (chain: string, proto: string): BuilderRule =>
    rule(chain, 'filter', ['-I', chain, '1', '-p', proto, '-j', 'DROP'], undefined);
  return [g('INPUT', 'tcp'), g('INPUT', 'udp'), g('FORWARD', 'tcp'), g('FORWARD', 'udp'), g('OUTPUT', 'tcp'), g('OUTPUT', 'udp')];
}
