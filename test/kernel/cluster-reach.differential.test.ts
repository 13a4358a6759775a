// `cluster reach` against the kernel, with every component compiled from the snapshot: generated
// NetworkPolicy snapshots (the netpol suites' generator, pods over two nodes), each pod given a
// Service of its own (one endpoint, so the kernel's random endpoint choice has one answer; the
// Service's targetPort by name where the pod names that port), the nodes holding what `Cluster`
// compiles for them — kube-proxy (iptables mode with its nfacct objects, or nftables mode, case by
// case), kube-router (its iptables rules and ipsets, or its nftables mode's tables), the CNI's
// rules — built in real namespaces by the
// cluster harness. Every cell of the matrix, to the pod's address and through its Service, on two
// ports, is one real connection: the cell is allowed exactly when the kernel delivered it to that
// pod, and a blocked cell ends as its `why` says (refused, dropped, or accepted elsewhere). Each
// connection also ends as `Cluster.connect` says, field by field.
import * as fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { networkPolicySnapshot } from '../../src/arbitraries/index.js';
import { Cluster } from '../../src/cluster/cluster.js';
import type { ReachResult } from '../../src/cluster/reach.js';
import { kubeProxyNfacctNames } from '../../src/compile/kube-proxy/index.js';
import type { K8sEndpointSlice, K8sPod, K8sService, Snapshot } from '../../src/model/kubernetes.js';
import { describeKernel, mapLimit } from './harness.js';
import { fromKernel, fromSim, kernelCluster, settleTimeouts } from './cluster-harness.js';
import type { ClusterProbe, KernelClusterReport } from './cluster-harness.js';

/** Clusters (NETFILTER_SIM_CLUSTER_REACH_CASES for fewer or more); each has up to 100 connections. */
const COUNT = Number(process.env['NETFILTER_SIM_CLUSTER_REACH_CASES'] ?? 24);
const SEED = 29113;
const TCP_PORTS = [80, 81, 8080, 9999] as const;

interface Case {
  readonly index: number;
  readonly snapshot: Snapshot;
  readonly kubeProxy: 'iptables' | 'nftables';
  readonly netpol: 'kube-router' | 'kube-router-nftables';
  readonly proto: 'tcp' | 'udp';
  readonly ports: readonly number[];
}

/** The Service of pod i: selects it alone (a label no policy names), one port per probed port. */
function serviceOf(p: K8sPod, i: number, ports: readonly number[], proto: 'TCP' | 'UDP'): { svc: K8sService; slice: K8sEndpointSlice } {
  const ns = p.metadata.namespace!;
  const name = `reach-${p.metadata.name}`;
  const vip = `10.96.0.${10 + i}`;
  const declared = p.spec.containers.flatMap((c) => c.ports ?? []);
  const svcPorts = ports.map((port) => {
    const named = declared.find((d) => d.containerPort === port && (d.protocol ?? 'TCP') === proto && d.name !== undefined);
    return { name: `p${port}`, port: 1000 + port, targetPort: named?.name ?? port, protocol: proto };
  });
  return {
    svc: { kind: 'Service', metadata: { name, namespace: ns }, spec: { selector: { 'reach-svc': p.metadata.name }, clusterIP: vip, clusterIPs: [vip], ports: svcPorts } },
    slice: {
      kind: 'EndpointSlice', metadata: { name: `${name}-1`, namespace: ns, labels: { 'kubernetes.io/service-name': name } }, addressType: 'IPv4',
      ports: ports.map((port) => ({ name: `p${port}`, port, protocol: proto })),
      endpoints: [{ addresses: [p.status!.podIP!], conditions: { ready: true }, nodeName: p.spec.nodeName! }],
    },
  };
}

