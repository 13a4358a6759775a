/**
 * `-m frag` (`libip6t_frag.c`, kernel `ip6t_frag.c`): the IPv6 fragment header's id
 * (`--fragid a[:b]`), length, reserved bits and position (`--fragfirst`, `--fragmore`,
 * `--fraglast`). The engine's packets are not fragmented, so the match never holds on them.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { exclusive, parseUint32, parseUintRange, unknownOption, UINT32_MAX } from '../values.js';

/** Options of `-m frag`. */
export interface FragOptions {
  readonly ids: { readonly negated: boolean; readonly min: number; readonly max: number };
  readonly len?: { readonly negated: boolean; readonly value: number };
  readonly res: boolean;
  readonly first: boolean;
  readonly more: boolean;
  readonly last: boolean;
}

/** `-m frag`. */
export const frag: MatchExtension<FragOptions> = {
  kind: 'match',
  name: 'frag',
  family: 6,
  options: [
    { name: 'fragid', arg: true, negatable: true },
    { name: 'fraglen', arg: true, negatable: true },
    { name: 'fragres', arg: false },
    { name: 'fragfirst', arg: false },
    { name: 'fragmore', arg: false },
    { name: 'fraglast', arg: false },
  ],
  parse(occurrences) {
    exclusive(occurrences, ['fragmore', 'fraglast']);
    const r: { -readonly [K in keyof FragOptions]: FragOptions[K] } = { ids: { negated: false, min: 0, max: UINT32_MAX }, res: false, first: false, more: false, last: false };
    for (const o of occurrences) {
      switch (o.name) {
        case 'fragid': {
          const { lo, hi } = parseUintRange(o, 'frag', UINT32_MAX);
          r.ids = { negated: o.negated, min: lo, max: hi };
          break;
        }
        case 'fraglen': r.len = { negated: o.negated, value: parseUint32(o, 'frag') }; break;
        case 'fragres': r.res = true; break;
        case 'fragfirst': r.first = true; break;
        case 'fragmore': r.more = true; break;
        case 'fraglast': r.last = true; break;
        default: unknownOption('frag', o);
      }
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    const s = o.ids;
    if (!(s.min === 0 && s.max === UINT32_MAX)) out.push(`${s.negated ? '! ' : ''}--fragid ${s.min !== s.max ? `${s.min}:${s.max}` : s.min}`);
    if (o.len) out.push(`${o.len.negated ? '! ' : ''}--fraglen ${o.len.value}`);
    if (o.res) out.push('--fragres');
    if (o.first) out.push('--fragfirst');
    if (o.more) out.push('--fragmore');
    if (o.last) out.push('--fraglast');
    return out.join(' ');
  },
  lower() {
    return () => false;
  },
};
