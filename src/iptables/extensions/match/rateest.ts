/**
 * `-m rateest` (`libxt_rateest.c`, kernel `xt_rateest.c`): compares the rate of an estimator
 * that `-j RATEEST` feeds with a fixed rate (`--rateest NAME --rateest-gt --rateest-bps 1mbit`),
 * or with a second estimator (`--rateest1 A --rateest-lt --rateest-bps --rateest2 B`);
 * `--rateest-delta` compares what is left below a given rate instead (`max(0, rate - estimate)`).
 * `--rateest-bps`/`--rateest-pps` (or `…1`/`…2`) say what is compared, bytes or packets per
 * second, and take the rate as an optional next argument (not one that starts with `-` or `!`).
 * Rates are bits per second or take iproute's suffixes (`kbit`, `Mibit`, `KBps`…,
 * case-insensitive); the kernel keeps bytes per second.
 *
 * iptables-save prints it in its own order (checked against iptables 1.8.9): `--rateest-delta`
 * first, the name (`--rateest` alone, `--rateest1` with a second estimator), then per quantity the
 * comparison and `--rateest-bps`/`--rateest-pps` (with `…1 RATE` before the comparison and
 * `…2` after it in delta mode), the rate where one is compared, then `--rateest2`. A rate given
 * where none is compared is dropped; a comparison is printed once per quantity; `--rateest-lt`
 * and `--rateest-gt` together keep the last, and `!` before any of them inverts the match.
 * The kernel refuses (Invalid argument) a match with no comparison or with neither bps nor pps,
 * and (No such file or directory) one that names an estimator no earlier `RATEEST` rule created.
 *
 * @module
 */
import { diagnostic, fail } from '../../../model/errors.js';
import type { Diagnostic } from '../../../model/errors.js';
import { RateEstimator } from '../rate-estimator.js';
import { RATEEST_NAME_MAX, strtodPrefix } from '../target/RATEEST.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, missing, strtoul, unknownOption, UINT32_MAX } from '../values.js';

/** Options of `-m rateest`, as `struct xt_rateest_match_info` holds them. */
export interface RateestMatchOptions {
  readonly name1: string;
  /** The second estimator (`XT_RATEEST_MATCH_REL`); absent: compared with bps2/pps2 (`ABS`). */
  readonly name2?: string;
  readonly delta: boolean;
  readonly bps: boolean;
  readonly pps: boolean;
  /** The comparison; absent when none was given (the kernel refuses that). */
  readonly mode?: 'eq' | 'lt' | 'gt';
  readonly invert: boolean;
  /** Bytes per second. */
  readonly bps1: number;
  readonly bps2: number;
  readonly pps1: number;
  readonly pps2: number;
}

/** iproute's rate suffixes (`rateest_get_rate`), bits per unit. */
const SUFFIXES: readonly (readonly [string, number])[] = [
  ['bit', 1], ['kibit', 1024], ['kbit', 1000], ['mibit', 1024 * 1024], ['mbit', 1e6],
  ['gibit', 1024 ** 3], ['gbit', 1e9], ['tibit', 1024 ** 4], ['tbit', 1e12],
  ['bps', 8], ['kibps', 8 * 1024], ['kbps', 8000], ['mibps', 8 * 1024 * 1024], ['mbps', 8e6],
  ['gibps', 8 * 1024 ** 3], ['gbps', 8e9], ['tibps', 8 * 1024 ** 4], ['tbps', 8e12],
];

/** `rateest_get_rate`: bytes per second, or null. */
function parseRate(text: string): number | null {
  const r = strtodPrefix(text);
  if (r === null) return null;
  const unit = text.slice(r.end).toLowerCase();
  let bits: number | undefined;
  if (unit === '') bits = r.value;
  else {
    const s = SUFFIXES.find(([n]) => n === unit);
    if (s) bits = r.value * s[1];
  }
  if (bits === undefined) return null;
  const bytes = bits / 8;
  // A double into a u32.
  if (!(bytes >= 0) || bytes >= 2 ** 32) return null;
  return Math.trunc(bytes);
}

