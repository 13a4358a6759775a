/**
 * Cluster snapshots for the kube-proxy compiler tests: the fixtures of Kubernetes'
 * pkg/proxy/iptables/proxier_test.go and pkg/proxy/nftables/proxier_test.go (Apache-2.0, The
 * Kubernetes Authors), translated from their Go objects (makeTestService,
 * makeTestEndpointSlice, NewFakeProxier's node) into the API objects a snapshot holds.
 *
 * NewFakeProxier's conventions, as upstream states them: pod IPs 10.0.0.0/8, ClusterIPs
 * 172.30.0.0/16, node IPs 192.168.0.0/24 with the local node 192.168.0.2 (node name
 * "test-node"), external IPs 192.168.99.0/24, load-balancer IPs 1.2.3.4, 5.6.7.8, 9.10.11.12.
 */
import type { Endpoint, EndpointPort, K8sEndpointSlice, K8sNode, K8sService, Snapshot } from '../../../src/model/kubernetes.js';

export const TEST_NODE = 'test-node';

type ServiceSpec = K8sService['spec'];
type ServiceStatus = NonNullable<K8sService['status']>;

/** makeTestService: a Service in `ns` named `name`. */
export function service(ns: string, name: string, spec: ServiceSpec, status?: ServiceStatus): K8sService {
  return { kind: 'Service', metadata: { name, namespace: ns }, spec, ...(status ? { status } : {}) };
}

/** makeTestEndpointSlice: slice `name-n` of Service `name`. */
export function slice(ns: string, name: string, endpoints: readonly Endpoint[], ports: readonly EndpointPort[], options: { n?: number; addressType?: 'IPv4' | 'IPv6' } = {}): K8sEndpointSlice {
  return {
    kind: 'EndpointSlice',
    metadata: { name: `${name}-${options.n ?? 1}`, namespace: ns, labels: { 'kubernetes.io/service-name': name } },
    addressType: options.addressType ?? 'IPv4',
    endpoints,
    ports,
  };
}

/** The fake proxier's node: 192.168.0.2 and 2001:db8::1 (its primary addresses). */
export function testNode(extra: Partial<K8sNode> = {}): K8sNode {
  return {
    kind: 'Node',
    metadata: { name: TEST_NODE },
    spec: { podCIDRs: ['10.0.0.0/24', 'fd00:10::/64'] },
    status: { addresses: [{ type: 'InternalIP', address: '192.168.0.2' }, { type: 'InternalIP', address: '2001:db8::1' }] },
    ...extra,
  };
}

export function snapshot(services: readonly K8sService[], endpointSlices: readonly K8sEndpointSlice[], nodes: readonly K8sNode[] = [testNode()]): Snapshot {
  return { namespaces: [], nodes, pods: [], services, endpointSlices, networkPolicies: [], warnings: [] };
}

const p80 = [{ name: 'p80', port: 80, protocol: 'TCP' as const }];

/** TestOverallIPTablesRules / TestOverallNFTablesRules: six services of every kind. */
export const OVERALL: Snapshot = snapshot(
  [
    // ClusterIP service
    service('ns1', 'svc1', { clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }),
    // LoadBalancer service with Local traffic policy
    service(
      'ns2',
      'svc2',
      {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        clusterIP: '172.30.0.42',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
        externalIPs: ['192.168.99.22'],
        healthCheckNodePort: 30000,
      },
      { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } },
    ),
    // NodePort service
    service('ns3', 'svc3', { type: 'NodePort', clusterIP: '172.30.0.43', ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3003 }] }),
    // ExternalIP service
    service('ns4', 'svc4', { type: 'NodePort', clusterIP: '172.30.0.44', externalIPs: ['192.168.99.33'], ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 80 }] }),
    // LoadBalancer service with Cluster traffic policy, source ranges, and session affinity
    service(
      'ns5',
      'svc5',
      {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Cluster',
        clusterIP: '172.30.0.45',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3002 }],
        healthCheckNodePort: 30000,
        // Extra whitespace, as upstream's fixture has it: kube-proxy trims it.
        loadBalancerSourceRanges: [' 203.0.113.0/25'],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
      },
      { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } },
    ),
    // ClusterIP service with no endpoints
    service('ns6', 'svc6', { type: 'ClusterIP', clusterIP: '172.30.0.46', ports: [{ name: 'p80', port: 80, protocol: 'TCP', targetPort: 80 }] }),
  ],
  [
    slice('ns1', 'svc1', [{ addresses: ['10.180.0.1'] }], p80),
    // No NodeName: not local.
    slice('ns2', 'svc2', [{ addresses: ['10.180.0.2'] }], p80),
    slice('ns3', 'svc3', [{ addresses: ['10.180.0.3'] }], p80),
    slice('ns4', 'svc4', [{ addresses: ['10.180.0.4'] }, { addresses: ['10.180.0.5'], nodeName: TEST_NODE }], p80),
    slice('ns5', 'svc5', [{ addresses: ['10.180.0.3'] }], p80),
  ],
);

