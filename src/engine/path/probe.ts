/**
 * The small languages of probes: endpoints (`10.0.0.2:8080`, `[fd00::2]:8080`) and single
 * packets for `trace` (`tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0`, `tcp > 10.96.0.10:80 uid 1000`).
 *
 * @module
 */
import { TCP_FLAGS } from '../../model/packet.js';
import type { Family } from '../../model/types.js';
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { parseProtocol } from '../../model/protocols.js';
import { PROTO } from '../state/constants.js';
import { parseAnyAddress } from '../state/routing.js';
import { expectArgument } from '../../model/guard.js';

function bad(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_PROBE', message));
}

/** An address with a port. */
export interface Endpoint {
  readonly family: Family;
  readonly addr: number[];
  readonly port: number;
}

function parsePort(text: string, what: string): number {
  if (!/^\d{1,5}$/.test(text)) bad(`bad port "${text}" in "${what}"`);
  const n = Number(text);
  if (n > 65535) bad(`bad port "${text}" in "${what}"`);
  return n;
}

/** Parses `IP:PORT`, `[V6]:PORT` (or, when the port is optional, `IP`, `V6`, `[V6]`). */
export function parseEndpoint(text: string, requirePort: boolean): Endpoint {
  expectArgument(text, 'string', 'text');
  expectArgument(requirePort, 'boolean', 'requirePort');
  const t = text.trim();
  let host: string;
  let port: string | undefined;
  if (t.startsWith('[')) {
    const close = t.indexOf(']');
    if (close < 0) bad(`bad address "${text}"`);
    host = t.slice(1, close);
    const rest = t.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) bad(`bad address "${text}"`);
      port = rest.slice(1);
    }
  } else if ((t.match(/:/g) ?? []).length === 1) {
    const i = t.indexOf(':');
    host = t.slice(0, i);
    port = t.slice(i + 1);
  } else host = t;
  const a = parseAnyAddress(host);
  if (!a) bad(`bad address "${host}" in "${text}"${host.includes(':') && port === undefined && requirePort ? ' (write IPv6 with a port as [addr]:port)' : ''}`);
  if (port === undefined) {
    if (requirePort) bad(`"${text}" needs a port (IP:PORT, [IPv6]:PORT)`);
    return { family: a.family, addr: a.addr, port: 0 };
  }
  return { family: a.family, addr: a.addr, port: parsePort(port, text) };
}

/** A single packet for `trace`. */
export interface PacketSpec {
  readonly family: Family;
  readonly proto: number;
  /** `local`: sent by a process of the namespace; `remote`: arrives on an interface. */
  readonly origin: 'local' | 'remote';
  /** Source address; null for a local packet whose source routing picks. */
  readonly src: number[] | null;
  readonly sport: number | null;
  readonly dst: number[];
  readonly dport: number;
  readonly iface: string | null;
  readonly uid: number | null;
  readonly gid: number | null;
  readonly groups: readonly number[];
  readonly mark: number;
  readonly flags: number;
  readonly icmpType: number;
  readonly icmpCode: number;
  readonly fragment: boolean;
  /** `SYN`, `ACK`, `UDP`, `PACKET`… */
  readonly label: string;
}

const FLAG_ALIASES: Readonly<Record<string, number>> = {
  S: TCP_FLAGS.SYN, A: TCP_FLAGS.ACK, F: TCP_FLAGS.FIN, R: TCP_FLAGS.RST, P: TCP_FLAGS.PSH, U: TCP_FLAGS.URG,
  SYN: TCP_FLAGS.SYN, ACK: TCP_FLAGS.ACK, FIN: TCP_FLAGS.FIN, RST: TCP_FLAGS.RST, PSH: TCP_FLAGS.PSH, URG: TCP_FLAGS.URG,
  ECE: TCP_FLAGS.ECE, CWR: TCP_FLAGS.CWR,
};

function parseFlags(text: string): number {
  const parts = text.toUpperCase().split(/[,|+]/).filter((x) => x !== '');
  let f = 0;
  for (const p of parts) {
    const bit = FLAG_ALIASES[p];
    if (bit !== undefined) {
      f |= bit;
      continue;
    }
    // `SA` style: one letter per flag
    for (const ch of p) {
      const b = FLAG_ALIASES[ch];
      if (b === undefined) bad(`unknown TCP flag "${p}"`);
      f |= b;
    }
  }
  return f;
}

function labelOf(proto: number, flags: number): string {
  if (proto === PROTO.UDP) return 'UDP';
  if (proto !== PROTO.TCP) return 'PACKET';
  const names: string[] = [];
  if (flags & TCP_FLAGS.SYN) names.push('SYN');
  if (flags & TCP_FLAGS.RST) names.push('RST');
  if (flags & TCP_FLAGS.FIN) names.push('FIN');
  if (flags & TCP_FLAGS.ACK) names.push('ACK');
  return names.length > 0 ? names.join('-') : 'TCP';
}

