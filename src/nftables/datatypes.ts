/**
 * nft datatypes: the symbols each type reads and how `nft list ruleset` prints its values
 * (`src/datatype.c`, `src/ct.c`, `src/meta.c`, `src/proto.c` of nftables 1.0.6), and the
 * selectors (`ip saddr`, `meta mark`, `ct state` …) with their types and widths.
 *
 * @module
 */
import { formatIpv4, formatIpv6, parseIpv4, parseIpv6 } from '../model/address.js';
import { parseProtocol } from '../model/protocols.js';
import type { NftSelector, NftType, NftValue } from './model.js';

/** Symbol tables of the enumerated and bitmask types. */
const SYMBOLS: Partial<Record<NftType, readonly (readonly [string, number])[]>> = {
  ct_state: [['invalid', 1], ['established', 2], ['related', 4], ['new', 8], ['untracked', 64]],
  ct_status: [['expected', 1], ['seen-reply', 2], ['assured', 4], ['confirmed', 8], ['snat', 16], ['dnat', 32], ['dying', 512]],
  ct_dir: [['original', 0], ['reply', 1]],
  tcp_flag: [['fin', 1], ['syn', 2], ['rst', 4], ['psh', 8], ['ack', 16], ['urg', 32], ['ecn', 64], ['cwr', 128]],
  nf_proto: [['ipv4', 2], ['ipv6', 10]],
  pkt_type: [['host', 0], ['unicast', 0], ['broadcast', 1], ['multicast', 2], ['other', 3]],
  fib_addrtype: [
    ['unspec', 0], ['unicast', 1], ['local', 2], ['broadcast', 3], ['anycast', 4], ['multicast', 5], ['blackhole', 6],
    ['unreachable', 7], ['prohibit', 8],
  ],
  icmp_type: [
    ['echo-reply', 0], ['destination-unreachable', 3], ['source-quench', 4], ['redirect', 5], ['echo-request', 8],
    ['router-advertisement', 9], ['router-solicitation', 10], ['time-exceeded', 11], ['parameter-problem', 12],
    ['timestamp-request', 13], ['timestamp-reply', 14], ['info-request', 15], ['info-reply', 16],
    ['address-mask-request', 17], ['address-mask-reply', 18],
  ],
  icmpv6_type: [
    ['destination-unreachable', 1], ['packet-too-big', 2], ['time-exceeded', 3], ['parameter-problem', 4],
    ['echo-request', 128], ['echo-reply', 129], ['mld-listener-query', 130], ['mld-listener-report', 131],
    ['mld-listener-done', 132], ['mld-listener-reduction', 132], ['nd-router-solicit', 133], ['nd-router-advert', 134],
    ['nd-neighbor-solicit', 135], ['nd-neighbor-advert', 136], ['nd-redirect', 137], ['router-renumbering', 138],
    ['ind-neighbor-solicit', 141], ['ind-neighbor-advert', 142], ['mld2-listener-report', 143],
  ],
  icmp_code: [
    ['net-unreachable', 0], ['host-unreachable', 1], ['prot-unreachable', 2], ['port-unreachable', 3],
    ['frag-needed', 4], ['net-prohibited', 9], ['host-prohibited', 10], ['admin-prohibited', 13],
  ],
  icmpv6_code: [
    ['no-route', 0], ['admin-prohibited', 1], ['addr-unreachable', 3], ['port-unreachable', 4],
    ['policy-fail', 5], ['reject-route', 6],
  ],
  boolean: [['exists', 1], ['missing', 0]],
};

/** Types whose values are bit sets (printed as `a,b`, matched with `&` when implicit). */
export const BITMASK_TYPES: ReadonlySet<NftType> = new Set<NftType>(['ct_state', 'ct_status', 'tcp_flag']);

/** Well-known service names nft reads (from the services database) for ports. */
const SERVICES: Readonly<Record<string, number>> = {
  ftp: 21, ssh: 22, telnet: 23, smtp: 25, domain: 53, http: 80, pop3: 110, ntp: 123, imap: 143, snmp: 161,
  https: 443, imaps: 993, pop3s: 995, bootps: 67, bootpc: 68, tftp: 69, ldap: 389, mysql: 3306, postgresql: 5432,
};

/** What a selector reads: its datatype and width in bits. */
export interface SelectorType {
  readonly type: NftType;
  readonly bits: number;
}

