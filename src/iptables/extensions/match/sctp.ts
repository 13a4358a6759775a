/**
 * `-m sctp` (`libxt_sctp.c`, kernel `xt_sctp.c`): SCTP source and destination ports. Unlike
 * tcp/udp, a given port option is always printed. `--chunk-types` is not supported.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { IPPROTO } from '../../../model/packet.js';
import type { Negatable } from '../../../model/types.js';
import type { PortRange } from '../target-options.js';
import type { MatchExtension } from '../types.js';
import { formatPortRange, parsePortRange, unknownOption } from '../values.js';

/** Options of `-m sctp`. */
export interface SctpOptions {
  readonly sport?: Negatable<PortRange>;
  readonly dport?: Negatable<PortRange>;
}

/** `-m sctp`. */
export const sctp: MatchExtension<SctpOptions> = {
  kind: 'match',
  name: 'sctp',
  family: 'both',
  options: [
    { name: 'sport', aliases: ['source-port'], arg: true, negatable: true },
    { name: 'dport', aliases: ['destination-port'], arg: true, negatable: true },
    { name: 'chunk-types', arg: true, negatable: true, extraArgs: 1 },
  ],
  placement: { protocols: ['sctp'] },
  parse(occurrences) {
    const r: { -readonly [K in keyof SctpOptions]: SctpOptions[K] } = {};
    for (const o of occurrences) {
      if (o.name === 'sport' || o.name === 'dport') r[o.name] = { negated: o.negated, value: parsePortRange(o, 'sctp') };
      else if (o.name === 'chunk-types') fail('UNSUPPORTED', 'sctp: --chunk-types is not supported', o.span, o.written);
      else unknownOption('sctp', o);
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.sport) out.push(`${o.sport.negated ? '! ' : ''}--sport ${formatPortRange(o.sport.value)}`);
    if (o.dport) out.push(`${o.dport.negated ? '! ' : ''}--dport ${formatPortRange(o.dport.value)}`);
    return out.join(' ');
  },
  lower(o) {
    const sMin = o.sport?.value.min ?? 0;
    const sMax = o.sport?.value.max ?? 65535;
    const sInv = o.sport?.negated ?? false;
    const dMin = o.dport?.value.min ?? 0;
    const dMax = o.dport?.value.max ?? 65535;
    const dInv = o.dport?.negated ?? false;
    return (p) =>
      p.proto === IPPROTO.sctp && !p.fragment &&
      (p.sport >= sMin && p.sport <= sMax) !== sInv && (p.dport >= dMin && p.dport <= dMax) !== dInv;
  },
};
