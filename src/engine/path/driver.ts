/**
 * The connection driver of a namespace: a connection's packets (the SYN, the answer, the ACK, a
 * close; a datagram; a lone packet) sent from one end of the exchange through the kernel's path
 * to the other, the answers to what is rejected or finds no socket, and the result each call
 * reports. `Netns` is its public face.
 *
 * @module
 */
import { ADDR_TYPE, CT_STATE, TCP_FLAGS } from '../../model/packet.js';
import type { PacketSocket, SocketView } from '../../model/packet.js';
import type { Family } from '../../model/types.js';
import { PROTO } from '../state/constants.js';
import { IP_CT_DIR_ORIGINAL, IP_CT_DIR_REPLY, NF_NAT_MANIP_SRC, T_DPORT, T_DST, T_SPORT, T_SRC, sameAddr } from '../state/conntrack.js';
import { addressText, formatEndpoint } from '../../model/address.js';
import { logCounters } from '../rules/iptables-evaluate.js';
import { Kernel } from './kernel.js';
import type { PathResult } from './kernel.js';
import { PacketState, SOCKET_FULL, SOCKET_HALF_OPEN } from '../state/packet-state.js';
import type { PacketHost, SocketRecord } from '../state/packet-state.js';
import type { Endpoint, PacketSpec } from './probe.js';
import type { RouteResult, Routing } from '../state/routing.js';
import { TraceRecorder } from '../trace/events.js';
import type { ConnectResult, ConnectSpec } from './api.js';
import type { Capture, OutcomeCache } from './capture.js';
import { localKey, remoteKey } from './capture.js';
import { REMOTE_FIRST, TCP_TIMEWAIT_LEN } from './ports.js';
import type { SourcePorts } from './ports.js';
import { internedAddress, internedOwner, parsedAddress, parsedEndpoint } from './shared.js';
import { KERNEL_SOCKET, bad, describe, errnoOfAnswer, flagNames, icmpError, isIcmpError, isV4Mapped, mulberry32, origDst, packetLength, protoName, stepsOf } from './helpers.js';

/** Where the exchange's second end lives. */
type ServerEnd =
  | { readonly kind: 'socket'; readonly socket: SocketRecord }
  | { readonly kind: 'peer'; readonly dev: string; readonly family: Family; readonly addr: number[]; readonly port: number; readonly clientAddr: number[]; readonly clientPort: number };

/** Where the exchange's first end lives. */
type ClientEnd =
  | { readonly kind: 'socket'; readonly socket: SocketRecord }
  | { readonly kind: 'remote'; readonly dev: string; readonly family: Family; readonly addr: number[]; readonly port: number; readonly dstAddr: number[]; readonly dstPort: number };

/** Packet records a namespace keeps for reuse (a connection with its close sends six packets; answers add a few). */
const MAX_PACKET_RECORDS = 16;
const MAX_BRANCHES = 4096;


/** What a namespace's packet path is made of, built from its options (see `Netns`). */
export interface PathParts {
  readonly routing: Routing;
  readonly kernel: Kernel;
  /** What hosts outside answer: address text → listening ports. */
  readonly peers: ReadonlyMap<string, readonly number[]>;
  /** The seed of `statistic --mode random` draws. */
  readonly seed: number;
  readonly ports: SourcePorts;
  /** The virtual clock's start. */
  readonly clock: number;
  readonly cache: OutcomeCache | null;
}

/** The packet path of a namespace and the connections it drives through it (see the module's comment). */
export class ConnectionDriver {
  readonly routing: Routing;
  kernel: Kernel;
  private readonly peers: ReadonlyMap<string, readonly number[]>;
  private readonly rng: () => number;
  /** Source ports and the sockets in TIME_WAIT. */
  readonly ports: SourcePorts;
  /** The sockets the current call opened, and whether its handshake completed. */
  private opened: SocketRecord[] = [];
  private handshakeDone = false;
  /**
   * Whether the SYN-ACK reached the client: its `connect()` has returned 0, and what ends the
   * attempt after that (a lost ACK, a RST to it) is read from the established socket.
   */
  private clientConnected = false;
  private closing = false;
  /** Enumeration state of `statistic` draws (connectAll). */
  private branch: { script: boolean[]; pos: number; taken: boolean[]; free: boolean[]; p: number } | null = null;
  /** The host packets read their socket, clock and routes from. */
  readonly host: PacketHost;
  /** Packet records, reused from one connection to the next (see {@link packet}). */
  private readonly packets: PacketState[] = [];
  private packetsUsed = 0;
  /** Whether packet records are reused; off, every packet is a new one. @internal */
  reusePackets = true;
  /** The virtual clock (seconds since the epoch). */
  clock: number;
  /** `recent` lists by name (`xt_recent` tables are per namespace). */
  recent = new Map<string, Map<string, { stamps: number[]; ttl: number }>>();  /** The outcome cache (see `NetnsOptions.outcomeCache`); null when the namespace does not use it. */
  readonly cache: OutcomeCache | null;

  constructor(parts: PathParts) {
    this.routing = parts.routing;
    this.kernel = parts.kernel;
    this.peers = parts.peers;
    this.rng = mulberry32(parts.seed);
    this.ports = parts.ports;
    this.clock = parts.clock;
    this.cache = parts.cache;
    this.host = {
      addressType: (family, addr, iface) => this.routing.addressType(family, addr, iface),
      statisticRandom: (probability) => this.statisticRandom(probability),
      now: () => this.clock,
      connCount: (family, addr, prefix, daddr) => this.connCount(family, addr, prefix, daddr),
      socketLookup: (p) => this.socketOf(p),
      recentTable: (name) => {
        let t = this.recent.get(name);
        if (t === undefined) {
          t = new Map();
          this.recent.set(name, t);
        }
        return t;
      },
    };
  }

  /** Confirmed connections of `family` whose original source (or destination) is in `addr/prefix`. */
  private connCount(family: Family, addr: readonly number[], prefix: number, daddr: boolean): number {
    const ct = this.kernel.conntrack;
    const words: number[] = [];
    let n = 0;
    for (const e of ct.entries()) {
      if (ct.family[e] !== family) continue;
      ct.readAddr(e, 0, daddr ? T_DST : T_SRC, words);
      let inside = true;
      for (let i = 0; i < words.length && inside; i++) {
        const bits = Math.max(0, Math.min(32, prefix - i * 32));
        const m = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
        inside = ((words[i]! & m) >>> 0) === ((addr[i]! & m) >>> 0);
      }
      if (inside) n++;
    }
    return n;
  }

