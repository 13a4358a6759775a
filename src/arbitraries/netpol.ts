/**
 * Kubernetes snapshots for NetworkPolicy properties: namespaces with labels, pods with labels,
 * addresses and named container ports, and policies that the API server accepts, drawn from
 * small vocabularies so that selectors, ports and ipBlocks keep meeting the pods.
 *
 * @module
 */
import * as fc from 'fast-check';
import type {
  K8sNamespace, K8sNetworkPolicy, K8sPod, LabelSelector, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
  NetworkPolicyPort, Snapshot,
} from '../model/kubernetes.js';
import { badConstraint, checkBool, checkInt, checkKnownKeys } from './constraints.js';

/**
 * Constraints of {@link networkPolicySnapshot} and {@link networkPolicyCase}.
 *
 * @example
 * ```ts
 * const c: NetworkPolicySnapshotConstraints = { maxPods: 4, namedPorts: false };
 * ```
 */
export interface NetworkPolicySnapshotConstraints {
  /**
   * Most namespaces (named x, y, z, w, v, u).
   * @defaultValue 3
   */
  readonly maxNamespaces?: number;
  /**
   * Fewest pods.
   * @defaultValue 2
   */
  readonly minPods?: number;
  /**
   * Most pods.
   * @defaultValue 6
   */
  readonly maxPods?: number;
  /**
   * Most policies.
   * @defaultValue 4
   */
  readonly maxPolicies?: number;
  /**
   * Most rules per direction of a policy.
   * @defaultValue 2
   */
  readonly maxRules?: number;
  /**
   * Nodes the pods run on: node `node-N` holds pod addresses 10.244.N.0/24 and has the address
   * 192.168.0.(10+N).
   * @defaultValue 1
   */
  readonly nodes?: number;
  /**
   * Named ports in policies.
   * @defaultValue true
   */
  readonly namedPorts?: boolean;
  /**
   * `ipBlock` peers (with `except`).
   * @defaultValue true
   */
  readonly ipBlocks?: boolean;
  /**
   * Port ranges (`endPort`).
   * @defaultValue true
   */
  readonly endPorts?: boolean;
}

/**
 * One connection to judge: from a pod (`NS/NAME`) or a node (`node:NAME`), to a pod, on a port.
 *
 * @example
 * ```ts
 * const p: NetworkPolicyProbe = { from: 'x/p0', to: 'y/p1', port: 80, protocol: 'TCP' };
 * ```
 */
export interface NetworkPolicyProbe {
  readonly from: string;
  readonly to: string;
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP';
}

const NAMESPACES = ['x', 'y', 'z', 'w', 'v', 'u'] as const;
const APPS = ['a', 'b', 'c'] as const;
const TIERS = ['web', 'db'] as const;
const TEAMS = ['red', 'blue'] as const;
/** Ports the probes use: the pods' ports, and one no pod declares. */
export const PROBE_PORTS: readonly number[] = [80, 81, 8080, 53, 9999];

interface Resolved {
  readonly maxNamespaces: number;
  readonly minPods: number;
  readonly maxPods: number;
  readonly maxPolicies: number;
  readonly maxRules: number;
  readonly nodes: number;
  readonly namedPorts: boolean;
  readonly ipBlocks: boolean;
  readonly endPorts: boolean;
}

const KEYS = ['maxNamespaces', 'minPods', 'maxPods', 'maxPolicies', 'maxRules', 'nodes', 'namedPorts', 'ipBlocks', 'endPorts'];

function resolve(name: string, c: NetworkPolicySnapshotConstraints | undefined): Resolved {
  checkKnownKeys(name, c, KEYS);
  const r: Resolved = {
    maxNamespaces: checkInt(name, 'maxNamespaces', c?.maxNamespaces, 1, NAMESPACES.length, 3),
    minPods: checkInt(name, 'minPods', c?.minPods, 1, 200, 2),
    maxPods: checkInt(name, 'maxPods', c?.maxPods, 1, 200, 6),
    maxPolicies: checkInt(name, 'maxPolicies', c?.maxPolicies, 0, 64, 4),
    maxRules: checkInt(name, 'maxRules', c?.maxRules, 0, 8, 2),
    nodes: checkInt(name, 'nodes', c?.nodes, 1, 8, 1),
    namedPorts: checkBool(name, 'namedPorts', c?.namedPorts, true),
    ipBlocks: checkBool(name, 'ipBlocks', c?.ipBlocks, true),
    endPorts: checkBool(name, 'endPorts', c?.endPorts, true),
  };
  if (r.minPods > r.maxPods) badConstraint(name, 'minPods', `(${r.minPods}) must not exceed "maxPods" (${r.maxPods})`);
  return r;
}