/** uids, gids and marks are 32-bit (`kuid_t`, `skb->mark`), as `connect --uid` checks. */
const U32_MAX = 0xffffffff;

function num(text: string | undefined, what: string, max: number = U32_MAX): number {
  if (text === undefined || !/^(0x[0-9a-f]+|\d+)$/i.test(text)) bad(`"${what}" needs a number`);
  const n = Number(text);
  if (n > max) bad(`"${what}" is at most ${max}, not ${text}`);
  return n;
}

/**
 * Parses a packet description:
 * `PROTO [SRC[:SPORT]] > DST[:DPORT] [in IFACE] [uid N] [gid N] [groups A,B] [mark N] [flags S,A] [type N] [code N] [frag]`.
 * Without a source, or with `uid`, the packet is sent by a local process; otherwise it arrives
 * (on `in IFACE`, by default the interface whose network holds the source, else eth0).
 *
 * @example
 * ```ts
 * parsePacketSpec('tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0');
 * parsePacketSpec('tcp > 10.96.0.10:80 uid 1000');
 * ```
 */
export function parsePacketSpec(text: string): PacketSpec {
  expectArgument(text, 'string', 'packet');
  const tokens = text.trim().split(/\s+/).filter((t) => t !== '');
  if (tokens.length < 3) bad(`bad packet "${text}": expected "PROTO [SRC[:PORT]] > DST:PORT …"`);
  const protoText = tokens[0]!.toLowerCase();
  const proto = parseProtocol(protoText === 'icmpv6' ? 'ipv6-icmp' : protoText);
  if (proto === null || proto === 0) bad(`unknown protocol "${tokens[0]}"`);
  const arrow = tokens.indexOf('>');
  if (arrow !== 1 && arrow !== 2) bad(`bad packet "${text}": expected "PROTO [SRC[:PORT]] > DST:PORT"`);
  const withPorts = proto === PROTO.TCP || proto === PROTO.UDP || proto === PROTO.SCTP || proto === PROTO.DCCP || proto === PROTO.UDPLITE;
  const src = arrow === 2 ? parseEndpoint(tokens[1]!, false) : null;
  const dstText = tokens[arrow + 1];
  if (dstText === undefined) bad(`bad packet "${text}": no destination`);
  const dst = parseEndpoint(dstText, withPorts);
  if (src && src.family !== dst.family) bad(`source and destination of "${text}" are of different families`);
  let iface: string | null = null;
  let uid: number | null = null;
  let gid: number | null = null;
  let groups: number[] = [];
  let mark = 0;
  let flags: number | null = null;
  let icmpType = proto === PROTO.ICMP ? 8 : proto === PROTO.ICMPV6 ? 128 : -1;
  let icmpCode = icmpType >= 0 ? 0 : -1;
  let fragment = false;
  for (let i = arrow + 2; i < tokens.length; i++) {
    const k = tokens[i]!.toLowerCase();
    const v = tokens[i + 1];
    switch (k) {
      case 'in':
      case 'iface':
        if (v === undefined) bad('"in" needs an interface');
        iface = v;
        i++;
        break;
      case 'uid':
        uid = num(v, k);
        i++;
        break;
      case 'gid':
        gid = num(v, k);
        i++;
        break;
      case 'groups':
        if (v === undefined) bad('"groups" needs a list');
        groups = v.split(',').map((g) => num(g, 'groups'));
        i++;
        break;
      case 'mark':
        mark = num(v, k);
        i++;
        break;
      case 'flags':
        if (v === undefined) bad('"flags" needs flags');
        flags = parseFlags(v);
        i++;
        break;
      case 'type':
        icmpType = num(v, k, 255);
        i++;
        break;
      case 'code':
        icmpCode = num(v, k, 255);
        i++;
        break;
      case 'frag':
        fragment = true;
        break;
      case 'local':
        break;
      default:
        bad(`unknown word "${tokens[i]}" in packet "${text}"`);
    }
  }
  const origin = src === null || uid !== null ? 'local' : 'remote';
  if (origin === 'local' && iface !== null) bad(`a locally generated packet has no in-interface ("in ${iface}")`);
  const f = proto === PROTO.TCP ? (flags ?? TCP_FLAGS.SYN) : 0;
  return {
    family: dst.family,
    proto,
    origin,
    src: src ? src.addr : null,
    sport: src && withPorts && src.port !== 0 ? src.port : null,
    dst: dst.addr,
    dport: withPorts ? dst.port : 0,
    iface,
    uid,
    gid,
    groups,
    mark,
    flags: f,
    icmpType,
    icmpCode,
    fragment,
    label: labelOf(proto, f),
  };
}