  private statisticRandom(probability: number): boolean {
    // xt_statistic: (get_random_u32() & 0x7FFFFFFF) < probability
    if (probability <= 0) return false;
    if (probability >= 0x80000000) return true;
    const b = this.branch;
    if (b === null) return (this.rng() & 0x7fffffff) < probability;
    const q = probability / 0x80000000;
    let v: boolean;
    if (b.pos < b.script.length) v = b.script[b.pos]!;
    else v = true;
    b.pos++;
    b.taken.push(v);
    b.free.push(true);
    b.p *= v ? q : 1 - q;
    return v;
  }

  /**
   * The next draws of `statistic --mode random` and `numgen random` take the script's values in
   * order, then true (a choice among N endpoints taken by k falses and a true picks the k-th), until
   * a call with null gives the draws back to the RNG. For a driver that enumerates choices across
   * namespaces (the cluster's reachability through a Service). @internal
   */
  scriptDraws(script: readonly boolean[] | null): void {
    this.branch = script === null ? null : { script: [...script], pos: 0, taken: [], free: [], p: 1 };
  }

  connectWith(spec: ConnectSpec, close: boolean, tr: TraceRecorder | null): ConnectResult {
    this.closing = close;
    let r: ConnectResult;
    let c: Capture | null = null;
    let opened: SocketRecord[] = [];
    try {
      r = this.run(spec, tr);
    } finally {
      c = this.cache === null ? null : this.cache.capture;
      if (c !== null) {
        this.cache!.capture = null;
        logCounters(null);
        opened = this.opened.slice();
      }
      this.closing = false;
      this.settleSockets();
      this.kernel.releaseUnconfirmed();
    }
    if (c !== null) this.cache!.end(c, opened, r, this.kernel, this.ports);
    return r;
  }

  /**
   * After a call: the sockets of an attempt that did not complete close (connect() failed or
   * timed out), as do a UDP socket the caller closed; those of an established connection stay.
   */
  private settleSockets(): void {
    const opened = this.opened;
    if (opened.length !== 0) {
      if (!this.handshakeDone) for (let i = 0; i < opened.length; i++) this.kernel.sockets.removeConnection(opened[i]!);
      opened.length = 0;
    }
    this.handshakeDone = false;
  }

  /**
   * Like {@link connect}, but explores every outcome of `statistic --mode random` draws instead of
   * drawing, each branch on a copy of the conntrack table (the namespace is left unchanged).
   * Results carry the probability of their branch.
   */
  connectAll(spec: ConnectSpec, trace: boolean): ConnectResult[] {
    const out: ConnectResult[] = [];
    const saved = this.kernel;
    const ports = [this.ports.perturb.slice(), this.ports.nextRemotePort] as const;
    const recent = this.recent;
    const copyRecent = (): Map<string, Map<string, { stamps: number[]; ttl: number }>> =>
      new Map([...recent].map(([k, t]) => [k, new Map([...t].map(([a, e]) => [a, { stamps: [...e.stamps], ttl: e.ttl }]))]));
    let script: boolean[] = [];
    try {
      for (let n = 0; n < MAX_BRANCHES; n++) {
        this.kernel = new Kernel(saved.routing, saved.conntrack.clone(), saved.sockets.clone(), saved.ev4, saved.ev6, saved.forwarding);
        this.kernel.ctEnabled4 = saved.ctEnabled4;
        this.kernel.ctEnabled6 = saved.ctEnabled6;
        this.kernel.nft = saved.nft;
        this.kernel.now = saved.now;
        this.ports.perturb = ports[0].slice();
        this.ports.nextRemotePort = ports[1];
        this.recent = copyRecent();
        this.branch = { script, pos: 0, taken: [], free: [], p: 1 };
        const tr = trace ? new TraceRecorder() : null;
        const r = this.run(spec, tr);
        this.opened.length = 0;
        this.handshakeDone = false;
        const b = this.branch;
        out.push({ ...r, probability: b.p });
        let i = b.taken.length - 1;
        while (i >= 0 && !(b.taken[i] && b.free[i])) i--;
        if (i < 0) break;
        script = [...b.taken.slice(0, i), false];
      }
    } finally {
      this.kernel = saved;
      this.recent = recent;
      this.branch = null;
      this.ports.perturb = ports[0];
      this.ports.nextRemotePort = ports[1];
    }
    return out;
  }

  traceOne(spec: PacketSpec, tr: TraceRecorder | null): ConnectResult {
    this.beginPackets();
    const family = spec.family;
    const proto = spec.proto;
    if (spec.origin === 'local') {
      const owner: SocketView | null = spec.uid === null ? null : { uid: spec.uid, gid: spec.gid ?? spec.uid, groups: spec.groups };
      const route = this.routing.routeOutput(family, spec.dst, spec.mark, spec.src);
      const src = spec.src ?? (route.src ? route.src.slice() : family === 4 ? [0] : [0, 0, 0, 0]);
      // 0.0.0.0 and :: are the host itself (route.dst: 127.0.0.1, ::1, or the bound source).
      const to = route.dst ?? spec.dst;
      const sport = spec.sport ?? this.ports.ephemeral(this.kernel, this.clock, proto, family, src, to, spec.dport);
      const p = this.packet(family, proto, src, sport < 0 ? this.ports.low : sport, to, spec.dport, spec.flags);
      p.route = route;
      p.mark = spec.mark;
      p.socket = owner;
      p.icmpType = spec.icmpType;
      p.icmpCode = spec.icmpCode;
      p.fragment = spec.fragment;
      this.startPacket(tr, 0, spec.label, p, 'local', null);
      return this.single(this.kernel.sendLocal(p, tr), tr);
    }
    const dev = this.routing.byName.get(spec.iface ?? this.defaultIface(family, spec.src!));
    if (!dev) bad('BAD_PROBE', `no interface "${spec.iface}"`);
    const sport = spec.sport ?? this.ports.nextRemote(this.kernel, proto, family, spec.src!, spec.dst, spec.dport);
    const p = this.packet(family, proto, spec.src!, sport < 0 ? REMOTE_FIRST : sport, spec.dst, spec.dport, spec.flags);
    p.mark = spec.mark;
    p.icmpType = spec.icmpType;
    p.icmpCode = spec.icmpCode;
    p.fragment = spec.fragment;
    this.startPacket(tr, 0, spec.label, p, 'remote', dev.name);
    return this.single(this.kernel.receive(p, dev, false, tr), tr);
  }

  private defaultIface(family: Family, src: readonly number[]): string {
    const dev = this.routing.connectedDevice(family, src);
    if (dev && !dev.loopback) return dev.name;
    return this.routing.byName.has('eth0') ? 'eth0' : (this.routing.ifaces[1]?.name ?? 'lo');
  }

