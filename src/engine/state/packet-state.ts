/**
 * A packet while it crosses the namespace: the skb fields matches read ({@link PacketView}), plus
 * what the engine keeps alongside (its conntrack entry, its route, a socket assigned by TPROXY).
 *
 * @module
 */
import type { PacketSocket, PacketView, SocketView } from '../../model/packet.js';
import type { Family, HookName, TableName } from '../../model/types.js';
import { ConntrackViewImpl } from './conntrack.js';
import type { ConntrackTable } from './conntrack.js';
import type { RouteResult } from './routing.js';

/** What a packet needs from its namespace while matches run. @internal */
export interface PacketHost {
  addressType(family: Family, addr: readonly number[], iface: string | null): number;
  statisticRandom(probability: number): boolean;
  /** The namespace's virtual clock, in seconds. */
  readonly now?: () => number;
  /** Tracked connections from (or to) a network (`connlimit`). */
  readonly connCount?: (family: Family, addr: readonly number[], prefix: number, daddr: boolean) => number;
  /** The namespace's `recent` lists. */
  readonly recentTable?: (name: string) => Map<string, { stamps: number[]; ttl: number }>;
  /** The namespace's socket lookup for an arriving packet (`-m socket`). */
  readonly socketLookup?: (p: PacketState) => PacketSocket | null;
}

/** A socket of the namespace (listener, connecting or accepted). @internal */
export interface SocketRecord {
  readonly family: Family;
  readonly proto: number;
  /** Bound/local address; null for a wildcard listener. */
  readonly local: readonly number[] | null;
  readonly localPort: number;
  /** The peer's address; null for a listener (a socket is a listener exactly when it has none). */
  readonly remote: readonly number[] | null;
  readonly remotePort: number;
  readonly owner: SocketView;
  readonly transparent: boolean;
  /** `SO_MARK`: every packet the socket sends carries it (0: none). */
  readonly mark: number;
  /** The listener an accepted connection came from. */
  readonly listener: SocketRecord | null;
  /**
   * {@link SOCKET_FULL}: a listener or a full connection; {@link SOCKET_HALF_OPEN}: an accepted
   * connection still waiting for the client's ACK (a request socket); otherwise in TIME_WAIT
   * after an active close, until this time (seconds on the namespace's clock). One number, not
   * three fields: a socket is kept for every open connection.
   */
  state: number;
}

/** {@link SocketRecord.state} of a listener or a full connection. @internal */
export const SOCKET_FULL = -1;
/** {@link SocketRecord.state} of a request socket (the SYN-ACK is out, the ACK not in). @internal */
export const SOCKET_HALF_OPEN = -2;

/**
 * The packet an ICMP error carries (its first bytes: addresses and ports), which conntrack reads
 * to find the connection the error is about (`icmp_error_message`). @internal
 */
export interface InnerPacket {
  readonly proto: number;
  readonly src: readonly number[];
  readonly sport: number;
  readonly dst: readonly number[];
  readonly dport: number;
}

/** The packet state the engine threads through the hooks. @internal */
export class PacketState implements PacketView {
  // The fields are declared, not initialised: the constructor and reset() set every one through
  // init(), in one order, so that a new packet and a reused record are the same.
  declare family: Family;
  declare proto: number;
  declare src: number[];
  declare dst: number[];
  declare sport: number;
  declare dport: number;
  declare tcpFlags: number;
  declare icmpType: number;
  declare icmpCode: number;
  declare fragment: boolean;
  declare length: number;
  declare inIface: string | null;
  declare outIface: string | null;
  /** ifindex of inIface / outIface (0: none), for lowered interface tests. */
  declare inIndex: number;
  declare outIndex: number;
  declare hook: HookName;
  declare table: TableName;
  declare mark: number;
  /** IPv4 TTL / IPv6 hop limit: 64 where the packet is made (Linux's default), less per hop. */
  declare ttl: number;
  /** IPv4 TOS / IPv6 traffic class. */
  declare tos: number;
  /**
   * The bridge ports a bridged packet entered by and leaves by (`physdev`, br_netfilter's
   * `nf_bridge->physindev`/`physoutdev`); null when it did not cross a bridge port.
   */
  declare physIn: string | null;
  declare physOut: string | null;
  /**
   * The packet an ICMP error carries, when a driver that joins namespaces gave it one; null
   * otherwise (an error made and judged in one namespace is attached to its connection directly).
   */
  declare inner: InnerPacket | null;
  declare socket: SocketView | null;
  declare ct: ConntrackViewImpl | null;