function ipv4(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}
function parse4(t: string): number {
  return t.split('.').reduce((a, o) => a * 256 + Number(o), 0) >>> 0;
}
function masked(v: number, len: number): number {
  return len === 0 ? 0 : (v & (~0 << (32 - len))) >>> 0;
}

const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 3 });

/** A pod's labels: `app` and `tier`, each present or not. */
const podLabels = fc.record({ app: maybe(fc.constantFrom(...APPS)), tier: maybe(fc.constantFrom(...TIERS)) }).map((l) => {
  const out: Record<string, string> = {};
  if (l.app !== undefined) out['app'] = l.app;
  if (l.tier !== undefined) out['tier'] = l.tier;
  return out;
});

/** A pod's container ports: `http` on 80 or 8080, `alt` on 81, `dns` on UDP 53, each present or not. */
const containerPorts = fc.record({
  http: fc.constantFrom(80, 8080, 0),
  alt: fc.boolean(),
  dns: fc.boolean(),
  unnamed80: fc.boolean(),
}).map((p) => {
  const ports: { name?: string; containerPort: number; protocol: 'TCP' | 'UDP' }[] = [];
  if (p.http !== 0) ports.push({ name: 'http', containerPort: p.http, protocol: 'TCP' });
  else if (p.unnamed80) ports.push({ containerPort: 80, protocol: 'TCP' });
  if (p.alt) ports.push({ name: 'alt', containerPort: 81, protocol: 'TCP' });
  if (p.dns) ports.push({ name: 'dns', containerPort: 53, protocol: 'UDP' });
  return ports;
});

function selector(keys: 'pod' | 'ns', namespaces: readonly string[]): fc.Arbitrary<LabelSelector> {
  const key = keys === 'pod' ? fc.constantFrom('app', 'tier') : fc.constantFrom('team', 'kubernetes.io/metadata.name');
  const valuesFor = (k: string): fc.Arbitrary<string> =>
    k === 'app' ? fc.constantFrom(...APPS) : k === 'tier' ? fc.constantFrom(...TIERS) : k === 'team' ? fc.constantFrom(...TEAMS) : fc.constantFrom(...namespaces);
  const expression = key.chain((k) => fc.oneof(
    fc.record({ key: fc.constant(k), operator: fc.constantFrom('In' as const, 'NotIn' as const), values: fc.uniqueArray(valuesFor(k), { minLength: 1, maxLength: 2 }) }),
    fc.record({ key: fc.constant(k), operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
  ));
  const matchLabels = key.chain((k) => valuesFor(k).map((v) => ({ [k]: v })));
  return fc.oneof(
    { arbitrary: fc.constant({}), weight: 2 },
    { arbitrary: matchLabels.map((m) => ({ matchLabels: m })), weight: 4 },
    { arbitrary: fc.array(expression, { minLength: 1, maxLength: 2 }).map((e) => ({ matchExpressions: e })), weight: 2 },
    { arbitrary: fc.tuple(matchLabels, expression).map(([m, e]) => ({ matchLabels: m, matchExpressions: [e] })), weight: 1 },
  );
}

/** An ipBlock around the pod addresses: the CIDR from a few lengths, excepts strictly inside it. */
function ipBlock(podIPs: readonly string[]): fc.Arbitrary<NetworkPolicyPeer> {
  const anchors = podIPs.length > 0 ? podIPs : ['10.244.1.10'];
  return fc.record({
    anchor: fc.constantFrom(...anchors),
    len: fc.constantFrom(16, 24, 28, 30, 32, 0),
    excepts: fc.array(fc.record({ anchor: fc.constantFrom(...anchors), extra: fc.integer({ min: 1, max: 8 }) }), { maxLength: 2 }),
  }).map(({ anchor, len, excepts }) => {
    const base = masked(parse4(anchor), len);
    const cidr = `${ipv4(base)}/${len}`;
    const except: string[] = [];
    for (const e of excepts) {
      const elen = Math.min(32, len + e.extra);
      if (elen <= len) continue;
      const a = parse4(e.anchor);
      // The except's address is the anchor when it lies in the CIDR, else the CIDR's first address.
      const inside = masked(a, len) === base ? a : base;
      const text = `${ipv4(masked(inside, elen))}/${elen}`;
      if (!except.includes(text)) except.push(text);
    }
    return { ipBlock: except.length > 0 ? { cidr, except } : { cidr } };
  });
}

function port(r: Resolved): fc.Arbitrary<NetworkPolicyPort> {
  const arbs: { arbitrary: fc.Arbitrary<NetworkPolicyPort>; weight: number }[] = [
    { arbitrary: fc.constantFrom<NetworkPolicyPort>({ port: 80 }, { port: 81 }, { protocol: 'TCP', port: 8080 }, { protocol: 'UDP', port: 53 }, { port: 9999 }), weight: 5 },
    { arbitrary: fc.constantFrom<NetworkPolicyPort>({ protocol: 'TCP' }, { protocol: 'UDP' }, { protocol: 'SCTP', port: 80 }), weight: 1 },
  ];
  if (r.endPorts) arbs.push({ arbitrary: fc.constantFrom<NetworkPolicyPort>({ port: 80, endPort: 81 }, { port: 53, endPort: 8080 }, { protocol: 'UDP', port: 50, endPort: 60 }), weight: 2 });
  if (r.namedPorts) arbs.push({ arbitrary: fc.constantFrom<NetworkPolicyPort>({ port: 'http' }, { port: 'alt' }, { protocol: 'UDP', port: 'dns' }, { port: 'dns' }, { port: 'metrics' }), weight: 2 });
  return fc.oneof(...arbs);
}

function peer(r: Resolved, namespaces: readonly string[], podIPs: readonly string[]): fc.Arbitrary<NetworkPolicyPeer> {
  const arbs: { arbitrary: fc.Arbitrary<NetworkPolicyPeer>; weight: number }[] = [
    { arbitrary: selector('pod', namespaces).map((s) => ({ podSelector: s })), weight: 4 },
    { arbitrary: selector('ns', namespaces).map((s) => ({ namespaceSelector: s })), weight: 3 },
    { arbitrary: fc.tuple(selector('pod', namespaces), selector('ns', namespaces)).map(([p, n]) => ({ podSelector: p, namespaceSelector: n })), weight: 2 },
  ];
  if (r.ipBlocks) arbs.push({ arbitrary: ipBlock(podIPs), weight: 2 });
  return fc.oneof(...arbs);
}

/** Absent, empty, or some items: the three the API tells apart (or not). */
function list<T>(item: fc.Arbitrary<T>, max: number): fc.Arbitrary<T[] | undefined> {
  return fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 2 },
    { arbitrary: fc.constant<T[]>([]), weight: 1 },
    { arbitrary: fc.array(item, { minLength: 1, maxLength: Math.max(1, max) }), weight: 5 },
  );
}

