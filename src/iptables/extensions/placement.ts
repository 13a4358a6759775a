/**
 * Where an extension may be used, checked as the kernel's `xt_check_match`/`xt_check_target`
 * do at load: the table (`.table`), the hooks the chain is reachable from (`.hooks`), and the
 * rule's protocol (`.proto`, not inverted), then the module's own `check`.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../model/errors.js';
import type { HookName, Span } from '../../model/types.js';
import { parseProtocol } from '../../model/protocols.js';
import type { CheckContext, MatchExtension, TargetExtension } from './types.js';
import { ruleProtocol } from './values.js';

/**
 * Checks one extension instance where it is used. `ctx.table` and `ctx.hooks` may be absent when
 * unknown (a user chain not reached from any hook is checked for table and protocol only).
 *
 * @example
 * ```ts
 * checkExtension(TARGETS.get('REDIRECT')!, opts, { family: 4, protocol: undefined, table: 'filter', hooks: ['INPUT'] });
 * // → [INVALID_TABLE "REDIRECT target is only valid in the nat table, not in filter", …]
 * ```
 */
export function checkExtension(
  ext: MatchExtension | TargetExtension,
  options: unknown,
  ctx: CheckContext,
  span?: Span,
): Diagnostic[] {
  const out: Diagnostic[] = [];
  const what = `${ext.name} ${ext.kind}`;
  const p = ext.placement;
  if (p?.tables && ctx.table !== undefined && !(p.tables as readonly string[]).includes(ctx.table)) {
    out.push(diagnostic('INVALID_TABLE', `${what} is only valid in the ${p.tables.join('/')} table${p.tables.length > 1 ? 's' : ''}, not in ${ctx.table}`, span, ext.name));
  }
  if (p?.hooks && ctx.hooks) {
    const bad = ctx.hooks.filter((h) => !p.hooks!.includes(h));
    if (bad.length > 0) out.push(hookDiagnostic(what, bad, p.hooks, span, ext.name));
  }
  if (p?.protocols) {
    const nums = p.protocols.map((n) => parseProtocol(n)!);
    const rp = ruleProtocol(ctx.protocol);
    if (!rp || rp.negated || !nums.includes(rp.num)) {
      const need = p.protocols.map((n) => `-p ${n}`).join(' or ');
      out.push(diagnostic('MATCH_NEEDS_PROTOCOL', `${what} needs ${need}${rp ? (rp.negated ? ` (not "! -p ${ctx.protocol!.value}")` : ` (not "-p ${ctx.protocol!.value}")`) : ''}`, span, ext.name));
    }
  }
  // A module's own check knows the option, not where it was written: it is reported at the
  // extension's `-m NAME`/`-j NAME`.
  if (ext.check) for (const d of ext.check(options, ctx)) out.push(d.span === undefined && span !== undefined ? { ...d, span } : d);
  return out;
}

/**
 * The hooks an extension's own `checkentry` sees in `hook_mask`: those the chain is reachable
 * from, except for a rule in a user chain under the nf_tables back end, where it sees none
 * (`nft_match_set_mtchk_param` passes an empty mask there), so a `checkentry` that refuses by hook
 * loads it. The static `hooks` of {@link Placement} are enforced either way.
 */
export function checkentryHooks(ctx: CheckContext): readonly HookName[] | undefined {
  if (ctx.builtinChain === false && ctx.backend !== 'legacy') return undefined;
  return ctx.hooks;
}

/** The kernel's words: "used from hooks INPUT, but only usable from OUTPUT/POSTROUTING". */
export function hookDiagnostic(what: string, used: readonly HookName[], allowed: readonly HookName[], span: Span | undefined, token: string): Diagnostic {
  return diagnostic('INVALID_HOOK', `${what} used from ${used.join('/')}, but only usable from ${allowed.join('/')}`, span, token);
}
