/**
 * `-j RATEEST` (`libxt_RATEEST.c`, kernel `xt_RATEEST.c`): counts the packet into the rate
 * estimator `--rateest-name` (created by the first rule that names it; see `rate-estimator.ts`),
 * which `-m rateest` reads. Continues. All three options are required.
 *
 * `--rateest-interval` and `--rateest-ewmalog` are times (`strtod` then `s`/`sec`/`secs`, `ms`…,
 * `us`…; a bare number is microseconds). iptables rounds the interval up to 250 ms × 2^k (k ≤ 5,
 * so at most 8 s) and turns the time constant into `ewma_log` (the first k with
 * interval / -ln(1 - 2^-k) > ewmalog, minus one; 1 … 30), and iptables-save prints them back as
 * the interval and interval × 2^ewma_log (`250.0ms`, `1.0s`, `%.1f`). The name is cut to 15
 * characters, as `strncpy` into `IFNAMSIZ` cuts it. Two rules that name one estimator with
 * other parameters are refused by the kernel (Invalid argument), as the load check here refuses.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { argOf, badValue, requireOption, unknownOption } from '../values.js';

/** Options of `-j RATEEST`, as the kernel holds them. */
export interface RateestTargetOptions {
  readonly name: string;
  /** `interval`: -2 … 3; the period is 2^(interval+2) / 4 seconds. */
  readonly interval: number;
  /** `ewma_log`: 1 … 30. */
  readonly ewmaLog: number;
}

/** `IFNAMSIZ - 1`: the longest estimator name. */
export const RATEEST_NAME_MAX = 15;
const UNITS_PER_SEC = 1_000_000;

/** The longest prefix of `text` that `strtod` reads as a decimal number, and its value. */
export function strtodPrefix(text: string): { value: number; end: number } | null {
  const m = /^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(text);
  if (!m) return null;
  return { value: Number(m[0].trim()), end: m[0].length };
}

/** `RATEEST_get_time`: microseconds, or null. */
function parseTime(text: string): number | null {
  const r = strtodPrefix(text);
  if (r === null) return null;
  let t = r.value;
  const unit = text.slice(r.end).toLowerCase();
  if (unit === 's' || unit === 'sec' || unit === 'secs') t *= UNITS_PER_SEC;
  else if (unit === 'ms' || unit === 'msec' || unit === 'msecs') t *= UNITS_PER_SEC / 1000;
  else if (unit === 'us' || unit === 'usec' || unit === 'usecs') t *= 1;
  else if (unit !== '') return null;
  // *time = t: a double into an unsigned int.
  if (!(t >= 0) || t >= 2 ** 32) return null;
  return Math.trunc(t);
}

/** `RATEEST_print_time`. */
function formatTime(us: number): string {
  if (us >= UNITS_PER_SEC) return `${(us / UNITS_PER_SEC).toFixed(1)}s`;
  if (us >= UNITS_PER_SEC / 1000) return `${(us / 1000).toFixed(1)}ms`;
  return `${us}us`;
}

/** `-j RATEEST`. */
export const RATEEST: TargetExtension<RateestTargetOptions> = {
  kind: 'target',
  name: 'RATEEST',
  family: 'both',
  terminal: false,
  options: [
    { name: 'rateest-name', arg: true },
    { name: 'rateest-interval', arg: true },
    { name: 'rateest-ewmalog', arg: true },
  ],
  parse(occurrences, ctx) {
    let name = '';
    let interval = 0;
    let ewma = 0;
    for (const o of occurrences) {
      if (o.name === 'rateest-name') {
        name = argOf(o).slice(0, RATEEST_NAME_MAX);
      } else if (o.name === 'rateest-interval' || o.name === 'rateest-ewmalog') {
        const t = parseTime(argOf(o));
        if (t === null) badValue(o, `RATEEST: bad ${o.name === 'rateest-interval' ? 'interval' : 'ewmalog'} value "${o.arg}"`);
        if (o.name === 'rateest-interval') interval = t!;
        else ewma = t!;
      } else unknownOption('RATEEST', o);
    }
    requireOption(ctx, occurrences, 'RATEEST', 'rateest-name');
    requireOption(ctx, occurrences, 'RATEEST', 'rateest-interval');
    requireOption(ctx, occurrences, 'RATEEST', 'rateest-ewmalog');
    // RATEEST_final_check.
    let k = 0;
    while (k <= 5 && interval > 2 ** k * (UNITS_PER_SEC / 4)) k++;
    if (k > 5) badValue(occurrences.find((o) => o.name === 'rateest-interval')!, 'RATEEST: interval value is too large');
    let e = 1;
    for (; e < 32; e++) {
      const w = 1.0 - 1.0 / 2 ** e;
      if (interval / -Math.log(w) > ewma) break;
    }
    e--;
    if (e === 0 || e >= 31) badValue(occurrences.find((o) => o.name === 'rateest-ewmalog')!, 'RATEEST: ewmalog value is out of range');
    return { name, interval: k - 2, ewmaLog: e };
  },
  save(o) {
    const interval = (UNITS_PER_SEC * 2 ** (o.interval + 2)) / 4;
    // local_ewma_log = local_interval * (1 << ewma_log), in an unsigned int.
    const ewma = (interval * 2 ** o.ewmaLog) % 2 ** 32;
    return `--rateest-name ${o.name} --rateest-interval ${formatTime(interval)} --rateest-ewmalog ${formatTime(ewma)}`;
  },
};
