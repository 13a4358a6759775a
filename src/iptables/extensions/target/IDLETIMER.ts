/**
 * `-j IDLETIMER` (`libxt_IDLETIMER.c` revision 1, kernel `xt_IDLETIMER.c`): restarts a timer
 * named `--label` that fires after `--timeout` seconds without packets (`--alarm`: an alarm
 * timer). Continues. The simulator records the target in the trace only.
 *
 * @module
 */
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
};
