/**
 * `-m hbh` (`libip6t_hbh.c`, kernel `ip6t_hbh.c`): the IPv6 hop-by-hop options header's length
 * (`--hbh-len`) and options (`--hbh-opts type[:len],…`, at most 16). `-m dst` reads the
 * destination options header the same way. The engine's packets carry no extension headers, so
 * the matches never hold on them.
 *
 * @module
 */

import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, parseUint32, unknownOption } from '../values.js';

/** `IP6T_OPTS_OPTSNR`. */
const OPTSNR = 16;

/** Options of `-m hbh` and `-m dst`. */
export interface OptsOptions {
  readonly len?: { readonly negated: boolean; readonly value: number };
  /** `type << 8 | length`, length 0xff when not given. */
  readonly opts?: readonly number[];
}

/** `parse_opts_num`: C `strtoul(s, &e, 0)`, the whole item. */
function optsNum(o: OptionOccurrence, ext: string, text: string, what: string): number {
  const m = /^\s*[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)$/.exec(text);
  if (!m) badValue(o, `${ext}: ${text === '' ? 'no valid digits' : 'error parsing'} in ${what} "${text}"`);
  const d = m[1]!;
  return d.length > 1 && d[0] === '0' ? parseInt(d.slice(/[xX]/.test(d) ? 2 : 1), /[xX]/.test(d) ? 16 : 8) : Number(d);
}

/** `parse_options`. */
function parseOpts(o: OptionOccurrence, ext: string): number[] {
  const items = argOf(o).split(',');
  if (items.length > OPTSNR) badValue(o, `${ext}: too many options specified`);
  return items.map((item, i) => {
    const colon = item.indexOf(':');
    if (colon >= 0 && i === OPTSNR - 1) badValue(o, `${ext}: too many options specified`);
    const type = (optsNum(o, ext, colon >= 0 ? item.slice(0, colon) : item, 'opt') & 0xff) << 8;
    if (colon < 0) return type | 0xff;
    if (type === 0) badValue(o, `${ext}: PAD0 has not got length`);
    return type | (optsNum(o, ext, item.slice(colon + 1), 'length') & 0xff);
  });
}

/** Parse, save and the module record for `hbh` or `dst`. */
export function optsExtension(name: 'hbh' | 'dst'): MatchExtension<OptsOptions> {
  const lenName = `${name}-len`;
  const optsName = `${name}-opts`;
  return {
    kind: 'match',
    name,
    family: 6,
    options: [
      { name: lenName, arg: true, negatable: true },
      { name: optsName, arg: true },
    ],
    parse(occurrences) {
      const r: { -readonly [K in keyof OptsOptions]: OptsOptions[K] } = {};
      for (const o of occurrences) {
        if (o.name === lenName) r.len = { negated: o.negated, value: parseUint32(o, name) };
        else if (o.name === optsName) r.opts = parseOpts(o, name);
        else unknownOption(name, o);
      }
      return r;
    },
    save(o) {
      const out: string[] = [];
      if (o.len) out.push(`${o.len.negated ? '! ' : ''}--${lenName} ${o.len.value}`);
      if (o.opts) out.push(`--${optsName} ${o.opts.map((v) => `${v >> 8}${(v & 0xff) !== 0xff ? `:${v & 0xff}` : ''}`).join(',')}`);
      return out.join(' ');
    },
    lower() {
      return () => false;
    },
  };
}

/** `-m hbh`. */
export const hbh: MatchExtension<OptsOptions> = optsExtension('hbh');
