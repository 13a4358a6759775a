/**
 * `-m string` (`libxt_string.c` revision 1, kernel `xt_string.c`): the payload between
 * `--from` and `--to` contains a pattern (`--string`, or `--hex-string` with `|41 42|` blocks and
 * `\` escapes), searched with `--algo bm|kmp`, `--icase` ignoring case. iptables-save prints the
 * pattern quoted, as hex when it has a byte that is not printable (or ends in `\`).
 *
 * The engine's packets have no payload bytes: the pattern is taken not to be found (so only
 * `!` holds) — an assumption the trace shows.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import { utf8Length } from '../../../model/limits.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, exclusive, missing, parseUint32, requireOption, unknownOption } from '../values.js';

/** `XT_STRING_MAX_PATTERN_SIZE`. */
const MAX_PATTERN = 128;
/** `XT_STRING_MAX_ALGO_NAME_SIZE` (with the terminating NUL). */
const MAX_ALGO = 16;

/** Options of `-m string`. */
export interface StringOptions {
  readonly negated: boolean;
  /** The pattern's bytes. */
  readonly pattern: readonly number[];
  readonly algo: string;
  readonly from: number;
  readonly to: number;
  readonly icase: boolean;
}

function bytesOf(text: string): number[] {
  return [...new TextEncoder().encode(text)];
}

/** `parse_hex_string`: text with `|hex hex|` blocks and `\c` literals. */
function parseHex(o: OptionOccurrence): number[] {
  const s = bytesOf(argOf(o));
  const bad = (m: string): never => badValue(o, `string: ${m}`);
  if (s.length === 0) bad('STRING must contain at least one char');
  const out: number[] = [];
  const isx = (c: number | undefined): boolean => c !== undefined && /[0-9a-fA-F]/.test(String.fromCharCode(c));
  let i = 0;
  let hexMode = false;
  let literal = false;
  while (i < s.length) {
    if (out.length >= MAX_PATTERN) bad(`STRING too long "${o.arg}"`);
    const c = s[i]!;
    if (c === 0x5c && !hexMode) literal = true;
    else if (c === 0x5c) bad('cannot include literals in hex data');
    else if (c === 0x7c) {
      if (hexMode) hexMode = false;
      else {
        hexMode = true;
        while (s[i + 1] === 0x20) i++;
      }
      if (i + 1 >= s.length) break;
      i++;
    }
    if (literal) {
      if (i + 1 >= s.length) bad('bad literal placement at end of string');
      out.push(s[i + 1]!);
      i += 2;
      literal = false;
    } else if (hexMode) {
      if (i + 1 >= s.length) bad('odd number of hex digits');
      if (i + 2 >= s.length) bad('invalid hex block');
      if (!isx(s[i])) bad(`invalid hex char "${String.fromCharCode(s[i]!)}"`);
      if (!isx(s[i + 1])) bad(`invalid hex char "${String.fromCharCode(s[i + 1]!)}"`);
      out.push(parseInt(String.fromCharCode(s[i]!, s[i + 1]!), 16));
      i += s[i + 2] === 0x20 ? 3 : 2;
    } else {
      out.push(s[i]!);
      i++;
    }
  }
  return out;
}

/** `is_hex_string`: a byte that is not printable ASCII, or a trailing backslash. */
function needsHex(p: readonly number[]): boolean {
  return p.some((b) => b < 0x20 || b > 0x7e) || p[p.length - 1] === 0x5c;
}

/** `-m string`. */
export const string: MatchExtension<StringOptions> = {
  kind: 'match',
  name: 'string',
  family: 'both',
  options: [
    { name: 'from', arg: true },
    { name: 'to', arg: true },
    { name: 'algo', arg: true },
    { name: 'string', arg: true, negatable: true },
    { name: 'hex-string', arg: true, negatable: true },
    { name: 'icase', arg: false },
  ],
  parse(occurrences, ctx) {
    exclusive(occurrences, ['string', 'hex-string']);
    requireOption(ctx, occurrences, 'string', 'algo');
    let pattern: number[] | undefined;
    let negated = false;
    let algo = '';
    let from = 0;
    let to = 0xffff;
    let icase = false;
    for (const o of occurrences) {
      switch (o.name) {
        case 'from': from = parseUint32(o, 'string', 0, 0xffff); break;
        case 'to': to = parseUint32(o, 'string', 0, 0xffff); break;
        case 'algo':
          algo = argOf(o);
          if (utf8Length(algo) >= MAX_ALGO) badValue(o, `string: algorithm name "${algo}" is too long (at most ${MAX_ALGO - 1} characters)`);
          break;
        case 'string':
          pattern = bytesOf(argOf(o));
          if (pattern.length > MAX_PATTERN) badValue(o, `string: STRING too long "${o.arg}"`);
          negated = o.negated;
          break;
        case 'hex-string':
          pattern = parseHex(o);
          negated = o.negated;
          break;
        case 'icase': icase = true; break;
        default: unknownOption('string', o);
      }
    }
    if (!pattern) missing(ctx, 'string', 'STRING match: you must specify --string or --hex-string');
    return { negated, pattern, algo, from, to, icase };
  },
  save(o) {
    const p = o.pattern;
    const pat = needsHex(p)
      ? `--hex-string "|${p.map((b) => b.toString(16).padStart(2, '0')).join('')}|"`
      : `--string "${String.fromCharCode(...p).replace(/["\\]/g, (c) => `\\${c}`)}"`;
    const out = [`${o.negated ? '! ' : ''}${pat}`, `--algo ${o.algo}`];
    if (o.from !== 0) out.push(`--from ${o.from}`);
    if (o.to !== 0xffff) out.push(`--to ${o.to}`);
    if (o.icase) out.push('--icase');
    return out.join(' ');
  },
  check(o) {
    // string_mt_check: from > to, an empty pattern, or an unknown algorithm is EINVAL/ENOENT.
    if (o.from > o.to) return [diagnostic('BAD_VALUE', 'string: --from is after --to', undefined, 'string')];
    if (o.pattern.length === 0) return [diagnostic('BAD_VALUE', 'string: the pattern is empty', undefined, 'string')];
    if (o.algo !== 'bm' && o.algo !== 'kmp') return [diagnostic('BAD_VALUE', `string: the kernel has no text search algorithm "${o.algo}" (bm, kmp)`, undefined, 'string')];
    return [];
  },
  lower(o) {
    const v = o.negated;
    return () => v;
  },
  evaluates: 'assumed',
  assumption() {
    return 'payload bytes are not modelled: the pattern is taken not to be found';
  },
};
