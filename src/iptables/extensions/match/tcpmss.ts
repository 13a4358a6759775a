/**
 * `-m tcpmss` (`libxt_tcpmss.c`, kernel `xt_tcpmss.c`): the MSS option of a TCP SYN within
 * `min[:max]` (needs `-p tcp`). Packets without the option do not match (nor inverted). The
 * engine's SYNs carry the MSS of a 1500-byte MTU (1460, IPv6 1440).
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { IPPROTO, TCP_FLAGS } from '../../../model/packet.js';
import type { MatchExtension } from '../types.js';
import { bang, formatRange, parseUintRange, requireOption, unknownOption } from '../values.js';

/** Options of `-m tcpmss`. */
export interface TcpmssOptions {
  readonly negated: boolean;
  readonly min: number;
  readonly max: number;
}

/** `-m tcpmss`. */
export const tcpmss: MatchExtension<TcpmssOptions> = {
  kind: 'match',
  name: 'tcpmss',
  family: 'both',
  options: [{ name: 'mss', arg: true, negatable: true }],
  placement: { protocols: ['tcp'] },
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'tcpmss', 'mss');
    let r: TcpmssOptions = { negated: false, min: 0, max: 0 };
    for (const o of occurrences) {
      if (o.name !== 'mss') unknownOption('tcpmss', o);
      const { lo, hi } = parseUintRange(o, 'tcpmss', 0xffff);
      if (hi < lo) fail('BAD_VALUE', 'tcpmss: invalid range given', o.argSpan, o.arg);
      r = { negated: o.negated, min: lo, max: hi };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--mss ${formatRange(o.min, o.max)}`;
  },
  lower(o, family) {
    const mss = family === 4 ? 1460 : 1440;
    const { min, max, negated } = o;
    return (p) => p.proto === IPPROTO.tcp && (p.tcpFlags & TCP_FLAGS.SYN) !== 0 && ((mss >= min && mss <= max) !== negated);
  },
};
