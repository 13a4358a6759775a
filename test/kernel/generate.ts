/**
 * Seeded generators for the kernel-differential tests. Everything is a pure function of the seed
 * (mulberry32), so a failing case is replayed from the seed printed with it.
 *
 * - {@link generateRulesetText}: iptables-restore input in the many shapes real generators write
 *   (restore input is not save output: `-N`, `-I`, long options, implicit `-m tcp`, comma lists,
 *   odd masks...). Built to be accepted by the kernel (checked in harness.test.ts).
 * - {@link mutate}: a small, named damage to valid input; about half still loads.
 * - {@link generateConnectCase}: a mesh-shaped pod (Linkerd / Istio / kube-proxy like nat rules and
 *   some filter rules), its listeners and ~8 connection probes.
 */
import type { KernelCase, KernelListener, KernelProbe } from './harness.js';

// ---------------------------------------------------------------------------------------------
// PRNG

/** mulberry32: a tiny, well-mixed 32-bit PRNG. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Convenience wrapper over {@link mulberry32}. */
export class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    // Decorrelate neighbouring seeds.
    this.next = mulberry32(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ 0xc2b2ae35);
  }
  float(): number {
    return this.next();
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** Picks by weight: `[[weight, value], ...]`. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    const total = items.reduce((s, [w]) => s + w, 0);
    let x = this.next() * total;
    for (const [w, v] of items) {
      x -= w;
      if (x < 0) return v;
    }
    return (items[items.length - 1] as readonly [number, T])[1];
  }
  shuffle<T>(items: readonly T[]): T[] {
    const a = [...items];
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [a[i], a[j]] = [a[j] as T, a[i] as T];
    }
    return a;
  }
  /** `n` distinct items. */
  sample<T>(items: readonly T[], n: number): T[] {
    return this.shuffle(items).slice(0, Math.min(n, items.length));
  }
}

// ---------------------------------------------------------------------------------------------
// Rule sets

export type Family = 4 | 6;
type Table = 'raw' | 'mangle' | 'nat' | 'filter';
type Hook = 'PREROUTING' | 'INPUT' | 'FORWARD' | 'OUTPUT' | 'POSTROUTING';

const BUILTINS: Record<Table, readonly Hook[]> = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
};

const IN_HOOKS: readonly Hook[] = ['PREROUTING', 'INPUT', 'FORWARD'];
const OUT_HOOKS: readonly Hook[] = ['FORWARD', 'OUTPUT', 'POSTROUTING'];

const USER_CHAIN_NAMES = [
  'PROXY_INIT_OUTPUT',
  'PROXY_INIT_REDIRECT',
  'ISTIO_INBOUND',
  'ISTIO_IN_REDIRECT',
  'ISTIO_OUTPUT',
  'ISTIO_REDIRECT',
  'ISTIO_DIVERT',
  'ISTIO_TPROXY',
  'KUBE-SERVICES',
  'KUBE-SVC-TCOU7JCQXEZGVUNU',
  'KUBE-SEP-6E7XQMQ4RAYOWTTM',
  'KUBE-MARK-MASQ',
  'KUBE-POSTROUTING',
  'CNI-3f2a1b7c9d8e',
  'DOCKER',
  'DOCKER-USER',
  'cali-fw-eth0',
  'my_chain',
  'Chain-9',
  'A',
  'x',
  'OUT.rules',
  'ABCDEFGHIJKLMNOPQRSTUVWXYZ01', // 28 characters: the limit
];

interface Proto {
  /** As written on the line (`tcp`, `6`, `TCP`, `all`...). */
  readonly text: string;
  /** What it means: tcp/udp/icmp/icmpv6/all/other. */
  readonly kind: 'tcp' | 'udp' | 'icmp' | 'icmpv6' | 'all' | 'sctp';
  readonly negated: boolean;
}

interface RuleCtx {
  readonly rng: Rng;
  readonly family: Family;
  readonly table: Table;
  readonly hook: Hook;
  readonly chain: string;
  readonly builtin: boolean;
  /** User chains this rule may jump to (acyclic: only later chains of the same hook). */
  readonly jumpTargets: readonly string[];
  readonly proto: Proto | undefined;
}

interface GeneratedRule {
  readonly chain: string;
  /** Everything after `-A CHAIN` / `-I CHAIN [N]`. */
  readonly body: string;
  /** How many rules it becomes (comma lists in -s/-d multiply). */
  readonly expands: number;
  readonly jumps: readonly string[];
}

function hex(n: number): string {
  return '0x' + (n >>> 0).toString(16);
}

function markValue(rng: Rng): string {
  const v = rng.pick([1, 2, 0x539, 0x4000, 0x10000, 0xff, 0x1f, 0x80000000, rng.int(0, 0xffff)]);
  return rng.chance(0.5) ? String(v) : hex(v);
}

function markSpec(rng: Rng): string {
  const v = markValue(rng);
  if (!rng.chance(0.4)) return v;
  return `${v}/${rng.pick(['0xffffffff', '0xff', '0xffff', '0xf000', '0x1', String(rng.int(1, 255))])}`;
}

function v4(rng: Rng): string {
  return rng.pick([
    `10.${rng.int(0, 255)}.${rng.int(0, 255)}.${rng.int(0, 255)}`,
    `192.168.${rng.int(0, 255)}.${rng.int(1, 254)}`,
    `172.${rng.int(16, 31)}.${rng.int(0, 255)}.${rng.int(0, 255)}`,
    `127.0.0.${rng.int(1, 8)}`,
    `100.64.${rng.int(0, 255)}.${rng.int(0, 255)}`,
  ]);
}

function v6(rng: Rng): string {
  const h = (): string => rng.int(0, 0xffff).toString(16);
  return rng.pick([
    `fd00::${h()}`,
    `fd00:${h()}::${h()}`,
    `2001:db8:${h()}::${h()}`,
    `fe80::${h()}:${h()}`,
    '::1',
    `::ffff:10.0.${rng.int(0, 255)}.${rng.int(1, 254)}`,
    `2001:db8:${h()}:${h()}:${h()}:${h()}:${h()}:${h()}`,
  ]);
}

function address(rng: Rng, family: Family): string {
  if (family === 4) {
    const a = v4(rng);
    return rng.weighted<string>([
      [3, a],
      [2, `${a}/32`],
      [4, `${a}/${rng.int(8, 31)}`], // host bits set: masked on load
      [2, `${a.split('.').slice(0, 2).join('.')}.0.0/${rng.int(8, 16)}`],
      [1, `${a}/255.255.0.0`],
      [1, `10.0.12.0/255.0.255.0`], // non-contiguous
      [1, `${a}/255.${rng.pick(['0', '255'])}.${rng.pick(['0', '255', '240'])}.0`],
      [1, '0.0.0.0/0'],
    ]);
  }
  const a = v6(rng);
  return rng.weighted<string>([
    [3, a],
    [2, `${a}/128`],
    [4, `${a}/${rng.pick([8, 16, 32, 48, 56, 64, 96, 112, 120, 127])}`],
    [1, 'fd00::/ffff:0:ffff::'], // non-contiguous
    [1, '::/0'],
  ]);
}

function addressArg(rng: Rng, family: Family): { text: string; count: number } {
  if (rng.chance(0.06)) {
    const n = rng.int(2, 3);
    const list = Array.from({ length: n }, () => (family === 4 ? v4(rng) : v6(rng)));
    return { text: list.join(','), count: n };
  }
  return { text: address(rng, family), count: 1 };
}

function port(rng: Rng): number {
  return rng.pick([22, 53, 80, 443, 4140, 4143, 4190, 4191, 4567, 4568, 8080, 8443, 9090, 15001, 15006, 15008, 15020, 15021, 15090, rng.int(1, 65535), rng.int(1024, 32767)]);
}

function portOrRange(rng: Rng, tcp = true): string {
  return rng.weighted<string>([
    [6, String(port(rng))],
    [2, (() => {
      const a = rng.int(1, 60000);
      return `${a}:${rng.int(a, 65535)}`;
    })()],
    [1, `:${rng.int(1, 65535)}`],
    [1, `${rng.int(1, 65535)}:`],
    [tcp ? 1 : 0, 'http'], // a service name, resolved on load (tcp only in /etc/services)
  ]);
}

function multiportList(rng: Rng): string {
  // At most 15 slots, a range counts as two (XT_MULTI_PORTS).
  const budget = rng.weighted<number>([
    [4, rng.int(1, 4)],
    [3, rng.int(5, 12)],
    [2, 15],
  ]);
  const items: string[] = [];
  let used = 0;
  while (used < budget) {
    if (budget - used >= 2 && rng.chance(0.2)) {
      const a = rng.int(1, 60000);
      items.push(`${a}:${rng.int(a, 65535)}`);
      used += 2;
    } else {
      items.push(String(port(rng)));
      used += 1;
    }
  }
  return items.join(',');
}

function neg(rng: Rng, p = 0.2): string {
  return rng.chance(p) ? '! ' : '';
}

/** A string in iptables' quoting: bare when it can be, else double-quoted with escapes. */
function quoted(rng: Rng, s: string): string {
  if (/^[A-Za-z0-9_./:=@+,-]+$/.test(s) && !rng.chance(0.2)) return s;
  return `"${s.replace(/["\\]/g, (c) => '\\' + c)}"`;
}

function commentText(rng: Rng): string {
  return rng.pick([
    'proxy-init/ignore-loopback',
    'proxy-init/redirect-all-outgoing-to-proxy-port',
    'proxy-init/ignore-port-4190,4191',
    'kubernetes service portals',
    'default/kubernetes:https cluster IP',
    'istio: capture outbound',
    'say "hi"',
    "it's quoted",
    'back\\slash',
    'x'.repeat(rng.int(1, 255)),
    'cali:Kc8ZsbvChKp1v0AY',
    'ns/svc:port',
    'a b  c',
    'tab\tinside',
  ]);
}

const CT_STATES = ['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED', 'SNAT', 'DNAT'] as const;
const STATE_STATES = ['NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED'] as const;
const ADDRTYPES4 = ['UNSPEC', 'UNICAST', 'LOCAL', 'BROADCAST', 'ANYCAST', 'MULTICAST', 'BLACKHOLE', 'UNREACHABLE', 'PROHIBIT', 'THROW', 'NAT', 'XRESOLVE'] as const;
// xt_addrtype refuses BROADCAST, BLACKHOLE and PROHIBIT..XRESOLVE for IPv6.
const ADDRTYPES6 = ['UNSPEC', 'UNICAST', 'LOCAL', 'ANYCAST', 'MULTICAST', 'UNREACHABLE'] as const;
const ICMP_TYPES = ['echo-request', 'echo-reply', '8', '0', '3/1', '3', 'any', 'port-unreachable', 'destination-unreachable', 'time-exceeded', '11/0', 'host-unreachable'];
const ICMP6_TYPES = ['echo-request', 'echo-reply', '128', '129', '1/4', '1', 'destination-unreachable', 'packet-too-big', 'neighbour-solicitation', 'neighbor-advertisement', '135', 'router-advertisement'];

