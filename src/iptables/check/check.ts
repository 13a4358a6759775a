/**
 * Load-time validation, as the kernel's `translate_table` and iptables do it before a rule set is
 * accepted: undefined chains, loops (`mark_source_chains` → ELOOP), chain-name and jump-depth
 * limits, policies, `-i`/`-o` in hooks that have no such device, and where each extension may be
 * used (its table, the hooks its chain is reachable from, its protocol).
 *
 * @module
 */
import { diagnostic } from '../../model/errors.js';
import type { Diagnostic } from '../../model/errors.js';
import { BUILTIN_CHAINS, HOOK_NAMES, MAX_CHAIN_NAME_LENGTH } from '../../model/types.js';
import type { Chain, Family, HookName, Rule, Ruleset, Span, Table } from '../../model/types.js';
import { MATCHES, TARGETS } from '../extensions/registry.js';
import { checkExtension } from '../extensions/placement.js';
import type { MatchExtension, TargetExtension } from '../extensions/types.js';
import { utf8Length } from '../../model/limits.js';
import { expectArgument, expectFields, expectShape } from '../../model/guard.js';


/**
 * `NFT_JUMP_STACK_SIZE` (include/net/netfilter/nf_tables.h): iptables-nft, the default back end,
 * refuses jumps and gotos nested deeper (`nft_chain_validate` → `-EMLINK`). Legacy ip_tables has
 * no fixed limit (its jump stack has one slot per user chain).
 */
export const NFT_JUMP_STACK_SIZE = 16;

/** Options of {@link check}. */
export interface CheckOptions {
  /**
   * `nft` (default): also enforce iptables-nft's jump depth limit. `legacy`: ip_tables only.
   */
  readonly backend?: 'nft' | 'legacy';
  /**
   * The ipsets that exist where the rules are loaded (`ipset save` of the machine). Given, a
   * `-m set` or `-j SET` naming another set is an error, as iptables refuses it ("Set NAME
   * doesn't exist."), and so is a set of the other family. Absent: set names are not checked.
   */
  readonly ipsets?: readonly IpsetDeclaration[];
  /**
   * The nfacct accounting objects that exist (`nfacct list`). Given, `-m nfacct` naming another is
   * an error: the kernel refuses the rule (`xt_nfacct`: "cannot find nfacct object"; the load
   * fails with ENOENT). Absent: not checked.
   */
  readonly nfacct?: readonly string[];
  /** Extension modules (default: the built-in registry). */
  readonly registry?: {
    readonly matches: ReadonlyMap<string, MatchExtension>;
    readonly targets: ReadonlyMap<string, TargetExtension>;
  };
}

/**
 * An ipset as far as loading a rule that names it is concerned: its name and family (`null` for a
 * `list:set`, which serves both). An {@link Ipset} is one.
 */
export interface IpsetDeclaration {
  readonly name: string;
  readonly type: string;
  readonly family: Family | null;
}

/** Hooks where a packet has an in-device / an out-device (iptables: "Can't use -i with OUTPUT"). */
const HAS_IN: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD'];
const HAS_OUT: readonly HookName[] = ['FORWARD', 'OUTPUT', 'POSTROUTING'];

function jumpTarget(rule: Rule): { chain: string; kind: 'jump' | 'goto' } | null {
  const t = rule.target;
  if (t !== null && (t.kind === 'jump' || t.kind === 'goto')) return { chain: t.chain, kind: t.kind };
  return null;
}

/**
 * For each chain of a table, the built-in hooks it is reachable from through `-j` and `-g`,
 * as the kernel computes `comefrom` in `mark_source_chains`.
 *
 * @example
 * ```ts
 * reachableHooks(natTable).get('PROXY_INIT_OUTPUT'); // Set { 'OUTPUT' }
 * ```
 */
export function reachableHooks(table: Table): Map<string, Set<HookName>> {
  expectArgument(table, 'object', 'table');
  expectFields(table, { chains: 'array', name: 'string' }, 'table');
  const byName = new Map<string, Chain>();
  for (const c of table.chains) byName.set(c.name, c);
  const out = new Map<string, Set<HookName>>();
  for (const c of table.chains) out.set(c.name, new Set());
  for (const c of table.chains) {
    if (!c.builtin) continue;
    const hook = c.name as HookName;
    const seen = new Set<string>();
    const todo = [c.name];
    while (todo.length > 0) {
      const name = todo.pop()!;
      if (seen.has(name)) continue;
      seen.add(name);
      out.get(name)?.add(hook);
      const chain = byName.get(name);
      if (!chain) continue;
      for (const r of chain.rules) {
        const j = jumpTarget(r);
        if (j && byName.has(j.chain)) todo.push(j.chain);
      }
    }
  }
  return out;
}

