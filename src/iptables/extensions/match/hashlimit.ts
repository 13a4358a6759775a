/**
 * `-m hashlimit` (`libxt_hashlimit.c` revision 3, kernel `xt_hashlimit.c`): a token bucket per
 * key, the key made of the packet's source/destination address (masked by
 * `--hashlimit-srcmask`/`--hashlimit-dstmask`) and ports as `--hashlimit-mode` lists; no mode
 * means one bucket for the rule. `--hashlimit-upto r` holds while the bucket has credit,
 * `--hashlimit-above r` while it has none. Rates are packets (`5/sec`, scale 1,000,000 per
 * second) or bytes (`10kb/s`). iptables-save prints the rate, the burst, the mode, the name, then
 * the table options that differ from their defaults.
 *
 * The engine keeps the buckets for the life of the lowered rule set and refills them from the
 * namespace's virtual clock, so packets-per-time limits are exact; byte rates are taken to hold
 * (an assumption the trace shows).
 *
 * @module
 */
import { diagnostic, fail } from '../../../model/errors.js';
import { utf8Length } from '../../../model/limits.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { newBucket, takeToken, toUnits, type Bucket } from '../bucket.js';
import { argOf, badValue, checkProcName, exclusive, parseUint32, requireOption, strtoul, strtoulPrefix, unknownOption } from '../values.js';

/** `XT_HASHLIMIT_SCALE_v2`. */
const SCALE = 1_000_000n;
const BURST_DEFAULT = 5n;
const BURST_MAX = 1_000_000n;
const GC_INTERVAL = 1000;
const BYTE_EXPIRE = 15;
const BYTE_EXPIRE_BURST = 60;
const BYTE_SHIFT = 4n;
const U32 = 0xffffffffn;
const U64 = 0xffffffffffffffffn;

/**
 * `user2credits` for revision 2+: credits per scale unit, `HZ * CREDITS_PER_JIFFY / SCALE` with
 * HZ 250 (Debian's kernels) and `CREDITS_PER_JIFFY = POW2_BELOW64(U64_MAX / (HZ * 86400))`.
 */
const HZ = 250n;
const CREDIT_FACTOR = (HZ * (1n << 39n)) / SCALE;

const MODE = { SIP: 1, DIP: 2, SPT: 4, DPT: 8 } as const;

/** Options of `-m hashlimit` (the kernel's `hashlimit_cfg3`; 64-bit values as decimal strings). */
export interface HashlimitOptions {
  readonly above: boolean;
  readonly bytes: boolean;
  /** Packets: seconds per packet × 1,000,000. Bytes: the kernel's cost. */
  readonly avg: string;
  readonly burst: string;
  /** {@link MODE} bits. */
  readonly mode: number;
  readonly name: string;
  readonly size: number;
  readonly max: number;
  readonly gcInterval: number;
  readonly expire: number;
  readonly srcmask: number;
  readonly dstmask: number;
  readonly rateMatch: boolean;
  readonly interval: number;
}

const RATES: readonly (readonly [string, bigint])[] = [
  ['day', SCALE * 86400n], ['hour', SCALE * 3600n], ['min', SCALE * 60n], ['sec', SCALE],
];

function costToBytes(cost: bigint): bigint {
  const r = cost !== 0n ? U32 / cost : U32;
  return (r - 1n) << BYTE_SHIFT;
}

function bytesToCost(bytes: bigint): bigint {
  const r = (bytes >> BYTE_SHIFT) & U32;
  return U32 / (r + 1n);
}

/** C's `atoll` prefix. */
function atoll(text: string): bigint {
  const m = /^\s*([+-]?\d+)/.exec(text);
  return m ? BigInt(m[1]!) : 0n;
}

/** `parse_bytes`: `N[kb|mb|b]/s`; undefined when the text is not a byte rate. */
function parseBytes(o: OptionOccurrence, text: string): bigint | undefined {
  const at = text.indexOf('b/s');
  if (at <= 0) return undefined;
  const r = atoll(text);
  if (r === 0n) return undefined;
  const unit = text[at - 1];
  const tmp = r * (unit === 'm' ? 1024n * 1024n : unit === 'k' ? 1024n : 1n);
  if (tmp > U64) badValue(o, `hashlimit: rate value too large "${tmp}"`);
  const cost = bytesToCost(tmp);
  if (cost === 0n) badValue(o, `hashlimit: rate too high "${text}"`);
  return cost;
}

