/**
 * `-m icmp6` (`libip6t_icmp6.c`, kernel `ip6_tables.c` `icmp6_match`), IPv6 only:
 * `--icmpv6-type` by name or `type[/code]`; iptables-save prints numbers. `-m icmpv6` and
 * `-m ipv6-icmp` load it too (`xtables_find_match`).
 *
 * @module
 */
import { IPPROTO } from '../../../model/packet.js';
import type { Negatable } from '../../../model/types.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { missing, unknownOption } from '../values.js';
import { formatIcmpType, parseIcmpType, type IcmpType } from './icmp.js';

/** Options of `-m icmp6`. */
export interface Icmp6Options {
  readonly icmpv6Type: Negatable<IcmpType>;
}

/** `icmpv6_codes` of libip6t_icmp6.c, in its order. */
export const ICMPV6_NAMES: readonly (readonly [string, number, number, number])[] = [
  ['destination-unreachable', 1, 0, 0xff],
  ['no-route', 1, 0, 0], ['communication-prohibited', 1, 1, 1], ['beyond-scope', 1, 2, 2],
  ['address-unreachable', 1, 3, 3], ['port-unreachable', 1, 4, 4], ['failed-policy', 1, 5, 5],
  ['reject-route', 1, 6, 6],
  ['packet-too-big', 2, 0, 0xff],
  ['time-exceeded', 3, 0, 0xff], ['ttl-exceeded', 3, 0, 0xff],
  ['ttl-zero-during-transit', 3, 0, 0], ['ttl-zero-during-reassembly', 3, 1, 1],
  ['parameter-problem', 4, 0, 0xff], ['bad-header', 4, 0, 0], ['unknown-header-type', 4, 1, 1],
  ['unknown-option', 4, 2, 2],
  ['echo-request', 128, 0, 0xff], ['ping', 128, 0, 0xff],
  ['echo-reply', 129, 0, 0xff], ['pong', 129, 0, 0xff],
  ['mld-listener-query', 130, 0, 0xff], ['mld-listener-report', 131, 0, 0xff],
  ['mld-listener-done', 132, 0, 0xff], ['mld-listener-reduction', 132, 0, 0xff],
  ['router-solicitation', 133, 0, 0xff], ['router-advertisement', 134, 0, 0xff],
  ['neighbour-solicitation', 135, 0, 0xff], ['neighbor-solicitation', 135, 0, 0xff],
  ['neighbour-advertisement', 136, 0, 0xff], ['neighbor-advertisement', 136, 0, 0xff],
  ['redirect', 137, 0, 0xff],
];

function parse(occurrences: readonly OptionOccurrence[], ctx: Parameters<MatchExtension['parse']>[1]): Icmp6Options {
  let icmpv6Type: Negatable<IcmpType> | undefined;
  for (const o of occurrences) {
    if (o.name !== 'icmpv6-type') unknownOption('icmp6', o);
    icmpv6Type = { negated: o.negated, value: parseIcmpType(o, ICMPV6_NAMES, 'ICMPv6') };
  }
  if (!icmpv6Type) missing(ctx, 'icmp6', 'option "--icmpv6-type" must be specified');
  return { icmpv6Type };
}

/** `-m icmp6`. */
export const icmp6: MatchExtension<Icmp6Options> = {
  kind: 'match',
  name: 'icmp6',
  aliases: ['icmpv6', 'ipv6-icmp'],
  family: 6,
  options: [{ name: 'icmpv6-type', arg: true, negatable: true }],
  placement: { protocols: ['ipv6-icmp'] },
  parse,
  save(o) {
    return `${o.icmpv6Type.negated ? '! ' : ''}--icmpv6-type ${formatIcmpType(o.icmpv6Type.value)}`;
  },
  lower(o) {
    const { type, codeMin, codeMax } = o.icmpv6Type.value;
    const inv = o.icmpv6Type.negated;
    // icmp6_type_code_match: (type == test_type && code in range) ^ invert
    return (p) => {
      if (p.proto !== IPPROTO.icmpv6 || p.fragment) return false;
      return (p.icmpType === type && p.icmpCode >= codeMin && p.icmpCode <= codeMax) !== inv;
    };
  },
};
