/**
 * `-m rt` (`libip6t_rt.c`, kernel `ip6t_rt.c`): the IPv6 routing header's type (`--rt-type`),
 * segments left (`--rt-segsleft a[:b]`), length (`--rt-len`), and for type 0 the reserved field
 * (`--rt-0-res`) and the listed addresses (`--rt-0-addrs`, `--rt-0-not-strict`). The engine's
 * packets carry no extension headers, so the match (which needs the header) never holds on them.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { formatAddress, parseAddress } from '../../../model/address.js';
import type { MatchExtension } from '../types.js';
import { argOf, badValue, parseUint32, parseUintRange, unknownOption, UINT32_MAX } from '../values.js';

/** `IP6T_RT_HOPS`. */
const RT_HOPS = 16;

/** Options of `-m rt`. */
export interface RtOptions {
  readonly type?: { readonly negated: boolean; readonly value: number };
  readonly segsleft: { readonly negated: boolean; readonly min: number; readonly max: number };
  readonly len?: { readonly negated: boolean; readonly value: number };
  readonly res: boolean;
  readonly addrs?: readonly (readonly number[])[];
  readonly notStrict: boolean;
}

/** `-m rt`. */
export const rt: MatchExtension<RtOptions> = {
  kind: 'match',
  name: 'rt',
  family: 6,
  options: [
    { name: 'rt-type', arg: true, negatable: true },
    { name: 'rt-segsleft', arg: true, negatable: true },
    { name: 'rt-len', arg: true, negatable: true },
    { name: 'rt-0-res', arg: false },
    { name: 'rt-0-addrs', arg: true },
    { name: 'rt-0-not-strict', arg: false },
  ],
  parse(occurrences) {
    const r: { -readonly [K in keyof RtOptions]: RtOptions[K] } = { segsleft: { negated: false, min: 0, max: UINT32_MAX }, res: false, notStrict: false };
    const needType0 = (what: string, span: typeof occurrences[number]): void => {
      if (!r.type || r.type.value !== 0 || r.type.negated) fail('MISSING_OPTION', `rt: "--rt-type 0" required before "${what}"`, span.span, span.written);
    };
    for (const o of occurrences) {
      switch (o.name) {
        case 'rt-type': r.type = { negated: o.negated, value: parseUint32(o, 'rt') }; break;
        case 'rt-segsleft': {
          const { lo, hi } = parseUintRange(o, 'rt', UINT32_MAX);
          r.segsleft = { negated: o.negated, min: lo, max: hi };
          break;
        }
        case 'rt-len': r.len = { negated: o.negated, value: parseUint32(o, 'rt') }; break;
        case 'rt-0-res': needType0('--rt-0-res', o); r.res = true; break;
        case 'rt-0-addrs': {
          needType0('--rt-0-addrs', o);
          const items = argOf(o).split(',');
          if (items.length > RT_HOPS) badValue(o, 'rt: too many addresses specified');
          r.addrs = items.map((a) => parseAddress(a, 6) ?? badValue(o, `rt: bad address: ${a}`));
          break;
        }
        case 'rt-0-not-strict':
          if (!r.addrs) fail('MISSING_OPTION', 'rt: "--rt-0-addrs ..." required before "--rt-0-not-strict"', o.span, o.written);
          r.notStrict = true;
          break;
        default: unknownOption('rt', o);
      }
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.type) out.push(`${o.type.negated ? '! ' : ''}--rt-type ${o.type.value}`);
    const s = o.segsleft;
    if (!(s.min === 0 && s.max === UINT32_MAX)) out.push(`${s.negated ? '! ' : ''}--rt-segsleft ${s.min !== s.max ? `${s.min}:${s.max}` : s.min}`);
    if (o.len) out.push(`${o.len.negated ? '! ' : ''}--rt-len ${o.len.value}`);
    if (o.res) out.push('--rt-0-res');
    if (o.addrs) out.push(`--rt-0-addrs ${o.addrs.map((a) => formatAddress(a, 6)).join(',')}`);
    if (o.notStrict) out.push('--rt-0-not-strict');
    return out.join(' ');
  },
  lower() {
    return () => false;
  },
};
