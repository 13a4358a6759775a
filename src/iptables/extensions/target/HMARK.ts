/**
 * `-j HMARK` (`libxt_HMARK.c`, kernel `xt_HMARK.c`): sets skb->mark to a hash of the packet's
 * addresses, ports and protocol (or of its conntrack entry's, with `--hmark-tuple ct`), scaled to
 * `--hmark-mod` and moved up by `--hmark-offset`. Continues.
 *
 * What goes into the hash is chosen by masks: `--hmark-src-prefix`/`--hmark-dst-prefix` (address
 * masks), `--hmark-sport-mask`/`--hmark-dport-mask` (port masks) or `--hmark-spi-mask` (both ports
 * as one 32-bit word), `--hmark-proto-mask`; `--hmark-sport`/`--hmark-dport`/`--hmark-spi` OR
 * values into the ports. A field without a mask does not count. `--hmark-tuple` is shorthand for
 * full masks (`src,dst,sport,dport,proto,spi`, each a case-insensitive prefix) plus `ct`;
 * iptables-save prints the masks it stands for, and `--hmark-tuple ct` only for `ct`.
 *
 * Checked against iptables 1.8.9 and the kernel: `--hmark-mod` (1 or more) and `--hmark-rnd` are
 * required, `--hmark-offset` is not; a tuple item given before its own mask option makes that
 * option a second use ("can only be used once"), the other order keeps the tuple's full mask;
 * `--hmark-spi-mask` excludes the port masks; the kernel refuses `--hmark-spi` with
 * `--hmark-sport`/`--hmark-dport`.
 *
 * @module
 */
import { diagnostic, fail } from '../../../model/errors.js';
import type { Diagnostic } from '../../../model/errors.js';
import type { Family } from '../../../model/types.js';
import { prefixMask } from '../../../model/address.js';
import type { OptionOccurrence, TargetExtension } from '../types.js';
import { argOf, badValue, missing, parsePlenMask, parseUint32, unknownOption } from '../values.js';

/** Options of `-j HMARK`; a field is present when iptables sets its flag. */
export interface HmarkOptions {
  /** Prefix lengths of the address masks. */
  readonly srcPrefix?: number;
  readonly dstPrefix?: number;
  readonly sportMask?: number;
  readonly dportMask?: number;
  readonly spiMask?: number;
  readonly sportSet?: number;
  readonly dportSet?: number;
  readonly spiSet?: number;
  readonly protoMask?: number;
  readonly rnd: number;
  readonly mod: number;
  readonly offset?: number;
  /** `--hmark-tuple ct`: hash the conntrack entry's tuples. */
  readonly ct: boolean;
}

/** The tuple items in the order `hmark_parse` tries them (prefix match). */
const TUPLE_ITEMS = ['ct', 'src', 'dst', 'sport', 'dport', 'proto', 'spi'] as const;
type TupleItem = (typeof TUPLE_ITEMS)[number];
/** The option each tuple item stands for (its flag in `xflags`). */
const TUPLE_OPTION: Readonly<Record<TupleItem, string>> = {
  ct: 'hmark-tuple ct',
  src: 'hmark-src-prefix',
  dst: 'hmark-dst-prefix',
  sport: 'hmark-sport-mask',
  dport: 'hmark-dport-mask',
  proto: 'hmark-proto-mask',
  spi: 'hmark-spi-mask',
};

const USAGE = '"--hmark-tuple" requires a list of types with no spaces, e.g. src,dst,sport,dport,proto';

function tupleItem(o: OptionOccurrence, text: string): TupleItem {
  const lower = text.toLowerCase();
  const hit = text.length === 0 ? undefined : TUPLE_ITEMS.find((t) => t.startsWith(lower));
  if (hit === undefined) badValue(o, `HMARK: Bad type "${text}"`);
  return hit!;
}

