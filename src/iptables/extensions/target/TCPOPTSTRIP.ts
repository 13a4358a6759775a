/**
 * `-j TCPOPTSTRIP` (`libxt_TCPOPTSTRIP.c`, kernel `xt_TCPOPTSTRIP.c`): removes the listed TCP
 * options (`--strip-options wscale,mss,2,…`; 0 and 1 cannot be stripped). mangle table, `-p tcp`.
 * iptables-save prints the options by number, ascending. The simulator does not model TCP
 * options: the target continues.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { argOf, badValue, strtoul, unknownOption } from '../values.js';

const OPTION_NAMES: readonly (readonly [string, number])[] = [
  ['wscale', 3], ['mss', 2], ['sack-permitted', 4], ['sack', 5], ['timestamp', 8], ['md5', 19],
];

/** Options of `-j TCPOPTSTRIP`. */
export interface TcpoptstripOptions {
  /** Option kinds, ascending. */
  readonly options: readonly number[];
}

/** `-j TCPOPTSTRIP`. */
export const TCPOPTSTRIP: TargetExtension<TcpoptstripOptions> = {
  kind: 'target',
  name: 'TCPOPTSTRIP',
  family: 'both',
  terminal: false,
  options: [{ name: 'strip-options', arg: true }],
  placement: { tables: ['mangle'], protocols: ['tcp'] },
  parse(occurrences) {
    const set = new Set<number>();
    for (const o of occurrences) {
      if (o.name !== 'strip-options') unknownOption('TCPOPTSTRIP', o);
      for (const item of argOf(o).split(',')) {
        const named = OPTION_NAMES.find(([n]) => n === item)?.[1];
        const n = named ?? strtoul(item, 0, 255);
        if (n === null) badValue(o, `TCPOPTSTRIP: bad TCP option value "${item}"`);
        if (n < 2) badValue(o, 'TCPOPTSTRIP: option value may not be 0 or 1');
        if (set.has(n)) badValue(o, `TCPOPTSTRIP: option "${item}" already specified`);
        set.add(n);
      }
    }
    return { options: [...set].sort((a, b) => a - b) };
  },
  save(o) {
    return o.options.length > 0 ? `--strip-options ${o.options.join(',')}` : '';
  },
};