function withServices(s: Snapshot, ports: readonly number[], proto: 'TCP' | 'UDP'): Snapshot {
  const pods = s.pods.map((p) => ({ ...p, metadata: { ...p.metadata, labels: { ...(p.metadata.labels ?? {}), 'reach-svc': p.metadata.name } } }));
  const made = pods.map((p, i) => serviceOf(p, i, ports, proto));
  return { ...s, pods, services: made.map((m) => m.svc), endpointSlices: made.map((m) => m.slice) };
}

const CASES: readonly Case[] = fc.sample(networkPolicySnapshot({ nodes: 2, minPods: 3, maxPods: 5 }), { seed: SEED, numRuns: COUNT }).map((s, index) => {
  const proto = index % 4 === 3 ? 'udp' : 'tcp';
  const ports = proto === 'udp' ? [53] : [TCP_PORTS[index % 4]!, TCP_PORTS[(index + 2) % 4]!];
  return { index, snapshot: withServices(s, ports, proto === 'udp' ? 'UDP' : 'TCP'), kubeProxy: index % 2 === 0 ? 'iptables' : 'nftables', netpol: index % 3 === 2 ? 'kube-router-nftables' : 'kube-router', proto, ports };
});

const simulator = (c: Case): Cluster => new Cluster({ snapshot: c.snapshot, kubeProxy: c.kubeProxy, netpol: c.netpol });

/** The matrices of a case: per port, to the pods' addresses and through their Services. */
function matrices(c: Case): { port: number; to: 'pod' | 'service'; result: ReachResult }[] {
  const sim = simulator(c);
  return c.ports.flatMap((port) => (['pod', 'service'] as const).map((to) => ({ port, to, result: sim.reach({ port, proto: c.proto, to }) as ReachResult })));
}

/** One connection per cell of every matrix, in order. */
function probesOf(c: Case, ms: ReturnType<typeof matrices>): (ClusterProbe & { readonly to: string })[] {
  const byKey = new Map(c.snapshot.pods.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
  const svcIp = new Map(c.snapshot.services.map((s) => [`${s.metadata.namespace}/${s.spec.selector!['reach-svc']}`, s.spec.clusterIP!]));
  return ms.flatMap((m) => m.result.pods.flatMap((from) => m.result.pods.map((to) => ({
    from,
    to,
    proto: c.proto,
    dst: m.to === 'pod' ? `${byKey.get(to)!.status!.podIP}:${m.port}` : `${svcIp.get(to)}:${1000 + m.port}`,
  }))));
}

/** What each node holds in `Cluster`, and the nfacct objects kube-proxy's iptables rules name. */
function nodeState(c: Case): { rules: Record<string, string[]>; ipsets: Record<string, string>; nfacct: Record<string, string[]> } {
  const sim = simulator(c);
  const rules: Record<string, string[]> = {};
  const ipsets: Record<string, string> = {};
  const nfacct: Record<string, string[]> = {};
  for (const n of sim.topology.nodes) {
    const r = sim.nodeRules(n.name);
    rules[n.name] = [r.save, ...r.nft].filter((t) => t.trim() !== '');
    ipsets[n.name] = r.ipsets;
    nfacct[n.name] = kubeProxyNfacctNames(c.snapshot, n.name, { mode: c.kubeProxy });
  }
  return { rules, ipsets, nfacct };
}

function build(c: Case, probes: readonly ClusterProbe[], connectTimeoutMs?: number): Promise<KernelClusterReport> {
  const { rules, ipsets, nfacct } = nodeState(c);
  return kernelCluster(simulator(c), rules, probes, { ipsets, nfacct, ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }) });
}

