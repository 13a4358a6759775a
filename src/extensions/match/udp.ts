/**
 * `-m udp` (`libxt_udp.c`, kernel `xt_tcpudp.c` `udp_mt`): source and destination port ranges.
 * Loaded implicitly by `-p udp --dport …`.
 *
 * @module
 */
import { IPPROTO } from '../../model/packet.js';
import type { Negatable } from '../../model/types.js';
import type { PortRange } from '../target-options.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { parsePortRange, unknownOption } from '../values.js';
import { lowerPorts, savePorts } from './tcp.js';

/** Options of `-m udp`; full ranges without `!` are dropped at parse, as iptables-save drops them. */
export interface UdpOptions {
  readonly sport?: Negatable<PortRange>;
  readonly dport?: Negatable<PortRange>;
}

function parse(occurrences: readonly OptionOccurrence[]): UdpOptions {
  const r: { -readonly [K in keyof UdpOptions]: UdpOptions[K] } = {};
  for (const o of occurrences) {
    if (o.name !== 'sport' && o.name !== 'dport') unknownOption('udp', o);
    // libxt_udp.c (1.8.9) has no min > max check, unlike tcp.
    const v = parsePortRange(o, 'udp', true);
    if (o.negated || v.min !== 0 || v.max !== 65535) r[o.name] = { negated: o.negated, value: v };
  }
  return r;
}

/** `-m udp`. */
export const udp: MatchExtension<UdpOptions> = {
  kind: 'match',
  name: 'udp',
  family: 'both',
  options: [
    { name: 'sport', aliases: ['source-port'], arg: true, negatable: true },
    { name: 'dport', aliases: ['destination-port'], arg: true, negatable: true },
  ],
  placement: { protocols: ['udp'] },
  parse,
  save(o) {
    const out: string[] = [];
    savePorts('sport', o.sport, out);
    savePorts('dport', o.dport, out);
    return out.join(' ');
  },
  lower(o) {
    const ports = lowerPorts(o);
    return (p) => p.proto === IPPROTO.udp && !p.fragment && ports(p);
  },
};
