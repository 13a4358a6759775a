/**
 * The token bucket of `xt_limit` and `xt_hashlimit` on the namespace's virtual clock: a bucket
 * holds `avg * burst` of credit (time, in the rule's scale units), starts full, gains one unit per
 * unit of time that passes, and each matching packet costs `avg`. A packet that finds less than
 * `avg` left does not get through. (`rateinfo_recalc`, `limit_mt`.)
 *
 * @module
 */

/** One bucket's state. */
export interface Bucket {
  credit: bigint;
  prev: bigint;
}

/** A fresh, full bucket at time `now` (scale units). */
export function newBucket(avg: bigint, burst: bigint, now: bigint): Bucket {
  return { credit: avg * burst, prev: now };
}

/** Refills `b` up to `avg * burst` for the time since its last packet, then takes `avg` if it can. */
export function takeToken(b: Bucket, avg: bigint, burst: bigint, now: bigint): boolean {
  const cap = avg * burst;
  if (now > b.prev) {
    b.credit += now - b.prev;
    if (b.credit > cap) b.credit = cap;
  }
  b.prev = now;
  if (b.credit >= avg) {
    b.credit -= avg;
    return true;
  }
  return false;
}

/** Seconds (possibly fractional) to scale units (`scale` per second), rounded down. */
export function toUnits(seconds: number, scale: number): bigint {
  return BigInt(Math.floor(seconds * scale));
}
