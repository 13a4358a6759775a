/**
 * Seeded generators of the widened connect differential, one per area of the packet path that the
 * mesh-shaped pods of generate.ts seldom reach: IPv6 and dual-stack pods, SNAT/MASQUERADE as the
 * receiving side sees it, TPROXY with its policy routing, marks and connmarks with routing by
 * mark, filtering on every conntrack state, the raw table, owner matches, deep goto/jump chains,
 * `statistic --mode nth`, `recent` lists across connections, and the extensions whose fate the
 * engine decides (ipsets, NETMAP, length, pkttype, ttl/hl, limit, hashlimit, connlimit, quota).
 *
 * Every case is one pod (rules, listeners, policy routing, ipsets) and 4–8 probes made in order
 * in one namespace, so state (conntrack, recent lists, counters, buckets) carries from probe to
 * probe, as it does in the kernel. Each generator is a pure function of the seed.
 *
 * Shapes left out, because they are known corners of their own (each with its own differential
 * case): IPv4-mapped destinations, IPv6 `addrtype`, source address selection among several
 * addresses, MASQUERADE out of `lo`, a SYN_SENT connection's ACK, a misdirected ACK (one
 * direction untracked), SO_ORIGINAL_DST of an untracked SYN, `-m socket`, a CT zone on loopback
 * traffic, a policy `local` route for an address the pod does not own (for its own sockets), and
 * `recent --set` followed on the same packet by a check of the same list.
 */
import { generateConnectCase, Rng } from './generate.js';
import type { ConnectCase, SimProbe } from './generate.js';
import type { KernelCase, KernelListener, KernelProbe } from './harness.js';

type Family = 4 | 6;

interface Fam {
  readonly family: Family;
  readonly pod: string;
  readonly lo: string;
  /** Remote probe sources (the world owns them). */
  readonly peers: readonly string[];
  /** Destinations in the world (its catch-all listener takes them). */
  readonly far: readonly string[];
  /** A prefix holding `far[0]` and not `far[1]`. */
  readonly farNet: string;
  readonly host: (a: string) => string;
  readonly hp: (a: string, p: number) => string;
}

const V4: Fam = {
  family: 4,
  pod: '10.0.0.2',
  lo: '127.0.0.1',
  peers: ['10.1.0.5', '10.1.0.6', '192.168.7.7'],
  far: ['10.96.0.10', '10.7.7.7', '10.100.3.7'],
  farNet: '10.96.0.0/12',
  host: (a) => `${a}/32`,
  hp: (a, p) => `${a}:${p}`,
};

const V6: Fam = {
  family: 6,
  pod: 'fd00::2',
  lo: '::1',
  peers: ['fd00:1::5', 'fd00:1::6', 'fd07::7'],
  far: ['fd00:96::10', 'fd00:7::7', 'fd00:100::3:7'],
  farNet: 'fd00:96::/64',
  host: (a) => `${a}/128`,
  hp: (a, p) => `[${a}]:${p}`,
};

/** What a generator builds: the pod and its probes, family by family. */
interface Pod {
  rules4: string;
  rules6: string;
  listeners: { address?: string; port: number; uid?: number; transparent?: boolean }[];
  probes: SimProbe[];
  ipRules?: { fwmark: number; mask?: number; table: number; priority: number; family: Family }[];
  routes?: { dst: string; type: 'unreachable' | 'prohibit' | 'blackhole' | 'throw' | 'local'; dev?: string; table: number }[];
  ipsets?: string;
  worldRoutes?: string[];
  peer?: boolean;
  /** `Netns` options besides rules, listeners, routing and ipsets (a clock). */
  options?: Record<string, unknown>;
  description: string;
}

/**
 * Pure SYNs or pure ACKs, for counting matches: the harness closes each connection with a RST
 * (SO_LINGER 0), and a listener retransmits a dropped SYN-ACK a second later (into later probes
 * of the case); both cross the hooks in the kernel, and `Netns.connect` sends neither.
 */
const pureSynOrAck = (rng: Rng): string => `-p tcp -m tcp --tcp-flags SYN,ACK,RST ${rng.pick(['SYN', 'ACK'])}`;

const hex = (n: number): string => `0x${n.toString(16)}`;

/**
 * One `-p tcp` per rule, before any `-m tcp` (snippets each bring their own); in IPv6 rules every
 * rule is TCP only, so that neighbour discovery (which the simulator does not model) always passes.
 */
function tidy(line: string, family: Family): string {
  let l = line.replace(/ {2,}/g, ' ').trim();
  const parts = l.split(' -p tcp');
  if (parts.length > 2) l = parts[0] + ' -p tcp' + parts.slice(1).join('');
  if (family === 6 && !/ -p /.test(l)) l = l.replace(/^(-[AI] \S+(?: \d+)?)/, '$1 -p tcp');
  return l;
}

/** A restore text: each table's built-in chains, the user chains, then the rules in order. */
function tables(family: Family, t: Partial<Record<'raw' | 'mangle' | 'nat' | 'filter', string[]>>, policies: Record<string, string> = {}): string {
  const builtins: Record<string, string[]> = {
    raw: ['PREROUTING', 'OUTPUT'],
    mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
    nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
    filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  };
  const out: string[] = [];
  for (const name of ['raw', 'mangle', 'nat', 'filter'] as const) {
    const lines = t[name];
    if (!lines || lines.length === 0) continue;
    out.push(`*${name}`);
    for (const c of builtins[name]!) out.push(`:${c} ${policies[`${name}:${c}`] ?? 'ACCEPT'} [0:0]`);
    const user = new Set<string>();
    for (const l of lines) {
      const m = /^-A (\S+)/.exec(l);
      if (m && !builtins[name]!.includes(m[1]!)) user.add(m[1]!);
    }
    for (const u of user) out.push(`:${u} - [0:0]`);
    out.push(...lines.map((l) => tidy(l, family)), 'COMMIT');
  }
  return out.length === 0 ? '' : out.join('\n') + '\n';
}

const local = (uid: number, dst: string, extra: { gid?: number; groups?: number[]; mark?: number; sport?: number } = {}): SimProbe => ({
  from: 'local',
  uid,
  gid: extra.gid ?? uid,
  dst,
  ...(extra.groups ? { groups: extra.groups } : {}),
  ...(extra.mark === undefined ? {} : { mark: extra.mark }),
  ...(extra.sport === undefined ? {} : { sport: extra.sport }),
});
const remote = (src: string, dst: string, sport?: number): SimProbe => ({ from: 'remote', src, dst, ...(sport === undefined ? {} : { sport }) });

/** A probe of the common kinds: remote to the pod, local to lo, to the pod, to the world. */
function anyProbe(rng: Rng, a: Fam, ports: readonly number[], uids: readonly number[] = [0, 1000]): SimProbe {
  const kind = rng.weighted<string>([
    [4, 'remote'],
    [2, 'lo'],
    [2, 'pod'],
    [3, 'far'],
  ]);
  const port = rng.pick(ports);
  const uid = rng.pick(uids);
  if (kind === 'remote') return remote(rng.pick(a.peers), a.hp(a.pod, port));
  if (kind === 'lo') return local(uid, a.hp(a.lo, port));
  if (kind === 'pod') return local(uid, a.hp(a.pod, port));
  return local(uid, a.hp(rng.pick(a.far), rng.pick([80, 443, port])));
}

function famOf(rng: Rng, p6 = 0.35): Fam {
  return rng.chance(p6) ? V6 : V4;
}

