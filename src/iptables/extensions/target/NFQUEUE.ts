/**
 * `-j NFQUEUE` (`libxt_NFQUEUE.c` revision 3, kernel `xt_NFQUEUE.c`): hands the packet to a
 * userspace queue (`--queue-num n`, default 0, or `--queue-balance a:b`); `--queue-bypass` lets
 * the packet go on when no program reads the queue; `--queue-cpu-fanout` needs
 * `--queue-balance`. iptables-save always prints the queue. The simulator has no queue readers:
 * the packet is dropped, as the kernel drops it, unless `--queue-bypass` accepts it.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { TargetExtension } from '../types.js';
import { exclusive, parseUint32, parseUintRange, unknownOption } from '../values.js';

/** Options of `-j NFQUEUE`. */
export interface NfqueueOptions {
  readonly queue: number;
  /** How many queues from {@link queue} (`--queue-balance`); 1 otherwise. */
  readonly total: number;
  readonly bypass: boolean;
  readonly cpuFanout: boolean;
}

/** `-j NFQUEUE`. */
export const NFQUEUE: TargetExtension<NfqueueOptions> = {
  kind: 'target',
  name: 'NFQUEUE',
  family: 'both',
  terminal: true,
  options: [
    { name: 'queue-num', arg: true },
    { name: 'queue-balance', arg: true },
    { name: 'queue-bypass', arg: false },
    { name: 'queue-cpu-fanout', arg: false },
  ],
  parse(occurrences) {
    exclusive(occurrences, ['queue-num', 'queue-balance']);
    const r = { queue: 0, total: 1, bypass: false, cpuFanout: false };
    let balance = false;
    for (const o of occurrences) {
      switch (o.name) {
        case 'queue-num': r.queue = parseUint32(o, 'NFQUEUE', 0, 0xffff); break;
        case 'queue-balance': {
          const { lo, hi, count } = parseUintRange(o, 'NFQUEUE', 0xfffe);
          if (count !== 2) fail('BAD_VALUE', `NFQUEUE: bad range "${o.arg}"`, o.argSpan, o.arg);
          if (lo >= hi) fail('BAD_VALUE', `NFQUEUE: ${lo} should be less than ${hi}`, o.argSpan, o.arg);
          r.queue = lo;
          r.total = hi - lo + 1;
          balance = true;
          break;
        }
        case 'queue-bypass': r.bypass = true; break;
        case 'queue-cpu-fanout':
          if (!balance && !occurrences.some((x) => x.name === 'queue-balance')) fail('MISSING_OPTION', 'NFQUEUE: --queue-cpu-fanout needs --queue-balance', o.span, o.written);
          r.cpuFanout = true;
          break;
        default: unknownOption('NFQUEUE', o);
      }
    }
    return r;
  },
  save(o) {
    const out = [o.total > 1 ? `--queue-balance ${o.queue}:${o.queue + o.total - 1}` : `--queue-num ${o.queue}`];
    if (o.bypass) out.push('--queue-bypass');
    if (o.cpuFanout) out.push('--queue-cpu-fanout');
    return out.join(' ');
  },
};
