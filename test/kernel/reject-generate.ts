/**
 * Seeded generator of the REJECT area of the connect differential: filter rules that REJECT, in
 * OUTPUT and INPUT (directly or from a user chain), with every `--reject-with` of the family,
 * aimed at the request (the client's SYN or ACK) or at the reply (the SYN-ACK, the RST of a closed
 * port, the ICMP error or RST an earlier REJECT sends), and the probes that cross them: local to
 * loopback, to the pod's own address and to the world, and remote to the pod.
 *
 * REJECT answers the sender of the packet it rejects. The client hears of it only when the
 * rejected packet was its own; a rejected reply leaves it waiting (`dropped`). REJECT never
 * answers a RST with a RST nor an ICMP error with an ICMP error.
 *
 * A case has at most 6 probes: the kernel rate-limits ICMP errors per destination (a burst of 6,
 * then one a second, `icmp_ratelimit`; loopback destinations are exempt), which no case may reach.
 */
import type { KernelCase, KernelListener, KernelProbe } from './harness.js';
import { Rng } from './generate.js';
import type { ConnectCase, SimProbe } from './generate.js';

type Family = 4 | 6;

interface Area {
  readonly family: Family;
  readonly pod: string;
  readonly lo: string;
  /** Remote probe sources (addresses the world owns). */
  readonly peers: readonly string[];
  /** Destinations in the world for local probes (the world's catch-all listener takes them). */
  readonly far: readonly string[];
  readonly rejectWith: readonly string[];
  readonly icmp: string;
  readonly icmpError: string;
  readonly host: (a: string) => string;
  readonly hostPort: (a: string, p: number) => string;
}

const V4: Area = {
  family: 4,
  pod: '10.0.0.2',
  lo: '127.0.0.1',
  peers: ['10.1.0.5', '10.1.0.6'],
  far: ['10.7.7.7', '10.96.0.10'],
  rejectWith: ['icmp-net-unreachable', 'icmp-host-unreachable', 'icmp-port-unreachable', 'icmp-proto-unreachable', 'icmp-net-prohibited', 'icmp-host-prohibited', 'icmp-admin-prohibited', 'tcp-reset'],
  icmp: 'icmp',
  icmpError: '-p icmp -m icmp --icmp-type 3',
  host: (a) => `${a}/32`,
  hostPort: (a, p) => `${a}:${p}`,
};

const V6: Area = {
  family: 6,
  pod: 'fd00::2',
  lo: '::1',
  peers: ['fd00:1::5', 'fd00:1::6'],
  far: ['fd00:7::7', 'fd00:96::10'],
  rejectWith: ['icmp6-no-route', 'icmp6-adm-prohibited', 'icmp6-addr-unreachable', 'icmp6-port-unreachable', 'icmp6-policy-fail', 'icmp6-reject-route', 'tcp-reset'],
  icmp: 'ipv6-icmp',
  // Never all of ICMPv6: neighbour discovery (which the simulator does not model) must pass.
  icmpError: '-p ipv6-icmp -m icmp6 --icmpv6-type 1',
  host: (a) => `${a}/128`,
  hostPort: (a, p) => `[${a}]:${p}`,
};

const LISTEN = 8080;
const CLOSED = 8081;

/** What a rule's matches aim at: some packet of the exchange, as seen in OUTPUT or INPUT. */
function selector(rng: Rng, a: Area, chain: 'OUTPUT' | 'INPUT'): { text: string; tcp: boolean } {
  const peer = rng.pick(a.peers);
  const far = rng.pick(a.far);
  const out = chain === 'OUTPUT';
  const choices: (readonly [number, () => { text: string; tcp: boolean }])[] = [
    // The request.
    [3, () => ({ text: `-p tcp -m tcp --dport ${rng.pick([LISTEN, CLOSED, 80])}`, tcp: true })],
    [2, () => ({ text: '-p tcp -m tcp --tcp-flags SYN,ACK,RST SYN', tcp: true })],
    [2, () => ({ text: '-p tcp -m tcp --tcp-flags SYN,ACK,RST ACK', tcp: true })],
    [2, () => ({ text: '-m conntrack --ctstate NEW', tcp: false })],
    [2, () => ({ text: out ? `-d ${a.host(far)}` : `-s ${a.host(peer)}`, tcp: false })],
    // The reply.
    [3, () => ({ text: `-p tcp -m tcp --sport ${rng.pick([LISTEN, CLOSED, 80])}`, tcp: true })],
    [2, () => ({ text: '-p tcp -m tcp --tcp-flags SYN,ACK SYN,ACK', tcp: true })],
    [2, () => ({ text: '-m conntrack --ctstate ESTABLISHED', tcp: false })],
    [2, () => ({ text: out ? `-d ${a.host(peer)}` : `-s ${a.host(far)}`, tcp: false })],
    [1, () => ({ text: out ? `-s ${a.host(a.pod)} -d ${a.host(a.pod)}` : `-i lo`, tcp: false })],
    // The answers of an earlier REJECT (or of a closed port).
    [2, () => ({ text: '-p tcp -m tcp --tcp-flags RST RST', tcp: true })],
    [2, () => ({ text: rng.chance(0.5) && a.family === 4 ? '-p icmp' : a.icmpError, tcp: false })],
    [2, () => ({ text: '-m conntrack --ctstate RELATED', tcp: false })],
  ];
  return rng.weighted(choices)();
}

