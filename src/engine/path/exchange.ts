/**
 * A namespace's packet path opened to a driver that joins namespaces (the cluster): a packet that
 * left one namespace through an interface arrives in another on the peer interface (a new packet
 * there: the mark, conntrack and route of the sender do not cross, as `skb_scrub_packet` clears
 * them on a veth between namespaces); sockets are opened, accepted and closed; the answers the
 * kernel sends (a RST for a closed port, a REJECT's RST or ICMP error) leave from the namespace
 * that sends them. Each call runs the namespace's own hooks, conntrack and routing
 * ({@link Kernel}); the driver decides where a packet that left goes next.
 *
 * @module
 */
import { CT_STATE, TCP_FLAGS } from '../../model/packet.js';
import type { SocketView } from '../../model/packet.js';
import type { Family } from '../../model/types.js';
import { addressText, formatEndpoint } from '../../model/address.js';
import { PROTO } from '../state/constants.js';
import { IP_CT_DIR_ORIGINAL, T_DPORT, T_DST, T_SPORT, T_SRC } from '../state/conntrack.js';
import { PacketState, SOCKET_FULL, SOCKET_HALF_OPEN } from '../state/packet-state.js';
import type { InnerPacket, PacketHost, SocketRecord } from '../state/packet-state.js';
import type { Iface, RouteResult } from '../state/routing.js';
import type { TraceRecorder } from '../trace/events.js';
import type { BridgeDecision, Kernel, PathResult } from './kernel.js';
import { KERNEL_SOCKET, icmpError, isIcmpError, protoName } from './helpers.js';

/** What the namespace lends the exchange (see `Netns.exchange`). @internal */
export interface NetnsInternals {
  /** The namespace's current packet path. */
  readonly kernel: () => Kernel;
  readonly host: PacketHost;
  /** `__inet_hash_connect`'s source port, or -1 when none is free. */
  readonly ephemeral: (proto: number, family: Family, src: readonly number[], dst: readonly number[], dport: number) => number;
}

/** A packet on a link between two namespaces: what crosses, and nothing of either end's state. @internal */
export interface WirePacket {
  readonly family: Family;
  readonly proto: number;
  readonly src: readonly number[];
  readonly sport: number;
  readonly dst: readonly number[];
  readonly dport: number;
  readonly tcpFlags: number;
  readonly icmpType: number;
  readonly icmpCode: number;
  readonly ttl: number;
  readonly tos: number;
  readonly length: number;
  /** The packet an ICMP error carries; null for others. */
  readonly inner: InnerPacket | null;
}

/** What opening a client socket gave: the socket and its first packet, or the system call's error. @internal */
export type OpenResult =
  | { readonly kind: 'open'; readonly socket: SocketRecord; readonly packet: PacketState }
  | { readonly kind: 'error'; readonly errno: string; readonly reason: string };

function flagsText(f: number): string {
  const out: string[] = [];
  for (const [name, bit] of Object.entries(TCP_FLAGS)) if (f & bit) out.push(name);
  return out.join(',');
}

/**
 * One namespace's side of a multi-namespace exchange. Get it from `Netns.exchange()`. @internal
 */
export class NetnsExchange {
  private readonly ns: NetnsInternals;

  constructor(ns: NetnsInternals) {
    this.ns = ns;
  }

  /** The namespace's packet path. */
  get kernel(): Kernel {
    return this.ns.kernel();
  }

  /** An interface of the namespace by name. */
  iface(name: string): Iface | null {
    return this.kernel.routing.byName.get(name) ?? null;
  }

  /**
   * What of a packet crosses a link. An ICMP error related to a connection this namespace tracks
   * leaves with the packet it carries translated back as NAT translates it
   * (`nf_nat_icmp_reply_translation`): the connection's tuple of the other direction, as that
   * packet looked where it came from.
   */
  wire(p: PacketState): WirePacket {
    let inner = p.inner;
    if (inner !== null && p.ctEntry >= 0 && p.ctState === CT_STATE.RELATED) {
      const t = p.ctTable!;
      const e = p.ctEntry;
      const d = 1 - p.ctDir;
      inner = { proto: t.proto[e]!, src: t.readAddr(e, d, T_SRC, []), sport: t.port(e, d, T_SPORT), dst: t.readAddr(e, d, T_DST, []), dport: t.port(e, d, T_DPORT) };
    }
    return {
      family: p.family, proto: p.proto, src: p.src.slice(), sport: p.sport, dst: p.dst.slice(), dport: p.dport,
      tcpFlags: p.tcpFlags, icmpType: p.icmpType, icmpCode: p.icmpCode, ttl: p.ttl, tos: p.tos, length: p.length, inner,
    };
  }

