// The "ideal": the Linkerd and Istio default pods' nat rules written by hand as straight-line
// TypeScript-style code, with the kernel's semantics of each test (owner with no socket, tcp/
// multiport on fragments, RETURN to the built-in chain's ACCEPT policy). Each is a table evaluator
// with the same interface as the lowered evaluator and the reference interpreter, so it runs inside
// the same namespace model (routing, conntrack, NAT, sockets) and makes the same decisions for the
// same probes; run.js checks that before it times anything.
import { NF_INET, PROTO } from '../dist/engine/constants.js';
import { NF_NAT_MANIP_DST } from '../dist/engine/conntrack.js';
import { NF_ACCEPT, NF_DROP } from '../dist/engine/targets.js';

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
