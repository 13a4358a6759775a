// The "ideal": the Linkerd and Istio default pods' nat rules written by hand as straight-line
// TypeScript-style code, with the kernel's semantics of each test (owner with no socket, tcp/
// multiport on fragments, RETURN to the built-in chain's ACCEPT policy). Each is a table evaluator
// with the same interface as the lowered evaluator and the reference interpreter, so it runs inside
// the same namespace model (routing, conntrack, NAT, sockets) and makes the same decisions for the
// same probes; run.js checks that before it times anything.
import { NF_INET, PROTO } from '../dist/engine/state/constants.js';
import { NF_NAT_MANIP_DST } from '../dist/engine/state/conntrack.js';
import { NF_ACCEPT, NF_DROP } from '../dist/engine/rules/targets.js';

const NAT = 2; // TABLE_INDEX.nat
const LO = 1; // ifindex of lo
const LOOPBACK = 0x7f000001;
const TCP = PROTO.TCP;

function redirect(p, host, ports) {
  // nf_nat_redirect_ipv4: 127.0.0.1 in OUTPUT, else the first address of the in-device.
  const addr = host.redirectAddress(p);
  if (addr === null) {
    p.dropReason = 'REDIRECT: the incoming interface has no address';
    return NF_DROP;
  }
  return host.natSetup(p, NF_NAT_MANIP_DST, addr, ports, 'REDIRECT', null);
}

function evaluator(doTable) {
  return {
    hasTable: (t) => t === NAT,
    counters: () => [],
    doTable,
  };
}

const TO_4140 = { min: 4140, max: 4140 };
const TO_4143 = { min: 4143, max: 4143 };

/** test/fixtures/linkerd/injected-default.save, by hand. */
export const linkerdIdeal = evaluator((table, hook, p, host) => {
  if (table !== NAT) return NF_ACCEPT;
  if (hook === NF_INET.LOCAL_OUT) {
    // PROXY_INIT_OUTPUT: the proxy's own uid, loopback, the skipped ports return; TCP is redirected.
    const s = p.socket;
    if (s !== null && s.uid === 2102) return NF_ACCEPT;
    if (p.outIndex === LO) return NF_ACCEPT;
    if (p.proto !== TCP) return NF_ACCEPT;
    if (!p.fragment && (p.dport === 4567 || p.dport === 4568)) return NF_ACCEPT;
    return redirect(p, host, TO_4140);
  }
  if (hook === NF_INET.PRE_ROUTING) {
    // PROXY_INIT_REDIRECT
    if (p.proto !== TCP) return NF_ACCEPT;
    const d = p.dport;
    if (!p.fragment && (d === 4190 || d === 4191 || d === 4567 || d === 4568)) return NF_ACCEPT;
    return redirect(p, host, TO_4143);
  }
  return NF_ACCEPT;
});

const TO_15001 = { min: 15001, max: 15001 };
const TO_15006 = { min: 15006, max: 15006 };
const INBOUND_NAT_SRC = 0x7f000006; // 127.0.0.6

/** /work/shared/vectors/istio/kernel-save/derived/injected-sidecar-default.save, by hand. */
export const istioIdeal = evaluator((table, hook, p, host) => {
  if (table !== NAT) return NF_ACCEPT;
  if (hook === NF_INET.LOCAL_OUT) {
    // ISTIO_OUTPUT
    const lo = p.outIndex === LO;
    const s = p.socket;
    const dst = p.dst[0];
    if (lo && p.src[0] === INBOUND_NAT_SRC) return NF_ACCEPT;
    const tcpNot15008 = p.proto === TCP && !p.fragment && p.dport !== 15008;
    // owner: a packet without a socket fails --uid-owner and passes ! --uid-owner.
    const uid1337 = s !== null && s.uid === 1337;
    if (lo && dst !== LOOPBACK && tcpNot15008 && uid1337) return redirect(p, host, TO_15006);
    if (lo && !uid1337) return NF_ACCEPT;
    if (uid1337) return NF_ACCEPT;
    const gid1337 = s !== null && s.gid === 1337;
    if (lo && dst !== LOOPBACK && tcpNot15008 && gid1337) return redirect(p, host, TO_15006);
    if (lo && !gid1337) return NF_ACCEPT;
    if (gid1337) return NF_ACCEPT;
    if (dst === LOOPBACK) return NF_ACCEPT;
    if (p.proto === TCP) return redirect(p, host, TO_15001); // ISTIO_REDIRECT
    return NF_ACCEPT;
  }
  if (hook === NF_INET.PRE_ROUTING) {
    // -p tcp -j ISTIO_INBOUND
    if (p.proto !== TCP) return NF_ACCEPT;
    const d = p.dport;
    if (!p.fragment && (d === 15008 || d === 15090 || d === 15021 || d === 15020)) return NF_ACCEPT;
    return redirect(p, host, TO_15006); // ISTIO_IN_REDIRECT
  }
  return NF_ACCEPT;
});

