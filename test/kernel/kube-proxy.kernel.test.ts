// kube-proxy compiled from snapshots, against the kernel: every rule set loads into a fresh
// network namespace (iptables-restore after the nfacct objects kube-proxy creates; `nft -f` of
// kube-proxy's own transaction) and `iptables-save` / `nft list ruleset` print exactly what the
// compiler printed. Then connections through compiled rules, from the node itself, made by real
// sockets and by `Netns.connect`: DNAT to an endpoint, the no-endpoint REJECT, a NodePort,
// session affinity (a ClientIP Service keeps its endpoint).
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { compileKubeProxy, kubeProxyNfacctNames, type KubeProxyOptions } from '../../src/compile/kube-proxy/index.js';
import type { Snapshot } from '../../src/model/kubernetes.js';
import { describeKernel, describeNftKernel, kernelConnect, kernelNftListMany, kernelTools, mapLimit, stripSaveComments, type KernelNftResult } from './harness.js';
import { Netns } from '../../src/index.js';
import { namedDifferential, namedLocal, type NamedCase } from './connect-differential.js';
import { GEN_CLUSTER_CIDR, GEN_NODE, generateCluster } from '../compile/kube-proxy/generate.js';
import { DUPLICATE_EXTERNAL_IP, FAKE_IPTABLES, OVERALL, service, slice, snapshot, TEST_NODE } from '../compile/kube-proxy/fixtures.js';

const NFACCT_PY = join(dirname(fileURLToPath(import.meta.url)), 'nfacct.py');
const SEEDS = Array.from({ length: Number(process.env['NETFILTER_SIM_KUBE_PROXY_CASES'] ?? 40) }, (_x, i) => i + 1);

interface SaveCase {
  readonly name: string;
  readonly family: 4 | 6;
  readonly text: string;
  readonly nfacct: readonly string[];
}

function saveCases(): SaveCase[] {
  const out: SaveCase[] = [];
  const add = (name: string, snap: Snapshot, node: string, options: KubeProxyOptions & { family: 4 | 6 }): void => {
    out.push({ name, family: options.family, text: compileKubeProxy(snap, node, options), nfacct: kubeProxyNfacctNames(snap, node, options) });
  };
  add('upstream TestOverallIPTablesRules fixture', OVERALL, TEST_NODE, { ...FAKE_IPTABLES, family: 4 });
  add('upstream fixture, IPv6 proxier', OVERALL, TEST_NODE, { ...FAKE_IPTABLES, family: 6 });
  add('two Services claiming one external IP', DUPLICATE_EXTERNAL_IP, TEST_NODE, { mode: 'iptables', family: 4 });
  for (const seed of SEEDS) {
    const g = generateCluster(seed);
    for (const family of g.families) {
      add(`seed ${seed} IPv${family}`, g.snapshot, GEN_NODE, { mode: 'iptables', family, clusterCIDR: GEN_CLUSTER_CIDR, randomFully: seed % 2 === 0, nfacct: seed % 3 !== 0 });
    }
  }
  return out;
}

/** iptables-restore then iptables-save in a fresh namespace, after creating the nfacct objects. */
function kernelRestoreSave(c: SaveCase): Promise<{ ok: boolean; out: string; err: string }> {
  const t = kernelTools();
  const [restore, save] = c.family === 6 ? [t.ip6tablesRestore, t.ip6tablesSave] : [t.iptablesRestore, t.iptablesSave];
  const script = '"$1" "$4" ${NAMES} || exit 3; "$2" || exit $?; "$3"';
  return new Promise((resolve) => {
    const child = spawn(t.unshare, ['--net', '--', 'sh', '-c', script.replace('${NAMES}', c.nfacct.map((n) => `'${n}'`).join(' ')), 'sh', t.python, restore, save, NFACCT_PY], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('close', (code) => resolve({ ok: code === 0, out: stripSaveComments(Buffer.concat(out).toString('utf8')), err: Buffer.concat(err).toString('utf8') }));
    child.stdin.end(c.text);
  });
}

describeKernel('kube-proxy iptables mode: iptables-save after loading the compiled rules', () => {
  const cases = saveCases();
  let results: { ok: boolean; out: string; err: string }[] = [];
  beforeAll(async () => {
    results = await mapLimit(cases, 4, (c) => kernelRestoreSave(c));
  }, 300_000);
  it.for(cases.map((c, i) => ({ ...c, i })))('$name', (c) => {
    const k = results[c.i]!;
    if (!k.ok) expect.fail(`the kernel refused ${c.name}:\n${k.err}`);
    expect(c.text).toBe(k.out);
  });
});

describeNftKernel('kube-proxy nftables mode: nft list ruleset after kube-proxy\'s transaction', () => {
  const cases: { name: string; tx: string; list: string }[] = [];
  const add = (name: string, snap: Snapshot, node: string, options: KubeProxyOptions): void => {
    cases.push({ name, tx: compileKubeProxy(snap, node, { ...options, format: 'restore' }), list: compileKubeProxy(snap, node, options) });
  };
  for (const version of ['1.33', '1.35'] as const) {
    add(`two Services claiming one external IP, ${version}`, DUPLICATE_EXTERNAL_IP, TEST_NODE, { mode: 'nftables', version });
    add(`upstream fixture, ${version}, dual stack`, OVERALL, TEST_NODE, { mode: 'nftables', version, family: 'dual', clusterCIDR: '10.0.0.0/8,fd00:10::/64', serviceCIDRs: '172.30.0.0/16,fd00:10:96::/112' });
    for (const seed of SEEDS) {
      const g = generateCluster(seed);
      add(`seed ${seed}, ${version}`, g.snapshot, GEN_NODE, { mode: 'nftables', version, clusterCIDR: GEN_CLUSTER_CIDR, ...(seed % 2 === 0 ? { nodePortAddresses: [] } : {}), ...(seed % 3 === 0 ? { masqueradeAll: true } : {}) });
    }
  }
  let results: KernelNftResult[] = [];
  beforeAll(async () => {
    results = await kernelNftListMany(cases.map((c) => c.tx));
  }, 300_000);
  it.for(cases.map((c, i) => ({ ...c, i })))('$name', (c) => {
    const k = results[c.i]!;
    if (!k.ok) expect.fail(`the kernel refused ${c.name}:\n${k.stderr}`);
    expect(c.list).toBe(k.list);
  });
});

// ---------------------------------------------------------------------------------------------
// Connections from the node. The harness's pod namespace plays the node (10.0.0.2 on eth0,
// default route to the world at 10.0.0.1); endpoints live in 10.200.0.0/16, beyond the world,
// whose listener reports the destination a connection left the node with.

const NODE = 'node-a';
const probeSnapshot: Snapshot = snapshot(
  [
    service('web', 'api', { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] }),
    service('web', 'empty', { clusterIP: '10.96.0.11', ports: [{ name: 'http', port: 80 }] }),
    service('web', 'np', { type: 'NodePort', clusterIP: '10.96.0.12', ports: [{ name: 'http', port: 8080, nodePort: 30080 }] }),
    service('web', 'sticky', { clusterIP: '10.96.0.13', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80 }] }),
    service('web', 'sticky2', { clusterIP: '10.96.0.15', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80 }] }),
    service('web', 'local', { clusterIP: '10.96.0.14', internalTrafficPolicy: 'Local', ports: [{ name: 'http', port: 80 }] }),
  ],
  [
    slice('web', 'api', [{ addresses: ['10.200.1.5'], nodeName: 'node-b' }], [{ name: 'http', port: 8080 }]),
    slice('web', 'np', [{ addresses: ['10.200.1.6'], nodeName: NODE }], [{ name: 'http', port: 9090 }]),
    slice('web', 'sticky', [{ addresses: ['10.200.1.7'] }], [{ name: 'http', port: 8080 }]),
    slice('web', 'sticky2', [{ addresses: ['10.200.2.7'] }, { addresses: ['10.200.2.8'] }, { addresses: ['10.200.2.9'] }], [{ name: 'http', port: 8080 }]),
    slice('web', 'local', [{ addresses: ['10.200.1.9'], nodeName: 'node-b' }], [{ name: 'http', port: 8080 }]),
  ],
  [{ kind: 'Node', metadata: { name: NODE }, spec: { podCIDRs: ['10.244.1.0/24'] }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] } }],
);

