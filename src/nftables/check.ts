/**
 * What the kernel refuses when it commits an nft transaction (`nf_tables_api.c` and the
 * expressions' `validate` callbacks): jumps to chains that do not exist, loops, jump depth,
 * base chains of a type the hook does not take, and statements in chains whose type or hook
 * forbids them — checked, as the kernel checks them, only for the chains a base chain reaches.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../model/errors.js';
import type { NftChain, NftHook, NftRuleset, NftStatement, NftTable } from './model.js';
import { expectArgument, expectFields } from '../model/guard.js';

/** Options for {@link checkNftRuleset}. */
export interface NftCheckOptions {
  /** Chain nesting the kernel allows (`NFT_JUMP_STACK_SIZE`). */
  readonly maxDepth?: number;
}

/** nf_tables.h: `NFT_JUMP_STACK_SIZE`. */
const NFT_JUMP_STACK_SIZE = 16;

/** Hooks each base chain type may use for ip, ip6 and inet (nft_chain_filter.c, nft_chain_nat.c, nft_chain_route.c). */
const TYPE_HOOKS: Readonly<Record<string, readonly NftHook[]>> = {
  filter: ['prerouting', 'input', 'forward', 'output', 'postrouting'],
  nat: ['prerouting', 'input', 'output', 'postrouting'],
  route: ['output'],
};

/** Where each statement is allowed: chain type (if any) and hooks (the kernel's validate callbacks). */
function statementPlacement(s: NftStatement): { type?: 'nat'; hooks: readonly NftHook[]; what: string } | undefined {
  switch (s.kind) {
    case 'nat':
      switch (s.type) {
        case 'snat': return { type: 'nat', hooks: ['postrouting', 'input'], what: 'snat' };
        case 'masquerade': return { type: 'nat', hooks: ['postrouting'], what: 'masquerade' };
        case 'dnat': return { type: 'nat', hooks: ['prerouting', 'output'], what: 'dnat' };
        case 'redirect': return { type: 'nat', hooks: ['prerouting', 'output'], what: 'redirect' };
      }
      return undefined;
    case 'tproxy': return { hooks: ['prerouting'], what: 'tproxy' };
    case 'reject': return { hooks: ['prerouting', 'input', 'forward', 'output'], what: 'reject' };
    case 'match':
      if (s.left.kind === 'fib') return { hooks: s.left.result === 'type' ? ['prerouting', 'input', 'forward', 'output'] : ['prerouting', 'input', 'forward'], what: 'fib' };
      if (s.left.kind === 'socket') return { hooks: ['prerouting', 'input', 'output'], what: 'socket' };
      return undefined;
    default:
      return undefined;
  }
}

/**
 * The kernel's commit-time checks over a rule set. Errors carry the span of the offending rule
 * (or statement), as `nft -f` reports the command the kernel refused.
 *
 * @example
 * ```ts
 * const rs = parseNftRulesetOrThrow('table ip t {\n\tchain c {\n\t\tjump nowhere\n\t}\n}\n');
 * checkNftRuleset(rs)[0]?.code; // "UNKNOWN_CHAIN"
 * ```
 */
export function checkNftRuleset(ruleset: NftRuleset, options: NftCheckOptions = {}): Diagnostic[] {
  expectFields(ruleset, { tables: 'array' }, 'ruleset');
  expectArgument(options, 'object', 'options');
  const out: Diagnostic[] = [];
  for (const t of ruleset.tables) checkTable(t, options.maxDepth ?? NFT_JUMP_STACK_SIZE, out);
  return out.sort((a, b) => (a.span?.offset ?? 0) - (b.span?.offset ?? 0));
}

function targets(s: NftStatement): { chain: string; goto: boolean }[] {
  if (s.kind === 'verdict' && s.chain !== undefined) return [{ chain: s.chain, goto: s.verdict === 'goto' }];
  if (s.kind === 'vmap' && s.mappings.kind === 'set') {
    return s.mappings.elements.flatMap((e) => (e.data?.kind === 'verdict' && e.data.chain !== undefined ? [{ chain: e.data.chain, goto: e.data.verdict === 'goto' }] : []));
  }
  return [];
}