/**
 * Puts a table evaluator in place of a namespace's IPv4 one. `kernel` and `ev4` are internal
 * (readonly to TypeScript, ordinary properties at run time); this is benchmark code over dist/.
 */
export function useEvaluator(ns, ev) {
  ns.kernel.ev4 = ev;
  return ns;
}

// ---------------------------------------------------------------------------------------------
// The whole connection by hand: the cheapest namespace that gives the same results as Netns for
// the pods' probe mixes (local TCP to Services, to the outside, to loopback and to the pod's own
// address; TCP from outside to the pod). Routing is two tests; the source port is the next free
// one of the ephemeral range; conntrack and sockets are Maps keyed by numbers; NAT is decided by
// the hand-written rules below, once per connection, as the kernel does. What it keeps per
// connection: a conntrack entry (under its original and its reply tuple) and the sockets of both
// ends. It counts no rules and keeps no timers.

const POD = 0x0a000002; // 10.0.0.2, eth0's address
const EPHEMERAL_LOW = 32768;
const EPHEMERAL_HIGH = 60999;

const text4 = (a) => `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;

function parseV4(s) {
  let a = 0;
  let i = 0;
  for (let k = 0; k < 4; k++) {
    let n = 0;
    for (; i < s.length && s.charCodeAt(i) !== 46; i++) n = n * 10 + s.charCodeAt(i) - 48;
    i++;
    a = a * 256 + n;
  }
  return a >>> 0;
}

/** Tuples by destination, then by source, source port and destination port in one number. */
class TupleMap {
  constructor() {
    this.byDst = new Map();
  }
  get(src, sport, dst, dport) {
    return this.byDst.get(dst)?.get(src * 4294967296 + sport * 65536 + dport);
  }
  set(src, sport, dst, dport, v) {
    let m = this.byDst.get(dst);
    if (m === undefined) this.byDst.set(dst, (m = new Map()));
    m.set(src * 4294967296 + sport * 65536 + dport, v);
  }
  clear() {
    this.byDst.clear();
  }
}

/**
 * One pod by hand. `output(uid, gid, lo, dst, dport)` and `prerouting(dport)` are the pod's nat
 * rules: the port a REDIRECT sends the connection to, or 0 to leave it. `pod` is eth0's address
 * (default 10.0.0.2); `conntrack: false` is a pod whose rules need no conntrack, where an accepted
 * socket has no `SO_ORIGINAL_DST`.
 */
export class IdealPod {
  constructor({ listen, output, prerouting, pod = POD, conntrack = true }) {
    this.pod = pod;
    this.tracked = conntrack;
    this.listening = new Set(listen);
    this.output = output;
    this.prerouting = prerouting;
    this.conntrack = new TupleMap();
    this.sockets = new TupleMap();
    this.nextPort = EPHEMERAL_LOW;
    this.nextRemote = EPHEMERAL_LOW;
    this.dsts = new Map();
    this.srcs = new Map();
  }

  flushConntrack() {
    this.conntrack.clear();
    this.sockets.clear();
  }

  endpoint(text) {
    let e = this.dsts.get(text);
    if (e === undefined) {
      const colon = text.lastIndexOf(':');
      e = { addr: parseV4(text.slice(0, colon)), port: Number(text.slice(colon + 1)) };
      this.dsts.set(text, e);
    }
    return e;
  }

  /** The next ephemeral port that no listener, socket or entry holds for this tuple. */
  freePort(src, dst, dport) {
    for (let n = 0; n <= EPHEMERAL_HIGH - EPHEMERAL_LOW; n++) {
      const p = this.nextPort;
      this.nextPort = p === EPHEMERAL_HIGH ? EPHEMERAL_LOW : p + 1;
      if (this.listening.has(p) || this.sockets.get(src, p, dst, dport) !== undefined || this.conntrack.get(src, p, dst, dport) !== undefined) continue;
      return p;
    }
    return -1;
  }

  connect(spec) {
    const d = this.endpoint(spec.dst);
    if (spec.from === 'remote') {
      let src = this.srcs.get(spec.src);
      if (src === undefined) this.srcs.set(spec.src, (src = parseV4(spec.src)));
      let sport = this.nextRemote;
      while (this.conntrack.get(src, sport, d.addr, d.port) !== undefined) sport = sport === EPHEMERAL_HIGH ? EPHEMERAL_LOW : sport + 1;
      this.nextRemote = sport === EPHEMERAL_HIGH ? EPHEMERAL_LOW : sport + 1;
      // PREROUTING's REDIRECT goes to the first address of the incoming interface.
      const to = this.prerouting(d.port);
      return to === 0 ? this.deliver(src, sport, d, d.addr, d.port, spec.dst) : this.deliver(src, sport, d, this.pod, to, spec.dst);
    }
    const loopback = d.addr >>> 24 === 127;
    const lo = loopback || d.addr === this.pod;
    const src = loopback ? 0x7f000001 : this.pod;
    const sport = this.freePort(src, d.addr, d.port);
    this.sockets.set(src, sport, d.addr, d.port, { uid: spec.uid });
    // OUTPUT's REDIRECT goes to 127.0.0.1.
    const to = this.output(spec.uid, spec.gid ?? spec.uid, lo, d.addr, d.port);
    if (to !== 0) return this.deliver(src, sport, d, 0x7f000001, to, spec.dst);
    if (lo) return this.deliver(src, sport, d, d.addr, d.port, spec.dst);
    // Leaves through eth0 to a peer that accepts (no peers are configured).
    const entry = { src, sport, dst: d.addr, dport: d.port, replySrc: d.addr, replyPort: d.port, state: 3 };
    this.conntrack.set(src, sport, d.addr, d.port, entry);
    this.conntrack.set(d.addr, d.port, src, sport, entry);
    return { outcome: 'remote', address: text4(d.addr), port: d.port, originalDestination: null, source: `${text4(src)}:${sport}`, steps: [], reason: 'connected through eth0' };
  }

  /**
   * The SYN reaches `to:port`, redirected or not from `original` (`SO_ORIGINAL_DST`, the
   * destination as the client wrote it): the entry is made; a listener on the port accepts (its
   * socket is kept), or the SYN is reset.
   */
  deliver(src, sport, d, to, port, original) {
    const entry = { src, sport, dst: d.addr, dport: d.port, replySrc: to, replyPort: port, state: 3 };
    this.conntrack.set(src, sport, d.addr, d.port, entry);
    this.conntrack.set(to, port, src, sport, entry);
    if (!this.listening.has(port)) {
      entry.state = 8;
      return { outcome: 'refused', address: null, port: null, originalDestination: null, source: null, steps: [], reason: `no listener at ${text4(to)}:${port}: connection reset` };
    }
    this.sockets.set(to, port, src, sport, { remote: src, remotePort: sport });
    return {
      outcome: 'local', address: text4(to), port, originalDestination: this.tracked ? original : null,
      source: `${text4(src)}:${sport}`, steps: [], reason: `accepted by the listener 0.0.0.0:${port}`,
    };
  }
}

/** The Linkerd default pod by hand (the rules of `linkerdIdeal`). */
export const linkerdIdealPod = () =>
  new IdealPod({
    listen: [4140, 4143, 4191, 8080],
    output: (uid, gid, lo, dst, dport) => (uid === 2102 || lo || dport === 4567 || dport === 4568 ? 0 : 4140),
    prerouting: (dport) => (dport === 4190 || dport === 4191 || dport === 4567 || dport === 4568 ? 0 : 4143),
  });

/** The Istio default pod by hand (the rules of `istioIdeal`, for TCP from a socket). */
export const istioIdealPod = () =>
  new IdealPod({
    listen: [15001, 15006, 15090, 8080],
    output: (uid, gid, lo, dst, dport) => {
      const redirectLo = lo && dst !== LOOPBACK && dport !== 15008;
      if (uid === 1337) return redirectLo ? 15006 : 0;
      if (lo) return 0;
      if (gid === 1337) return redirectLo ? 15006 : 0;
      return dst === LOOPBACK ? 0 : 15001;
    },
    prerouting: (dport) => (dport === 15008 || dport === 15090 || dport === 15021 || dport === 15020 ? 0 : 15006),
  });