function put(pod: Pod, a: Fam, text: string): void {
  if (a.family === 4) pod.rules4 = text;
  else pod.rules6 = text;
}

// ---------------------------------------------------------------------------------------------
// Areas

/** IPv6-only and dual-stack pods of the mesh-shaped generator (seeds past the connect suite's). */
function ipv6Area(seed: number): ConnectCase {
  // The mesh generator picks the families from the seed: walk seeds until one has IPv6 rules.
  for (let s = 100_000 + seed * 7; ; s++) {
    const c = generateConnectCase(s);
    if (c.kernel.rules6 !== undefined && (c.kernel.rules6 !== '' || c.kernel.probes.some((p) => p.dst.startsWith('[')))) {
      return { ...c, seed, description: `mesh seed ${s}: ${c.description}` };
    }
  }
}

/** SNAT, MASQUERADE and NETMAP of the source; the receiving listener's peer address is compared. */
function snatArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng);
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], peer: true, description: '' };
  const nat: string[] = [];
  const filter: string[] = [];
  let portsFixed = true;
  // Port ranges wide enough for every probe of a case: the harness closes each connection with a
  // RST, which leaves its conntrack entry CLOSE in the kernel (its tuple free again), while
  // `Netns.connect` stops at the handshake; one fixed port would be taken in ours and not there.
  const range = (lo: number): string => `${lo}-${lo + 15}`;
  const otherLo = a.family === 4 ? '127.0.0.6' : null;
  const inputSrc = a.family === 4 ? '10.1.0.99' : 'fd00:1::99';
  const picks: (() => void)[] = [
    () => nat.push(`-A POSTROUTING -o eth0 -j MASQUERADE`),
    () => {
      nat.push(`-A POSTROUTING -o eth0 -p tcp -m tcp --dport ${rng.pick([80, 443, 8080])} -j MASQUERADE --to-ports ${range(rng.int(5000, 5099))}`);
      portsFixed = false;
    },
    () => {
      nat.push(`-A POSTROUTING -o eth0 -p tcp -j MASQUERADE --to-ports ${range(rng.int(6000, 6050))}`);
      portsFixed = false;
    },
    () => {
      nat.push(`-A POSTROUTING -o eth0 -p tcp -j MASQUERADE ${rng.pick(['--random', '--random-fully'])}`);
      portsFixed = false;
    },
    () => nat.push(`-A POSTROUTING -o eth0 -d ${a.host(rng.pick(a.far))} -j SNAT --to-source ${a.pod}`),
    () => {
      nat.push(`-A POSTROUTING -o eth0 -p tcp -j SNAT --to-source ${a.hp(a.pod, 0).replace(/:0$/, `:${range(rng.int(7000, 7099))}`)}`);
      portsFixed = false;
    },
    () => {
      nat.push(`-A POSTROUTING -p tcp -m tcp --dport ${rng.pick([80, 443])} -j SNAT --to-source ${a.hp(a.pod, 0).replace(/:0$/, `:${range(rng.int(7100, 7150))}`)}`);
      portsFixed = false;
    },
    // The pod's own traffic over lo, given another source.
    () => nat.push(`-A POSTROUTING -o lo -p tcp -m tcp --dport ${rng.pick([8080, 8081])} -j SNAT --to-source ${otherLo && rng.chance(0.6) ? otherLo : a.pod}`),
    () => {
      nat.push(`-A POSTROUTING -o lo -s ${a.host(a.lo)} -p tcp -j SNAT --to-source ${a.hp(otherLo ?? a.pod, 0).replace(/:0$/, `:${range(rng.int(7200, 7299))}`)}`);
      portsFixed = false;
    },
    // Arriving connections, given another source in INPUT.
    () => nat.push(`-A INPUT -p tcp -m tcp --dport ${rng.pick([8080, 8081])} -j SNAT --to-source ${inputSrc}`),
    () => {
      nat.push(`-A INPUT -s ${a.host(a.peers[0]!)} -p tcp -j SNAT --to-source ${a.hp(inputSrc, 0).replace(/:0$/, `:${range(rng.int(7300, 7399))}`)}`);
      portsFixed = false;
    },
    () => nat.push(`-A INPUT -i lo -p tcp -j SNAT --to-source ${a.pod}`),
    // Chained with DNAT/REDIRECT.
    () => nat.push(`-A OUTPUT -d ${a.host(a.far[2]!)} -p tcp -j DNAT --to-destination ${a.hp(a.far[1]!, 80)}`),
    () => nat.push(`-A OUTPUT -d ${a.host(a.far[0]!)} -p tcp -m tcp --dport 443 -j REDIRECT --to-ports 8081`),
    () => nat.push(`-A PREROUTING -p tcp -m tcp --dport 9090 -j REDIRECT --to-ports 8080`),
    // Who saw what, as the rules see it.
    () => filter.push(`-A INPUT -p tcp -m conntrack --ctstate SNAT -m tcp --dport 8081 -j REJECT --reject-with tcp-reset`),
    () => filter.push(`-A INPUT -s ${a.host(inputSrc)} -j DROP`),
    () => filter.push(`-A OUTPUT -p tcp -m conntrack --ctstate SNAT -m tcp --sport 8080 -j DROP`),
    () => nat.push(`-I POSTROUTING 1 -m conntrack --ctstate DNAT -j RETURN`),
  ];
  if (a.family === 4) {
    picks.push(
      () => nat.push(`-A POSTROUTING -o eth0 -j NETMAP --to ${rng.pick(['10.0.0.0/24', '10.0.0.2/32'])}`),
      () => nat.push(`-A INPUT -s 10.1.0.0/24 -j NETMAP --to 10.3.0.0/24`),
    );
  }
  for (const f of rng.sample(picks, rng.int(1, 4))) f();
  put(pod, a, tables(a.family, { nat, filter }));
  const n = rng.int(4, 7);
  let sport = 20000 + rng.int(0, 900) * 10;
  for (let i = 0; i < n; i++) {
    const p = anyProbe(rng, a, [8080, 8081, 9090], [0, 1000]);
    // A fixed source port where the NAT keeps or sets it deterministically (ranges pick at random).
    const withSport = portsFixed && rng.chance(0.5);
    pod.probes.push(withSport ? { ...p, sport: sport++ } : p);
  }
  pod.description = `IPv${a.family} SNAT (${nat.length} nat, ${filter.length} filter rules)`;
  return pod;
}

