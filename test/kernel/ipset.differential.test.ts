// `-m set`, `-j SET` and SO_MARK against the kernel: the same ipsets are created (`ipset restore`)
// and the same rules loaded in a real pod namespace and in a simulated one, the same probes made
// (some with SO_MARK on the socket), and outcome, address, port and SO_ORIGINAL_DST must agree.
import { beforeAll, expect, it } from 'vitest';
import { describeKernel, kernelConnectMany } from './harness.js';
import type { KernelCase, KernelConnectReport, KernelProbe } from './harness.js';
import { loadNetns } from './sim.js';

interface Case {
  readonly name: string;
  readonly ipsets: string;
  readonly rules4?: string;
  readonly rules6?: string;
  readonly ipBatch?: readonly string[];
  readonly ipRules?: readonly { fwmark: number; mask?: number; table: number }[];
  readonly routes?: readonly { dst: string; type: string; dev?: string; table: number }[];
  readonly listen: readonly number[];
  readonly probes: readonly KernelProbe[];
}

const FILTER_HEAD = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n';
const NAT_HEAD = '*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n';
const local = (dst: string, extra: Partial<{ uid: number; mark: number }> = {}): KernelProbe => ({ from: 'local', uid: extra.uid ?? 1000, dst, ...(extra.mark === undefined ? {} : { mark: extra.mark }) });
const remote = (src: string, dst: string): KernelProbe => ({ from: 'remote', src, dst });

const CASES: Case[] = [
  {
    name: 'set match: hash:ip, hash:net with a nomatch member, hash:ip,port, src and dst, negation',
    ipsets: [
      'create s hash:ip family inet', 'add s 10.0.0.2',
      'create n hash:net family inet', 'add n 10.0.0.0/24', 'add n 10.0.0.2 nomatch',
      'create pp hash:ip,port family inet', 'add pp 10.0.0.2,tcp:8085',
      'create r hash:ip family inet', 'add r 10.1.0.5', '',
    ].join('\n'),
    rules4: FILTER_HEAD + [
      '-A INPUT -p tcp --dport 8081 -m set --match-set s dst -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8082 -m set ! --match-set s dst -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8083 -m set --match-set n dst -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8084 -m set --match-set n dst --return-nomatch -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp -m set --match-set pp dst,dst -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8087 -m set --match-set r src -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8088 -m set --match-set s src,dst -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8089 -m set --match-set pp dst -j REJECT --reject-with tcp-reset',
      'COMMIT', '',
    ].join('\n'),
    listen: [8081, 8082, 8083, 8084, 8085, 8086, 8087, 8088, 8089],
    probes: [
      local('10.0.0.2:8081'), local('10.0.0.2:8082'), local('10.0.0.2:8083'), local('10.0.0.2:8084'),
      local('10.0.0.2:8085'), local('10.0.0.2:8086'), local('10.0.0.2:8087'), remote('10.1.0.5', '10.0.0.2:8087'),
      remote('10.1.0.6', '10.0.0.2:8087'), local('10.0.0.2:8088'), remote('10.1.0.6', '10.0.0.2:8088'), local('10.0.0.2:8089'),
    ],
  },
  {
    name: 'SET target adds and deletes members as packets pass',
    ipsets: 'create dyn hash:ip family inet\n',
    rules4: FILTER_HEAD + [
      '-A INPUT -p tcp --dport 8091 -m set --match-set dyn src -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8092 -j SET --add-set dyn src',
      '-A INPUT -p tcp --dport 8093 -j SET --del-set dyn src',
      'COMMIT', '',
    ].join('\n'),
    listen: [8091, 8092, 8093],
    probes: [
      remote('10.1.0.5', '10.0.0.2:8091'), remote('10.1.0.5', '10.0.0.2:8092'), remote('10.1.0.5', '10.0.0.2:8091'),
      remote('10.1.0.6', '10.0.0.2:8091'), remote('10.1.0.5', '10.0.0.2:8093'), remote('10.1.0.5', '10.0.0.2:8091'),
    ],
  },
  {
    name: 'the ambient host rule: local sockets to pods in the probe set are SNATed to 169.254.7.127',
    ipsets: 'create istio-inpod-probes-v4 hash:ip family inet\nadd istio-inpod-probes-v4 10.0.0.2\n',
    rules4: NAT_HEAD + ':ISTIO_POSTRT - [0:0]\n' + [
      '-A POSTROUTING -j ISTIO_POSTRT',
      '-A ISTIO_POSTRT -p tcp -m owner --socket-exists -m set --match-set istio-inpod-probes-v4 dst -j SNAT --to-source 169.254.7.127',
      'COMMIT',
    ].join('\n') + '\n' + FILTER_HEAD + '-A INPUT -s 169.254.7.127/32 -p tcp --dport 8095 -j REJECT --reject-with tcp-reset\nCOMMIT\n',
    listen: [8095, 8096],
    probes: [local('10.0.0.2:8095', { uid: 0 }), local('10.0.0.2:8096', { uid: 0 }), remote('10.1.0.5', '10.0.0.2:8095')],
  },
  {
    name: 'IPv6 sets',
    ipsets: 'create s6 hash:ip family inet6\nadd s6 fd00::2\ncreate n6 hash:net family inet6\nadd n6 fd01::/64\n',
    rules6: FILTER_HEAD + [
      '-A INPUT -p tcp --dport 8081 -m set --match-set s6 dst -j REJECT --reject-with tcp-reset',
      '-A INPUT -p tcp --dport 8082 -m set --match-set n6 src -j REJECT --reject-with tcp-reset',
      'COMMIT', '',
    ].join('\n'),
    listen: [8081, 8082],
    probes: [local('[fd00::2]:8081'), remote('fd01::5', '[fd00::2]:8082'), remote('fd02::5', '[fd00::2]:8082')],
  },
  {
    name: 'SO_MARK: mark matches and ztunnel-style mark/mask rules see the socket mark',
    ipsets: '',
    rules4: NAT_HEAD + [
      '-A OUTPUT -p tcp -m mark ! --mark 0x539/0xfff -j REDIRECT --to-ports 15001',
      'COMMIT',
    ].join('\n') + '\n' + FILTER_HEAD + '-A OUTPUT -p tcp --dport 8097 -m mark --mark 0x7 -j REJECT --reject-with tcp-reset\nCOMMIT\n',
    listen: [15001],
    probes: [
      local('10.96.0.10:80'), local('10.96.0.10:80', { mark: 0x539 }), local('10.96.0.10:80', { mark: 0x1539 }),
      local('10.96.0.10:80', { mark: 0x538 }), local('10.96.0.10:8097', { mark: 0x7 }),
    ],
  },
  {
    name: 'SO_MARK and policy routing: a marked socket follows its fwmark rule (mask 0xfff)',
    ipsets: '',
    ipBatch: ['rule add fwmark 0x111/0xfff pref 32764 lookup 100', 'route add unreachable 10.96.0.0/12 table 100', 'route add prohibit 10.100.0.0/16 table 100'],
    ipRules: [{ fwmark: 0x111, mask: 0xfff, table: 100 }],
    routes: [{ dst: '10.96.0.0/12', type: 'unreachable', table: 100 }, { dst: '10.100.0.0/16', type: 'prohibit', table: 100 }],
    rules4: '',
    listen: [8099],
    probes: [
      local('10.96.0.10:8099'), local('10.96.0.10:8099', { mark: 0x111 }), local('10.96.0.10:8099', { mark: 0x1111 }),
      local('10.96.0.10:8099', { mark: 0x112 }), local('10.100.0.5:80', { mark: 0x111 }), local('10.100.0.5:80'),
    ],
  },
];

