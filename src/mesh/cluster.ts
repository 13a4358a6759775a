/**
 * The mesh scenario on the cluster path (`mesh linkerd|istio --cluster SNAPSHOT`): the client and
 * server pods are taken from a cluster snapshot and placed on their nodes; each pod's namespace
 * holds its mesh's compiled rules and its proxy's sockets, the nodes hold kube-proxy's and the
 * CNI's rules and enforce the snapshot's NetworkPolicies, and every connection that leaves a pod
 * crosses the nodes as `Cluster.connect` drives it. A NetworkPolicy that drops the connection is
 * the verdict's cause, named with the port and source the enforcer saw and why the mesh made them so.
 *
 * @module
 */
import type { K8sPod, K8sService, Snapshot } from '../model/kubernetes.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { expectArgument, expectOneOf } from '../model/guard.js';
import { printIptablesSave } from '../iptables/print/save.js';
import { readNamespace, readPod, type Namespace, type Pod } from '../compile/pod.js';
import { Cluster, type ClusterConnectResult, type PodExtras } from '../cluster/cluster.js';
import type { CniMode, KubeProxyMode, NetpolImplementation, PolicyVerdict } from '../cluster/components.js';
import { readSnapshot, type SnapshotSource } from '../cluster/snapshot.js';
import { canonicalAddress, findService, formatAddr, parseAddr, type Addr } from './address.js';
import { prepareMeshPod, runMeshScenario, type MeshCrossing, type MeshNetwork, type MeshTransport } from './simulate.js';
import { podRuntime } from './runtime.js';
import type { ListenerSpec } from '../engine/path/netns.js';
import type { MeshHop, MeshPod, MeshPolicyStop, MeshResult, MeshScenarioOptions, MeshService } from './types.js';
import { AMBIENT } from '../compile/istio/ambient-config.js';

/**
 * What {@link simulateMeshOnCluster} takes: the scenario's options (the pods named in the
 * snapshot instead of given as manifests) and the cluster's.
 *
 * @example
 * ```ts
 * const o: MeshClusterOptions = { mesh: 'linkerd', snapshot: yaml, client: 'shop/web', server: 'shop/redis', dst: 'shop/svc/redis' };
 * ```
 */
