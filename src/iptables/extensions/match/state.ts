/**
 * `-m state` (`libxt_state`, an alias of conntrack revision 1-3 since iptables 1.4.17; kernel
 * `xt_conntrack.c` with only the state test): `--state` with INVALID, NEW, ESTABLISHED,
 * RELATED, UNTRACKED (no SNAT/DNAT here).
 *
 * @module
 */
import { CT_STATE } from '../../../model/packet.js';
import type { Negatable } from '../../../model/types.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { formatBits, missing, unknownOption } from '../values.js';
import { lowerConntrack, parseStates } from './conntrack.js';

/** Options of `-m state`: a {@link CT_STATE} bit set. */
export interface StateOptions {
  readonly state: Negatable<number>;
}

const PARSE_ORDER: readonly (readonly [string, number])[] = [
  ['INVALID', CT_STATE.INVALID], ['NEW', CT_STATE.NEW], ['ESTABLISHED', CT_STATE.ESTABLISHED],
  ['RELATED', CT_STATE.RELATED], ['UNTRACKED', CT_STATE.UNTRACKED],
];
const PRINT_ORDER: readonly (readonly [string, number])[] = [
  ['INVALID', CT_STATE.INVALID], ['NEW', CT_STATE.NEW], ['RELATED', CT_STATE.RELATED],
  ['ESTABLISHED', CT_STATE.ESTABLISHED], ['UNTRACKED', CT_STATE.UNTRACKED],
];

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): StateOptions {
  let state: Negatable<number> | undefined;
  for (const o of occurrences) {
    if (o.name !== 'state') unknownOption('state', o);
    state = { negated: o.negated, value: parseStates(o, PARSE_ORDER, 'state') };
  }
  if (!state) missing(ctx, 'state', 'option "--state" must be specified');
  return { state };
}

/** `-m state`. */
export const state: MatchExtension<StateOptions> = {
  kind: 'match',
  name: 'state',
  family: 'both',
  options: [{ name: 'state', arg: true, negatable: true }],
  parse,
  save(o) {
    return `${o.state.negated ? '! ' : ''}--state ${formatBits(o.state.value, PRINT_ORDER)}`;
  },
  lower(o) {
    return lowerConntrack({ state: o.state });
  },
};
