/**
 * What happens to a rule between `nft -f` and `nft list ruleset` that the listing shows, as a
 * rewrite of its statements before printing: raw payloads nft reads back as the header field at
 * their place (`payload.c`: `payload_init_raw`, `payload_expr_complete`; sub-byte ones it reads
 * back as a byte load and a mask), and the link-layer protocol matches nft adds as dependencies
 * (`ether type ip` ahead of `ip daddr` in a bridge table), which `stmt_reduce` may merge with the
 * rule's own header matches and so move.
 *
 * @module
 */
import { L4_PROTOCOLS, allOnes, payloadFields } from './datatypes.js';
import type { NftFamily, NftPayloadProtocol, NftPrefix, NftRange, NftRight, NftSelector, NftStatement, NftType, NftValue } from './model.js';

type Match = Extract<NftStatement, { kind: 'match' }>;
type Raw = Extract<NftSelector, { kind: 'rawpayload' }>;

/** Network protocols by `ether type` value. */
const L3_BY_ETHERTYPE: Readonly<Record<string, 'ip' | 'ip6' | 'arp'>> = { 2048: 'ip', 34525: 'ip6', 2054: 'arp' };
const ETHERTYPE: Readonly<Record<'ip' | 'ip6' | 'arp' | 'vlan', bigint>> = { ip: 0x0800n, ip6: 0x86ddn, arp: 0x0806n, vlan: 0x8100n };

/** ICMP fields that exist for one message type only, and that type (`icmp_dep` in `proto.c`). */
const ICMP_FIELD_TYPE: Readonly<Record<string, Readonly<Record<string, bigint>>>> = {
  icmp: { id: 8n, sequence: 8n, gateway: 5n, mtu: 3n },
  icmpv6: { 'parameter-problem': 4n, mtu: 2n, id: 128n, sequence: 128n, 'max-delay': 130n },
};

function singleValue(s: Match): bigint | undefined {
  return s.right.kind === 'value' && (s.op === 'implicit' || s.op === '==') ? s.right.value : undefined;
}

function payloadsOf(sel: NftSelector): Extract<NftSelector, { kind: 'payload' }>[] {
  if (sel.kind === 'payload') return [sel];
  if (sel.kind === 'concat') return sel.items.flatMap(payloadsOf);
  if (sel.kind === 'bitwise' || sel.kind === 'shift') return payloadsOf(sel.operand);
  return [];
}

/** The protocols a rule has established up to a statement, as nft's protocol context tracks them. */
interface Context {
  nh: 'ip' | 'ip6' | 'arp' | undefined;
  th: number | undefined;
  ether: boolean;
  vlan: boolean;
  /** The ICMP or ICMPv6 type matched, if one was. */
  icmpType: bigint | undefined;
}

function initialContext(family: NftFamily): Context {
  return { nh: family === 'ip' ? 'ip' : family === 'ip6' ? 'ip6' : family === 'arp' ? 'arp' : undefined, th: undefined, ether: family === 'bridge', vlan: false, icmpType: undefined };
}

/** What a match tells the context, after it. */
function update(ctx: Context, s: Match, family: NftFamily): void {
  const v = singleValue(s);
  const l = s.left;
  if (v !== undefined) {
    if (l.kind === 'meta' && l.key === 'nfproto' && family === 'inet') ctx.nh = v === 2n ? 'ip' : v === 10n ? 'ip6' : ctx.nh;
    if (l.kind === 'meta' && l.key === 'protocol' && family === 'netdev') ctx.nh = L3_BY_ETHERTYPE[v.toString()] ?? ctx.nh;
    if (l.kind === 'meta' && l.key === 'iiftype' && v === 1n && family !== 'bridge') ctx.ether = true;
    if (l.kind === 'meta' && l.key === 'l4proto') ctx.th = Number(v);
    if (l.kind === 'payload' && ((l.protocol === 'ip' && l.field === 'protocol') || (l.protocol === 'ip6' && l.field === 'nexthdr'))) ctx.th = Number(v);
    if (l.kind === 'payload' && (l.protocol === 'icmp' || l.protocol === 'icmpv6') && l.field === 'type') ctx.icmpType = v;
    if (l.kind === 'payload' && (l.protocol === 'ether' || l.protocol === 'vlan') && l.field === 'type') {
      if (v === ETHERTYPE.vlan && l.protocol === 'ether') ctx.vlan = true;
      else ctx.nh = L3_BY_ETHERTYPE[v.toString()] ?? ctx.nh;
    }
  }
  learn(ctx, l, family);
}

