/**
 * `-j AUDIT` (`libxt_AUDIT.c`, kernel `xt_AUDIT.c`): records an audit event for the packet
 * (`--type accept|drop|reject`, case-insensitive) and continues. The simulator records it in the
 * trace only.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { badValue, requireOption, unknownOption } from '../values.js';

/** Options of `-j AUDIT`. */
export interface AuditOptions {
  readonly type: 'accept' | 'drop' | 'reject';
}

/** `-j AUDIT`. */
export const AUDIT: TargetExtension<AuditOptions> = {
  kind: 'target',
  name: 'AUDIT',
  family: 'both',
  terminal: false,
  options: [{ name: 'type', arg: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'AUDIT', 'type');
    let type: AuditOptions['type'] = 'accept';
    for (const o of occurrences) {
      if (o.name !== 'type') unknownOption('AUDIT', o);
      const t = (o.arg ?? '').toLowerCase();
      if (t !== 'accept' && t !== 'drop' && t !== 'reject') badValue(o, `AUDIT: bad action type value "${o.arg}"`);
      type = t;
    }
    return { type };
  },
  save(o) {
    return `--type ${o.type}`;
  },
};