function states(rng: Rng, all: readonly string[]): string {
  return rng.sample(all, rng.int(1, 3)).join(',');
}

function ipRange(rng: Rng, family: Family): string {
  if (family === 4) {
    const base = `10.${rng.int(0, 255)}.${rng.int(0, 255)}`;
    const a = rng.int(0, 200);
    return `${base}.${a}-${base}.${rng.int(a, 255)}`;
  }
  const base = `fd00:${rng.int(0, 0xffff).toString(16)}::`;
  const a = rng.int(0, 0xff00);
  return `${base}${a.toString(16)}-${base}${rng.int(a, 0xffff).toString(16)}`;
}

type MatchGen = (c: RuleCtx) => string | null;

const isTcpUdp = (c: RuleCtx): boolean => !!c.proto && !c.proto.negated && (c.proto.kind === 'tcp' || c.proto.kind === 'udp');

const MATCHES: readonly (readonly [number, MatchGen])[] = [
  // tcp/udp ports, implicit or with -m tcp/udp
  [
    8,
    (c) => {
      if (!isTcpUdp(c) || !c.proto) return null;
      const r = c.rng;
      const parts: string[] = [];
      const optName = (base: 'dport' | 'sport'): string => (r.chance(0.15) ? (base === 'dport' ? '--destination-port' : '--source-port') : `--${base}`);
      if (r.chance(0.8)) parts.push(`${neg(r, 0.15)}${optName('dport')} ${portOrRange(r, c.proto.kind === 'tcp')}`);
      if (parts.length === 0 || r.chance(0.25)) parts.push(`${neg(r, 0.15)}${optName('sport')} ${portOrRange(r, c.proto.kind === 'tcp')}`);
      if (c.proto.kind === 'tcp' && r.chance(0.15)) {
        parts.push(r.pick(['--syn', '! --syn', '--tcp-flags SYN,ACK SYN', '--tcp-flags ALL NONE', '--tcp-flags FIN,SYN,RST,ACK RST']));
      }
      const head = r.chance(0.5) ? `-m ${c.proto.kind} ` : '';
      return head + r.shuffle(parts).join(' ');
    },
  ],
  [
    5,
    (c) => {
      if (!isTcpUdp(c)) return null;
      const r = c.rng;
      const opt = r.pick(['--dports', '--dports', '--sports', '--ports', '--destination-ports', '--source-ports']);
      return `-m multiport ${neg(r, 0.15)}${opt} ${multiportList(r)}`;
    },
  ],
  [
    3,
    (c) => {
      if (!c.proto || c.proto.negated) return null;
      const r = c.rng;
      if (c.family === 4 && c.proto.kind === 'icmp') return `${r.chance(0.6) ? '-m icmp ' : ''}${neg(r, 0.2)}--icmp-type ${r.pick(ICMP_TYPES)}`;
      if (c.family === 6 && c.proto.kind === 'icmpv6') return `${r.chance(0.6) ? '-m icmp6 ' : ''}${neg(r, 0.2)}--icmpv6-type ${r.pick(ICMP6_TYPES)}`;
      return null;
    },
  ],
  [
    6,
    (c) => {
      if (c.hook !== 'OUTPUT' && c.hook !== 'POSTROUTING') return null;
      const r = c.rng;
      const opts: string[] = [];
      const id = (): string => String(r.pick([0, 1000, 1337, 2102, 65534, r.int(1, 60000)]));
      const idOrRange = (): string => {
        if (!r.chance(0.15)) return id();
        const a = r.int(0, 5000);
        return `${a}-${r.int(a, 6000)}`;
      };
      if (r.chance(0.7)) opts.push(`${neg(r, 0.3)}--uid-owner ${idOrRange()}`);
      if (r.chance(0.35)) opts.push(`${neg(r, 0.3)}--gid-owner ${idOrRange()}${r.chance(0.25) ? ' --suppl-groups' : ''}`);
      if (opts.length === 0 || r.chance(0.1)) opts.push(`${neg(r, 0.3)}--socket-exists`);
      return `-m owner ${r.shuffle(opts).join(' ')}`;
    },
  ],
  [6, (c) => `-m comment --comment ${quoted(c.rng, commentText(c.rng))}`],
  [3, (c) => `-m mark ${neg(c.rng)}--mark ${markSpec(c.rng)}`],
  [2, (c) => `-m connmark ${neg(c.rng)}--mark ${markSpec(c.rng)}`],
  [
    3,
    (c) => {
      const r = c.rng;
      let s = `-m conntrack ${neg(r)}--ctstate ${states(r, CT_STATES)}`;
      if (r.chance(0.15)) s += ` ${neg(r)}--ctorigdst ${c.family === 4 ? v4(r) : v6(r)}`;
      if (r.chance(0.1)) s += ` --ctorigdstport ${port(r)}`;
      return s;
    },
  ],
  [2, (c) => `-m state ${neg(c.rng)}--state ${states(c.rng, STATE_STATES)}`],
  [
    2,
    (c) => {
      const r = c.rng;
      const types = c.family === 4 ? ADDRTYPES4 : ADDRTYPES6;
      const parts: string[] = [];
      if (r.chance(0.5)) parts.push(`${neg(r)}--src-type ${r.sample(types, r.int(1, 2)).join(',')}`);
      if (parts.length === 0 || r.chance(0.5)) parts.push(`${neg(r)}--dst-type ${r.sample(types, r.int(1, 2)).join(',')}`);
      if (r.chance(0.2)) {
        if (IN_HOOKS.includes(c.hook) && c.hook !== 'FORWARD') parts.push('--limit-iface-in');
        else if (OUT_HOOKS.includes(c.hook) && c.hook !== 'FORWARD') parts.push('--limit-iface-out');
      }
      return `-m addrtype ${parts.join(' ')}`;
    },
  ],
  [
    2,
    (c) => {
      const r = c.rng;
      if (r.chance(0.6)) {
        const p = r.pick(['0.5', '0.25', '0.33333333349', '0.1', '1', '0.001', '0.20000000019', String(r.int(1, 999) / 1000)]);
        return `-m statistic --mode random ${neg(r, 0.15)}--probability ${p}`;
      }
      const every = r.int(2, 10);
      return `-m statistic --mode nth ${neg(r, 0.15)}--every ${every} --packet ${r.int(0, every - 1)}`;
    },
  ],
  [
    2,
    (c) => {
      const r = c.rng;
      const parts: string[] = [];
      if (r.chance(0.6)) parts.push(`${neg(r)}--src-range ${ipRange(r, c.family)}`);
      if (parts.length === 0 || r.chance(0.4)) parts.push(`${neg(r)}--dst-range ${ipRange(r, c.family)}`);
      return `-m iprange ${parts.join(' ')}`;
    },
  ],
];

type TargetGen = (c: RuleCtx) => { text: string; jumps?: string } | null;

function rejectWith(c: RuleCtx): string {
  const r = c.rng;
  const tcp = !!c.proto && !c.proto.negated && c.proto.kind === 'tcp';
  const types =
    c.family === 4
      ? ['icmp-net-unreachable', 'icmp-host-unreachable', 'icmp-port-unreachable', 'icmp-proto-unreachable', 'icmp-net-prohibited', 'icmp-host-prohibited', 'icmp-admin-prohibited', 'net-unreach', 'host-unreach', 'port-unreach']
      : ['icmp6-no-route', 'no-route', 'icmp6-adm-prohibited', 'adm-prohibited', 'icmp6-addr-unreachable', 'addr-unreach', 'icmp6-port-unreachable', 'port-unreach'];
  if (tcp && r.chance(0.4)) return ' --reject-with tcp-reset';
  return r.chance(0.25) ? '' : ` --reject-with ${r.pick(types)}`;
}

function natAddress(c: RuleCtx, withPort: boolean): string {
  const r = c.rng;
  const host = c.family === 4 ? v4(r).replace(/^127\./, '10.') : r.pick(['fd00::5', 'fd00:1::7', '2001:db8::10']);
  let addr = host;
  if (r.chance(0.15)) addr = c.family === 4 ? `${host}-${host.replace(/\.\d+$/, '.254')}` : host;
  if (!withPort) return addr;
  const p = r.chance(0.2) ? `${r.int(1000, 2000)}-${r.int(2000, 3000)}` : String(port(r));
  if (c.family === 6) return `[${addr}]:${p}`;
  return `${addr}:${p}`;
}

