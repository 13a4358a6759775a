/**
 * Addresses and networks: `cidr()` and the address generators the other arbitraries share.
 *
 * Values are text, as iptables, the mesh tools and the `connect` command read them. Generators
 * mix well-known addresses of a pod's world (its own address, loopback, a service VIP) with
 * uniformly drawn ones, so rule sets and probes meet often enough for properties to bite.
 *
 * @module
 */
import * as fc from 'fast-check';
import type { Family } from '../model/types.js';
import { formatAddress, parseAddress, prefixMask } from '../model/address.js';
import { checkBool, checkFamily, checkInt, checkKnownKeys, checkOrder } from './constraints.js';
import { expectArgument } from '../model/guard.js';

/** Addresses a pod's rules and connections keep meeting (IPv4). @internal */
export const WELL_KNOWN_IPV4: readonly string[] = [
  '10.0.0.2', '127.0.0.1', '10.96.0.10', '10.0.0.5', '10.1.0.5', '0.0.0.0', '192.168.1.1',
  '172.16.0.1', '127.0.0.6', '169.254.169.254', '10.0.0.1', '255.255.255.255',
];

/** Addresses a pod's rules and connections keep meeting (IPv6). @internal */
export const WELL_KNOWN_IPV6: readonly string[] = [
  'fd00::2', '::1', 'fd00::10', 'fd00::5', 'fd01::5', '::', '2001:db8::1', 'fe80::1', '::6', 'fd00::1',
];

/** One address as 32-bit words, biased towards {@link WELL_KNOWN_IPV4} / {@link WELL_KNOWN_IPV6}. @internal */
export function addressWords(family: Family): fc.Arbitrary<readonly number[]> {
  const known = (family === 4 ? WELL_KNOWN_IPV4 : WELL_KNOWN_IPV6).map((t) => parseAddress(t, family)!);
  const word = fc.integer({ min: 0, max: 0xffffffff });
  const any = family === 4 ? word.map((w) => [w]) : fc.tuple(word, word, word, word);
  return fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 2 }, { arbitrary: any, weight: 3 });
}

/** One address as text. @internal */
export function addressText(family: Family): fc.Arbitrary<string> {
  return addressWords(family).map((w) => formatAddress(w, family));
}

/**
 * Constraints of {@link cidr}.
 *
 * @example
 * ```ts
 * const c: CidrConstraints = { family: 6, minPrefix: 64 };
 * ```
 */
export interface CidrConstraints {
  /**
   * Address family.
   * @defaultValue 4
   */
  readonly family?: Family;
  /**
   * Shortest prefix length.
   * @defaultValue 0
   */
  readonly minPrefix?: number;
  /**
   * Longest prefix length.
   * @defaultValue 32 for IPv4, 128 for IPv6
   */
  readonly maxPrefix?: number;
  /**
   * Keep host bits in the address (`10.1.2.3/8`), as users often write and iptables accepts
   * (it clears them). By default the network address is written (`10.0.0.0/8`).
   * @defaultValue false
   */
  readonly hostBits?: boolean;
}

/** A network address and prefix, pre-split. @internal */
export interface CidrParts {
  readonly words: readonly number[];
  readonly prefix: number;
}

/** The validated form of {@link CidrConstraints}. @internal */
export function cidrParts(name: string, constraints: CidrConstraints = {}): fc.Arbitrary<CidrParts> {
  checkKnownKeys(name, constraints, ['family', 'minPrefix', 'maxPrefix', 'hostBits']);
  const family = checkFamily(name, constraints.family);
  const bits = family === 4 ? 32 : 128;
  const minPrefix = checkInt(name, 'minPrefix', constraints.minPrefix, 0, bits, 0);
  const maxPrefix = checkInt(name, 'maxPrefix', constraints.maxPrefix, 0, bits, bits);
  checkOrder(name, 'minPrefix', minPrefix, 'maxPrefix', maxPrefix);
  const hostBits = checkBool(name, 'hostBits', constraints.hostBits, false);
  const common = [bits, 24, 16, 8, 64, 48].filter((p) => p >= minPrefix && p <= maxPrefix && p <= bits);
  const prefix = common.length > 0
    ? fc.oneof({ arbitrary: fc.constantFrom(...common), weight: 2 }, { arbitrary: fc.integer({ min: minPrefix, max: maxPrefix }), weight: 1 })
    : fc.integer({ min: minPrefix, max: maxPrefix });
  return fc.record({ words: addressWords(family), prefix }).map(({ words, prefix }) => {
    if (hostBits) return { words, prefix };
    const mask = prefixMask(prefix, family);
    return { words: words.map((w, i) => (w & mask[i]!) >>> 0), prefix };
  });
}

/**
 * Networks in the `address/prefix` notation iptables, proxy-init and istio-iptables read
 * (`10.96.0.0/12`, `fd00::/64`). The address is the network address unless `hostBits` is set.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { cidr } from 'netfilter-sim/arbitraries';
 * fc.sample(cidr({ minPrefix: 8 }), { seed: 1, numRuns: 3 }); // e.g. ['10.96.0.0/16', '127.0.0.1/32', '192.0.0.0/8']
 * ```
 */
export function cidr(constraints: CidrConstraints = {}): fc.Arbitrary<string> {
  expectArgument(constraints, 'object', 'constraints');
  const family = constraints.family ?? 4;
  return cidrParts('cidr', constraints).map(({ words, prefix }) => `${formatAddress(words, family)}/${prefix}`);
}