  /**
   * A packet of the current connection, with copies of `src` and `dst`. Its record is one of the
   * namespace's, reused by later connections ({@link beginPackets}): nothing keeps a packet once
   * its connection is done.
   */
  private packet(family: Family, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number, flags: number): PacketState {
    const tcpFlags = proto === PROTO.TCP ? flags : 0;
    const pool = this.packets;
    let p: PacketState;
    if (this.packetsUsed < pool.length) p = pool[this.packetsUsed]!.reset(family, proto, src, sport, dst, dport, tcpFlags);
    else {
      p = new PacketState(this.host, family, proto, src.slice(), sport, dst.slice(), dport, tcpFlags);
      if (this.reusePackets && pool.length < MAX_PACKET_RECORDS) pool.push(p);
    }
    this.packetsUsed++;
    p.length = packetLength(family, proto, tcpFlags);
    return p;
  }

  /** A connection (or a lone packet) begins: the packet records of the last one are free again. */
  private beginPackets(): void {
    this.packetsUsed = 0;
  }

  private startPacket(tr: TraceRecorder | null, index: number, label: string, p: PacketState, origin: 'local' | 'remote', iface: string | null): void {
    if (tr === null) return;
    tr.packet = index;
    tr.label = label;
    tr.push({
      packet: tr.packet, label: tr.label, type: 'packet', family: p.family, proto: protoName(p.proto), src: addressText(p.src, p.family), sport: p.sport,
      dst: addressText(p.dst, p.family), dport: p.dport, flags: flagNames(p.tcpFlags), origin, iface,
      uid: p.socket === KERNEL_SOCKET ? null : (p.socket?.uid ?? null), gid: p.socket === KERNEL_SOCKET ? null : (p.socket?.gid ?? null), mark: p.mark,
    });
  }