const PAYLOAD: Readonly<Record<string, Readonly<Record<string, SelectorType>>>> = {
  ip: {
    saddr: { type: 'ipv4_addr', bits: 32 }, daddr: { type: 'ipv4_addr', bits: 32 }, protocol: { type: 'inet_proto', bits: 8 },
    ttl: { type: 'integer', bits: 8 }, length: { type: 'integer', bits: 16 }, id: { type: 'integer', bits: 16 },
  },
  ip6: {
    saddr: { type: 'ipv6_addr', bits: 128 }, daddr: { type: 'ipv6_addr', bits: 128 }, nexthdr: { type: 'inet_proto', bits: 8 },
    hoplimit: { type: 'integer', bits: 8 }, length: { type: 'integer', bits: 16 },
  },
  tcp: {
    sport: { type: 'inet_service', bits: 16 }, dport: { type: 'inet_service', bits: 16 }, flags: { type: 'tcp_flag', bits: 8 },
    sequence: { type: 'integer', bits: 32 }, window: { type: 'integer', bits: 16 },
  },
  udp: { sport: { type: 'inet_service', bits: 16 }, dport: { type: 'inet_service', bits: 16 }, length: { type: 'integer', bits: 16 } },
  sctp: { sport: { type: 'inet_service', bits: 16 }, dport: { type: 'inet_service', bits: 16 } },
  th: { sport: { type: 'inet_service', bits: 16 }, dport: { type: 'inet_service', bits: 16 } },
  icmp: { type: { type: 'icmp_type', bits: 8 }, code: { type: 'icmp_code', bits: 8 }, id: { type: 'integer', bits: 16 }, sequence: { type: 'integer', bits: 16 } },
  icmpv6: { type: { type: 'icmpv6_type', bits: 8 }, code: { type: 'icmpv6_code', bits: 8 }, id: { type: 'integer', bits: 16 }, sequence: { type: 'integer', bits: 16 } },
};

/** `meta` keys the simulator reads, with their types. */
export const META_KEYS: Readonly<Record<string, SelectorType>> = {
  mark: { type: 'mark', bits: 32 }, l4proto: { type: 'inet_proto', bits: 8 }, nfproto: { type: 'nf_proto', bits: 8 },
  iif: { type: 'iface_index', bits: 32 }, oif: { type: 'iface_index', bits: 32 }, iifname: { type: 'ifname', bits: 128 },
  oifname: { type: 'ifname', bits: 128 }, skuid: { type: 'uid', bits: 32 }, skgid: { type: 'gid', bits: 32 },
  pkttype: { type: 'pkt_type', bits: 8 }, length: { type: 'integer', bits: 32 },
};
/** Meta keys nft lists without the `meta` keyword (`meta_key_is_unqualified`). */
export const UNQUALIFIED_META: ReadonlySet<string> = new Set(['iif', 'oif', 'iifname', 'oifname']);
/** Meta keys that may be written without `meta` (the parser's `meta_key_unqualified`). */
export const BARE_META: ReadonlySet<string> = new Set(['mark', 'iif', 'iifname', 'oif', 'oifname', 'skuid', 'skgid', 'nftrace', 'rtclassid', 'ibriport', 'obriport', 'pkttype', 'cpu', 'iifgroup', 'oifgroup', 'cgroup']);

const CT_KEYS: Readonly<Record<string, SelectorType>> = {
  state: { type: 'ct_state', bits: 32 }, status: { type: 'ct_status', bits: 32 }, mark: { type: 'mark', bits: 32 },
  zone: { type: 'integer', bits: 16 }, direction: { type: 'ct_dir', bits: 8 }, 'proto-src': { type: 'inet_service', bits: 16 },
  'proto-dst': { type: 'inet_service', bits: 16 }, l3proto: { type: 'nf_proto', bits: 8 }, protocol: { type: 'inet_proto', bits: 8 },
};

/** The payload fields of a protocol, or undefined. */
export function payloadFields(protocol: string): Readonly<Record<string, SelectorType>> | undefined {
  return PAYLOAD[protocol];
}
/** The ct key's type, or undefined. */
export function ctKeyType(key: string): SelectorType | undefined {
  return CT_KEYS[key];
}

