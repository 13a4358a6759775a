/**
 * The shapes of the objects NetworkPolicy code reads, checked before it reads them: a snapshot is
 * user data, and an object of the wrong shape (a pod whose `podIPs` is a string, a namespace
 * without a name) is left out with a warning naming it, never read into a crash.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import type { K8sNamespace, K8sNode, K8sPod, Snapshot } from '../model/kubernetes.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringMap = (v: unknown): boolean => v === undefined || (isObject(v) && Object.values(v).every((x) => typeof x === 'string'));
const optString = (v: unknown): boolean => v === undefined || typeof v === 'string';

/** What is wrong with an object's metadata, or null. */
function metadataProblem(o: unknown): string | null {
  if (!isObject(o)) return 'is not an object';
  const m = o['metadata'];
  if (!isObject(m)) return 'has no metadata';
  if (typeof m['name'] !== 'string' || m['name'] === '') return 'has no metadata.name';
  if (!optString(m['namespace'])) return 'has a metadata.namespace that is not a string';
  if (!isStringMap(m['labels'])) return 'has metadata.labels that are not a map of strings';
  return null;
}

function podProblem(p: Record<string, unknown>): string | null {
  const spec = p['spec'];
  if (!isObject(spec)) return 'has no spec';
  if (!optString(spec['nodeName'])) return 'has a spec.nodeName that is not a string';
  if (spec['hostNetwork'] !== undefined && typeof spec['hostNetwork'] !== 'boolean') return 'has a spec.hostNetwork that is not a boolean';
  const containers = spec['containers'] ?? [];
  if (!Array.isArray(containers)) return 'has spec.containers that are not a list';
  for (const [i, c] of containers.entries()) {
    if (!isObject(c)) return `has spec.containers[${i}] that is not an object`;
    const ports = c['ports'] ?? [];
    if (!Array.isArray(ports)) return `has spec.containers[${i}].ports that are not a list`;
    for (const [j, port] of ports.entries()) {
      const at = `spec.containers[${i}].ports[${j}]`;
      if (!isObject(port)) return `has ${at} that is not an object`;
      const n = port['containerPort'];
      if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 65535) return `has ${at}.containerPort that is not a port number`;
      if (!optString(port['name'])) return `has ${at}.name that is not a string`;
      if (port['protocol'] !== undefined && !['TCP', 'UDP', 'SCTP'].includes(port['protocol'] as string)) return `has ${at}.protocol that is not TCP, UDP or SCTP`;
    }
  }
  const status = p['status'];
  if (status === undefined) return null;
  if (!isObject(status)) return 'has a status that is not an object';
  for (const k of ['podIP', 'hostIP', 'phase']) if (!optString(status[k])) return `has a status.${k} that is not a string`;
  const ips = status['podIPs'];
  if (ips !== undefined && !(Array.isArray(ips) && ips.every((x) => isObject(x) && typeof x['ip'] === 'string'))) return 'has status.podIPs that are not a list of { ip }';
  return null;
}

function nodeProblem(n: Record<string, unknown>): string | null {
  const status = n['status'];
  if (status === undefined) return null;
  if (!isObject(status)) return 'has a status that is not an object';
  const addrs = status['addresses'];
  if (addrs !== undefined && !(Array.isArray(addrs) && addrs.every((a) => isObject(a) && typeof a['type'] === 'string' && typeof a['address'] === 'string'))) {
    return 'has status.addresses that are not a list of { type, address }';
  }
  return null;
}

/** The parts of a snapshot NetworkPolicy code reads. */
export type NetpolSnapshot = Pick<Snapshot, 'namespaces' | 'pods' | 'networkPolicies'> & Partial<Pick<Snapshot, 'nodes'>>;

/**
 * The namespaces, nodes and pods of the snapshot that have the shape the API gives them, and a
 * warning for each one left out. Policies are checked by `validateNetworkPolicy`. Throws
 * `BAD_ARGUMENT` when the snapshot itself is not an object of lists.
 */
export function wellShaped(snapshot: NetpolSnapshot): { namespaces: K8sNamespace[]; nodes: K8sNode[]; pods: K8sPod[]; warnings: string[] } {
  if (!isObject(snapshot)) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', 'snapshot must be an object with namespaces, pods and networkPolicies lists'));
  for (const k of ['namespaces', 'pods', 'networkPolicies'] as const) {
    if (!Array.isArray(snapshot[k])) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `snapshot.${k} must be a list`));
  }
  if (snapshot.nodes !== undefined && !Array.isArray(snapshot.nodes)) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', 'snapshot.nodes must be a list'));
  const warnings: string[] = [];
  const keep = <T>(list: readonly unknown[], kind: string, extra: (o: Record<string, unknown>) => string | null): T[] => {
    const out: T[] = [];
    list.forEach((o, i) => {
      const problem = metadataProblem(o) ?? extra(o as Record<string, unknown>);
      if (problem === null) out.push(o as T);
      else {
        const m = isObject(o) && isObject(o['metadata']) ? o['metadata'] : {};
        const name = typeof m['name'] === 'string' ? `${typeof m['namespace'] === 'string' ? `${m['namespace']}/` : ''}${m['name']}` : `#${i}`;
        warnings.push(`${kind} ${name} ${problem}: left out`);
      }
    });
    return out;
  };
  return {
    namespaces: keep<K8sNamespace>(snapshot.namespaces, 'namespace', () => null),
    nodes: keep<K8sNode>(snapshot.nodes ?? [], 'node', nodeProblem),
    pods: keep<K8sPod>(snapshot.pods, 'pod', podProblem),
    warnings,
  };
}
