/**
 * `-m mac` (`libxt_mac.c`, kernel `xt_mac.c`): the Ethernet source address of an arriving
 * packet (PREROUTING, INPUT, FORWARD). Six colon-separated groups of one or two hex digits;
 * iptables-save 1.8.9 prints them as two lower-case digits each (`0:1:a:…` → `00:01:0a:…`).
 *
 * Not evaluated faithfully: the simulator does not model link-layer addresses, so lower()
 * assumes the packet's source MAC is never the one named (`--mac-source` is false, `!
 * --mac-source` true).
 *
 * In lenient mode, a placeholder of six two-character groups that are not hex (the anonymised
 * `XX:XX:XX:XX:XX:XX` of published dumps) is kept as written.
 *
 * @module
 */
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, missing, unknownOption } from '../values.js';

/** Options of `-m mac`. */
export interface MacOptions {
  readonly negated: boolean;
  /** `aa:bb:cc:dd:ee:ff`, as iptables-save prints it (or a lenient-mode placeholder as written). */
  readonly source: string;
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): MacOptions {
  let r: MacOptions | undefined;
  for (const o of occurrences) {
    if (o.name !== 'mac-source') unknownOption('mac', o);
    const text = argOf(o);
    const groups = text.split(':');
    const ok = groups.length === 6 && groups.every((g) => /^[0-9a-fA-F]{1,2}$/.test(g));
    const placeholder = ctx.mode === 'lenient' && /^[0-9A-Za-z]{2}(:[0-9A-Za-z]{2}){5}$/.test(text);
    if (!ok && !placeholder) badValue(o, `mac: invalid MAC address "${text}"`);
    const source = ok ? groups.map((g) => g.toLowerCase().padStart(2, '0')).join(':') : text;
    r = { negated: o.negated, source };
  }
  if (!r) missing(ctx, 'mac', 'option "--mac-source" must be specified');
  return r;
}

/** `-m mac`. */
export const mac: MatchExtension<MacOptions> = {
  kind: 'match',
  name: 'mac',
  family: 'both',
  options: [{ name: 'mac-source', arg: true, negatable: true }],
  placement: { hooks: ['PREROUTING', 'INPUT', 'FORWARD'] },
  parse,
  save(o) {
    return `${o.negated ? '! ' : ''}--mac-source ${o.source}`;
  },
  lower(o) {
    const result = o.negated;
    return () => result;
  },
  evaluates: 'assumed',
  assumption(o) {
    return `link-layer addresses are not modelled: the source MAC is taken never to be ${o.source}`;
  },
};