const TARGETS: readonly (readonly [number, TargetGen])[] = [
  [6, (c) => (c.table === 'nat' && c.rng.chance(0.5) ? { text: '-j RETURN' } : { text: '-j ACCEPT' })],
  [4, (c) => (c.table === 'nat' ? null : { text: '-j DROP' })],
  [4, () => ({ text: '-j RETURN' })],
  [3, () => ({ text: '' })],
  [
    8,
    (c) => {
      if (c.jumpTargets.length === 0) return null;
      const t = c.rng.pick(c.jumpTargets);
      return { text: c.rng.chance(0.2) ? `-g ${t}` : c.rng.chance(0.1) ? `--jump ${t}` : `-j ${t}`, jumps: t };
    },
  ],
  [2, (c) => ({ text: `-j LOG${c.rng.chance(0.7) ? ` --log-prefix ${quoted(c.rng, c.rng.pick(['drop: ', 'nfsim', '[in] ', 'x']))}` : ''}${c.rng.chance(0.3) ? ` --log-level ${c.rng.pick(['4', 'warning', 'debug', '7', 'info'])}` : ''}${c.rng.chance(0.2) ? ' --log-uid' : ''}` })],
  [
    4,
    (c) => {
      if (c.table !== 'filter') return null;
      return { text: `-j REJECT${rejectWith(c)}` };
    },
  ],
  [
    8,
    (c) => {
      if (c.table !== 'nat' || (c.hook !== 'PREROUTING' && c.hook !== 'OUTPUT')) return null;
      const r = c.rng;
      if (!isTcpUdp(c)) return { text: '-j REDIRECT' };
      const p = r.chance(0.15) ? `${r.int(8000, 8100)}-${r.int(8100, 8200)}` : String(r.pick([4140, 4143, 15001, 15006, 8080, r.int(1, 65535)]));
      return { text: `-j REDIRECT ${r.chance(0.25) ? '--to-port' : '--to-ports'} ${p}${r.chance(0.1) ? ' --random' : ''}` };
    },
  ],
  [
    5,
    (c) => {
      if (c.table !== 'nat' || (c.hook !== 'PREROUTING' && c.hook !== 'OUTPUT')) return null;
      return { text: `-j DNAT --to-destination ${natAddress(c, isTcpUdp(c) && c.rng.chance(0.7))}` };
    },
  ],
  [
    4,
    (c) => {
      if (c.table !== 'nat' || (c.hook !== 'POSTROUTING' && c.hook !== 'INPUT')) return null;
      return { text: `-j SNAT --to-source ${natAddress(c, isTcpUdp(c) && c.rng.chance(0.3))}${c.rng.chance(0.1) ? ' --random' : ''}` };
    },
  ],
  [
    4,
    (c) => {
      if (c.table !== 'nat' || c.hook !== 'POSTROUTING') return null;
      const r = c.rng;
      const ports = isTcpUdp(c) && r.chance(0.3) ? ` --to-ports ${r.int(1024, 30000)}-${r.int(30000, 65535)}` : '';
      return { text: `-j MASQUERADE${ports}${r.chance(0.15) ? ' --random' : ''}` };
    },
  ],
  [
    5,
    (c) => {
      if (c.table !== 'mangle' && !c.rng.chance(0.25)) return null;
      const r = c.rng;
      const v = markSpec(r);
      return {
        text: r.weighted<string>([
          [3, `-j MARK --set-mark ${v}`],
          [2, `-j MARK --set-xmark ${v}`],
          [1, `-j MARK --or-mark ${markValue(r)}`],
          [1, `-j MARK --and-mark ${markValue(r)}`],
          [1, `-j MARK --xor-mark ${markValue(r)}`],
        ]),
      };
    },
  ],
  [
    3,
    (c) => {
      if (c.table !== 'mangle' && !c.rng.chance(0.2)) return null;
      const r = c.rng;
      return {
        text: r.weighted<string>([
          [3, '-j CONNMARK --save-mark'],
          [3, '-j CONNMARK --restore-mark'],
          [1, `-j CONNMARK --restore-mark --mask ${hex(r.int(1, 0xffff))}`],
          [1, `-j CONNMARK --save-mark --nfmask ${hex(r.int(1, 0xffff))} --ctmask ${hex(r.int(1, 0xffff))}`],
          [2, `-j CONNMARK --set-mark ${markSpec(r)}`],
          [1, `-j CONNMARK --set-xmark ${markSpec(r)}`],
        ]),
      };
    },
  ],
  [
    6,
    (c) => {
      if (c.table !== 'raw') return null;
      const r = c.rng;
      return { text: r.weighted<string>([[3, `-j CT --zone ${r.int(0, 10)}`], [3, '-j CT --notrack'], [2, '-j NOTRACK']]) };
    },
  ],
  [
    6,
    (c) => {
      if (c.table !== 'mangle' || c.hook !== 'PREROUTING' || !isTcpUdp(c)) return null;
      const r = c.rng;
      const parts = [`--on-port ${r.pick([15001, 15006, 0, r.int(1, 65535)])}`];
      if (r.chance(0.3)) parts.push(`--on-ip ${c.family === 4 ? r.pick(['127.0.0.1', '0.0.0.0', v4(r)]) : r.pick(['::1', '::', 'fd00::2'])}`);
      if (r.chance(0.7)) parts.push(`--tproxy-mark ${markSpec(r)}`);
      return { text: `-j TPROXY ${r.shuffle(parts).join(' ')}` };
    },
  ],
];

function iface(rng: Rng): string {
  return rng.pick(['eth0', 'eth+', 'lo', 'veth+', 'cali+', 'cni0', 'docker0', 'wg0', 'br-1a2b3c4d5e6f', 'eth0.100']);
}

function proto(rng: Rng, family: Family): Proto | undefined {
  if (!rng.chance(0.7)) return undefined;
  const kind = rng.weighted<Proto['kind']>([
    [10, 'tcp'],
    [5, 'udp'],
    [2, family === 4 ? 'icmp' : 'icmpv6'],
    [1, 'all'],
    [1, 'sctp'],
  ]);
  const spellings: Record<Proto['kind'], readonly string[]> = {
    tcp: ['tcp', 'tcp', 'tcp', '6', 'TCP'],
    udp: ['udp', 'udp', '17'],
    icmp: ['icmp', 'icmp', '1'],
    icmpv6: ['ipv6-icmp', 'icmpv6', '58'],
    all: ['all', '0'],
    sctp: ['sctp', '132'],
  };
  // `! -p all` "would never match" and is refused.
  const negated = kind !== 'all' && rng.chance(0.06);
  return { kind, negated, text: rng.pick(spellings[kind]) };
}

function generateRule(rng: Rng, family: Family, table: Table, hook: Hook, chain: string, builtin: boolean, jumpTargets: readonly string[]): GeneratedRule {
  const p = proto(rng, family);
  const ctx: RuleCtx = { rng, family, table, hook, chain, builtin, jumpTargets, proto: p };
  const fixed: string[] = [];
  let expands = 1;
  const longForm = rng.chance(0.1);
  const src = rng.chance(0.3) ? addressArg(rng, family) : undefined;
  const dst = rng.chance(0.3) ? addressArg(rng, family) : undefined;
  // `!` is refused with a comma list in either -s or -d, and nf_tables refuses `! -s 0.0.0.0/0`.
  const negatable = (a: { text: string; count: number }): boolean =>
    (src?.count ?? 1) === 1 && (dst?.count ?? 1) === 1 && !/^(0\.0\.0\.0|::)\/0$/.test(a.text);
  if (src) {
    expands *= src.count;
    fixed.push(`${negatable(src) ? neg(rng, 0.15) : ''}${longForm ? '--source' : '-s'} ${src.text}`);
  }
  if (dst) {
    expands *= dst.count;
    fixed.push(`${negatable(dst) ? neg(rng, 0.15) : ''}${longForm ? '--destination' : '-d'} ${dst.text}`);
  }
  if (IN_HOOKS.includes(hook) && rng.chance(0.25)) fixed.push(`${neg(rng)}${longForm ? '--in-interface' : '-i'} ${iface(rng)}`);
  if (OUT_HOOKS.includes(hook) && rng.chance(0.25)) fixed.push(`${neg(rng)}${longForm ? '--out-interface' : '-o'} ${iface(rng)}`);
  if (p) fixed.push(`${p.negated ? '! ' : ''}${longForm ? '--protocol' : '-p'} ${p.text}`);

  const matches: string[] = [];
  const nMatches = rng.weighted<number>([
    [3, 0],
    [4, 1],
    [3, 2],
    [1, 3],
  ]);
  const used = new Set<string>();
  for (let i = 0; i < nMatches * 3 && matches.length < nMatches; i++) {
    const gen = rng.weighted(MATCHES);
    const m = gen(ctx);
    if (m === null) continue;
    // One instance per module (comment excepted): `mark` and `connmark` share `--mark`, and the
    // protocol match's options would otherwise be claimed by an earlier module (see below).
    let key = m.startsWith('-m ') ? (m.split(' ')[1] ?? '') : 'proto';
    if (['tcp', 'udp', 'icmp', 'icmp6'].includes(key)) key = 'proto';
    if (key === 'connmark') key = 'mark';
    if (key !== 'comment' && used.has(key)) continue;
    used.add(key);
    matches.push(m);
  }
  // iptables takes unambiguous abbreviations of long options (getopt_long): once multiport is
  // loaded, an implicit `--dport`/`--sport` means multiport's `--dports`/`--sports`. Keep the
  // implicit protocol options ahead of every `-m`.
  matches.sort((x, y) => Number(x.startsWith('-m ')) - Number(y.startsWith('-m ')));

  let target: { text: string; jumps?: string } | null = null;
  for (let i = 0; i < 20 && target === null; i++) target = rng.weighted(TARGETS)(ctx);
  const t = target ?? { text: '-j ACCEPT' };

  // Order on the line: usually fixed fields, matches, target; sometimes the way generators write
  // it (linkerd: `-j RETURN -m comment ...`, istio: `-o lo ! -d ... -p tcp`).
  let parts: string[];
  const implicitFirst = matches.findIndex((m) => !m.startsWith('-m '));
  if (rng.chance(0.25) && implicitFirst < 0) {
    parts = [...rng.shuffle(fixed), ...matches];
  } else {
    parts = [...fixed, ...matches];
  }
  if (t.text) {
    if (rng.chance(0.15) && matches.length > 0 && (matches[matches.length - 1] ?? '').startsWith('-m comment')) {
      parts.splice(parts.length - 1, 0, t.text);
    } else {
      parts.push(t.text);
    }
  }
  return { chain, body: parts.join(' '), expands, jumps: t.jumps ? [t.jumps] : [] };
}

interface TableSpec {
  readonly table: Table;
  readonly lines: readonly string[];
}

