/**
 * Small functions of the namespace's packet path that hold no state: packet lengths, ICMP errors,
 * the texts a result prints, the seeded generators.
 *
 * @module
 */
import { CT_STATE, TCP_FLAGS } from '../../model/packet.js';
import type { SocketView } from '../../model/packet.js';
import type { Family } from '../../model/types.js';
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { PROTO } from '../state/constants.js';
import { IP_CT_DIR_ORIGINAL, T_DPORT, T_DST } from '../state/conntrack.js';
import { addressText, formatEndpoint } from '../../model/address.js';
import type { PacketState, SocketRecord } from '../state/packet-state.js';
import type { TraceEvent } from '../trace/events.js';
import type { ConnectStep } from './api.js';

/**
 * The length Linux gives the packets the engine makes (IP header included): a SYN or SYN-ACK
 * carries MSS, SACK-permitted, timestamps and window scale (20 option bytes), the handshake's
 * ACK timestamps (12), a reset none; a datagram or ICMP message has a small payload.
 */
export function packetLength(family: Family, proto: number, flags: number): number {
  const ip = family === 4 ? 20 : 40;
  if (proto === PROTO.TCP) {
    if (flags & TCP_FLAGS.RST) return ip + 20;
    return ip + 20 + (flags & TCP_FLAGS.SYN ? 20 : 12);
  }
  if (proto === PROTO.UDP) return ip + 8 + 1;
  return ip + 8;
}

/**
 * The kernel's own control socket (`ipv4.tcp_sk`, the ICMP socket), which sends RSTs for ports
 * without a listener: it exists, but has no file, so xt_owner finds no uid or gid (a positive
 * `--uid-owner` fails, a negated one passes, `--socket-exists` holds). INVALID_UID (-1) can never
 * be inside a parsed owner range, which gives exactly that.
 */
export const KERNEL_SOCKET: SocketView = { uid: 0xffffffff, gid: 0xffffffff, groups: [] };

/** Throws a typed error for a bad probe or a bad option. */
export function bad(code: 'BAD_PROBE' | 'BAD_CONFIG', message: string): never {
  throw new NetfilterSimError(diagnostic(code, message));
}

/** murmur3's 32-bit finaliser. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** mulberry32: small, seedable, good enough for `statistic --mode random`. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

export function describe(s: SocketRecord): string {
  const a = s.local === null ? (s.family === 4 ? '0.0.0.0' : '::') : addressText(s.local, s.family);
  return `${s.remote === null ? 'the listener' : 'the socket'} ${s.family === 6 ? `[${a}]` : a}:${s.localPort}${s.transparent ? ' (IP_TRANSPARENT)' : ''}`;
}

/** `SO_ORIGINAL_DST` for the socket that received `p` (a datagram): its connection's original destination (default zone only). */
export function origDst(p: PacketState): string | null {
  const e = p.ctEntry;
  const t = p.ctTable;
  if (e < 0 || t === null || t.zone[e] !== 0 || p.ctState === CT_STATE.UNTRACKED) return null;
  const family = t.family[e] as Family;
  return formatEndpoint(t.readAddr(e, IP_CT_DIR_ORIGINAL, T_DST, []), t.port(e, IP_CT_DIR_ORIGINAL, T_DPORT), family);
}

/** `ipv6_addr_v4mapped`: ::ffff:0:0/96. */
export function isV4Mapped(a: readonly number[]): boolean {
  return a[0] === 0 && a[1] === 0 && a[2] === 0xffff;
}

/** Whether `p` is an ICMP error (`icmp_pointers[type].error`, or a type past 18; ICMPv6 types below 128). */
export function isIcmpError(p: PacketState): boolean {
  if (p.proto === PROTO.ICMP) return p.icmpType === 3 || p.icmpType === 4 || p.icmpType === 5 || p.icmpType === 11 || p.icmpType === 12 || p.icmpType > 18;
  if (p.proto === PROTO.ICMPV6) return p.icmpType >= 0 && p.icmpType < 128;
  return false;
}

