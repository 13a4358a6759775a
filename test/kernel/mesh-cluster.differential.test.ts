// Meshed pods on the cluster path against the kernel: the Linkerd snapshot of
// test/fixtures/mesh-cluster (web on worker-1, redis on worker-2, both injected) built in real
// namespaces by the cluster harness, each pod holding the rules linkerd-init writes (compiled as
// `mesh --cluster` places them) and its proxy's sockets, the nodes holding kube-proxy's compiled
// rules, and worker-2 a port-scoped ingress drop standing for a NetworkPolicy that admits only
// 6379 to redis (a mangle FORWARD rule: the kernel has no reference evaluator). The connections
// the mesh scenario drives across the cluster — the client proxy's (uid 2102) to the server's
// inbound port 4143 and to 6379, the app's captured by its own pod, an unmeshed pod's through
// kube-proxy — must end as `Cluster.connect` says: outcome, the namespace and port that accepted,
// SO_ORIGINAL_DST there, the source seen. The mesh verdict built on them is checked last.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { compileKubeProxy } from '../../src/compile/kube-proxy/index.js';
import { readSnapshot } from '../../src/cluster/snapshot.js';
import { meshClusterPlan, simulateMeshOnCluster, type MeshClusterOptions } from '../../src/mesh/cluster.js';
import { describeKernel } from './harness.js';
import { fromKernel, fromSim, kernelCluster, type ClusterProbe, type KernelClusterReport, type PodRuleTexts } from './cluster-harness.js';

const fixture = (name: string): { name: string; text: string } => ({ name, text: readFileSync(fileURLToPath(new URL(`../fixtures/mesh-cluster/${name}`, import.meta.url)), 'utf8') });
const SOURCES = [fixture('nodes.yaml'), fixture('linkerd-redis.yaml')];
const snapshot = readSnapshot(SOURCES);

/** The policy's drop, as an enforcer on worker-2 writes it: TCP to redis on any port but 6379. */
const POLICY_DROP = '*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A FORWARD -d 10.244.2.8/32 -p tcp -m tcp ! --dport 6379 -j DROP\nCOMMIT\n';
/** As the kube-proxy kernel suite loads it: no nfacct objects (the harness makes none), the pod CIDRs as clusterCIDR. */
const KP = { mode: 'iptables', clusterCIDR: '10.244.0.0/16', nfacct: false } as const;
const nodeRules = {
  'worker-1': [compileKubeProxy(snapshot, 'worker-1', KP)],
  'worker-2': [compileKubeProxy(snapshot, 'worker-2', KP), POLICY_DROP],
};
const OPTIONS: MeshClusterOptions = { mesh: 'linkerd', snapshot: SOURCES, client: 'shop/web', server: 'shop/redis', netpol: 'none', nodeRules };

const PROBES: readonly (ClusterProbe & { readonly expect: { outcome: string; namespace?: string; port?: number; originalDestination?: string } })[] = [
  // The client proxy's opaque transport: to the server proxy's inbound port, dropped on worker-2.
  { from: 'shop/web', dst: '10.244.2.8:4143', uid: 2102, expect: { outcome: 'dropped' } },
  // The proxy to the application port (before opaque transport, or a non-opaque port): admitted; the pod's rules redirect it to 4143.
  { from: 'shop/web', dst: '10.244.2.8:6379', uid: 2102, expect: { outcome: 'local', namespace: 'pod/shop/redis', port: 4143, originalDestination: '10.244.2.8:6379' } },
  // The exporter's port, not admitted.
  { from: 'shop/web', dst: '10.244.2.8:9121', uid: 2102, expect: { outcome: 'dropped' } },
  // The app's connection to the Service: captured in its own pod (SO_ORIGINAL_DST the ClusterIP, as the pod's rules saw it).
  { from: 'shop/web', dst: '10.96.0.20:6379', uid: 1000, expect: { outcome: 'local', namespace: 'pod/shop/web', port: 4140, originalDestination: '10.96.0.20:6379' } },
  // An unmeshed pod: kube-proxy on worker-1 translates the Service; redis's rules send it to 4143.
  { from: 'shop/batch', dst: '10.96.0.20:6379', expect: { outcome: 'local', namespace: 'pod/shop/redis', port: 4143, originalDestination: '10.244.2.8:6379' } },
];

describeKernel('mesh --cluster vs the kernel: Linkerd pods on two nodes with a port-scoped ingress drop', () => {
  let report: KernelClusterReport;
  const plan = meshClusterPlan(OPTIONS);
  beforeAll(async () => {
    const podRules: PodRuleTexts = Object.fromEntries(Object.entries(plan.podRules).map(([k, v]) => [k, { rules: v.rules ?? [], listen: (v.listen ?? []).map((l) => ({ port: l.port, ...(l.proto !== undefined ? { proto: l.proto } : {}) })) }]));
    report = await kernelCluster(plan.cluster, nodeRules, PROBES, { podRules, connectTimeoutMs: 600 });
  }, 120_000);

  it('the kernel and Cluster.connect agree on every connection the scenario makes, and both say what is expected', () => {
    if (!report.ok) throw new Error(`${report.stage}: ${report.stderr}`);
    expect(report.results).toHaveLength(PROBES.length);
    PROBES.forEach((p, i) => {
      const sim = fromSim(plan.cluster.connect({ from: p.from, to: p.dst, ...(p.uid !== undefined ? { uid: p.uid } : {}) }, { trace: true }));
      const kernel = fromKernel(report.ok ? report.results[i]! : (undefined as never));
      expect(sim, `${p.from} (uid ${p.uid ?? 'of its container'}) → ${p.dst}`).toEqual(kernel);
      expect(kernel.outcome, `${p.from} → ${p.dst}`).toBe(p.expect.outcome);
      if (p.expect.namespace !== undefined) expect([kernel.namespace, kernel.port, kernel.originalDestination]).toEqual([p.expect.namespace, p.expect.port, p.expect.originalDestination]);
      plan.cluster.flushConntrack();
    });
  });

  it('the mesh verdict built on those connections: the opaque port travels to 4143 and is dropped on worker-2', () => {
    const r = simulateMeshOnCluster({ ...OPTIONS, dst: 'shop/svc/redis' });
    expect(r.verdict).toBe('dropped');
    const drop = r.hops[r.hops.length - 1]!;
    expect([drop.pod, drop.to, drop.outcome]).toEqual(['node/worker-2', '10.244.2.8:4143', 'dropped']);
    // Before opaque transport (2.9) the proxy connects to 6379 itself: admitted, as the kernel admits it.
    expect(simulateMeshOnCluster({ ...OPTIONS, dst: 'shop/svc/redis', linkerdVersion: '2.9' }).verdict).toBe('meshed');
  });
});
