/**
 * What the kernel refuses when it commits an nft transaction (`nf_tables_api.c` and the
 * expressions' `validate` callbacks): jumps to chains that do not exist, loops, jump depth,
 * base chains of a type the hook does not take, and statements in chains whose type or hook
 * forbids them — checked, as the kernel checks them, only for the chains a base chain reaches.
 * The walk is memoised: a chain is explored again only when a longer path reaches it (at most
 * the jump stack's depth times), so a layered graph of chains costs its size, not its paths.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../model/errors.js';
import type { NftChain, NftFamily, NftHook, NftRuleset, NftSelector, NftStatement, NftTable } from './model.js';
import { expectArgument, expectFields } from '../model/guard.js';

/** Options for {@link checkNftRuleset}. */
export interface NftCheckOptions {
  /** Chain nesting the kernel allows (`NFT_JUMP_STACK_SIZE`). */
  readonly maxDepth?: number;
}

/** nf_tables.h: `NFT_JUMP_STACK_SIZE`. */
const NFT_JUMP_STACK_SIZE = 16;

const ALL: readonly NftHook[] = ['prerouting', 'input', 'forward', 'output', 'postrouting'];

/** Hooks each base chain type may use, per family (nft_chain_filter.c, nft_chain_nat.c, nft_chain_route.c). */
function typeHooks(family: NftFamily, type: string): readonly NftHook[] {
  switch (family) {
    case 'ip': case 'ip6':
      return type === 'filter' ? ALL : type === 'nat' ? ['prerouting', 'input', 'output', 'postrouting'] : type === 'route' ? ['output'] : [];
    case 'inet':
      return type === 'filter' ? [...ALL, 'ingress'] : type === 'nat' ? ['prerouting', 'input', 'output', 'postrouting'] : type === 'route' ? ['output'] : [];
    case 'bridge': return type === 'filter' ? ALL : [];
    case 'arp': return type === 'filter' ? ['input', 'output'] : [];
    case 'netdev': return type === 'filter' ? ['ingress', 'egress'] : [];
  }
}

type Placement = { type?: 'nat'; hooks: readonly NftHook[]; what: string; families?: readonly NftFamily[] };

function fibPlacement(sel: Extract<NftSelector, { kind: 'fib' }>): Placement {
  // nft_fib_validate: an output interface is known before routing only at these hooks.
  if (sel.result !== 'type') return { hooks: ['prerouting', 'input', 'forward'], what: 'fib' };
  if (sel.flags.includes('iif')) return { hooks: ['prerouting', 'input', 'forward'], what: 'fib' };
  if (sel.flags.includes('oif')) return { hooks: ['output', 'postrouting', 'forward'], what: 'fib' };
  return { hooks: ALL, what: 'fib' };
}

/** Selectors whose expressions have a `validate` callback. */
function selectorPlacements(sel: NftSelector, out: Placement[]): void {
  switch (sel.kind) {
    case 'fib': out.push(fibPlacement(sel)); return;
    case 'socket': out.push({ hooks: ['prerouting', 'input', 'output'], what: 'socket' }); return;
    case 'osf': out.push({ hooks: ['prerouting', 'input', 'forward'], what: 'osf' }); return;
    case 'rt': if (sel.key === 'mtu') out.push({ hooks: ['forward', 'output', 'postrouting'], what: 'rt mtu' }); return;
    case 'ipsec': out.push({ hooks: sel.dir === 'in' ? ['prerouting', 'input', 'forward'] : ['forward', 'output', 'postrouting'], what: 'ipsec' }); return;
    case 'concat': for (const i of sel.items) selectorPlacements(i, out); return;
    case 'bitwise': case 'shift': selectorPlacements(sel.operand, out); return;
    case 'hash': if (sel.expr) selectorPlacements(sel.expr, out); return;
    default: return;
  }
}

