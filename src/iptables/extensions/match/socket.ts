/**
 * `-m socket` (`libxt_socket.c` revision 3, kernel `xt_socket.c`): an arriving packet belongs
 * to a local socket (PREROUTING, INPUT). Options `--transparent`, `--nowildcard`,
 * `--restore-skmark`, printed in that order.
 *
 * Evaluated as `socket_match` does: the packet's socket is the one TPROXY assigned it, else the
 * namespace's connection with its 4-tuple (a request or TIME_WAIT one included), else the
 * listener of its destination (`nf_sk_lookup_slow_v4`/`_v6`). A listener bound to the wildcard
 * address is ignored unless `--nowildcard`; `--transparent` wants an IP_TRANSPARENT socket;
 * `--restore-skmark` copies the socket's mark to the packet when a full socket matches. A packet
 * evaluated without a namespace (no socket table) finds no socket, as do ICMP errors, whose
 * inner packet the engine does not keep.
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
  lower(o) {
    return (p) => {
      const sk = p.socketLookup ? p.socketLookup() : null;
      if (sk === null) return false;
      // socket_match: "wildcard" is a full socket bound to the any address, ignored unless
      // XT_SOCKET_NOWILDCARD; XT_SOCKET_TRANSPARENT wants IP_TRANSPARENT.
      const wildcard = !o.nowildcard && sk.full && sk.wildcard;
      const transparent = o.transparent ? sk.transparent : true;
      if (o.restoreSkmark && !wildcard && transparent && sk.full && p.setMark) p.setMark(sk.mark);
      return !wildcard && transparent;
    };
  },
};
