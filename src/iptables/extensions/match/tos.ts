/**
 * `-m tos` (`libxt_tos.c` revision 1, kernel `xt_dscp.c` `tos_mt`): `(tos & mask) == value`
 * on the IPv4 TOS byte or the IPv6 traffic class. A TOS name takes the mask 0x3f. iptables-save
 * prints `--tos 0xVV/0xMM`. The engine's packets carry TOS 0.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { bang, hex2, parseTosMask, requireOption, unknownOption } from '../values.js';

/** Options of `-m tos`. */
export interface TosMatchOptions {
  readonly negated: boolean;
  readonly value: number;
  readonly mask: number;
}

/** `-m tos`. */
export const tos: MatchExtension<TosMatchOptions> = {
  kind: 'match',
  name: 'tos',
  family: 'both',
  options: [{ name: 'tos', arg: true, negatable: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'tos', 'tos');
    let r: TosMatchOptions = { negated: false, value: 0, mask: 0 };
    for (const o of occurrences) {
      if (o.name !== 'tos') unknownOption('tos', o);
      r = { negated: o.negated, ...parseTosMask(o, 'tos', 0x3f) };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--tos ${hex2(o.value)}/${hex2(o.mask)}`;
  },
  lower(o) {
    const { value, mask, negated } = o;
    return (p) => (((p.tos ?? 0) & mask) === value) !== negated;
  },
};