function generateTable(rng: Rng, family: Family, table: Table): TableSpec {
  const builtins = BUILTINS[table];
  const nUser = rng.weighted<number>([
    [3, 0],
    [3, 1],
    [3, 2],
    [2, 3],
    [1, 4],
  ]);
  const names = rng.sample(USER_CHAIN_NAMES, nUser);
  const userHook = new Map<string, Hook>(names.map((n) => [n, rng.pick(builtins)]));
  const rules: GeneratedRule[] = [];
  const referenced = new Set<string>();

  const chainsInOrder: { name: string; hook: Hook; builtin: boolean; targets: string[] }[] = [];
  for (const b of builtins) chainsInOrder.push({ name: b, hook: b, builtin: true, targets: names.filter((n) => userHook.get(n) === b) });
  names.forEach((n, i) => {
    const hook = userHook.get(n) as Hook;
    chainsInOrder.push({ name: n, hook, builtin: false, targets: names.slice(i + 1).filter((m) => userHook.get(m) === hook) });
  });

  for (const ch of chainsInOrder) {
    const count = rng.weighted<number>([
      [2, 0],
      [3, 1],
      [3, 2],
      [2, 3],
      [1, 5],
    ]);
    for (let i = 0; i < count; i++) {
      const r = generateRule(rng, family, table, ch.hook, ch.name, ch.builtin, ch.targets);
      r.jumps.forEach((j) => referenced.add(j));
      rules.push(r);
    }
  }
  // Every user chain is reachable from its hook, so hook-restricted matches and targets in it are legal.
  for (const n of names) {
    if (!referenced.has(n)) {
      const hook = userHook.get(n) as Hook;
      rules.push({ chain: hook, body: `${rng.chance(0.3) ? '-p tcp ' : ''}-j ${n}`, expands: 1, jumps: [n] });
    }
  }

  // Emit: header, chain declarations, then the rules interleaved across chains.
  const lines: string[] = [];
  lines.push(rng.chance(0.05) ? `* ${table}` : `*${table}`);
  for (const b of builtins) {
    if (rng.chance(0.75)) {
      const policy = rng.weighted<string>([
        [8, 'ACCEPT'],
        [2, 'DROP'],
        [1, '-'],
      ]);
      const counters = rng.chance(0.1) ? `[${rng.int(0, 999)}:${rng.int(0, 99999)}]` : '[0:0]';
      lines.push(`:${b} ${policy} ${counters}`);
    }
  }
  const declared = rng.shuffle(names);
  const dashN: string[] = [];
  for (const n of declared) {
    if (rng.chance(0.6)) lines.push(`:${n} - [0:0]`);
    else dashN.push(n);
  }
  for (const n of dashN) lines.push(rng.chance(0.85) ? `-N ${n}` : `--new-chain ${n}`);

  const queues = new Map<string, GeneratedRule[]>();
  for (const r of rules) {
    const q = queues.get(r.chain) ?? [];
    q.push(r);
    queues.set(r.chain, q);
  }
  const counts = new Map<string, number>();
  const pending = [...queues.keys()];
  while (pending.length > 0) {
    const idx = rng.int(0, pending.length - 1);
    const chain = pending[idx] as string;
    const q = queues.get(chain) as GeneratedRule[];
    const r = q.shift() as GeneratedRule;
    if (q.length === 0) pending.splice(idx, 1);
    const have = counts.get(chain) ?? 0;
    let head: string;
    if (rng.chance(0.2)) {
      head = rng.chance(0.3) ? `-I ${chain}` : `-I ${chain} ${rng.int(1, have + 1)}`;
      if (rng.chance(0.1)) head = head.replace('-I', '--insert');
    } else {
      head = rng.chance(0.05) ? `--append ${chain}` : `-A ${chain}`;
    }
    const counterPrefix = rng.chance(0.04) ? `[${rng.int(0, 99)}:${rng.int(0, 9999)}] ` : '';
    lines.push(`${counterPrefix}${head}${r.body ? ' ' + r.body : ''}`);
    counts.set(chain, have + r.expands);
    if (rng.chance(0.04)) lines.push(rng.chance(0.5) ? '' : '# a comment line');
  }
  lines.push('COMMIT');
  return { table, lines };
}

/**
 * iptables-restore input for one family, exercising the modules the simulator supports, in the
 * shapes generators write. Deterministic in `seed`.
 */
export function generateRulesetText(seed: number, family: Family): string {
  const rng = new Rng(seed * 2 + (family === 6 ? 1 : 0));
  let tables = (['raw', 'mangle', 'nat', 'filter'] as const).filter(() => rng.chance(0.55));
  if (tables.length === 0) tables = [rng.pick(['nat', 'filter'] as const)];
  tables = rng.chance(0.7) ? tables : rng.shuffle(tables);
  const out: string[] = [];
  if (rng.chance(0.2)) out.push(`# Generated by nfsim-generate seed ${seed}`);
  for (const t of tables) out.push(...generateTable(rng, family, t).lines);
  return out.join('\n') + '\n';
}

// ---------------------------------------------------------------------------------------------
// Mutations

/** A mutation of valid restore input, with what was done (for messages). */
export interface Mutation {
  readonly text: string;
  readonly kind: string;
  readonly description: string;
}

type Mutator = (rng: Rng, lines: string[], family: Family) => { kind: string; description: string } | null;

const RULE_RE = /^(\[\d+:\d+\] )?(-A|-I|--append|--insert) /;
/** `-A CHAIN` / `-I CHAIN [N]`, with any counters prefix: where new options can go. */
const HEAD_RE = /^((?:\[\d+:\d+\] )?(?:-A|--append|-I|--insert) \S+(?: \d+)?)/;

function ruleLines(lines: readonly string[]): number[] {
  return lines.map((l, i) => (RULE_RE.test(l) ? i : -1)).filter((i) => i >= 0);
}