/** TPROXY in mangle PREROUTING, the fwmark rule and the `local` route of its table, transparent listeners. */
function tproxyArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng);
  const mark = rng.pick([1, 0x1, 0x539, 0x100]);
  const mask = rng.chance(0.4) ? rng.pick([0xff, 0xfff, 0xffffffff]) : undefined;
  const table = rng.pick([100, 133]);
  const markSpec = mask === undefined ? hex(mark) : `${hex(mark)}/${hex(mask)}`;
  const tport = rng.pick([15001, 15006]);
  const onIp = rng.weighted<string | null>([
    [3, null],
    [2, a.lo],
    [1, a.pod],
  ]);
  const mangle: string[] = [];
  const filter: string[] = [];
  const divert = rng.chance(0.5);
  if (divert) {
    // Istio's: packets of connections that already have a socket go straight to it.
    mangle.push('-A PREROUTING -p tcp -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT');
  }
  const sel = rng.weighted<string>([
    [3, '-p tcp'],
    [2, `-p tcp -m tcp --dport ${rng.pick([8080, 9090, 80])}`],
    [2, `-p tcp -m multiport --dports 8080,80,443`],
    [1, `-p tcp -m tcp ! --dport ${tport}`],
    [1, `-p tcp -i eth0`],
  ]);
  const tgt = `-j TPROXY --on-port ${tport}${onIp ? ` --on-ip ${onIp}` : ''} --tproxy-mark ${markSpec}`;
  if (rng.chance(0.3)) {
    mangle.push(`-A PREROUTING ${sel} -j ISTIO_TPROXY`, `-A ISTIO_TPROXY ! -d ${a.host(a.lo)} -p tcp ${tgt}`);
  } else mangle.push(`-A PREROUTING ${sel} ${tgt}`);
  if (rng.chance(0.3)) mangle.push(`-A PREROUTING -p tcp -m mark --mark ${markSpec} -j CONNMARK --save-mark`);
  if (rng.chance(0.25)) filter.push(`-A INPUT -p tcp -m mark --mark ${markSpec} -m tcp --dport ${rng.pick([8080, 80])} -j DROP`);
  if (rng.chance(0.2)) filter.push(`-A INPUT -p tcp -m tcp --dport ${tport} -j REJECT --reject-with tcp-reset`);
  const pod: Pod = { rules4: '', rules6: '', listeners: [], probes: [], description: '' };
  put(pod, a, tables(a.family, { mangle, filter }));
  pod.ipRules = [{ fwmark: mark, ...(mask === undefined ? {} : { mask }), table, priority: rng.pick([100, 32000]), family: a.family }];
  pod.routes = [{ dst: a.family === 4 ? '0.0.0.0/0' : '::/0', type: 'local', dev: 'lo', table }];
  // The proxy's transparent listener, the app's plain ones.
  const tAddr = rng.weighted<string | undefined>([
    [3, undefined],
    [1, a.lo],
  ]);
  pod.listeners.push(tAddr ? { address: tAddr, port: tport, transparent: true } : { port: tport, transparent: true });
  if (rng.chance(0.25)) pod.listeners.push({ port: tport === 15001 ? 15006 : 15001 });
  pod.listeners.push({ port: 8080 });
  if (rng.chance(0.5)) pod.listeners.push({ port: 9090 });
  pod.worldRoutes = [a.family === 4 ? `${a.farNet} via ${a.pod}` : `${a.farNet} via ${a.pod}`];
  const n = rng.int(4, 7);
  for (let i = 0; i < n; i++) {
    const kind = rng.weighted<string>([
      [4, 'remote-pod'],
      [3, 'remote-far'],
      [2, 'local-own'],
    ]);
    const port = rng.pick([8080, 9090, 80, 443, tport]);
    if (kind === 'remote-pod') pod.probes.push(remote(rng.pick(a.peers), a.hp(a.pod, port)));
    else if (kind === 'remote-far') pod.probes.push(remote(rng.pick(a.peers), a.hp(a.far[0]!, port)));
    else pod.probes.push(local(rng.pick([0, 1000]), a.hp(rng.pick([a.lo, a.pod]), port)));
  }
  pod.description = `IPv${a.family} TPROXY on ${tport}${onIp ? ` ip ${onIp}` : ''}, mark ${markSpec} → table ${table}${divert ? ', divert' : ''}`;
  return pod;
}

/** MARK and CONNMARK (set, save, restore, masks) read by filter and nat, and routing by mark. */
function marksArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng);
  const mangle: string[] = [];
  const nat: string[] = [];
  const filter: string[] = [];
  const marks = [1, 2, 0x10, 0x539, 0x4000];
  const m = (): number => rng.pick(marks);
  const sel = (out: boolean): string =>
    rng.weighted<string>([
      [3, `-p tcp -m tcp --dport ${rng.pick([8080, 8081, 80, 443])}`],
      [1, out ? `-m owner --uid-owner ${rng.pick([0, 1000])}` : `-s ${a.host(rng.pick(a.peers))}`],
      [1, out ? `-d ${a.host(rng.pick(a.far))}` : '-i eth0'],
      [1, '-p tcp'],
    ]);
  const setMark = (): string =>
    rng.weighted<string>([
      [3, `-j MARK --set-mark ${hex(m())}`],
      [1, `-j MARK --set-xmark ${hex(m())}/${hex(rng.pick([0xff, 0xffff, 0xffffffff]))}`],
      [1, `-j MARK --or-mark ${hex(m())}`],
      [1, `-j MARK --and-mark ${hex(rng.pick([0xf, 0xfff0, 0]))}`],
    ]);
  const picks: (() => void)[] = [
    () => mangle.push(`-A OUTPUT ${sel(true)} ${setMark()}`),
    () => mangle.push(`-A PREROUTING ${sel(false)} ${setMark()}`),
    () => mangle.push(`-A PREROUTING -j CONNMARK --restore-mark${rng.chance(0.3) ? ' --mask 0xff' : ''}`),
    () => mangle.push(`-A OUTPUT -j CONNMARK --restore-mark${rng.chance(0.3) ? ' --nfmask 0xffff --ctmask 0xff' : ''}`),
    () => mangle.push(`-A PREROUTING -m mark ! --mark 0 -j CONNMARK --save-mark`),
    () => mangle.push(`-A POSTROUTING -j CONNMARK --save-mark${rng.chance(0.3) ? ' --mask 0xfff' : ''}`),
    () => {
      const out = rng.chance(0.5);
      mangle.push(`-A ${out ? 'OUTPUT' : 'PREROUTING'} ${sel(out)} -j CONNMARK --set-mark ${hex(m())}${rng.chance(0.3) ? '/0xff' : ''}`);
    },
    () => mangle.push(`-A INPUT -j CONNMARK --set-xmark ${hex(m())}/${hex(rng.pick([0xff, 0xffffffff]))}`),
    () => filter.push(`-A INPUT -m mark --mark ${hex(m())} -j DROP`),
    () => filter.push(`-A INPUT -p tcp -m connmark --mark ${hex(m())}${rng.chance(0.3) ? '/0xff' : ''} -m tcp --dport ${rng.pick([8080, 8081])} -j REJECT --reject-with tcp-reset`),
    () => filter.push(`-A OUTPUT -m mark ! --mark 0 -p tcp -m tcp --sport ${rng.pick([8080, 8081])} -j DROP`),
    () => filter.push(`-A OUTPUT -m connmark --mark ${hex(m())} -p tcp -m tcp --dport ${rng.pick([80, 443, 8080])} -j REJECT`),
    () => nat.push(`-A OUTPUT -m mark --mark ${hex(m())} -p tcp -j REDIRECT --to-ports 8081`),
    () => nat.push(`-A PREROUTING -m connmark ! --mark 0 -p tcp -m tcp --dport 9090 -j REDIRECT --to-ports 8080`),
  ];
  for (const f of rng.sample(picks, rng.int(2, 5))) f();
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], description: '' };
  put(pod, a, tables(a.family, { mangle, nat, filter }));
  // Routing by mark: a table that refuses the world's prefix (never a local route here).
  const rules: NonNullable<Pod['ipRules']> = [];
  const routes: NonNullable<Pod['routes']> = [];
  const nr = rng.int(0, 2);
  for (let i = 0; i < nr; i++) {
    const table = 100 + i;
    const fw = m();
    const mask = rng.chance(0.3) ? 0xff : undefined;
    rules.push({ fwmark: fw, ...(mask === undefined ? {} : { mask }), table, priority: 1000 + i, family: a.family });
    routes.push({ dst: rng.pick([a.farNet, a.family === 4 ? '0.0.0.0/0' : '::/0']), type: rng.pick(['unreachable', 'prohibit', 'blackhole', 'throw'] as const), table });
  }
  if (rules.length > 0) {
    pod.ipRules = rules;
    pod.routes = routes;
  }
  const n = rng.int(4, 8);
  for (let i = 0; i < n; i++) {
    const p = anyProbe(rng, a, [8080, 8081, 9090], [0, 1000]);
    pod.probes.push(p.from === 'local' && rng.chance(0.25) ? { ...p, mark: m() } : p);
  }
  pod.description = `IPv${a.family} marks (${mangle.length} mangle, ${nat.length} nat, ${filter.length} filter, ${rules.length} fwmark rules)`;
  return pod;
}

