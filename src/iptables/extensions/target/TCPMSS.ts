/**
 * `-j TCPMSS` (`libxt_TCPMSS.c`, kernel `xt_TCPMSS.c`): rewrites the MSS option of TCP SYNs
 * (`--set-mss n` or `--clamp-mss-to-pmtu`; given both, the last one counts). Needs `-p tcp`; clamping to the path MTU
 * is allowed from FORWARD, OUTPUT and POSTROUTING only. (iptables-legacy also demands a SYN match
 * on the rule; the nf_tables back end does not.) The simulator does not model segment sizes: the
 * target continues.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../../model/errors.js';
import type { HookName } from '../../../model/types.js';
import type { TcpOptions } from '../match/tcp.js';
import { checkentryHooks, hookDiagnostic } from '../placement.js';
import type { TargetExtension } from '../types.js';
import { missing, parseUint32, unknownOption } from '../values.js';

/** Options of `-j TCPMSS`: a fixed MSS, or clamping (`mss` absent). */
export interface TcpmssTargetOptions {
  readonly mss?: number;
}

const PMTU_HOOKS: readonly HookName[] = ['FORWARD', 'OUTPUT', 'POSTROUTING'];
const SYN = 0x02;

function isSynMatch(m: { readonly name: string; readonly options: unknown }): boolean {
  const flags = m.name === 'tcp' ? (m.options as TcpOptions).flags : undefined;
  return flags !== undefined && !flags.negated && (flags.value.comp & SYN) !== 0;
}

/** `-j TCPMSS`. */
export const TCPMSS: TargetExtension<TcpmssTargetOptions> = {
  kind: 'target',
  name: 'TCPMSS',
  family: 'both',
  terminal: false,
  options: [
    { name: 'set-mss', arg: true },
    { name: 'clamp-mss-to-pmtu', arg: false },
  ],
  placement: { protocols: ['tcp'] },
  parse(occurrences, ctx) {
    // No exclusion: both options write the same field, the last one wins.
    let r: TcpmssTargetOptions | undefined;
    for (const o of occurrences) {
      if (o.name === 'set-mss') r = { mss: parseUint32(o, 'TCPMSS', 0, 0xffff - (ctx.family === 4 ? 20 : 40)) };
      else if (o.name === 'clamp-mss-to-pmtu') r = {};
      else unknownOption('TCPMSS', o);
    }
    if (!r) missing(ctx, 'TCPMSS', 'TCPMSS target: at least one parameter is required');
    return r;
  },
  save(o) {
    return o.mss === undefined ? '--clamp-mss-to-pmtu' : `--set-mss ${o.mss}`;
  },
  check(o, ctx) {
    // tcpmss_tg4_check: the hook test is checkentry's own, so a user chain loads it under nft.
    const out: Diagnostic[] = [];
    const hooks = checkentryHooks(ctx);
    if (o.mss === undefined && hooks) {
      const bad = hooks.filter((h) => !PMTU_HOOKS.includes(h));
      if (bad.length > 0) out.push(hookDiagnostic('TCPMSS target --clamp-mss-to-pmtu', bad, PMTU_HOOKS, undefined, 'TCPMSS'));
    }
    // ... and, except under nft_compat, the rule must test for SYN (find_syn_match: a tcp match
    // whose --tcp-flags comparison has SYN, not negated).
    if (ctx.backend === 'legacy' && ctx.matches !== undefined && !ctx.matches.some(isSynMatch)) {
      out.push(diagnostic('MATCH_NEEDS_PROTOCOL', 'TCPMSS: Only works on TCP SYN packets (the legacy back end wants a tcp match with --tcp-flags … SYN or --syn on the rule)', undefined, 'TCPMSS'));
    }
    return out;
  },
};