/** Where each statement is allowed: chain type (if any) and hooks (the kernel's validate callbacks). */
function statementPlacements(s: NftStatement): Placement[] {
  const out: Placement[] = [];
  switch (s.kind) {
    case 'nat':
      switch (s.type) {
        case 'snat': out.push({ type: 'nat', hooks: ['postrouting', 'input'], what: 'snat' }); break;
        case 'masquerade': out.push({ type: 'nat', hooks: ['postrouting'], what: 'masquerade' }); break;
        case 'dnat': out.push({ type: 'nat', hooks: ['prerouting', 'output'], what: 'dnat' }); break;
        case 'redirect': out.push({ type: 'nat', hooks: ['prerouting', 'output'], what: 'redirect' }); break;
      }
      if (s.addr?.kind === 'map') selectorPlacements(s.addr.key, out);
      break;
    case 'tproxy': out.push({ hooks: ['prerouting'], what: 'tproxy' }); break;
    // The kernel takes reject at the ingress hook too (inet and netdev tables), not at egress.
    case 'reject': out.push({ hooks: ['prerouting', 'input', 'forward', 'output', 'ingress'], what: 'reject' }); break;
    case 'synproxy': out.push({ hooks: ['input', 'forward'], what: 'synproxy' }); break;
    case 'objref': if (s.objType === 'synproxy') out.push({ hooks: ['input', 'forward'], what: 'synproxy' }); break;
    case 'flow': out.push({ hooks: ['forward'], what: 'flow add' }); break;
    case 'fwd': out.push({ hooks: ['ingress', 'egress'], what: 'fwd' }); break;
    case 'match': selectorPlacements(s.left, out); break;
    case 'vmap': selectorPlacements(s.key, out); break;
    case 'mangle':
      if (s.value.kind === 'map') selectorPlacements(s.value.key, out);
      else if (s.value.kind !== 'value' && s.value.kind !== 'concat-value') selectorPlacements(s.value, out);
      break;
    default:
      break;
  }
  return out;
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
  const edgeCache = new Map<NftChain, { chain: string; goto: boolean; rule: number }[]>();
  const edges = (c: NftChain): { chain: string; goto: boolean; rule: number }[] => {
    let e = edgeCache.get(c);
    if (e === undefined) {
      e = c.rules.flatMap((r, ri) => r.statements.flatMap((s) => [...targets(s), ...(s.kind === 'vmap' && s.mappings.kind === 'setref' ? mapTargets(s.mappings.name) : [])].map((x) => ({ ...x, rule: ri }))));
      edgeCache.set(c, e);
    }
    return e;
  };

  for (const c of t.chains) {
    if (c.base) {
      const allowed = typeHooks(t.family, c.base.type);
      if (!allowed.includes(c.base.hook)) {
        out.push(diagnostic('INVALID_HOOK', `Could not process rule: Operation not supported (a ${c.base.type} chain cannot use the ${c.base.hook} hook in the ${t.family} family)`, c.span, c.name));
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

  const reported = new Set<string>();
  checkDepth(t, byName, edges, maxDepth, out, reported);

  // Walk from every base chain, as nft_chain_validate / nf_tables_check_loops do.

  for (const base of t.chains) {
    if (!base.base) continue;
    const hook = base.base.hook;
    const type = base.base.type;
    /** The deepest depth each chain was explored from, for this base chain. */
    const explored = new Map<NftChain, number>();
    const placed = new Set<NftChain>();
    const path: string[] = [base.name];
    const walk = (c: NftChain, depth: number): void => {
      // Paths deeper than the jump stack were reported by checkDepth.
      if (depth >= maxDepth) return;
      const seen = explored.get(c);
      if (seen !== undefined && seen >= depth) {
        // Explored from at least as deep already: nothing new below, except a loop through the path.
        if (!edges(c).some((e) => path.includes(e.chain))) return;
      }
      explored.set(c, Math.max(seen ?? -1, depth));
      if (!placed.has(c)) {
        placed.add(c);
        for (const r of c.rules) {
          for (const s of r.statements) {
            for (const p of statementPlacements(s)) {
              const bad = (p.type && p.type !== type) || !p.hooks.includes(hook);
              const key = `${r.handle}:${p.what}`;
              if (bad && !reported.has(key)) {
                reported.add(key);
                out.push(diagnostic('INVALID_HOOK', `Could not process rule: Operation not supported (${p.what} is not allowed in a ${type} chain at the ${hook} hook)`, r.span, p.what));
              }
            }
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
        if (next) {
          path.push(e.chain);
          walk(next, depth + 1);
          path.pop();
        }
      }
    };
    walk(base, 0);
  }
}

/**
 * The jump stack (`NFT_JUMP_STACK_SIZE`): a chain reached by 16 nested jumps fails validation.
 * The kernel validates the whole table each time a rule is added once the table has jumps, so the
 * first rule refused is the first one (in the order the file adds them) after which such a path
 * exists; every later rule is refused too. Adding rules only lengthens paths, so the first such
 * rule is found by bisection over the rules in file order, each step a memoised longest-path walk.
 */
function checkDepth(
  t: NftTable, byName: ReadonlyMap<string, NftChain>, edges: (c: NftChain) => { chain: string; goto: boolean; rule: number }[],
  maxDepth: number, out: Diagnostic[], reported: Set<string>,
): void {
  const rules = t.chains.flatMap((c) => c.rules.map((r, i) => ({ c, r, i })));
  rules.sort((a, b) => (a.r.span?.offset ?? 0) - (b.r.span?.offset ?? 0));
  const order = new Map(rules.map((x, k) => [x.r, k]));
  const bases = t.chains.filter((c) => c.base);
  /** Whether, with the first `n` rules added, a chain lies `maxDepth` jumps below a base chain. */
  const tooDeep = (n: number): boolean => {
    const height = new Map<NftChain, number>();
    const onPath = new Set<NftChain>();
    const h = (c: NftChain): number => {
      const known = height.get(c);
      if (known !== undefined) return known;
      if (onPath.has(c)) return 0; // a loop: reported by the walk
      onPath.add(c);
      let best = 0;
      for (const e of edges(c)) {
        if ((order.get(c.rules[e.rule]!) ?? 0) >= n) continue;
        const next = byName.get(e.chain);
        if (next) best = Math.max(best, 1 + h(next));
        if (best >= maxDepth) break;
      }
      onPath.delete(c);
      height.set(c, best);
      return best;
    };
    return bases.some((b) => h(b) >= maxDepth);
  };
  if (!tooDeep(rules.length)) return;
  let lo = 1;
  let hi = rules.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tooDeep(mid)) hi = mid;
    else lo = mid + 1;
  }
  const first = rules[lo - 1]!;
  reported.add(`depth:${first.c.name}`);
  out.push(diagnostic('JUMP_TOO_DEEP', `Could not process rule: Too many links (a chain ${maxDepth} nested jumps below a base chain)`, first.r.span, first.c.name));
}