/** Filtering on every conntrack state and status, with the NAT and raw rules that make them. */
function ctstateArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng);
  const raw: string[] = [];
  const nat: string[] = [];
  const filter: string[] = [];
  const states = ['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED', 'SNAT', 'DNAT'];
  const stateSet = (): string => rng.sample(states, rng.int(1, 3)).join(',');
  const verdict = (): string => rng.pick(['-j DROP', '-j REJECT', '-j REJECT --reject-with tcp-reset', '-j ACCEPT', '-j RETURN']);
  const tcpVerdict = (v: string): string => (v.includes('tcp-reset') ? `-p tcp ${v}` : v);
  const where = (): string => rng.pick(['INPUT', 'OUTPUT']);
  const port = (): number => rng.pick([8080, 8081, 9090, 80]);
  const picks: (() => void)[] = [
    () => filter.push(`-A ${where()} ${rng.chance(0.5) ? `-p tcp -m tcp --dport ${port()} ` : ''}-m conntrack ${rng.chance(0.2) ? '! ' : ''}--ctstate ${stateSet()} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -m state --state ${rng.sample(['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED'], rng.int(1, 2)).join(',')} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -m conntrack --ctstatus ${rng.sample(['SEEN_REPLY', 'ASSURED', 'CONFIRMED', 'EXPECTED', 'NONE'], rng.int(1, 2)).join(',')} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -p tcp -m conntrack --ctstate ${stateSet()} --ctdir ${rng.pick(['ORIGINAL', 'REPLY'])} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -m conntrack --ctproto tcp --ctorigdstport ${port()} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -m conntrack --ctorigsrc ${a.host(rng.pick([...a.peers, a.lo, a.pod]))} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -m conntrack --ctorigdst ${a.host(rng.pick([a.far[0]!, a.pod, a.lo]))} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -m conntrack --ctrepldst ${a.host(rng.pick([a.pod, a.lo]))} --ctreplsrc ${a.host(rng.pick([a.pod, a.lo, a.far[1]!]))} ${tcpVerdict(verdict())}`),
    () => filter.push(`-A ${where()} -p tcp -m conntrack --ctstate NEW -m tcp ! --tcp-flags FIN,SYN,RST,ACK SYN -j DROP`),
    () => filter.push(`-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`, `-A INPUT -i lo -j ACCEPT`, `-A INPUT -p tcp -m tcp --dport ${port()} -m conntrack --ctstate NEW -j ACCEPT`, `-A INPUT -p tcp -j REJECT --reject-with tcp-reset`),
    () => nat.push(`-A OUTPUT -d ${a.host(a.far[0]!)} -p tcp -j DNAT --to-destination ${a.hp(a.far[1]!, 80)}`),
    () => nat.push(`-A OUTPUT -d ${a.host(a.far[2]!)} -p tcp -j DNAT --to-destination ${a.hp(a.pod, 8080)}`),
    () => nat.push(`-A PREROUTING -p tcp -m tcp --dport 9090 -j REDIRECT --to-ports 8081`),
    () => nat.push(`-A OUTPUT -o lo -p tcp -m tcp --dport 9090 -j REDIRECT --to-ports 8080`),
    () => nat.push(`-A POSTROUTING -o eth0 -j MASQUERADE`),
    () => nat.push(`-A INPUT -p tcp -m tcp --dport 8081 -j SNAT --to-source ${a.family === 4 ? '10.1.0.99' : 'fd00:1::99'}`),
    // Untracked both ways (never one direction only).
    () => {
      const p = rng.pick([8080, 8081, 80]);
      raw.push(`-A PREROUTING -p tcp -m tcp --dport ${p} -j CT --notrack`, `-A OUTPUT -p tcp -m tcp --sport ${p} -j CT --notrack`, `-A OUTPUT -p tcp -m tcp --dport ${p} -j CT --notrack`, `-A PREROUTING -p tcp -m tcp --sport ${p} -j CT --notrack`);
    },
  ];
  for (const f of rng.sample(picks, rng.int(2, 5))) f();
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], description: '' };
  put(pod, a, tables(a.family, { raw, nat, filter }));
  const n = rng.int(4, 7);
  for (let i = 0; i < n; i++) pod.probes.push(anyProbe(rng, a, [8080, 8081, 9090, 8082]));
  pod.description = `IPv${a.family} conntrack states (${raw.length} raw, ${nat.length} nat, ${filter.length} filter)`;
  return pod;
}

