/**
 * `-m limit` (`libxt_limit.c`, kernel `xt_limit.c`): a token bucket, `--limit rate[/unit]`
 * (default 3/hour) and `--limit-burst n` (default 5). iptables-save prints the rate in the
 * largest unit that keeps it exact (`5/min`, `10000/sec`) and the burst only when not 5.
 *
 * The bucket belongs to the loaded rule and refills from the namespace's virtual clock. iptables
 * 1.8.9 (nf_tables) loads `-m limit` as the native `limit rate R/UNIT burst B packets` expression
 * (`add_nft_limit`: R and UNIT as iptables-save prints them), so the bucket is nft_limit's: it
 * holds `B` packets' worth of nanoseconds, starts full, and each packet costs `UNIT / R`.
 *
 * @module
 */
import { newBucket, takeToken, type Bucket } from '../bucket.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, parseUint32, unknownOption } from '../values.js';

/** `XT_LIMIT_SCALE` (include/uapi/linux/netfilter/xt_limit.h). */
export const XT_LIMIT_SCALE = 10000;
/** `XT_LIMIT_BURST`: the default burst. */
export const XT_LIMIT_BURST = 5;

/** Options of `-m limit`. */
export interface LimitOptions {
  /** Average interval between packets in 1/10000 s (`XT_LIMIT_SCALE * unit / rate`). */
  readonly avg: number;
  readonly burst: number;
}

const UNITS: readonly (readonly [string, number])[] = [['second', 1], ['minute', 60], ['hour', 3600], ['day', 86400]];
const RATES: readonly (readonly [string, number])[] = [
  ['day', XT_LIMIT_SCALE * 86400], ['hour', XT_LIMIT_SCALE * 3600], ['min', XT_LIMIT_SCALE * 60], ['sec', XT_LIMIT_SCALE],
];

/** `parse_rate`: `n[/second|/minute|/hour|/day]` (unit prefixes accepted); n from `atoi`. */
function parseRate(o: OptionOccurrence): number {
  const text = argOf(o);
  const slash = text.indexOf('/');
  let mult = 1;
  if (slash >= 0) {
    const unit = text.slice(slash + 1).toLowerCase();
    const hit = unit.length > 0 ? UNITS.find(([n]) => n.startsWith(unit)) : undefined;
    if (!hit) badValue(o, `limit: bad rate "${text}"`);
    mult = hit[1];
  }
  const m = /^\s*[+-]?\d+/.exec(text);
  const r = m ? parseInt(m[0], 10) : 0;
  if (!(r > 0)) badValue(o, `limit: bad rate "${text}"`);
  const avg = Math.floor((XT_LIMIT_SCALE * mult) / r);
  if (avg === 0) badValue(o, `limit: rate too fast "${text}"`);
  return avg;
}

/** `print_rate`. */
export function formatRate(period: number): string {
  if (period === 0) return 'inf';
  let i = 1;
  for (; i < RATES.length; i++) {
    const mult = RATES[i]![1];
    if (period > mult || Math.floor(mult / period) < mult % period) break;
  }
  const [name, mult] = RATES[i - 1]!;
  return `${Math.floor(mult / period)}/${name}`;
}

/** `-m limit`. */
export const limit: MatchExtension<LimitOptions> = {
  kind: 'match',
  name: 'limit',
  family: 'both',
  options: [
    { name: 'limit', arg: true },
    { name: 'limit-burst', arg: true },
  ],
  parse(occurrences) {
    let avg = Math.floor((XT_LIMIT_SCALE * 3600) / 3);
    let burst = XT_LIMIT_BURST;
    for (const o of occurrences) {
      if (o.name === 'limit') avg = parseRate(o);
      else if (o.name === 'limit-burst') burst = parseUint32(o, 'limit', 0, 10000);
      else unknownOption('limit', o);
    }
    return { avg, burst };
  },
  save(o) {
    return `--limit ${formatRate(o.avg)}${o.burst !== XT_LIMIT_BURST ? ` --limit-burst ${o.burst}` : ''}`;
  },
  lower(o) {
    // add_nft_limit + nft_limit_init: cost = unit * NSEC_PER_SEC / rate, tokens_max = cost * burst.
    const { rate, unit } = nftRate(o.avg);
    const cost = (BigInt(unit) * 1_000_000_000n) / BigInt(rate);
    const cap = cost * BigInt(o.burst);
    let bucket: Bucket | null = null;
    return (p) => {
      const now = BigInt(Math.round((p.now ?? 0) * 1e6)) * 1000n;
      bucket ??= newBucket(cap, now);
      return takeToken(bucket, cost, cap, now);
    };
  },
};

/** `add_nft_limit`: the rate and unit (seconds) that iptables-nft gives the kernel. */
function nftRate(avg: number): { rate: number; unit: number } {
  let i = 1;
  for (; i < RATES.length; i++) {
    const mult = RATES[i]![1];
    if (avg > mult || Math.floor(mult / avg) < mult % avg) break;
  }
  const mult = RATES[i - 1]![1];
  return { rate: Math.floor(mult / avg), unit: mult / XT_LIMIT_SCALE };
}
