/**
 * `-m rpfilter` (`libxt_rpfilter.c`, kernel `ipt_rpfilter.c`/`ip6t_rpfilter.c`): reverse-path
 * filtering, only in the raw and mangle tables at PREROUTING. Options `--loose`, `--validmark`,
 * `--accept-local`, `--invert`, printed in that order.
 *
 * Not evaluated faithfully: the reverse route lookup is not modelled; lower() assumes every
 * source passes it (so the match holds, or with `--invert` does not).
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { unknownOption } from '../values.js';

/** Options of `-m rpfilter`. */
export interface RpfilterOptions {
  readonly loose: boolean;
  readonly validmark: boolean;
  readonly acceptLocal: boolean;
  readonly invert: boolean;
}

/** `-m rpfilter`. */
export const rpfilter: MatchExtension<RpfilterOptions> = {
  kind: 'match',
  name: 'rpfilter',
  family: 'both',
  options: [
    { name: 'loose', arg: false },
    { name: 'validmark', arg: false },
    { name: 'accept-local', arg: false },
    { name: 'invert', arg: false },
  ],
  placement: { tables: ['raw', 'mangle'], hooks: ['PREROUTING'] },
  parse(occurrences) {
    const r = { loose: false, validmark: false, acceptLocal: false, invert: false };
    for (const o of occurrences) {
      if (o.name === 'loose') r.loose = true;
      else if (o.name === 'validmark') r.validmark = true;
      else if (o.name === 'accept-local') r.acceptLocal = true;
      else if (o.name === 'invert') r.invert = true;
      else unknownOption('rpfilter', o);
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.loose) out.push('--loose');
    if (o.validmark) out.push('--validmark');
    if (o.acceptLocal) out.push('--accept-local');
    if (o.invert) out.push('--invert');
    return out.join(' ');
  },
  lower(o) {
    const result = !o.invert;
    return () => result;
  },
  evaluates: 'assumed',
  assumption(o) {
    return `the reverse-path route lookup is not modelled: every source is taken to pass it${o.invert ? ' (so --invert never matches)' : ''}`;
  },
};