/** A header read brings its own dependencies: after it, its protocols are known. */
function learn(ctx: Context, sel: NftSelector, family: NftFamily): void {
  for (const p of payloadsOf(sel)) {
    if (p.protocol === 'ip' || p.protocol === 'ip6' || p.protocol === 'arp') ctx.nh = p.protocol;
    if (p.protocol === 'ether' && family !== 'ip' && family !== 'ip6') ctx.ether = true;
    if (p.protocol === 'vlan') {
      ctx.ether = true;
      ctx.vlan = true;
    }
    const n = L4_PROTOCOLS[p.protocol];
    if (n !== undefined) ctx.th = n;
  }
}

/** The header a window of a base is read against in the context, and where that header starts. */
function headerAt(base: Raw['base'], offset: number, ctx: Context): { protocol: string; skip: number } | undefined {
  if (base === 'th') {
    const name = Object.entries(L4_PROTOCOLS).find(([, n]) => n === ctx.th)?.[0];
    return name === undefined ? undefined : { protocol: name, skip: 0 };
  }
  if (base === 'nh') return ctx.nh === undefined ? undefined : { protocol: ctx.nh, skip: 0 };
  if (!ctx.ether) return undefined;
  // get_stacked_desc: where a vlan header was matched it is the link layer's header, and the
  // Ethernet header below it is consulted only for offsets past the vlan header's own length (4
  // bytes): a window in the first 4 bytes is read as a vlan field, as nft 1.0.6 reads it.
  if (!ctx.vlan) return { protocol: 'ether', skip: 0 };
  return offset < 32 ? { protocol: 'vlan', skip: 0 } : offset < 112 ? { protocol: 'ether', skip: 0 } : { protocol: 'vlan', skip: 112 };
}

/** Whether a header field may be meant where the context matched an ICMP type (`icmp_dep`). */
function icmpAllows(protocol: string, field: string, ctx: Context): boolean {
  const only = ICMP_FIELD_TYPE[protocol]?.[field];
  // nft takes a matched type of 0 (echo-reply) for no type at all.
  return only === undefined || ctx.icmpType === undefined || ctx.icmpType === 0n || ctx.icmpType === only;
}

interface Hit {
  readonly protocol: NftPayloadProtocol;
  readonly field: string;
  readonly type: NftType;
}

/** payload_init_raw: two bytes at the start of a transport header are its ports, whatever it is. */
function transportPort(raw: Raw): Hit | undefined {
  if (raw.base === 'th' && raw.length === 16 && (raw.offset === 0 || raw.offset === 16)) {
    return { protocol: 'th', field: raw.offset === 0 ? 'sport' : 'dport', type: 'inet_service' };
  }
  return undefined;
}

/** payload_expr_complete: the header field exactly at a raw payload's place, if nft names it. */
function fieldAt(raw: Raw, ctx: Context): Hit | undefined {
  const header = headerAt(raw.base, raw.offset, ctx);
  const fields = header === undefined ? undefined : payloadFields(header.protocol);
  if (header !== undefined && fields !== undefined) {
    for (const [field, f] of Object.entries(fields)) {
      if (f.offset !== raw.offset - header.skip || f.bits !== raw.length || !icmpAllows(header.protocol, field, ctx)) continue;
      return { protocol: header.protocol as NftPayloadProtocol, field, type: f.type };
    }
  }
  return transportPort(raw);
}

/**
 * payload_expr_expand: a byte-aligned comparison with one value, split into the header fields it
 * covers from its start, in header order; a field it covers only the start of is compared as a
 * prefix, and what no field starts at stays a raw window. Undefined where no header is known.
 */