/** The raw table: CT --notrack, NOTRACK, zones (never on loopback traffic), and what follows from them. */
function rawArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng);
  const raw: string[] = [];
  const rawTail: string[] = [];
  const mangle: string[] = [];
  const nat: string[] = [];
  const filter: string[] = [];
  const port = (): number => rng.pick([8080, 8081, 80, 443]);
  const nt = (): string => rng.pick(['-j CT --notrack', '-j NOTRACK']);
  const picks: (() => void)[] = [
    // Both directions of a port untracked.
    () => {
      const p = port();
      raw.push(`-A PREROUTING -p tcp -m tcp --dport ${p} ${nt()}`, `-A OUTPUT -p tcp -m tcp --sport ${p} ${nt()}`, `-A OUTPUT -p tcp -m tcp --dport ${p} ${nt()}`, `-A PREROUTING -p tcp -m tcp --sport ${p} ${nt()}`);
    },
    // Everything of a peer, or to a far address, untracked both ways.
    () => {
      const h = a.host(rng.pick(a.peers));
      raw.push(`-A PREROUTING -s ${h} ${nt()}`, `-A OUTPUT -d ${h} ${nt()}`);
    },
    () => {
      const h = a.host(rng.pick(a.far));
      raw.push(`-A OUTPUT -d ${h} ${nt()}`, `-A PREROUTING -s ${h} ${nt()}`);
    },
    // Loopback untracked both ways (it is the same hooks).
    () => raw.push(`-A OUTPUT -o lo ${nt()}`, `-A PREROUTING -i lo ${nt()}`),
    // A zone for the world's connections, in both directions (never on lo).
    () => {
      const z = rng.int(1, 5);
      raw.push(`-A OUTPUT -o eth0 -j CT --zone ${z}`, `-A PREROUTING -i eth0 -j CT --zone ${z}`);
    },
    () => {
      const z = rng.int(1, 5);
      const h = a.host(rng.pick(a.far));
      raw.push(`-A OUTPUT -d ${h} -j CT --zone ${z}`, `-A PREROUTING -s ${h} -j CT --zone ${z}`);
    },
    // One segment of the handshake untracked: the SYN (the ACK is taken up mid-stream, and a NAT
    // rule then applies to the ACK alone) or the SYN-ACK (the ACK meets an entry in SYN_SENT).
    () => raw.push(`-A ${rng.pick(['PREROUTING', 'OUTPUT'])} -p tcp -m tcp --tcp-flags SYN,ACK ${rng.pick(['SYN', 'SYN,ACK'])} ${nt()}`),
    // A zone for the SYN alone, loopback included: the rest of the connection is in the default zone.
    () => raw.push(`-A ${rng.pick(['PREROUTING', 'OUTPUT'])} -p tcp -m tcp --tcp-flags SYN,ACK SYN -j CT --zone ${rng.int(1, 5)}`),
    // The socket an arriving packet belongs to.
    () => {
      const opts = rng.sample(['--transparent', '--nowildcard'], rng.int(0, 2)).join(' ');
      mangle.push(`-A PREROUTING -p tcp -m socket${opts ? ` ${opts}` : ''} -j MARK --set-mark 0x9`);
      filter.push(`-A INPUT -m mark ${rng.pick(['', '! '])}--mark 0x9 -p tcp -m tcp --dport ${port()} -j ${rng.pick(['DROP', 'REJECT --reject-with tcp-reset'])}`);
    },
    // Last in OUTPUT, so that it never keeps a zone rule from a packet (the zones stay symmetric).
    () => rawTail.push(`-A OUTPUT -p tcp -j CT --ctevents new,destroy`),
    () => raw.push(`-A ${rng.pick(['PREROUTING', 'OUTPUT'])} -p tcp -m tcp --dport ${port()} -j ${rng.pick(['DROP', 'ACCEPT', 'RETURN'])}`),
    () => filter.push(`-A ${rng.pick(['INPUT', 'OUTPUT'])} -m conntrack --ctstate UNTRACKED ${rng.pick(['-j DROP', '-j ACCEPT', '-p tcp -j REJECT --reject-with tcp-reset'])}`),
    () => filter.push(`-A ${rng.pick(['INPUT', 'OUTPUT'])} -m state ! --state UNTRACKED -p tcp -m tcp --dport ${port()} -j DROP`),
    () => filter.push(`-A INPUT -m conntrack --ctstate INVALID -j DROP`),
    () => nat.push(`-A OUTPUT -p tcp -m tcp --dport ${port()} -j REDIRECT --to-ports 8081`),
    () => nat.push(`-A PREROUTING -p tcp -m tcp --dport 9090 -j REDIRECT --to-ports 8080`),
    () => nat.push(`-A POSTROUTING -o eth0 -j MASQUERADE`),
    () => {
      mangle.push('-A PREROUTING -m conntrack --ctstate UNTRACKED -j MARK --set-mark 0x7');
      filter.push('-A INPUT -m mark --mark 0x7 -p tcp -m tcp --dport 8081 -j DROP');
    },
  ];
  for (const f of rng.sample(picks, rng.int(2, 5))) f();
  raw.push(...rawTail);
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], description: '' };
  put(pod, a, tables(a.family, { raw, mangle, nat, filter }));
  const n = rng.int(4, 7);
  for (let i = 0; i < n; i++) pod.probes.push(anyProbe(rng, a, [8080, 8081, 9090, 443]));
  pod.description = `IPv${a.family} raw (${raw.length} raw rules)`;
  return pod;
}

/** owner: uid and gid ranges, negations, supplementary groups, --socket-exists, listeners' owners. */
function ownerArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng, 0.3);
  const filter: string[] = [];
  const nat: string[] = [];
  const mangle: string[] = [];
  const ids = [0, 1, 1000, 1001, 1337, 2102, 3000, 65534];
  const id = (): string => {
    const x = rng.pick(ids);
    return rng.weighted<string>([
      [3, String(x)],
      [2, `${x}-${x + rng.pick([0, 1, 500, 2000])}`],
    ]);
  };
  const neg = (): string => (rng.chance(0.3) ? '! ' : '');
  const opts = (): string => {
    const parts: string[] = [];
    if (rng.chance(0.6)) parts.push(`${neg()}--uid-owner ${id()}`);
    if (rng.chance(0.45)) parts.push(`${neg()}--gid-owner ${id()}${rng.chance(0.3) ? ' --suppl-groups' : ''}`);
    if (parts.length === 0 || rng.chance(0.25)) parts.push(`${neg()}--socket-exists`);
    return rng.shuffle(parts).join(' ');
  };
  const verdict = (): string => rng.pick(['-j DROP', '-j REJECT', '-p tcp -j REJECT --reject-with tcp-reset', '-j ACCEPT', '-j RETURN']);
  const n = rng.int(1, 4);
  for (let i = 0; i < n; i++) {
    const where = rng.weighted<string>([
      [4, 'filter'],
      [2, 'nat'],
      [1, 'mangle'],
    ]);
    const sel = rng.chance(0.5) ? ` -p tcp -m tcp --${rng.pick(['dport', 'sport'])} ${rng.pick([8080, 8081, 80])}` : '';
    if (where === 'filter') filter.push(`-A OUTPUT${sel} -m owner ${opts()} ${verdict()}`);
    else if (where === 'nat') {
      const hook = rng.pick(['OUTPUT', 'POSTROUTING']);
      const tgt = hook === 'OUTPUT' ? rng.pick(['-j RETURN', '-j ACCEPT', '-p tcp -j REDIRECT --to-ports 8081']) : rng.pick(['-j RETURN', '-j ACCEPT', '-o eth0 -j MASQUERADE']);
      nat.push(`-A ${hook}${sel} -m owner ${opts()} ${tgt}`);
    }
    else mangle.push(`-A ${rng.pick(['OUTPUT', 'POSTROUTING'])}${sel} -m owner ${opts()} -j MARK --set-mark 0x9`);
  }
  if (nat.length > 0 && rng.chance(0.6)) nat.push(`-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080`);
  if (mangle.length > 0) filter.push('-A OUTPUT -m mark --mark 0x9 -j DROP');
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080, uid: rng.pick([0, 1000, 1337]) }, { port: 8081, uid: rng.pick([0, 2102]) }], probes: [], description: '' };
  put(pod, a, tables(a.family, { mangle, nat, filter }));
  const np = rng.int(4, 7);
  for (let i = 0; i < np; i++) {
    const uid = rng.pick(ids);
    const gid = rng.chance(0.6) ? uid : rng.pick(ids);
    const groups = rng.chance(0.3) ? rng.sample(ids, rng.int(1, 2)) : undefined;
    const kind = rng.weighted<string>([
      [3, 'lo'],
      [2, 'pod'],
      [3, 'far'],
      [2, 'remote'],
    ]);
    const port = rng.pick([8080, 8081, 80, 8082]);
    if (kind === 'remote') pod.probes.push(remote(rng.pick(a.peers), a.hp(a.pod, port)));
    else pod.probes.push(local(uid, a.hp(kind === 'lo' ? a.lo : kind === 'pod' ? a.pod : rng.pick(a.far), port), { gid, ...(groups ? { groups } : {}) }));
  }
  pod.description = `IPv${a.family} owner (${filter.length} filter, ${nat.length} nat, ${mangle.length} mangle)`;
  return pod;
}

