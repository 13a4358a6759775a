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
import type { NftFamily, NftPayloadProtocol, NftRight, NftSelector, NftStatement, NftType, NftValue } from './model.js';

type Match = Extract<NftStatement, { kind: 'match' }>;
type Raw = Extract<NftSelector, { kind: 'rawpayload' }>;

/** Network protocols by `ether type` value. */
const L3_BY_ETHERTYPE: Readonly<Record<string, 'ip' | 'ip6' | 'arp'>> = { 2048: 'ip', 34525: 'ip6', 2054: 'arp' };
const ETHERTYPE: Readonly<Record<'ip' | 'ip6' | 'arp' | 'vlan', bigint>> = { ip: 0x0800n, ip6: 0x86ddn, arp: 0x0806n, vlan: 0x8100n };

/** Transport headers whose fields nft finds a raw payload among (those without per-type fields). */
const TH_COMPLETE = new Set(['tcp', 'udp', 'udplite', 'sctp', 'dccp']);

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
}

function initialContext(family: NftFamily): Context {
  return { nh: family === 'ip' ? 'ip' : family === 'ip6' ? 'ip6' : family === 'arp' ? 'arp' : undefined, th: undefined, ether: family === 'bridge', vlan: false };
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

/** The header field a raw payload is at, in the given context, if nft names it. */
function fieldAt(raw: Raw, ctx: Context, family: NftFamily): { protocol: NftPayloadProtocol; field: string; type: NftType } | undefined {
  let protocol: string | undefined;
  if (raw.base === 'th') {
    const name = Object.entries(L4_PROTOCOLS).find(([, n]) => n === ctx.th)?.[0];
    protocol = name !== undefined && TH_COMPLETE.has(name) ? name : undefined;
  } else if (raw.base === 'nh') protocol = ctx.nh;
  else protocol = family === 'bridge' ? 'ether' : undefined;
  const fields = protocol === undefined ? undefined : payloadFields(protocol);
  if (fields !== undefined) {
    for (const [field, f] of Object.entries(fields)) {
      if (f.offset === raw.offset && f.bits === raw.length) return { protocol: protocol as NftPayloadProtocol, field, type: f.type };
    }
  }
  // payload_init_raw: two bytes at the start of a transport header are its ports, whatever it is.
  if (raw.base === 'th' && raw.length === 16 && (raw.offset === 0 || raw.offset === 16)) {
    return { protocol: 'th', field: raw.offset === 0 ? 'sport' : 'dport', type: 'inet_service' };
  }
  return undefined;
}

function retype(r: NftRight, type: NftType, bits: number): NftRight {
  const v = (x: NftValue): NftValue => ({ kind: 'value', type, bits, value: x.value });
  switch (r.kind) {
    case 'value': return v(r);
    case 'range': return { ...r, low: v(r.low), high: v(r.high) };
    case 'prefix': return { ...r, value: v(r.value) };
    case 'set': return {
      ...r, key: [type],
      elements: r.elements.map((e) => ({ ...e, key: e.key.map((k) => (k.kind === 'value' ? v(k) : k.kind === 'range' ? { ...k, low: v(k.low), high: v(k.high) } : { ...k, value: v(k.value) })) })),
    };
    default: return r;
  }
}

/** A match on a raw payload as nft lists it back, or undefined to keep it as it is. */
function completeMatch(s: Match, raw: Raw, ctx: Context, family: NftFamily): Match | undefined {
  const hit = fieldAt(raw, ctx, family);
  if (hit !== undefined) {
    if (s.right.kind === 'set' && s.right.key.length !== 1) return undefined;
    return { ...s, left: { kind: 'payload', protocol: hit.protocol, field: hit.field }, right: retype(s.right, hit.type, raw.length) };
  }
  // A window that is not whole bytes is loaded as the bytes around it and masked; nft lists that.
  const start = raw.offset - (raw.offset % 8);
  const end = Math.ceil((raw.offset + raw.length) / 8) * 8;
  if ((start === raw.offset && end === raw.offset + raw.length) || s.right.kind !== 'value' || !['implicit', '==', '!='].includes(s.op)) return undefined;
  const shift = BigInt(end - raw.offset - raw.length);
  const bits = end - start;
  const x = (value: bigint): NftValue => ({ kind: 'value', type: 'xinteger', bits, value });
  return {
    ...s,
    op: s.op === '!=' ? '!=' : '==',
    left: { kind: 'bitwise', operand: { kind: 'rawpayload', base: raw.base, offset: start, length: bits }, mask: allOnes(raw.length) << shift, xor: 0n, bits, type: 'xinteger' },
    right: x(s.right.value << shift),
  };
}

/** Raw payloads as nft reads them back: as header fields where it knows the header, else masked. */
export function completeRawPayloads(stmts: readonly NftStatement[], family: NftFamily): NftStatement[] {
  const ctx = initialContext(family);
  return stmts.map((s) => {
    if (s.kind === 'mangle' && s.value.kind !== 'value' && s.value.kind !== 'concat-value') learn(ctx, s.value.kind === 'map' ? s.value.key : s.value, family);
    if (s.kind === 'mangle' && s.target.kind === 'rawpayload') {
      // A write to a window nft names lists as a write to that field; others stay as written.
      const hit = fieldAt(s.target, ctx, family);
      if (hit === undefined) return s;
      const value = s.value.kind === 'value' ? { ...s.value, type: hit.type } : s.value;
      return { ...s, target: { kind: 'payload', protocol: hit.protocol, field: hit.field }, value };
    }
    if (s.kind !== 'match') return s;
    const out = s.left.kind === 'rawpayload' ? (completeMatch(s, s.left, ctx, family) ?? s) : s;
    update(ctx, out, family);
    return out;
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
      if (ps.some((p) => p.protocol === 'vlan') && !ctx.vlan && family !== 'inet') dep('ether', ETHERTYPE.vlan);
      const l3 = ps.find((p) => p.protocol === 'ip' || p.protocol === 'ip6' || p.protocol === 'arp')?.protocol as 'ip' | 'ip6' | 'arp' | undefined;
      // A bridge table's network protocol dependency is `meta protocol`, except inside a vlan header.
      if (l3 !== undefined && ctx.nh !== l3 && (ctx.vlan || (ctx.ether && family !== 'bridge'))) dep(ctx.vlan ? 'vlan' : 'ether', ETHERTYPE[l3]);
      update(ctx, s, family);
    }
    out.push(s);
  }
  return { statements: out, added };
}