/** The type and width of a selector. */
export function selectorType(s: NftSelector): SelectorType {
  switch (s.kind) {
    case 'payload': return PAYLOAD[s.protocol]![s.field]!;
    case 'meta': return META_KEYS[s.key]!;
    case 'ct':
      if (s.key === 'saddr' || s.key === 'daddr') return s.family === 'ip6' ? { type: 'ipv6_addr', bits: 128 } : { type: 'ipv4_addr', bits: 32 };
      return CT_KEYS[s.key]!;
    case 'fib':
      return s.result === 'type' ? { type: 'fib_addrtype', bits: 32 } : s.result === 'oif' ? { type: 'iface_index', bits: 32 } : { type: 'ifname', bits: 128 };
    case 'socket': return s.key === 'mark' ? { type: 'mark', bits: 32 } : { type: 'integer', bits: 1 };
    case 'numgen': return { type: 'integer', bits: 32 };
    case 'bitwise': return { type: s.type, bits: s.bits };
    case 'concat': return { type: 'integer', bits: s.items.reduce((n, i) => n + selectorType(i).bits, 0) };
  }
}

/** Why a symbol could not be read as a type. */
export class DatatypeError extends Error {}

function parseInteger(text: string, bits: number, what: string): bigint {
  let v: bigint;
  if (/^0x[0-9a-f]+$/i.test(text)) v = BigInt(text);
  else if (/^[0-9]+$/.test(text)) v = BigInt(text);
  else throw new DatatypeError(`Could not parse ${what}`);
  if (bits < 64 && v >= 1n << BigInt(bits)) throw new DatatypeError(`Value ${text} exceeds valid range 0-${(1n << BigInt(bits)) - 1n}`);
  return v;
}

/**
 * Reads one symbol (no range, prefix or list) as a value of `type`. Throws {@link DatatypeError}
 * with nft's message when it cannot.
 */
export function parseSymbol(text: string, type: NftType, bits: number, quoted = false): NftValue {
  const value = (v: bigint, extra?: { text: string }): NftValue => ({ kind: 'value', type, bits, value: v, ...(extra ?? {}) });
  switch (type) {
    case 'ipv4_addr': {
      const v = parseIpv4(text);
      if (v === null || !/^[0-9.]+$/.test(text)) throw new DatatypeError(`Could not resolve hostname: ${text}`);
      return value(BigInt(v >>> 0));
    }
    case 'ipv6_addr': {
      const w = /^[0-9a-f:.]+$/i.test(text) ? parseIpv6(text) : null;
      if (w === null) throw new DatatypeError(`Could not resolve hostname: ${text}`);
      return value(w.reduce((acc, x) => (acc << 32n) | BigInt(x >>> 0), 0n));
    }
    case 'inet_service': {
      if (/^[0-9]+$/.test(text) || /^0x/i.test(text)) return value(parseInteger(text, 16, 'inet_service'));
      const s = SERVICES[text];
      if (s === undefined) throw new DatatypeError(`Could not resolve service: Servname not supported for ai_socktype`);
      return value(BigInt(s));
    }
    case 'inet_proto': {
      if (/^[0-9]+$/.test(text)) return value(parseInteger(text, 8, 'protocol'));
      const n = text === 'icmpv6' ? 58 : parseProtocol(text);
      if (n === null) throw new DatatypeError(`Could not resolve protocol name`);
      return value(BigInt(n));
    }
    case 'mark': case 'integer': case 'icmp_code': case 'icmpv6_code':
      if (SYMBOLS[type]) {
        const hit = SYMBOLS[type]!.find(([n]) => n === text);
        if (hit) return value(BigInt(hit[1]));
      }
      return value(parseInteger(text, bits, type === 'mark' ? 'mark' : 'integer'));
    case 'uid': case 'gid':
      if (/^[0-9]+$/.test(text)) return value(parseInteger(text, 32, type));
      if (text === 'root') return value(0n);
      throw new DatatypeError(type === 'uid' ? 'User does not exist' : 'Group does not exist');
    case 'ifname': {
      if (text.length >= 16) throw new DatatypeError('Interface name too long');
      return value(ifnameValue(text), { text });
    }
    case 'iface_index':
      // A fresh namespace has only `lo`; nft resolves names to indexes when it reads them.
      if (text === 'lo') return value(1n, { text: 'lo' });
      if (/^[0-9]+$/.test(text)) return value(parseInteger(text, 32, 'iface_index'));
      throw new DatatypeError('Interface does not exist');
    case 'verdict':
      throw new DatatypeError('verdict expected');
    default: {
      const table = SYMBOLS[type];
      const hit = table?.find(([n]) => n === text);
      if (hit) return value(BigInt(hit[1]));
      if (/^[0-9]+$/.test(text) || /^0x[0-9a-f]+$/i.test(text)) return value(parseInteger(text, bits, type));
      void quoted;
      throw new DatatypeError(`Could not parse ${TYPE_DESCRIPTION[type] ?? type}`);
    }
  }
}

