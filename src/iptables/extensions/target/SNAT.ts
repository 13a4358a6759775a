/**
 * `-j SNAT` (iptables 1.8.9 reads it with the DNAT parser; kernel `xt_nat.c`): source NAT to
 * `--to-source [ip[-ip]][:port[-port]]` (ports need `-p tcp|udp|sctp|dccp`; a `/base` is
 * accepted and saved as `/0`, see `PortSyntax.dropBase`), `--random`, `--random-fully`,
 * `--persistent`. nat table, POSTROUTING and INPUT only.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { formatNatRange, parseNatTo } from '../nat-range.js';
import type { NatRange, SnatOptions } from '../target-options.js';
import type { TargetExtension } from '../types.js';
import { argOf, unknownOption } from '../values.js';

/** `-j SNAT`. */
export const SNAT: TargetExtension<SnatOptions> = {
  kind: 'target',
  name: 'SNAT',
  family: 'both',
  terminal: true,
  options: [
    { name: 'to-source', arg: true },
    { name: 'random', arg: false },
    { name: 'random-fully', arg: false },
    { name: 'persistent', arg: false },
  ],
  placement: { tables: ['nat'], hooks: ['POSTROUTING', 'INPUT'] },
  parse(occurrences, ctx) {
    let to: NatRange | undefined;
    let random = false;
    let randomFully = false;
    let persistent = false;
    for (const o of occurrences) {
      if (o.name === 'to-source') to = parseNatTo(o, argOf(o), ctx, { services: true, base: true, dropBase: true, min: 0, target: 'SNAT' });
      else if (o.name === 'random') random = true;
      else if (o.name === 'random-fully') randomFully = true;
      else if (o.name === 'persistent') persistent = true;
      else unknownOption('SNAT', o);
    }
    if (!to) fail('MISSING_OPTION', 'SNAT: option "--to-source" must be specified', ctx.span, 'SNAT');
    return { to, random, randomFully, persistent };
  },
  save(o, family) {
    const out = [`--to-source ${formatNatRange(o.to, family)}`];
    if (o.random) out.push('--random');
    if (o.randomFully) out.push('--random-fully');
    if (o.persistent) out.push('--persistent');
    return out.join(' ');
  },
};