/** `hmark_parse_type`: the items of `--hmark-tuple`, with its error for a bad list. */
function parseTuple(o: OptionOccurrence): TupleItem[] {
  let rest = argOf(o);
  const out: TupleItem[] = [];
  let comma: number;
  while ((comma = rest.indexOf(',')) >= 0) {
    if (comma === 0) badValue(o, `HMARK: Bad type "${rest}"`);
    out.push(tupleItem(o, rest.slice(0, comma)));
    rest = rest.slice(comma + 1);
  }
  if (rest.length === 0) badValue(o, `HMARK: ${USAGE}`);
  out.push(tupleItem(o, rest));
  return out;
}

function uint16(o: OptionOccurrence): number {
  return parseUint32(o, 'HMARK', 0, 0xffff);
}

/** `-j HMARK`. */
export const HMARK: TargetExtension<HmarkOptions> = {
  kind: 'target',
  name: 'HMARK',
  family: 'both',
  terminal: false,
  options: [
    { name: 'hmark-tuple', arg: true },
    // The masks may be set by --hmark-tuple as well: the once-check is parse()'s.
    { name: 'hmark-src-prefix', arg: true, multi: true },
    { name: 'hmark-dst-prefix', arg: true, multi: true },
    { name: 'hmark-sport-mask', arg: true, multi: true },
    { name: 'hmark-dport-mask', arg: true, multi: true },
    { name: 'hmark-spi-mask', arg: true, multi: true },
    { name: 'hmark-sport', arg: true },
    { name: 'hmark-dport', arg: true },
    { name: 'hmark-spi', arg: true },
    { name: 'hmark-proto-mask', arg: true, multi: true },
    { name: 'hmark-rnd', arg: true },
    { name: 'hmark-mod', arg: true },
    { name: 'hmark-offset', arg: true },
  ],
  parse(occurrences, ctx) {
    const r: { -readonly [K in keyof HmarkOptions]: HmarkOptions[K] } = { rnd: 0, mod: 0, ct: false };
    const full = ctx.family === 4 ? 32 : 128;
    // xflags: which options (and tuple items) have been given.
    const given = new Set<string>();
    const once = (o: OptionOccurrence): void => {
      if (given.has(o.name)) fail('DUPLICATE_OPTION', `HMARK: option "--${o.name}" can only be used once`, o.span, o.written);
      given.add(o.name);
    };
    for (const o of occurrences) {
      switch (o.name) {
        case 'hmark-tuple':
          for (const item of parseTuple(o)) {
            given.add(TUPLE_OPTION[item]);
            if (item === 'ct') r.ct = true;
            else if (item === 'src') r.srcPrefix = full;
            else if (item === 'dst') r.dstPrefix = full;
            else if (item === 'sport') r.sportMask = 0xffff;
            else if (item === 'dport') r.dportMask = 0xffff;
            else if (item === 'proto') r.protoMask = 0xffff;
            else r.spiMask = 0xffffffff;
          }
          break;
        case 'hmark-src-prefix':
          once(o);
          r.srcPrefix = parsePlenMask(o, 'HMARK', ctx.family);
          break;
        case 'hmark-dst-prefix':
          once(o);
          r.dstPrefix = parsePlenMask(o, 'HMARK', ctx.family);
          break;
        case 'hmark-sport-mask':
          once(o);
          r.sportMask = uint16(o);
          break;
        case 'hmark-dport-mask':
          once(o);
          r.dportMask = uint16(o);
          break;
        case 'hmark-spi-mask':
          once(o);
          r.spiMask = parseUint32(o, 'HMARK');
          break;
        case 'hmark-proto-mask':
          once(o);
          r.protoMask = uint16(o);
          break;
        case 'hmark-sport':
          given.add(o.name);
          r.sportSet = uint16(o);
          break;
        case 'hmark-dport':
          given.add(o.name);
          r.dportSet = uint16(o);
          break;
        case 'hmark-spi':
          given.add(o.name);
          r.spiSet = parseUint32(o, 'HMARK');
          break;
        case 'hmark-rnd':
          given.add(o.name);
          r.rnd = parseUint32(o, 'HMARK');
          break;
        case 'hmark-mod':
          given.add(o.name);
          r.mod = parseUint32(o, 'HMARK', 1);
          break;
        case 'hmark-offset':
          r.offset = parseUint32(o, 'HMARK');
          break;
        default:
          unknownOption('HMARK', o);
      }
    }
    // HMARK_check, in its order.
    if (!given.has('hmark-mod')) missing(ctx, 'HMARK', '--hmark-mod is mandatory');
    if (!given.has('hmark-rnd')) missing(ctx, 'HMARK', '--hmark-rnd is mandatory');
    if (r.spiMask !== undefined && (r.sportMask !== undefined || r.dportMask !== undefined)) {
      fail('CONFLICTING_OPTIONS', 'HMARK: you cannot use --hmark-spi-mask and --hmark-?port-mask,at the same time', ctx.span, 'HMARK');
    }
    const pkt = ['hmark-src-prefix', 'hmark-dst-prefix', 'hmark-spi-mask', 'hmark-sport-mask', 'hmark-dport-mask', 'hmark-proto-mask', 'hmark-sport', 'hmark-dport', 'hmark-spi'];
    if (!r.ct && !pkt.some((n) => given.has(n))) missing(ctx, 'HMARK', 'you have to specify --hmark-tuple at least');
    return r;
  },
  save(o) {
    const h = (v: number, digits: number): string => `0x${(v >>> 0).toString(16).padStart(digits, '0')}`;
    const out: string[] = [];
    if (o.srcPrefix !== undefined) out.push(`--hmark-src-prefix ${o.srcPrefix}`);
    if (o.dstPrefix !== undefined) out.push(`--hmark-dst-prefix ${o.dstPrefix}`);
    if (o.sportMask !== undefined) out.push(`--hmark-sport-mask ${h(o.sportMask, 4)}`);
    if (o.dportMask !== undefined) out.push(`--hmark-dport-mask ${h(o.dportMask, 4)}`);
    if (o.spiMask !== undefined) out.push(`--hmark-spi-mask ${h(o.spiMask, 8)}`);
    if (o.sportSet !== undefined) out.push(`--hmark-sport ${h(o.sportSet, 4)}`);
    if (o.dportSet !== undefined) out.push(`--hmark-dport ${h(o.dportSet, 4)}`);
    if (o.spiSet !== undefined) out.push(`--hmark-spi ${h(o.spiSet, 8)}`);
    if (o.protoMask !== undefined) out.push(`--hmark-proto-mask ${h(o.protoMask, 2)}`);
    out.push(`--hmark-rnd ${h(o.rnd, 8)}`, `--hmark-mod ${o.mod}`);
    if (o.offset !== undefined) out.push(`--hmark-offset ${o.offset}`);
    if (o.ct) out.push('--hmark-tuple ct');
    return out.join(' ');
  },
  check(o): Diagnostic[] {
    // hmark_tg_check: "spi-set and port-set can't be combined" (RULE_APPEND failed (Invalid argument)).
    if (o.spiSet !== undefined && (o.sportSet !== undefined || o.dportSet !== undefined)) {
      return [diagnostic('CONFLICTING_OPTIONS', 'HMARK: the kernel refuses --hmark-spi together with --hmark-sport/--hmark-dport (spi-set and port-set can\'t be combined: Invalid argument)', undefined, 'HMARK')];
    }
    return [];
  },
};

