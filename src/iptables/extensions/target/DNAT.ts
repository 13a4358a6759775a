/**
 * `-j DNAT` (`libxt_DNAT.c` in iptables 1.8.9, kernel `xt_nat.c`): destination NAT to
 * `--to-destination [ip[-ip]][:port[-port[/base]]]` (ports need `-p tcp|udp|sctp|dccp`),
 * `--random`, `--persistent`. nat table, PREROUTING and OUTPUT only.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { formatNatRange, parseNatTo } from '../nat-range.js';
import type { DnatOptions, NatRange } from '../target-options.js';
import type { TargetExtension } from '../types.js';
import { argOf, unknownOption } from '../values.js';

/** `-j DNAT`. */
export const DNAT: TargetExtension<DnatOptions> = {
  kind: 'target',
  name: 'DNAT',
  family: 'both',
  terminal: true,
  options: [
    { name: 'to-destination', arg: true },
    { name: 'random', arg: false },
    { name: 'persistent', arg: false },
  ],
  placement: { tables: ['nat'], hooks: ['PREROUTING', 'OUTPUT'] },
  parse(occurrences, ctx) {
    let to: NatRange | undefined;
    let random = false;
    let persistent = false;
    for (const o of occurrences) {
      if (o.name === 'to-destination') to = parseNatTo(o, argOf(o), ctx, { services: true, base: true, min: 0, target: 'DNAT' });
      else if (o.name === 'random') random = true;
      else if (o.name === 'persistent') persistent = true;
      else unknownOption('DNAT', o);
    }
    if (!to) fail('MISSING_OPTION', 'DNAT: option "--to-destination" must be specified', ctx.span, 'DNAT');
    return { to, random, persistent };
  },
  save(o, family) {
    const out: string[] = [];
    const range = formatNatRange(o.to, family);
    if (range !== '') out.push(`--to-destination ${range}`);
    if (o.random) out.push('--random');
    if (o.persistent) out.push('--persistent');
    return out.join(' ');
  },
};
