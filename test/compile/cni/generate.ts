/**
 * Seeded snapshots for the CNI compiler: one node (IPv4, IPv6 or dual-stack pod CIDRs) with 1–6
 * pods, some with hostPorts (tcp, udp, sctp; some bound to a host IP), some hostNetwork, and a
 * pod on another node. A pure function of the seed.
 */
import type { ContainerPort, K8sNode, K8sPod, Snapshot } from '../../../src/model/kubernetes.js';
import { rng } from '../kube-proxy/generate.js';

export const CNI_NODE = 'node-a';

export interface GeneratedCniCluster {
  readonly seed: number;
  readonly families: readonly (4 | 6)[];
  readonly snapshot: Snapshot;
}

export function generateCniCluster(seed: number): GeneratedCniCluster {
  const r = rng(seed * 7919 + 17);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const f = r();
  const families: (4 | 6)[] = f < 0.6 ? [4] : f < 0.8 ? [6] : [4, 6];
  const cidr = (fam: 4 | 6, n: number): string => (fam === 4 ? `10.244.${n}.0/24` : `fd00:10:244:${n}::/64`);
  const nodes: K8sNode[] = [1, 2].map((n) => ({
    kind: 'Node',
    metadata: { name: n === 1 ? CNI_NODE : 'node-b' },
    spec: { podCIDRs: families.map((fam) => cidr(fam, n)) },
    status: { addresses: families.map((fam) => ({ type: 'InternalIP' as const, address: fam === 4 ? `192.168.0.${n + 1}` : `fd00:192::${n + 1}` })) },
  }));
  const pods: K8sPod[] = [];
  const count = 1 + Math.floor(r() * 6);
  let hostPort = 8000 + Math.floor(r() * 100);
  for (let i = 0; i < count; i++) {
    const hostNetwork = r() < 0.1;
    const ports: ContainerPort[] = [];
    const np = Math.floor(r() * 4);
    for (let k = 0; k < np; k++) {
      const withHost = r() < 0.7;
      const hostIP = withHost && r() < 0.2 ? pick(families.map((fam) => (fam === 4 ? '192.168.0.2' : 'fd00:192::2'))) : undefined;
      ports.push({
        containerPort: 80 + k,
        protocol: pick(['TCP', 'TCP', 'UDP', 'SCTP'] as const),
        ...(withHost ? { hostPort: hostPort++ } : {}),
        ...(hostIP ? { hostIP } : {}),
      });
    }
    const host = 10 + i;
    pods.push({
      kind: 'Pod',
      metadata: { name: `p${i}`, namespace: pick(['default', 'web']), uid: `uid-${seed}-${i}` },
      spec: { nodeName: CNI_NODE, ...(hostNetwork ? { hostNetwork: true } : {}), containers: [{ name: 'c', ports }] },
      status: { podIPs: hostNetwork ? [{ ip: '192.168.0.2' }] : families.map((fam) => ({ ip: fam === 4 ? `10.244.1.${host}` : `fd00:10:244:1::${host.toString(16)}` })) },
    });
  }
  pods.push({
    kind: 'Pod',
    metadata: { name: 'elsewhere', namespace: 'default', uid: `uid-${seed}-x` },
    spec: { nodeName: 'node-b', containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 9999 }] }] },
    status: { podIPs: families.map((fam) => ({ ip: fam === 4 ? '10.244.2.10' : 'fd00:10:244:2::a' })) },
  });
  return { seed, families, snapshot: { namespaces: [], nodes, pods, services: [], endpointSlices: [], networkPolicies: [], warnings: [] } };
}