function tokens(line: string): string[] {
  // Split on blanks outside double quotes (keeps quoted comments whole).
  const out: string[] = [];
  let cur = '';
  let q = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (q && ch === '\\' && i + 1 < line.length) {
      cur += ch + line[i + 1];
      i++;
      continue;
    }
    if (ch === '"') q = !q;
    if (!q && ch === ' ') {
      if (cur) out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

function chainOf(line: string): string {
  return tokens(line.replace(/^\[\d+:\d+\] /, ''))[1] ?? 'INPUT';
}

function tableOfLine(lines: readonly string[], idx: number): string {
  for (let i = idx; i >= 0; i--) {
    const l = lines[i] as string;
    if (l.startsWith('*')) return l.replace(/^\*\s*/, '').trim();
  }
  return 'filter';
}

function builtinHookOf(lines: readonly string[], idx: number): string | undefined {
  const c = chainOf(lines[idx] as string);
  return ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'].includes(c) ? c : undefined;
}

/** Rewrites that keep the meaning (restore must accept them and print the same rules). */
const BENIGN: readonly (readonly [number, Mutator])[] = [
  [
    3,
    (rng, lines) => {
      // getopt_long takes any unambiguous prefix of a long option.
      const abbrevs: [RegExp, string][] = [
        [/ --comment /, ' --comm '],
        [/ --to-ports /, ' --to-p '],
        [/ --uid-owner /, ' --uid '],
        [/ --gid-owner /, ' --gid-o '],
        [/ --ctstate /, ' --ctstat '],
        [/ --log-prefix /, ' --log-p '],
        [/ --to-destination /, ' --to-dest '],
        [/ --set-mark /, ' --set-m '],
        [/ --reject-with /, ' --reject '],
        [/ --src-range /, ' --src-r '],
        [/ --probability /, ' --prob '],
        [/ --on-port /, ' --on-p '],
      ];
      const rl = ruleLines(lines).filter((i) => abbrevs.some(([re]) => re.test(lines[i] as string)));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const [re, rep] = rng.pick(abbrevs.filter(([r]) => r.test(lines[i] as string)));
      lines[i] = (lines[i] as string).replace(re, rep);
      return { kind: 'abbreviation', description: `line ${i + 1}: ${re.source.trim()} abbreviated to ${rep.trim()}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const forms: [RegExp, string][] = [
        [/ -s /, ' --source '],
        [/ -d /, ' --destination '],
        [/ -p /, ' --protocol '],
        [/ -j /, ' --jump '],
        [/ -m /, ' --match '],
        [/ -i /, ' --in-interface '],
        [/ -o /, ' --out-interface '],
        [/ -g /, ' --goto '],
        [/ -p tcp /, ' -p 6 '],
        [/ -p udp /, ' -p 17 '],
        [/ -p tcp --/, ' -p tcp -m tcp --'],
      ];
      const rl = ruleLines(lines).filter((i) => forms.some(([re]) => re.test(lines[i] as string)));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const [re, rep] = rng.pick(forms.filter(([r]) => r.test(lines[i] as string)));
      lines[i] = (lines[i] as string).replace(re, rep);
      return { kind: 'synonym', description: `line ${i + 1}: ${re.source.trim()} written as ${rep.trim()}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      // A global option moved behind the target (iptables parses the whole line first).
      const rl = ruleLines(lines).filter((i) => / (-s|-d|-i|-o) \S+/.test(lines[i] as string) && / (-j|-g) /.test(lines[i] as string));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const line = lines[i] as string;
      const m = / (! )?(-s|-d|-i|-o) (\S+)/.exec(line);
      if (!m) return null;
      lines[i] = line.replace(m[0], '') + m[0];
      return { kind: 'reorder', description: `line ${i + 1}: ${m[0].trim()} moved to the end` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const how = rng.pick(['double-space', 'tab', 'counters', 'comment-line', 'blank-line']);
      const line = lines[i] as string;
      if (how === 'double-space') lines[i] = line.replace(/ /g, () => (rng.chance(0.3) ? '  ' : ' '));
      else if (how === 'tab') lines[i] = line.replace(/ /, '\t');
      else if (how === 'counters') lines[i] = /^\[/.test(line) ? line : `[${rng.int(0, 99)}:${rng.int(0, 9999)}] ${line}`;
      else if (how === 'comment-line') lines.splice(i, 0, '# inserted comment');
      else lines.splice(i, 0, '');
      return { kind: 'whitespace', description: `line ${i + 1}: ${how}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      // Append the same rule with -I at the front of its chain.
      const rl = ruleLines(lines).filter((i) => /^(-A|--append) /.test(lines[i] as string));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const line = lines[i] as string;
      lines.splice(i + 1, 0, line.replace(/^(-A|--append) (\S+)/, rng.chance(0.5) ? '-I $2' : '-I $2 1'));
      return { kind: 'insert-copy', description: `line ${i + 2}: the rule of line ${i + 1} inserted at the head` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const extra = rng.pick([
        '-m comment --comment "added by mutate"',
        '-m comment --comment added',
        '-m mark --mark 0x1/0x1',
        '-m conntrack --ctstate NEW',
        '-m state --state ESTABLISHED',
      ]);
      const line = lines[i] as string;
      const jAt = line.search(/ (-j|-g) /);
      lines[i] = jAt < 0 ? `${line} ${extra}` : `${line.slice(0, jAt)} ${extra}${line.slice(jAt)}`;
      return { kind: 'extra-match', description: `line ${i + 1}: added ${extra}` };
    },
  ],
  [
    2,
    (rng, lines) => {
      const t = lines.findIndex((l) => /^\*/.test(l));
      if (t < 0) return null;
      const name = rng.pick(['b'.repeat(28), 'Z9_-.x', 'lower', 'MiXeD-Case']);
      lines.splice(t + 1, 0, `:${name} - [0:0]`);
      return { kind: 'new-chain', description: `unused chain ${name} (${name.length} chars)` };
    },
  ],
];

const MUTATORS: readonly (readonly [number, Mutator])[] = [
  ...BENIGN,
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const toks = tokens(lines[i] as string);
      const start = /^\[/.test(toks[0] ?? '') ? 3 : 2;
      if (toks.length <= start) return null;
      const k = rng.int(start, toks.length - 1);
      const dropped = toks[k];
      toks.splice(k, 1);
      lines[i] = toks.join(' ');
      return { kind: 'drop-token', description: `line ${i + 1}: dropped token ${JSON.stringify(dropped)}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines).filter((i) => /--(dport|sport|dports|sports|ports|to-ports|destination-port|source-port) /.test(lines[i] as string));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const bad = rng.pick(['70000', '-1', '1:', '65536', '0x50', '5:3', '80,', 'http-nope', '99999:100000', '0', '65535', '1:65535']);
      lines[i] = (lines[i] as string).replace(/(--(?:dport|sport|dports|sports|ports|to-ports|destination-port|source-port)) (\S+)/, `$1 ${bad}`);
      return { kind: 'bad-port', description: `line ${i + 1}: port set to ${bad}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const [bad, good] = rng.pick([
        ['mutliport', 'multiport'],
        ['ownr', 'owner'],
        ['comments', 'comment'],
        ['conntrak', 'conntrack'],
        ['MARK', 'mark'],
        ['ip_range', 'iprange'],
      ] as const);
      const line = lines[i] as string;
      if (line.includes(`-m ${good} `)) lines[i] = line.replace(`-m ${good} `, `-m ${bad} `);
      else lines[i] = line.replace(/ (-j|-g|$)/, ` -m ${bad}$1`);
      return { kind: 'unknown-module', description: `line ${i + 1}: -m ${bad}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines).filter((i) => !/ -p | --protocol /.test(lines[i] as string));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const opt = rng.pick(['--dport 80', '--sport 53', '--syn', '--icmp-type 8', '--tcp-flags SYN SYN']);
      lines[i] = (lines[i] as string).replace(HEAD_RE, `$1 ${opt}`);
      return { kind: 'option-without-protocol', description: `line ${i + 1}: ${opt} without -p` };
    },
  ],
  [
    2,
    (rng, lines) => {
      // An option of an earlier module after a later one: iptables still knows it (accepted).
      const rl = ruleLines(lines).filter((i) => / -p (tcp|udp) /.test(lines[i] as string) && !/--(dport|sport)/.test(lines[i] as string) && / -m comment /.test(lines[i] as string));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const line = lines[i] as string;
      const m = / -m comment --comment ("(?:[^"\\]|\\.)*"|\S+)/.exec(line);
      if (!m) return null;
      const at = m.index + m[0].length;
      const p = rng.int(1, 65535);
      lines[i] = line.slice(0, at) + ` --dport ${p}` + line.slice(at);
      return { kind: 'option-after-other-module', description: `line ${i + 1}: --dport ${p} after -m comment` };
    },
  ],
  [
    2,
    (rng, lines) => {
      const rl = ruleLines(lines).filter((i) => (lines[i] as string).includes('"'));
      if (rl.length === 0) {
        const all = ruleLines(lines);
        if (all.length === 0) return null;
        const i = rng.pick(all);
        lines[i] = (lines[i] as string).replace(/ (-j|$)/, ' -m comment --comment "unterminated$1');
        return { kind: 'unbalanced-quote', description: `line ${i + 1}: opening quote without a closing one` };
      }
      const i = rng.pick(rl);
      const line = lines[i] as string;
      const at = line.lastIndexOf('"');
      lines[i] = line.slice(0, at) + line.slice(at + 1);
      return { kind: 'unbalanced-quote', description: `line ${i + 1}: removed a closing quote` };
    },
  ],
  [
    2,
    (rng, lines) => {
      const commits = lines.map((l, i) => (l === 'COMMIT' ? i : -1)).filter((i) => i >= 0);
      if (commits.length === 0) return null;
      const i = rng.pick(commits);
      const how = rng.pick(['remove', 'remove', 'lowercase', 'trailing-space']);
      if (how === 'remove') lines.splice(i, 1);
      else if (how === 'lowercase') lines[i] = 'commit';
      else lines[i] = 'COMMIT ';
      return { kind: 'missing-commit', description: `line ${i + 1}: COMMIT ${how}` };
    },
  ],
  [
    2,
    (rng, lines) => {
      const bad = rng.pick(['bad chain', '-bad', '!bad', 'ACCEPT', 'DROP', 'RETURN', 'a'.repeat(29), 'b'.repeat(28), 'has.dot', 'has:colon', 'QUEUE', 'nat-chain_01', 'ü-umlaut']);
      const rl = ruleLines(lines);
      const at = rl.length > 0 ? rng.pick(rl) : lines.findIndex((l) => l.startsWith('*')) + 1;
      const tableStart = lines.slice(0, at + 1).map((l, i) => (l.startsWith('*') ? i : -1)).filter((i) => i >= 0).pop() ?? 0;
      const name = bad.includes(' ') ? `"${bad}"` : bad;
      lines.splice(tableStart + 1, 0, `-N ${name}`);
      lines.splice(at + 2, 0, `-A ${name} -j RETURN`);
      return { kind: 'chain-name', description: `new chain ${JSON.stringify(bad)} (${bad.length} chars)` };
    },
  ],
  [
    2,
    (rng, lines) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const n = rng.pick([255, 256, 256, 300]);
      lines[i] = (lines[i] as string).replace(HEAD_RE, `$1 -m comment --comment ${'c'.repeat(n)}`);
      return { kind: 'long-comment', description: `line ${i + 1}: ${n}-character comment` };
    },
  ],
  [
    2,
    (rng, lines) => {
      const rl = ruleLines(lines).filter((i) => / -p (tcp|udp|6|17) /.test(lines[i] as string) && !/multiport/.test(lines[i] as string));
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const slots = rng.pick([15, 16, 16, 17]);
      const withRange = rng.chance(0.5);
      const ports: string[] = [];
      let used = 0;
      if (withRange) {
        ports.push('1000:2000');
        used = 2;
      }
      for (let p = 1; used < slots; p++, used++) ports.push(String(100 + p));
      lines[i] = (lines[i] as string).replace(/ -p (tcp|udp|6|17) /, ` -p $1 -m multiport --dports ${ports.join(',')} `);
      return { kind: 'multiport-count', description: `line ${i + 1}: multiport with ${slots} slots${withRange ? ' (one range)' : ''}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const line = lines[i] as string;
      const options: string[] = [];
      const proto = / -p (\S+)/.exec(line);
      if (proto) options.push(`-p ${proto[1] === 'tcp' ? 'udp' : 'tcp'}`);
      const src = / -s (\S+)/.exec(line);
      if (src) options.push(`-s ${src[1]}`);
      const dport = / --dport (\S+)/.exec(line);
      if (dport) options.push(`--dport ${dport[1]}`);
      const comment = / -m comment --comment ("(?:[^"\\]|\\.)*"|\S+)/.exec(line);
      if (comment) options.push(`--comment ${comment[1]}`, `-m comment --comment ${comment[1]}`);
      if (/ -m mark --mark /.test(line)) options.push('-m mark --mark 1');
      if (/-j (ACCEPT|DROP|RETURN)/.test(line)) options.push('-j ACCEPT');
      if (options.length === 0) return null;
      const dup = rng.pick(options);
      const jAt = line.search(/ (-j|-g) /);
      lines[i] = dup.startsWith('-j') || jAt < 0 ? `${line} ${dup}` : `${line.slice(0, jAt)} ${dup}${line.slice(jAt)}`;
      return { kind: 'duplicate-option', description: `line ${i + 1}: repeated ${dup}` };
    },
  ],
  [
    3,
    (rng, lines) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const line = lines[i] as string;
      const forms: [RegExp, string, string][] = [
        [/ -s (\S+)/, ' -s ! $1', 'intrapositioned -s ! x'],
        [/ -p (\S+)/, ' -p ! $1', 'intrapositioned -p ! x'],
        [/ ! (-s|-d|-i|-o|-p) /, ' ! ! $1 ', 'double negation'],
        [/ (-j \S+)/, ' ! $1', 'negated -j'],
        [/ -m (\S+)/, ' ! -m $1', 'negated -m'],
        [/ --dport (\S+)/, ' --dport ! $1', 'intrapositioned --dport ! x'],
        [/ (-A|-I) (\S+)/, ' ! $1 $2', 'negated command'],
        [/ -m comment --comment/, ' -m comment ! --comment', 'negated comment'],
        [/ --uid-owner (\S+)/, ' --uid-owner ! $1', 'intrapositioned owner'],
        [/ -m conntrack --ctstate/, ' -m conntrack ! ! --ctstate', 'double-negated ctstate'],
        [/ -d (\S+)/, ' ! -d $1', 'negated -d'],
        [/ (-i|-o) (\S+)/, ' ! $1 $2', 'negated interface'],
      ];
      const applicable = forms.filter(([re]) => re.test(' ' + line.replace(/^\[\d+:\d+\] /, '')));
      if (applicable.length === 0) return null;
      const [re, rep, what] = rng.pick(applicable);
      const prefix = /^\[\d+:\d+\] /.exec(line)?.[0] ?? '';
      lines[i] = prefix + (' ' + line.slice(prefix.length)).replace(re, rep).slice(1);
      return { kind: 'negation', description: `line ${i + 1}: ${what}` };
    },
  ],
  [
    3,
    (rng, lines, family) => {
      const rl = ruleLines(lines);
      if (rl.length === 0) return null;
      const i = rng.pick(rl);
      const table = tableOfLine(lines, i);
      const hook = builtinHookOf(lines, i);
      const line = lines[i] as string;
      const head = HEAD_RE;
      const choices: [string, string][] = [
        ['insert-too-far', line.replace(/^(\[\d+:\d+\] )?(-A|--append) (\S+)/, '$1-I $3 99')],
        ['undefined-chain', line.replace(head, '-A NO_SUCH_CHAIN')],
        ['jump-undefined', line.replace(/ (-j|-g) \S+.*$/, ' -j NO_SUCH_TARGET_CHAIN')],
        ['wrong-family-address', line.replace(head, `$1 -d ${family === 4 ? 'fd00::1' : '10.0.0.1'}`)],
        ['bad-address', line.replace(head, `$1 -s ${rng.pick(['10.0.0.256', '10.0.0.0/33', 'fd00::/129', '1.2.3', 'host.invalid', '10.0.0.0/255.0.255.'])}`)],
        ['bad-interface', line.replace(head, `$1 ${hook === 'OUTPUT' || hook === 'POSTROUTING' ? '-o' : '-i'} ${rng.pick(['a'.repeat(16), 'eth 0', 'a'.repeat(15)])}`)],
        ['drop-in-nat', table === 'nat' ? line.replace(/ -j \S+.*$/, '') + ' -j DROP' : line],
        ['redirect-outside-nat', table !== 'nat' ? line.replace(/ (-j|-g) \S+.*$/, '') + ' -p tcp -j REDIRECT --to-ports 1' : line],
        ['owner-in-input', line.replace(head, '-A INPUT -m owner --uid-owner 0')],
        ['i-in-output', hook === 'OUTPUT' ? line.replace(head, '$1 -i eth0') : line.replace(head, '-A OUTPUT -i eth0')],
        ['bad-mark', line.replace(head, `$1 -m mark --mark ${rng.pick(['0x1/', 'zz', '4294967296', '-1', '0x1/0x1/0x1'])}`)],
        ['bad-ctstate', line.replace(head, `$1 -m conntrack --ctstate ${rng.pick(['NEWISH', 'NEW,,ESTABLISHED', 'new'])}`)],
        ['statistic-missing', line.replace(head, `$1 -m statistic --mode ${rng.pick(['random', 'nth --every 3', 'nth --packet 1', 'bogus'])}`)],
        ['reject-with-wrong-family', table === 'filter' ? line.replace(/ (-j|-g) \S+.*$/, '') + ` -j REJECT --reject-with ${family === 4 ? 'icmp6-no-route' : 'icmp-host-unreachable'}` : line],
        ['unknown-table', lines[i] as string],
        ['counters-garbage', line.replace(/^(\[\d+:\d+\] )?/, '[a:b] ')],
        ['policy-on-user-chain', line],
        ['loop', line],
        ['empty-rule', line.replace(/^((?:\[\d+:\d+\] )?\S+ \S+).*$/, '$1')],
        ['quoted-chain', line.replace(/^((?:\[\d+:\d+\] )?\S+) (\S+)/, '$1 "$2"')],
        ['tab-separated', line.replace(/ /g, '\t')],
        ['trailing-blanks', line + '   '],
        ['crlf', line + '\r'],
      ];
      const [kind, replaced] = rng.pick(choices);
      if (kind === 'unknown-table') {
        const t = lines.findIndex((l) => l.startsWith('*'));
        if (t < 0) return null;
        lines[t] = rng.pick(['*natt', '*Filter', '*security2', '*broute']);
        return { kind, description: `table header ${lines[t]}` };
      }
      if (kind === 'policy-on-user-chain') {
        const decl = lines.findIndex((l) => /^:\S+ - \[/.test(l));
        if (decl < 0) return null;
        lines[decl] = (lines[decl] as string).replace(' - [', ` ${rng.pick(['ACCEPT', 'DROP'])} [`);
        return { kind, description: `line ${decl + 1}: policy on a user chain` };
      }
      if (kind === 'loop') {
        const t = lines.findIndex((l) => l.startsWith('*'));
        if (t < 0) return null;
        const tbl = (lines[t] as string).replace(/^\*\s*/, '');
        const hookChain = tbl === 'filter' ? 'INPUT' : 'PREROUTING';
        lines.splice(t + 1, 0, ':LOOP_A - [0:0]', ':LOOP_B - [0:0]', `-A ${hookChain} -j LOOP_A`, '-A LOOP_A -j LOOP_B', `-A LOOP_B ${rng.chance(0.5) ? '-j' : '-g'} LOOP_A`);
        return { kind, description: 'LOOP_A -> LOOP_B -> LOOP_A, reachable from a built-in chain' };
      }
      lines[i] = replaced;
      return { kind, description: `line ${i + 1}: ${kind}` };
    },
  ],
];

/**
 * Damages valid restore input in one named way, deterministically in `seed`. Some mutations are
 * still valid (a 28-character chain name, 15 multiport slots, an option after another module's,
 * intrapositioned negation), so roughly half the results load.
 */
export function mutate(text: string, seed: number, family: Family = 4): Mutation {
  const rng = new Rng(seed * 7919 + 17);
  for (let attempt = 0; attempt < 50; attempt++) {
    const lines = text.split('\n');
    const trailingNewline = lines[lines.length - 1] === '';
    if (trailingNewline) lines.pop();
    const m = rng.weighted(MUTATORS)(rng, lines, family);
    if (m === null) continue;
    const out = lines.join('\n') + (trailingNewline ? '\n' : '');
    if (out === text) continue;
    return { text: out, kind: m.kind, description: m.description };
  }
  return { text: text.replace(/COMMIT\n?$/, ''), kind: 'missing-commit', description: 'last COMMIT removed' };
}

// ---------------------------------------------------------------------------------------------
// Connect cases

/** A probe as `Netns.connect` takes it. */
export type SimProbe =
  | { readonly from: 'local'; readonly uid: number; readonly gid: number; readonly dst: string; readonly sport?: number; readonly groups?: readonly number[]; readonly mark?: number }
  | { readonly from: 'remote'; readonly src: string; readonly dst: string; readonly sport?: number };

/** A generated pod for the connect differential: the same thing for the kernel and for `Netns`. */
export interface ConnectCase {
  readonly seed: number;
  readonly description: string;
  readonly kernel: KernelCase;
  /** `Netns` options: the rules and listeners, and whatever else the pod has (routes, ipsets, a clock). */
  readonly sim: { readonly rules: string; readonly rules6?: string; readonly listen: readonly (number | string | { readonly address?: string; readonly port: number; readonly transparent?: boolean })[]; readonly [option: string]: unknown };
  readonly probes: readonly SimProbe[];
  /**
   * Also compare the peer address the accepting socket saw (the world's listener for `remote`,
   * the pod's for `local`): after any SNAT/MASQUERADE. The port too where the probe fixes its
   * source port (otherwise the kernel's ephemeral port is not predictable).
   */
  readonly peer?: boolean;
}

interface Addrs {
  readonly family: Family;
  readonly pod: string;
  readonly lo: string;
  readonly gateway: string;
  readonly services: readonly string[];
  readonly serviceCidr: string;
  readonly peers: readonly string[];
  readonly peerCidr: string;
  readonly host: (a: string) => string;
  readonly hostPort: (a: string, p: number) => string;
}

const ADDRS4: Addrs = {
  family: 4,
  pod: '10.0.0.2',
  lo: '127.0.0.1',
  gateway: '10.0.0.1',
  services: ['10.96.0.10', '10.96.0.1', '10.100.3.7'],
  serviceCidr: '10.96.0.0/12',
  peers: ['10.1.0.5', '10.244.1.7', '192.168.5.5'],
  peerCidr: '10.244.0.0/16',
  host: (a) => `${a}/32`,
  hostPort: (a, p) => `${a}:${p}`,
};

const ADDRS6: Addrs = {
  family: 6,
  pod: 'fd00::2',
  lo: '::1',
  gateway: 'fd00::1',
  services: ['fd00:96::10', 'fd00:96::1', 'fd00:100::3:7'],
  serviceCidr: 'fd00:96::/112',
  peers: ['fd01::5', 'fd02::1:7', '2001:db8::5'],
  peerCidr: 'fd02::/64',
  host: (a) => `${a}/128`,
  hostPort: (a, p) => `[${a}]:${p}`,
};

interface Mesh {
  /** nat table lines between `*nat` and `COMMIT` (chain headers included). */
  readonly nat: string[];
  readonly filter: string[];
  readonly proxyUid: number;
  readonly proxyGid: number;
  readonly outPort: number;
  readonly inPort: number;
  readonly appPorts: number[];
  readonly skipPorts: number[];
  readonly description: string;
}

function linkerdMesh(rng: Rng, a: Addrs): Mesh {
  const uid = rng.pick([2102, 2102, 1337, 5005]);
  const skipIn = rng.sample([4190, 4191, 4567, 4568, 9990, 25], rng.int(1, 4));
  const skipOut = rng.sample([4567, 4568, 443, 3306, 25], rng.int(0, 2));
  const withLo = rng.chance(0.85);
  const skipNet = rng.chance(0.3);
  const goto = rng.chance(0.15);
  const nat = [
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':PROXY_INIT_OUTPUT - [0:0]',
    ':PROXY_INIT_REDIRECT - [0:0]',
    `-A PREROUTING -m comment --comment "proxy-init/install-proxy-init-prerouting" ${goto ? '-g' : '-j'} PROXY_INIT_REDIRECT`,
    '-A OUTPUT -m comment --comment "proxy-init/install-proxy-init-output" -j PROXY_INIT_OUTPUT',
    `-A PROXY_INIT_OUTPUT -m owner --uid-owner ${uid} -m comment --comment "proxy-init/ignore-proxy-user-id" -j RETURN`,
  ];
  if (withLo) nat.push('-A PROXY_INIT_OUTPUT -o lo -m comment --comment "proxy-init/ignore-loopback" -j RETURN');
  if (skipOut.length > 0) nat.push(`-A PROXY_INIT_OUTPUT -p tcp -m multiport --dports ${skipOut.join(',')} -m comment --comment "proxy-init/ignore-port-${skipOut.join(',')}" -j RETURN`);
  if (skipNet) nat.push(`-A PROXY_INIT_OUTPUT -d ${a.peerCidr} -m comment --comment "proxy-init/ignore-subnets" -j RETURN`);
  nat.push('-A PROXY_INIT_OUTPUT -p tcp -m comment --comment "proxy-init/redirect-all-outgoing-to-proxy-port" -j REDIRECT --to-ports 4140');
  nat.push(`-A PROXY_INIT_REDIRECT -p tcp -m multiport --dports ${skipIn.join(',')} -m comment --comment "proxy-init/ignore-port-${skipIn.join(',')}" -j RETURN`);
  if (rng.chance(0.2)) nat.push(`-A PROXY_INIT_REDIRECT -s ${a.peers[2]} -j RETURN`);
  nat.push('-A PROXY_INIT_REDIRECT -p tcp -m comment --comment "proxy-init/redirect-all-incoming-to-proxy-port" -j REDIRECT --to-ports 4143');
  return {
    nat,
    filter: [],
    proxyUid: uid,
    proxyGid: uid,
    outPort: 4140,
    inPort: 4143,
    appPorts: [8080, 9090],
    skipPorts: [...skipIn, ...skipOut],
    description: `linkerd(uid ${uid}${withLo ? '' : ', no -o lo rule'}${goto ? ', goto' : ''})`,
  };
}

function istioMesh(rng: Rng, a: Addrs): Mesh {
  const uid = rng.pick([1337, 1337, 1000, 2102]);
  const gid = rng.chance(0.8) ? uid : rng.pick([1337, 3000]);
  const inboundAll = rng.chance(0.6);
  const includeCidr = rng.chance(0.25);
  const excludeCidr = rng.chance(0.25);
  const nat = [
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    '-N ISTIO_INBOUND',
    '-N ISTIO_REDIRECT',
    '-N ISTIO_IN_REDIRECT',
    '-N ISTIO_OUTPUT',
    '-A ISTIO_INBOUND -p tcp --dport 15008 -j RETURN',
    '-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001',
    '-A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006',
    '-A PREROUTING -p tcp -j ISTIO_INBOUND',
  ];
  if (inboundAll) {
    nat.push('-A ISTIO_INBOUND -p tcp --dport 15090 -j RETURN', '-A ISTIO_INBOUND -p tcp --dport 15021 -j RETURN', '-A ISTIO_INBOUND -p tcp --dport 15020 -j RETURN', '-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT');
  } else {
    nat.push('-A ISTIO_INBOUND -p tcp --dport 8080 -j ISTIO_IN_REDIRECT');
  }
  nat.push(
    '-A OUTPUT -p tcp -j ISTIO_OUTPUT',
    `-A ISTIO_OUTPUT -o lo -s ${a.family === 4 ? '127.0.0.6/32' : '::6/128'} -j RETURN`,
    `-A ISTIO_OUTPUT -o lo ! -d ${a.host(a.lo)} -p tcp ! --dport 15008 -m owner --uid-owner ${uid} -j ISTIO_IN_REDIRECT`,
    `-A ISTIO_OUTPUT -o lo -m owner ! --uid-owner ${uid} -j RETURN`,
    `-A ISTIO_OUTPUT -m owner --uid-owner ${uid} -j RETURN`,
    `-A ISTIO_OUTPUT -o lo ! -d ${a.host(a.lo)} -p tcp ! --dport 15008 -m owner --gid-owner ${gid} -j ISTIO_IN_REDIRECT`,
    `-A ISTIO_OUTPUT -o lo -m owner ! --gid-owner ${gid} -j RETURN`,
    `-A ISTIO_OUTPUT -m owner --gid-owner ${gid} -j RETURN`,
    `-A ISTIO_OUTPUT -d ${a.host(a.lo)} -j RETURN`,
  );
  if (excludeCidr) nat.push(`-A ISTIO_OUTPUT -d ${a.peerCidr} -j RETURN`);
  if (includeCidr) nat.push(`-A ISTIO_OUTPUT -d ${a.serviceCidr} -j ISTIO_REDIRECT`, '-A ISTIO_OUTPUT -j RETURN');
  else nat.push('-A ISTIO_OUTPUT -j ISTIO_REDIRECT');
  return {
    nat,
    filter: [],
    proxyUid: uid,
    proxyGid: gid,
    outPort: 15001,
    inPort: 15006,
    appPorts: [8080, 9090],
    skipPorts: [15008, 15090, 15021, 15020],
    description: `istio(uid ${uid} gid ${gid}${inboundAll ? '' : ', inbound 8080 only'}${includeCidr ? ', include service CIDR' : ''}${excludeCidr ? ', exclude peer CIDR' : ''})`,
  };
}

function kubeMesh(rng: Rng, a: Addrs): Mesh {
  const svc = a.services[0] as string;
  const backend = rng.chance(0.5) ? (a.peers[1] as string) : a.pod;
  const backendPort = rng.pick([8080, 9090]);
  const nat = [
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':KUBE-MARK-MASQ - [0:0]',
    ':KUBE-POSTROUTING - [0:0]',
    ':KUBE-SEP-6E7XQMQ4RAYOWTTM - [0:0]',
    ':KUBE-SERVICES - [0:0]',
    ':KUBE-SVC-TCOU7JCQXEZGVUNU - [0:0]',
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    `-A KUBE-SERVICES -d ${a.host(svc)} -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-TCOU7JCQXEZGVUNU`,
    `-A KUBE-SVC-TCOU7JCQXEZGVUNU ! -s ${a.family === 4 ? '10.244.0.0/16' : 'fd02::/64'} -d ${a.host(svc)} -p tcp -m comment --comment "default/web:http cluster IP" -m tcp --dport 80 -j KUBE-MARK-MASQ`,
    `-A KUBE-SVC-TCOU7JCQXEZGVUNU -m comment --comment "default/web:http -> ${a.hostPort(backend, backendPort)}" -j KUBE-SEP-6E7XQMQ4RAYOWTTM`,
    `-A KUBE-SEP-6E7XQMQ4RAYOWTTM -s ${a.host(backend)} -m comment --comment "default/web:http" -j KUBE-MARK-MASQ`,
    `-A KUBE-SEP-6E7XQMQ4RAYOWTTM -p tcp -m comment --comment "default/web:http" -m tcp -j DNAT --to-destination ${a.hostPort(backend, backendPort)}`,
  ];
  if (rng.chance(0.5)) {
    nat.push(`-A KUBE-SERVICES -d ${a.host(a.services[1] as string)} -p tcp -m tcp --dport 443 -j DNAT --to-destination ${a.hostPort(a.peers[0] as string, 6443)}`);
  }
  return {
    nat,
    filter: [],
    proxyUid: 0,
    proxyGid: 0,
    outPort: 0,
    inPort: 0,
    appPorts: [8080, 9090],
    skipPorts: [],
    description: `kube-proxy(service ${svc}:80 -> ${a.hostPort(backend, backendPort)})`,
  };
}

function filterRules(rng: Rng, a: Addrs, mesh: Mesh): string[] {
  const out: string[] = [];
  const policyInDrop = rng.chance(0.15);
  out.push(`:INPUT ${policyInDrop ? 'DROP' : 'ACCEPT'} [0:0]`, ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]');
  if (policyInDrop) {
    out.push('-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT', '-A INPUT -i lo -j ACCEPT');
    // Neighbour discovery is ICMPv6 and goes through INPUT: without this, eth0 goes deaf.
    if (a.family === 6) out.push('-A INPUT -p ipv6-icmp -j ACCEPT');
    const allowed = [mesh.inPort, ...mesh.appPorts.slice(0, rng.int(0, 2))].filter((p) => p > 0);
    if (allowed.length > 0) out.push(`-A INPUT -p tcp -m multiport --dports ${allowed.join(',')} -j ACCEPT`);
  }
  const snippets: (() => string)[] = [
    () => `-A OUTPUT -d ${a.host(a.services[1] as string)} -p tcp -m tcp --dport 443 -j DROP`,
    () => `-A OUTPUT -p tcp -m tcp --dport 25 -j REJECT${a.family === 4 ? ' --reject-with icmp-port-unreachable' : ' --reject-with icmp6-adm-prohibited'}`,
    () => `-A OUTPUT -m owner --uid-owner 1000 -p tcp -m tcp --dport 9999 -j REJECT --reject-with tcp-reset`,
    () => `-A OUTPUT -m owner --uid-owner 3000-3999 -j DROP`,
    () => `-A INPUT -p tcp -m tcp --dport 8081 -j DROP`,
    () => `-A INPUT -s ${a.host(a.peers[0] as string)} -p tcp -m tcp --dport 9090 -j REJECT`,
    () => `-A INPUT -m conntrack --ctstate INVALID -j DROP`,
    () => `-A INPUT -p tcp -m multiport --dports 4191,9990 -j ACCEPT`,
    () => `-A INPUT -s ${a.peerCidr} -p tcp -m tcp --dport 8080 -j DROP`,
    () => `-A OUTPUT -o eth0 -d ${a.host(a.peers[2] as string)} -j DROP`,
    () => `-A INPUT -i eth0 -p tcp -m tcp --dport ${mesh.inPort || 8080} -m comment --comment "allow proxy" -j ACCEPT`,
  ];
  for (const s of rng.sample(snippets, rng.int(0, 3))) out.push(s());
  return out;
}

function natOnlyExtras(rng: Rng, a: Addrs): string[] {
  // A few lines that exercise DNAT/REDIRECT/SNAT next to the mesh rules.
  const out: string[] = [];
  if (rng.chance(0.2)) out.push(`-I OUTPUT 1 -d ${a.host(a.services[2] as string)} -p tcp -m tcp --dport 80 -j DNAT --to-destination ${a.hostPort(a.pod, 9090)}`);
  if (rng.chance(0.15)) out.push(`-I OUTPUT 1 -d ${a.host(a.lo)} -p tcp -m tcp --dport 8081 -j REDIRECT --to-ports 8080`);
  if (rng.chance(0.15)) out.push(`-A POSTROUTING -o eth0 -j MASQUERADE`);
  if (rng.chance(0.1)) out.push(`-A POSTROUTING -o eth0 -p tcp -j SNAT --to-source ${a.pod}`);
  if (rng.chance(0.1)) out.push(`-I PREROUTING 1 -p tcp -m tcp --dport 9091 -j DNAT --to-destination ${a.hostPort(a.pod, 9090)}`);
  return out;
}

function plainMesh(): Mesh {
  return { nat: [], filter: [], proxyUid: 0, proxyGid: 0, outPort: 0, inPort: 0, appPorts: [8080, 9090], skipPorts: [], description: 'no mesh' };
}

/**
 * Rules around the mesh's that touch the same connections in other ways: untracked or zoned
 * flows, marks set in mangle and read in nat/filter, connmarks, addrtype/iprange/conntrack
 * matches, and owner tests on packets the kernel sends itself (RSTs) or on listeners' SYN-ACKs.
 */
function extraRules(rng: Rng, a: Addrs, mesh: Mesh): { raw: string[]; mangle: string[]; nat: string[]; filter: string[] } {
  const raw: string[] = [];
  const mangle: string[] = [];
  const nat: string[] = [];
  const filter: string[] = [];
  const natChainOut = mesh.nat.some((l) => l.startsWith(':PROXY_INIT_OUTPUT') || l === '-N ISTIO_OUTPUT') ? (mesh.nat.some((l) => l.startsWith(':PROXY_INIT_OUTPUT')) ? 'PROXY_INIT_OUTPUT' : 'ISTIO_OUTPUT') : 'OUTPUT';
  const peerRange = a.family === 4 ? '10.1.0.1-10.1.0.9' : 'fd01::1-fd01::9';
  const pick: (() => void)[] = [
    () => raw.push('-A OUTPUT -p tcp -m tcp --dport 9999 -j CT --notrack'),
    () => raw.push('-A PREROUTING -p tcp -m tcp --dport 8080 -j CT --notrack'),
    () => raw.push(`-A OUTPUT -d ${a.host(a.services[0] as string)} -p tcp -j CT --notrack`, `-A PREROUTING -s ${a.host(a.services[0] as string)} -p tcp -j CT --notrack`),
    () => raw.push('-A OUTPUT -p tcp -m tcp --dport 443 -j CT --zone 1'),
    () => {
      mangle.push('-A OUTPUT -p tcp -m tcp --dport 443 -j MARK --set-mark 0x539');
      nat.push(`-I ${natChainOut} 1 -m mark --mark 0x539 -j RETURN`);
    },
    () => {
      mangle.push('-A OUTPUT -m owner --uid-owner 1000 -j MARK --set-xmark 0x10/0x10');
      nat.push(`-I OUTPUT 1 -p tcp -m mark --mark 0x10/0x10 -m tcp --dport 80 -j DNAT --to-destination ${a.hostPort(a.peers[1] as string, 8443)}`);
    },
    () => {
      mangle.push('-A PREROUTING -p tcp -m tcp --dport 9090 -j CONNMARK --set-mark 7');
      filter.push('-A INPUT -m connmark --mark 7 -j DROP');
    },
    () => {
      mangle.push('-A PREROUTING -j CONNMARK --restore-mark', '-A PREROUTING -p tcp -m tcp --dport 8080 -j MARK --set-mark 3', '-A PREROUTING -j CONNMARK --save-mark', '-A OUTPUT -j CONNMARK --restore-mark');
      filter.push('-A OUTPUT -m mark --mark 3 -j DROP');
    },
    () => nat.push('-I OUTPUT 1 -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 9091 -j REDIRECT --to-ports 9090'),
    () => nat.push(`-I PREROUTING 1 -m iprange --src-range ${peerRange} -p tcp -m tcp --dport 8080 -j RETURN`),
    () => nat.push(`-I OUTPUT 1 -p tcp -m multiport --dports 3306,25 -j RETURN`),
    () => nat.push(`-I OUTPUT 1 -m conntrack --ctstate NEW -d ${a.host(a.services[1] as string)} -p tcp -m tcp --dport 443 -j DNAT --to-destination ${a.hostPort(a.pod, 8080)}`),
    () => nat.push(`-A POSTROUTING -o lo -m addrtype --src-type LOCAL -p tcp -j SNAT --to-source ${a.family === 4 ? '127.0.0.6' : '::1'}`),
    () => nat.push(`-I OUTPUT 1 ! -d ${a.host(a.lo)} -o lo -p tcp -m tcp --dport 8080 -j REDIRECT --to-ports 9090`),
    () => filter.push('-A OUTPUT -p tcp -m conntrack --ctstate DNAT -m tcp --dport 80 -j ACCEPT', `-A OUTPUT -p tcp -m tcp --dport 80 -d ${a.host(a.services[0] as string)} -j REJECT --reject-with tcp-reset`),
    // TCP only: for IPv6 the rule would also drop neighbour solicitations (sent to a multicast
    // address), and the pod would lose its link; not something the simulator models.
    () => filter.push('-A INPUT -i eth0 -p tcp -m addrtype ! --dst-type LOCAL -j DROP'),
    () => filter.push(`-A INPUT -m conntrack --ctstate NEW -p tcp -m tcp --dport ${mesh.inPort || 8080} -m iprange --src-range ${peerRange} -j REJECT --reject-with tcp-reset`),
    () => filter.push('-A OUTPUT -p tcp -m owner ! --socket-exists -j DROP'),
    () => filter.push('-A OUTPUT -p tcp -m owner --uid-owner 0 -m tcp --sport 8080 -j DROP'),
    () => filter.push('-A OUTPUT -p tcp -m tcp --tcp-flags RST RST -j DROP'),
    () => filter.push('-A INPUT -p tcp -m state --state NEW -m tcp --dport 9090 -j DROP'),
    () => filter.push(`-A OUTPUT -m owner --gid-owner ${mesh.proxyGid || 1337} --suppl-groups -p tcp -m tcp --dport 25 -j DROP`),
  ];
  for (const f of rng.sample(pick, rng.weighted<number>([[3, 0], [3, 1], [2, 2], [1, 3]]))) f();
  return { raw, mangle, nat, filter };
}

type RulesKind = 'mesh' | 'plain' | 'none';

function familyRules(rng: Rng, a: Addrs, kind: RulesKind): { text: string; mesh: Mesh } {
  if (kind === 'none') return { text: '', mesh: plainMesh() };
  const mesh =
    kind === 'plain'
      ? plainMesh()
      : rng.weighted<(r: Rng, a: Addrs) => Mesh>([
          [4, linkerdMesh],
          [4, istioMesh],
          [2, kubeMesh],
        ])(rng, a);
  const extra = extraRules(rng, a, mesh);
  const lines: string[] = [];
  if (extra.raw.length > 0) lines.push('*raw', ':PREROUTING ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...extra.raw, 'COMMIT');
  if (extra.mangle.length > 0) lines.push('*mangle', ...extra.mangle, 'COMMIT');
  const natLines = [...mesh.nat, ...(kind === 'mesh' ? natOnlyExtras(rng, a) : [])];
  // Inserts at position 1 need the chain to exist: built-ins always do.
  natLines.push(...extra.nat);
  if (natLines.length > 0) lines.push('*nat', ...natLines, 'COMMIT');
  if (kind === 'plain' || extra.filter.length > 0 || rng.chance(0.6)) lines.push('*filter', ...filterRules(rng, a, mesh), ...extra.filter, 'COMMIT');
  return { text: lines.join('\n') + '\n', mesh };
}

function probesFor(rng: Rng, a: Addrs, mesh: Mesh, n: number): KernelProbe[] {
  const out: KernelProbe[] = [];
  const uids = [0, 1000, mesh.proxyUid || 2102, rng.pick([1337, 2102, 65534, 3005])];
  const ports = [80, 443, 8080, 9090, 4140, 4143, 15001, 15006, 4191, 9999, 25, 8081, 9091, ...mesh.skipPorts.slice(0, 2)];
  for (let i = 0; i < n; i++) {
    const kind = rng.weighted<string>([
      [4, 'local-remote'],
      [2, 'local-pod'],
      [2, 'local-lo'],
      [1, 'local-gw'],
      [4, 'remote-pod'],
    ]);
    if (kind.startsWith('local')) {
      const uid = rng.pick(uids);
      const gid = rng.chance(0.85) ? uid : rng.pick([mesh.proxyGid || 1337, 1000, 0]);
      let dst: string;
      if (kind === 'local-remote') dst = a.hostPort(rng.pick([...a.services, ...a.peers]), rng.pick([80, 443, 8080, 25, 3306, 9999]));
      else if (kind === 'local-pod') dst = a.hostPort(a.pod, rng.pick(ports));
      // Now and then the unspecified address, which is the host itself (connect() goes to loopback).
      else if (kind === 'local-lo') dst = a.hostPort(rng.chance(0.2) ? (a.family === 4 ? '0.0.0.0' : '::') : a.lo, rng.pick(ports));
      else dst = a.hostPort(a.gateway, 80);
      out.push({ from: 'local', uid, gid, dst });
    } else {
      out.push({ from: 'remote', src: rng.pick(a.peers), dst: a.hostPort(a.pod, rng.pick(ports)) });
    }
  }
  return out;
}

/**
 * A mesh-shaped pod with listeners and ~8 probes, for the connect differential. Seeds cover IPv4
 * only, IPv6 only, and both (with probes of both families).
 */
export function generateConnectCase(seed: number): ConnectCase {
  const rng = new Rng(seed * 31 + 5);
  const which = rng.weighted<'4' | '6' | '46'>([
    [6, '4'],
    [2, '6'],
    [2, '46'],
  ]);
  let rules4 = '';
  let rules6 = '';
  const descr: string[] = [];
  let probes: KernelProbe[] = [];
  let mesh4: Mesh | undefined;
  let mesh6: Mesh | undefined;
  const kind = (): RulesKind => rng.weighted<RulesKind>([[8, 'mesh'], [1, 'plain'], [1, 'none']]);
  if (which.includes('4')) {
    const k = kind();
    const r = familyRules(rng, ADDRS4, k);
    rules4 = r.text;
    mesh4 = r.mesh;
    descr.push(`v4 ${k === 'none' ? 'no rules' : r.mesh.description}`);
  }
  if (which.includes('6')) {
    // Dual-stack pods often have no IPv6 rules at all.
    const k = which === '46' && rng.chance(0.3) ? 'none' : kind();
    const r = familyRules(rng, ADDRS6, k);
    rules6 = r.text;
    mesh6 = r.mesh;
    descr.push(`v6 ${k === 'none' ? 'no rules' : r.mesh.description}`);
  }
  const n = rng.int(7, 9);
  if (mesh4 && mesh6) {
    const n4 = Math.ceil(n / 2);
    probes = rng.shuffle([...probesFor(rng, ADDRS4, mesh4, n4), ...probesFor(rng, ADDRS6, mesh6, n - n4)]);
  } else if (mesh4) {
    probes = probesFor(rng, ADDRS4, mesh4, n);
  } else if (mesh6) {
    probes = probesFor(rng, ADDRS6, mesh6, n);
  }
  // The proxies and the app; some proxy ports bound to loopback only.
  const listeners: KernelListener[] = [];
  const simListen: (number | string)[] = [];
  const outPorts = new Set([mesh4?.outPort ?? 0, mesh6?.outPort ?? 0]);
  const ports = new Set<number>([8080, rng.chance(0.5) ? 9090 : 0, ...outPorts, mesh4?.inPort ?? 0, mesh6?.inPort ?? 0].filter((p) => p > 0));
  for (const p of ports) {
    if (outPorts.has(p) && rng.chance(0.35)) {
      const addr = which === '6' ? '::1' : '127.0.0.1';
      listeners.push({ address: addr, port: p });
      simListen.push(addr.includes(':') ? `[${addr}]:${p}` : `${addr}:${p}`);
    } else {
      listeners.push({ port: p });
      simListen.push(p);
    }
  }
  const kernel: KernelCase = { rules4, rules6, listeners, probes };
  const simProbes: SimProbe[] = probes.map((p) => (p.from === 'local' ? { from: 'local', uid: p.uid, gid: p.gid ?? p.uid, dst: p.dst } : { from: 'remote', src: p.src, dst: p.dst }));
  return {
    seed,
    description: descr.join('; '),
    kernel,
    sim: rules6 ? { rules: rules4, rules6, listen: simListen } : { rules: rules4, listen: simListen },
    probes: simProbes,
  };
}
