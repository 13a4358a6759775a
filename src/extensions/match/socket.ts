/**
 * `-m socket` (`libxt_socket.c` revision 3, kernel `xt_socket.c`): an arriving packet belongs
 * to a local socket (PREROUTING, INPUT). Options `--transparent`, `--nowildcard`,
 * `--restore-skmark`, printed in that order.
 *
 * Not evaluated faithfully: the socket lookup happens before routing and is not modelled;
 * lower() assumes no socket is found, so the match never holds.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { unknownOption } from '../values.js';

/** Options of `-m socket`. */
export interface SocketOptions {
  readonly transparent: boolean;
  readonly nowildcard: boolean;
  readonly restoreSkmark: boolean;
}

/** `-m socket`. */
export const socket: MatchExtension<SocketOptions> = {
  kind: 'match',
  name: 'socket',
  family: 'both',
  options: [
    { name: 'transparent', arg: false },
    { name: 'nowildcard', arg: false },
    { name: 'restore-skmark', arg: false },
  ],
  placement: { hooks: ['PREROUTING', 'INPUT'] },
  parse(occurrences) {
    const r = { transparent: false, nowildcard: false, restoreSkmark: false };
    for (const o of occurrences) {
      if (o.name === 'transparent') r.transparent = true;
      else if (o.name === 'nowildcard') r.nowildcard = true;
      else if (o.name === 'restore-skmark') r.restoreSkmark = true;
      else unknownOption('socket', o);
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.transparent) out.push('--transparent');
    if (o.nowildcard) out.push('--nowildcard');
    if (o.restoreSkmark) out.push('--restore-skmark');
    return out.join(' ');
  },
  lower() {
    return () => false;
  },
  evaluates: 'assumed',
  assumption() {
    return 'the early socket lookup is not modelled: no socket is taken to be found';
  },
};