  /** A new packet of this namespace. */
  packet(family: Family, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number, flags: number): PacketState {
    const p = new PacketState(this.ns.host, family, proto, src.slice(), sport, dst.slice(), dport, proto === PROTO.TCP ? flags : 0);
    p.length = family === 4 ? 20 : 40;
    p.length += proto === PROTO.TCP ? 20 + (flags & TCP_FLAGS.RST ? 0 : flags & TCP_FLAGS.SYN ? 20 : 12) : proto === PROTO.UDP ? 9 : 8;
    return p;
  }

  /** The packet that arrived from a link, as this namespace holds it. */
  arriving(w: WirePacket): PacketState {
    const p = this.packet(w.family, w.proto, w.src, w.sport, w.dst, w.dport, w.tcpFlags);
    p.icmpType = w.icmpType;
    p.icmpCode = w.icmpCode;
    p.ttl = w.ttl;
    p.tos = w.tos;
    p.length = w.length;
    p.inner = w.inner;
    return p;
  }

  /** Records the start of a packet's visit to this namespace. */
  startPacket(tr: TraceRecorder | null, index: number, label: string, p: PacketState, origin: 'local' | 'remote', iface: string | null): void {
    if (tr === null) return;
    tr.packet = index;
    tr.label = label;
    tr.push({
      packet: index, label, type: 'packet', family: p.family, proto: protoName(p.proto), src: addressText(p.src, p.family), sport: p.sport,
      dst: addressText(p.dst, p.family), dport: p.dport, flags: flagsText(p.tcpFlags), origin, iface,
      uid: p.socket === KERNEL_SOCKET ? null : (p.socket?.uid ?? null), gid: p.socket === KERNEL_SOCKET ? null : (p.socket?.gid ?? null), mark: p.mark,
    });
  }

  /**
   * `connect()` of a new socket owned by `owner`: the route picks the source address, the kernel a
   * source port; the socket is added and its first packet (SYN or datagram) made, not sent.
   */
  open(family: Family, proto: number, dst: readonly number[], dport: number, owner: SocketView, mark: number): OpenResult {
    const routing = this.kernel.routing;
    const route: RouteResult = routing.routeOutput(family, dst, mark, null);
    const to = route.dst ?? dst;
    if (route.src === null || (route.type !== 'unicast' && route.type !== 'local')) {
      const errno = route.type === 'prohibit' ? 'EACCES' : route.type === 'blackhole' ? 'EINVAL' : route.table === 0 || route.type !== 'unreachable' ? 'ENETUNREACH' : 'EHOSTUNREACH';
      return { kind: 'error', errno, reason: `connect(): ${errno}: no route to ${addressText(dst, family)}` };
    }
    const src = route.src.slice();
    const sport = this.ns.ephemeral(proto, family, src, to, dport);
    if (sport < 0) return { kind: 'error', errno: 'EADDRNOTAVAIL', reason: `connect(): EADDRNOTAVAIL: no free source port from ${addressText(src, family)} to ${formatEndpoint(to, dport, family)}` };
    const socket: SocketRecord = {
      family, proto, local: src, localPort: sport, remote: to.slice(), remotePort: dport,
      owner, transparent: false, mark, listener: null, state: SOCKET_FULL,
    };
    this.kernel.sockets.addConnection(socket);
    const p = this.packet(family, proto, src, sport, to, dport, proto === PROTO.TCP ? TCP_FLAGS.SYN : 0);
    p.route = route;
    p.mark = mark;
    p.socket = owner;
    p.sender = socket;
    return { kind: 'open', socket, packet: p };
  }

  /** A packet of an open socket to its peer (SYN-ACK of a request socket, ACK, FIN). */
  fromSocket(s: SocketRecord, flags: number): PacketState {
    const p = this.packet(s.family, s.proto, s.local!, s.localPort, s.remote!, s.remotePort, flags);
    p.socket = s.owner;
    p.sender = s;
    if (s.mark !== 0) p.mark = s.mark;
    p.checkSource = !s.transparent;
    return p;
  }

  /** The request socket a listener makes for a SYN (`SYN_RECV`), until the ACK completes it. */
  request(listener: SocketRecord, syn: PacketState): SocketRecord {
    const s: SocketRecord = {
      family: syn.family, proto: PROTO.TCP, local: syn.dst.slice(), localPort: syn.dport, remote: syn.src.slice(), remotePort: syn.sport,
      owner: listener.owner, transparent: listener.transparent, mark: 0, listener, state: SOCKET_HALF_OPEN,
    };
    this.kernel.sockets.addConnection(s);
    return s;
  }

  /** The handshake completed: the request socket is a full connection. */
  established(s: SocketRecord): void {
    s.state = SOCKET_FULL;
  }