export interface MeshClusterOptions extends Omit<MeshScenarioOptions, 'client' | 'server' | 'namespace' | 'services'> {
  /** The snapshot: read already, or its text(s). */
  readonly snapshot: Snapshot | string | readonly SnapshotSource[];
  /** `NS/POD` of the client and the server. */
  readonly client: string;
  readonly server: string;
  /**
   * `ADDR:PORT`, or `NS/svc/NAME[:PORT]` (the Service's ClusterIP; its only port unless given).
   * Default: the server pod's first address and application port.
   */
  readonly dst?: string;
  readonly kubeProxy?: KubeProxyMode;
  readonly netpol?: NetpolImplementation;
  readonly cni?: boolean;
  /** How pods are joined to their node (the cluster's `--cni bridge|ptp`). */
  readonly cniMode?: CniMode;
  readonly hairpin?: boolean;
  readonly nodeRules?: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Who translates a Service address: `kube-proxy` (default: the node's rules, after the pod's) or
   * `socket` (a socket load balancer at connect(), as Cilium's, before the pod's rules: the
   * proxy's `SO_ORIGINAL_DST` is then the endpoint).
   */
  readonly serviceLb?: 'kube-proxy' | 'socket';
}

/**
 * The result of {@link simulateMeshOnCluster}: the scenario's result, with the nodes the pods run
 * on and the cluster's warnings.
 *
 * @example
 * ```ts
 * const r: MeshClusterResult = simulateMeshOnCluster({ mesh: 'istio', snapshot: yaml, client: 'shop/web', server: 'shop/api' });
 * r.nodes; // { client: 'worker-1', server: 'worker-2' }
 * ```
 */
export interface MeshClusterResult extends MeshResult {
  readonly nodes: { readonly client: string; readonly server: string };
  readonly warnings: readonly string[];
}

function fail(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_PROBE', message));
}

function findPod(snapshot: Snapshot, key: string, what: string): K8sPod {
  expectArgument(key, 'string', what);
  const [ns, name, ...more] = key.split('/');
  if (ns === undefined || name === undefined || more.length > 0 || ns === '' || name === '') fail(`--${what} ${key}: write NS/POD`);
  const pod = snapshot.pods.find((p) => (p.metadata.namespace ?? 'default') === ns && p.metadata.name === name);
  if (pod === undefined) {
    const why = snapshot.warnings.find((w) => w.startsWith(`Pod ${key}:`));
    if (why !== undefined) fail(`--${what} ${key} is not on the cluster path: ${why.slice(`Pod ${key}: `.length)}`);
    const known = snapshot.pods.map((p) => `${p.metadata.namespace ?? 'default'}/${p.metadata.name}`);
    fail(`--${what}: no pod ${key} in the snapshot${known.length > 0 ? ` (pods: ${known.slice(0, 8).join(', ')}${known.length > 8 ? ', …' : ''})` : ''}`);
  }
  if (pod.spec.hostNetwork === true) fail(`--${what} ${key} runs on the host network: it has no namespace of its own to hold a mesh's rules (meshes do not inject host-network pods)`);
  return pod;
}

function namespaceOf(snapshot: Snapshot, pod: K8sPod): Namespace | undefined {
  const n = snapshot.namespaces.find((x) => x.metadata.name === (pod.metadata.namespace ?? 'default'));
  return n === undefined ? undefined : readNamespace(JSON.stringify(n));
}

/** The snapshot's ClusterIP Services with their ready endpoints, as the proxies resolve them. */
export function snapshotServices(snapshot: Snapshot): MeshService[] {
  const out: MeshService[] = [];
  for (const svc of snapshot.services) {
    const ips = (svc.spec.clusterIPs ?? []).filter((ip) => ip !== 'None');
    for (const port of svc.spec.ports ?? []) {
      const proto = (port.protocol ?? 'TCP').toLowerCase();
      if (proto !== 'tcp' && proto !== 'udp') continue;
      for (const ip of ips) {
        const family = ip.includes(':') ? 'IPv6' : 'IPv4';
        const endpoints = endpointsOf(snapshot, svc, port.name ?? '', family, proto);
        out.push({ vip: canonicalAddress(ip) ?? ip, port: port.port, proto, endpoints });
      }
    }
  }
  return out;
}

function endpointsOf(snapshot: Snapshot, svc: K8sService, portName: string, family: 'IPv4' | 'IPv6', proto: string): { address: string; port: number }[] {
  const out: { address: string; port: number }[] = [];
  for (const slice of snapshot.endpointSlices) {
    if (slice.metadata.namespace !== svc.metadata.namespace || slice.metadata.labels?.['kubernetes.io/service-name'] !== svc.metadata.name || slice.addressType !== family) continue;
    const p = (slice.ports ?? []).find((x) => (x.name ?? '') === portName && (x.protocol ?? 'TCP').toLowerCase() === proto);
    if (p?.port === undefined || p.port === null) continue;
    for (const e of slice.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const a of e.addresses) out.push({ address: canonicalAddress(a) ?? a, port: p.port });
    }
  }
  return out;
}

/** What a pod's namespace holds in the cluster: the mesh's rules, its sockets and its routing. */
function podExtras(pod: MeshPod, phase: string, addresses: readonly string[]): PodExtras {
  const rt = podRuntime(pod, phase, addresses);
  const written = rt.state.rules;
  const rules: string[] = [];
  const v6 = addresses.some((a) => a.includes(':'));
  if (written && pod.rules4 !== null) rules.push(printIptablesSave(pod.rules4));
  if (written && v6 && pod.rules6 !== null) rules.push(printIptablesSave(pod.rules6));
  if (written && pod.nft !== undefined) rules.push(pod.nft);
  const o = rt.options;
  const ifaces = Array.isArray(o.interfaces) ? (o.interfaces as readonly { name: string; addresses?: readonly string[] }[]) : [];
  const lo = ifaces.find((i) => i.name === 'lo')?.addresses ?? [];
  const listen = (o.listen ?? []).filter((l): l is ListenerSpec => typeof l === 'object');
  return { rules, listen, loopback: [...lo], routes: [...(o.routes ?? [])], ipRules: [...(o.ipRules ?? [])] };
}

/** What {@link meshClusterPlan} builds: the cluster with the two pods' mesh rules, and what it was built from. @internal */
export interface MeshClusterPlan {
  readonly snapshot: Snapshot;
  readonly cluster: Cluster;
  /** What each of the two pods' namespaces holds (`ns/name` → rules, listeners, routing). */
  readonly podRules: Readonly<Record<string, PodExtras>>;
  readonly client: Pod;
  readonly server: Pod;
  readonly clientNs: Namespace | undefined;
  readonly serverNs: Namespace | undefined;
  readonly services: readonly MeshService[];
}

