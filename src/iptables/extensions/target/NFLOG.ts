/**
 * `-j NFLOG` (`libxt_NFLOG.c`, kernel `xt_NFLOG.c`): sends the packet to a netlink log group and
 * continues. Saved as `--nflog-prefix`, `--nflog-group` (when not 0), `--nflog-size` (or the
 * old `--nflog-range`, which iptables-nft drops), `--nflog-threshold` (when not 0).
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { TargetExtension } from '../types.js';
import { argOf, parseUint32, saveString, unknownOption } from '../values.js';

/** Options of `-j NFLOG`. */
export interface NflogOptions {
  readonly group: number;
  readonly prefix?: string;
  /** `--nflog-size` (copy length); `range` marks the deprecated `--nflog-range` spelling. */
  readonly size?: number;
  readonly range?: number;
  readonly threshold: number;
}

/** `-j NFLOG`. */
export const NFLOG: TargetExtension<NflogOptions> = {
  kind: 'target',
  name: 'NFLOG',
  family: 'both',
  terminal: false,
  options: [
    { name: 'nflog-group', arg: true },
    { name: 'nflog-prefix', arg: true },
    { name: 'nflog-range', arg: true },
    { name: 'nflog-size', arg: true },
    { name: 'nflog-threshold', arg: true },
  ],
  parse(occurrences) {
    const r: { -readonly [K in keyof NflogOptions]: NflogOptions[K] } = { group: 0, threshold: 0 };
    for (const o of occurrences) {
      switch (o.name) {
        case 'nflog-group': r.group = parseUint32(o, 'NFLOG', 0, 65535); break;
        case 'nflog-prefix': {
          const text = argOf(o);
          if (text.includes('\n')) fail('BAD_VALUE', 'NFLOG: newlines are not allowed in --nflog-prefix', o.argSpan ?? o.span, text);
          r.prefix = text.slice(0, 63);
          break;
        }
        case 'nflog-range': r.range = parseUint32(o, 'NFLOG'); break;
        case 'nflog-size': r.size = parseUint32(o, 'NFLOG'); break;
        case 'nflog-threshold': r.threshold = parseUint32(o, 'NFLOG', 0, 65535); break;
        default: unknownOption('NFLOG', o);
      }
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.prefix) out.push(`--nflog-prefix ${saveString(o.prefix)}`);
    if (o.group) out.push(`--nflog-group ${o.group}`);
    // iptables-nft 1.8.9 keeps --nflog-size, drops the old --nflog-range, and prints a non-zero
    // threshold (observed: "--nflog-threshold 1" prints back, "0" does not).
    if (o.size !== undefined) out.push(`--nflog-size ${o.size}`);
    if (o.threshold !== 0) out.push(`--nflog-threshold ${o.threshold}`);
    return out.join(' ');
  },
};
