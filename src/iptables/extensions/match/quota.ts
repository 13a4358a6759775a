/**
 * `-m quota` (`libxt_quota.c`, kernel `xt_quota.c`): holds while the rule's byte quota lasts;
 * each matching packet's length is taken from it (a packet larger than what remains empties it
 * and does not match). `!` inverts. The quota belongs to the loaded rule, as in the kernel: it
 * lasts as long as the lowered rule set.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { bang, parseUint64, requireOption, unknownOption } from '../values.js';

/** Options of `-m quota`. */
export interface QuotaOptions {
  readonly negated: boolean;
  /** Bytes, as a decimal string (64-bit). */
  readonly quota: string;
}

/** `-m quota`. */
export const quota: MatchExtension<QuotaOptions> = {
  kind: 'match',
  name: 'quota',
  family: 'both',
  options: [{ name: 'quota', arg: true, negatable: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'quota', 'quota');
    let r: QuotaOptions = { negated: false, quota: '0' };
    for (const o of occurrences) {
      if (o.name !== 'quota') unknownOption('quota', o);
      r = { negated: o.negated, quota: parseUint64(o, 'quota').toString() };
    }
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--quota ${o.quota}`;
  },
  lower(o) {
    // quota_mt: "if (priv->quota >= skb->len) { priv->quota -= skb->len; ret = !ret; } else priv->quota = 0"
    let left = BigInt(o.quota);
    const negated = o.negated;
    return (p) => {
      const len = BigInt(p.length);
      if (left >= len) {
        left -= len;
        return !negated;
      }
      left = 0n;
      return negated;
    };
  },
};
