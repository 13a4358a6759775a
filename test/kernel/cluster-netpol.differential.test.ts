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
import { compileKubeNetworkPolicies, compileKubeRouter, compileKubeRouterNft } from '../../src/compile/netpol/index.js';
import { formatNftRuleset } from '../../src/nftables/index.js';
import type { QueueVerdict } from '../../src/compile/netpol/index.js';
import type { Snapshot } from '../../src/model/kubernetes.js';
import { NetworkPolicyEvaluator } from '../../src/netpol/index.js';
import { describeKernel, describeNftKernel, kernelNftListMany, mapLimit } from './harness.js';
import { fromKernel, fromSim, kernelCluster, settleTimeouts } from './cluster-harness.js';
import type { ClusterProbe, KernelClusterReport } from './cluster-harness.js';

/** Clusters; each has up to 8 probes (NETFILTER_SIM_CLUSTER_NETPOL_CASES for fewer or more). */
const COUNT = Number(process.env['NETFILTER_SIM_CLUSTER_NETPOL_CASES'] ?? 200);
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

/**
 * The kernel's report of a case against `Cluster.connect`, probe by probe (outcome, where it was
 * accepted, the address and the source seen), the kernel asked again once if only its timeouts
 * disagree (see settleTimeouts).
 */
async function expectSameAsKernel(k: KernelClusterReport, i: number, sim: Cluster, probes: readonly ClusterProbe[], again: (connectTimeoutMs: number) => Promise<KernelClusterReport>, label: string): Promise<void> {
  if (!k.ok) expect.fail(`the kernel could not build case ${i} at ${k.stage}: ${k.stderr}`);
  const ours = probes.map((p) => fromSim(sim.connect({ from: p.from, to: p.dst, proto: p.proto ?? 'tcp' }, { trace: true })));
  const results = await settleTimeouts(k.results, ours, again);
  const mismatches: string[] = [];
  probes.forEach((p, j) => {
    const s = ours[j]!;
    const kk = fromKernel(results[j]!);
    if (JSON.stringify(s) !== JSON.stringify(kk)) mismatches.push(`probe ${j} ${p.from} → ${p.dst}/${p.proto}\n  kernel ${JSON.stringify(kk)}\n  sim    ${JSON.stringify(s)}`);
  });
  expect(mismatches, label).toEqual([]);
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
    if (COUNT >= 200) expect(probes).toBeGreaterThanOrEqual(1000);
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

  it.for(CASES.map((c, i) => ({ c, i, name: `case ${i}: ${c.snapshot.pods.length} pods, ${c.snapshot.networkPolicies.length} policies` })))('$name', async ({ c, i }) => {
    await expectSameAsKernel(reports[i]!, i, simulator(c), c.probes, (connectTimeoutMs) => {
      const { rules, ipsets } = nodeState(c);
      return kernelCluster(simulator(c), rules, c.probes, { ipsets, connectTimeoutMs });
    }, `case ${i} (fc.sample(networkPolicySnapshot({ nodes: 3, minPods: 3 }), { seed: ${SEED}, numRuns: ${COUNT} })[${i}])`);
  });
});

// kube-network-policies on the cluster path against the kernel. This kernel has no nft `queue`
// expression: each node loads the table with its queue statements replaced by the verdicts the
// reference evaluator gives the case's connections (a jump to a chain that accepts, setting
// conntrack label 100, or drops), while `Cluster` runs the table as written, its queue answered by
// the reference evaluator as the controller. Fewer clusters (NETFILTER_SIM_CLUSTER_KNP_CASES).
const KNP_COUNT = Number(process.env['NETFILTER_SIM_CLUSTER_KNP_CASES'] ?? 60);
const KNP_CASES = CASES.slice(0, KNP_COUNT);
const knpSimulator = (c: Case): Cluster => new Cluster({ snapshot: c.snapshot, kubeProxy: 'none', netpol: 'kube-network-policies' });

