/**
 * `-m connmark` (`libxt_connmark.c`, kernel `xt_connmark.c` `connmark_mt`): the connection's
 * mark, `(ct->mark & mask) == value`. A packet without a conntrack entry never matches, not even
 * with `!` (the kernel returns false before applying the inversion).
 *
 * @module
 */
import { CT_STATE } from '../../../model/packet.js';
import type { MatchExtension } from '../types.js';
import { parseMarkMatch, saveMarkMatch, type MarkMatchOptions } from './mark.js';

/** `-m connmark`. */
export const connmark: MatchExtension<MarkMatchOptions> = {
  kind: 'match',
  name: 'connmark',
  family: 'both',
  options: [{ name: 'mark', arg: true, negatable: true }],
  parse: parseMarkMatch('connmark'),
  save: saveMarkMatch,
  lower(o) {
    const { value, mask, negated } = o;
    const noEntry = CT_STATE.INVALID | CT_STATE.UNTRACKED;
    return (p) => {
      const ct = p.ct;
      if (ct === null || (ct.state & noEntry) !== 0) return false;
      return (((ct.mark & mask) >>> 0) === value) !== negated;
    };
  },
};
