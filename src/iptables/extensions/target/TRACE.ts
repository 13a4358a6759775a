/**
 * `-j TRACE` (`libxt_TRACE.c`, kernel `xt_TRACE.c`): marks the packet so that every rule it
 * traverses is logged. raw table only; no options; not terminal.
 *
 * @module
 */
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
  placement: { tables: ['raw'] },
  parse(occurrences) {
    for (const o of occurrences) unknownOption('TRACE', o);
    return {};
  },
  save() {
    return '';
  },
};