describeKernel(`cluster reach (kube-proxy and kube-router, both modes, compiled) vs the kernel: ${COUNT} generated clusters, every cell a connection`, () => {
  const plans = CASES.map((c) => {
    const ms = matrices(c);
    return { c, ms, probes: probesOf(c, ms) };
  });
  let reports: KernelClusterReport[] = [];
  beforeAll(async () => {
    reports = await mapLimit(plans, 2, (p) => build(p.c, p.probes));
  }, 1_800_000);

  it('the cases cover both kube-proxy modes, both targets, both protocols, and allowed and blocked cells', () => {
    const cells = plans.reduce((n, p) => n + p.probes.length, 0);
    const allowed = plans.reduce((n, p) => n + p.ms.reduce((k, m) => k + m.result.allowed.flat().filter((x) => x).length, 0), 0);
    console.log(`cluster reach kernel differential: ${COUNT} clusters, ${cells} cells (${allowed} allowed)`);
    expect(new Set(CASES.map((c) => c.kubeProxy)).size).toBe(COUNT >= 2 ? 2 : 1);
    if (COUNT >= 3) expect(new Set(CASES.map((c) => c.netpol)).size).toBe(2);
    if (COUNT >= 4) expect(new Set(CASES.map((c) => c.proto))).toEqual(new Set(['tcp', 'udp']));
    if (COUNT >= 20) {
      expect(allowed).toBeGreaterThan(cells / 10);
      expect(cells - allowed).toBeGreaterThan(cells / 10);
      // Some blocked cells are a policy's (kube-router's REJECT), some are a Service's or a listener's.
      const why = plans.flatMap((p) => p.ms.flatMap((m) => Object.values(m.result.why)));
      expect(why.some((w) => w.policy !== null)).toBe(true);
      expect(why.some((w) => w.policy === null)).toBe(true);
    }
  });

  it.for(plans.map((p) => ({ p, name: `case ${p.c.index}: kube-proxy ${p.c.kubeProxy}, ${p.c.netpol}, ${p.c.proto} ${p.c.ports.join(',')}, ${p.c.snapshot.pods.length} pods, ${p.c.snapshot.networkPolicies.length} policies` })))('$name', async ({ p }) => {
    const k = reports[p.c.index]!;
    if (!k.ok) expect.fail(`the kernel could not build case ${p.c.index} at ${k.stage}: ${k.stderr}`);
    const sim = simulator(p.c);
    const ours = p.probes.map((q) => fromSim(sim.connect({ from: q.from, to: q.dst, proto: q.proto ?? 'tcp' }, { trace: true })));
    const results = await settleTimeouts(k.results, ours, (ms) => build(p.c, p.probes, ms));
    const wrong: string[] = [];
    let at = 0;
    for (const m of p.ms) {
      const n = m.result.pods.length;
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++, at++) {
          const q = p.probes[at]!;
          const kk = fromKernel(results[at]!);
          const delivered = kk.outcome === 'local' && kk.namespace === `pod/${q.to}`;
          const cell = `${m.to} ${m.port}: ${q.from} → ${q.to} (${q.dst})`;
          if (m.result.allowed[i]![j] !== delivered) wrong.push(`${cell}: reach says ${m.result.allowed[i]![j] ? 'allowed' : 'blocked'}, the kernel ${kk.outcome}${kk.namespace === null ? '' : ` in ${kk.namespace}`}`);
          const why = m.result.why[`${q.from}→${q.to}`];
          if (!delivered && why !== undefined && ['local', 'refused', 'dropped'].includes(why.outcome) && why.outcome !== kk.outcome) wrong.push(`${cell}: why says ${why.outcome} (${why.reason}), the kernel ${kk.outcome}`);
          if (JSON.stringify(ours[at]) !== JSON.stringify(kk)) wrong.push(`${cell}: connect\n  kernel ${JSON.stringify(kk)}\n  sim    ${JSON.stringify(ours[at])}`);
        }
      }
    }
    expect(at).toBe(p.probes.length);
    expect(wrong, `case ${p.c.index} (fc.sample(networkPolicySnapshot({ nodes: 2, minPods: 3, maxPods: 5 }), { seed: ${SEED}, numRuns: ${COUNT} })[${p.c.index}] with a Service per pod)`).toEqual([]);
  });
});
