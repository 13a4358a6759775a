/**
 * `-m pkttype` (`libxt_pkttype.c`, kernel `xt_pkttype.c`): the link-layer class of the packet
 * (`skb->pkt_type`): unicast (alias host), broadcast (bcast), multicast (mcast), otherhost.
 * Locally generated packets are classed by destination (multicast and broadcast addresses), as
 * the kernel does for them; the engine's arriving packets are unicast unless addressed to a
 * broadcast or multicast address.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { badValue, bang, requireOption, unknownOption } from '../values.js';

/** Options of `-m pkttype`. */
export interface PkttypeOptions {
  readonly negated: boolean;
  readonly type: 'unicast' | 'broadcast' | 'multicast' | 'otherhost';
}

const TYPES: readonly (readonly [string, PkttypeOptions['type']])[] = [
  ['unicast', 'unicast'], ['broadcast', 'broadcast'], ['multicast', 'multicast'], ['otherhost', 'otherhost'],
  ['bcast', 'broadcast'], ['mcast', 'multicast'], ['host', 'unicast'],
];

/** `-m pkttype`. */
export const pkttype: MatchExtension<PkttypeOptions> = {
  kind: 'match',
  name: 'pkttype',
  family: 'both',
  options: [{ name: 'pkt-type', arg: true, negatable: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'pkttype', 'pkt-type');
    let r: PkttypeOptions = { negated: false, type: 'unicast' };
    for (const o of occurrences) {
      if (o.name !== 'pkt-type') unknownOption('pkttype', o);
      const hit = TYPES.find(([n]) => n.toLowerCase() === (o.arg ?? '').toLowerCase());
      if (!hit) badValue(o, `pkttype: bad packet type "${o.arg}"`);
      r = { negated: o.negated, type: hit[1] };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--pkt-type ${o.type}`;
  },
  lower(o) {
    const { type, negated } = o;
    return (p) => ((p.pktType ?? 'unicast') === type) !== negated;
  },
};
