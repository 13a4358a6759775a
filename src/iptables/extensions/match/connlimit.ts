/**
 * `-m connlimit` (`libxt_connlimit.c` revision 1, kernel `xt_connlimit.c`): the number of
 * tracked connections from the packet's source (or to its destination, `--connlimit-daddr`)
 * network (`--connlimit-mask`, default /32 or /128) is above (`--connlimit-above n`) or at most
 * (`--connlimit-upto n`) the limit. iptables-save always prints the mask and the address option.
 *
 * The engine counts the connections of its conntrack table when it supplies them
 * ({@link PacketView.connCount}); without them it counts none, an assumption the trace shows.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { argOf, badValue, exclusive, missing, parseUint32, strtoul, unknownOption } from '../values.js';

/** Options of `-m connlimit`. */
export interface ConnlimitOptions {
  /** True for "at most" (`--connlimit-upto`, or `! --connlimit-above`). */
  readonly upto: boolean;
  readonly limit: number;
  readonly maskLength: number;
  readonly daddr: boolean;
}

/** `-m connlimit`. */
export const connlimit: MatchExtension<ConnlimitOptions> = {
  kind: 'match',
  name: 'connlimit',
  family: 'both',
  options: [
    { name: 'connlimit-upto', arg: true, negatable: true },
    { name: 'connlimit-above', arg: true, negatable: true },
    { name: 'connlimit-mask', arg: true },
    { name: 'connlimit-saddr', arg: false },
    { name: 'connlimit-daddr', arg: false },
  ],
  parse(occurrences, ctx) {
    exclusive(occurrences, ['connlimit-upto', 'connlimit-above']);
    exclusive(occurrences, ['connlimit-saddr', 'connlimit-daddr']);
    const full = ctx.family === 4 ? 32 : 128;
    let upto: boolean | undefined;
    let limit = 0;
    let maskLength = full;
    let daddr = false;
    for (const o of occurrences) {
      switch (o.name) {
        case 'connlimit-upto':
          limit = parseUint32(o, 'connlimit');
          upto = !o.negated;
          break;
        case 'connlimit-above':
          limit = parseUint32(o, 'connlimit');
          upto = o.negated;
          break;
        case 'connlimit-mask': {
          // Observed with iptables 1.8.9 (nf_tables): IPv4 takes any unsigned 32-bit number and
          // keeps at most 32 bits (`--connlimit-mask 129` saves as 32); IPv6 refuses past 128.
          const n = strtoul(argOf(o), 0, ctx.family === 4 ? 0xffffffff : 128);
          if (n === null) badValue(o, `connlimit: bad prefix length "${o.arg}" (must be 0-${full})`);
          maskLength = Math.min(n, full);
          break;
        }
        case 'connlimit-saddr':
          daddr = false;
          break;
        case 'connlimit-daddr':
          daddr = true;
          break;
        default:
          unknownOption('connlimit', o);
      }
    }
    if (upto === undefined) missing(ctx, 'connlimit', 'you must specify "--connlimit-above" or "--connlimit-upto"');
    return { upto, limit, maskLength, daddr };
  },
  save(o) {
    return `${o.upto ? '--connlimit-upto' : '--connlimit-above'} ${o.limit} --connlimit-mask ${o.maskLength} ${o.daddr ? '--connlimit-daddr' : '--connlimit-saddr'}`;
  },
  lower(o) {
    const { upto, limit, maskLength, daddr } = o;
    return (p) => {
      const n = p.connCount ? p.connCount(daddr ? p.dst : p.src, maskLength, daddr) : 0;
      return upto ? n <= limit : n > limit;
    };
  },
};
