/**
 * `-m time` (`libxt_time.c`, kernel `xt_time.c`): the packet's arrival time (the namespace's
 * virtual clock, UTC) within a date range (`--datestart`/`--datestop`), a daily window
 * (`--timestart`/`--timestop`, wrapping past midnight when start > stop; `--contiguous` makes a
 * wrapped window one span), and on listed `--weekdays`/`--monthdays` (`!` takes the others).
 * `--kerneltz` (and the older `--localtz`) use the kernel's time zone, UTC in the simulator.
 * iptables-save prints the window (both ends), month days, weekdays, then the dates; the stop
 * date defaults to 2038-01-19T03:14:07 and is always printed.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, conflict, unknownOption } from '../values.js';

/** `XT_TIME_MAX_DAYTIME`. */
const MAX_DAYTIME = 24 * 60 * 60 - 1;
/** `XT_TIME_ALL_MONTHDAYS`, `XT_TIME_ALL_WEEKDAYS`. */
const ALL_MONTHDAYS = 0xfffffffe;
const ALL_WEEKDAYS = 0xfe;
/** The default stop date: `INT_MAX` seconds. */
const DATE_MAX = 0x7fffffff;
const WEEK_DAYS = ['', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

/** Options of `-m time`. */
export interface TimeOptions {
  readonly dateStart: number;
  readonly dateStop: number;
  readonly daytimeStart: number;
  readonly daytimeStop: number;
  readonly monthdays: number;
  readonly weekdays: number;
  readonly kerneltz: boolean;
  readonly contiguous: boolean;
}

/** C's `strtoul(s, &e, 10)` on a prefix: the value (0 when none) and the rest. */
function prefixNumber(s: string): { n: number; rest: string } {
  const m = /^\s*[+]?(\d*)/.exec(s)!;
  return { n: m[1] ? parseInt(m[1], 10) : 0, rest: s.slice(m[0].length) };
}

/** `time_parse_date`: `YYYY[-MM[-DD[Thh[:mm[:ss]]]]]`, UTC. */
function parseDate(o: OptionOccurrence): number {
  const text = argOf(o);
  const bad = (): never => badValue(o, `time: invalid date "${text}" specified; should be YYYY[-MM[-DD[Thh[:mm[:ss]]]]]`);
  const seps = ['-', '-', 'T', ':', ':', ''];
  const limits = [2038, 12, 31, 23, 59, 59];
  const vals = [1970, 1, 1, 0, 0, 0];
  let rest = text;
  for (let k = 0; k < 6; k++) {
    const { n, rest: r } = prefixNumber(rest);
    if (k === 0 && n < 1970) bad();
    if (n > limits[k]!) bad();
    vals[k] = n;
    if (r === '') break;
    if (r[0] !== seps[k] || k === 5) bad();
    rest = r.slice(1);
  }
  const [y, mo, d, hh, mm, ss] = vals as [number, number, number, number, number, number];
  // mktime normalises out-of-range fields (month 0, day 0) as Date.UTC does.
  return Math.floor(Date.UTC(y, mo - 1, d, hh, mm, ss) / 1000);
}

/** `time_parse_minutes`: `hh:mm[:ss]`. */
function parseDaytime(o: OptionOccurrence): number {
  const text = argOf(o);
  const bad = (): never => badValue(o, `time: invalid time "${text}" specified, should be hh:mm[:ss] format and within the boundaries`);
  const h = prefixNumber(text);
  if (h.rest[0] !== ':' || h.n > 23) bad();
  const m = prefixNumber(h.rest.slice(1));
  if ((m.rest !== '' && m.rest[0] !== ':') || m.n > 59) bad();
  let s = 0;
  if (m.rest !== '') {
    const x = prefixNumber(m.rest.slice(1));
    if (x.rest !== '' || x.n > 59) bad();
    s = x.n;
  }
  return h.n * 3600 + m.n * 60 + s;
}

/** `my_strseg`: comma-separated items, each cut to `max` characters. */
function segments(text: string, max: number): string[] {
  return text.split(',').filter((x, i, a) => x !== '' || i < a.length - 1).map((x) => x.slice(0, max));
}

function parseWeekdays(o: OptionOccurrence): number {
  let bits = 0;
  for (const day of segments(argOf(o), 3)) {
    const n = /^\s*\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)$/.exec(day);
    if (n) {
      const v = Number(n[1]!.startsWith('0') && n[1]!.length > 1 && !/[xX]/.test(n[1]!) ? parseInt(n[1]!, 8) : Number(n[1]));
      if (v === 0) badValue(o, 'time: no, the week does NOT begin with Sunday');
      bits |= 1 << v;
      continue;
    }
    let valid = false;
    for (let i = 1; i < WEEK_DAYS.length; i++) {
      if (day.slice(0, 2) === WEEK_DAYS[i]!.slice(0, 2)) {
        bits |= 1 << i;
        valid = true;
      }
    }
    if (!valid) badValue(o, `time: ${day} is not a valid day specifier`);
  }
  return bits >>> 0;
}

function parseMonthdays(o: OptionOccurrence): number {
  let bits = 0;
  for (const day of segments(argOf(o), 2)) {
    const n = /^\s*\+?(0[xX][0-9a-fA-F]*|0[0-7]*|[1-9]\d*)/.exec(day);
    const v = n ? (n[1]!.length > 1 && n[1]![0] === '0' ? parseInt(n[1]!, /[xX]/.test(n[1]!) ? 16 : 8) : Number(n[1])) : 0;
    if ((n ? day.slice(n[0].length) : day) !== '' || !(v <= 31)) badValue(o, `time: ${day} is not a valid day for --monthdays`);
    bits |= 1 << v;
  }
  return bits >>> 0;
}

