/**
 * The cluster's namespaces and links, planned from a snapshot as the reference CNI plugins join
 * them: nodes on one segment with a gateway, a `cni0` bridge per node (or a point-to-point veth
 * per pod), routes to every other node's pod CIDR, and pods with their addresses and listeners.
 * Plain data; `cluster.ts` turns it into namespaces.
 *
 * @module
 */
import type { K8sNode, K8sPod, Snapshot } from '../model/kubernetes.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { nodeAddresses, objectName } from './snapshot.js';
import { cidrHolds, nthAddress, parseIp, parseIpCidr } from './addresses.js';
import type { IpAddress, IpCidr } from './addresses.js';
import type { CniMode } from './components.js';

/** A socket a container listens on. */
export interface PlannedListener {
  readonly port: number;
  readonly proto: 'tcp' | 'udp' | 'sctp';
  readonly container: string;
}

/** A pod on the path. */
export interface PlannedPod {
  /** `ns/name`. */
  readonly key: string;
  /** The namespace's name in traces: `pod/ns/name` (a hostNetwork pod: its node's). */
  readonly place: string;
  readonly pod: K8sPod;
  readonly node: string;
  readonly hostNetwork: boolean;
  /** Its addresses (a hostNetwork pod: its node's InternalIPs). */
  readonly addresses: readonly IpAddress[];
  /** The node side of its veth: a port of `cni0`, or (ptp) the node's interface to it; '' for hostNetwork. */
  readonly veth: string;
  readonly listeners: readonly PlannedListener[];
}

/** A node on the path. */
export interface PlannedNode {
  readonly name: string;
  /** `node/NAME`. */
  readonly place: string;
  readonly node: K8sNode;
  readonly internal: readonly IpAddress[];
  readonly cidrs: readonly IpCidr[];
  /** `eth0`'s addresses with their prefix (`192.168.0.10/24`). */
  readonly eth0: readonly string[];
  /** The segment's gateway of each family (the outside router). */
  readonly gateways: readonly string[];
  /** `cni0`'s addresses (the first address of each pod CIDR), bridge mode only. */
  readonly bridge: readonly IpAddress[];
  readonly pods: readonly PlannedPod[];
}

/** The router that stands for everything outside the cluster. */
export interface PlannedOutside {
  readonly place: 'outside';
  /** Its addresses on the nodes' segment, with prefix. */
  readonly eth0: readonly string[];
}

/** The whole plan. */
export interface Topology {
  readonly cni: CniMode;
  readonly hairpin: boolean;
  readonly nodes: readonly PlannedNode[];
  readonly pods: readonly PlannedPod[];
  readonly outside: PlannedOutside;
  /** Why the topology left some pod out, by `ns/name`. */
  readonly leftOut: ReadonlyMap<string, string>;
  readonly warnings: readonly string[];
}

/** `veth` and 8 hex digits, as the bridge plugin names the node side, here from the pod's name (stable). */
function vethName(key: string, taken: Set<string>): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  for (;;) {
    const name = `veth${h.toString(16).padStart(8, '0')}`;
    if (!taken.has(name)) {
      taken.add(name);
      return name;
    }
    h = (h + 1) >>> 0;
  }
}

/** The listeners of a pod: every declared container port (and a native sidecar's). */
function listenersOf(pod: K8sPod): PlannedListener[] {
  const out: PlannedListener[] = [];
  const containers = [...pod.spec.containers, ...(pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      const proto = p.protocol === 'UDP' ? 'udp' : p.protocol === 'SCTP' ? 'sctp' : 'tcp';
      if (!out.some((l) => l.port === p.containerPort && l.proto === proto)) out.push({ port: p.containerPort, proto, container: c.name });
    }
  }
  return out;
}

/** The segment of a node address: the /24 (IPv4) or /64 (IPv6) around it. */
function segmentOf(a: IpAddress): IpCidr {
  return parseIpCidr(`${a.text}/${a.family === 4 ? 24 : 64}`)!;
}

/**
 * Plans the cluster. Nodes keep their order; pods their order on each node. A pod the chosen CNI
 * cannot place (bridge mode and a node without a pod CIDR of the pod's family) is left out, with
 * the reason in {@link Topology.leftOut} and a warning.
 */
export function planTopology(snapshot: Snapshot, cni: CniMode, hairpin: boolean): Topology {
  const warnings: string[] = [];
  const leftOut = new Map<string, string>();
  const podsOf = new Map<string, K8sPod[]>();
  for (const p of snapshot.pods) {
    const list = podsOf.get(p.spec.nodeName!) ?? [];
    list.push(p);
    podsOf.set(p.spec.nodeName!, list);
  }
  // The outside router: the first free host of every segment the nodes are on.
  const nodeIps = new Set(snapshot.nodes.flatMap((n) => nodeAddresses(n).internal.map((a) => a.text)));
  const segments: IpCidr[] = [];
  for (const n of snapshot.nodes) for (const a of nodeAddresses(n).internal) if (!segments.some((s) => s.text === segmentOf(a).text)) segments.push(segmentOf(a));
  const gatewayOf = new Map<string, IpAddress>();
  for (const s of segments) {
    let k = 1;
    let g = nthAddress(s, k);
    while (nodeIps.has(g.text)) g = nthAddress(s, ++k);
    if (!cidrHolds(s, g)) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `no free address for the outside gateway on ${s.text}`));
    gatewayOf.set(s.text, g);
  }
  const allPods: PlannedPod[] = [];
  const nodes: PlannedNode[] = [];
  for (const n of snapshot.nodes) {
    const { internal, cidrs } = nodeAddresses(n);
    const families = new Set<number>();
    const ips = internal.filter((a) => (families.has(a.family) ? false : (families.add(a.family), true)));
    const bridge = cni === 'bridge' ? cidrs.map((c) => nthAddress(c, 1)) : [];
    const taken = new Set<string>();
    const pods: PlannedPod[] = [];
    for (const p of podsOf.get(n.metadata.name) ?? []) {
      const key = objectName(p);
      if (p.spec.hostNetwork === true) {
        pods.push({ key, place: `node/${n.metadata.name}`, pod: p, node: n.metadata.name, hostNetwork: true, addresses: ips, veth: '', listeners: listenersOf(p) });
        continue;
      }
      const addresses = (p.status?.podIPs ?? []).map((x) => parseIp(x.ip)!);
      if (cni === 'bridge') {
        const outside = addresses.find((a) => !cidrs.some((c) => cidrHolds(c, a)));
        if (outside !== undefined) {
          const why = `its node ${n.metadata.name} has no pod CIDR holding ${outside.text}, which the bridge plugin needs (--cni ptp routes pods one by one)`;
          leftOut.set(key, why);
          warnings.push(`Pod ${key}: ${why}: left out of the cluster`);
          continue;
        }
      }
      pods.push({ key, place: `pod/${key}`, pod: p, node: n.metadata.name, hostNetwork: false, addresses, veth: vethName(key, taken), listeners: listenersOf(p) });
    }
    const eth0 = ips.map((a) => `${a.text}/${a.family === 4 ? 24 : 64}`);
    const gateways = ips.map((a) => gatewayOf.get(segmentOf(a).text)!.text);
    nodes.push({ name: n.metadata.name, place: `node/${n.metadata.name}`, node: n, internal: ips, cidrs, eth0, gateways, bridge, pods });
    for (const p of pods) allPods.push(p);
  }
  const outside: PlannedOutside = { place: 'outside', eth0: segments.map((s) => `${gatewayOf.get(s.text)!.text}/${s.prefix}`) };
  return { cni, hairpin, nodes, pods: allPods, outside, leftOut, warnings };
}