/**
 * `mark_source_chains`: a jump that closes a loop, found by depth-first search from `start`.
 * Iterative (an explicit stack of chain and rule positions), so chains nested thousands deep do not
 * exhaust the call stack; each chain is entered once per `state`, so the search is linear in chains
 * plus jumps.
 */
function findLoops(table: Table, byName: Map<string, Chain>, start: string, reported: Set<Rule>, out: Diagnostic[], reachable: boolean, state: Map<string, 1 | 2>): void {
  // state: 1 while a chain is on the path, 2 when done
  if (state.has(start) || !byName.has(start)) return;
  const stack: { name: string; chain: Chain; next: number }[] = [{ name: start, chain: byName.get(start)!, next: 0 }];
  state.set(start, 1);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const rules = top.chain.rules;
    if (top.next >= rules.length) {
      state.set(top.name, 2);
      stack.pop();
      continue;
    }
    const r = rules[top.next++]!;
    const j = jumpTarget(r);
    if (!j) continue;
    const target = byName.get(j.chain);
    if (!target) continue;
    const s = state.get(j.chain);
    if (s === 1) {
      if (!reported.has(r)) {
        reported.add(r);
        const d = diagnostic(
          'CHAIN_LOOP',
          `${j.kind === 'jump' ? '-j' : '-g'} ${j.chain} in ${table.name} chain ${top.name} closes a loop (the kernel refuses the table: ELOOP, "Loop found in table")`,
          r.target?.span ?? r.span,
          j.chain,
        );
        out.push(reachable ? d : { ...d, severity: 'warning', message: `${d.message}; no built-in chain reaches it, so the kernel does not see it` });
      }
      continue;
    }
    if (s === undefined) {
      state.set(j.chain, 1);
      stack.push({ name: j.chain, chain: target, next: 0 });
    }
  }
}

/**
 * Deepest nesting of jumps and gotos below each chain (nf_tables counts both), for a loop-free
 * graph: each chain's height is computed once (post-order, iterative) and memoised in `heights`,
 * so layered jump graphs cost chains plus jumps rather than one walk per path. The rule reported is
 * the jump on the deepest path that goes past `limit`, or the last jump of that path.
 */
function maxDepth(byName: Map<string, Chain>, start: string, limit: number, heights: Map<string, { height: number; via: Rule | null }>): { depth: number; rule: Rule | null } {
  const heightOf = (name: string): { height: number; via: Rule | null } => {
    const known = heights.get(name);
    if (known) return known;
    const stack: { name: string; chain: Chain | undefined; next: number; best: { height: number; via: Rule | null } }[] = [];
    const enter = (n: string): void => {
      heights.set(n, { height: 0, via: null }); // provisional: a loop, if any, counts as no depth
      stack.push({ name: n, chain: byName.get(n), next: 0, best: { height: 0, via: null } });
    };
    enter(name);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const rules = top.chain?.rules ?? [];
      if (top.next >= rules.length) {
        heights.set(top.name, top.best);
        stack.pop();
        continue;
      }
      const r = rules[top.next]!;
      const j = jumpTarget(r);
      if (!j || !byName.has(j.chain)) {
        top.next++;
        continue;
      }
      const h = heights.get(j.chain);
      if (!h) {
        enter(j.chain);
        continue;
      }
      top.next++;
      if (h.height + 1 > top.best.height) top.best = { height: h.height + 1, via: r };
    }
    return heights.get(name)!;
  };
  const total = heightOf(start);
  let rule: Rule | null = null;
  let name = start;
  for (let depth = 1; depth <= Math.min(total.height, limit + 1); depth++) {
    const step = heights.get(name);
    if (!step?.via) break;
    rule = step.via;
    name = (jumpTarget(step.via) as { chain: string }).chain;
  }
  return { depth: total.height, rule };
}

function ruleLabel(table: string, chain: string, index: number): string {
  return `${table} ${chain} rule ${index + 1}`;
}

/**
 * Validates a rule set and returns every problem found (errors and warnings). A rule set without
 * errors can be lowered and evaluated; evaluation then never throws.
 *
 * @example
 * ```ts
 * const diags = check(parseIptablesSaveOrThrow(text));
 * for (const d of diags) console.error(formatDiagnostic(d, text, 'rules.txt'));
 * ```
 */