function expand(s: Match, raw: Raw, value: bigint, ctx: Context): Match[] | undefined {
  const header = headerAt(raw.base, raw.offset, ctx);
  const fields = header === undefined ? undefined : payloadFields(header.protocol);
  if (header === undefined || fields === undefined) return undefined;
  const op = s.op === '!=' ? '!=' : '==';
  const out: Match[] = [];
  let offset = raw.offset - header.skip;
  let left = raw.length;
  for (const [field, f] of Object.entries(fields)) {
    if (left === 0) break;
    if (f.offset !== offset || !icmpAllows(header.protocol, field, ctx)) continue;
    const sel: NftSelector = { kind: 'payload', protocol: header.protocol as NftPayloadProtocol, field };
    const bits = Math.min(f.bits, left);
    const part = (value >> BigInt(left - bits)) & allOnes(bits);
    const v: NftValue = { kind: 'value', type: f.type, bits: f.bits, value: part << BigInt(f.bits - bits) };
    out.push({ ...s, op, left: sel, right: bits < f.bits ? { kind: 'prefix', value: v, length: bits } : v });
    offset += bits;
    left -= bits;
  }
  if (out.length === 0) return undefined;
  if (left > 0) {
    const rest: Raw = { kind: 'rawpayload', base: raw.base, offset: offset + header.skip, length: left };
    const port = transportPort(rest);
    const v = value & allOnes(left);
    out.push({
      ...s, op,
      left: port ? { kind: 'payload', protocol: port.protocol, field: port.field } : rest,
      right: { kind: 'value', type: port?.type ?? 'xinteger', bits: left, value: v },
    });
  }
  return out;
}

function retype(r: NftRight, type: NftType, bits: number, elements: boolean): NftRight {
  const v = (x: NftValue): NftValue => ({ kind: 'value', type, bits, value: x.value });
  switch (r.kind) {
    case 'value': return v(r);
    case 'range': return { ...r, low: v(r.low), high: v(r.high) };
    case 'prefix': return { ...r, value: v(r.value) };
    // A set keeps the type it was made with: a raw window's integers, or the ports nft read a
    // window at the start of a transport header as when it was loaded.
    case 'set': return !elements ? r : {
      ...r, key: [type],
      elements: r.elements.map((e) => ({ ...e, key: e.key.map((k) => (k.kind === 'value' ? v(k) : k.kind === 'range' ? { ...k, low: v(k.low), high: v(k.high) } : { ...k, value: v(k.value) })) })),
    };
    default: return r;
  }
}

/** A match on a concatenation with raw payloads in it, each read back as the field it is at. */
function completeConcat(s: Match, ctx: Context): Match | undefined {
  if (s.left.kind !== 'concat' || !s.left.items.some((i) => i.kind === 'rawpayload')) return undefined;
  const hits = s.left.items.map((i) => (i.kind === 'rawpayload' ? fieldAt(i, ctx) : undefined));
  const ports = s.left.items.map((i) => i.kind === 'rawpayload' && transportPort(i) !== undefined);
  if (hits.every((h) => h === undefined)) return undefined;
  const items = s.left.items.map((i, n): NftSelector => (hits[n] ? { kind: 'payload', protocol: hits[n].protocol, field: hits[n].field } : i));
  // The set keeps the types it was made with (integers, but ports for transport windows).
  const part = <T extends NftValue | NftRange | NftPrefix>(k: T, n: number): T => {
    const h = hits[n];
    if (h === undefined || !ports[n]) return k;
    const v = (x: NftValue): NftValue => ({ ...x, type: h.type });
    if (k.kind === 'value') return v(k) as T;
    if (k.kind === 'range') return { ...k, low: v(k.low), high: v(k.high) };
    return { ...k, value: v((k as NftPrefix).value) };
  };
  let right: NftRight = s.right;
  if (right.kind === 'set') {
    right = {
      ...right, key: right.key.map((t, n) => (ports[n] ? hits[n]!.type : t)),
      elements: right.elements.map((e) => ({ ...e, key: e.key.map((k, n) => part(k, n)) })),
    };
  } else if (right.kind === 'concat-value') right = { ...right, items: right.items.map((k, n) => part(k, n)) };
  else return undefined;
  return { ...s, left: { ...s.left, items }, right };
}

