/**
 * The source ports of a namespace's connections: those `connect()` picks from
 * `ip_local_port_range` (`__inet_hash_connect`), those a remote client's own stack picks, and
 * the client sockets in TIME_WAIT whose tuples they may reuse.
 *
 * @module
 */
import type { Family } from '../../model/types.js';
import { PROTO } from '../state/constants.js';
import { TCP_CT } from '../state/conntrack.js';
import type { SocketRecord } from '../state/packet-state.js';
import { isLoopback } from '../state/routing.js';
import type { Kernel, SocketTable } from './kernel.js';
import { fmix32, mulberry32 } from './helpers.js';

/** `net.ipv4.ip_local_port_range`'s default. */
export const LOCAL_PORT_RANGE: readonly [number, number] = [32768, 60999];
/**
 * Slots of the source-port perturbation table of `__inet_hash_connect` (`INET_TABLE_PERTURB_SIZE`:
 * 256 as introduced in Linux 5.17; later kernels use 65536 — the choice only spreads destinations).
 */
const PERTURB_SIZE = 256;
/** `TCP_TIMEWAIT_LEN`: a socket's TIME_WAIT, in seconds. */
export const TCP_TIMEWAIT_LEN = 60;
/** Where a remote client's source ports start (its own stack picks them; ours counts up). */
export const REMOTE_FIRST = 40000;

/** The perturbation table of a namespace that has picked no port yet (never written). */
const NO_PERTURB = new Uint32Array(0);

/** The source ports of one namespace (see the module's comment). */
export class SourcePorts {
  /** `table_perturb` of `__inet_hash_connect` (made at the first port picked). */
  perturb: Uint32Array = NO_PERTURB;
  /** The secret of the source-port hash (`secure_ipv4_port_ephemeral`'s key), from the seed. */
  private readonly secret: number;
  readonly low: number;
  readonly high: number;
  nextRemotePort = REMOTE_FIRST;
  /** Client sockets in TIME_WAIT, oldest first (every one lasts {@link TCP_TIMEWAIT_LEN}). */
  timeWait: SocketRecord[] = [];
  private timeWaitHead = 0;

  /** Ports from `range` (`ip_local_port_range`, already checked), hashed with a secret drawn from `seed`. */
  constructor(seed: number, range: readonly [number, number]) {
    this.secret = mulberry32(seed ^ 0x5eed0f00)();
    this.low = range[0];
    this.high = range[1];
  }