export function check(ruleset: Ruleset, options: CheckOptions = {}): Diagnostic[] {
  expectArgument(ruleset, 'object', 'ruleset');
  expectShape(options, {
    kind: 'object',
    fields: { backend: { kind: ['string', 'undefined'], oneOf: ['nft', 'legacy'] }, ipsets: { kind: ['array', 'undefined'], items: 'object' }, nfacct: { kind: ['array', 'undefined'], items: 'string' }, registry: ['object', 'undefined'] },
  }, 'options');
  expectFields(ruleset, { tables: 'array', family: 'integer' }, 'ruleset');
  const out: Diagnostic[] = [];
  const matches = options.registry?.matches ?? MATCHES;
  const targets = options.registry?.targets ?? TARGETS;
  const backend = options.backend ?? 'nft';
  out.push(...checkRateEstimators(ruleset));
  if (options.ipsets !== undefined || options.nfacct !== undefined) out.push(...checkObjects(ruleset, options.ipsets, options.nfacct));
  for (const table of ruleset.tables) {
    const byName = new Map<string, Chain>();
    const builtins = BUILTIN_CHAINS[table.name] as readonly string[];
    for (const c of table.chains) {
      if (byName.has(c.name)) out.push(diagnostic('CHAIN_EXISTS', `chain ${c.name} is defined twice in table ${table.name}`, c.span, c.name));
      byName.set(c.name, c);
      if (utf8Length(c.name) > MAX_CHAIN_NAME_LENGTH) {
        out.push(diagnostic('CHAIN_NAME_TOO_LONG', `chain name "${c.name}" is ${utf8Length(c.name)} bytes; the limit is ${MAX_CHAIN_NAME_LENGTH}`, c.span, c.name));
      }
      if (c.builtin && !builtins.includes(c.name)) {
        out.push(diagnostic('BUILTIN_CHAIN', `table ${table.name} has no built-in chain ${c.name} (it has ${builtins.join(', ')})`, c.span, c.name));
      }
      if (!c.builtin && builtins.includes(c.name)) {
        out.push(diagnostic('CHAIN_EXISTS', `${c.name} is a built-in chain of table ${table.name}`, c.span, c.name));
      }
      if (!c.builtin && c.policy !== null) {
        out.push(diagnostic('BAD_POLICY', `user-defined chain ${c.name} cannot have a policy (only built-in chains do)`, c.span, c.name));
      }
      const policy = c.policy as string | null;
      if (policy !== null && policy !== 'ACCEPT' && policy !== 'DROP') {
        out.push(diagnostic('BAD_POLICY', `bad policy "${policy}" for chain ${c.name}: a policy is ACCEPT or DROP`, c.span, policy));
      }
    }
    const hooks = reachableHooks(table);
    const reported = new Set<Rule>();
    for (const c of table.chains) if (c.builtin) findLoops(table, byName, c.name, reported, out, true, new Map());
    const unreached = new Map<string, 1 | 2>();
    for (const c of table.chains) if (!c.builtin && hooks.get(c.name)!.size === 0) findLoops(table, byName, c.name, reported, out, false, unreached);
    if (backend === 'nft' && !out.some((d) => d.code === 'CHAIN_LOOP' && d.severity === 'error')) {
      const heights = new Map<string, { height: number; via: Rule | null }>();
      for (const c of table.chains) {
        if (!c.builtin) continue;
        const d = maxDepth(byName, c.name, NFT_JUMP_STACK_SIZE, heights);
        if (d.depth >= NFT_JUMP_STACK_SIZE) {
          out.push(diagnostic(
            'JUMP_TOO_DEEP',
            `jumps from ${table.name} ${c.name} nest ${d.depth} chains deep; iptables-nft allows ${NFT_JUMP_STACK_SIZE - 1} (NFT_JUMP_STACK_SIZE ${NFT_JUMP_STACK_SIZE}, "Too many links")`,
            d.rule?.target?.span ?? d.rule?.span,
          ));
        }
      }
    }
    for (const c of table.chains) {
      const reach = [...hooks.get(c.name)!].sort((a, b) => HOOK_NAMES.indexOf(a) - HOOK_NAMES.indexOf(b));
      c.rules.forEach((r, i) => {
        checkRule(out, ruleset, table, c, r, i, reach, matches, targets, byName, backend);
        // nf_tables refuses a negated test of the whole address space (observed: "RULE_APPEND
        // failed (Invalid argument)"); legacy keeps it as a rule that never matches.
        if ((options.backend ?? 'nft') === 'nft') {
          for (const [flag, a] of [['-s', r.source], ['-d', r.destination]] as const) {
            if (a && a.negated && a.value.mask.every((w) => w === 0)) {
              out.push(diagnostic('BAD_ADDRESS', `! ${flag} ${a.value.family === 4 ? '0.0.0.0/0' : '::/0'} can never match; the nf_tables kernel refuses the rule (${ruleLabel(table.name, c.name, i)})`, r.span, flag));
            }
          }
        }
      });
    }
  }
  return out;
}

