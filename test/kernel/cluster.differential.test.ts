// The cluster path against the kernel: generated clusters (cluster-generate.ts) built in real
// network namespaces — nodes with a cni0 bridge and bridge netfilter, or ptp veths; routes between
// nodes; the outside router and the world; kube-proxy-shaped, portmap-shaped and bridge-ipMasq-shaped
// rules loaded with iptables-restore --noflush and nft -f — and the same connections made with real
// sockets. Each probe's outcome, the namespace whose listener accepted, the address and port it
// accepted on, SO_ORIGINAL_DST there, the source it saw and whether the source port survived must
// be what `Cluster.connect` says. Endpoint choice among several endpoints is `statistic --mode
// nth` / `numgen inc` here (not kube-proxy's random), and the kernel's ICMP rate limits are off
// (not modelled): see cluster-generate.ts and cluster-harness.ts.
import { beforeAll, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/cluster.js';
import { describeKernel, mapLimit } from './harness.js';
import { fromKernel, fromSim, kernelCluster, type KernelClusterReport } from './cluster-harness.js';
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

  it('covers both kube-proxy modes, both CNIs, hairpin, masquerade, NodePort, hostPort and all three families', () => {
    const d = CASES.map((c) => c.description);
    for (const want of ['kube-proxy iptables', 'kube-proxy nftables', '--cni bridge', '--cni ptp', '--hairpin', '--masquerade-all', 'ipMasq', 'IPv4,', 'IPv6,', 'IPv4+IPv6']) {
      expect(d.some((x) => x.includes(want)), want).toBe(true);
    }
    const snaps = CASES.map((c) => c.snapshot).join('\n');
    expect(snaps).toContain('NodePort');
    expect(snaps).toContain('hostPort');
  });

  it.for(CASES.map((c, i) => ({ c, i, name: `seed ${c.seed}: ${c.description}` })))('$name', ({ c, i }) => {
    const k = reports[i]!;
    if (!k.ok) expect.fail(`the kernel could not build seed ${c.seed} at ${k.stage}: ${k.stderr}`);
    const sim = simulator(c);
    const mismatches: string[] = [];
    c.probes.forEach((p, j) => {
      const s = fromSim(sim.connect({ from: p.from, to: p.dst }, { trace: true }));
      const kk = fromKernel(k.results[j]!);
      if (JSON.stringify(s) !== JSON.stringify(kk)) mismatches.push(`probe ${j} ${p.from} → ${p.dst}\n  kernel ${JSON.stringify(kk)}\n  sim    ${JSON.stringify(s)}`);
    });
    expect(mismatches, `seed ${c.seed} (replay: generateClusterCase(${c.seed}))`).toEqual([]);
  });
});