/** The reference's verdict for each connection of the case, as the queue's answers. */
function knpVerdicts(c: Case): QueueVerdict[] {
  const ev = new NetworkPolicyEvaluator(c.snapshot);
  const byIp = new Map(c.snapshot.pods.map((p) => [p.status!.podIP!, `${p.metadata.namespace}/${p.metadata.name}`]));
  return c.probes.map((p) => {
    const [dst, port] = [p.dst.slice(0, p.dst.lastIndexOf(':')), Number(p.dst.slice(p.dst.lastIndexOf(':') + 1))];
    const protocol = p.proto === 'udp' ? 'UDP' as const : 'TCP' as const;
    const src = c.snapshot.pods.find((x) => `${x.metadata.namespace}/${x.metadata.name}` === p.from)!.status!.podIP!;
    return { src, dst, protocol, port, accept: ev.evaluate({ from: p.from, to: byIp.get(dst)!, port, protocol }).allowed };
  });
}

/** The case in the kernel, the queue rules replaced by the reference's verdicts. */
function knpKernel(c: Case, connectTimeoutMs?: number): Promise<KernelClusterReport> {
  const sim = knpSimulator(c);
  const verdicts = knpVerdicts(c);
  const rules: Record<string, string[]> = {};
  for (const n of sim.topology.nodes) rules[n.name] = [sim.nodeRules(n.name).save, compileKubeNetworkPolicies(c.snapshot, n.name, { verdicts }).nft].filter((t) => t !== '');
  return kernelCluster(sim, rules, c.probes, connectTimeoutMs !== undefined ? { connectTimeoutMs } : {});
}

describeNftKernel(`cluster connect --netpol kube-network-policies vs the kernel (queue rules replaced by the reference evaluator's verdicts): ${KNP_COUNT} generated clusters`, () => {
  let reports: KernelClusterReport[] = [];
  beforeAll(async () => {
    reports = await mapLimit(KNP_CASES, 2, (c) => knpKernel(c));
  }, 1_800_000);

  it('the cases hold blocked and allowed connections', () => {
    const verdicts = KNP_CASES.flatMap(knpVerdicts);
    console.log(`cluster kube-network-policies kernel differential: ${KNP_COUNT} clusters, ${verdicts.length} probes, ${verdicts.filter((v) => !v.accept).length} blocked by the reference`);
    expect(verdicts.filter((v) => !v.accept).length).toBeGreaterThan(verdicts.length / 10);
    expect(verdicts.filter((v) => v.accept).length).toBeGreaterThan(verdicts.length / 10);
  });

  it.for(KNP_CASES.map((c, i) => ({ c, i, name: `case ${i}: ${c.snapshot.pods.length} pods, ${c.snapshot.networkPolicies.length} policies` })))('$name', async ({ c, i }) => {
    await expectSameAsKernel(reports[i]!, i, knpSimulator(c), c.probes, (connectTimeoutMs) => knpKernel(c, connectTimeoutMs), `case ${i}`);
  });
});

// kube-router's nftables mode on the cluster path against the kernel: the same generated clusters,
// each node holding what `Cluster` holds for it with `--netpol kube-router-nftables` (the CNI's
// node rules, and kube-router's tables `kube-router-filter-ipv4`/`-ipv6` loaded with `nft -f`);
// every probe's outcome, where it was accepted and the source seen there must be what
// `Cluster.connect` says. And each node's tables, loaded alone into an empty namespace, list back
// (`nft list ruleset`) exactly as compiled, which is what our formatter prints for them.
const KRN_COUNT = Number(process.env['NETFILTER_SIM_CLUSTER_KRN_CASES'] ?? 200);
const KRN_CASES = CASES.slice(0, KRN_COUNT);
const krnSimulator = (c: Case): Cluster => new Cluster({ snapshot: c.snapshot, kubeProxy: 'none', netpol: 'kube-router-nftables' });

function krnKernel(c: Case, connectTimeoutMs?: number): Promise<KernelClusterReport> {
  const sim = krnSimulator(c);
  const rules: Record<string, string[]> = {};
  for (const n of sim.topology.nodes) {
    const r = sim.nodeRules(n.name);
    rules[n.name] = [r.save, ...r.nft].filter((t) => t !== '');
  }
  return kernelCluster(sim, rules, c.probes, connectTimeoutMs !== undefined ? { connectTimeoutMs } : {});
}

