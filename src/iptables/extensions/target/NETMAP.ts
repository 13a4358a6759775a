/**
 * `-j NETMAP` (`libipt_NETMAP.c`/`libip6t_NETMAP.c`, kernel `xt_NETMAP.c`): maps a whole network
 * onto `--to ADDR/MASK`, keeping the host part: the destination in PREROUTING and OUTPUT, the
 * source in POSTROUTING and INPUT. nat table. iptables-save prints the network (host bits
 * cleared) with its prefix length.
 *
 * @module
 */
import { formatAddress, maskLength } from '../../../model/address.js';
import type { TargetExtension } from '../types.js';
import { parseHostMask, requireOption, unknownOption } from '../values.js';

/** Options of `-j NETMAP`: the network (host bits cleared) and its mask, as 32-bit words. */
export interface NetmapOptions {
  readonly addr: readonly number[];
  readonly mask: readonly number[];
}

/** `-j NETMAP`. */
export const NETMAP: TargetExtension<NetmapOptions> = {
  kind: 'target',
  name: 'NETMAP',
  family: 'both',
  terminal: true,
  options: [{ name: 'to', arg: true }],
  placement: { tables: ['nat'], hooks: ['PREROUTING', 'POSTROUTING', 'OUTPUT', 'INPUT'] },
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'NETMAP', 'to');
    let r: NetmapOptions = { addr: [], mask: [] };
    for (const o of occurrences) {
      if (o.name !== 'to') unknownOption('NETMAP', o);
      const { addr, mask } = parseHostMask(o, 'NETMAP', ctx.family);
      r = { addr: addr.map((w, i) => (w & mask[i]!) >>> 0), mask };
    }
    return r;
  },
  save(o, family) {
    const len = maskLength(o.mask);
    return `--to ${formatAddress(o.addr, family)}/${len >= 0 ? len : formatAddress(o.mask, family)}`;
  },
};
