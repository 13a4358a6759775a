/**
 * `-m ipcomp` (`libxt_ipcomp.c`, kernel `xt_ipcomp.c`): the IPComp header's compression parameter
 * index within `--ipcompspi min[:max]`, and `--compres`. The engine makes no IPComp packets, so on
 * its packets the protocol test already fails.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { spiLower, spiParse, spiSave, type SpiOptions } from './spi.js';

/** `-m ipcomp`. */
export const ipcomp: MatchExtension<SpiOptions> = {
  kind: 'match',
  name: 'ipcomp',
  family: 'both',
  options: [
    { name: 'ipcompspi', arg: true, negatable: true },
    { name: 'compres', arg: false },
  ],
  placement: { protocols: ['ipcomp'] },
  // libxt_ipcomp has no init function: without --ipcompspi the range is 0:0.
  parse: spiParse('ipcomp', 'ipcompspi', undefined, 'compres', 0),
  save(o) {
    const out = spiSave('ipcompspi', o);
    if (o.res) out.push('--compres');
    return out.join(' ');
  },
  lower: spiLower(108),
};
