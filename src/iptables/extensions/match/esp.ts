/**
 * `-m esp` (`libxt_esp.c`, kernel `xt_esp.c`): the ESP header's security parameter index within
 * `--espspi min[:max]` (`!` negates). The full range is not printed. The engine makes no IPsec
 * packets, so on its packets the protocol test already fails.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { spiLower, spiParse, spiSave, type SpiOptions } from './spi.js';

/** `-m esp`. */
export const esp: MatchExtension<SpiOptions> = {
  kind: 'match',
  name: 'esp',
  family: 'both',
  options: [{ name: 'espspi', arg: true, negatable: true }],
  placement: { protocols: ['esp'] },
  parse: spiParse('esp', 'espspi'),
  save: (o) => spiSave('espspi', o).join(' '),
  lower: spiLower(50),
};