  private single(r: PathResult, tr: TraceRecorder | null): ConnectResult {
    const p = r.p;
    switch (r.kind) {
      case 'local':
        return this.result('local', p.dst, p.dport, p.family, origDst(p), `delivered to a socket (${r.socket.remote === null ? 'listener' : 'connection'})`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
      case 'wire':
        return this.result('remote', p.dst, p.dport, p.family, null, `left through ${r.dev.name}`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
      case 'refused':
        return this.result('refused', p.dst, p.dport, p.family, null, `no socket at ${formatEndpoint(p.dst, p.dport, p.family)}`, tr);
      case 'dropped':
        return this.result(r.reject ? 'refused' : 'dropped', p.dst, p.dport, p.family, null, r.reason, tr, undefined, null, r.reject ? errnoOfAnswer(p.family, r.reject) : undefined);
    }
  }

  /** `connect()` found no free source port: it fails with EADDRNOTAVAIL before any packet. */
  /** connect() fails before any packet leaves: the caller sees the system call's error. */
  private refuseConnect(dst: Endpoint, family: Family, label: string, errno: string, why: string, tr: TraceRecorder | null): ConnectResult {
    const to = addressText(dst.addr, family);
    if (tr !== null) {
      tr.packet = 0;
      tr.label = label;
      tr.push({ packet: 0, label, type: 'route', hook: null, dst: to, result: 'unreachable', dev: null, via: null, src: null, table: null, reason: why });
    }
    return this.result('refused', dst.addr, dst.port, family, null, `connect(): ${errno}: ${why} (${to})`, tr, errno);
  }

  /** Whether a socket may bind `addr` without IP_TRANSPARENT (`inet_addr_valid_or_nonlocal`). */
  private bindable(family: Family, addr: readonly number[]): boolean {
    if (family === 6) return this.routing.isLocalAddress(6, addr);
    return (this.routing.addressType(4, addr, null) & (ADDR_TYPE.LOCAL | ADDR_TYPE.BROADCAST | ADDR_TYPE.MULTICAST)) !== 0;
  }

  private noPort(family: Family, src: readonly number[], dst: Endpoint, label: string, tr: TraceRecorder | null): ConnectResult {
    const range = `${this.ports.low}–${this.ports.high}`;
    const why = `connect(): EADDRNOTAVAIL: no free source port in ${range} from ${addressText(src, family)} to ${formatEndpoint(dst.addr, dst.port, family)}`;
    if (tr !== null) {
      tr.packet = 0;
      tr.label = label;
      tr.push({ packet: 0, label, type: 'drop', hook: null, reason: why, reject: null });
    }
    return this.result('refused', dst.addr, dst.port, family, null, why, tr, 'EADDRNOTAVAIL');
  }

  /**
   * A result. `errno` is what the client's socket reads when it is not the default of the
   * outcome: ETIMEDOUT for `dropped` (the SYN is sent again until `tcp_syn_retries` run out),
   * ECONNREFUSED for `refused` (a RST, or ICMP port unreachable); `error` (a `connect()` that failed
   * before any packet) is the errno too.
   */
  private result(outcome: ConnectResult['outcome'], addr: readonly number[] | null, port: number | null, family: Family, original: string | null, reason: string, tr: TraceRecorder | null, error?: string, source: string | null = null, errno?: string): ConnectResult {
    // As connect --json: address and port only for an accepted (local) or departed (remote) attempt.
    const placed = outcome === 'local' || outcome === 'remote';
    const r: { -readonly [K in keyof ConnectResult]: ConnectResult[K] } = {
      outcome,
      address: placed && addr ? addressText(addr, family) : null,
      port: placed ? port : null,
      originalDestination: original,
      source: placed ? source : null,
      // A client whose SYN-ACK came connected: a lost ACK leaves it connected (its peer never
      // accepts), a RST to it resets the established connection (tcp_reset: ECONNRESET).
      errno: placed ? null : (error ?? errno ?? (this.clientConnected ? (outcome === 'dropped' ? null : 'ECONNRESET') : outcome === 'dropped' ? 'ETIMEDOUT' : 'ECONNREFUSED')),
      steps: tr === null ? [] : stepsOf(tr.events),
      reason,
    };
    if (tr !== null) r.trace = tr.events;
    if (tr !== null && tr.omitted > 0) r.traceOmitted = tr.omitted;
    if (error !== undefined) r.error = error;
    this.clientConnected = false;
    return r;
  }

  /** A loopback source on the wire: the receiver drops it (martian / ip6_rcv_core). */
  private martianOnWire(p: PacketState): boolean {
    this.routing.observer?.addr(p.src);
    if (p.family === 4) return p.src[0]! >>> 24 === 127;
    return p.src[0] === 0 && p.src[1] === 0 && p.src[2] === 0 && p.src[3] === 1;
  }

  private peerAccepts(addr: readonly number[], family: Family, port: number): boolean {
    const o = this.routing.observer;
    o?.addr(addr);
    const ports = this.peers.get(addressText(addr, family));
    if (ports !== undefined) o?.port(port);
    return ports === undefined || ports.includes(port);
  }

  private run(spec: ConnectSpec, tr: TraceRecorder | null): ConnectResult {
    this.beginPackets();
    const proto = spec.proto === 'udp' ? PROTO.UDP : spec.proto === undefined || spec.proto === 'tcp' ? PROTO.TCP : bad('BAD_PROBE', `unknown protocol "${String(spec.proto)}"`);
    // The cached words are shared: nothing below writes to dst.addr or src.addr.
    let dst = parsedEndpoint(spec.dst);
    // A local connection reads its destination at once (connect()'s own checks, then its route).
    if (spec.from === 'local') this.routing.observer?.addr(dst.addr);
    // tcp_v6_connect / __ip6_datagram_connect: a local IPv6 socket (not IPV6_V6ONLY) connecting
    // to an IPv4-mapped address (::ffff:a.b.c.d) makes an IPv4 connection.
    if (spec.from === 'local' && dst.family === 6 && isV4Mapped(dst.addr)) dst = { family: 4, addr: [dst.addr[3]!], port: dst.port };
    const family = dst.family;
    let client: ClientEnd;
    let first: PathResult;
    const label = proto === PROTO.TCP ? 'SYN' : 'UDP';
    const flags = proto === PROTO.TCP ? TCP_FLAGS.SYN : 0;
    if (spec.from === 'local') {
      if (!Number.isInteger(spec.uid) || spec.uid < 0 || spec.uid > 0xffffffff) bad('BAD_PROBE', `bad uid "${spec.uid}" (a uid is from 0 to 4294967295)`);
      if (spec.gid !== undefined && (!Number.isInteger(spec.gid) || spec.gid < 0 || spec.gid > 0xffffffff)) bad('BAD_PROBE', `bad gid "${spec.gid}" (a gid is from 0 to 4294967295)`);
      let src: number[] | null = null;
      if (spec.src !== undefined) {
        const a = parsedAddress(spec.src);
        if (!a || a.family !== family) bad('BAD_PROBE', `bad source address "${spec.src}"`);
        src = a.addr.slice();
        // inet_bind / inet6_bind: an address of the namespace (local, broadcast or multicast), the
        // wildcard, or any address on an IP_TRANSPARENT socket; else EADDRNOTAVAIL.
        if (spec.transparent !== true && src.some((w) => w !== 0) && !this.bindable(family, src)) {
          const why = `bind(): EADDRNOTAVAIL: the namespace does not own ${addressText(src, family)} (a socket binds it only with IP_TRANSPARENT: transparent)`;
          if (tr !== null) {
            tr.packet = 0;
            tr.label = label;
            tr.push({ packet: 0, label, type: 'drop', hook: null, reason: why, reject: null });
          }
          return this.result('refused', dst.addr, dst.port, family, null, why, tr, 'EADDRNOTAVAIL');
        }
      }
      const mark = (spec.mark ?? 0) >>> 0;
      const key = tr === null && spec.sport === undefined && this.cacheUsable() ? localKey(spec, proto, mark, this.closing) : null;
      const t = key === null ? undefined : this.cache!.recording(key);
      let route: RouteResult;
      let srcAddr: number[] | readonly number[];
      let to: readonly number[];
      let sport: number;
      let transparent: boolean;
      let sharedOwner: SocketView;
      if (t !== undefined) {
        // The probe's last connection passed every check below: only the source port is new.
        sport = this.ports.ephemeral(this.kernel, this.clock, proto, family, t.src, t.dst, dst.port);
        if (sport < 0) return this.noPort(family, t.src, dst, label, tr);
        const again = this.cache!.replay(t, sport, this.kernel, this.ports);
        if (again !== null) return again;
        route = t.route!;
        srcAddr = t.src;
        to = t.dst;
        transparent = t.transparent;
        sharedOwner = t.owner!;
      } else {
        // tcp_v6_connect refuses a multicast destination before routing.
        if (family === 6 && proto === PROTO.TCP && dst.addr[0]! >>> 24 === 0xff) {
          return this.refuseConnect(dst, family, label, 'ENETUNREACH', 'a TCP connection cannot go to a multicast address', tr);
        }
        // connect(): ip_route_connect picks the source address from the route.
        route = this.routing.routeOutput(family, dst.addr, mark, src);
        const from = src ?? (route.src ? route.src.slice() : null);
        if (from === null) {
          if (tr !== null) {
            tr.packet = 0;
            tr.label = label;
            tr.push({ packet: tr.packet, label: tr.label, type: 'route', hook: null, dst: addressText(dst.addr, family), result: 'unreachable', dev: null, via: null, src: null, table: null, reason: 'no route' });
          }
          // connect() fails at once with the route's error (fib_props): the caller sees a refusal.
          const errno = route.type === 'prohibit' ? 'EACCES' : route.type === 'blackhole' ? 'EINVAL' : route.table === 0 || route.type !== 'unreachable' ? 'ENETUNREACH' : 'EHOSTUNREACH';
          return this.result('refused', dst.addr, dst.port, family, null, `connect(): ${errno}: no route to ${addressText(dst.addr, family)}`, tr, errno);
        }
        srcAddr = from;
        // tcp_v4_connect: a broadcast or multicast route (RTCF_BROADCAST, RTCF_MULTICAST) refuses a
        // connection; ip4_datagram_connect refuses a broadcast without SO_BROADCAST.
        if (family === 4) {
          const d = dst.addr[0]! >>> 0;
          const broadcast = route.type === 'broadcast' || d === 0xffffffff;
          if (proto === PROTO.TCP && (broadcast || d >>> 28 === 0xe)) {
            return this.refuseConnect(dst, family, label, 'ENETUNREACH', `a TCP connection cannot go to a ${broadcast ? 'broadcast' : 'multicast'} address`, tr);
          }
          if (proto === PROTO.UDP && broadcast) return this.refuseConnect(dst, family, label, 'EACCES', 'a broadcast address without SO_BROADCAST', tr);
        }
        // A local route (a policy `local default dev lo` for the socket's mark) to an address the
        // host does not own gives that address as the source, which output routing then refuses:
        // connect() fails at once (observed: ENETUNREACH).
        if (family === 4 && src === null && route.type === 'local' && !this.routing.isLocalAddress(4, srcAddr)) {
          if (tr !== null) {
            tr.packet = 0;
            tr.label = label;
            tr.push({ packet: 0, label, type: 'route', hook: null, dst: addressText(dst.addr, family), result: 'unreachable', dev: null, via: null, src: addressText(srcAddr, family), table: route.table, reason: 'a local route to an address the host does not own' });
          }
          return this.result('refused', dst.addr, dst.port, family, null, `connect(): ENETUNREACH: the local route to ${addressText(dst.addr, family)} (table ${route.table}) gives a source the host does not own`, tr, 'ENETUNREACH');
        }
        // connect() to 0.0.0.0 or :: reaches the host itself: the route says where (127.0.0.1, ::1).
        to = route.dst ?? dst.addr;
        sport = spec.sport ?? this.ports.ephemeral(this.kernel, this.clock, proto, family, srcAddr, to, dst.port);
        if (sport < 0) return this.noPort(family, srcAddr, dst, label, tr);
        transparent = spec.transparent === true;
        sharedOwner = internedOwner({ uid: spec.uid, gid: spec.gid ?? spec.uid, groups: spec.groups ?? [] });
        if (key !== null && this.cache!.seenBefore(key)) this.cache!.begin(this.kernel, this.ports, key, family, proto, internedAddress(family, srcAddr), sport, internedAddress(family, to), dst.port, route, sharedOwner, mark, transparent, null);
      }
      // Every field is given, in one order, so that all sockets share one shape; addresses and
      // owners are shared between sockets, never written to.
      const sock: SocketRecord = {
        family, proto, local: internedAddress(family, srcAddr), localPort: sport, remote: internedAddress(family, to), remotePort: dst.port,
        owner: sharedOwner, transparent, mark, listener: null, state: SOCKET_FULL,
      };
      this.kernel.sockets.addConnection(sock);
      this.opened.push(sock);
      client = { kind: 'socket', socket: sock };
      const p = this.packet(family, proto, srcAddr, sport, to, dst.port, flags);
      p.route = route;
      p.mark = mark;
      p.socket = sharedOwner;
      p.sender = sock;
      this.startPacket(tr, 0, label, p, 'local', null);
      first = this.kernel.sendLocal(p, tr);
    } else {
      const s = parsedAddress(spec.src);
      if (!s || s.family !== family) bad('BAD_PROBE', `bad source address "${spec.src}"`);
      const devName = spec.iface ?? this.defaultIface(family, s.addr);
      const dev = this.routing.byName.get(devName);
      if (!dev) bad('BAD_PROBE', `no interface "${devName}"`);
      const key = tr === null && spec.sport === undefined && this.cacheUsable() ? remoteKey(spec, proto, devName, this.closing) : null;
      const t = key === null ? undefined : this.cache!.recording(key);
      const sport = spec.sport ?? this.ports.nextRemote(this.kernel, proto, family, s.addr, dst.addr, dst.port);
      if (sport < 0) return this.noPort(family, s.addr, dst, label, tr);
      if (t !== undefined) {
        const again = this.cache!.replay(t, sport, this.kernel, this.ports);
        if (again !== null) return again;
      } else if (key !== null && this.cache!.seenBefore(key)) this.cache!.begin(this.kernel, this.ports, key, family, proto, internedAddress(family, s.addr), sport, internedAddress(family, dst.addr), dst.port, null, null, 0, false, dev.name);
      client = { kind: 'remote', dev: dev.name, family, addr: s.addr, port: sport, dstAddr: dst.addr, dstPort: dst.port };
      const p = this.packet(family, proto, s.addr, sport, dst.addr, dst.port, flags);
      this.startPacket(tr, 0, label, p, 'remote', dev.name);
      first = this.kernel.receive(p, dev, false, tr);
    }
    if (proto === PROTO.UDP) {
      // A connected UDP socket stays open whatever came of the datagram, until closed.
      this.handshakeDone = !this.closing;
      return this.finishUdp(client, first, tr);
    }
    return this.finishTcp(client, first, tr);
  }

  private finishUdp(client: ClientEnd, first: PathResult, tr: TraceRecorder | null): ConnectResult {
    const p = first.p;
    switch (first.kind) {
      case 'local':
        return this.result('local', p.dst, p.dport, p.family, origDst(p), `delivered to ${describe(first.socket)}`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
      case 'refused':
        return this.answer(client, p, 'icmp-port-unreachable', `no socket at ${formatEndpoint(p.dst, p.dport, p.family)}: ICMP port unreachable`, tr);
      case 'dropped': {
        // A datagram a local hook (OUTPUT, POSTROUTING) drops or rejects fails the send() itself:
        // ip_local_out returns NF_DROP's -EPERM to udp_sendmsg. The ICMP error of a REJECT still
        // reaches the socket, for a later recv().
        const sendFails = client.kind === 'socket' && (first.hook === 'OUTPUT' || first.hook === 'POSTROUTING');
        if (first.reject) {
          const r = this.answer(client, p, first.reject, `rejected (${first.reject})`, tr);
          return sendFails ? { ...r, errno: 'EPERM' } : r;
        }
        return this.result('dropped', p.dst, p.dport, p.family, null, first.reason, tr, undefined, null, sendFails ? 'EPERM' : undefined);
      }
      case 'wire':
        if (this.martianOnWire(p)) return this.result('dropped', p.dst, p.dport, p.family, null, 'the receiver drops a loopback source (martian)', tr);
        if (!this.peerAccepts(p.dst, p.family, p.dport)) return this.result('refused', p.dst, p.dport, p.family, null, `${formatEndpoint(p.dst, p.dport, p.family)} has no listener: ICMP port unreachable`, tr);
        return this.result('remote', p.dst, p.dport, p.family, null, `left through ${first.dev.name}`, tr, undefined, formatEndpoint(p.src, p.sport, p.family));
    }
  }

  /**
   * The answer to a rejected or undeliverable packet: a TCP RST (`nf_send_reset`) or an ICMP
   * error (`icmp_send`), attached to the packet's connection as RELATED in the reply direction
   * (`nf_ct_attach`), sent through OUTPUT and POSTROUTING like any local packet, to the packet's
   * sender. No answer is made to a RST with a RST, nor to an ICMP error with an ICMP error; an
   * answer to an answer is not answered again. Returns where the answer ended, or null when none
   * was sent.
   */
  private sendAnswer(orig: PacketState, kind: string, index: number, tr: TraceRecorder | null): PathResult | null {
    const family = orig.family;
    let a: PacketState;
    let label: string;
    if (kind === 'tcp-reset' && orig.proto === PROTO.TCP) {
      // nf_send_reset: never a RST for a RST.
      if (orig.tcpFlags & TCP_FLAGS.RST) return null;
      a = this.packet(family, PROTO.TCP, orig.dst, orig.dport, orig.src, orig.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
      // nf_send_reset/nf_send_reset6 build the RST in a fresh, unowned skb.
      a.socket = null;
      label = 'RST';
    } else {
      // icmp_send / icmpv6_send: never an ICMP error about an ICMP error.
      if (isIcmpError(orig)) return null;
      // icmp_send: the error comes from the destination when it is ours, else from the address
      // routing picks towards the sender.
      const from = this.routing.isLocalAddress(family, orig.dst) ? orig.dst : (this.routing.routeOutput(family, orig.src, 0, null).src ?? orig.dst);
      a = this.packet(family, family === 4 ? PROTO.ICMP : PROTO.ICMPV6, from, 0, orig.src, 0, 0);
      const [type, code] = icmpError(family, kind);
      a.icmpType = type;
      a.icmpCode = code;
      // icmp_send / icmpv6_send: the per-namespace ICMP socket owns the error (no file).
      a.socket = KERNEL_SOCKET;
      label = 'ICMP';
    }
    if (orig.ctEntry >= 0) a.setConntrack(orig.ctTable!, orig.ctEntry, 1 - orig.ctDir, CT_STATE.RELATED);
    // nf_conntrack_attach of an untracked packet: RELATED, no entry (an INVALID one has no
    // skb->_nfct, and nothing is attached).
    else if (orig.untracked || orig.ctState === CT_STATE.UNTRACKED) a.ctAttachedNone = true;
    this.startPacket(tr, index, label, a, 'local', null);
    return this.kernel.sendLocal(a, tr);
  }

  /**
   * The answer to a packet the client sent (its SYN, its datagram, its ACK) that was rejected or
   * found no socket. The attempt is `refused` when the RST or ICMP error reaches the client,
   * `dropped` when a rule or the route loses it.
   */
  private answer(client: ClientEnd, orig: PacketState, kind: string, why: string, tr: TraceRecorder | null, index = 1): ConnectResult {
    const family = orig.family;
    const r = this.sendAnswer(orig, kind, index, tr);
    if (r === null) return this.result('dropped', orig.dst, orig.dport, family, null, `${why}; no answer is sent to it`, tr);
    const p = r.p;
    const rst = p.proto === PROTO.TCP;
    let reached: boolean;
    if (client.kind === 'socket') {
      const c = client.socket;
      reached = (r.kind === 'local' || r.kind === 'refused') && sameAddr(p.dst, c.local!) && (!rst || p.dport === c.localPort);
    } else {
      reached = r.kind === 'wire' && sameAddr(p.dst, client.addr) && (!rst || p.dport === client.port);
    }
    if (reached) return this.result('refused', orig.dst, orig.dport, family, null, why, tr, undefined, null, rst && this.clientConnected ? 'ECONNRESET' : errnoOfAnswer(family, kind));
    const what = `the ${rst ? 'RST' : 'ICMP error'} answering it`;
    if (r.kind === 'dropped') {
      // A rejected answer is answered (if at all) towards its own sender, the namespace.
      if (r.reject) this.sendAnswer(p, r.reject, index + 1, tr);
      return this.result('dropped', p.dst, p.dport, p.family, null, `${why}; ${what}: ${r.reason}${r.reject ? ', which answers the namespace, not the client' : ''}`, tr);
    }
    return this.result('dropped', p.dst, p.dport, p.family, null, `${why}; ${what} did not reach the client`, tr);
  }

  /** Sends a packet from one end of the exchange. */
  private sendFrom(end: ClientEnd | ServerEnd, p: PacketState, owner: SocketView | null, sender: SocketRecord | null, index: number, label: string, tr: TraceRecorder | null): PathResult {
    if (end.kind === 'socket') {
      p.socket = owner;
      p.sender = sender;
      // skb->mark = sk->sk_mark on every packet the socket sends (its ACKs, its FIN).
      if (sender !== null && sender.mark !== 0) p.mark = sender.mark;
      p.checkSource = sender !== null && !sender.transparent;
      this.startPacket(tr, index, label, p, 'local', null);
      return this.kernel.sendLocal(p, tr);
    }
    const dev = this.routing.byName.get(end.dev)!;
    this.startPacket(tr, index, label, p, 'remote', dev.name);
    return this.kernel.receive(p, dev, false, tr);
  }

  /** Whether a packet's journey ended at the given end of the exchange. */
  private arrived(r: PathResult, end: ClientEnd | ServerEnd): boolean {
    if (end.kind === 'socket') return r.kind === 'local' && r.socket === end.socket;
    if (r.kind !== 'wire') return false;
    const p = r.p;
    if (end.kind === 'remote') {
      return sameAddr(p.dst, end.addr) && p.dport === end.port && sameAddr(p.src, end.dstAddr) && p.sport === end.dstPort;
    }
    return sameAddr(p.dst, end.addr) && p.dport === end.port;
  }

  /**
   * A packet of the exchange other than the client's first did not reach the other end. When a
   * REJECT stopped it, its answer goes back to the packet's sender: the client hears of it only
   * when the packet was its own (the ACK); a rejected SYN-ACK or RST is answered towards the
   * server, and the client waits in vain (`dropped`).
   */
  private failure(r: PathResult, tr: TraceRecorder | null, what: string, client: ClientEnd, fromClient: boolean, index: number): ConnectResult {
    const p = r.p;
    if (r.kind === 'dropped' && r.reject) {
      if (fromClient) return this.answer(client, p, r.reject, `${what}: ${r.reason}`, tr, index + 1);
      this.sendAnswer(p, r.reject, index + 1, tr);
      return this.result('dropped', p.dst, p.dport, p.family, null, `${what}: ${r.reason}; the answer goes to its sender, not to the client, which hears nothing`, tr);
    }
    if (r.kind === 'dropped') return this.result('dropped', p.dst, p.dport, p.family, null, `${what}: ${r.reason}`, tr);
    return this.result('dropped', p.dst, p.dport, p.family, null, `${what} did not reach the other end`, tr);
  }

  private finishTcp(client: ClientEnd, first: PathResult, tr: TraceRecorder | null): ConnectResult {
    this.clientConnected = false;
    const syn = first.p;
    const family = syn.family;
    let server: ServerEnd;
    switch (first.kind) {
      case 'dropped':
        if (first.reject) return this.answer(client, syn, first.reject, `rejected (${first.reject})`, tr);
        return this.result('dropped', syn.dst, syn.dport, family, null, first.reason, tr);
      case 'refused': {
        // tcp_v4_send_reset: the RST leaves from the kernel's control socket, which owns it (a
        // socket without a file); tcp_v6_send_response leaves it unowned.
        const rst = this.packet(family, PROTO.TCP, syn.dst, syn.dport, syn.src, syn.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
        rst.socket = family === 4 ? KERNEL_SOCKET : null;
        rst.checkSource = true;
        this.startPacket(tr, 1, 'RST', rst, 'local', null);
        const r = this.kernel.sendLocal(rst, tr);
        if (this.arrived(r, client)) return this.result('refused', syn.dst, syn.dport, family, null, `no listener at ${formatEndpoint(syn.dst, syn.dport, family)}: connection reset`, tr);
        return this.failure(r, tr, 'the RST', client, false, 1);
      }
      case 'local': {
        const l = first.socket;
        if (l.remote !== null) return this.result('dropped', syn.dst, syn.dport, family, null, 'the SYN reached an established connection', tr);
        const req: SocketRecord = {
          family, proto: PROTO.TCP, local: internedAddress(family, syn.dst), localPort: syn.dport, remote: internedAddress(family, syn.src), remotePort: syn.sport,
          owner: l.owner, transparent: l.transparent, mark: 0, listener: l, state: SOCKET_HALF_OPEN,
        };
        this.kernel.sockets.addConnection(req);
        this.opened.push(req);
        server = { kind: 'socket', socket: req };
        break;
      }
      case 'wire': {
        if (this.martianOnWire(syn)) return this.result('dropped', syn.dst, syn.dport, family, null, 'the receiver drops a loopback source (martian)', tr);
        server = { kind: 'peer', dev: first.dev.name, family, addr: syn.dst.slice(), port: syn.dport, clientAddr: syn.src.slice(), clientPort: syn.sport };
        if (!this.peerAccepts(syn.dst, family, syn.dport)) {
          const rst = this.packet(family, PROTO.TCP, syn.dst, syn.dport, syn.src, syn.sport, TCP_FLAGS.RST | TCP_FLAGS.ACK);
          const r = this.sendFrom(server, rst, null, null, 1, 'RST', tr);
          if (this.arrived(r, client)) return this.result('refused', syn.dst, syn.dport, family, null, `${formatEndpoint(syn.dst, syn.dport, family)} refused the connection`, tr);
          return this.failure(r, tr, 'the RST', client, false, 1);
        }
        break;
      }
    }
    // SYN-ACK from the server end to what it saw as the client.
    let synack: PacketState;
    if (server.kind === 'socket') {
      const s = server.socket;
      synack = this.packet(family, PROTO.TCP, s.local!, s.localPort, s.remote!, s.remotePort, TCP_FLAGS.SYN | TCP_FLAGS.ACK);
      // The SYN-ACK belongs to the request socket; owner matches see its listener (skb_to_full_sk).
      const r2 = this.sendFrom(server, synack, s.owner, s, 1, 'SYN-ACK', tr);
      if (!this.arrived(r2, client)) return this.failure(r2, tr, 'the SYN-ACK', client, false, 1);
    } else {
      synack = this.packet(family, PROTO.TCP, server.addr, server.port, server.clientAddr, server.clientPort, TCP_FLAGS.SYN | TCP_FLAGS.ACK);
      const r2 = this.sendFrom(server, synack, null, null, 1, 'SYN-ACK', tr);
      if (!this.arrived(r2, client)) return this.failure(r2, tr, 'the SYN-ACK', client, false, 1);
    }
    // ACK from the client, whose connect() has returned.
    this.clientConnected = true;
    let ack: PacketState;
    if (client.kind === 'socket') {
      const c = client.socket;
      ack = this.packet(family, PROTO.TCP, c.local!, c.localPort, c.remote!, c.remotePort, TCP_FLAGS.ACK);
      const r3 = this.sendFrom(client, ack, c.owner, c, 2, 'ACK', tr);
      if (!this.arrived(r3, server)) return this.misdirected(r3, client, tr) ?? this.failure(r3, tr, 'the ACK', client, true, 2);
    } else {
      ack = this.packet(family, PROTO.TCP, client.addr, client.port, client.dstAddr, client.dstPort, TCP_FLAGS.ACK);
      const r3 = this.sendFrom(client, ack, null, null, 2, 'ACK', tr);
      if (!this.arrived(r3, server)) return this.misdirected(r3, client, tr) ?? this.failure(r3, tr, 'the ACK', client, true, 2);
    }
    this.handshakeDone = true;
    if (server.kind === 'socket') server.socket.state = SOCKET_FULL;
    const closed = this.closing ? this.close(client, server, family, tr) : '';
    if (server.kind === 'socket') {
      const s = server.socket;
      return this.result('local', s.local, s.localPort, family, this.originalDst(s), `accepted by ${describe(s.listener ?? s)}${closed}`, tr, undefined, formatEndpoint(s.remote!, s.remotePort, family));
    }
    return this.result('remote', server.addr, server.port, family, null, `connected through ${server.dev}${closed}`, tr, undefined, formatEndpoint(server.clientAddr, server.clientPort, family));
  }

  /**
   * The client's ACK reached a TCP other than the one that answered its SYN (a NAT rule applied
   * to the ACK alone, when conntrack never saw the SYN): a listener or a closed port there has no
   * such connection and answers with a RST (`tcp_v4_send_reset`: the ACK's acknowledgment number
   * as its sequence, no ACK flag), which resets the client's connection when it reaches it.
   * Returns null when the ACK met no TCP (dropped, or lost on the way).
   */
  private misdirected(r: PathResult, client: ClientEnd, tr: TraceRecorder | null): ConnectResult | null {
    const p = r.p;
    const family = p.family;
    const rst = this.packet(family, PROTO.TCP, p.dst, p.dport, p.src, p.sport, TCP_FLAGS.RST);
    let back: PathResult;
    let where: string;
    if (r.kind === 'local' || r.kind === 'refused') {
      if (r.kind === 'local' && r.socket.remote !== null) return null;
      const l = r.kind === 'local' ? r.socket : this.kernel.sockets.listener(family, PROTO.TCP, p.dst, p.dport);
      where = l !== null ? `${describe(l)}, which has no such connection` : `${formatEndpoint(p.dst, p.dport, family)}, where no socket listens`;
      // The reset leaves from the kernel's control socket (IPv4) or unowned (IPv6), as for a SYN.
      rst.socket = family === 4 ? KERNEL_SOCKET : null;
      rst.checkSource = true;
      this.startPacket(tr, 3, 'RST', rst, 'local', null);
      back = this.kernel.sendLocal(rst, tr);
    } else if (r.kind === 'wire' && !this.martianOnWire(p)) {
      where = `${formatEndpoint(p.dst, p.dport, family)}, which has no such connection`;
      const peer: ServerEnd = { kind: 'peer', dev: r.dev.name, family, addr: p.dst.slice(), port: p.dport, clientAddr: p.src.slice(), clientPort: p.sport };
      back = this.sendFrom(peer, rst, null, null, 3, 'RST', tr);
    } else return null;
    const why = `the ACK reached ${where}`;
    if (this.arrived(back, client)) return this.result('refused', p.dst, p.dport, family, null, `${why}: connection reset`, tr);
    return this.failure(back, tr, `${why}; its RST`, client, false, 3);
  }

  /**
   * An active close by the client (`close()` on an established connection): its FIN-ACK, the
   * server's FIN-ACK (an immediate close on its side) and the client's last ACK, each through
   * the hooks. Then the server's socket is gone (LAST_ACK → CLOSED) and the client's stays in
   * TIME_WAIT for 60 s; conntrack has moved the entry to TIME_WAIT (120 s) on the way. When a
   * packet of the close is lost the sockets are gone all the same (the kernel gives up on an
   * orphaned socket) and the reason says so. Returns the text added to the reason.
   */
  private close(client: ClientEnd, server: ServerEnd, family: Family, tr: TraceRecorder | null): string {
    const FIN_ACK = TCP_FLAGS.FIN | TCP_FLAGS.ACK;
    const steps: [ClientEnd | ServerEnd, ClientEnd | ServerEnd, number, string][] = [
      [client, server, FIN_ACK, 'FIN'],
      [server, client, FIN_ACK, 'FIN'],
      [client, server, TCP_FLAGS.ACK, 'ACK'],
    ];
    let lost: string | null = null;
    for (let i = 0; i < steps.length; i++) {
      const [from, to, flags, label] = steps[i]!;
      const p = this.endPacket(from, family, flags);
      const owner = from.kind === 'socket' ? from.socket.owner : null;
      const r = this.sendFrom(from, p, owner, from.kind === 'socket' ? from.socket : null, 3 + i, label, tr);
      if (!this.arrived(r, to)) {
        lost = r.kind === 'dropped' ? `the ${i === 1 ? "server's" : "client's"} ${label}: ${r.reason}` : `the ${i === 1 ? "server's" : "client's"} ${label} did not reach the other end`;
        break;
      }
    }
    const sockets = this.kernel.sockets;
    if (server.kind === 'socket') sockets.removeConnection(server.socket);
    if (client.kind === 'socket') {
      const c = client.socket;
      if (lost !== null) sockets.removeConnection(c);
      else {
        c.state = this.clock + TCP_TIMEWAIT_LEN;
        this.ports.timeWait.push(c);
      }
    }
    return lost === null ? '; closed (client in TIME_WAIT)' : `; the close did not complete: ${lost}`;
  }

  /**
   * `nf_sk_lookup_slow_v4`/`_v6` for an arriving packet: the socket TPROXY assigned it, else the
   * connection with its 4-tuple (any state: a request, TIME_WAIT), else the listener of its
   * destination. An IPv4 answer of a source-NATed connection is looked up by the original
   * source it is coming back to. ICMP errors carry the packet they answer, which the engine does
   * not keep: for them no socket is found (documented).
   */
  private socketOf(p: PacketState): PacketSocket | null {
    // A locally generated packet still carries its socket (skb->sk) in OUTPUT and POSTROUTING.
    let s: SocketRecord | null = p.assignedSocket ?? (p.inIface === null ? p.sender : null);
    if (s === null) {
      if (p.proto !== PROTO.TCP && p.proto !== PROTO.UDP) return null;
      let daddr: readonly number[] = p.dst;
      let dport = p.dport;
      const e = p.ctEntry;
      const t = p.ctTable;
      if (p.family === 4 && e >= 0 && t !== null && p.ctDir === IP_CT_DIR_REPLY && p.ctState === CT_STATE.ESTABLISHED && t.natDone[e]! & NF_NAT_MANIP_SRC) {
        daddr = t.readAddr(e, IP_CT_DIR_ORIGINAL, T_SRC, []);
        dport = t.port(e, IP_CT_DIR_ORIGINAL, T_SPORT);
      }
      const sockets = this.kernel.sockets;
      s = sockets.find(p.family, p.proto, daddr, dport, p.src, p.sport) ?? sockets.listener(p.family, p.proto, daddr, dport);
      if (s === null) return null;
    }
    return { wildcard: s.local === null, transparent: s.transparent, full: s.state === SOCKET_FULL, mark: s.mark };
  }

  /**
   * `SO_ORIGINAL_DST` on an accepted socket (`getorigdst`): the connection conntrack holds for the
   * socket's own addresses, in the default zone and either direction, gives its original
   * destination. Whatever packets of the exchange went untracked or into another zone, the
   * lookup finds the entry that a later packet made.
   */
  private originalDst(s: SocketRecord): string | null {
    const t = this.kernel.conntrack;
    const ref = t.lookup(0, s.proto, s.local!, s.localPort, s.remote!, s.remotePort);
    if (ref < 0) return null;
    const e = ref >> 1;
    return formatEndpoint(t.readAddr(e, IP_CT_DIR_ORIGINAL, T_DST, this.scratchAddr), t.port(e, IP_CT_DIR_ORIGINAL, T_DPORT), s.family);
  }

  /** Words of an address read and printed at once (see {@link originalDst}). */
  private readonly scratchAddr: number[] = [];

  /** A packet from one end of an established exchange to the other. */
  private endPacket(end: ClientEnd | ServerEnd, family: Family, flags: number): PacketState {
    if (end.kind === 'socket') {
      const s = end.socket;
      return this.packet(family, PROTO.TCP, s.local!, s.localPort, s.remote!, s.remotePort, flags);
    }
    if (end.kind === 'remote') return this.packet(family, PROTO.TCP, end.addr, end.port, end.dstAddr, end.dstPort, flags);
    return this.packet(family, PROTO.TCP, end.addr, end.port, end.clientAddr, end.clientPort, flags);
  }

  /** Whether this call may use the outcome cache (not while {@link connectAll} enumerates draws). */
  private cacheUsable(): boolean {
    const cache = this.cache;
    return cache !== null && this.branch === null && cache.usable();
  }
}
