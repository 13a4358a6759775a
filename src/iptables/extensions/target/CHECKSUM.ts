/**
 * `-j CHECKSUM` (`libxt_CHECKSUM.c`, kernel `xt_CHECKSUM.c`): fills in the checksum of a packet
 * whose checksum was left to hardware (libvirt and Docker use it for DHCP replies to guests).
 * mangle table only; `--checksum-fill` is required. The simulator does not model checksums: the
 * target changes nothing and traversal continues.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { requireOption, unknownOption } from '../values.js';

/** Options of `-j CHECKSUM`. */
export interface ChecksumOptions {
  readonly fill: true;
}

/** `-j CHECKSUM`. */
export const CHECKSUM: TargetExtension<ChecksumOptions> = {
  kind: 'target',
  name: 'CHECKSUM',
  family: 'both',
  terminal: false,
  options: [{ name: 'checksum-fill', arg: false }],
  placement: { tables: ['mangle'] },
  parse(occurrences, ctx) {
    for (const o of occurrences) if (o.name !== 'checksum-fill') unknownOption('CHECKSUM', o);
    requireOption(ctx, occurrences, 'CHECKSUM', 'checksum-fill');
    return { fill: true };
  },
  save() {
    return '--checksum-fill';
  },
};
