/**
 * `-m cpu` (`libxt_cpu.c`, kernel `xt_cpu.c`): the CPU that handles the packet. The engine has
 * no CPUs: it takes every packet to be handled by CPU 0, an assumption the trace shows.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { bang, parseUint32, requireOption, unknownOption } from '../values.js';

/** Options of `-m cpu`. */
export interface CpuOptions {
  readonly negated: boolean;
  readonly cpu: number;
}

/** `-m cpu`. */
export const cpu: MatchExtension<CpuOptions> = {
  kind: 'match',
  name: 'cpu',
  family: 'both',
  options: [{ name: 'cpu', arg: true, negatable: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'cpu', 'cpu');
    let r: CpuOptions = { negated: false, cpu: 0 };
    for (const o of occurrences) {
      if (o.name !== 'cpu') unknownOption('cpu', o);
      r = { negated: o.negated, cpu: parseUint32(o, 'cpu') };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--cpu ${o.cpu}`;
  },
  lower(o) {
    const v = (o.cpu === 0) !== o.negated;
    return () => v;
  },
  evaluates: 'assumed',
  assumption() {
    return 'CPUs are not modelled: every packet is taken to be handled by CPU 0';
  },
};
