/**
 * Seeded cluster snapshots for the kube-proxy and CNI compilers: a node, Services of every type
 * with 0–3 endpoints (ready, terminating, local or not), traffic policies, session affinity,
 * NodePorts, external and load-balancer IPs, source ranges; IPv4, IPv6 or dual-stack. A pure
 * function of the seed (mulberry32).
 */
import type { Endpoint, K8sEndpointSlice, K8sNode, K8sPod, K8sService, Snapshot } from '../../../src/model/kubernetes.js';
import { mulberry32 } from '../../kernel/generate.js';

/** Numbers in [0, 1), the same sequence for the same seed (the kernel suites' generator). */
export const rng = mulberry32;

export const GEN_NODE = 'node-a';
export const GEN_NODE_IP4 = '192.168.0.2';
export const GEN_NODE_IP6 = 'fd00:192::2';
export const GEN_CLUSTER_CIDR = '10.244.0.0/16,fd00:10:244::/56';

export interface GeneratedCluster {
  readonly seed: number;
  readonly families: readonly (4 | 6)[];
  readonly snapshot: Snapshot;
}

/** A snapshot for `seed`: `services` Services (default 3–8), families by seed. */
export function generateCluster(seed: number, options: { services?: number } = {}): GeneratedCluster {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const f = r();
  const families: (4 | 6)[] = f < 0.6 ? [4] : f < 0.8 ? [6] : [4, 6];
  const nodes: K8sNode[] = [
    {
      kind: 'Node',
      metadata: { name: GEN_NODE },
      spec: { podCIDRs: families.map((x) => (x === 4 ? '10.244.1.0/24' : 'fd00:10:244:1::/64')) },
      status: { addresses: families.map((x) => ({ type: 'InternalIP' as const, address: x === 4 ? GEN_NODE_IP4 : GEN_NODE_IP6 })) },
    },
    {
      kind: 'Node',
      metadata: { name: 'node-b' },
      spec: { podCIDRs: families.map((x) => (x === 4 ? '10.244.2.0/24' : 'fd00:10:244:2::/64')) },
      status: { addresses: families.map((x) => ({ type: 'InternalIP' as const, address: x === 4 ? '192.168.0.3' : 'fd00:192::3' })) },
    },
  ];
  const services: K8sService[] = [];
  const slices: K8sEndpointSlice[] = [];
  const pods: K8sPod[] = [];
  const n = options.services ?? 3 + Math.floor(r() * 6);
  let nodePort = 30000 + Math.floor(r() * 1000);
  for (let i = 0; i < n; i++) {
    const ns = pick(['default', 'web', 'kube-system']);
    const name = `svc${i}`;
    const type = pick(['ClusterIP', 'ClusterIP', 'NodePort', 'LoadBalancer'] as const);
    const portCount = r() < 0.8 ? 1 : 2;
    const ports = Array.from({ length: portCount }, (_x, k) => ({
      name: portCount === 1 && r() < 0.3 ? '' : `p${k}`,
      port: pick([80, 443, 53, 8080]) + k,
      protocol: pick(['TCP', 'TCP', 'UDP', 'SCTP'] as const),
      targetPort: 8000 + k,
      ...(type !== 'ClusterIP' ? { nodePort: nodePort++ } : {}),
    }));
    const clusterIPs = families.map((x) => (x === 4 ? `10.96.0.${10 + i}` : `fd00:10:96::${(10 + i).toString(16)}`));
    const spec: K8sService['spec'] = {
      type,
      clusterIP: clusterIPs[0]!,
      clusterIPs,
      ipFamilies: families.map((x) => (x === 4 ? 'IPv4' : 'IPv6')),
      ports,
      ...(r() < 0.15 ? { externalIPs: families.map((x) => (x === 4 ? `192.168.99.${20 + i}` : `fd00:99::${20 + i}`)) } : {}),
      ...(type !== 'ClusterIP' && r() < 0.4 ? { externalTrafficPolicy: 'Local' as const } : {}),
      ...(r() < 0.2 ? { internalTrafficPolicy: 'Local' as const } : {}),
      ...(r() < 0.2 ? { sessionAffinity: 'ClientIP' as const, sessionAffinityConfig: { clientIP: { timeoutSeconds: pick([10800, 60, 3600]) } } } : {}),
      ...(type === 'LoadBalancer' && r() < 0.5 ? { loadBalancerSourceRanges: families.map((x) => (x === 4 ? '203.0.113.0/25' : '2001:db8:77::/48')) } : {}),
    };
    const lb = type === 'LoadBalancer' ? { loadBalancer: { ingress: families.map((x) => ({ ip: x === 4 ? `198.51.100.${10 + i}` : `2001:db8:100::${10 + i}` })) } } : undefined;
    if (type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local') (spec as { healthCheckNodePort?: number }).healthCheckNodePort = 32000 + i;
    services.push({ kind: 'Service', metadata: { name, namespace: ns }, spec, ...(lb ? { status: lb } : {}) });
    const epCount = Math.floor(r() * 4);
    for (const fam of families) {
      const endpoints: Endpoint[] = [];
      for (let e = 0; e < epCount; e++) {
        const local = r() < 0.5;
        const host = 10 + ((i * 4 + e) % 200);
        const addr = fam === 4 ? `10.244.${local ? 1 : 2}.${host}` : `fd00:10:244:${local ? 1 : 2}::${host.toString(16)}`;
        const term = r() < 0.15;
        endpoints.push({ addresses: [addr], nodeName: local ? GEN_NODE : 'node-b', ...(term ? { conditions: { ready: false, serving: r() < 0.7, terminating: true } } : {}) });
      }
      slices.push({
        kind: 'EndpointSlice',
        metadata: { name: `${name}-${fam}`, namespace: ns, labels: { 'kubernetes.io/service-name': name } },
        addressType: fam === 4 ? 'IPv4' : 'IPv6',
        endpoints,
        ports: ports.map((p) => ({ name: p.name, port: p.targetPort, protocol: p.protocol })),
      });
    }
  }
  return { seed, families, snapshot: { namespaces: [], nodes, pods, services, endpointSlices: slices, networkPolicies: [], warnings: [] } };
}
