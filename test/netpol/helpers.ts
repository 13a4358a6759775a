// Small builders for NetworkPolicy tests: pods named as the upstream e2e suite names them
// (`x/a`, `y/b`: namespace x, label pod=a), serving TCP, UDP and SCTP on 80 and 81 with the
// e2e suite's port names (`serve-80-tcp` …), and the e2e suite's truth tables.
import type { K8sNamespace, K8sNetworkPolicy, K8sPod, NetworkPolicyEgressRule, NetworkPolicyIngressRule, Snapshot } from '../../src/model/kubernetes.js';
import { NetworkPolicyEvaluator } from '../../src/netpol/index.js';
import type { NetpolOptions } from '../../src/netpol/index.js';

export interface PodOptions {
  readonly node?: string;
  readonly labels?: Record<string, string>;
  readonly ports?: readonly number[];
  readonly hostNetwork?: boolean;
  readonly ip?: string;
  readonly phase?: string;
}

/** A pod `ns/name` with label pod=name and an address from its index. */
export function pod(id: string, index: number, o: PodOptions = {}): K8sPod {
  const [namespace, name] = id.split('/') as [string, string];
  const node = o.node ?? 'node-1';
  const ports = o.ports ?? [80, 81];
  const nodeIndex = Number(/(\d+)$/.exec(node)?.[1] ?? '1');
  const ip = o.hostNetwork ? `192.168.0.${10 + nodeIndex}` : o.ip ?? `10.244.${nodeIndex}.${index + 2}`;
  return {
    kind: 'Pod',
    metadata: { name, namespace, labels: o.labels ?? { pod: name } },
    spec: {
      nodeName: node,
      ...(o.hostNetwork ? { hostNetwork: true } : {}),
      containers: [{
        name: 'c',
        ports: ports.flatMap((p) => (['TCP', 'UDP', 'SCTP'] as const).map((proto) => ({ name: `serve-${p}-${proto.toLowerCase()}`, containerPort: p, protocol: proto }))),
      }],
    },
    status: { podIP: ip, podIPs: [{ ip }], hostIP: `192.168.0.${10 + nodeIndex}`, phase: o.phase ?? 'Running' },
  };
}

export function namespace(name: string, labels: Record<string, string> = {}): K8sNamespace {
  return { kind: 'Namespace', metadata: { name, labels } };
}

export function policy(
  ns: string,
  name: string,
  podSelector: K8sNetworkPolicy['spec']['podSelector'],
  rest: { ingress?: NetworkPolicyIngressRule[]; egress?: NetworkPolicyEgressRule[]; policyTypes?: ('Ingress' | 'Egress')[] } = {},
): K8sNetworkPolicy {
  return { kind: 'NetworkPolicy', metadata: { name, namespace: ns }, spec: { podSelector, ...rest } };
}

/** A snapshot of the pods (`x/a` …), their namespaces, and the policies. */
export function snapshot(pods: readonly (string | K8sPod)[], policies: readonly K8sNetworkPolicy[] = [], namespaces?: readonly K8sNamespace[]): Snapshot {
  const list = pods.map((p, i) => (typeof p === 'string' ? pod(p, i) : p));
  const nsNames = [...new Set(list.map((p) => p.metadata.namespace!))];
  return {
    namespaces: namespaces ?? nsNames.map((n) => namespace(n)),
    nodes: [],
    pods: list,
    services: [],
    endpointSlices: [],
    networkPolicies: policies,
    warnings: [],
  };
}

/**
 * The truth table the e2e suite prints: a header of destination pods, one row per source,
 * `.` reachable and `X` blocked; the diagonal is `.` (a pod reaches itself).
 */
export function truthTable(s: Snapshot, port: number, protocol: 'TCP' | 'UDP' | 'SCTP' = 'TCP', options: NetpolOptions = {}): string {
  const ev = new NetworkPolicyEvaluator(s, options);
  const names = s.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
  const rows = [['-', ...names].join(' ')];
  for (const from of names) {
    rows.push([from, ...names.map((to) => (ev.evaluate({ from, to, port, protocol }).allowed ? '.' : 'X').padEnd(to.length))].join(' ').trimEnd());
  }
  return rows.join('\n');
}

/** A truth table written in a test: rows of `.`/`X` under the header, whitespace-tolerant. */
export function table(text: string): string {
  const lines = text.trim().split('\n').map((l) => l.trim().split(/\s+/));
  const header = lines[0]!;
  const names = header.slice(1);
  return [header.join(' '), ...lines.slice(1).map((cells) => [cells[0]!, ...cells.slice(1).map((c, i) => c.padEnd(names[i]!.length))].join(' ').trimEnd())].join('\n');
}