/**
 * The cluster a mesh scenario runs on: the snapshot read, the two pods prepared as their mesh runs
 * them, their rules and sockets placed in their namespaces. @internal
 */
export function meshClusterPlan(options: MeshClusterOptions): MeshClusterPlan {
  expectArgument(options, 'object', 'options');
  expectOneOf(options.serviceLb, ['kube-proxy', 'socket'], 'options.serviceLb', true);
  const snap = options.snapshot;
  expectArgument(snap, ['string', 'array', 'object'], 'options.snapshot');
  const snapshot: Snapshot = typeof snap === 'string' || Array.isArray(snap) ? readSnapshot(snap as string | readonly SnapshotSource[]) : (snap as Snapshot);
  const clientK8s = findPod(snapshot, options.client, 'client');
  const serverK8s = findPod(snapshot, options.server, 'server');
  const client = readPod(JSON.stringify(clientK8s));
  const server = readPod(JSON.stringify(serverK8s));
  const clientNs = namespaceOf(snapshot, clientK8s);
  const serverNs = namespaceOf(snapshot, serverK8s);
  const services = snapshotServices(snapshot);
  const phase = options.phase ?? 'app';
  const prep = (pod: typeof client, ns: Namespace | undefined, role: 'client' | 'server'): MeshPod =>
    prepareMeshPod(options.mesh, pod, {
      ...(ns ? { namespace: ns } : {}),
      ...(options.cni !== undefined ? { cni: options.cni } : {}),
      ...(options.nativeSidecars !== undefined ? { nativeSidecars: options.nativeSidecars } : {}),
      cniNotReady: options.cniNotReady === true || options.cniNotReady === role,
      ...(options.ambient === true || options.ambient === role ? { ambient: true } : {}),
      ...(options.nativeNftables !== undefined ? { nativeNftables: options.nativeNftables } : {}),
      ...(options.dnsCapture !== undefined ? { dnsCapture: options.dnsCapture } : {}),
    });
  const clientKey = options.client;
  const serverKey = options.server;
  const same = clientKey === serverKey;
  const clientMesh = prep(client, clientNs, 'client');
  const serverMesh = same ? clientMesh : prep(server, serverNs, 'server');
  const addrs = (p: MeshPod): string[] => p.pod.podIPs.map((ip) => canonicalAddress(ip) ?? ip);
  const podRules: Record<string, PodExtras> = { [clientKey]: podExtras(clientMesh, phase, addrs(clientMesh)) };
  if (!same) podRules[serverKey] = podExtras(serverMesh, 'app', addrs(serverMesh));
  let cluster: Cluster;
  try {
    cluster = new Cluster({
      snapshot,
      ...(options.kubeProxy !== undefined ? { kubeProxy: options.kubeProxy } : {}),
      ...(options.netpol !== undefined ? { netpol: options.netpol } : {}),
      ...(options.cniMode !== undefined ? { cni: options.cniMode } : {}),
      ...(options.hairpin !== undefined ? { hairpin: options.hairpin } : {}),
      ...(options.nodeRules !== undefined ? { nodeRules: options.nodeRules } : {}),
      podRules,
    });
  } catch (e) {
    // A pod the path leaves out (its node is not in the snapshot, it has no address of its CIDR, …).
    const m = e instanceof NetfilterSimError ? /^pod rules for "([^"]+)", which is not a pod with a namespace of its own in the cluster(?: \((.*)\))?$/.exec(e.message) : null;
    if (m) fail(`--${m[1] === clientKey ? 'client' : 'server'} ${m[1]} is not on the cluster path${m[2] !== undefined ? `: ${m[2]}` : ''}`);
    throw e;
  }
  return { snapshot, cluster, podRules, client, server, clientNs, serverNs, services };
}

/**
 * Runs the mesh scenario between two pods of a cluster snapshot over the cluster path: the
 * client's rules and proxy, its node, the other node, the server's rules and proxy; kube-proxy
 * translates a Service that no proxy resolved (or a socket load balancer does at connect()), the
 * snapshot's NetworkPolicies are enforced at the pods' veths. A policy that drops the connection
 * is named in its hop, in `policy` and in the diagnosis.
 *
 * @example
 * ```ts
 * const r = simulateMeshOnCluster({ mesh: 'linkerd', snapshot: yaml, client: 'shop/web', server: 'shop/redis' });
 * r.verdict;          // 'dropped'
 * r.policy?.port;     // 4143: the proxy's inbound port, where the opaque port 6379 travels
 * r.diagnosis[0];     // 'dropped by NetworkPolicy shop/redis (ingress to shop/redis on node worker-2): …'
 * ```
 */
