/**
 * `-j TOS` (`libxt_TOS.c` revision 1, kernel `xt_DSCP.c` `tos_tg`): `tos = (tos & ~mask) ^ value`
 * on the IPv4 TOS byte or IPv6 traffic class. `--set-tos v[/m]` (a TOS name takes mask 0x3f),
 * `--and-tos`, `--or-tos`, `--xor-tos`; all are saved as `--set-tos 0xVV/0xMM`. mangle table.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { exclusive, hex2, missing, parseTosMask, parseUint32, unknownOption } from '../values.js';

/** Options of `-j TOS`. */
export interface TosTargetOptions {
  readonly value: number;
  readonly mask: number;
}

/** `-j TOS`. */
export const TOS: TargetExtension<TosTargetOptions> = {
  kind: 'target',
  name: 'TOS',
  family: 'both',
  terminal: false,
  options: [
    { name: 'set-tos', arg: true },
    { name: 'and-tos', arg: true },
    { name: 'or-tos', arg: true },
    { name: 'xor-tos', arg: true },
  ],
  placement: { tables: ['mangle'] },
  parse(occurrences, ctx) {
    exclusive(occurrences, ['set-tos', 'and-tos', 'or-tos', 'xor-tos']);
    let r: TosTargetOptions | undefined;
    for (const o of occurrences) {
      switch (o.name) {
        case 'set-tos': r = parseTosMask(o, 'TOS', 0x3f); break;
        case 'and-tos': r = { value: 0, mask: ~parseUint32(o, 'TOS', 0, 255) & 0xff }; break;
        case 'or-tos': { const v = parseUint32(o, 'TOS', 0, 255); r = { value: v, mask: v }; break; }
        case 'xor-tos': r = { value: parseUint32(o, 'TOS', 0, 255), mask: 0 }; break;
        default: unknownOption('TOS', o);
      }
    }
    if (!r) missing(ctx, 'TOS', 'TOS: an action is required');
    return r;
  },
  save(o) {
    return `--set-tos ${hex2(o.value)}/${hex2(o.mask)}`;
  },
};
