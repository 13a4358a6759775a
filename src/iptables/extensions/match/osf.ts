/**
 * `-m osf` (`libxt_osf.c`, kernel `xt_osf.c`, `nf_osf.c`): passive OS fingerprinting of a TCP SYN
 * against the fingerprints loaded with `nfnl_osf`. `[!] --genre NAME` (mandatory; cut to 31
 * characters, as the 32-byte field keeps it), `--ttl 0|1|2` (how the IP TTL is compared), `--log
 * 0|1|2`. iptables only; the kernel takes it with `-p tcp` only, from PREROUTING, INPUT and
 * FORWARD.
 *
 * Not evaluated: the namespace models neither TCP options nor a fingerprint list. The match is
 * assumed not to match (a namespace where nothing was loaded with `nfnl_osf` has no fingerprint
 * to match), and the trace says so.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { argOf, missing, noInvert, parseUint32, saveString, unknownOption } from '../values.js';

/** Options of `-m osf`. */
export interface OsfOptions {
  readonly genre: string;
  readonly negated: boolean;
  readonly ttl?: number;
  readonly log?: number;
}

/** `MAXGENRELEN`: the genre's field, with its terminating NUL. */
const MAX_GENRE = 32;

/** `-m osf` (IPv4). */
export const osf: MatchExtension<OsfOptions> = {
  kind: 'match',
  name: 'osf',
  family: 4,
  options: [
    { name: 'genre', arg: true, negatable: true },
    { name: 'ttl', arg: true },
    { name: 'log', arg: true },
  ],
  placement: { protocols: ['tcp'], hooks: ['PREROUTING', 'INPUT', 'FORWARD'] },
  parse(occurrences, ctx) {
    let genre: string | undefined;
    let negated = false;
    let ttl: number | undefined;
    let log: number | undefined;
    for (const o of occurrences) {
      if (o.name === 'genre') {
        genre = new TextDecoder().decode(new TextEncoder().encode(argOf(o)).subarray(0, MAX_GENRE - 1));
        negated = o.negated;
      } else if (o.name === 'ttl') {
        noInvert(o);
        ttl = parseUint32(o, 'osf', 0, 2);
      } else if (o.name === 'log') {
        noInvert(o);
        log = parseUint32(o, 'osf', 0, 2);
      } else unknownOption('osf', o);
    }
    if (genre === undefined) missing(ctx, 'osf', 'option "--genre" must be specified');
    return { genre, negated, ...(ttl !== undefined ? { ttl } : {}), ...(log !== undefined ? { log } : {}) };
  },
  save(o) {
    const out = [`${o.negated ? '! ' : ''}--genre ${saveString(o.genre)}`];
    if (o.ttl !== undefined) out.push(`--ttl ${o.ttl}`);
    if (o.log !== undefined) out.push(`--log ${o.log}`);
    return out.join(' ');
  },
  lower: () => () => false,
  evaluates: 'assumed',
  assumption(o) {
    return `OS fingerprints are not modelled: no fingerprint is loaded (nfnl_osf), so -m osf ${o.negated ? '! ' : ''}--genre ${o.genre} is taken not to match`;
  },
};
