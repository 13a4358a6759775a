/**
 * `-m connbytes` (`libxt_connbytes.c`, kernel `xt_connbytes.c`): the connection's packet or byte
 * count (or average packet size) so far, in one direction or both, within `from[:to]`; `!`
 * swaps the bounds, as the kernel stores it. iptables-save prints the range, then
 * `--connbytes-mode`, then `--connbytes-dir`. The engine does not count a connection's traffic:
 * the count is taken to be 0 — an assumption the trace shows.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { MatchExtension } from '../types.js';
import { argOf, badValue, parseUint64, requireOption, unknownOption } from '../values.js';

const U64_MAX = 0xffffffffffffffffn;

/** Options of `-m connbytes`. */
export interface ConnbytesOptions {
  /** Decimal strings (64-bit), `from > to` when negated, as the kernel keeps them. */
  readonly from: string;
  readonly to: string;
  readonly mode: 'packets' | 'bytes' | 'avgpkt';
  readonly dir: 'original' | 'reply' | 'both';
}

/** `-m connbytes`. */
export const connbytes: MatchExtension<ConnbytesOptions> = {
  kind: 'match',
  name: 'connbytes',
  family: 'both',
  options: [
    { name: 'connbytes', arg: true, negatable: true },
    { name: 'connbytes-dir', arg: true },
    { name: 'connbytes-mode', arg: true },
  ],
  parse(occurrences, ctx) {
    for (const n of ['connbytes', 'connbytes-dir', 'connbytes-mode']) requireOption(ctx, occurrences, 'connbytes', n);
    let from = 0n;
    let to = U64_MAX;
    let mode: ConnbytesOptions['mode'] = 'packets';
    let dir: ConnbytesOptions['dir'] = 'original';
    for (const o of occurrences) {
      switch (o.name) {
        case 'connbytes': {
          const text = argOf(o);
          const parts = text.split(':');
          if (parts.length > 2) badValue(o, `connbytes: too many components for option "--connbytes" (max: 2)`);
          from = parts[0] === '' ? 0n : parseUint64(o, 'connbytes', parts[0]);
          to = parts.length === 2 ? (parts[1] === '' ? U64_MAX : parseUint64(o, 'connbytes', parts[1])) : U64_MAX;
          if (to < from) fail('BAD_VALUE', `connbytes: ${from} should be less than ${to}`, o.argSpan, o.arg);
          if (o.negated) [from, to] = [to, from];
          break;
        }
        case 'connbytes-dir':
          if (o.arg !== 'original' && o.arg !== 'reply' && o.arg !== 'both') badValue(o, `connbytes: unknown --connbytes-dir "${o.arg}"`);
          dir = o.arg;
          break;
        case 'connbytes-mode':
          if (o.arg !== 'packets' && o.arg !== 'bytes' && o.arg !== 'avgpkt') badValue(o, `connbytes: unknown --connbytes-mode "${o.arg}"`);
          mode = o.arg;
          break;
        default:
          unknownOption('connbytes', o);
      }
    }
    return { from: from.toString(), to: to.toString(), mode, dir };
  },
  save(o) {
    let from = BigInt(o.from);
    let to = BigInt(o.to);
    let neg = '';
    if (from > to) {
      neg = '! ';
      [from, to] = [to, from];
    }
    const range = to !== 0n && to < U64_MAX ? `${from}:${to}` : `${from}`;
    return `${neg}--connbytes ${range} --connbytes-mode ${o.mode} --connbytes-dir ${o.dir}`;
  },
  lower(o) {
    // connbytes_mt: "if (sinfo->count.to >= sinfo->count.from) return what <= to && what >= from;
    // else return what < to || what > from;" with what = 0.
    const from = BigInt(o.from);
    const to = BigInt(o.to);
    const v = to >= from ? 0n <= to && 0n >= from : 0n < to || 0n > from;
    return (p) => p.ct !== null && v;
  },
  evaluates: 'assumed',
  assumption(o) {
    return `connection traffic is not counted: the connection's ${o.mode} count is taken to be 0`;
  },
};