/** The window of a header field the listing reads back as a raw load, where it does. */
function rereadWindow(p: Extract<NftSelector, { kind: 'payload' }>, ctx: Context): Raw | undefined {
  if (p.protocol === 'th' && ctx.th !== undefined) return { kind: 'rawpayload', base: 'th', offset: p.field === 'sport' ? 0 : 16, length: 16 };
  if (p.protocol === 'ether' && ctx.vlan) {
    const f = payloadFields('ether')![p.field]!;
    return { kind: 'rawpayload', base: 'll', offset: f.offset, length: f.bits };
  }
  return undefined;
}

/** A match on a raw payload as nft lists it back, or undefined to keep it as it is. */
function completeMatch(s: Match, raw: Raw, ctx: Context): Match[] | undefined {
  const aligned = raw.offset % 8 === 0 && raw.length % 8 === 0;
  const single = s.right.kind === 'value' && ['implicit', '==', '!='].includes(s.op);
  if (aligned && single) {
    const port = transportPort(raw);
    const expanded = expand(s, raw, (s.right as NftValue).value, ctx);
    if (expanded !== undefined || port === undefined) return expanded;
  }
  const hit = fieldAt(raw, ctx);
  if (hit !== undefined) {
    if (s.right.kind === 'set' && s.right.key.length !== 1) return undefined;
    return [{ ...s, left: { kind: 'payload', protocol: hit.protocol, field: hit.field }, right: retype(s.right, hit.type, raw.length, transportPort(raw) !== undefined) }];
  }
  // A window that is not whole bytes is loaded as the bytes around it and masked; nft lists that,
  // with the bytes read as the field they are where it knows one.
  if (aligned || !single) return undefined;
  const start = raw.offset - (raw.offset % 8);
  const end = Math.ceil((raw.offset + raw.length) / 8) * 8;
  const shift = BigInt(end - raw.offset - raw.length);
  const bits = end - start;
  const around: Raw = { kind: 'rawpayload', base: raw.base, offset: start, length: bits };
  const field = fieldAt(around, ctx);
  const type = field?.type ?? 'xinteger';
  return [{
    ...s,
    op: s.op === '!=' ? '!=' : '==',
    left: { kind: 'bitwise', operand: field ? { kind: 'payload', protocol: field.protocol, field: field.field } : around, mask: allOnes(raw.length) << shift, xor: 0n, bits, type },
    right: { kind: 'value', type, bits, value: (s.right as NftValue).value << shift },
  }];
}

/** Raw payloads as nft reads them back: as header fields where it knows the header, else masked. */
export function completeRawPayloads(stmts: readonly NftStatement[], family: NftFamily, merged: ReadonlyMap<NftStatement, readonly NftSelector[]> = new Map()): NftStatement[] {
  const ctx = initialContext(family);
  return stmts.flatMap((s): NftStatement[] => {
    // A load merged from header matches comes after their dependencies: what they establish is known.
    for (const sel of merged.get(s) ?? []) learn(ctx, sel, family);
    if (s.kind === 'mangle' && s.value.kind !== 'value' && s.value.kind !== 'concat-value') learn(ctx, s.value.kind === 'map' ? s.value.key : s.value, family);
    if (s.kind === 'mangle' && s.target.kind === 'rawpayload') {
      // A write to a window nft names lists as a write to that field; others stay as written.
      const hit = fieldAt(s.target, ctx);
      if (hit === undefined) return [s];
      const value = s.value.kind === 'value' ? { ...s.value, type: hit.type } : s.value;
      return [{ ...s, target: { kind: 'payload', protocol: hit.protocol, field: hit.field }, value }];
    }
    if (s.kind === 'vmap' && s.key.kind === 'rawpayload') {
      const hit = fieldAt(s.key, ctx);
      if (hit === undefined) return [s];
      const mappings = s.mappings.kind === 'set' ? retype(s.mappings, hit.type, s.key.length, transportPort(s.key) !== undefined) as typeof s.mappings : s.mappings;
      return [{ ...s, key: { kind: 'payload', protocol: hit.protocol, field: hit.field }, mappings }];
    }
    if (s.kind !== 'match') return [s];
    // `th sport`/`th dport` are two bytes of the transport header, read back as such too; so is
    // an Ethernet field once a vlan header is the link layer's (get_stacked_desc, see headerAt).
    const window = s.left.kind === 'payload' ? rereadWindow(s.left, ctx) : undefined;
    const th = window !== undefined ? completeMatch(s, window, ctx) : undefined;
    if (th !== undefined) {
      for (const m of th) update(ctx, m, family);
      return th;
    }
    const out = s.left.kind === 'rawpayload' ? (completeMatch(s, s.left, ctx) ?? [s]) : [completeConcat(s, ctx) ?? s];
    for (const m of out) update(ctx, m, family);
    return out;
  });
}