export function simulateMeshOnCluster(options: MeshClusterOptions): MeshClusterResult {
  const { snapshot, cluster, client, server, clientNs, serverNs, services } = meshClusterPlan(options);
  const clientKey = options.client;
  const serverKey = options.server;
  const planned = (key: string) => cluster.topology.pods.find((p) => p.key === key)!;
  const nodeOf = (key: string): string => planned(key).node;
  const keyOf = (addresses: readonly string[]): string | null => cluster.topology.pods.find((p) => !p.hostNetwork && p.addresses.some((a) => addresses.includes(a.text)))?.key ?? null;
  const proto = options.proto ?? 'tcp';
  const dst = options.dst !== undefined ? destination(cluster, snapshot, options.dst, proto) : undefined;

  const network: MeshNetwork = {
    socketLb: options.serviceLb === 'socket'
      ? (to: Addr, p: 'tcp' | 'udp') => {
          const svc = findService(services, to.address, to.port, p);
          if (!svc) return null;
          const ep = svc.endpoints[0]!;
          const d: Addr = { family: to.family, address: canonicalAddress(ep.address) ?? ep.address, port: ep.port };
          return { dst: d, note: `the socket load balancer translates Service ${formatAddr(to.address, to.port)} to ${formatAddr(d.address, d.port)} at connect(), before the pod's rules` };
        }
      : null,
    cross: (c) => crossCluster(cluster, keyOf, nodeOf, c),
    probe: (c) => probeAtVeth(cluster, keyOf, nodeOf, c),
  };
  const scenario: MeshScenarioOptions = {
    ...options,
    client,
    server,
    services,
    ...(dst !== undefined ? { dst } : {}),
  };
  delete (scenario as { snapshot?: unknown }).snapshot;
  const result = runMeshScenario(scenario, network, { client: clientNs, server: serverNs });
  return { ...result, nodes: { client: nodeOf(clientKey), server: nodeOf(serverKey) }, warnings: cluster.warnings };
}

/** `--dst`: an address, or `NS/svc/NAME[:PORT]` read as the Service's ClusterIP. */
function destination(cluster: Cluster, snapshot: Snapshot, text: string, proto: 'tcp' | 'udp'): string {
  const m = /^([^/]+)\/svc\/([^/:]+)(?::(\d+))?$/.exec(text);
  if (!m) return text;
  const svc = snapshot.services.find((s) => s.metadata.namespace === m[1] && s.metadata.name === m[2]);
  if (svc === undefined) fail(`--dst ${text}: no Service ${m[1]}/${m[2]} in the snapshot`);
  const ip = (svc.spec.clusterIPs ?? []).find((x) => x !== 'None');
  if (ip === undefined) fail(`--dst ${text}: the Service has no ClusterIP`);
  const ports = (svc.spec.ports ?? []).filter((p) => (p.protocol ?? 'TCP').toLowerCase() === proto);
  const port = m[3] !== undefined ? Number(m[3]) : ports.length === 1 ? ports[0]!.port : fail(`--dst ${text}: give the port (NS/svc/NAME:PORT; the Service has ${ports.map((p) => p.port).join(', ') || 'no such'} ports)`);
  if (!ports.some((p) => p.port === port)) fail(`--dst ${text}: the Service has no ${proto.toUpperCase()} port ${port}`);
  void cluster;
  return formatAddr(canonicalAddress(ip) ?? ip, port);
}

/** The address of the first NAT binding of `manip` in a namespace, or null. */
function natIn(r: ClusterConnectResult, namespace: string, manip: 'DST' | 'SRC'): { from: string; to: string; action: string } | null {
  for (const e of r.trace ?? []) {
    if (e.namespace === namespace && e.type === 'nat' && e.packet === 0 && e.manip === manip && (e.action === 'DNAT' || e.action === 'REDIRECT' || e.action === 'SNAT' || e.action === 'MASQUERADE')) return { from: e.from, to: e.to, action: e.action };
  }
  return null;
}

function hostOf(endpoint: string): string {
  return endpoint.startsWith('[') ? endpoint.slice(1, endpoint.indexOf(']')) : endpoint.slice(0, endpoint.lastIndexOf(':'));
}

