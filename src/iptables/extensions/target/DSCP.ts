/**
 * `-j DSCP` (`libxt_DSCP.c`, kernel `xt_DSCP.c`): sets the DSCP (`--set-dscp 0-63` or
 * `--set-dscp-class NAME`). mangle table. iptables-save prints `--set-dscp 0xNN`. The engine's
 * packets carry the new DSCP in their TOS byte.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { dscpClass } from '../match/dscp.js';
import { exclusive, hex2, missing, parseUint32, unknownOption } from '../values.js';

/** Options of `-j DSCP`. */
export interface DscpTargetOptions {
  readonly dscp: number;
}

/** `-j DSCP`. */
export const DSCP: TargetExtension<DscpTargetOptions> = {
  kind: 'target',
  name: 'DSCP',
  family: 'both',
  terminal: false,
  options: [
    { name: 'set-dscp', arg: true },
    { name: 'set-dscp-class', arg: true },
  ],
  placement: { tables: ['mangle'] },
  parse(occurrences, ctx) {
    exclusive(occurrences, ['set-dscp', 'set-dscp-class']);
    let dscp: number | undefined;
    for (const o of occurrences) {
      if (o.name === 'set-dscp') dscp = parseUint32(o, 'DSCP', 0, 63);
      else if (o.name === 'set-dscp-class') dscp = dscpClass(o, 'DSCP');
      else unknownOption('DSCP', o);
    }
    if (dscp === undefined) missing(ctx, 'DSCP', 'DSCP target: parameter --set-dscp is required');
    return { dscp };
  },
  save(o) {
    return `--set-dscp ${hex2(o.dscp)}`;
  },
};
