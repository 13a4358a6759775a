/**
 * `-m helper` (`libxt_helper.c`, kernel `xt_helper.c`): the connection (or its master) uses the
 * conntrack helper `--helper NAME` (`ftp`, `sip-5060`…). The engine runs no helpers, so the match
 * holds only for `! --helper` (and never for a connection without conntrack): an assumption the
 * trace shows.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { argOf, bang, requireOption, saveString, unknownOption } from '../values.js';

/** Options of `-m helper`. */
export interface HelperOptions {
  readonly negated: boolean;
  readonly name: string;
}

/** `-m helper`. */
export const helper: MatchExtension<HelperOptions> = {
  kind: 'match',
  name: 'helper',
  family: 'both',
  options: [{ name: 'helper', arg: true, negatable: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'helper', 'helper');
    let r: HelperOptions = { negated: false, name: '' };
    for (const o of occurrences) {
      if (o.name !== 'helper') unknownOption('helper', o);
      r = { negated: o.negated, name: argOf(o).slice(0, 29) };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--helper ${saveString(o.name)}`;
  },
  lower(o) {
    const { negated } = o;
    return (p) => p.ct !== null && negated;
  },
  evaluates: 'assumed',
  assumption(o) {
    return `conntrack helpers are not run: no connection has helper "${o.name}"`;
  },
};
