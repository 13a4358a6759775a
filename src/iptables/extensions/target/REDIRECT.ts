/**
 * `-j REDIRECT` (`libxt_DNAT.c` in iptables 1.8.9, kernel `xt_REDIRECT.c`): destination NAT to
 * the machine itself (127.0.0.1 / ::1 from OUTPUT, the incoming interface's first address from
 * PREROUTING), optionally to `--to-ports p[-q]` (needs `-p tcp|udp|sctp|dccp`). nat table,
 * PREROUTING and OUTPUT only. `--to-port` works as a unique prefix of `--to-ports`.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { formatToPorts, parseToPorts } from '../nat-range.js';
import type { RedirectOptions } from '../target-options.js';
import type { TargetExtension } from '../types.js';
import { unknownOption } from '../values.js';

/** `-j REDIRECT`. */
export const REDIRECT: TargetExtension<RedirectOptions> = {
  kind: 'target',
  name: 'REDIRECT',
  family: 'both',
  terminal: true,
  options: [
    { name: 'to-ports', arg: true },
    { name: 'random', arg: false },
  ],
  placement: { tables: ['nat'], hooks: ['PREROUTING', 'OUTPUT'] },
  parse(occurrences, ctx) {
    const r: { -readonly [K in keyof RedirectOptions]: RedirectOptions[K] } = { random: false };
    for (const o of occurrences) {
      if (o.name === 'to-ports') {
        const p = parseToPorts(o, ctx, { services: true, base: true, min: 0, target: 'REDIRECT' });
        // DNAT_fcheck, used for REDIRECT revision 0.
        if (p.baseport !== undefined) fail('BAD_PORT', 'REDIRECT: shifted port ranges ("/base") are not supported', o.argSpan ?? o.span, o.arg);
        r.toPorts = p.ports;
      } else if (o.name === 'random') r.random = true;
      else unknownOption('REDIRECT', o);
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.toPorts) out.push(`--to-ports ${formatToPorts(o.toPorts)}`);
    if (o.random) out.push('--random');
    return out.join(' ');
  },
};