/** `parse_rate`: `N[/second|/minute|/hour|/day]` (unit prefixes), returns avg and the unit's seconds. */
function parseRate(o: OptionOccurrence, text: string): { avg: bigint; mult: bigint } | undefined {
  const slash = text.indexOf('/');
  let mult = 1n;
  if (slash >= 0) {
    const unit = text.slice(slash + 1).toLowerCase();
    if (unit === '') return undefined;
    const hit = ([['second', 1n], ['minute', 60n], ['hour', 3600n], ['day', 86400n]] as const).find(([n]) => n.startsWith(unit));
    if (!hit) return undefined;
    mult = hit[1];
  }
  const r = atoll(text);
  if (r === 0n) return undefined;
  const avg = (SCALE * mult) / r;
  if (avg <= 0n) badValue(o, `hashlimit: rate too fast "${text}"`);
  return { avg, mult };
}

/** `print_rate` (revision 2+). */
function formatRate(period: bigint): { text: string; quantum: bigint } {
  if (period === 0n) return { text: 'inf', quantum: 0n };
  let i = 1;
  for (; i < RATES.length; i++) {
    const m = RATES[i]![1];
    if (period > m || m / period < m % period) break;
  }
  const [name, mult] = RATES[i - 1]!;
  return { text: `${mult / period}/${name}`, quantum: (mult / SCALE) * 1000n };
}

/** `print_bytes`. */
function formatBytes(avg: bigint, burst: bigint): { text: string; quantum: bigint } {
  const units: readonly (readonly [string, bigint])[] = [['m', 1024n * 1024n], ['k', 1024n], ['', 1n]];
  let r = costToBytes(avg);
  let i = 0;
  for (; i < units.length - 1; i++) if (r >= units[i]![1] && bytesToCost(r & ~(units[i]![1] - 1n)) === avg) break;
  let text = `${r / units[i]![1]}${units[i]![0]}b/s`;
  if (burst === 0n) return { text, quantum: BigInt(BYTE_EXPIRE * 1000) };
  r *= burst;
  for (i = 0; i < units.length - 1; i++) if (r >= units[i]![1]) break;
  text += ` --hashlimit-burst ${r / units[i]![1]}${units[i]![0]}b`;
  return { text, quantum: BigInt(BYTE_EXPIRE_BURST * 1000) };
}

