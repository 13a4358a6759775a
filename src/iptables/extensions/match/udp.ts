/**
 * `-m udp` (`libxt_udp.c`, kernel `xt_tcpudp.c` `udp_mt`): source and destination port ranges.
 * Loaded implicitly by `-p udp --dport …`.
 *
 * @module
 */
import { IPPROTO } from '../../../model/packet.js';
import type { Negatable } from '../../../model/types.js';
import type { PortRange } from '../target-options.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { parsePortRange, unknownOption } from '../values.js';
import { checkTcpUdp, lowerPorts, savePorts } from './tcp.js';

/** Options of `-m udp`; full ranges without `!` are dropped at parse, as iptables-save drops them. */
export interface UdpOptions {
  readonly sport?: Negatable<PortRange>;
  readonly dport?: Negatable<PortRange>;
}

/**
 * getaddrinfo's numeric service: strtoul (saturating at 2^64-1), refused when it reads back as
 * -1 in an int, else the low 16 bits.
 */
function wrapDecimalPorts(o: OptionOccurrence): OptionOccurrence {
  if (o.arg === undefined) return o;
  const parts = o.arg.split(':');
  if (parts.length > 2) return o;
  const mapped = parts.map((part) => {
    if (!/^\d+$/.test(part)) return part;
    let v = BigInt(part);
    if (v > 0xffffffffffffffffn) v = 0xffffffffffffffffn;
    if ((v & 0xffffffffn) === 0xffffffffn) return part;
    return String(Number(v & 0xffffn));
  });
  return { ...o, arg: mapped.join(':') };
}

function parse(occurrences: readonly OptionOccurrence[]): UdpOptions {
  const r: { -readonly [K in keyof UdpOptions]: UdpOptions[K] } = {};
  for (const o of occurrences) {
    if (o.name !== 'sport' && o.name !== 'dport') unknownOption('udp', o);
    // libxt_udp.c (1.8.9) has no min > max check, unlike tcp, and resolves numbers through
    // getaddrinfo, which truncates a decimal port to 16 bits (70000 loads as 4464).
    const v = parsePortRange(wrapDecimalPorts(o), 'udp', true);
    if (o.negated || v.min !== 0 || v.max !== 65535) r[o.name] = { negated: o.negated, value: v };
  }
  return r;
}

/** Whether iptables-nft writes this udp match as payload tests: unless it tests nothing. */
export function udpAsPayload(o: UdpOptions): boolean {
  return o.sport !== undefined || o.dport !== undefined;
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
  parse,
  // add_nft_udp: payload tests unless the match tests nothing.
  check(o, ctx) {
    return checkTcpUdp('udp', udpAsPayload(o), ctx);
  },
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