function checkRule(
  out: Diagnostic[],
  ruleset: Ruleset,
  table: Table,
  chain: Chain,
  r: Rule,
  index: number,
  reach: readonly HookName[],
  matches: ReadonlyMap<string, MatchExtension>,
  targets: ReadonlyMap<string, TargetExtension>,
  byName: Map<string, Chain>,
  backend: 'nft' | 'legacy',
): void {
  const where = ruleLabel(table.name, chain.name, index);
  const at = (s: Span | undefined): Span | undefined => s ?? r.span;
  // iptables: "Can't use -i with OUTPUT" — for rules written in the built-in chain itself.
  const inBad = r.inInterface && reach.length > 0 && reach.every((h) => !HAS_IN.includes(h));
  const outBad = r.outInterface && reach.length > 0 && reach.every((h) => !HAS_OUT.includes(h));
  if (inBad) {
    const msg = `-i cannot match in ${reach.join('/')}: the packet has no in-interface there (${where})`;
    out.push(chain.builtin ? diagnostic('INVALID_HOOK', `Can't use -i with ${chain.name} (${where})`, r.span, '-i') : { ...diagnostic('INVALID_HOOK', msg, r.span, '-i'), severity: 'warning' });
  }
  if (outBad) {
    const msg = `-o cannot match in ${reach.join('/')}: the packet has no out-interface there (${where})`;
    out.push(chain.builtin ? diagnostic('INVALID_HOOK', `Can't use -o with ${chain.name} (${where})`, r.span, '-o') : { ...diagnostic('INVALID_HOOK', msg, r.span, '-o'), severity: 'warning' });
  }
  const hooks = reach.length > 0 ? reach : undefined;
  const ctx = { family: ruleset.family, protocol: r.protocol, table: table.name, ...(hooks ? { hooks } : {}), builtinChain: chain.builtin, backend, matches: r.matches };
  for (const m of r.matches) {
    const ext = matches.get(m.name);
    if (!ext) {
      out.push(diagnostic('UNKNOWN_MATCH', `unknown match "${m.name}" (${where})`, at(m.span), m.name));
      continue;
    }
    if (ext.family !== 'both' && ext.family !== ruleset.family) {
      out.push(diagnostic('WRONG_FAMILY', `match "${m.name}" is IPv${ext.family} only (${where})`, at(m.span), m.name));
    }
    out.push(...checkExtension(ext, m.options, ctx, at(m.span)));
  }
  const t = r.target;
  if (t === null) return;
  if (t.kind === 'jump' || t.kind === 'goto') {
    const target = byName.get(t.chain);
    if (!target) out.push(diagnostic('UNKNOWN_CHAIN', `${t.kind === 'jump' ? '-j' : '-g'} ${t.chain}: no chain or target by that name in table ${table.name} (${where})`, at(t.span), t.chain));
    else if (target.builtin) out.push(diagnostic('BUILTIN_CHAIN', `cannot ${t.kind} to built-in chain ${t.chain} (${where})`, at(t.span), t.chain));
    return;
  }
  if (t.kind === 'extension') {
    const ext = targets.get(t.name);
    if (!ext) {
      out.push(diagnostic('UNKNOWN_TARGET', `unknown target "${t.name}" (${where})`, at(t.span), t.name));
      return;
    }
    if (ext.family !== 'both' && ext.family !== ruleset.family) {
      out.push(diagnostic('WRONG_FAMILY', `target "${t.name}" is IPv${ext.family} only (${where})`, at(t.span), t.name));
    }
    out.push(...checkExtension(ext, t.options, ctx, at(t.span)));
  }
}

/**
 * The rate estimators a rule set names, as the kernel checks them rule by rule in load order
 * (`xt_rateest_tg_checkentry`, `xt_rateest_mt_checkentry`): a `rateest` match must name an
 * estimator an earlier `RATEEST` rule created (else "No such file or directory"), and two
 * `RATEEST` rules with one name must agree on interval and ewmalog (else "Invalid argument").
 * Load order is the text's order when the rules have spans, else tables, chains and rules in turn.
 */