  /** The conntrack entry (-1: none), its table and direction (engine side of {@link ct}). */
  declare ctEntry: number;
  declare ctTable: ConntrackTable | null;
  declare ctDir: number;
  /** `IP_CT_UNTRACKED`: set by NOTRACK / CT --notrack in raw. */
  declare untracked: boolean;
  /** `CT --zone` template set in raw. */
  declare zone: number;
  /** A `CT` template is attached (`skb->_nfct` set): later CT and NOTRACK rules leave the packet alone. */
  declare ctTemplate: boolean;
  /**
   * The answer (RST, ICMP error) to an untracked packet: `nf_ct_attach` gave it `skb->_nfct` =
   * RELATED without an entry, so CT and NOTRACK rules leave it alone, and conntrack looks it up
   * as a packet of its own (a RST or an ICMP error of no connection: INVALID).
   */
  declare ctAttachedNone: boolean;
  /** The socket TPROXY assigned (`nf_tproxy_assign_sock`). */
  declare assignedSocket: SocketRecord | null;
  /** The socket that sent the packet (owner match reads {@link socket}). */
  declare sender: SocketRecord | null;
  /** The current route (`skb_dst`). */
  declare route: RouteResult | null;
  /**
   * IPv4 output routing must find the source among the host's addresses (`__ip_route_output_key`
   * without `FLOWI_FLAG_ANYSRC`): set for packets of sockets that are not IP_TRANSPARENT and for
   * the kernel's own RST (`tcp_v4_send_reset`).
   */
  declare checkSource: boolean;
  /** Set by REJECT: what it answers with. */
  declare rejectWith: string | null;
  /** Why the last table dropped the packet, when it was not a plain DROP. */
  declare dropReason: string | null;

  declare readonly host: PacketHost;
  private readonly ctView = new ConntrackViewImpl();

  constructor(host: PacketHost, family: Family, proto: number, src: number[], sport: number, dst: number[], dport: number, tcpFlags: number) {
    this.host = host;
    this.src = src;
    this.dst = dst;
    this.init(family, proto, sport, dport, tcpFlags);
  }

  /**
   * Makes this record a new packet, as the constructor would, with its own copies of `src` and
   * `dst` (the arrays of the record are reused). The namespace keeps a few records and reuses
   * them from one connection to the next, so that a packet allocates nothing.
   */
  reset(family: Family, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number, tcpFlags: number): this {
    copyWords(this.src, src);
    copyWords(this.dst, dst);
    this.init(family, proto, sport, dport, tcpFlags);
    return this;
  }

  /** Every field of a new packet but its host and its addresses. */
  private init(family: Family, proto: number, sport: number, dport: number, tcpFlags: number): void {
    this.family = family;
    this.proto = proto;
    this.sport = sport;
    this.dport = dport;
    this.tcpFlags = tcpFlags;
    this.icmpType = -1;
    this.icmpCode = -1;
    this.fragment = false;
    this.length = 60;
    this.inIface = null;
    this.outIface = null;
    this.inIndex = 0;
    this.outIndex = 0;
    this.hook = 'PREROUTING';
    this.table = 'raw';
    this.mark = 0;
    this.ttl = 64;
    this.tos = 0;
    this.physIn = null;
    this.physOut = null;
    this.inner = null;
    this.socket = null;
    this.ct = null;
    this.ctEntry = -1;
    this.ctTable = null;
    this.ctDir = 0;
    this.untracked = false;
    this.zone = 0;
    this.ctTemplate = false;
    this.ctAttachedNone = false;
    this.assignedSocket = null;
    this.sender = null;
    this.route = null;
    this.checkSource = false;
    this.rejectWith = null;
    this.dropReason = null;
  }

  /** Points {@link ct} at an entry of `table` (or, with -1, at a state without one: INVALID, UNTRACKED). */
  setConntrack(table: ConntrackTable, entry: number, dir: number, state: number): void {
    this.ctEntry = entry;
    this.ctTable = table;
    this.ctDir = dir;
    this.ctView.table = table;
    this.ctView.entry = entry;
    this.ctView.dir = dir;
    this.ctView.state = state;
    this.ct = this.ctView;
  }

  /** The state bit matches see (`XT_STATE_BIT(ctinfo)`), or 0 before conntrack. */
  get ctState(): number {
    return this.ct ? this.ct.state : 0;
  }

  addressType(addr: readonly number[], iface: string | null): number {
    return this.host.addressType(this.family, addr, iface);
  }

  statisticRandom(probability: number): boolean {
    return this.host.statisticRandom(probability);
  }

  get now(): number {
    return this.host.now ? this.host.now() : 0;
  }

  recentTable(name: string): Map<string, { stamps: number[]; ttl: number }> {
    return this.host.recentTable ? this.host.recentTable(name) : new Map();
  }

  setMark(mark: number): void {
    this.mark = mark >>> 0;
  }

  socketLookup(): PacketSocket | null {
    return this.host.socketLookup ? this.host.socketLookup(this) : null;
  }

  connCount(addr: readonly number[], prefix: number, daddr: boolean): number {
    // nf_conncount_count: the confirmed connections, plus this packet's own when it is not yet
    // one of them.
    const own = this.ctEntry >= 0 && this.ctTable !== null && this.ctTable.isConfirmed(this.ctEntry) ? 0 : 1;
    return (this.host.connCount ? this.host.connCount(this.family, addr, prefix, daddr) : 0) + own;
  }
}

/** Copies the words of an address into `to`, which takes their number. */
function copyWords(to: number[], from: readonly number[]): void {
  const n = from.length;
  if (to.length !== n) to.length = n;
  for (let i = 0; i < n; i++) to[i] = from[i]!;
}