/** `-m hashlimit`. */
export const hashlimit: MatchExtension<HashlimitOptions> = {
  kind: 'match',
  name: 'hashlimit',
  family: 'both',
  options: [
    { name: 'hashlimit-upto', arg: true, negatable: true },
    { name: 'hashlimit-above', arg: true, negatable: true },
    { name: 'hashlimit', arg: true, negatable: true },
    { name: 'hashlimit-srcmask', arg: true },
    { name: 'hashlimit-dstmask', arg: true },
    { name: 'hashlimit-burst', arg: true },
    { name: 'hashlimit-htable-size', arg: true },
    { name: 'hashlimit-htable-max', arg: true },
    { name: 'hashlimit-htable-gcinterval', arg: true },
    { name: 'hashlimit-htable-expire', arg: true },
    { name: 'hashlimit-mode', arg: true },
    { name: 'hashlimit-name', arg: true },
    { name: 'hashlimit-rate-match', arg: false },
    { name: 'hashlimit-rate-interval', arg: true },
  ],
  parse(occurrences, ctx) {
    exclusive(occurrences, ['hashlimit-upto', 'hashlimit-above']);
    exclusive(occurrences, ['hashlimit', 'hashlimit-above']);
    requireOption(ctx, occurrences, 'hashlimit', 'hashlimit-name');
    const full = ctx.family === 4 ? 32 : 128;
    let above = false;
    let bytes = false;
    let avg = 0n;
    let mult = 1n;
    let burst = BURST_DEFAULT;
    let burstGiven = false;
    let burstText = '';
    let mode = 0;
    let name = '';
    let size = 0;
    let max = 0;
    let gcInterval = GC_INTERVAL;
    let expire: number | undefined;
    let srcmask = full;
    let dstmask = full;
    let rateMatch = false;
    let interval = 0;
    let rateGiven = false;
    let burstOcc: OptionOccurrence | undefined;
    for (const o of occurrences) {
      switch (o.name) {
        case 'hashlimit-upto': case 'hashlimit': case 'hashlimit-above': {
          above = (o.name === 'hashlimit-above') !== o.negated;
          const text = argOf(o);
          const b = parseBytes(o, text);
          if (b !== undefined) {
            bytes = true;
            avg = b;
            mult = BigInt(BYTE_EXPIRE);
          } else {
            const r = parseRate(o, text);
            if (!r) badValue(o, `hashlimit: bad value for option "${o.written}": "${text}"`);
            avg = r.avg;
            mult = r.mult;
          }
          rateGiven = true;
          break;
        }
        case 'hashlimit-burst': {
          const text = argOf(o);
          const v = strtoulPrefix(text);
          if (!v || v.value < 1 || (v.end === text.length && BigInt(v.value) > BURST_MAX)) badValue(o, `hashlimit: bad value for option "--hashlimit-burst", or out of range (1-${BURST_MAX})`);
          const unit = text[v.end];
          burst = BigInt(v.value) * (unit === 'm' ? 1024n * 1024n : unit === 'k' ? 1024n : 1n);
          burstGiven = true;
          burstText = text;
          burstOcc = o;
          break;
        }
        case 'hashlimit-srcmask': case 'hashlimit-dstmask': {
          const n = strtoul(argOf(o), 0, full);
          if (n === null) badValue(o, `hashlimit: bad prefix length "${o.arg}" (must be 0-${full})`);
          if (o.name === 'hashlimit-srcmask') srcmask = n;
          else dstmask = n;
          break;
        }
        case 'hashlimit-htable-size': size = parseUint32(o, 'hashlimit'); break;
        case 'hashlimit-htable-max': max = parseUint32(o, 'hashlimit'); break;
        case 'hashlimit-htable-gcinterval': gcInterval = parseUint32(o, 'hashlimit'); break;
        case 'hashlimit-htable-expire': expire = parseUint32(o, 'hashlimit'); break;
        case 'hashlimit-mode':
          for (const tok of argOf(o).split(/[,|]/).filter((x) => x !== '')) {
            const bit = tok === 'dstip' ? MODE.DIP : tok === 'srcip' ? MODE.SIP : tok === 'srcport' ? MODE.SPT : tok === 'dstport' ? MODE.DPT : 0;
            if (bit === 0) badValue(o, `hashlimit: bad value for option "--hashlimit-mode": "${o.arg}"`);
            mode |= bit;
          }
          break;
        case 'hashlimit-name':
          name = argOf(o);
          if (name.length === 0) badValue(o, 'hashlimit: --hashlimit-name must not be empty');
          if (utf8Length(name) > 255) badValue(o, 'hashlimit: --hashlimit-name is too long (255 characters at most)');
          break;
        case 'hashlimit-rate-match': rateMatch = true; break;
        case 'hashlimit-rate-interval': {
          const r = Number(atoll(argOf(o)));
          if (!(r > 0)) badValue(o, `hashlimit: bad value for option "--hashlimit-rate-interval": "${o.arg}"`);
          interval = r;
          break;
        }
        default: unknownOption('hashlimit', o);
      }
    }
    if (!rateGiven) fail('MISSING_OPTION', 'hashlimit: you have to specify --hashlimit-upto or --hashlimit-above', ctx.span, 'hashlimit');
    let exp = expire ?? Number(mult) * 1000;
    if (bytes) {
      let b = 0n;
      if (burstGiven) {
        const unit = costToBytes(avg);
        if (burst < unit) badValue(burstOcc!, `hashlimit: burst cannot be smaller than ${unit}b`);
        b = burst / unit + (burst % unit !== 0n ? 1n : 0n);
        if (expire === undefined) exp = BYTE_EXPIRE_BURST * 1000;
      }
      burst = b;
    } else if (burst > BURST_MAX) {
      badValue(burstOcc!, `hashlimit: bad value for option "--hashlimit-burst" "${burstText}", or out of range (1-${BURST_MAX})`);
    }
    if (rateMatch) {
      if (!bytes) avg /= mult;
      if (interval === 0) interval = bytes ? 1 : Number(mult);
    }
    return {
      above, bytes, avg: avg.toString(), burst: burst.toString(), mode, name, size, max, gcInterval,
      expire: exp, srcmask, dstmask, rateMatch, interval,
    };
  },
  check(o) {
    const named = checkProcName(o.name, 'hashlimit --hashlimit-name');
    if (named.length > 0) return named;
    // hashlimit_mt_check_common: the bucket size in credits (avg * burst * credits per second)
    // must not overflow 64 bits, or the rule is refused with ERANGE.
    if (o.bytes) return [];
    const avg = BigInt(o.avg);
    if (o.rateMatch) {
      return avg === 0n || avg > U32 ? [diagnostic('BAD_VALUE', 'hashlimit: invalid rate (the kernel refuses it: ERANGE)', undefined, 'hashlimit')] : [];
    }
    const burst = BigInt(o.burst);
    const credits = (user: bigint): bigint => ((user & U64) * CREDIT_FACTOR) & U64;
    if (burst === 0n || credits(avg * burst) < credits(avg)) {
      return [diagnostic('BAD_VALUE', `hashlimit: rate and burst overflow the kernel's credit counter, try lower: ${avg}/${burst} (ERANGE)`, undefined, 'hashlimit')];
    }
    return [];
  },
  save(o, family) {
    const dmask = family === 4 ? 32 : 128;
    const avg = BigInt(o.avg);
    const burst = BigInt(o.burst);
    const out: string[] = [o.above ? '--hashlimit-above' : '--hashlimit-upto'];
    let quantum: bigint;
    if (o.bytes) {
      const r = formatBytes(avg, burst);
      out.push(r.text);
      quantum = r.quantum;
    } else {
      const r = formatRate(avg);
      out.push(r.text, `--hashlimit-burst ${burst}`);
      quantum = r.quantum;
    }
    if (o.mode !== 0) {
      const names: string[] = [];
      if (o.mode & MODE.SIP) names.push('srcip');
      if (o.mode & MODE.SPT) names.push('srcport');
      if (o.mode & MODE.DIP) names.push('dstip');
      if (o.mode & MODE.DPT) names.push('dstport');
      out.push(`--hashlimit-mode ${names.join(',')}`);
    }
    out.push(`--hashlimit-name ${o.name}`);
    if (o.size !== 0) out.push(`--hashlimit-htable-size ${o.size}`);
    if (o.max !== 0) out.push(`--hashlimit-htable-max ${o.max}`);
    if (o.gcInterval !== GC_INTERVAL) out.push(`--hashlimit-htable-gcinterval ${o.gcInterval}`);
    // The kernel keeps expire as 32 bits; iptables compares it with the printed quantum.
    if (BigInt(o.expire) !== (quantum & U32)) out.push(`--hashlimit-htable-expire ${o.expire}`);
    if (o.srcmask !== dmask) out.push(`--hashlimit-srcmask ${o.srcmask}`);
    if (o.dstmask !== dmask) out.push(`--hashlimit-dstmask ${o.dstmask}`);
    if (o.rateMatch) {
      out.push('--hashlimit-rate-match');
      if (o.interval !== 1) out.push(`--hashlimit-rate-interval ${o.interval}`);
    }
    return out.join(' ');
  },
  lower(o, family) {
    if (o.bytes || o.rateMatch) {
      const v = !o.above;
      return () => v;
    }
    const avg = BigInt(o.avg);
    const burst = BigInt(o.burst);
    const buckets = new Map<string, Bucket>();
    const words = family === 4 ? 1 : 4;
    const masked = (addr: readonly number[], len: number): string => {
      const out: number[] = [];
      for (let i = 0; i < words; i++) {
        const bits = Math.max(0, Math.min(32, len - i * 32));
        const m = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
        out.push(((addr[i] ?? 0) & m) >>> 0);
      }
      return out.join('.');
    };
    const { mode, srcmask, dstmask, above } = o;
    return (p) => {
      const key = [
        mode & MODE.SIP ? masked(p.src, srcmask) : '',
        mode & MODE.DIP ? masked(p.dst, dstmask) : '',
        mode & MODE.SPT ? p.sport : '',
        mode & MODE.DPT ? p.dport : '',
      ].join('|');
      const now = toUnits(p.now ?? 0, 1_000_000);
      let b = buckets.get(key);
      if (!b) {
        b = newBucket(avg * burst, now);
        buckets.set(key, b);
      }
      return takeToken(b, avg, avg * burst, now) !== above;
    };
  },
  assumption(o) {
    return o.bytes || o.rateMatch ? 'byte rates and --hashlimit-rate-match are not modelled: the limit is taken not to be reached' : undefined;
  },
};