  /** Removes a socket (an attempt that failed, a connection closed). */
  close(s: SocketRecord): void {
    if (this.kernel.sockets.find(s.family, s.proto, s.local!, s.localPort, s.remote!, s.remotePort) === s) this.kernel.sockets.removeConnection(s);
  }

  /** Sends a locally made packet: routing, OUTPUT, POSTROUTING. */
  send(p: PacketState, tr: TraceRecorder | null): PathResult {
    return this.kernel.sendLocal(p, tr);
  }

  /** A packet arriving on `dev`: PREROUTING, routing, INPUT or FORWARD and POSTROUTING. */
  receive(p: PacketState, dev: Iface, tr: TraceRecorder | null): PathResult {
    return this.kernel.receive(p, dev, false, tr);
  }

  /** A frame arriving on the bridge `bridge` by its port `port` (see `Kernel.receiveBridged`). */
  receiveBridged(p: PacketState, bridge: Iface, port: string, decide: (p: PacketState) => BridgeDecision, tr: TraceRecorder | null): PathResult {
    return this.kernel.receiveBridged(p, bridge, port, decide, tr);
  }

  /**
   * The RST a TCP sends for a segment that found no socket (`tcp_v4_send_reset`: from the
   * kernel's control socket for IPv4, unowned for IPv6), made, not sent.
   */
  resetFor(seg: PacketState): PacketState {
    const rst = this.packet(seg.family, PROTO.TCP, seg.dst, seg.dport, seg.src, seg.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
    rst.socket = seg.family === 4 ? KERNEL_SOCKET : null;
    rst.checkSource = true;
    return rst;
  }

  /**
   * The answer to a packet that was rejected (`kind` is REJECT's `--reject-with`) or found no
   * socket (`icmp-port-unreachable` for a datagram): a RST (`nf_send_reset`) or an ICMP error
   * (`icmp_send`), attached to the packet's connection as RELATED in the reply direction, made,
   * not sent. Null when none is sent (no RST for a RST, no ICMP error for an ICMP error).
   */
  answerTo(orig: PacketState, kind: string): PacketState | null {
    const family = orig.family;
    let a: PacketState;
    if (kind === 'tcp-reset' && orig.proto === PROTO.TCP) {
      if (orig.tcpFlags & TCP_FLAGS.RST) return null;
      a = this.packet(family, PROTO.TCP, orig.dst, orig.dport, orig.src, orig.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
      a.socket = null;
    } else {
      if (isIcmpError(orig)) return null;
      const routing = this.kernel.routing;
      const from = routing.isLocalAddress(family, orig.dst) ? orig.dst : (routing.routeOutput(family, orig.src, 0, null).src ?? orig.dst);
      a = this.packet(family, family === 4 ? PROTO.ICMP : PROTO.ICMPV6, from, 0, orig.src, 0, 0);
      const [type, code] = icmpError(family, kind);
      a.icmpType = type;
      a.icmpCode = code;
      a.socket = KERNEL_SOCKET;
      a.inner = { proto: orig.proto, src: orig.src.slice(), sport: orig.sport, dst: orig.dst.slice(), dport: orig.dport };
    }
    if (orig.ctEntry >= 0) a.setConntrack(orig.ctTable!, orig.ctEntry, 1 - orig.ctDir, CT_STATE.RELATED);
    else if (orig.untracked || orig.ctState === CT_STATE.UNTRACKED) a.ctAttachedNone = true;
    return a;
  }

  /**
   * `SO_ORIGINAL_DST` on an accepted socket: the original destination of the connection conntrack
   * holds for the socket's addresses (default zone), or null when the namespace tracks none.
   */
  originalDst(s: SocketRecord): string | null {
    const t = this.kernel.conntrack;
    const ref = t.lookup(0, s.proto, s.local!, s.localPort, s.remote!, s.remotePort);
    if (ref < 0) return null;
    const e = ref >> 1;
    return formatEndpoint(t.readAddr(e, IP_CT_DIR_ORIGINAL, T_DST, []), t.port(e, IP_CT_DIR_ORIGINAL, T_DPORT), s.family);
  }

  /** `SO_ORIGINAL_DST` for a datagram delivered to a socket: its entry's original destination, or null. */
  originalDstOf(p: PacketState): string | null {
    const e = p.ctEntry;
    const t = p.ctTable;
    if (e < 0 || t === null || t.zone[e] !== 0 || p.ctState === CT_STATE.UNTRACKED) return null;
    return formatEndpoint(t.readAddr(e, IP_CT_DIR_ORIGINAL, T_DST, []), t.port(e, IP_CT_DIR_ORIGINAL, T_DPORT), t.family[e] as Family);
  }

  /** The end of a call: entries made by packets that were never confirmed are freed. */
  settle(): void {
    this.kernel.releaseUnconfirmed();
  }
}