interface View {
  readonly outcome: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly originalDestination: string | null;
}
const view = (r: View): View => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination });

describeKernel('ipsets, SET and SO_MARK: Netns vs the kernel', () => {
  let kernel: KernelConnectReport[] = [];
  beforeAll(async () => {
    const cases: KernelCase[] = CASES.map((c) => ({
      ...(c.rules4 ? { rules4: c.rules4 } : {}),
      ...(c.rules6 ? { rules6: c.rules6 } : {}),
      listeners: c.listen.map((port) => ({ port })),
      probes: c.probes,
      ...(c.ipsets ? { ipsets: c.ipsets } : {}),
      ...(c.ipBatch ? { ipBatch: c.ipBatch } : {}),
    }));
    kernel = await kernelConnectMany(cases, { concurrency: 3 });
  }, 120_000);

  it.each(CASES.map((c, i) => [c.name, i] as const))('%s', async (_name, i) => {
    const c = CASES[i]!;
    const k = kernel[i]!;
    if (!k.ok) throw new Error(`kernel setup failed at ${k.stage}: ${k.stderr}`);
    const Netns = (await loadNetns()) as unknown as new (o: Record<string, unknown>) => {
      connect(spec: Record<string, unknown>, o?: Record<string, unknown>): View;
    };
    const ns = new Netns({
      rules: c.rules4 ?? '', rules6: c.rules6 ?? '', listen: c.listen, ipsets: c.ipsets,
      ...(c.ipRules ? { ipRules: c.ipRules } : {}), ...(c.routes ? { routes: c.routes } : {}),
    });
    const ours = c.probes.map((p) => view(ns.connect(p as unknown as Record<string, unknown>, { trace: false })));
    expect(ours).toEqual(k.results.map((r) => view(r)));
  });
});