function checkTable(t: NftTable, maxDepth: number, out: Diagnostic[]): void {
  const byName = new Map(t.chains.map((c) => [c.name, c]));
  // Verdict maps' chains count as jumps too.
  const mapTargets = (name: string): { chain: string; goto: boolean }[] => {
    const set = t.sets.find((s) => s.name === name);
    return set ? set.elements.flatMap((e) => (e.data?.kind === 'verdict' && e.data.chain !== undefined ? [{ chain: e.data.chain, goto: e.data.verdict === 'goto' }] : [])) : [];
  };
  const edges = (c: NftChain): { chain: string; goto: boolean; rule: number }[] =>
    c.rules.flatMap((r, ri) => r.statements.flatMap((s) => [...targets(s), ...(s.kind === 'vmap' && s.mappings.kind === 'setref' ? mapTargets(s.mappings.name) : [])].map((x) => ({ ...x, rule: ri }))));

  for (const c of t.chains) {
    if (c.base) {
      const allowed = TYPE_HOOKS[c.base.type] ?? [];
      if (!allowed.includes(c.base.hook)) {
        out.push(diagnostic('INVALID_HOOK', `Could not process rule: Operation not supported (a ${c.base.type} chain cannot use the ${c.base.hook} hook)`, c.span, c.name));
      }
      if (c.base.type === 'nat' && c.base.priority <= -200) {
        out.push(diagnostic('INVALID_HOOK', 'Could not process rule: Operation not supported (nat chains need a priority above -200, after conntrack)', c.span, c.name));
      }
    }
    for (const r of c.rules) {
      for (const s of r.statements) {
        for (const j of targets(s)) {
          if (!byName.has(j.chain)) out.push(diagnostic('UNKNOWN_CHAIN', `Could not process rule: No such file or directory (chain '${j.chain}' does not exist)`, r.span, j.chain));
          else if (byName.get(j.chain)!.base) out.push(diagnostic('BUILTIN_CHAIN', `Could not process rule: Operation not supported (cannot jump to base chain '${j.chain}')`, r.span, j.chain));
        }
      }
    }
  }
  for (const s of t.sets) {
    for (const e of s.elements) {
      if (e.data?.kind === 'verdict' && e.data.chain !== undefined && !byName.has(e.data.chain)) {
        out.push(diagnostic('UNKNOWN_CHAIN', `Could not process rule: No such file or directory (chain '${e.data.chain}' does not exist)`, s.span, e.data.chain));
      }
    }
  }
  if (out.some((d) => d.code === 'UNKNOWN_CHAIN')) return;

  // Walk from every base chain, as nft_chain_validate / nf_tables_check_loops do.
  const reported = new Set<string>();
  for (const base of t.chains) {
    if (!base.base) continue;
    const hook = base.base.hook;
    const type = base.base.type;
    const walk = (c: NftChain, depth: number, path: readonly string[]): void => {
      if (depth > maxDepth) {
        const key = `depth:${c.name}`;
        if (!reported.has(key)) {
          reported.add(key);
          out.push(diagnostic('JUMP_TOO_DEEP', `Could not process rule: Too many links (more than ${maxDepth} nested jumps from base chain '${base.name}')`, c.span, c.name));
        }
        return;
      }
      for (const r of c.rules) {
        for (const s of r.statements) {
          const p = statementPlacement(s);
          if (!p) continue;
          const bad = (p.type && p.type !== type) || !p.hooks.includes(hook);
          const key = `${r.handle}:${s.kind}`;
          if (bad && !reported.has(key)) {
            reported.add(key);
            out.push(diagnostic('INVALID_HOOK', `Could not process rule: Operation not supported (${p.what} is not allowed in a ${type} chain at the ${hook} hook)`, r.span, p.what));
          }
        }
      }
      for (const e of edges(c)) {
        if (path.includes(e.chain)) {
          const key = `loop:${e.chain}`;
          if (!reported.has(key)) {
            reported.add(key);
            out.push(diagnostic('CHAIN_LOOP', `Could not process rule: Too many levels of symbolic links (a loop through chain '${e.chain}')`, c.rules[e.rule]?.span, e.chain));
          }
          continue;
        }
        const next = byName.get(e.chain);
        if (next) walk(next, depth + 1, [...path, e.chain]);
      }
    };
    walk(base, 0, [base.name]);
  }
}
