/**
 * `-m length` (`libxt_length.c`, kernel `xt_length.c`): the packet's length (IPv4 total length;
 * IPv6 payload length plus the 40-byte header) within `min[:max]`. iptables-save prints `a` or
 * `a:b`.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { bang, formatRange, parseUintRange, requireOption, unknownOption } from '../values.js';

/** Options of `-m length`. */
export interface LengthOptions {
  readonly negated: boolean;
  readonly min: number;
  readonly max: number;
}

/** `-m length`. */
export const length: MatchExtension<LengthOptions> = {
  kind: 'match',
  name: 'length',
  family: 'both',
  options: [{ name: 'length', arg: true, negatable: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'length', 'length');
    let r: LengthOptions = { negated: false, min: 0, max: 0 };
    for (const o of occurrences) {
      if (o.name !== 'length') unknownOption('length', o);
      const { lo, hi } = parseUintRange(o, 'length', 0xffff);
      r = { negated: o.negated, min: lo, max: hi };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--length ${formatRange(o.min, o.max)}`;
  },
  lower(o) {
    const { min, max, negated } = o;
    return (p) => (p.length >= min && p.length <= max) !== negated;
  },
};