const TYPE_DESCRIPTION: Partial<Record<NftType, string>> = {
  ct_state: 'conntrack state', ct_status: 'conntrack status', ct_dir: 'conntrack direction', tcp_flag: 'TCP flag',
  nf_proto: 'netfilter protocol', pkt_type: 'packet type', fib_addrtype: 'fib address type', icmp_type: 'ICMP type',
  icmpv6_type: 'ICMPv6 type', boolean: 'boolean type',
};

const PROTO_NAMES: Readonly<Record<number, string>> = {
  0: 'ip', 1: 'icmp', 2: 'igmp', 4: 'ipencap', 6: 'tcp', 17: 'udp', 33: 'dccp', 41: 'ipv6', 47: 'gre', 50: 'esp', 51: 'ah',
  58: 'ipv6-icmp', 89: 'ospf', 103: 'pim', 112: 'vrrp', 132: 'sctp', 136: 'udplite',
};

function hex32(v: bigint, bits: number): string {
  return '0x' + v.toString(16).padStart(Math.ceil(bits / 4), '0');
}

/** Prints a value as `nft list ruleset` does. */
export function printValue(v: NftValue): string {
  switch (v.type) {
    case 'ipv4_addr': return formatIpv4(Number(v.value));
    case 'ipv6_addr': {
      const w: number[] = [];
      for (let i = 3; i >= 0; i--) w.push(Number((v.value >> BigInt(32 * i)) & 0xffffffffn));
      return formatIpv6(w);
    }
    case 'inet_service': case 'integer': case 'uid': case 'gid': return v.value.toString();
    case 'mark': return hex32(v.value, 32);
    case 'inet_proto': return PROTO_NAMES[Number(v.value)] ?? v.value.toString();
    case 'ifname': return `"${v.text ?? ''}"`;
    case 'iface_index': return v.value === 1n ? '"lo"' : v.value.toString();
    case 'ct_state': case 'ct_status': case 'tcp_flag': {
      const names: string[] = [];
      let rest = v.value;
      for (const [n, bit] of SYMBOLS[v.type]!) {
        if ((rest & BigInt(bit)) !== 0n) {
          names.push(n);
          rest &= ~BigInt(bit);
        }
      }
      if (rest !== 0n || names.length === 0) names.push(hex32(rest, v.bits));
      return names.join(',');
    }
    default: {
      const hit = SYMBOLS[v.type]?.find(([, n]) => BigInt(n) === v.value);
      return hit ? hit[0] : v.value.toString();
    }
  }
}

/**
 * An interface name as the kernel compares it: IFNAMSIZ (16) bytes, the name's bytes first and
 * zeros after, read here as one big-endian number. A wildcard `eth*` keeps the bytes before the
 * `*` (it matches the names that start with them, see {@link ifnameWildcardBits}).
 */
export function ifnameValue(name: string): bigint {
  const text = name.endsWith('*') && !name.endsWith('\\*') ? name.slice(0, -1) : name;
  let v = 0n;
  for (let i = 0; i < 16; i++) v = (v << 8n) | BigInt(i < text.length ? text.charCodeAt(i) & 0xff : 0);
  return v;
}

/**
 * For a wildcard interface name (`eth*`), how many leading bits of {@link ifnameValue} a name must
 * share to match it; undefined for an exact name.
 */
export function ifnameWildcardBits(v: NftValue): number | undefined {
  if (v.type !== 'ifname' || v.text === undefined || !v.text.endsWith('*') || v.text.endsWith('\\*')) return undefined;
  return (v.text.length - 1) * 8;
}

/** All ones of a width. */
export function allOnes(bits: number): bigint {
  return (1n << BigInt(bits)) - 1n;
}