/**
 * A match on an anonymous set of one element is a plain comparison with it (nft's evaluation
 * makes it one, so it can be a dependency and be merged like one).
 */
export function unwrapSingletons(stmts: readonly NftStatement[]): NftStatement[] {
  return stmts.map((s) => {
    if (s.kind !== 'match' || s.right.kind !== 'set' || (s.op !== 'implicit' && s.op !== '==') || s.right.elements.length !== 1) return s;
    const e = s.right.elements[0]!;
    if (e.key.length !== 1 || e.key[0]!.kind !== 'value' || e.data !== undefined || e.timeout !== undefined || e.comment !== undefined || (e.stateful?.length ?? 0) > 0 || e.counter !== undefined) return s;
    return { ...s, right: e.key[0]! };
  });
}

/**
 * The link-layer protocol matches nft adds ahead of header matches that need them (`ether type ip`
 * before `ip saddr` in an inet or netdev table where the link layer is known to be Ethernet,
 * `vlan type ip` after a vlan header, `ether type 8021q` before a vlan field), each marked in the returned set. Only these take part in `stmt_reduce`'s merging; the
 * dependencies nft adds as `meta` matches do not.
 */
export function addLinkDependencies(stmts: readonly NftStatement[], family: NftFamily): { statements: NftStatement[]; added: Set<NftStatement> } {
  const added = new Set<NftStatement>();
  const out: NftStatement[] = [];
  if (family !== 'bridge' && family !== 'netdev' && family !== 'inet') return { statements: [...stmts], added };
  const ctx = initialContext(family);
  const dep = (protocol: 'ether' | 'vlan', value: bigint): void => {
    const s: Match = { kind: 'match', left: { kind: 'payload', protocol, field: 'type' }, op: 'implicit', right: { kind: 'value', type: 'ether_type', bits: 16, value } };
    added.add(s);
    out.push(s);
    update(ctx, s, family);
  };
  for (const s of stmts) {
    if (s.kind === 'match') {
      const ps = payloadsOf(s.left);
      if (ps.some((p) => p.protocol === 'vlan') && !ctx.vlan && family !== 'inet') {
        dep('ether', ETHERTYPE.vlan);
        // Only a vlan field other than its protocol field makes `ether type 8021q` redundant:
        // before `vlan type` alone it stays in the listing.
        if (ps.every((p) => p.protocol !== 'vlan' || p.field === 'type')) added.delete(out[out.length - 1]!);
      }
      const l3 = ps.find((p) => p.protocol === 'ip' || p.protocol === 'ip6' || p.protocol === 'arp')?.protocol as 'ip' | 'ip6' | 'arp' | undefined;
      // A bridge table's dependency for IPv4 and IPv6 is `meta protocol`, except inside a vlan
      // header; for ARP it is `ether type arp`.
      if (l3 !== undefined && ctx.nh !== l3 && (ctx.vlan || (ctx.ether && (family !== 'bridge' || l3 === 'arp')))) dep(ctx.vlan ? 'vlan' : 'ether', ETHERTYPE[l3]);
      update(ctx, s, family);
    }
    out.push(s);
  }
  return { statements: out, added };
}