// ---------------------------------------------------------------------------------------------
// The hash (xt_HMARK.c hmark_hash, include/linux/jhash.h)

const rol32 = (w: number, s: number): number => ((w << s) | (w >>> (32 - s))) >>> 0;

/** `jhash_3words(a, b, c, initval)` of include/linux/jhash.h. */
export function jhash3words(a: number, b: number, c: number, initval: number): number {
  const iv = (initval + 0xdeadbeef + (3 << 2)) >>> 0;
  a = (a + iv) >>> 0;
  b = (b + iv) >>> 0;
  c = (c + iv) >>> 0;
  // __jhash_final
  c = ((c ^ b) - rol32(b, 14)) >>> 0;
  a = ((a ^ c) - rol32(c, 11)) >>> 0;
  b = ((b ^ a) - rol32(a, 25)) >>> 0;
  c = ((c ^ b) - rol32(b, 16)) >>> 0;
  a = ((a ^ c) - rol32(c, 4)) >>> 0;
  b = ((b ^ a) - rol32(a, 14)) >>> 0;
  c = ((c ^ b) - rol32(b, 24)) >>> 0;
  return c;
}

/** `reciprocal_scale(val, ep_ro)`: `((u64)val * ep_ro) >> 32`, exactly. */
export function reciprocalScale(val: number, range: number): number {
  const ah = val >>> 16;
  const al = val & 0xffff;
  const bh = range >>> 16;
  const bl = range & 0xffff;
  const mid = (ah * bl + al * bh) * 0x10000 + al * bl;
  return (ah * bh + Math.floor(mid / 0x100000000)) >>> 0;
}

