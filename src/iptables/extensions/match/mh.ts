/**
 * `-m mh` (`libip6t_mh.c`, kernel `ip6t_mh.c`): the Mobility Header type within a range
 * (`--mh-type a[:b]`, by number or name: `binding-update`, `bu`, …). Needs `-p mh`. The
 * engine makes no mobility packets, so the match never holds on its packets.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, strtoul, unknownOption } from '../values.js';

const MH_NAMES: readonly (readonly [string, number])[] = [
  ['binding-refresh-request', 0], ['brr', 0], ['home-test-init', 1], ['hoti', 1], ['careof-test-init', 2],
  ['coti', 2], ['home-test', 3], ['hot', 3], ['careof-test', 4], ['cot', 4], ['binding-update', 5], ['bu', 5],
  ['binding-acknowledgement', 6], ['ba', 6], ['binding-error', 7], ['be', 7],
];

/** Options of `-m mh`. */
export interface MhOptions {
  readonly negated: boolean;
  readonly min: number;
  readonly max: number;
}

/** `name_to_type`: a prefix of a name (an exact name wins), else a number 0-255. */
function mhType(o: OptionOccurrence, text: string): number {
  let hit: number | undefined;
  for (const [name, type] of MH_NAMES) {
    if (name.toLowerCase().startsWith(text.toLowerCase())) {
      if (hit === undefined || name.length === text.length) hit = type;
    }
  }
  if (hit !== undefined) return hit;
  const n = strtoul(text, 0, 255);
  if (n === null) badValue(o, `mh: invalid MH type "${text}"`);
  return n;
}

/** `-m mh`. */
export const mh: MatchExtension<MhOptions> = {
  kind: 'match',
  name: 'mh',
  family: 6,
  options: [{ name: 'mh-type', arg: true, negatable: true }],
  placement: { protocols: ['mobility-header'] },
  parse(occurrences) {
    let r: MhOptions = { negated: false, min: 0, max: 0xff };
    for (const o of occurrences) {
      if (o.name !== 'mh-type') unknownOption('mh', o);
      const text = argOf(o);
      const colon = text.indexOf(':');
      if (colon < 0) {
        const t = mhType(o, text);
        r = { negated: o.negated, min: t, max: t };
      } else {
        const lo = colon === 0 ? 0 : mhType(o, text.slice(0, colon));
        const hi = colon === text.length - 1 ? 0xff : mhType(o, text.slice(colon + 1));
        if (lo > hi) fail('BAD_VALUE', 'mh: invalid MH type range (min > max)', o.argSpan, text);
        r = { negated: o.negated, min: lo, max: hi };
      }
    }
    return r;
  },
  save(o) {
    if (o.min === 0 && o.max === 0xff) return '';
    return `${o.negated ? '! ' : ''}--mh-type ${o.min !== o.max ? `${o.min}:${o.max}` : o.min}`;
  },
  lower() {
    return () => false;
  },
};
