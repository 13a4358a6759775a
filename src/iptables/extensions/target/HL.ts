/**
 * `-j HL` (`libip6t_HL.c`, kernel `xt_HL.c` `hl_tg6`): set (`--hl-set`), decrement (`--hl-dec`, at
 * least 1) or increment (`--hl-inc`) the IPv6 hop limit, saturating at 0 and 255. mangle table,
 * ip6tables only. The engine's packets carry the new value (the `hl` match reads it).
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { build, type TtlTargetOptions } from './TTL.js';

/** `-j HL` (IPv6). */
export const HL: TargetExtension<TtlTargetOptions> = {
  kind: 'target',
  name: 'HL',
  family: 6,
  terminal: false,
  options: [
    { name: 'hl-set', arg: true },
    { name: 'hl-dec', arg: true },
    { name: 'hl-inc', arg: true },
  ],
  placement: { tables: ['mangle'] },
  parse: build('hl', 'HL'),
  save: (o) => `--hl-${o.mode} ${o.value}`,
};
