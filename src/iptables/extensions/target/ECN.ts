/**
 * `-j ECN` (`libipt_ECN.c`, kernel `ipt_ECN.c`): sets or clears the TCP ECE/CWR flags
 * (`--ecn-tcp-ece 0|1`, `--ecn-tcp-cwr 0|1`, `--ecn-tcp-remove` for both off) and the IP ECN
 * field (`--ecn-ip-ect 0-3`). IPv4, mangle table; the TCP operations need `-p tcp`. The simulator
 * does not model ECN: the target continues.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import type { TargetExtension } from '../types.js';
import { conflict, missing, parseUint32, protocolIs, unknownOption } from '../values.js';

/** Options of `-j ECN`. */
export interface EcnTargetOptions {
  readonly ece?: number;
  readonly cwr?: number;
  readonly ect?: number;
}

/** `-j ECN`. */
export const ECN: TargetExtension<EcnTargetOptions> = {
  kind: 'target',
  name: 'ECN',
  family: 4,
  terminal: false,
  options: [
    { name: 'ecn-tcp-remove', arg: false },
    { name: 'ecn-tcp-cwr', arg: true },
    { name: 'ecn-tcp-ece', arg: true },
    { name: 'ecn-ip-ect', arg: true },
  ],
  placement: { tables: ['mangle'] },
  parse(occurrences, ctx) {
    const r: { -readonly [K in keyof EcnTargetOptions]: EcnTargetOptions[K] } = {};
    const remove = occurrences.find((o) => o.name === 'ecn-tcp-remove');
    for (const o of occurrences) {
      switch (o.name) {
        case 'ecn-tcp-remove':
          r.ece = 0;
          r.cwr = 0;
          break;
        case 'ecn-tcp-cwr':
          if (remove) conflict(o, remove.written);
          r.cwr = parseUint32(o, 'ECN', 0, 1);
          break;
        case 'ecn-tcp-ece':
          if (remove) conflict(o, remove.written);
          r.ece = parseUint32(o, 'ECN', 0, 1);
          break;
        case 'ecn-ip-ect': r.ect = parseUint32(o, 'ECN', 0, 3); break;
        default: unknownOption('ECN', o);
      }
    }
    if (occurrences.length === 0) missing(ctx, 'ECN', 'ECN target: an operation is required');
    return r;
  },
  save(o) {
    if (o.ece === 0 && o.cwr === 0) return `--ecn-tcp-remove${o.ect !== undefined ? '' : ''}`;
    const out: string[] = [];
    if (o.ece !== undefined) out.push(`--ecn-tcp-ece ${o.ece}`);
    if (o.cwr !== undefined) out.push(`--ecn-tcp-cwr ${o.cwr}`);
    if (o.ect !== undefined) out.push(`--ecn-ip-ect ${o.ect}`);
    return out.join(' ');
  },
  check(o, ctx) {
    // ecn_tg_check: the TCP operations need a "-p tcp" rule.
    if ((o.ece !== undefined || o.cwr !== undefined) && !protocolIs(ctx.protocol, [6])) {
      return [diagnostic('MATCH_NEEDS_PROTOCOL', 'ECN target: cannot use a TCP operation on a non-tcp rule (needs -p tcp)', undefined, 'ECN')];
    }
    return [];
  },
};
