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

/** A fresh, full bucket holding `cap` at time `now` (in credit units). */
export function newBucket(cap: bigint, now: bigint): Bucket {
  return { credit: cap, prev: now };
}

/**
 * Refills `b` (one credit per unit of time since its last packet, at most `cap`), then takes
 * `cost` if it has that much: whether the packet got through.
 */
export function takeToken(b: Bucket, cost: bigint, cap: bigint, now: bigint): boolean {
  if (now > b.prev) {
    b.credit += now - b.prev;
    if (b.credit > cap) b.credit = cap;
  }
  b.prev = now;
  if (b.credit >= cost) {
    b.credit -= cost;
    return true;
  }
  return false;
}

/** Seconds (possibly fractional) to scale units (`scale` per second), rounded down. */
export function toUnits(seconds: number, scale: number): bigint {
  return BigInt(Math.floor(seconds * scale));
}
