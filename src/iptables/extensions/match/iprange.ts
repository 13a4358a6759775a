/**
 * `-m iprange` (`libxt_iprange.c` revision 1, kernel `xt_iprange.c`): the source and/or
 * destination address lies in `from-to` (inclusive). iptables-save prints `from-to` always.
 *
 * @module
 */
import type { Family, Negatable } from '../../../model/types.js';
import { formatAddress, parseAddress } from '../../../model/address.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, compareAddress, missing, unknownOption } from '../values.js';

/** An inclusive address range. */
export interface AddressRange {
  readonly from: readonly number[];
  readonly to: readonly number[];
}

/** Options of `-m iprange`. */
export interface IprangeOptions {
  readonly src?: Negatable<AddressRange>;
  readonly dst?: Negatable<AddressRange>;
}

function parseRange(o: OptionOccurrence, family: Family): AddressRange {
  const text = argOf(o);
  const dash = text.indexOf('-');
  const fromText = dash < 0 ? text : text.slice(0, dash);
  const toText = dash < 0 ? text : text.slice(dash + 1);
  const from = parseAddress(fromText, family);
  if (!from) badValue(o, `iprange: bad ${family === 4 ? 'IPv4' : 'IPv6'} address "${fromText}"`);
  const to = parseAddress(toText, family);
  if (!to) badValue(o, `iprange: bad ${family === 4 ? 'IPv4' : 'IPv6'} address "${toText}"`);
  return { from, to };
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): IprangeOptions {
  const r: { -readonly [K in keyof IprangeOptions]: IprangeOptions[K] } = {};
  for (const o of occurrences) {
    if (o.name === 'src-range') r.src = { negated: o.negated, value: parseRange(o, ctx.family) };
    else if (o.name === 'dst-range') r.dst = { negated: o.negated, value: parseRange(o, ctx.family) };
    else unknownOption('iprange', o);
  }
  if (!r.src && !r.dst) missing(ctx, 'iprange', 'you must specify --src-range or --dst-range');
  return r;
}

/** `-m iprange`. */
export const iprange: MatchExtension<IprangeOptions> = {
  kind: 'match',
  name: 'iprange',
  family: 'both',
  options: [
    { name: 'src-range', arg: true, negatable: true },
    { name: 'dst-range', arg: true, negatable: true },
  ],
  parse,
  save(o, family) {
    const out: string[] = [];
    const r = (v: AddressRange): string => `${formatAddress(v.from, family)}-${formatAddress(v.to, family)}`;
    if (o.src) out.push(`${o.src.negated ? '! ' : ''}--src-range ${r(o.src.value)}`);
    if (o.dst) out.push(`${o.dst.negated ? '! ' : ''}--dst-range ${r(o.dst.value)}`);
    return out.join(' ');
  },
  lower(o) {
    const s = o.src;
    const d = o.dst;
    // iprange_mt4/6: m = addr < min || addr > max; m ^= invert; a true m fails the match.
    return (p) => {
      if (s) {
        const out = compareAddress(p.src, s.value.from) < 0 || compareAddress(p.src, s.value.to) > 0;
        if (out !== s.negated) return false;
      }
      if (d) {
        const out = compareAddress(p.dst, d.value.from) < 0 || compareAddress(p.dst, d.value.to) > 0;
        if (out !== d.negated) return false;
      }
      return true;
    };
  },
};
