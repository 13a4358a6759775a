/**
 * `-m mark` (`libxt_mark.c`, kernel `xt_mark.c` `mark_mt`): `(skb->mark & mask) == value`.
 * iptables-save prints `--mark 0xV` or `--mark 0xV/0xM` (the mask only when not 0xffffffff).
 *
 * @module
 */
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { hex, missing, parseMarkMask, unknownOption, UINT32_MAX } from '../values.js';

/** Options of `-m mark` and `-m connmark`. */
export interface MarkMatchOptions {
  readonly negated: boolean;
  readonly value: number;
  readonly mask: number;
}

/** Parses the single `--mark v[/m]` option of mark and connmark. */
export function parseMarkMatch(ext: string) {
  return (occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): MarkMatchOptions => {
    let r: MarkMatchOptions | undefined;
    for (const o of occurrences) {
      if (o.name !== 'mark') unknownOption(ext, o);
      const { value, mask } = parseMarkMask(o, ext);
      r = { negated: o.negated, value, mask };
    }
    if (!r) missing(ctx, ext, 'option "--mark" must be specified');
    return r;
  };
}

/** `print_mark` with the `--mark` label. */
export function saveMarkMatch(o: MarkMatchOptions): string {
  const v = o.mask === UINT32_MAX ? hex(o.value) : `${hex(o.value)}/${hex(o.mask)}`;
  return `${o.negated ? '! ' : ''}--mark ${v}`;
}

/** `-m mark`. */
export const mark: MatchExtension<MarkMatchOptions> = {
  kind: 'match',
  name: 'mark',
  family: 'both',
  options: [{ name: 'mark', arg: true, negatable: true }],
  parse: parseMarkMatch('mark'),
  save: saveMarkMatch,
  lower(o) {
    const { value, mask, negated } = o;
    return (p) => (((p.mark & mask) >>> 0) === value) !== negated;
  },
};
