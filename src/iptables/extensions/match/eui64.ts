/**
 * `-m eui64` (`libip6t_eui64.c`, kernel `ip6t_eui64.c`): the IPv6 source address's interface
 * identifier is the EUI-64 made from the packet's source MAC address. Allowed in PREROUTING,
 * INPUT and FORWARD. The engine does not model link-layer addresses: the match is taken not to
 * hold — an assumption the trace shows.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { unknownOption } from '../values.js';

/** `-m eui64` has no options. */
export type Eui64Options = Record<string, never>;

/** `-m eui64`. */
export const eui64: MatchExtension<Eui64Options> = {
  kind: 'match',
  name: 'eui64',
  family: 6,
  options: [],
  placement: { hooks: ['PREROUTING', 'INPUT', 'FORWARD'] },
  parse(occurrences) {
    for (const o of occurrences) unknownOption('eui64', o);
    return {};
  },
  save() {
    return '';
  },
  lower() {
    return () => false;
  },
  evaluates: 'assumed',
  assumption() {
    return 'link-layer addresses are not modelled: the source address is taken not to be the EUI-64 of the source MAC';
  },
};
