/**
 * `-j TCPMSS` (`libxt_TCPMSS.c`, kernel `xt_TCPMSS.c`): rewrites the MSS option of TCP SYNs
 * (`--set-mss n` or `--clamp-mss-to-pmtu`; given both, the last one counts). Needs `-p tcp`; clamping to the path MTU
 * is allowed from FORWARD, OUTPUT and POSTROUTING only. (iptables-legacy also demands a SYN match
 * on the rule; the nf_tables back end does not.) The simulator does not model segment sizes: the
 * target continues.
 *
 * @module
 */
import type { HookName } from '../../../model/types.js';
import { checkentryHooks, hookDiagnostic } from '../placement.js';
import type { TargetExtension } from '../types.js';
import { missing, parseUint32, unknownOption } from '../values.js';

/** Options of `-j TCPMSS`: a fixed MSS, or clamping (`mss` absent). */
export interface TcpmssTargetOptions {
  readonly mss?: number;
}

const PMTU_HOOKS: readonly HookName[] = ['FORWARD', 'OUTPUT', 'POSTROUTING'];

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
    const hooks = checkentryHooks(ctx);
    if (o.mss !== undefined || !hooks) return [];
    const bad = hooks.filter((h) => !PMTU_HOOKS.includes(h));
    return bad.length > 0 ? [hookDiagnostic('TCPMSS target --clamp-mss-to-pmtu', bad, PMTU_HOOKS, undefined, 'TCPMSS')] : [];
  },
};