/** ICMP type and code of a REJECT answer (`--reject-with`), or of `time-exceeded` (a forwarded packet's TTL ran out). */
export function icmpError(family: Family, kind: string): [number, number] {
  // ip_forward / ip6_forward: ICMP time exceeded (ICMPv6 type 3), code 0 (in transit).
  if (kind === 'time-exceeded') return family === 4 ? [11, 0] : [3, 0];
  if (family === 4) {
    const codes: Record<string, number> = {
      'icmp-net-unreachable': 0, 'icmp-host-unreachable': 1, 'icmp-proto-unreachable': 2, 'icmp-port-unreachable': 3,
      'icmp-net-prohibited': 9, 'icmp-host-prohibited': 10, 'icmp-admin-prohibited': 13,
    };
    return [3, codes[kind] ?? 3];
  }
  const codes: Record<string, number> = {
    'icmp6-no-route': 0, 'icmp6-adm-prohibited': 1, 'icmp6-addr-unreachable': 3, 'icmp6-port-unreachable': 4,
    'icmp6-policy-fail': 5, 'icmp6-reject-route': 6,
  };
  return [1, codes[kind] ?? 4];
}

/**
 * The errno a connecting socket reads when a `kind` answer (`tcp-reset` or a REJECT's ICMP type)
 * reaches it: a RST is ECONNREFUSED (`tcp_reset`); an ICMP error is converted as
 * `icmp_err_convert` (IPv4) and `icmpv6_err_convert` (IPv6) convert its code, and in SYN_SENT
 * every one of them ends `connect()` (`tcp_v4_err`, `tcp_v6_err`).
 */
export function errnoOfAnswer(family: Family, kind: string): string {
  if (kind === 'tcp-reset') return 'ECONNREFUSED';
  const [, code] = icmpError(family, kind);
  const table = family === 4 ? ICMP_UNREACH_ERRNO : ICMPV6_UNREACH_ERRNO;
  return table[code] ?? 'EHOSTUNREACH';
}

/** `icmp_err_convert[]`: destination-unreachable code → errno (net/ipv4/icmp.c). */
const ICMP_UNREACH_ERRNO: readonly string[] = [
  'ENETUNREACH', 'EHOSTUNREACH', 'ENOPROTOOPT', 'ECONNREFUSED', 'EMSGSIZE', 'EOPNOTSUPP', 'ENETUNREACH', 'EHOSTDOWN',
  'ENONET', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTUNREACH', 'EHOSTUNREACH', 'EHOSTUNREACH', 'EHOSTUNREACH',
];

/** `tab_unreach[]` of `icmpv6_err_convert`: destination-unreachable code → errno (net/ipv6/icmp.c). */
const ICMPV6_UNREACH_ERRNO: readonly string[] = ['ENETUNREACH', 'EACCES', 'EHOSTUNREACH', 'EHOSTUNREACH', 'ECONNREFUSED', 'EACCES', 'EACCES'];

export function protoName(n: number): string {
  return n === PROTO.TCP ? 'tcp' : n === PROTO.UDP ? 'udp' : n === PROTO.ICMP ? 'icmp' : n === PROTO.ICMPV6 ? 'ipv6-icmp' : String(n);
}

/** `SYN,ACK` style flag names. */
export function flagNames(f: number): string {
  let names = FLAG_NAMES[f];
  if (names === undefined) {
    const out: string[] = [];
    for (const [name, bit] of Object.entries(TCP_FLAGS)) if (f & bit) out.push(name);
    names = out.join(',');
    if (f >= 0 && f < 256) FLAG_NAMES[f] = names;
  }
  return names;
}

/** {@link flagNames} of each flags byte, as computed. */
const FLAG_NAMES: string[] = [];

/** The kernel TRACE lines of an event list, as `connect --json` prints them. */
export function stepsOf(events: readonly TraceEvent[]): ConnectStep[] {
  const steps: ConnectStep[] = [];
  for (const e of events) {
    if (e.type === 'rule') steps.push({ hook: e.hook, table: e.table, chain: e.chain, rule: e.rule, event: 'rule', target: e.target, text: e.text, packet: e.label });
    else if (e.type === 'return') steps.push({ hook: e.hook, table: e.table, chain: e.chain, rule: e.rule, event: 'return', target: 'RETURN', text: null, packet: e.label });
    else if (e.type === 'policy') steps.push({ hook: e.hook, table: e.table, chain: e.chain, rule: e.rule, event: 'policy', target: e.policy, text: null, packet: e.label });
  }
  return steps;
}