function rejectRule(rng: Rng, a: Area, chain: 'OUTPUT' | 'INPUT', into: string): string {
  const s = selector(rng, a, chain);
  // tcp-reset needs -p tcp; otherwise any variant (and sometimes none: the default).
  const variants = s.tcp ? a.rejectWith : a.rejectWith.filter((w) => w !== 'tcp-reset');
  const iface = rng.chance(0.15) ? (chain === 'OUTPUT' ? ` -o ${rng.pick(['lo', 'eth0'])}` : ` -i ${rng.pick(['lo', 'eth0'])}`) : '';
  const w = rng.chance(0.15) ? '' : ` --reject-with ${rng.pick(variants)}`;
  return `-A ${into}${iface} ${s.text} -j REJECT${w}`;
}

function rules(rng: Rng, a: Area): string {
  const lines = ['*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]'];
  const body: string[] = [];
  const chains: string[] = [];
  const n = rng.int(1, 3);
  for (let i = 0; i < n; i++) {
    const chain = rng.pick(['OUTPUT', 'INPUT'] as const);
    if (rng.chance(0.2)) {
      // Through a user chain.
      const name = `REJ-${chain}-${i}`;
      chains.push(name);
      body.push(`-A ${chain} -j ${name}`);
      body.push(rejectRule(rng, a, chain, name));
    } else body.push(rejectRule(rng, a, chain, chain));
    // Now and then a rule that lets a packet through before a REJECT, or drops one.
    if (rng.chance(0.15)) body.splice(rng.int(0, body.length), 0, `-A ${rng.pick(['OUTPUT', 'INPUT'])} -p tcp -m tcp --dport ${rng.pick([LISTEN, 80])} -j ${rng.pick(['ACCEPT', 'DROP'])}`);
  }
  for (const c of chains) lines.push(`:${c} - [0:0]`);
  // A user chain must exist before a rule jumps to it: headers first, then the rules in order.
  return [...lines, ...body, 'COMMIT'].join('\n') + '\n';
}

function probes(rng: Rng, a: Area): KernelProbe[] {
  const out: KernelProbe[] = [];
  const n = rng.int(4, 6);
  for (let i = 0; i < n; i++) {
    const kind = rng.weighted<string>([
      [3, 'remote'],
      [2, 'local-lo'],
      [2, 'local-pod'],
      [2, 'local-far'],
    ]);
    const port = rng.chance(0.75) ? LISTEN : CLOSED;
    if (kind === 'remote') out.push({ from: 'remote', src: rng.pick(a.peers), dst: a.hostPort(a.pod, port) });
    else if (kind === 'local-lo') out.push({ from: 'local', uid: 1000, gid: 1000, dst: a.hostPort(a.lo, port) });
    else if (kind === 'local-pod') out.push({ from: 'local', uid: 1000, gid: 1000, dst: a.hostPort(a.pod, port) });
    else out.push({ from: 'local', uid: 1000, gid: 1000, dst: a.hostPort(rng.pick(a.far), rng.pick([80, 443])) });
  }
  return out;
}

/** A pod with REJECT rules in OUTPUT and INPUT and up to 6 probes (IPv6 for about a third of the seeds). */
export function generateRejectCase(seed: number): ConnectCase {
  const rng = new Rng(seed * 7919 + 17);
  const a = rng.chance(0.35) ? V6 : V4;
  const text = rules(rng, a);
  const ps = probes(rng, a);
  const listeners: KernelListener[] = [{ port: LISTEN }];
  const kernel: KernelCase = a.family === 4 ? { rules4: text, rules6: '', listeners, probes: ps } : { rules4: '', rules6: text, listeners, probes: ps };
  const sim: SimProbe[] = ps.map((p) => (p.from === 'local' ? { from: 'local', uid: p.uid, gid: p.gid ?? p.uid, dst: p.dst } : { from: 'remote', src: p.src, dst: p.dst }));
  return {
    seed,
    description: `IPv${a.family} REJECT`,
    kernel,
    sim: a.family === 4 ? { rules: text, listen: [LISTEN] } : { rules: '', rules6: text, listen: [LISTEN] },
    probes: sim,
  };
}
