// The cluster path against the kernel: generated clusters (cluster-generate.ts) built in real
// network namespaces — nodes with a cni0 bridge and bridge netfilter, or ptp veths; routes between
// nodes; the outside router and the world; kube-proxy-shaped, portmap-shaped and bridge-ipMasq-shaped
// rules loaded with iptables-restore --noflush and nft -f — and the same connections made with real
// sockets. Each probe's outcome, the namespace whose listener accepted, the address and port it
// accepted on, SO_ORIGINAL_DST there, the source it saw and whether the source port survived must
// be what `Cluster.connect` says. Endpoint choice among several endpoints is `statistic --mode
// nth` / `numgen inc` here (not kube-proxy's random), and the kernel's ICMP rate limits are off
// (not modelled): see cluster-generate.ts and cluster-harness.ts.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/cluster.js';
import { describeKernel, mapLimit } from './harness.js';
import { fromKernel, fromSim, kernelCluster, settleTimeouts, type KernelClusterReport } from './cluster-harness.js';
import { generateClusterCase, type ClusterCase } from './cluster-generate.js';

const COUNT = Number(process.env['NETFILTER_SIM_CLUSTER_CASES'] ?? 240);
const CASES: readonly ClusterCase[] = Array.from({ length: COUNT }, (_, i) => generateClusterCase(i + 1));

function simulator(c: ClusterCase): Cluster {
  return new Cluster({ snapshot: [{ name: `seed-${c.seed}`, text: c.snapshot }], kubeProxy: 'none', netpol: 'none', cni: c.cni, hairpin: c.hairpin, nodeRules: c.nodeRules });
}

describeKernel(`cluster connect vs the kernel: ${COUNT} generated clusters`, () => {
  let reports: KernelClusterReport[] = [];
  beforeAll(async () => {
    reports = await mapLimit(CASES, 3, (c) => kernelCluster(simulator(c), c.nodeRules, c.probes));
  }, 1_800_000);

  it('the 240 seeds cover both kube-proxy modes, both CNIs, hairpin, masquerade, NodePort, hostPort and all three families', () => {
    const all = COUNT >= 240 ? CASES : Array.from({ length: 240 }, (_, i) => generateClusterCase(i + 1));
    const d = all.map((c) => c.description);
    for (const want of ['kube-proxy iptables', 'kube-proxy nftables', '--cni bridge', '--cni ptp', '--hairpin', '--masquerade-all', 'ipMasq', 'IPv4,', 'IPv6,', 'IPv4+IPv6']) {
      expect(d.some((x) => x.includes(want)), want).toBe(true);
    }
    const snaps = all.map((c) => c.snapshot).join('\n');
    expect(snaps).toContain('NodePort');
    expect(snaps).toContain('hostPort');
    expect(all.some((c) => c.probes.some((p) => p.proto === 'udp'))).toBe(true);
  });

  it.for(CASES.map((c, i) => ({ c, i, name: `seed ${c.seed}: ${c.description}` })))('$name', async ({ c, i }) => {
    const k = reports[i]!;
    if (!k.ok) expect.fail(`the kernel could not build seed ${c.seed} at ${k.stage}: ${k.stderr}`);
    const sim = simulator(c);
    const ours = c.probes.map((p) => fromSim(sim.connect({ from: p.from, to: p.dst, proto: p.proto ?? 'tcp' }, { trace: true })));
    const results = await settleTimeouts(k.results, ours, (connectTimeoutMs) => kernelCluster(simulator(c), c.nodeRules, c.probes, { connectTimeoutMs }));
    const mismatches: string[] = [];
    c.probes.forEach((p, j) => {
      const s = ours[j]!;
      const kk = fromKernel(results[j]!);
      if (JSON.stringify(s) !== JSON.stringify(kk)) mismatches.push(`probe ${j} ${p.from} → ${p.dst}\n  kernel ${JSON.stringify(kk)}\n  sim    ${JSON.stringify(s)}`);
    });
    expect(mismatches, `seed ${c.seed} (replay: generateClusterCase(${c.seed}))`).toEqual([]);
  });
});

// The guide's cluster (docs/tracing-a-cluster.md): its incidents against the kernel. The web
// Service's endpoint is drawn at random on both sides, so only connections that do not go through
// it are compared.
const GUIDE = (() => {
  const dir = resolve(import.meta.dirname, '../../examples/cluster');
  const nodeRules = { 'worker-1': [readFileSync(join(dir, 'worker-1.rules'), 'utf8')], 'worker-2': [readFileSync(join(dir, 'worker-2.rules'), 'utf8')] };
  return { snapshot: readFileSync(join(dir, 'shop.yaml'), 'utf8'), nodeRules };
})();
const GUIDE_PROBES = [
  { from: 'shop/client', dst: '10.96.5.9:6379' },
  { from: 'shop/client', dst: '10.244.2.9:6379' },
  { from: 'shop/client', dst: '192.168.0.10:8080' },
  { from: 'shop/web-1', dst: '192.168.0.10:8080' },
  { from: 'shop/web-2', dst: '192.168.0.10:8080' },
  { from: 'shop/client', dst: '203.0.113.7:443' },
  { from: 'shop/web-2', dst: '10.244.1.6:80' },
  { from: 'db/redis-0', dst: '10.244.2.200:80' },
];

describeKernel('cluster connect vs the kernel: the guide\'s cluster (examples/cluster)', () => {
  for (const hairpin of [false, true]) {
    it(`${hairpin ? 'with' : 'without'} hairpin mode: ${GUIDE_PROBES.length} connections`, async () => {
      const make = (): Cluster => new Cluster({ snapshot: GUIDE.snapshot, kubeProxy: 'none', netpol: 'none', hairpin, nodeRules: GUIDE.nodeRules });
      const k = await kernelCluster(make(), GUIDE.nodeRules, GUIDE_PROBES);
      if (!k.ok) expect.fail(`the kernel could not build the guide's cluster at ${k.stage}: ${k.stderr}`);
      const sim = make();
      const got = GUIDE_PROBES.map((p) => fromSim(sim.connect({ from: p.from, to: p.dst }, { trace: true })));
      expect(got).toEqual(k.results.map(fromKernel));
      // What the guide says: the masquerade, and the hairpin.
      expect(got[0]).toMatchObject({ outcome: 'local', namespace: 'pod/db/redis-0', peerAddress: '192.168.0.10' });
      expect(got[3]!.outcome).toBe(hairpin ? 'local' : 'dropped');
    }, 60_000);
  }
});
