/**
 * Ports and port ranges: `portRange()` and the port and multiport-list generators the rule
 * arbitraries share.
 *
 * @module
 */
import * as fc from 'fast-check';
import { badConstraint, checkBool, checkInt, checkKnownKeys, checkOrder } from './constraints.js';

/** Ports that keep turning up in pods' rule sets: the proxies', DNS, HTTP, the probes'. @internal */
export const WELL_KNOWN_PORTS: readonly number[] = [
  80, 443, 53, 8080, 4140, 4143, 4190, 4191, 15001, 15006, 15008, 15020, 15021, 15090, 22, 3306, 6443, 9090,
];

/**
 * An inclusive port range. A single port has `min === max`.
 *
 * @example
 * ```ts
 * const r: PortRange = { min: 8000, max: 8080 };
 * ```
 */
export interface PortRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Constraints of {@link portRange}.
 *
 * @example
 * ```ts
 * const c: PortRangeConstraints = { min: 1024, maxWidth: 100 };
 * ```
 */
export interface PortRangeConstraints {
  /**
   * Lowest port.
   * @defaultValue 0
   */
  readonly min?: number;
  /**
   * Highest port.
   * @defaultValue 65535
   */
  readonly max?: number;
  /**
   * Largest `max - min` of a range.
   * @defaultValue 65535
   */
  readonly maxWidth?: number;
  /**
   * Whether single ports (`min === max`) are generated.
   * @defaultValue true
   */
  readonly single?: boolean;
  /**
   * Whether true ranges (`min < max`) are generated.
   * @defaultValue true
   */
  readonly ranges?: boolean;
}

/** One port in [min, max], biased towards {@link WELL_KNOWN_PORTS}. @internal */
export function port(min = 0, max = 65535): fc.Arbitrary<number> {
  const known = WELL_KNOWN_PORTS.filter((p) => p >= min && p <= max);
  const any = fc.integer({ min, max });
  return known.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 1 }, { arbitrary: any, weight: 1 }) : any;
}

/**
 * Port ranges for matches (`--dport 8000:8080`), NAT targets (`--to-ports 4140-4150`) and mesh
 * settings (`--outbound-ports-to-ignore 8000-8080`). A range shrinks towards a single port.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { portRange } from 'netfilter-sim/arbitraries';
 * fc.sample(portRange({ min: 1 }), { seed: 7, numRuns: 2 }); // e.g. [{ min: 443, max: 443 }, { min: 1200, max: 1288 }]
 * ```
 */
export function portRange(constraints: PortRangeConstraints = {}): fc.Arbitrary<PortRange> {
  const name = 'portRange';
  checkKnownKeys(name, constraints, ['min', 'max', 'maxWidth', 'single', 'ranges']);
  const min = checkInt(name, 'min', constraints.min, 0, 65535, 0);
  const max = checkInt(name, 'max', constraints.max, 0, 65535, 65535);
  checkOrder(name, 'min', min, 'max', max);
  const maxWidth = checkInt(name, 'maxWidth', constraints.maxWidth, 0, 65535, 65535);
  const single = checkBool(name, 'single', constraints.single, true);
  const ranges = checkBool(name, 'ranges', constraints.ranges, true);
  if (!single && !ranges) badConstraint(name, 'single', 'and "ranges" are both false: nothing to generate');
  if (ranges && !single && (max === min || maxWidth === 0)) {
    badConstraint(name, 'ranges', `cannot make a true range within ${min}..${max} (maxWidth ${maxWidth})`);
  }
  const singleArb = port(min, max).map((p) => ({ min: p, max: p }));
  if (!ranges || max === min || maxWidth === 0) return singleArb;
  // A range is a start and a width; the width shrinks to 1, and the start keeps the end in bounds.
  const rangeArb = fc
    .record({ start: port(min, max - 1), width: fc.integer({ min: 1, max: Math.min(maxWidth, max - min) }) })
    .map(({ start, width }) => {
      const lo = Math.min(start, max - width);
      return { min: lo, max: lo + width };
    });
  if (!single) return rangeArb;
  return fc.oneof({ arbitrary: singleArb, weight: 3 }, { arbitrary: rangeArb, weight: 1 });
}

/** `N` or `L:U`, as iptables writes a port range. @internal */
export function formatPortRange(r: PortRange, separator = ':'): string {
  return r.min === r.max ? `${r.min}` : `${r.min}${separator}${r.max}`;
}

/** The slots a multiport list uses: a port takes one, a range two (xt_multiport). @internal */
export function multiportWeight(list: readonly PortRange[]): number {
  return list.reduce((n, r) => n + (r.min === r.max ? 1 : 2), 0);
}

/** The longest prefix of `list` that fits in `limit` multiport slots. @internal */
export function fitMultiport(list: readonly PortRange[], limit = 15): PortRange[] {
  const out: PortRange[] = [];
  let n = 0;
  for (const r of list) {
    const w = r.min === r.max ? 1 : 2;
    if (n + w > limit) break;
    out.push(r);
    n += w;
  }
  return out;
}

/** A multiport list of 1 to 15 slots (ranges count two), as xt_multiport accepts. @internal */
export function multiportList(maxSlots = 15): fc.Arbitrary<PortRange[]> {
  return fc
    .array(portRange({ maxWidth: 1000 }), { minLength: 1, maxLength: maxSlots })
    .map((list) => fitMultiport(list, maxSlots));
}