/** The node hops of a cluster connection, as mesh hops. */
function nodeHops(r: ClusterConnectResult, src: string, dst: Addr, policy: MeshPolicyStop | null): MeshHop[] {
  const out: MeshHop[] = [];
  const places = r.hops.filter((h) => h.namespace.startsWith('node/') || h.namespace === 'outside');
  places.forEach((h, i) => {
    const last = i === places.length - 1;
    const dnat = natIn(r, h.namespace, 'DST');
    const snat = natIn(r, h.namespace, 'SRC');
    const parts: string[] = [];
    if (dnat) parts.push(`${dnat.action} ${dnat.from} → ${dnat.to}${h.namespace.startsWith('node/') ? ' (kube-proxy)' : ''}`);
    if (snat) parts.push(`${snat.action} source ${snat.from} → ${snat.to}`);
    parts.push(`in ${h.in ?? '-'}, out ${h.out ?? '-'}`);
    const stopped = last && r.outcome !== 'local' && r.outcome !== 'remote';
    if (stopped) parts.push(r.reason);
    out.push({
      pod: h.namespace, from: src, to: dnat ? dnat.to : formatAddr(dst.address, dst.port), why: parts.join('; '),
      receiver: stopped ? (r.outcome === 'refused' ? 'nothing: refused' : 'nothing: dropped') : h.out === null ? 'the node' : 'the network',
      outcome: stopped ? (r.outcome as 'refused' | 'dropped') : 'remote', originalDestination: null, rule: null, steps: h.steps,
      fromActor: i === 0 ? 'network' : places[i - 1]!.namespace, toActor: h.namespace,
      ...(stopped && policy !== null ? { policy } : {}),
    });
  });
  return out;
}

function policyStop(v: PolicyVerdict, pod: string, node: string, src: string, dst: string, port: number, protocol: 'TCP' | 'UDP', transport: MeshTransport | null, why: MeshPolicyStop['why'] = null): MeshPolicyStop {
  return {
    namespace: v.namespace, name: v.name, direction: v.direction, rule: v.rule, pod, node, src, dst, port, protocol,
    appPort: transport !== null && transport.port === port ? transport.appPort : null,
    why: why ?? (transport !== null && transport.port === port ? transport.why : null),
  };
}

/** A connection that left a pod, driven across the cluster. */
function crossCluster(
  cluster: Cluster,
  keyOf: (a: readonly string[]) => string | null,
  nodeOf: (key: string) => string,
  c: Parameters<MeshNetwork['cross']>[0],
): MeshCrossing {
  const from = keyOf(c.from);
  if (from === null) fail(`no pod of the cluster has the address ${c.from.join(', ')}`);
  const r = cluster.connect({ from, to: formatAddr(c.dst.address, c.dst.port), proto: c.proto, uid: c.uid, gid: c.gid, ...(c.mark !== null ? { mark: c.mark } : {}) }, { trace: true });
  const protocol = c.proto === 'udp' ? 'UDP' : 'TCP';
  // The destination the nodes sent it to (after kube-proxy), and the source they left it with.
  let finalDst = c.dst;
  let srcAddr = c.from[0]!;
  for (const h of r.hops) {
    if (!h.namespace.startsWith('node/')) continue;
    const d = natIn(r, h.namespace, 'DST');
    if (d) finalDst = parseAddr(d.to);
    const s = natIn(r, h.namespace, 'SRC');
    if (s) srcAddr = hostOf(s.to);
  }
  const notes: string[] = [];
  if (r.policy !== null) {
    const v = r.policy;
    const podKey = v.direction === 'egress' ? from : keyOf([finalDst.address]) ?? `${v.namespace}/?`;
    const stop = policyStop(v, podKey, podKey.endsWith('/?') ? '?' : nodeOf(podKey), srcAddr, finalDst.address, finalDst.port, protocol, c.transport);
    return { kind: 'dropped', hops: nodeHops(r, srcAddr, finalDst, stop), reason: r.reason, policy: stop, notes };
  }
  const hops = nodeHops(r, srcAddr, finalDst, null);
  if (r.outcome === 'remote') return { kind: 'external', hops, address: r.address!, port: r.port!, notes };
  if (r.outcome !== 'local') return { kind: r.outcome, hops, reason: r.reason, policy: null, notes };
  const source = parseAddr(r.source!);
  const arrived = parseAddr(r.originalDestination ?? formatAddr(r.address!, r.port!));
  const destKey = keyOf([arrived.address]);
  // The converse: a port-scoped policy the connection passed only because it arrived elsewhere.
  const t = c.transport;
  if (t !== null && destKey !== null && arrived.port === t.port && cluster.decidesAtVeth) {
    const would = cluster.policyVerdict({ direction: 'ingress', pod: destKey, protocol, src: source.address, dst: arrived.address, dport: t.appPort });
    const now = cluster.policyVerdict({ direction: 'ingress', pod: destKey, protocol, src: source.address, dst: arrived.address, dport: t.port });
    if (would !== null && now === null) {
      const how = t.why === 'hbone' ? `ztunnel's HBONE port ${t.port}` : `the proxy's inbound port ${t.port}`;
      notes.push(`NetworkPolicy: ${would.namespace}/${would.name} would drop ${t.appPort}/${protocol} from ${source.address} (ingress to ${destKey} on node ${nodeOf(destKey)}), but the connection arrived on ${how}, which the policies allow: their port rules no longer restrict meshed clients (the server's proxy forwards to ${t.appPort} inside the pod). Restrict meshed clients with the mesh's own authorization policy.`);
    }
  }
  return { kind: 'arrive', hops, src: source.address, sport: source.port, dst: arrived, notes };
}