/** Deep chains: jumps and gotos several levels down, RETURN, and verdicts at every depth. */
function gotoArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng, 0.3);
  const table = rng.weighted<'filter' | 'nat' | 'mangle'>([
    [4, 'filter'],
    [2, 'nat'],
    [1, 'mangle'],
  ]);
  const hooks = table === 'filter' ? ['INPUT', 'OUTPUT'] : table === 'nat' ? ['PREROUTING', 'OUTPUT'] : ['PREROUTING', 'OUTPUT'];
  const depth = rng.int(3, 10);
  const names = Array.from({ length: depth }, (_, i) => `C${i}`);
  const lines: string[] = [];
  const filterExtra: string[] = [];
  const match = (): string =>
    rng.weighted<string>([
      [3, `-p tcp -m tcp --dport ${rng.pick([8080, 8081, 80, 9090])}`],
      [2, `-p tcp -m tcp ! --dport ${rng.pick([8080, 8081])}`],
      [1, `-s ${a.host(rng.pick([...a.peers, a.lo, a.pod]))}`],
      [1, `-d ${a.host(rng.pick([a.lo, a.pod, a.far[0]!]))}`],
      [1, `-p tcp -m tcp --tcp-flags SYN,ACK SYN`],
      [2, ''],
    ]);
  const terminal = (hook: string): string => {
    if (table === 'filter') return rng.pick(['-j DROP', '-j ACCEPT', '-j REJECT', '-j RETURN']);
    if (table === 'nat') return rng.pick(['-j RETURN', '-j ACCEPT', hook === 'OUTPUT' || hook === 'PREROUTING' ? '-p tcp -j REDIRECT --to-ports 8081' : '-j RETURN']);
    return rng.pick(['-j RETURN', `-j MARK --set-mark ${rng.int(1, 3)}`, '-j ACCEPT']);
  };
  for (const hook of hooks) {
    if (rng.chance(0.2)) continue;
    lines.push(`-A ${hook} ${match()} ${rng.chance(0.5) ? '-g' : '-j'} ${names[0]}`.replace(/ {2,}/g, ' '));
    if (rng.chance(0.4)) lines.push(`-A ${hook} ${match()} ${terminal(hook)}`.replace(/ {2,}/g, ' '));
  }
  for (let i = 0; i < depth; i++) {
    const k = rng.int(1, 3);
    for (let j = 0; j < k; j++) {
      const down = i + 1 < depth && rng.chance(0.6) ? names[rng.int(i + 1, Math.min(depth - 1, i + 3))] : undefined;
      if (down) lines.push(`-A ${names[i]} ${match()} ${rng.chance(0.5) ? '-g' : '-j'} ${down}`.replace(/ {2,}/g, ' '));
      else lines.push(`-A ${names[i]} ${match()} ${terminal('OUTPUT')}`.replace(/ {2,}/g, ' '));
    }
  }
  // nat: REDIRECT belongs in PREROUTING/OUTPUT chains only; the user chains are reached from there.
  if (table === 'mangle') filterExtra.push(`-A ${rng.pick(['INPUT', 'OUTPUT'])} -m mark --mark ${rng.int(1, 3)} -j DROP`);
  const policies: Record<string, string> = {};
  if (table === 'filter' && rng.chance(0.2)) policies['filter:INPUT'] = 'DROP';
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], description: '' };
  const text = table === 'filter' ? tables(a.family, { filter: lines }, policies) : tables(a.family, { [table]: lines, filter: filterExtra });
  put(pod, a, text);
  // IPv6: a DROP policy on INPUT would cut neighbour discovery off.
  if (a.family === 6 && policies['filter:INPUT']) put(pod, a, text.replace(':INPUT DROP', ':INPUT ACCEPT'));
  const n = rng.int(4, 7);
  for (let i = 0; i < n; i++) pod.probes.push(anyProbe(rng, a, [8080, 8081, 9090, 80]));
  pod.description = `IPv${a.family} ${table} chains ${depth} deep`;
  return pod;
}

/** `statistic --mode nth`: counters that every packet reaching the rule moves, across connections. */
function nthArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng, 0.3);
  const filter: string[] = [];
  const nat: string[] = [];
  const mangle: string[] = [];
  const nth = (): string => {
    const every = rng.int(2, 5);
    return `${pureSynOrAck(rng)} -m statistic --mode nth ${rng.chance(0.2) ? '! ' : ''}--every ${every} --packet ${rng.int(0, every - 1)}`;
  };
  const sel = (): string =>
    rng.weighted<string>([
      [2, ''],
      [2, `-p tcp -m tcp --dport ${rng.pick([8080, 8081, 80])}`],
      [1, `-p tcp -m tcp --tcp-flags SYN,ACK SYN`],
      [1, `-i ${rng.pick(['lo', 'eth0'])}`],
    ]);
  const picks: (() => void)[] = [
    () => filter.push(`-A INPUT ${sel()} ${nth()} -j DROP`.replace(/ {2,}/g, ' ')),
    () => filter.push(`-A OUTPUT ${sel().replace(/-i /, '-o ')} ${nth()} -j ${rng.pick(['DROP', 'REJECT'])}`.replace(/ {2,}/g, ' ')),
    () => filter.push(`-A INPUT -p tcp ${nth()} -j REJECT --reject-with tcp-reset`),
    // Kubernetes' load balancing: nth DNATs to one backend or another.
    () => {
      const every = rng.int(2, 3);
      nat.push(`-A OUTPUT -d ${a.host(a.far[0]!)} ${pureSynOrAck(rng)} -m statistic --mode nth --every ${every} --packet 0 -j DNAT --to-destination ${a.hp(a.pod, 8080)}`, `-A OUTPUT -d ${a.host(a.far[0]!)} -p tcp -j DNAT --to-destination ${a.hp(a.pod, 8081)}`);
    },
    () => nat.push(`-A PREROUTING -p tcp -m tcp --dport 9090 ${nth()} -j REDIRECT --to-ports 8081`),
    () => {
      mangle.push(`-A PREROUTING ${nth()} -j MARK --set-mark 0x3`);
      filter.push('-A INPUT -m mark --mark 0x3 -j DROP');
    },
    () => filter.push(`-A INPUT -p tcp ${nth()} -j ACCEPT`, `-A INPUT -p tcp ${nth()} -j DROP`),
  ];
  for (const f of rng.sample(picks, rng.int(1, 3))) f();
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], description: '' };
  put(pod, a, tables(a.family, { mangle, nat, filter }));
  const n = rng.int(5, 8);
  for (let i = 0; i < n; i++) {
    pod.probes.push(
      rng.chance(0.25) ? local(1000, a.hp(a.far[0]!, 80)) : anyProbe(rng, a, [8080, 8081, 9090]),
    );
  }
  pod.description = `IPv${a.family} statistic nth (${filter.length + nat.length + mangle.length} rules)`;
  return pod;
}

