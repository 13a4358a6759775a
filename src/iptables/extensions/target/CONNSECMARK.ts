/**
 * `-j CONNSECMARK` (`libxt_CONNSECMARK.c`, kernel `xt_CONNSECMARK.c`): copies the security mark
 * between the packet and its connection (`--save` or `--restore`, exactly one). mangle and
 * security tables. The simulator does not model security marks: the target continues.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import type { TargetExtension } from '../types.js';
import { exclusive, missing, unknownOption } from '../values.js';

/** Options of `-j CONNSECMARK`. */
export interface ConnsecmarkOptions {
  readonly mode: 'save' | 'restore';
}

/** `-j CONNSECMARK`. */
export const CONNSECMARK: TargetExtension<ConnsecmarkOptions> = {
  kind: 'target',
  name: 'CONNSECMARK',
  family: 'both',
  terminal: false,
  options: [
    { name: 'save', arg: false },
    { name: 'restore', arg: false },
  ],
  parse(occurrences, ctx) {
    exclusive(occurrences, ['save', 'restore']);
    let mode: ConnsecmarkOptions['mode'] | undefined;
    for (const o of occurrences) {
      if (o.name === 'save' || o.name === 'restore') mode = o.name;
      else unknownOption('CONNSECMARK', o);
    }
    if (!mode) missing(ctx, 'CONNSECMARK', 'one of the options --save or --restore is required');
    return { mode };
  },
  save(o) {
    return `--${o.mode}`;
  },
  check(_o, ctx) {
    // connsecmark_tg_check: "only valid in 'mangle' or 'security' table".
    if (ctx.table !== undefined && ctx.table !== 'mangle' && ctx.table !== 'security') {
      return [diagnostic('INVALID_TABLE', `CONNSECMARK target is only valid in the mangle/security tables, not in ${ctx.table}`, undefined, 'CONNSECMARK')];
    }
    return [];
  },
};
