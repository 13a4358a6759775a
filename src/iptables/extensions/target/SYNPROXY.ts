/**
 * `-j SYNPROXY` (`libxt_SYNPROXY.c`, kernel `ipt_SYNPROXY.c`): answers TCP SYNs with SYN cookies
 * on behalf of the server (`--mss`, `--wscale`, `--sack-perm`, `--timestamp`, `--ecn`). Needs
 * `-p tcp`; INPUT and FORWARD. iptables-save prints sack-perm, timestamp, wscale, mss, ecn. The
 * simulator does not model SYN cookies: the target drops what it is given (the kernel drops
 * every packet it does not turn into a cookie exchange).
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { parseUint32, unknownOption } from '../values.js';

/** Options of `-j SYNPROXY`. */
export interface SynproxyOptions {
  readonly sackPerm: boolean;
  readonly timestamp: boolean;
  readonly wscale?: number;
  readonly mss?: number;
  readonly ecn: boolean;
}

/** `-j SYNPROXY`. */
export const SYNPROXY: TargetExtension<SynproxyOptions> = {
  kind: 'target',
  name: 'SYNPROXY',
  family: 'both',
  terminal: true,
  options: [
    { name: 'sack-perm', arg: false },
    { name: 'timestamp', arg: false },
    { name: 'wscale', arg: true },
    { name: 'mss', arg: true },
    { name: 'ecn', arg: false },
  ],
  placement: { hooks: ['INPUT', 'FORWARD'], protocols: ['tcp'] },
  parse(occurrences) {
    const r: { -readonly [K in keyof SynproxyOptions]: SynproxyOptions[K] } = { sackPerm: false, timestamp: false, ecn: false };
    for (const o of occurrences) {
      switch (o.name) {
        case 'sack-perm': r.sackPerm = true; break;
        case 'timestamp': r.timestamp = true; break;
        case 'wscale': r.wscale = parseUint32(o, 'SYNPROXY'); break;
        case 'mss': r.mss = parseUint32(o, 'SYNPROXY'); break;
        case 'ecn': r.ecn = true; break;
        default: unknownOption('SYNPROXY', o);
      }
    }
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.sackPerm) out.push('--sack-perm');
    if (o.timestamp) out.push('--timestamp');
    if (o.wscale !== undefined) out.push(`--wscale ${o.wscale}`);
    if (o.mss !== undefined) out.push(`--mss ${o.mss}`);
    if (o.ecn) out.push('--ecn');
    return out.join(' ');
  },
};
