/**
 * Sets of integers as sorted, disjoint, non-adjacent inclusive intervals: one field of a probe
 * region (addresses as `bigint`, so IPv6 fits; ports and ids too, for one arithmetic).
 *
 * @module
 */

/** `[lo0, hi0, lo1, hi1, …]`, ascending, with `hi_i + 1 < lo_{i+1}`. @internal */
export type IntervalSet = readonly bigint[];

/** The empty set. @internal */
export const EMPTY: IntervalSet = [];

/** `[lo, hi]` (empty when `lo > hi`). @internal */
export function range(lo: bigint, hi: bigint): IntervalSet {
  return lo <= hi ? [lo, hi] : EMPTY;
}

/** Normalises any list of intervals (unsorted, overlapping) into an {@link IntervalSet}. @internal */
export function normalize(pairs: readonly (readonly [bigint, bigint])[]): IntervalSet {
  const sorted = pairs.filter(([a, b]) => a <= b).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const out: bigint[] = [];
  for (const [a, b] of sorted) {
    const n = out.length;
    if (n > 0 && a <= out[n - 1]! + 1n) {
      if (b > out[n - 1]!) out[n - 1] = b;
    } else out.push(a, b);
  }
  return out;
}

/** The first interval of `s` at or after `from` (an even index) that ends at or above `v`. */
function seek(s: IntervalSet, from: number, v: bigint): number {
  // A short step first (the sets meet in order), then a binary search over the rest.
  if (from >= s.length || s[from + 1]! >= v) return from;
  if (from + 2 >= s.length || s[from + 3]! >= v) return from + 2;
  let lo = from / 2 + 2;
  let hi = s.length / 2;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (s[m * 2 + 1]! < v) lo = m + 1;
    else hi = m;
  }
  return lo * 2;
}

/** `a ∩ b`. @internal */
export function intersect(a: IntervalSet, b: IntervalSet): IntervalSet {
  const out: bigint[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    // Skip, by binary search, the intervals of one set that end before the other's starts.
    if (a[i + 1]! < b[j]!) {
      i = seek(a, i, b[j]!);
      continue;
    }
    if (b[j + 1]! < a[i]!) {
      j = seek(b, j, a[i]!);
      continue;
    }
    const lo = a[i]! > b[j]! ? a[i]! : b[j]!;
    const hi = a[i + 1]! < b[j + 1]! ? a[i + 1]! : b[j + 1]!;
    if (lo <= hi) out.push(lo, hi);
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return out;
}

/** The least value of `s` outside `not` and unequal to every one of `taken`, or null. @internal */
export function leastFree(s: IntervalSet, not: IntervalSet, taken: readonly bigint[]): bigint | null {
  let j = 0;
  for (let i = 0; i < s.length; i += 2) {
    let v = s[i]!;
    const hi = s[i + 1]!;
    while (v <= hi) {
      j = seek(not, j, v);
      if (j < not.length && not[j]! <= v) {
        v = not[j + 1]! + 1n;
        continue;
      }
      if (taken.includes(v)) {
        v++;
        continue;
      }
      return v;
    }
  }
  return null;
}

/** `a ∖ b`. @internal */
export function subtract(a: IntervalSet, b: IntervalSet): IntervalSet {
  const out: bigint[] = [];
  let j = 0;
  for (let i = 0; i < a.length; i += 2) {
    let lo = a[i]!;
    const hi = a[i + 1]!;
    j = seek(b, j, lo);
    let k = j;
    while (lo <= hi && k < b.length && b[k]! <= hi) {
      if (b[k]! > lo) out.push(lo, b[k]! - 1n);
      lo = b[k + 1]! + 1n;
      k += 2;
    }
    if (lo <= hi) out.push(lo, hi);
  }
  return out;
}

/** `a ∪ b`. @internal */
export function union(a: IntervalSet, b: IntervalSet): IntervalSet {
  const pairs: [bigint, bigint][] = [];
  for (let i = 0; i < a.length; i += 2) pairs.push([a[i]!, a[i + 1]!]);
  for (let i = 0; i < b.length; i += 2) pairs.push([b[i]!, b[i + 1]!]);
  return normalize(pairs);
}

/** Whether `v ∈ s`. @internal */
export function contains(s: IntervalSet, v: bigint): boolean {
  let lo = 0;
  let hi = s.length / 2 - 1;
  while (lo <= hi) {
    const m = (lo + hi) >> 1;
    if (v < s[m * 2]!) hi = m - 1;
    else if (v > s[m * 2 + 1]!) lo = m + 1;
    else return true;
  }
  return false;
}

/** Whether `a` and `b` hold the same values. @internal */
export function same(a: IntervalSet, b: IntervalSet): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether the set holds exactly one value. @internal */
export function isSingleton(s: IntervalSet): boolean {
  return s.length === 2 && s[0] === s[1];
}

/** How many values the set holds. @internal */
export function size(s: IntervalSet): bigint {
  let n = 0n;
  for (let i = 0; i < s.length; i += 2) n += s[i + 1]! - s[i]! + 1n;
  return n;
}

/** The set split at cut points: each cut `c` starts a new piece at `c`. @internal */
export function splitAt(s: IntervalSet, cuts: readonly bigint[]): IntervalSet[] {
  const sorted = [...new Set(cuts)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const out: IntervalSet[] = [];
  let k = 0;
  for (let i = 0; i < s.length; i += 2) {
    let lo = s[i]!;
    const hi = s[i + 1]!;
    while (k < sorted.length && sorted[k]! <= lo) k++;
    while (k < sorted.length && sorted[k]! <= hi) {
      out.push([lo, sorted[k]! - 1n]);
      lo = sorted[k]!;
      k++;
    }
    out.push([lo, hi]);
  }
  return out;
}
