/**
 * `-j IDLETIMER` (`libxt_IDLETIMER.c` revision 1, kernel `xt_IDLETIMER.c`): restarts a timer
 * named `--label` that fires after `--timeout` seconds without packets (`--alarm`: an alarm
 * timer). Continues. The simulator records the target in the trace only.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../../model/errors.js';
import { utf8Length } from '../../../model/limits.js';
import type { TargetExtension } from '../types.js';
import { argOf, badValue, parseUint32, requireOption, unknownOption } from '../values.js';

/** Options of `-j IDLETIMER`. */
export interface IdletimerOptions {
  readonly timeout: number;
  readonly label: string;
  readonly alarm: boolean;
}

/** `MAX_IDLETIMER_LABEL_SIZE`. */
const LABEL_MAX = 28;
/** `INT_MAX / 1000`: the first timeout `idletimer_tg_checkentry` refuses as too big. */
const MAX_TIMEOUT = Math.floor(2147483647 / 1000);

/** `-j IDLETIMER`. */
export const IDLETIMER: TargetExtension<IdletimerOptions> = {
  kind: 'target',
  name: 'IDLETIMER',
  family: 'both',
  terminal: false,
  options: [
    { name: 'timeout', arg: true },
    { name: 'label', arg: true },
    { name: 'alarm', arg: false },
  ],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'IDLETIMER', 'timeout');
    requireOption(ctx, occurrences, 'IDLETIMER', 'label');
    const r = { timeout: 0, label: '', alarm: false };
    for (const o of occurrences) {
      if (o.name === 'timeout') r.timeout = parseUint32(o, 'IDLETIMER');
      else if (o.name === 'label') {
        r.label = argOf(o);
        if (utf8Length(r.label) >= LABEL_MAX) badValue(o, `IDLETIMER: --label is too long (at most ${LABEL_MAX - 1} characters)`);
      } else if (o.name === 'alarm') r.alarm = true;
      else unknownOption('IDLETIMER', o);
    }
    return r;
  },
  save(o) {
    return `--timeout ${o.timeout} --label ${o.label}${o.alarm ? ' --alarm' : ''}`;
  },
  // idletimer_tg_checkentry: a timeout of 0 or of INT_MAX / 1000 s and more, and an empty label,
  // are refused (Invalid argument).
  check(o) {
    const out: Diagnostic[] = [];
    if (o.timeout === 0) out.push(diagnostic('BAD_VALUE', 'IDLETIMER: --timeout 0: the kernel refuses a timeout of zero (Invalid argument)', undefined, '0'));
    if (o.timeout >= MAX_TIMEOUT) out.push(diagnostic('BAD_VALUE', `IDLETIMER: --timeout ${o.timeout}: the kernel refuses a timeout of ${MAX_TIMEOUT} s or more (Invalid argument)`, undefined, String(o.timeout)));
    if (o.label === '') out.push(diagnostic('BAD_VALUE', 'IDLETIMER: an empty --label is refused by the kernel (Invalid argument)', undefined, '""'));
    return out;
  },
};
