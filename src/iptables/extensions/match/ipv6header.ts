/**
 * `-m ipv6header` (`libip6t_ipv6header.c`, kernel `ip6t_ipv6header.c`): the packet's chain of
 * IPv6 headers contains exactly (or, with `--soft`, at least) the listed ones. iptables-save
 * prints them in a fixed order under their `/etc/protocols` names. The engine's packets carry no
 * extension headers: their chain is just the upper-layer protocol (`protocol`), or `none` for a
 * packet without one.
 *
 * @module
 */
import { etcProtocolName, etcProtocolNumber } from '../../../model/protocols.js';
import type { MatchExtension } from '../types.js';
import { argOf, badValue, requireOption, unknownOption } from '../values.js';

/** `chain_protos` of the module: names and numbers it knows besides `/etc/protocols`. */
const CHAIN_PROTOS: readonly (readonly [string, number])[] = [
  ['hop-by-hop', 0], ['protocol', 255], ['hop', 0], ['dst', 60], ['route', 43], ['frag', 44], ['auth', 51],
  ['esp', 50], ['none', 59], ['prot', 255], ['0', 0], ['60', 60], ['43', 43], ['44', 44], ['51', 51],
  ['50', 50], ['59', 59], ['255', 255],
];
/** `chain_flags`: protocol to mask bit, in print order. */
const FLAGS: readonly (readonly [number, number])[] = [
  [0, 128], [60, 64], [43, 32], [44, 16], [51, 8], [50, 4], [59, 2], [255, 1],
];

/** Options of `-m ipv6header`. */
export interface Ipv6headerOptions {
  readonly negated: boolean;
  readonly flags: number;
  readonly soft: boolean;
}

function protoName(num: number): string {
  if (num !== 0) {
    const n = etcProtocolName(num);
    if (n !== null) return n;
  }
  return CHAIN_PROTOS.find(([, v]) => v === num)![0];
}

/** `-m ipv6header`. */
export const ipv6header: MatchExtension<Ipv6headerOptions> = {
  kind: 'match',
  name: 'ipv6header',
  family: 6,
  options: [
    { name: 'header', arg: true, negatable: true },
    { name: 'soft', arg: false },
  ],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'ipv6header', 'header');
    let r: Ipv6headerOptions = { negated: false, flags: 0, soft: false };
    for (const o of occurrences) {
      if (o.name === 'header') {
        let flags = 0;
        for (const item of argOf(o).split(',').filter((x) => x !== '')) {
          const num = etcProtocolNumber(item) ?? CHAIN_PROTOS.find(([n]) => n === item)?.[1];
          if (num === undefined) badValue(o, `ipv6header: unknown header "${item}" specified`);
          const f = FLAGS.find(([p]) => p === num);
          if (!f) badValue(o, `ipv6header: unknown header "${num}" specified`);
          flags |= f[1];
        }
        if (flags === 0) badValue(o, 'ipv6header: cannot parse header names');
        r = { ...r, negated: o.negated, flags };
      } else if (o.name === 'soft') r = { ...r, soft: true };
      else unknownOption('ipv6header', o);
    }
    return r;
  },
  save(o) {
    const names = FLAGS.filter(([, f]) => (o.flags & f) !== 0).map(([p]) => protoName(p));
    return `${o.negated ? '! ' : ''}--header ${names.length > 0 ? names.join(',') : 'NONE'}${o.soft ? ' --soft' : ''}`;
  },
  lower(o) {
    // ipv6header_mt: the packet's chain here is one upper-layer header: "protocol" (bit 1), or
    // "none" (bit 2) when the next header is NEXTHDR_NONE.
    const { flags, soft, negated } = o;
    return (p) => {
      const present = p.proto === 59 ? 2 : 1;
      const hit = soft ? (present & flags) === flags : present === flags;
      return hit !== negated;
    };
  },
};
