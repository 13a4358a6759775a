/**
 * `-m ah` (`libipt_ah.c`, `libip6t_ah.c`, kernel `ipt_ah.c`, `ip6t_ah.c`): the AH header's security
 * parameter index within `--ahspi min[:max]`; ip6tables also `--ahlen` and `--ahres`. iptables
 * needs `-p ah`. The engine makes no IPsec packets, so on its packets the protocol test fails.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import type { MatchExtension } from '../types.js';
import { protocolIs } from '../values.js';
import { spiLower, spiParse, spiSave, type SpiOptions } from './spi.js';

/** `-m ah` (IPv4 and IPv6; `--ahlen` and `--ahres` are IPv6 only). */
export const ah: MatchExtension<SpiOptions> = {
  kind: 'match',
  name: 'ah',
  family: 'both',
  options: [
    { name: 'ahspi', arg: true, negatable: true },
    { name: 'ahlen', arg: true, negatable: true, family: 6 },
    { name: 'ahres', arg: false, family: 6 },
  ],
  check(_o, ctx) {
    // ipt_ah has `.proto = IPPROTO_AH`; ip6t_ah walks the extension headers instead.
    if (ctx.family === 4 && !protocolIs(ctx.protocol, [51])) return [diagnostic('MATCH_NEEDS_PROTOCOL', 'ah match needs -p ah', undefined, 'ah')];
    return [];
  },
  parse: spiParse('ah', 'ahspi', 'ahlen', 'ahres'),
  save(o) {
    const out = spiSave('ahspi', o);
    if (o.hdrlen && (o.hdrlen.value !== 0 || o.hdrlen.negated)) out.push(`${o.hdrlen.negated ? '! ' : ''}--ahlen ${o.hdrlen.value}`);
    if (o.res) out.push('--ahres');
    return out.join(' ');
  },
  lower: spiLower(51),
};