/** `recent` lists across connections: set, rcheck, update, remove, seconds, hitcount, masks, rdest. */
function recentArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng, 0.3);
  const chains: Record<string, string[]> = { 'raw:PREROUTING': [], 'mangle:PREROUTING': [], 'filter:INPUT': [], 'filter:OUTPUT': [], 'mangle:OUTPUT': [] };
  const nLists = rng.int(1, 3);
  const full = a.family === 4 ? '255.255.255.255' : 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff';
  for (let i = 0; i < nLists; i++) {
    const name = rng.pick(['SSH', 'X', 'portscan', `L${i}`]) + (i > 0 ? String(i) : '');
    // One chain per list: checks first, then at most one rule that adds (set/update) or removes,
    // so no packet is checked after it was added to the list by the same traversal.
    const input = rng.chance(0.7);
    const chain = input ? rng.pick(['filter:INPUT', 'filter:INPUT', 'mangle:PREROUTING', 'raw:PREROUTING']) : rng.pick(['filter:OUTPUT', 'mangle:OUTPUT']);
    const side = rng.chance(input ? 0.8 : 0.3) ? '--rsource' : '--rdest';
    const mask = rng.chance(0.2) ? ` --mask ${a.family === 4 ? '255.255.255.0' : 'ffff:ffff:ffff:ffff::'}` : rng.chance(0.2) ? ` --mask ${full}` : '';
    const restrict = (): string =>
      rng.weighted<string>([
        [3, '-p tcp -m tcp --tcp-flags SYN,ACK SYN '],
        [2, `${pureSynOrAck(rng)} `],
        [2, `-p tcp -m tcp --dport ${rng.pick([8080, 8081])} ! --tcp-flags RST RST `],
        [1, '-m conntrack --ctstate NEW '],
      ]);
    const base = `--name ${name} ${side}${mask}`;
    const nChecks = rng.int(1, 2);
    for (let j = 0; j < nChecks; j++) {
      const seconds = rng.chance(0.6) ? ` --seconds ${rng.pick([30, 60, 600])}` : '';
      const hit = rng.chance(0.5) ? ` --hitcount ${rng.int(1, 4)}` : '';
      const reap = seconds && rng.chance(0.2) ? ' --reap' : '';
      const op = rng.weighted<string>([
        [3, '--rcheck'],
        [1, '! --rcheck'],
      ]);
      chains[chain]!.push(`-A ${chain.split(':')[1]} ${restrict()}-m recent ${op}${seconds}${reap}${hit} ${base} -j ${chain.startsWith('raw') || chain.startsWith('mangle') ? 'DROP' : rng.pick(['DROP', 'REJECT'])}`);
    }
    const last = rng.weighted<string>([
      [5, '--set'],
      [2, `--update${rng.chance(0.5) ? ` --seconds 60 --hitcount ${rng.int(2, 3)}` : ''}`],
      [1, '--remove'],
    ]);
    const verdict = last.startsWith('--update') && last.includes('hitcount') ? ' -j DROP' : '';
    chains[chain]!.push(`-A ${chain.split(':')[1]} ${restrict()}-m recent ${last} ${base}${verdict}`);
  }
  const t: Record<string, string[]> = { raw: [], mangle: [], filter: [] };
  for (const [k, v] of Object.entries(chains)) t[k.split(':')[0]!]!.push(...v);
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], description: '' };
  put(pod, a, tables(a.family, t));
  const n = rng.int(5, 8);
  const srcs = rng.sample(a.peers, rng.int(1, 2));
  for (let i = 0; i < n; i++) {
    const port = rng.pick([8080, 8081, 8082]);
    const kind = rng.weighted<string>([
      [5, 'remote'],
      [2, 'lo'],
      [2, 'far'],
    ]);
    if (kind === 'remote') pod.probes.push(remote(rng.pick(srcs), a.hp(a.pod, port)));
    else if (kind === 'lo') pod.probes.push(local(1000, a.hp(a.lo, port)));
    else pod.probes.push(local(1000, a.hp(rng.pick(a.far.slice(0, 2)), port)));
  }
  pod.description = `IPv${a.family} recent (${nLists} lists)`;
  // The virtual clock starts at the wall clock's second: the kernel's stamps are jiffies.
  pod.options = { clock: 1_700_000_000 };
  return pod;
}

/** Extensions whose fate the engine decides: set, NETMAP, length, pkttype, ttl/hl, limit, hashlimit, connlimit, quota. */
function extArea(_seed: number, rng: Rng): Pod {
  const a = famOf(rng, 0.3);
  const filter: string[] = [];
  const nat: string[] = [];
  const mangle: string[] = [];
  const sets: string[] = [];
  let nSets = 0;
  const inet = a.family === 4 ? 'inet' : 'inet6';
  const port = (): number => rng.pick([8080, 8081]);
  const tcpSyn = '-p tcp -m tcp --tcp-flags SYN,ACK SYN';
  const v = (): string => rng.pick(['-j DROP', '-j REJECT']);
  const picks: (() => void)[] = [
    () => {
      const n = nSets++;
      sets.push(`create s${n} hash:ip family ${inet}`, `add s${n} ${rng.pick(a.peers)}`);
      filter.push(`-A INPUT -m set ${rng.chance(0.3) ? '! ' : ''}--match-set s${n} src -p tcp -m tcp --dport ${port()} ${v()}`);
    },
    () => {
      const n = nSets++;
      sets.push(`create s${n} hash:ip,port family ${inet}`, `add s${n} ${a.pod},tcp:${port()}`);
      filter.push(`-A ${rng.pick(['INPUT', 'OUTPUT'])} -m set --match-set s${n} dst,dst ${v()}`);
    },
    () => {
      const n = nSets++;
      sets.push(`create s${n} hash:net family ${inet}`, `add s${n} ${a.family === 4 ? '10.96.0.0/12' : 'fd00:96::/64'}`);
      filter.push(`-A OUTPUT -m set --match-set s${n} dst ${v()}`);
    },
    () => {
      const n = nSets++;
      sets.push(`create s${n} hash:ip family ${inet}`);
      filter.push(`-A INPUT -p tcp -m tcp --dport 8081 -j SET --add-set s${n} src`, `-A INPUT -p tcp -m tcp --dport 8080 -m set --match-set s${n} src -j DROP`);
    },
    () => filter.push(`-A INPUT ${tcpSyn} -m length ${rng.chance(0.3) ? '! ' : ''}--length ${rng.pick(['60', '80', '0:59', '61:100', '40:60'])} ${v()}`),
    () => filter.push(`-A OUTPUT -p tcp -m length --length ${rng.pick(['52', '72', '40', '60:80', '0:52'])} -j DROP`),
    () => filter.push(`-A INPUT -i ${rng.pick(['eth0', 'lo'])} -m pkttype ${rng.chance(0.3) ? '! ' : ''}--pkt-type ${rng.pick(['unicast', 'broadcast', 'multicast'])} -p tcp ${v()}`),
    () => filter.push(a.family === 4 ? `-A INPUT -p tcp -m ttl --ttl-${rng.pick(['eq', 'lt', 'gt'])} ${rng.pick([63, 64, 65, 1])} ${v()}` : `-A INPUT -p tcp -m hl --hl-${rng.pick(['eq', 'lt', 'gt'])} ${rng.pick([63, 64, 65, 255])} ${v()}`),
    () => {
      mangle.push(a.family === 4 ? `-A PREROUTING -i eth0 -j TTL --ttl-${rng.pick(['set 5', 'dec 1', 'inc 2'])}` : `-A PREROUTING -i eth0 -j HL --hl-${rng.pick(['set 5', 'dec 1', 'inc 2'])}`);
      filter.push(a.family === 4 ? `-A INPUT -p tcp -m ttl --ttl-eq ${rng.pick([5, 63, 66])} -j DROP` : `-A INPUT -p tcp -m hl --hl-eq ${rng.pick([5, 63, 66])} -j DROP`);
    },
    () => filter.push(`-A INPUT ${tcpSyn} -m limit --limit ${rng.pick(['1/min', '2/hour', '1/sec'])} --limit-burst ${rng.int(1, 3)} -j ACCEPT`, `-A INPUT ${tcpSyn} -j DROP`),
    () => filter.push(`-A INPUT ${tcpSyn} -m hashlimit --hashlimit-${rng.pick(['upto', 'above'])} ${rng.pick(['1/min', '2/hour'])} --hashlimit-burst ${rng.int(1, 3)}${rng.chance(0.6) ? ` --hashlimit-mode ${rng.pick(['srcip', 'dstport', 'srcip,dstport'])}` : ''} --hashlimit-name h${rng.int(0, 9)} -j ${rng.pick(['DROP', 'ACCEPT'])}`),
    () => filter.push(`-A INPUT ${tcpSyn} -m connlimit --connlimit-${rng.pick(['above', 'upto'])} 0${rng.chance(0.4) ? ` --connlimit-mask ${a.family === 4 ? 24 : 64}` : ''}${rng.chance(0.2) ? ' --connlimit-daddr' : ''} ${v()}`),
    () => filter.push(`-A INPUT ${pureSynOrAck(rng)} -m quota --quota ${rng.pick([60, 130, 200, 400])} -j ACCEPT`, `-A INPUT -p tcp -j DROP`),
    () => filter.push(`-A OUTPUT ${tcpSyn} -m quota ${rng.chance(0.3) ? '! ' : ''}--quota ${rng.pick([60, 150])} -j DROP`),
  ];
  if (a.family === 4) {
    picks.push(
      // Never onto the pod's link, where nothing answers ARP for 10.0.0.3 (the engine assumes a peer).
      () => nat.push(`-A OUTPUT -d 10.9.9.0/24 -j NETMAP --to ${rng.pick(['127.0.0.0/24', '10.7.7.0/24'])}`),
      () => nat.push(`-A PREROUTING -d 10.0.0.0/24 -p tcp -m tcp --dport ${port()} -j NETMAP --to 10.0.0.0/24`),
      () => nat.push(`-A POSTROUTING -o eth0 -j NETMAP --to ${rng.pick(['10.0.0.0/24', '10.0.0.2/32'])}`),
    );
  }
  for (const f of rng.sample(picks, rng.int(1, 3))) f();
  const pod: Pod = { rules4: '', rules6: '', listeners: [{ port: 8080 }, { port: 8081 }], probes: [], description: '' };
  put(pod, a, tables(a.family, { mangle, nat, filter }));
  if (sets.length > 0) pod.ipsets = sets.join('\n') + '\n';
  const n = rng.int(4, 8);
  for (let i = 0; i < n; i++) {
    if (a.family === 4 && nat.some((l) => l.includes('10.9.9.0')) && rng.chance(0.3)) pod.probes.push(local(1000, `10.9.9.${rng.int(1, 3)}:${port()}`));
    else pod.probes.push(anyProbe(rng, a, [8080, 8081, 8082]));
  }
  pod.description = `IPv${a.family} extensions (${filter.length + nat.length + mangle.length} rules${sets.length ? ', ipsets' : ''})`;
  pod.options = { clock: 1_700_000_000 };
  return pod;
}