function policy(r: Resolved, index: number, namespaces: readonly string[], podIPs: readonly string[]): fc.Arbitrary<K8sNetworkPolicy> {
  const rule = <K extends 'from' | 'to'>(k: K) => fc.record({ peers: list(peer(r, namespaces, podIPs), 2), ports: list(port(r), 2) }).map((x) => {
    const out: Record<string, unknown> = {};
    if (x.peers !== undefined) out[k] = x.peers;
    if (x.ports !== undefined) out['ports'] = x.ports;
    return out;
  });
  const rules = (k: 'from' | 'to') => (r.maxRules === 0 ? fc.constant(undefined) : list(rule(k), r.maxRules));
  return fc.record({
    namespace: fc.constantFrom(...namespaces),
    podSelector: selector('pod', namespaces),
    policyTypes: fc.constantFrom(undefined, ['Ingress'] as const, ['Egress'] as const, ['Ingress', 'Egress'] as const, [] as const),
    ingress: rules('from'),
    egress: rules('to'),
  }).map((p): K8sNetworkPolicy => ({
    kind: 'NetworkPolicy',
    metadata: { name: `p${index}`, namespace: p.namespace },
    spec: {
      podSelector: p.podSelector,
      ...(p.policyTypes === undefined ? {} : { policyTypes: [...p.policyTypes] }),
      ...(p.ingress === undefined ? {} : { ingress: p.ingress as NetworkPolicyIngressRule[] }),
      ...(p.egress === undefined ? {} : { egress: p.egress as NetworkPolicyEgressRule[] }),
    },
  }));
}

/**
 * Snapshots of a small cluster: namespaces `x`, `y`, … (label `team`, and the
 * `kubernetes.io/metadata.name` the API server sets), pods `NS/pN` on nodes `node-1` … with labels
 * `app`/`tier` and named ports (`http` on 80 or 8080, `alt` on 81, `dns` on UDP 53), and
 * policies the API server accepts (selectors with every operator, peers of every kind, ipBlocks
 * with excepts around the pod addresses, numbered, ranged, protocol-only and named ports, absent
 * and empty lists, every `policyTypes`).
 *
 * @example
 * ```ts
 * fc.assert(fc.property(networkPolicySnapshot({ maxPods: 4 }), (s) => s.pods.length <= 4));
 * ```
 */