const two = (n: number): string => String(n).padStart(2, '0');

function formatDaytime(t: number): string {
  return `${two(Math.floor(t / 3600))}:${two(Math.floor(t / 60) % 60)}:${two(t % 60)}`;
}

function formatDate(t: number): string {
  const d = new Date(t * 1000);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}T${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/** `time_mt` at second `stamp` (UTC). */
export function timeHolds(o: TimeOptions, stamp: number): boolean {
  if (stamp < o.dateStart || stamp > o.dateStop) return false;
  const packetTime = ((stamp % 86400) + 86400) % 86400;
  let s = stamp;
  if (o.daytimeStart < o.daytimeStop) {
    if (packetTime < o.daytimeStart || packetTime > o.daytimeStop) return false;
  } else {
    if (packetTime < o.daytimeStart && packetTime > o.daytimeStop) return false;
    // A window across midnight counts as the day it started on.
    if (o.contiguous && packetTime <= o.daytimeStop) s -= 86400;
  }
  const d = new Date(s * 1000);
  const weekday = d.getUTCDay() === 0 ? 7 : d.getUTCDay();
  if ((o.weekdays & (1 << weekday)) === 0) return false;
  if (o.monthdays !== ALL_MONTHDAYS && (o.monthdays & (1 << d.getUTCDate())) === 0) return false;
  return true;
}

/** `-m time`. */
export const time: MatchExtension<TimeOptions> = {
  kind: 'match',
  name: 'time',
  family: 'both',
  options: [
    { name: 'datestart', arg: true },
    { name: 'datestop', arg: true },
    { name: 'timestart', arg: true },
    { name: 'timestop', arg: true },
    { name: 'contiguous', arg: false },
    { name: 'weekdays', arg: true, negatable: true },
    { name: 'monthdays', arg: true, negatable: true },
    { name: 'localtz', arg: false },
    { name: 'utc', arg: false },
    { name: 'kerneltz', arg: false },
  ],
  parse(occurrences) {
    const r = {
      dateStart: 0, dateStop: DATE_MAX, daytimeStart: 0, daytimeStop: MAX_DAYTIME,
      monthdays: ALL_MONTHDAYS, weekdays: ALL_WEEKDAYS, kerneltz: false, contiguous: false,
    };
    let tz: OptionOccurrence | undefined;
    for (const o of occurrences) {
      switch (o.name) {
        case 'datestart': r.dateStart = parseDate(o); break;
        case 'datestop': r.dateStop = parseDate(o); break;
        case 'timestart': r.daytimeStart = parseDaytime(o); break;
        case 'timestop': r.daytimeStop = parseDaytime(o); break;
        case 'contiguous': r.contiguous = true; break;
        case 'weekdays': r.weekdays = parseWeekdays(o); if (o.negated) r.weekdays = (r.weekdays ^ ALL_WEEKDAYS) >>> 0; break;
        case 'monthdays': r.monthdays = parseMonthdays(o); if (o.negated) r.monthdays = (r.monthdays ^ ALL_MONTHDAYS) >>> 0; break;
        case 'localtz': case 'kerneltz': case 'utc':
          // --utc excludes --localtz and --kerneltz (and they it).
          if (tz && (tz.name === 'utc') !== (o.name === 'utc')) conflict(o, tz.written);
          tz = o;
          if (o.name !== 'utc') r.kerneltz = true;
          break;
        default: unknownOption('time', o);
      }
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.daytimeStart !== 0 || o.daytimeStop !== MAX_DAYTIME) out.push(`--timestart ${formatDaytime(o.daytimeStart)} --timestop ${formatDaytime(o.daytimeStop)}`);
    if (o.monthdays !== ALL_MONTHDAYS) {
      const days: number[] = [];
      for (let i = 1; i <= 31; i++) if ((o.monthdays & (1 << i)) !== 0) days.push(i);
      out.push(`--monthdays ${days.join(',')}`);
    }
    if (o.weekdays !== ALL_WEEKDAYS) {
      const days: string[] = [];
      for (let i = 1; i <= 7; i++) if ((o.weekdays & (1 << i)) !== 0) days.push(WEEK_DAYS[i]!);
      out.push(`--weekdays ${days.join(',')}`);
    }
    if (o.dateStart !== 0) out.push(`--datestart ${formatDate(o.dateStart)}`);
    if (o.dateStop !== 0) out.push(`--datestop ${formatDate(o.dateStop)}`);
    if (o.kerneltz) out.push('--kerneltz');
    if (o.contiguous) out.push('--contiguous');
    return out.join(' ');
  },
  check(o) {
    // time_mt_check.
    if (o.daytimeStart > MAX_DAYTIME || o.daytimeStop > MAX_DAYTIME) return [diagnostic('BAD_VALUE', 'time: start or stop time greater than 23:59:59', undefined, 'time')];
    if (o.contiguous && o.daytimeStart < o.daytimeStop) return [diagnostic('BAD_VALUE', 'time: --contiguous needs a window that wraps past midnight (--timestart after --timestop)', undefined, 'time')];
    return [];
  },
  lower(o) {
    return (p) => timeHolds(o, Math.floor(p.now ?? 0));
  },
};
