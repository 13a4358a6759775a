/**
 * `-j NOTRACK` (an alias of `CT --notrack` since iptables 1.4.x, kernel `xt_CT.c`): the packet
 * is not tracked (`--ctstate UNTRACKED`, no NAT). raw table only; no options.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { unknownOption } from '../values.js';

/** Options of `-j NOTRACK` (none). */
export type NotrackOptions = Readonly<Record<string, never>>;

/** `-j NOTRACK`. */
export const NOTRACK: TargetExtension<NotrackOptions> = {
  kind: 'target',
  name: 'NOTRACK',
  family: 'both',
  terminal: false,
  options: [],
  placement: { tables: ['raw'] },
  parse(occurrences) {
    for (const o of occurrences) unknownOption('NOTRACK', o);
    return {};
  },
  save() {
    return '';
  },
};