export function networkPolicySnapshot(constraints?: NetworkPolicySnapshotConstraints): fc.Arbitrary<Snapshot> {
  const r = resolve('networkPolicySnapshot', constraints);
  return snapshotOf(r);
}

function snapshotOf(r: Resolved): fc.Arbitrary<Snapshot> {
  return fc.integer({ min: 1, max: r.maxNamespaces }).chain((nsCount) => {
    const namespaces = NAMESPACES.slice(0, nsCount);
    const ns = fc.tuple(...namespaces.map((n) => fc.record({ team: maybe(fc.constantFrom(...TEAMS)) }).map((l): K8sNamespace => ({
      kind: 'Namespace', metadata: { name: n, labels: { ...(l.team === undefined ? {} : { team: l.team }), 'kubernetes.io/metadata.name': n } },
    }))));
    const pod = fc.record({ namespace: fc.constantFrom(...namespaces), labels: podLabels, ports: containerPorts, node: fc.integer({ min: 1, max: r.nodes }) });
    return fc.tuple(ns, fc.array(pod, { minLength: r.minPods, maxLength: r.maxPods })).chain(([nsObjects, podSpecs]) => {
      const pods = podSpecs.map((p, i): K8sPod => {
        const ip = `10.244.${p.node}.${10 + i}`;
        return {
          kind: 'Pod',
          metadata: { name: `p${i}`, namespace: p.namespace, labels: p.labels },
          spec: { nodeName: `node-${p.node}`, containers: [{ name: 'app', ports: p.ports }] },
          status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: `192.168.0.${10 + p.node}` },
        };
      });
      const ips = pods.map((p) => p.status!.podIP!);
      return fc.integer({ min: 0, max: r.maxPolicies }).chain((n) =>
        fc.tuple(...Array.from({ length: n }, (_, i) => policy(r, i, namespaces, ips))).map((policies): Snapshot => ({
          namespaces: nsObjects,
          nodes: Array.from({ length: r.nodes }, (_, k) => ({
            kind: 'Node' as const,
            metadata: { name: `node-${k + 1}` },
            spec: { podCIDR: `10.244.${k + 1}.0/24` },
            status: { addresses: [{ type: 'InternalIP' as const, address: `192.168.0.${11 + k}` }] },
          })),
          pods,
          services: [],
          endpointSlices: [],
          networkPolicies: policies,
          warnings: [],
        })),
      );
    });
  });
}

/**
 * A snapshot and connections between its pods (and from a node to them): TCP mostly, UDP
 * sometimes, on the ports the pods declare and one they do not.
 *
 * @example
 * ```ts
 * fc.assert(fc.property(networkPolicyCase(), ({ snapshot, probes }) => probes.every((p) => p.from !== p.to)));
 * ```
 */
export function networkPolicyCase(constraints?: NetworkPolicySnapshotConstraints & { readonly maxProbes?: number }): fc.Arbitrary<{ readonly snapshot: Snapshot; readonly probes: readonly NetworkPolicyProbe[] }> {
  checkKnownKeys('networkPolicyCase', constraints, [...KEYS, 'maxProbes']);
  const { maxProbes, ...rest } = constraints ?? {};
  const probesMax = checkInt('networkPolicyCase', 'maxProbes', maxProbes, 1, 1000, 8);
  const r = resolve('networkPolicyCase', { ...rest, minPods: Math.max(2, rest.minPods ?? 2) });
  return snapshotOf(r).chain((snapshot) => {
    const names = snapshot.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`);
    const nodesOf = snapshot.pods.map((p) => `node:${p.spec.nodeName}`);
    const probe = fc.record({
      from: fc.oneof({ arbitrary: fc.constantFrom(...names), weight: 9 }, { arbitrary: fc.constantFrom(...nodesOf), weight: 1 }),
      to: fc.constantFrom(...names),
      port: fc.constantFrom(...PROBE_PORTS),
      protocol: fc.constantFrom<'TCP' | 'UDP'>('TCP', 'TCP', 'TCP', 'UDP'),
    }).filter((p) => p.from !== p.to);
    return fc.array(probe, { minLength: 1, maxLength: probesMax }).map((probes) => ({ snapshot, probes }));
  });
}
