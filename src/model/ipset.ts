/**
 * ipsets (the kernel's `ip_set` module): named sets of addresses, networks and ports that the
 * `set` match looks packets up in and the `SET` target adds to. Plain data; the engine keeps its
 * own mutable copy while a namespace runs.
 *
 * @module
 */
import type { Family } from './types.js';

/**
 * The set types modelled: `hash:ip`, `hash:net`, `hash:ip,port`, `hash:net,port`.
 *
 * @example
 * ```ts
 * const t: IpsetType = 'hash:ip';
 * ```
 */
export type IpsetType = 'hash:ip' | 'hash:net' | 'hash:ip,port' | 'hash:net,port';

/**
 * One member: an address with a prefix length (32/128 for `hash:ip`), for the `…,port` types a
 * protocol number and port, and `nomatch` (a `hash:net` exception).
 *
 * @example
 * ```ts
 * const e: IpsetEntry = { addr: [0x0a000005], prefix: 32, nomatch: false };
 * ```
 */
export interface IpsetEntry {
  readonly addr: readonly number[];
  readonly prefix: number;
  readonly proto?: number;
  readonly port?: number;
  readonly nomatch: boolean;
}

/**
 * A set as `ipset save` describes it.
 *
 * @example
 * ```ts
 * const s: Ipset = { name: 'istio-inpod-probes-v4', type: 'hash:ip', family: 4, entries: [] };
 * ```
 */
export interface Ipset {
  readonly name: string;
  readonly type: IpsetType;
  readonly family: Family;
  readonly entries: readonly IpsetEntry[];
}
