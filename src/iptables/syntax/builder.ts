/**
 * A mutable rule-set under construction, applying iptables commands with the kernel's outcome
 * (`-N` of an existing chain fails, `-I` past the end fails, `-D` needs a matching rule …).
 * What leaves it is an immutable {@link Ruleset}.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../model/errors.js';
import { BUILTIN_CHAINS, TABLE_NAMES, type Chain, type Counters, type Family, type Rule, type Ruleset, type Span, type TableName } from '../../model/types.js';
import type { ParsedCommand } from './command.js';
import { pushAll } from '../../model/limits.js';

interface MutableChain {
  name: string;
  builtin: boolean;
  policy: 'ACCEPT' | 'DROP' | null;
  counters: Counters;
  rules: Rule[];
  span?: Span;
}

interface MutableTable {
  name: TableName;
  chains: Map<string, MutableChain>;
}

const ZERO: Counters = { packets: 0, bytes: 0 };

/** Whether a string is one of the five table names. */
export function isTableName(name: string): name is TableName {
  return (TABLE_NAMES as readonly string[]).includes(name);
}

/** Builds a rule set by applying commands. Failures are returned as diagnostics. */
export class RulesetBuilder {
  readonly family: Family;
  private readonly tables = new Map<TableName, MutableTable>();

  constructor(family: Family, initial?: Ruleset) {
    this.family = family;
    if (initial) {
      for (const t of initial.tables) {
        const chains = new Map<string, MutableChain>();
        for (const c of t.chains) chains.set(c.name, { ...c, rules: [...c.rules] } as MutableChain);
        this.tables.set(t.name, { name: t.name, chains });
      }
    }
  }

  /** The table, created with its built-in chains (policy ACCEPT) on first use. */
  table(name: TableName): MutableTable {
    let t = this.tables.get(name);
    if (!t) {
      t = { name, chains: new Map() };
      for (const c of BUILTIN_CHAINS[name]) t.chains.set(c, { name: c, builtin: true, policy: 'ACCEPT', counters: ZERO, rules: [] });
      this.tables.set(name, t);
    }
    return t;
  }

  /** Empties a table as `iptables-restore` does at `*table` (without --noflush). */
  resetTable(name: TableName): void {
    this.tables.delete(name);
  }

  /** Whether the table exists yet. */
  hasTable(name: TableName): boolean {
    return this.tables.has(name);
  }

  /** Removes a table that was only mentioned (restore of an empty `*raw` block creates nothing). */
  dropTable(name: TableName): void {
    this.tables.delete(name);
  }

  /** A `:CHAIN POLICY [p:b]` line. */
  declareChain(table: TableName, name: string, policy: string, counters: Counters | undefined, span: Span): Diagnostic | undefined {
    const t = this.table(table);
    const existing = t.chains.get(name);
    if (existing?.builtin) {
      if (policy !== '-') existing.policy = policy as 'ACCEPT' | 'DROP';
      if (counters) existing.counters = counters;
      existing.span = span;
      return undefined;
    }
    if (existing) {
      // --noflush semantics: an existing user chain is flushed.
      existing.rules = [];
      return undefined;
    }
    t.chains.set(name, { name, builtin: false, policy: null, counters: ZERO, rules: [], span });
    return undefined;
  }

