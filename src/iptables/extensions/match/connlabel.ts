/**
 * `-m connlabel` (`libxt_connlabel.c`, kernel `xt_connlabel.c`): the connection carries label
 * bit `--label N` (0-127, or a name from `/etc/xtables/connlabel.conf`, which the engine has
 * not); `--set` sets it. iptables-save prints the label quoted. The engine's connections carry
 * no labels: only `! --label` holds, and only on a tracked packet.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { argOf, badValue, requireOption, strtoul, unknownOption } from '../values.js';

/** Options of `-m connlabel`. */
export interface ConnlabelOptions {
  readonly negated: boolean;
  readonly bit: number;
  readonly set: boolean;
}

/** `-m connlabel`. */
export const connlabel: MatchExtension<ConnlabelOptions> = {
  kind: 'match',
  name: 'connlabel',
  family: 'both',
  options: [
    { name: 'label', arg: true, negatable: true },
    { name: 'set', arg: false },
  ],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'connlabel', 'label');
    let r: ConnlabelOptions = { negated: false, bit: 0, set: false };
    for (const o of occurrences) {
      if (o.name === 'label') {
        const bit = strtoul(argOf(o), 0, 127);
        if (bit === null) badValue(o, `connlabel: label "${o.arg}" not found or invalid value`);
        r = { ...r, negated: o.negated, bit };
      } else if (o.name === 'set') r = { ...r, set: true };
      else unknownOption('connlabel', o);
    }
    return r;
  },
  save(o) {
    return `${o.negated ? '! ' : ''}--label "${o.bit}"${o.set ? ' --set' : ''}`;
  },
  lower(o) {
    const { negated, set } = o;
    return (p) => p.ct !== null && (set ? !negated : negated);
  },
};
