/**
 * `-j TRACE` (`libxt_TRACE.c`, kernel `xt_TRACE.c`): marks the packet so that every rule it
 * traverses is logged. No options; not terminal. iptables-nft sets `meta nftrace` natively, in any
 * table; the legacy back end's xt_TRACE is for the raw table only.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import type { TargetExtension } from '../types.js';
import { unknownOption } from '../values.js';

/** Options of `-j TRACE` (none). */
export type TraceOptions = Readonly<Record<string, never>>;

/** `-j TRACE`. */
export const TRACE: TargetExtension<TraceOptions> = {
  kind: 'target',
  name: 'TRACE',
  family: 'both',
  terminal: false,
  options: [],
  check(_o, ctx) {
    if (ctx.backend === 'legacy' && ctx.table !== undefined && ctx.table !== 'raw') {
      return [diagnostic('INVALID_TABLE', `TRACE target is only valid in the raw table with the legacy back end, not in ${ctx.table}`, undefined, 'TRACE')];
    }
    return [];
  },
  parse(occurrences) {
    for (const o of occurrences) unknownOption('TRACE', o);
    return {};
  },
  save() {
    return '';
  },
};