const PROBES = [
  namedLocal('10.96.0.10:80'), // DNAT to the endpoint
  namedLocal('10.96.0.11:80'), // no endpoints: REJECT
  namedLocal('10.0.0.2:30080'), // NodePort on the node's address
  namedLocal('10.96.0.12:8080'), // the NodePort Service's ClusterIP
  namedLocal('10.96.0.13:80'), // ClientIP affinity (one endpoint: the recent list / affinity set is written and read)
  namedLocal('10.96.0.13:80'),
  namedLocal('10.96.0.14:80'), // internalTrafficPolicy Local, no local endpoint: dropped
  namedLocal('10.96.0.99:80'), // no Service
];

const iptCase = (version: '1.33' | '1.35'): NamedCase => ({
  name: `iptables mode ${version}`,
  rules4: compileKubeProxy(probeSnapshot, NODE, { mode: 'iptables', version, clusterCIDR: '10.244.0.0/16', nfacct: false }),
  listen: [],
  probes: PROBES,
});
const nftCase = (version: '1.33' | '1.35'): NamedCase => ({
  name: `nftables mode ${version}`,
  rules4: '',
  nft: compileKubeProxy(probeSnapshot, NODE, { mode: 'nftables', version, clusterCIDR: '10.244.0.0/16', serviceCIDRs: '10.96.0.0/16' }),
  listen: [],
  probes: PROBES,
});

describeKernel('kube-proxy iptables mode: connections from the node', () => {
  namedDifferential([iptCase('1.33'), iptCase('1.35')]);
});

describeNftKernel('kube-proxy nftables mode: connections from the node', () => {
  namedDifferential([nftCase('1.33'), nftCase('1.35')]);
});

// With three endpoints the first pick is random, in the kernel and in the simulator alike; what
// ClientIP affinity promises is that every later connection from the node goes to that same one.
describeNftKernel('kube-proxy: ClientIP affinity keeps the first endpoint, in the kernel and in Netns', () => {
  const modes = [
    { name: 'iptables', rules4: iptCase('1.35').rules4, nft: '' },
    { name: 'nftables', rules4: '', nft: nftCase('1.35').nft! },
  ];
  it.for(modes)('$name', async (m) => {
    const probes = Array.from({ length: 6 }, () => ({ from: 'local' as const, uid: 1000, gid: 1000, dst: '10.96.0.15:80' }));
    const kernel = await kernelConnect({ rules4: m.rules4, rules6: '', ...(m.nft ? { nft: m.nft } : {}), listeners: [], probes }, { connectTimeoutMs: 1000 });
    const ns = new Netns({ rules: m.rules4 === '' ? '' : m.rules4, ...(m.nft ? { nft: m.nft } : {}), listen: [] } as never);
    const ours = probes.map((p) => ns.connect(p));
    for (const side of [kernel.map((r) => `${r.outcome} ${r.address}:${r.port}`), ours.map((r) => `${r.outcome} ${r.address}:${r.port}`)]) {
      expect(side[0]).toMatch(/^remote 10\.200\.2\.[789]:8080$/);
      expect(new Set(side).size, side.join(', ')).toBe(1);
    }
  });
});