/** Each text loaded alone with `nft -f` and listed back: what differs from the text, or from our formatter's listing of it. */
async function listBackMismatches(texts: readonly string[]): Promise<string[]> {
  const listed = await kernelNftListMany(texts);
  return texts.flatMap((t, i) => {
    const k = listed[i]!;
    if (!k.ok) return [`text ${i}: nft refused it: ${k.stderr}`];
    if (k.list !== t) return [`text ${i}: listed back differently`];
    return formatNftRuleset(t) !== k.list ? [`text ${i}: our formatter differs from nft list ruleset`] : [];
  });
}

describeNftKernel(`cluster connect --netpol kube-router-nftables vs the kernel: ${KRN_COUNT} generated clusters`, () => {
  let reports: KernelClusterReport[] = [];
  beforeAll(async () => {
    reports = await mapLimit(KRN_CASES, 2, (c) => krnKernel(c));
  }, 1_800_000);

  it('each node\'s tables load with nft -f and nft list ruleset prints them back byte for byte, as our formatter does', async () => {
    const texts = KRN_CASES.flatMap((c) => krnSimulator(c).topology.nodes.map((n) => compileKubeRouterNft(c.snapshot, n.name).nft));
    const mismatches = await listBackMismatches(texts);
    console.log(`kube-router nftables tables listed back: ${texts.length} node tables`);
    expect(mismatches).toEqual([]);
  }, 600_000);

  it('with IPv6 addresses on the pods, the ip6 table loads and lists back byte for byte too, as our formatter prints it', async () => {
    // The generated snapshots made dual-stack: each pod gets fd00:10:244:<node>::<host> beside its
    // IPv4 address, and each policy an ingress rule from an IPv6 ipBlock with an except.
    const dual = KRN_CASES.slice(0, 20).map((c) => ({
      ...c.snapshot,
      pods: c.snapshot.pods.map((p) => {
        const v4 = p.status!.podIP!;
        const [, , n, h] = v4.split('.');
        return { ...p, status: { ...p.status!, podIPs: [{ ip: v4 }, { ip: `fd00:10:244:${n}::${h}` }] } };
      }),
      networkPolicies: c.snapshot.networkPolicies.map((np) => ({ ...np, spec: { ...np.spec, ingress: [...(np.spec.ingress ?? []), { from: [{ ipBlock: { cidr: 'fd00:10:244::/48', except: ['fd00:10:244:1::/64'] } }] }] } })),
    }));
    const texts = dual.flatMap((s) => [...new Set(s.pods.map((p) => p.spec.nodeName!))].map((node) => compileKubeRouterNft(s, node, { families: [4, 6] }).nft));
    expect(texts.every((t) => t.includes('table ip6 kube-router-filter-ipv6'))).toBe(true);
    const mismatches = await listBackMismatches(texts);
    console.log(`kube-router nftables dual-stack tables listed back: ${texts.length} node tables`);
    expect(mismatches).toEqual([]);
  }, 600_000);

  it('the cases hold blocked and allowed connections, rejected by kube-router\'s tables', () => {
    let probes = 0;
    let rejected = 0;
    for (const c of KRN_CASES) {
      const sim = krnSimulator(c);
      for (const p of c.probes) {
        probes++;
        if (sim.connect({ from: p.from, to: p.dst, proto: p.proto ?? 'tcp' }, { trace: false }).policy !== null) rejected++;
      }
    }
    console.log(`cluster kube-router nftables kernel differential: ${KRN_COUNT} clusters, ${probes} probes, ${rejected} rejected by its tables`);
    if (KRN_COUNT >= 200) expect(probes).toBeGreaterThanOrEqual(1000);
    expect(rejected).toBeGreaterThan(probes / 10);
    expect(rejected).toBeLessThan(probes);
  });

  it.for(KRN_CASES.map((c, i) => ({ c, i, name: `case ${i}: ${c.snapshot.pods.length} pods, ${c.snapshot.networkPolicies.length} policies` })))('$name', async ({ c, i }) => {
    await expectSameAsKernel(reports[i]!, i, krnSimulator(c), c.probes, (connectTimeoutMs) => krnKernel(c, connectTimeoutMs), `case ${i}`);
  });
});
