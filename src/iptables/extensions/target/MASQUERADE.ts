/**
 * `-j MASQUERADE` (`libipt_MASQUERADE.c`/`libip6t_MASQUERADE.c`, kernel `xt_MASQUERADE.c`):
 * source NAT to the outgoing interface's address, optionally `--to-ports p[-q]` (needs
 * `-p tcp|udp|sctp|dccp`; service names work; a `/base` is saved as `/0` as iptables 1.8.9
 * does), `--random`, `--random-fully`. nat table, POSTROUTING only.
 *
 * @module
 */
import { formatToPorts, parseToPorts } from '../nat-range.js';
import type { MasqueradeOptions } from '../target-options.js';
import type { TargetExtension } from '../types.js';
import { unknownOption } from '../values.js';

/** `-j MASQUERADE`. */
export const MASQUERADE: TargetExtension<MasqueradeOptions> = {
  kind: 'target',
  name: 'MASQUERADE',
  family: 'both',
  terminal: true,
  options: [
    { name: 'to-ports', arg: true },
    { name: 'random', arg: false },
    { name: 'random-fully', arg: false },
  ],
  placement: { tables: ['nat'], hooks: ['POSTROUTING'] },
  parse(occurrences, ctx) {
    const r: { -readonly [K in keyof MasqueradeOptions]: MasqueradeOptions[K] } = { random: false, randomFully: false };
    for (const o of occurrences) {
      if (o.name === 'to-ports') {
        const p = parseToPorts(o, ctx, { services: true, base: true, dropBase: true, min: 0, target: 'MASQUERADE' });
        r.toPorts = p.ports;
        if (p.baseport !== undefined) r.baseport = p.baseport;
      }
      else if (o.name === 'random') r.random = true;
      else if (o.name === 'random-fully') r.randomFully = true;
      else unknownOption('MASQUERADE', o);
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.toPorts) out.push(`--to-ports ${formatToPorts(o.toPorts, o.baseport)}`);
    if (o.random) out.push('--random');
    if (o.randomFully) out.push('--random-fully');
    return out.join(' ');
  },
};