function checkRateEstimators(ruleset: Ruleset): Diagnostic[] {
  interface Site { readonly r: Rule; readonly where: string; readonly order: number }
  const sites: Site[] = [];
  for (const t of ruleset.tables) {
    for (const c of t.chains) {
      c.rules.forEach((r, i) => {
        const uses = r.matches.some((m) => m.name === 'rateest') || (r.target?.kind === 'extension' && r.target.name === 'RATEEST');
        if (uses) sites.push({ r, where: ruleLabel(t.name, c.name, i), order: sites.length });
      });
    }
  }
  if (sites.length === 0) return [];
  if (sites.every((s) => s.r.span !== undefined)) sites.sort((a, b) => a.r.span!.offset - b.r.span!.offset || a.order - b.order);
  const out: Diagnostic[] = [];
  const made = new Map<string, { interval: number; ewmaLog: number }>();
  for (const { r, where } of sites) {
    for (const m of r.matches) {
      if (m.name !== 'rateest') continue;
      const o = m.options as { name1: string; name2?: string };
      for (const n of o.name2 === undefined ? [o.name1] : [o.name1, o.name2]) {
        if (!made.has(n)) {
          out.push(diagnostic('UNKNOWN_ESTIMATOR', `rateest: no rate estimator "${n}": no earlier RATEEST rule creates it (the kernel refuses the rule: No such file or directory) (${where})`, m.span ?? r.span, n));
        }
      }
    }
    const t = r.target;
    if (t?.kind === 'extension' && t.name === 'RATEEST') {
      const o = t.options as { name: string; interval: number; ewmaLog: number };
      const had = made.get(o.name);
      if (had === undefined) made.set(o.name, { interval: o.interval, ewmaLog: o.ewmaLog });
      else if (had.interval !== o.interval || had.ewmaLog !== o.ewmaLog) {
        out.push(diagnostic('CONFLICTING_OPTIONS', `RATEEST: estimator "${o.name}" exists with another interval or ewmalog (the kernel refuses the rule: Invalid argument) (${where})`, t.span ?? r.span, o.name));
      }
    }
  }
  return out;
}

/**
 * The named objects a rule needs at load: ipsets (`-m set`, `-j SET`: libxt_set asks the kernel
 * for the set by name while parsing, "Set NAME doesn't exist.", and refuses one of the other
 * family) and nfacct objects (`xt_nfacct_checkentry`: the load fails with ENOENT).
 */
function checkObjects(ruleset: Ruleset, ipsets: readonly IpsetDeclaration[] | undefined, nfacct: readonly string[] | undefined): Diagnostic[] {
  const out: Diagnostic[] = [];
  const sets = ipsets === undefined ? undefined : new Map(ipsets.map((s) => [s.name, s]));
  const accts = nfacct === undefined ? undefined : new Set(nfacct);
  for (const t of ruleset.tables) {
    for (const c of t.chains) {
      c.rules.forEach((r, i) => {
        const where = ruleLabel(t.name, c.name, i);
        const setNames: { name: string; span: Span | undefined }[] = [];
        for (const m of r.matches) {
          if (m.name === 'set') setNames.push({ name: (m.options as { name: string }).name, span: m.span ?? r.span });
          if (m.name === 'nfacct' && accts !== undefined) {
            const n = (m.options as { name: string }).name;
            if (!accts.has(n)) out.push(diagnostic('UNKNOWN_NFACCT', `nfacct object "${n}" does not exist (the kernel refuses the rule: No such file or directory; create it with nfacct add ${n}) (${where})`, m.span ?? r.span, n));
          }
        }
        const tg = r.target;
        if (tg?.kind === 'extension' && tg.name === 'SET') {
          const o = tg.options as { add: { name: string } | null; del: { name: string } | null };
          for (const x of [o.add, o.del]) if (x) setNames.push({ name: x.name, span: tg.span ?? r.span });
        }
        if (sets === undefined) return;
        for (const { name, span } of setNames) {
          const s = sets.get(name);
          if (s === undefined) out.push(diagnostic('UNKNOWN_SET', `Set ${name} doesn't exist. (iptables refuses the rule; the sets given are ${sets.size === 0 ? 'none' : [...sets.keys()].slice(0, 5).join(', ') + (sets.size > 5 ? ', …' : '')}) (${where})`, span, name));
          else if (s.family !== null && s.family !== ruleset.family) out.push(diagnostic('WRONG_FAMILY', `The protocol family of set ${name} is IPv${s.family}, which is not applicable. (an ip${ruleset.family === 6 ? '6' : ''}tables rule needs an ${ruleset.family === 6 ? 'inet6' : 'inet'} set) (${where})`, span, name));
        }
      });
    }
  }
  return out;
}