  /**
   * `__inet_hash_connect`: the source port `connect()` binds. A keyed hash of the addresses and
   * destination port (`secure_ipv4_port_ephemeral`), plus the perturbation its table slot has
   * accumulated, gives an offset into `ip_local_port_range`; from there the ports of the range's
   * parity are tried in steps of two, then the others. A port is skipped when a listener holds it
   * (its bind bucket) or when a connection with the same 4-tuple exists (`__inet_check_established`),
   * unless that one is a TIME_WAIT socket `tcp_twsk_unique` lets go (below). At most every port of
   * the range is tried once: -1 when none is free (`EADDRNOTAVAIL`).
   */
  ephemeral(kernel: Kernel, clock: number, proto: number, family: Family, src: readonly number[], dst: readonly number[], dport: number): number {
    const low = this.low;
    const high = this.high + 1;
    let remaining = high - low;
    if (remaining > 1) remaining &= ~1;
    let h = Math.imul(this.secret ^ dport, 0x9e3779b1);
    for (let i = 0; i < src.length; i++) h = Math.imul(h ^ src[i]!, 0x01000193) + 0x7feb352d;
    for (let i = 0; i < dst.length; i++) h = Math.imul(h ^ dst[i]!, 0x01000193) + 0x68e31da4;
    const h1 = fmix32(h);
    const h2 = fmix32(h1 ^ 0x85ebca6b);
    const index = h1 & (PERTURB_SIZE - 1);
    if (this.perturb.length === 0) this.perturb = new Uint32Array(PERTURB_SIZE);
    let offset = ((this.perturb[index]! + h2) >>> 0) % remaining;
    // The first pass tries ports of low's parity (bind() prefers the other one).
    if (remaining > 1) offset &= ~1;
    const sockets = kernel.sockets;
    const ct = kernel.conntrack;
    const step = remaining > 1 ? 2 : 1;
    for (;;) {
      let port = low + offset;
      for (let i = 0; i < remaining; i += step, port += step) {
        if (port >= high) port -= remaining;
        if (sockets.portBound(proto, port)) continue;
        const s = sockets.find(family, proto, src, port, dst, dport);
        if (s !== null && !this.timeWaitReusable(s, clock)) continue;
        // The kernel looks at sockets only. A tuple conntrack still tracks as live (not a closed
        // TCP connection, which a SYN re-opens) is skipped too: it has no socket here only when
        // another end of the simulation made it (a transparent proxy reusing a client's
        // address), and a SYN sent into it would join the other connection.
        const ref = ct.lookup(0, proto, src, port, dst, dport);
        if (ref >= 0 && !(proto === PROTO.TCP && (ct.tcpState[ref >> 1] === TCP_CT.TIME_WAIT || ct.tcpState[ref >> 1] === TCP_CT.CLOSE))) continue;
        if (s !== null) sockets.removeConnection(s);
        // The next connection to the same slot starts past this one (the kernel adds up to
        // 7 random steps more on a quiet table; this stays deterministic).
        this.perturb[index] = (this.perturb[index]! + i + step) >>> 0;
        return port;
      }
      offset++;
      if (!((offset & 1) && remaining > 1)) return -1;
    }
  }

  /**
   * `tcp_twsk_unique` with `net.ipv4.tcp_tw_reuse = 2` (the default): a TIME_WAIT socket gives its
   * tuple to a new connection when one of its addresses is loopback and its last timestamp is from
   * an earlier second.
   */
  private timeWaitReusable(s: SocketRecord, clock: number): boolean {
    const until = s.state;
    if (until < 0) return false;
    if (!isLoopback(s.local!, s.family) && !isLoopback(s.remote!, s.family)) return false;
    return Math.floor(clock) > Math.floor(until - TCP_TIMEWAIT_LEN);
  }

  /**
   * A remote client's source port: its own stack picks one; ours counts up through 32768–60999,
   * skipping tuples the namespace still tracks or has a socket for; -1 when every one is.
   */
  nextRemote(kernel: Kernel, proto: number, family: Family, src: readonly number[], dst: readonly number[], dport: number): number {
    const [low, high] = LOCAL_PORT_RANGE;
    for (let n = 0; n <= high - low; n++) {
      const p = this.nextRemotePort;
      this.nextRemotePort = p >= high ? low : p + 1;
      if (kernel.conntrack.lookup(0, proto, src, p, dst, dport) >= 0) continue;
      if (kernel.sockets.find(family, proto, dst, dport, src, p) !== null) continue;
      return p;
    }
    return -1;
  }

  /** Sockets whose TIME_WAIT has ended by `clock` close. */
  expire(clock: number, sockets: SocketTable): void {
    const q = this.timeWait;
    let h = this.timeWaitHead;
    while (h < q.length && q[h]!.state <= clock) {
      const s = q[h]!;
      // A socket whose tuple connect() reused early has left the table already.
      if (sockets.find(s.family, s.proto, s.local!, s.localPort, s.remote!, s.remotePort) === s) sockets.removeConnection(s);
      h++;
    }
    if (h > 1024 && h * 2 > q.length) {
      this.timeWait = q.slice(h);
      h = 0;
    }
    this.timeWaitHead = h;
  }

  /** Forgets the sockets in TIME_WAIT (their table was emptied). */
  flush(): void {
    this.timeWait = [];
    this.timeWaitHead = 0;
  }
}