  /** Applies one parsed command; returns the kernel's refusal as a diagnostic, if any. */
  apply(cmd: ParsedCommand, tableName: TableName): Diagnostic | undefined {
    const t = this.table(tableName);
    const chainName = cmd.chain;
    const chain = chainName !== undefined ? t.chains.get(chainName) : undefined;
    const where = cmd.chainSpan ?? cmd.span;
    const noChain = (): Diagnostic => diagnostic('UNKNOWN_CHAIN', `chain "${chainName}" does not exist in table ${tableName}`, where, chainName);
    switch (cmd.command) {
      case 'append':
        if (!chain) return noChain();
        pushAll(chain.rules, cmd.rules);
        return undefined;
      case 'insert': {
        if (!chain) return noChain();
        const n = cmd.ruleNumber ?? 1;
        if (n > chain.rules.length + 1) return diagnostic('BAD_RULE_NUMBER', `index of insertion too big: chain ${chainName} has ${chain.rules.length} rules, cannot insert at ${n}`, cmd.span);
        // Each expanded rule (-s a,b) is inserted at the same position in turn, so they end up reversed.
        chain.rules = chain.rules.slice(0, n - 1).concat([...cmd.rules].reverse(), chain.rules.slice(n - 1));
        return undefined;
      }
      case 'replace': {
        if (!chain) return noChain();
        const n = cmd.ruleNumber ?? 0;
        if (n < 1 || n > chain.rules.length || cmd.rules.length !== 1) return diagnostic('BAD_RULE_NUMBER', `index of replacement too big: chain ${chainName} has ${chain.rules.length} rules`, cmd.span);
        chain.rules[n - 1] = cmd.rules[0]!;
        return undefined;
      }
      case 'delete': {
        if (!chain) return noChain();
        if (cmd.ruleNumber !== undefined) {
          if (cmd.ruleNumber > chain.rules.length) return diagnostic('RULE_NOT_FOUND', `index of deletion too big: chain ${chainName} has ${chain.rules.length} rules`, cmd.span);
          chain.rules.splice(cmd.ruleNumber - 1, 1);
          return undefined;
        }
        for (const r of cmd.rules) {
          const idx = chain.rules.findIndex((x) => sameRule(x, r));
          if (idx < 0) return diagnostic('RULE_NOT_FOUND', 'bad rule (does a matching rule exist in that chain?)', cmd.span);
          chain.rules.splice(idx, 1);
        }
        return undefined;
      }
      case 'check': {
        if (!chain) return noChain();
        for (const r of cmd.rules) if (!chain.rules.some((x) => sameRule(x, r))) return diagnostic('RULE_NOT_FOUND', 'bad rule (does a matching rule exist in that chain?)', cmd.span);
        return undefined;
      }
      case 'new-chain':
        if (chain) return diagnostic('CHAIN_EXISTS', `chain "${chainName}" already exists`, where, chainName);
        t.chains.set(chainName!, { name: chainName!, builtin: false, policy: null, counters: ZERO, rules: [], span: cmd.span });
        return undefined;
      case 'flush':
        if (chainName === undefined) {
          for (const c of t.chains.values()) c.rules = [];
          return undefined;
        }
        if (!chain) return noChain();
        chain.rules = [];
        return undefined;
      case 'delete-chain': {
        const victims = chainName === undefined ? [...t.chains.values()].filter((c) => !c.builtin) : chain ? [chain] : [];
        if (chainName !== undefined && !chain) return noChain();
        for (const v of victims) {
          // nf_tables refuses to delete a chain that still has rules or is jumped to, with -X CHAIN
          // and with a bare -X alike (observed: "CHAIN_DEL failed (Device or resource busy)").
          if (v.builtin) return diagnostic('BUILTIN_CHAIN', `cannot delete built-in chain "${v.name}" (iptables: No chain/target/match by that name)`, where, v.name);
          if (v.rules.length > 0) return diagnostic('CHAIN_NOT_EMPTY', `cannot delete chain "${v.name}": it still has ${v.rules.length} rule${v.rules.length === 1 ? '' : 's'} (iptables: CHAIN_DEL failed (Device or resource busy))`, where, v.name);
          const by = referrer(t, v.name);
          if (by !== undefined) return diagnostic('CHAIN_IN_USE', `cannot delete chain "${v.name}": chain ${by} still jumps to it (iptables: CHAIN_DEL failed (Device or resource busy))`, where, v.name);
        }
        for (const v of victims) t.chains.delete(v.name);
        return undefined;
      }
      case 'rename-chain': {
        if (!chain) return noChain();
        if (chain.builtin) return diagnostic('BUILTIN_CHAIN', `cannot rename built-in chain "${chainName}"`, where, chainName);
        if (t.chains.has(cmd.newName!)) return diagnostic('CHAIN_EXISTS', `chain "${cmd.newName}" already exists`, cmd.span, cmd.newName);
        const renamed = new Map<string, MutableChain>();
        for (const [k, v] of t.chains) {
          if (k === chainName) renamed.set(cmd.newName!, { ...v, name: cmd.newName! });
          else renamed.set(k, v);
        }
        t.chains = renamed;
        for (const c of t.chains.values()) {
          c.rules = c.rules.map((r) => (r.target && (r.target.kind === 'jump' || r.target.kind === 'goto') && r.target.chain === chainName ? { ...r, target: { ...r.target, chain: cmd.newName! } } : r));
        }
        return undefined;
      }
      case 'policy':
        if (!chain) return noChain();
        if (!chain.builtin) return diagnostic('BAD_POLICY', `cannot set a policy on user-defined chain "${chainName}" (iptables: Bad built-in chain name)`, where, chainName);
        if (cmd.policy !== 'ACCEPT' && cmd.policy !== 'DROP') return diagnostic('BAD_POLICY', `bad policy "${cmd.policy}" (must be ACCEPT or DROP)`, cmd.span, cmd.policy);
        chain.policy = cmd.policy;
        return undefined;
      case 'zero':
        for (const c of chainName === undefined ? t.chains.values() : chain ? [chain] : []) {
          c.counters = ZERO;
          c.rules = c.rules.map((r) => (r.counters ? { ...r, counters: ZERO } : r));
        }
        return undefined;
      case 'list':
      case 'list-rules':
        return undefined;
    }
  }

  /** The immutable result: tables in first-use order, chains in creation order. */
  build(): Ruleset {
    const tables = [...this.tables.values()].map((t) => ({
      name: t.name,
      chains: [...t.chains.values()].map((c): Chain => {
        const out: { -readonly [K in keyof Chain]: Chain[K] } = { name: c.name, builtin: c.builtin, policy: c.policy, counters: c.counters, rules: [...c.rules] };
        if (c.span) out.span = c.span;
        return out;
      }),
    }));
    return { family: this.family, tables };
  }
}

/** The first chain with a rule that jumps or goes to `name`, if any. */
function referrer(t: MutableTable, name: string): string | undefined {
  for (const c of t.chains.values()) for (const r of c.rules) if (r.target && (r.target.kind === 'jump' || r.target.kind === 'goto') && r.target.chain === name) return c.name;
  return undefined;
}

/** Whether two rules are the same rule (as `-D`/`-C` compare them): everything but spans, text and counters. */
export function sameRule(a: Rule, b: Rule): boolean {
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

function strip(r: Rule): unknown {
  return JSON.parse(
    JSON.stringify({ ...r, span: undefined, text: undefined, counters: undefined }, (k, v) => (k === 'span' || k === 'implicit' ? undefined : v)),
  );
}
