/**
 * `-m statistic` (`libxt_statistic.c`, kernel `xt_statistic.c`): `--mode random --probability p`
 * (stored as the kernel's 31-bit fraction `lround(0x80000000 * p)`, printed with `%.11f`) or
 * `--mode nth --every n [--packet p]` (a per-rule counter). `!` inverts either.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, conflict, missing, parseUint32, unknownOption } from '../values.js';

/** Options of `-m statistic`. */
export type StatisticOptions =
  | {
      readonly mode: 'random';
      readonly negated: boolean;
      /** `lround(0x80000000 * p)`, 0..0x80000000. */
      readonly probability: number;
    }
  | {
      readonly mode: 'nth';
      readonly negated: boolean;
      /** `--every n` (n ≥ 1). */
      readonly every: number;
      /** `--packet p` (0 ≤ p < n). */
      readonly packet: number;
    };

/** 2^31: the kernel compares `random & 0x7fffffff` with the stored probability. */
const SCALE = 0x80000000;

/**
 * Prints `probability / 2^31` with exactly 11 decimals, rounding half to even on the exact
 * binary value, as glibc's `printf("%.11f")` does.
 */
export function formatProbability(probability: number): string {
  // value * 10^11 = probability * 10^11 / 2^31, computed exactly.
  const num = BigInt(probability) * 10n ** 11n;
  const den = BigInt(SCALE);
  let q = num / den;
  const r = num % den;
  if (r * 2n > den || (r * 2n === den && q % 2n === 1n)) q += 1n;
  const s = q.toString().padStart(12, '0');
  return `${s.slice(0, -11)}.${s.slice(-11)}`;
}

const FLOAT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): StatisticOptions {
  let mode: 'random' | 'nth' | undefined;
  let negated = false;
  let probability: number | undefined;
  let every: number | undefined;
  let packet: number | undefined;
  let randomOpt: OptionOccurrence | undefined;
  let nthOpt: OptionOccurrence | undefined;
  for (const o of occurrences) {
    if (o.negated) negated = true;
    switch (o.name) {
      case 'mode': {
        const m = argOf(o);
        if (m !== 'random' && m !== 'nth') badValue(o, `statistic: bad mode "${m}" (random or nth)`);
        mode = m;
        break;
      }
      case 'probability': {
        if (nthOpt) conflict(o, nthOpt.written);
        randomOpt = o;
        const text = argOf(o);
        const p = FLOAT.test(text) ? Number(text) : NaN;
        if (!(p >= 0 && p <= 1)) badValue(o, `statistic: bad probability "${text}" (must be between 0 and 1)`);
        probability = Math.round(SCALE * p); // lround: p ≥ 0, so half rounds up
        break;
      }
      case 'every':
        if (randomOpt) conflict(o, randomOpt.written);
        nthOpt = o;
        every = parseUint32(o, 'statistic', 1);
        break;
      case 'packet':
        if (o.negated) fail('BAD_NEGATION', 'statistic: option "--packet" cannot be inverted', o.span, '!');
        if (randomOpt) conflict(o, randomOpt.written);
        nthOpt ??= o;
        packet = parseUint32(o, 'statistic');
        break;
      default:
        unknownOption('statistic', o);
    }
  }
  if (mode === undefined) missing(ctx, 'statistic', 'option "--mode" must be specified');
  if (mode === 'random') {
    if (probability === undefined) missing(ctx, 'statistic', '--probability must be specified when using random mode');
    if (nthOpt) conflict(nthOpt, '--mode random');
    return { mode, negated, probability };
  }
  if (randomOpt) conflict(randomOpt, '--mode nth');
  // statistic_check; "--every" and "--packet" each need the other (`.also`).
  if (every === undefined || packet === undefined) missing(ctx, 'statistic', '--every and --packet must be specified when using nth mode');
  if (packet > every - 1) fail('BAD_VALUE', `statistic: --packet ${packet} must be 0 <= p <= n-1 (n = ${every})`, ctx.span, String(packet));
  return { mode, negated, every, packet };
}

/** `-m statistic`. */
export const statistic: MatchExtension<StatisticOptions> = {
  kind: 'match',
  name: 'statistic',
  family: 'both',
  options: [
    { name: 'mode', arg: true },
    { name: 'probability', arg: true, negatable: true },
    { name: 'every', arg: true, negatable: true },
    { name: 'packet', arg: true },
  ],
  parse,
  save(o) {
    const bang = o.negated ? '! ' : '';
    if (o.mode === 'random') return `--mode random ${bang}--probability ${formatProbability(o.probability)}`;
    return `--mode nth ${bang}--every ${o.every} --packet ${o.packet}`;
  },
  lower(o) {
    const inv = o.negated;
    if (o.mode === 'random') {
      const prob = o.probability;
      return (p) => p.statisticRandom(prob) !== inv;
    }
    // statistic_mt, nth mode: count runs every-1 → 0 → …; a packet matches when it wraps to 0.
    // The counter starts at (every - 1) - packet (libxt_statistic statistic_check).
    const last = o.every - 1;
    let count = last - o.packet;
    return () => {
      count = count === last ? 0 : count + 1;
      return (count === 0) !== inv;
    };
  },
};