// ---------------------------------------------------------------------------------------------
// Assembly

function toCase(area: string, seed: number, pod: Pod): ConnectCase {
  const listeners: KernelListener[] = pod.listeners.map((l) => ({ ...(l.address ? { address: l.address } : {}), port: l.port, ...(l.uid === undefined ? {} : { uid: l.uid }), ...(l.transparent ? { transparent: true } : {}) }));
  const probes: KernelProbe[] = pod.probes.map((p) =>
    p.from === 'local'
      ? { from: 'local', uid: p.uid, gid: p.gid, dst: p.dst, ...(p.groups ? { groups: p.groups } : {}), ...(p.mark === undefined ? {} : { mark: p.mark }), ...(p.sport === undefined ? {} : { sport: p.sport }) }
      : { from: 'remote', src: p.src, dst: p.dst, ...(p.sport === undefined ? {} : { sport: p.sport }) },
  );
  const ipBatch: string[] = [];
  for (const r of pod.ipRules ?? []) {
    ipBatch.push(`${r.family === 6 ? '-6 ' : ''}rule add fwmark ${hex(r.fwmark)}${r.mask === undefined ? '' : `/${hex(r.mask)}`} pref ${r.priority} lookup ${r.table}`);
  }
  for (const r of pod.routes ?? []) ipBatch.push(`route add ${r.type === 'local' ? 'local ' : `${r.type} `}${r.dst}${r.dev ? ` dev ${r.dev}` : ''} table ${r.table}`);
  const kernel: KernelCase = {
    rules4: pod.rules4,
    rules6: pod.rules6,
    listeners,
    probes,
    ...(pod.ipsets ? { ipsets: pod.ipsets } : {}),
    ...(ipBatch.length ? { ipBatch } : {}),
    ...(pod.worldRoutes ? { worldRoutes: pod.worldRoutes } : {}),
  };
  const listen = pod.listeners.map((l) => (l.transparent || l.uid !== undefined ? { ...l } : l.address ? (l.address.includes(':') ? `[${l.address}]:${l.port}` : `${l.address}:${l.port}`) : l.port));
  const sim: ConnectCase['sim'] = {
    rules: pod.rules4,
    ...(pod.rules6 ? { rules6: pod.rules6 } : {}),
    listen,
    ...(pod.ipRules ? { ipRules: pod.ipRules.map(({ fwmark, mask, table, priority, family }) => ({ fwmark, ...(mask === undefined ? {} : { mask }), table, priority, family })) } : {}),
    ...(pod.routes ? { routes: pod.routes } : {}),
    ...(pod.ipsets ? { ipsets: pod.ipsets } : {}),
    ...(pod.options ?? {}),
  };
  return { seed, description: `${area}: ${pod.description}`, kernel, sim, probes: pod.probes, ...(pod.peer ? { peer: true } : {}) };
}

type PodGenerator = (seed: number, rng: Rng) => Pod;

const POD_AREAS: Record<string, PodGenerator> = {
  snat: snatArea,
  tproxy: tproxyArea,
  marks: marksArea,
  ctstate: ctstateArea,
  raw: rawArea,
  owner: ownerArea,
  goto: gotoArea,
  nth: nthArea,
  recent: recentArea,
  extensions: extArea,
};

/** The areas, each with what it covers. */
export const AREAS: readonly { readonly name: string; readonly what: string }[] = [
  { name: 'ipv6', what: 'IPv6-only and dual-stack mesh pods' },
  { name: 'snat', what: 'SNAT/MASQUERADE/NETMAP of the source, with the peer address the listener saw' },
  { name: 'tproxy', what: 'TPROXY with its fwmark rule and local route, transparent listeners' },
  { name: 'marks', what: 'MARK/CONNMARK set, save, restore and masks, routing by mark' },
  { name: 'ctstate', what: 'filter on every conntrack state, status, direction and tuple' },
  { name: 'raw', what: 'raw NOTRACK/CT --notrack (both ways, or one segment of the handshake), CT zones, ctevents, -m socket' },
  { name: 'owner', what: 'owner uid/gid ranges, negations, --suppl-groups, --socket-exists' },
  { name: 'goto', what: 'chains 3-10 deep with -j/-g, RETURN, verdicts at every depth' },
  { name: 'nth', what: 'statistic --mode nth counters across connections' },
  { name: 'recent', what: 'recent lists over several connections' },
  { name: 'extensions', what: 'set/SET, NETMAP, length, pkttype, ttl/hl, limit, hashlimit, connlimit, quota' },
];

/** One generated case of `area`, a pure function of the seed. */
export function generateAreaCase(area: string, seed: number): ConnectCase {
  if (area === 'ipv6') return ipv6Area(seed);
  const gen = POD_AREAS[area];
  if (!gen) throw new Error(`unknown area ${area}`);
  // Decorrelate the areas' streams.
  let h = seed * 7919;
  for (const ch of area) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return toCase(area, seed, gen(seed, new Rng(h >>> 0)));
}