/** What HMARK hashes: one packet's (or one connection's) addresses, ports and protocol. */
export interface HmarkTuple {
  readonly family: Family;
  readonly src: readonly number[];
  readonly dst: readonly number[];
  readonly proto: number;
  /** Null when the kernel reads no ports (ICMP, fragments, protocols without ports). */
  readonly ports: { readonly sport: number; readonly dport: number } | null;
}

/** `proto_ports_offset` is 0 for these: the ports are the first 4 bytes of the header. */
const PORT_PROTOCOLS: ReadonlySet<number> = new Set([6, 17, 33, 132, 136]);

/** Whether HMARK reads ports for a protocol (TCP, UDP, DCCP, SCTP, UDP-Lite). */
export function hmarkHasPorts(proto: number): boolean {
  return PORT_PROTOCOLS.has(proto);
}

function maskedAddress(addr: readonly number[], prefix: number | undefined, family: Family): number {
  if (prefix === undefined || prefix === 0) return 0;
  const mask = prefixMask(prefix, family);
  let v = 0;
  for (let i = 0; i < mask.length; i++) v = (v ^ ((addr[i] ?? 0) & mask[i]!)) >>> 0;
  return v;
}

/**
 * The mark `hmark_tg_v4`/`hmark_tg_v6` set for a tuple: both addresses masked (an IPv6 address
 * folded by XOR) and put in order, the ports masked, ORed and put in order, jhash of the three
 * words with `--hmark-rnd`, XOR the masked protocol, scaled to `--hmark-mod`, plus the offset.
 */
export function hmarkValue(o: HmarkOptions, t: HmarkTuple): number {
  let src = maskedAddress(t.src, o.srcPrefix, t.family);
  let dst = maskedAddress(t.dst, o.dstPrefix, t.family);
  if (dst < src) [src, dst] = [dst, src];
  let ports = 0;
  if (t.ports !== null) {
    // hmark_swap_ports: the source port is the first 16 bits of the word in network order.
    const mask = o.spiMask ?? ((((o.sportMask ?? 0) << 16) | (o.dportMask ?? 0)) >>> 0);
    const set = o.spiSet ?? ((((o.sportSet ?? 0) << 16) | (o.dportSet ?? 0)) >>> 0);
    const hp = (((((t.ports.sport << 16) | t.ports.dport) >>> 0) & mask) | set) >>> 0;
    const s = hp >>> 16;
    const d = hp & 0xffff;
    ports = (d > s ? (d << 16) | s : (s << 16) | d) >>> 0;
  }
  const hash = (jhash3words(src, dst, ports, o.rnd) ^ (t.proto & (o.protoMask ?? 0))) >>> 0;
  return (reciprocalScale(hash, o.mod) + (o.offset ?? 0)) >>> 0;
}