/** `printf("%.0f")`: to nearest, ties to even. */
function round0(x: number): string {
  const f = Math.floor(x);
  const d = x - f;
  const n = d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f;
  return String(n);
}

/** `rateest_print_rate` (not numeric). */
function formatRate(rate: number): string {
  const bits = rate * 8;
  if (bits >= 1e9) return `${round0(bits / 1e6)}Mbit`;
  if (bits >= 1e6) return `${round0(bits / 1e3)}Kbit`;
  return `${round0(bits)}bit`;
}

function cutName(o: OptionOccurrence): string {
  return argOf(o).slice(0, RATEEST_NAME_MAX);
}

/** `-m rateest`. */
export const rateest: MatchExtension<RateestMatchOptions> = {
  kind: 'match',
  name: 'rateest',
  family: 'both',
  // rateest_parse keeps its own flags ("can't specify … twice"); a repeat is its business.
  options: [
    { name: 'rateest1', arg: true, multi: true },
    { name: 'rateest', arg: true, multi: true },
    { name: 'rateest2', arg: true, multi: true },
    { name: 'rateest-bps1', arg: false, extraArgs: 1, multi: true },
    { name: 'rateest-pps1', arg: false, extraArgs: 1, multi: true },
    { name: 'rateest-bps2', arg: false, extraArgs: 1, multi: true },
    { name: 'rateest-pps2', arg: false, extraArgs: 1, multi: true },
    { name: 'rateest-bps', arg: false, extraArgs: 1, multi: true },
    { name: 'rateest-pps', arg: false, extraArgs: 1, multi: true },
    { name: 'rateest-delta', arg: false, multi: true },
    { name: 'rateest-lt', arg: false, negatable: true, multi: true },
    { name: 'rateest-gt', arg: false, negatable: true, multi: true },
    { name: 'rateest-eq', arg: false, negatable: true, multi: true },
  ],
  parse(occurrences, ctx) {
    if (occurrences.length === 0) missing(ctx, 'rateest', 'rateest match: you need to specify some flags');
    const r: { -readonly [K in keyof RateestMatchOptions]: RateestMatchOptions[K] } = {
      name1: '', delta: false, bps: false, pps: false, invert: false, bps1: 0, bps2: 0, pps1: 0, pps2: 0,
    };
    // The getopt codes already seen (--rateest is --rateest1, --rateest-bps is --rateest-bps2…).
    const seen = new Set<string>();
    const twice = (o: OptionOccurrence, code: string, what: string): void => {
      if (seen.has(code)) fail('DUPLICATE_OPTION', `rateest: can't specify ${what} twice`, o.span, o.written);
      seen.add(code);
    };
    const rateArg = (o: OptionOccurrence): string | undefined => o.extra?.[0]?.text;
    const bad = (o: OptionOccurrence, what: string, text: string): never =>
      fail('BAD_VALUE', `rateest: could not parse ${what} \`${text}'`, o.extra?.[0]?.span ?? o.span, text);
    for (const o of occurrences) {
      switch (o.name) {
        case 'rateest1':
        case 'rateest':
          twice(o, 'rateest1', '--rateest1');
          r.name1 = cutName(o);
          break;
        case 'rateest2':
          twice(o, 'rateest2', '--rateest2');
          r.name2 = cutName(o);
          break;
        case 'rateest-bps1':
        case 'rateest-bps2':
        case 'rateest-bps': {
          const one = o.name === 'rateest-bps1';
          twice(o, one ? 'bps1' : 'bps2', one ? '--rateest-bps1' : '--rateest-bps2');
          r.bps = true;
          const text = rateArg(o);
          if (text === undefined) break;
          const v = parseRate(text);
          if (v === null) bad(o, 'rate', text);
          if (one) r.bps1 = v!;
          else r.bps2 = v!;
          break;
        }
        case 'rateest-pps1':
        case 'rateest-pps2':
        case 'rateest-pps': {
          const one = o.name === 'rateest-pps1';
          twice(o, one ? 'pps1' : 'pps2', one ? '--rateest-pps1' : '--rateest-pps2');
          r.pps = true;
          const text = rateArg(o);
          if (text === undefined) break;
          const v = strtoul(text, 0, UINT32_MAX);
          if (v === null) bad(o, 'pps', text);
          if (one) r.pps1 = v!;
          else r.pps2 = v!;
          break;
        }
        case 'rateest-delta':
          twice(o, 'delta', '--rateest-delta');
          r.delta = true;
          break;
        case 'rateest-lt':
        case 'rateest-gt':
        case 'rateest-eq':
          twice(o, o.name, 'lt/gt/eq');
          r.mode = o.name.slice(8) as 'lt' | 'gt' | 'eq';
          if (o.negated) r.invert = true;
          break;
        default:
          unknownOption('rateest', o);
      }
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    const mode = o.mode === undefined ? [] : [`${o.invert ? '! ' : ''}--rateest-${o.mode}`];
    if (o.delta) out.push('--rateest-delta');
    out.push(o.name2 !== undefined ? `--rateest1 ${o.name1}` : `--rateest ${o.name1}`);
    const quantity = (kind: 'bps' | 'pps', r1: string, r2: string): void => {
      if (o.delta) out.push(`--rateest-${kind}1 ${r1}`, ...mode, `--rateest-${kind}2`);
      else out.push(...mode, `--rateest-${kind}`);
      if (o.name2 === undefined || o.delta) out[out.length - 1] += ` ${r2}`;
    };
    if (o.bps) quantity('bps', formatRate(o.bps1), formatRate(o.bps2));
    if (o.pps) quantity('pps', String(o.pps1), String(o.pps2));
    if (o.name2 !== undefined) out.push(`--rateest2 ${o.name2}`);
    return out.join(' ');
  },
  check(o): Diagnostic[] {
    // xt_rateest_mt_checkentry: -EINVAL.
    if (!o.bps && !o.pps) return [diagnostic('MISSING_OPTION', 'rateest: the kernel refuses a match that compares neither bps nor pps (--rateest-bps or --rateest-pps; Invalid argument)', undefined, 'rateest')];
    if (o.mode === undefined) return [diagnostic('MISSING_OPTION', 'rateest: the kernel refuses a match with no comparison (--rateest-lt, --rateest-gt or --rateest-eq; Invalid argument)', undefined, 'rateest')];
    return [];
  },
  lower(o, _family, env) {
    // xt_rateest_mt. A name the load check let through always has an estimator; without one
    // (lowering outside a namespace) it reads as a fresh estimator: 0.
    const est1 = env?.rateEstimators?.get(o.name1) ?? new RateEstimator(o.name1, -2, 1, 0);
    const est2 = o.name2 === undefined ? null : (env?.rateEstimators?.get(o.name2) ?? new RateEstimator(o.name2, -2, 1, 0));
    const { delta, bps, pps, invert } = o;
    const mode = o.mode === 'lt' ? 1 : o.mode === 'gt' ? 2 : 0;
    const headroom = (given: number, rate: number): number => (given >= rate ? given - rate : 0);
    return (p) => {
      const now = p.now ?? 0;
      est1.sample(now);
      const bps1 = delta ? headroom(o.bps1, est1.bps) : est1.bps;
      const pps1 = delta ? headroom(o.pps1, est1.pps) : est1.pps;
      let bps2 = o.bps2;
      let pps2 = o.pps2;
      if (est2 !== null) {
        est2.sample(now);
        bps2 = delta ? headroom(o.bps2, est2.bps) : est2.bps;
        pps2 = delta ? headroom(o.pps2, est2.pps) : est2.pps;
      }
      let ret = true;
      if (mode === 1) {
        if (bps) ret &&= bps1 < bps2;
        if (pps) ret &&= pps1 < pps2;
      } else if (mode === 2) {
        if (bps) ret &&= bps1 > bps2;
        if (pps) ret &&= pps1 > pps2;
      } else {
        if (bps) ret &&= bps1 === bps2;
        if (pps) ret &&= pps1 === pps2;
      }
      return ret !== invert;
    };
  },
};
