// kube-router on the cluster path against the kernel: generated NetworkPolicy snapshots (the
// generators of the netpol suites, pods over one to three nodes) as clusters, each node holding the
// rules `Cluster` holds for it with `--netpol kube-router` (kube-router's compiled filter table and
// the CNI's node rules, as `cluster rules` prints them; kube-proxy off: its rules need nfacct
// objects this harness does not make, and its own kernel suites cover them) and
// kube-router's ipsets, built in real network namespaces by the cluster harness; every probe's
// outcome (delivered, refused by kube-router's REJECT or by no listener, dropped), where it was
// accepted and the source seen there must be what `Cluster.connect` says.
import * as fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { networkPolicySnapshot } from '../../src/arbitraries/index.js';
import { PROBE_PORTS } from '../../src/arbitraries/netpol.js';
import { Cluster } from '../../src/cluster/cluster.js';
import { compileKubeRouter } from '../../src/compile/netpol/index.js';
import type { Snapshot } from '../../src/model/kubernetes.js';
import { describeKernel, mapLimit } from './harness.js';
import { fromKernel, fromSim, kernelCluster } from './cluster-harness.js';
import type { ClusterProbe, KernelClusterReport } from './cluster-harness.js';

/** Clusters; each has up to 8 probes (NETFILTER_SIM_CLUSTER_NETPOL_CASES for fewer or more). */
const COUNT = Number(process.env['NETFILTER_SIM_CLUSTER_NETPOL_CASES'] ?? 48);
const SEED = 29051;

interface Case {
  readonly snapshot: Snapshot;
  readonly probes: readonly ClusterProbe[];
}

/** Up to 8 connections between distinct pods, spread over the pairs, the probe ports and both protocols. */
function probesOf(snapshot: Snapshot, salt: number): ClusterProbe[] {
  const pods = snapshot.pods;
  const pairs: [number, number][] = [];
  for (let a = 0; a < pods.length; a++) for (let b = 0; b < pods.length; b++) if (a !== b) pairs.push([a, b]);
  const out: ClusterProbe[] = [];
  for (let k = 0; k < Math.min(8, pairs.length); k++) {
    const [a, b] = pairs[(k * 7 + salt) % pairs.length]!;
    const n = k + salt;
    out.push({ from: `${pods[a]!.metadata.namespace}/${pods[a]!.metadata.name}`, dst: `${pods[b]!.status!.podIP}:${PROBE_PORTS[n % PROBE_PORTS.length]}`, proto: n % 4 === 3 ? 'udp' : 'tcp' });
  }
  return out;
}

const CASES: readonly Case[] = fc.sample(networkPolicySnapshot({ nodes: 3, minPods: 3 }), { seed: SEED, numRuns: COUNT }).map((snapshot, i) => ({ snapshot, probes: probesOf(snapshot, i) }));

const simulator = (c: Case): Cluster => new Cluster({ snapshot: c.snapshot, kubeProxy: 'none', netpol: 'kube-router' });

/** What each node of the simulated cluster holds: its rules as `cluster rules` prints them, and kube-router's ipsets. */
function nodeState(c: Case): { rules: Record<string, string[]>; ipsets: Record<string, string> } {
  const sim = simulator(c);
  const rules: Record<string, string[]> = {};
  const ipsets: Record<string, string> = {};
  for (const n of sim.topology.nodes) {
    const r = sim.nodeRules(n.name);
    rules[n.name] = [r.save, ...r.nft];
    ipsets[n.name] = compileKubeRouter(c.snapshot, n.name).ipsets;
  }
  return { rules, ipsets };
}

describeKernel(`cluster connect --netpol kube-router vs the kernel: ${COUNT} generated clusters`, () => {
  let reports: KernelClusterReport[] = [];
  beforeAll(async () => {
    reports = await mapLimit(CASES, 2, (c) => {
      const { rules, ipsets } = nodeState(c);
      return kernelCluster(simulator(c), rules, c.probes, { ipsets });
    });
  }, 1_800_000);

  it('the cases hold enough probes, blocked and allowed, and REJECTs', () => {
    const probes = CASES.reduce((n, c) => n + c.probes.length, 0);
    console.log(`cluster netpol kernel differential: ${COUNT} clusters, ${probes} probes`);
    if (COUNT >= 48) expect(probes).toBeGreaterThanOrEqual(200);
    const outcomes = reports.flatMap((r) => (r.ok ? r.results.map((x) => x.outcome) : []));
    expect(outcomes).toContain('local');
    expect(outcomes).toContain('refused');
    // kube-router's REJECT decides some of them (a policy named), its ACCEPT others.
    let rejected = 0;
    for (const c of CASES) {
      const sim = simulator(c);
      for (const p of c.probes) if (sim.connect({ from: p.from, to: p.dst, proto: p.proto ?? 'tcp' }, { trace: false }).policy !== null) rejected++;
    }
    console.log(`  of which kube-router's rules rejected ${rejected}`);
    expect(rejected).toBeGreaterThan(probes / 10);
  });

  it.for(CASES.map((c, i) => ({ c, i, name: `case ${i}: ${c.snapshot.pods.length} pods, ${c.snapshot.networkPolicies.length} policies` })))('$name', ({ c, i }) => {
    const k = reports[i]!;
    if (!k.ok) expect.fail(`the kernel could not build case ${i} at ${k.stage}: ${k.stderr}`);
    const sim = simulator(c);
    const mismatches: string[] = [];
    c.probes.forEach((p, j) => {
      const s = fromSim(sim.connect({ from: p.from, to: p.dst, proto: p.proto ?? 'tcp' }, { trace: true }));
      const kk = fromKernel(k.results[j]!);
      if (JSON.stringify(s) !== JSON.stringify(kk)) mismatches.push(`probe ${j} ${p.from} → ${p.dst}/${p.proto}\n  kernel ${JSON.stringify(kk)}\n  sim    ${JSON.stringify(s)}`);
    });
    expect(mismatches, `case ${i} (fc.sample(networkPolicySnapshot({ nodes: 3, minPods: 3 }), { seed: ${SEED}, numRuns: ${COUNT} })[${i}])`).toEqual([]);
  });
});
