/**
 * `-m realm` (`libipt_realm.c`, kernel `xt_realm.c`): the route's realm (`dst->tclassid`),
 * `(realm & mask) == id`. iptables-save prints `0xV` or `0xV/0xM`. The engine's routes have
 * realm 0.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { bang, formatValMask, parseValMask, requireOption, unknownOption } from '../values.js';

/** Options of `-m realm`. */
export interface RealmOptions {
  readonly negated: boolean;
  readonly id: number;
  readonly mask: number;
}

/** `-m realm`. */
export const realm: MatchExtension<RealmOptions> = {
  kind: 'match',
  name: 'realm',
  family: 4,
  options: [{ name: 'realm', arg: true, negatable: true }],
  placement: { hooks: ['POSTROUTING', 'FORWARD', 'OUTPUT', 'INPUT'] },
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'realm', 'realm');
    let r: RealmOptions = { negated: false, id: 0, mask: 0 };
    for (const o of occurrences) {
      if (o.name !== 'realm') unknownOption('realm', o);
      const { value, mask } = parseValMask(o, 'realm');
      r = { negated: o.negated, id: value, mask };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--realm ${formatValMask(o.id, o.mask)}`;
  },
  lower(o) {
    const hit = (0 & o.mask) === o.id;
    const v = hit !== o.negated;
    return () => v;
  },
};