/** The kubelet's probe at the server pod's veth on its node: the enforcer's ingress verdict. */
function probeAtVeth(
  cluster: Cluster,
  keyOf: (a: readonly string[]) => string | null,
  nodeOf: (key: string) => string,
  c: Parameters<MeshNetwork['probe']>[0],
): MeshCrossing {
  const key = keyOf(c.to);
  if (key === null) fail(`no pod of the cluster has the address ${c.to.join(', ')}`);
  const node = nodeOf(key);
  const planned = cluster.topology.nodes.find((n) => n.name === node)!;
  const family = c.dst.family;
  // Without the SNAT, the kubelet's source is the node's address on the way to the pod.
  const own = cluster.topology.cni === 'bridge' ? planned.bridge.find((b) => b.family === family)?.text : planned.internal.find((a) => a.family === family)?.text;
  const src = c.src ?? own ?? c.to[0]!;
  const protocol = c.proto === 'udp' ? 'UDP' : 'TCP';
  // The enforcer knows a node by its InternalIP; a probe that keeps the node's own source (cni0's
  // address on the way to the pod) is the node's, asked about as such.
  const asked = c.src === null ? planned.internal.find((a) => a.family === family)?.text ?? src : src;
  const v = cluster.policyVerdict({ direction: 'ingress', pod: key, protocol, src: asked, sport: c.sport, dst: c.dst.address, dport: c.dst.port });
  const base = { pod: `node/${node}`, from: formatAddr(src, c.sport), to: formatAddr(c.dst.address, c.dst.port), originalDestination: null, rule: null, steps: [], fromActor: 'network', toActor: `node/${node}` };
  const enforcer = cluster.decidesAtVeth ? `the ${cluster.netpol} NetworkPolicy enforcer at ${key}'s veth` : 'no enforcer at the veth';
  if (v !== null) {
    const stop = policyStop(v, key, node, src, c.dst.address, c.dst.port, protocol, null, c.src !== null ? 'probe-snat' : null);
    const hop: MeshHop = { ...base, why: `${enforcer}: dropped by NetworkPolicy ${v.namespace}/${v.name} (ingress, ${v.rule === null ? 'isolated, and no rule allows it' : `rule ${v.rule}`})`, receiver: 'nothing: dropped', outcome: 'dropped', policy: stop };
    return { kind: 'dropped', hops: [hop], reason: `dropped by NetworkPolicy ${v.namespace}/${v.name} at ${key}'s veth on ${node}`, policy: stop, notes: [] };
  }
  const why = c.src === null ? `${enforcer} admits it: from ${src}, the pod's own node` : `${enforcer} admits it from ${src}${c.src === AMBIENT.HOST_PROBE_SNAT ? ' (the probe SNAT address)' : ''}`;
  const notes = cluster.netpol !== 'none' && !cluster.decidesAtVeth
    ? [`note: the kubelet's probe is judged by an enforcer that decides at the veth (--netpol reference); the ${cluster.netpol} enforcer's rules on the node are not run for it here, so no NetworkPolicy was applied to the probe`]
    : [];
  return { kind: 'arrive', hops: [{ ...base, why, receiver: 'the network', outcome: 'remote' }], src, sport: c.sport, dst: c.dst, notes };
}