/** TestSyncProxyRulesRepeated, first sync: two ClusterIP services. */
export const REPEATED_FIRST: Snapshot = snapshot(
  [
    service('ns1', 'svc1', { type: 'ClusterIP', clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }),
    service('ns2', 'svc2', { type: 'ClusterIP', clusterIP: '172.30.0.42', ports: [{ name: 'p8080', port: 8080, protocol: 'TCP' }] }),
  ],
  [
    slice('ns1', 'svc1', [{ addresses: ['10.0.1.1'] }], p80),
    slice('ns2', 'svc2', [{ addresses: ['10.0.2.1'] }], [{ name: 'p8080', port: 8080, protocol: 'TCP' }]),
  ],
);

/** TestBadIPs (nftables): addresses with leading zeros, which kube-proxy reads as decimal. */
export const BAD_IPS: Snapshot = snapshot(
  [
    service(
      'ns1',
      'svc1',
      {
        type: 'LoadBalancer',
        clusterIP: '172.30.0.041',
        ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }],
        externalIPs: ['192.168.099.022'],
        loadBalancerSourceRanges: ['203.0.113.000/025'],
      },
      { loadBalancer: { ingress: [{ ip: '1.2.3.004' }] } },
    ),
  ],
  [slice('ns1', 'svc1', [{ addresses: ['10.180.00.001'] }], p80)],
);

/** TestSyncProxyRulesLargeClusterMode: 2 × 499 endpoints, then a third service with 3. */
export function largeCluster(withThird: boolean): Snapshot {
  const n = 1000 / 2 - 1;
  const eps = (a: number): Endpoint[] => Array.from({ length: n }, (_x, i) => ({ addresses: [`10.${a}.${i % 256}.${Math.floor(i / 256)}`] }));
  const services = [
    service('ns1', 'svc1', { type: 'ClusterIP', clusterIP: '172.30.0.41', ports: [{ name: 'p80', port: 80, protocol: 'TCP' }] }),
    service('ns2', 'svc2', { type: 'ClusterIP', clusterIP: '172.30.0.42', ports: [{ name: 'p8080', port: 8080, protocol: 'TCP' }] }),
    service('ns3', 'svc3', { type: 'ClusterIP', clusterIP: '172.30.0.43', ports: [{ name: 'p8081', port: 8081, protocol: 'TCP' }] }),
  ];
  const slices = [
    slice('ns1', 'svc1', eps(0), p80),
    slice('ns2', 'svc2', eps(1), [{ name: 'p8080', port: 8080, protocol: 'TCP' }]),
  ];
  if (withThird) slices.push(slice('ns3', 'svc3', [{ addresses: ['203.0.113.4'] }, { addresses: ['203.0.113.8'] }, { addresses: ['203.0.113.12'] }], [{ name: 'p8081', port: 8081, protocol: 'TCP' }]));
  return snapshot(services, slices);
}

/** The options NewFakeProxier (iptables) sets: pod CIDR 10.0.0.0/8, nfacct counters present, iptables without --random-fully. */
export const FAKE_IPTABLES = { mode: 'iptables', clusterCIDR: '10.0.0.0/8', randomFully: false, nfacct: true } as const;

/** The options NewFakeProxier (nftables) sets: pod CIDR, NodePorts on the node IPs, the ServiceCIDR. */
export const FAKE_NFTABLES = {
  mode: 'nftables',
  clusterCIDR: '10.0.0.0/8,fd00:10::/64',
  nodePortAddresses: ['192.168.0.2/32', '2001:db8::1/128'],
  serviceCIDRs: '172.30.0.0/16,fd00:10:96::/112',
} as const;

/** Two Services claiming one external IP and port. */
export const DUPLICATE_EXTERNAL_IP: Snapshot = snapshot(
  [
    service('a', 'first', { clusterIP: '172.30.0.31', externalIPs: ['192.168.99.5'], ports: [{ name: 'h', port: 80 }] }),
    service('b', 'second', { clusterIP: '172.30.0.32', externalIPs: ['192.168.99.5'], ports: [{ name: 'h', port: 80 }] }),
  ],
  [slice('a', 'first', [{ addresses: ['10.0.0.5'] }], [{ name: 'h', port: 80 }]), slice('b', 'second', [{ addresses: ['10.0.0.6'] }], [{ name: 'h', port: 80 }])],
);
