// One node of a cluster as a namespace, for enforcers' rules: its pods are /32 routes to one veth
// each (the ptp shape), the node holds 192.168.0.1N/24 on eth0, forwards, and every pod listens on
// every probe port. The same topology is built in the kernel (test/kernel/netpol-node.py) and in
// a `Netns` (here), so a probe's outcome can be compared between them and with the reference
// evaluator.
import type { Snapshot } from '../../src/model/kubernetes.js';
import { Netns } from '../../src/engine/index.js';
import type { ConnectResult } from '../../src/engine/index.js';
import type { NetworkPolicyProbe } from '../../src/arbitraries/index.js';
import { PROBE_PORTS } from '../../src/arbitraries/netpol.js';

export interface NodeLayout {
  readonly node: string;
  readonly nodeAddress: string;
  /** Local pods: key, address, veth name. */
  readonly pods: readonly { readonly key: string; readonly ip: string; readonly veth: string }[];
}

/** The node's local pods (running, addressed, not hostNetwork) and where they hang. */
export function nodeLayout(snapshot: Snapshot, node = 'node-1'): NodeLayout {
  const n = Number(/(\d+)$/.exec(node)?.[1] ?? '1');
  const pods = snapshot.pods
    .filter((p) => p.spec.nodeName === node && p.spec.hostNetwork !== true && p.status?.podIP)
    .map((p, i) => ({ key: `${p.metadata.namespace}/${p.metadata.name}`, ip: p.status!.podIP!, veth: `veth${i + 1}` }));
  return { node, nodeAddress: `192.168.0.${10 + n}`, pods };
}

/** A `Netns` standing for the node, with the enforcer's rules. */
export function nodeNetns(layout: NodeLayout, rules: { rules?: string; ipsets?: string; nft?: string }): Netns {
  const interfaces: Record<string, string[]> = { eth0: [`${layout.nodeAddress}/24`] };
  for (const p of layout.pods) interfaces[p.veth] = [];
  return new Netns({
    ...(rules.rules ? { rules: rules.rules } : {}),
    ...(rules.ipsets ? { ipsets: rules.ipsets } : {}),
    ...(rules.nft ? { nft: rules.nft } : {}),
    interfaces,
    gateway: [],
    routes: layout.pods.map((p) => ({ dst: `${p.ip}/32`, dev: p.veth })),
    ipForward: true,
    peers: Object.fromEntries(layout.pods.map((p) => [p.ip, [...PROBE_PORTS]])),
  });
}

/** Runs a probe through the node: a pod's connection arrives on its veth; the node's own leaves from a local socket. */
export function probeNode(ns: Netns, layout: NodeLayout, probe: NetworkPolicyProbe, trace = false): ConnectResult {
  const to = layout.pods.find((p) => p.key === probe.to);
  if (!to) throw new Error(`probe to ${probe.to}: not a pod of ${layout.node}`);
  const proto = probe.protocol === 'UDP' ? 'udp' : 'tcp';
  const dst = `${to.ip}:${probe.port}`;
  if (probe.from.startsWith('node:')) return ns.connect({ from: 'local', uid: 0, dst, proto }, { trace });
  const from = layout.pods.find((p) => p.key === probe.from);
  if (!from) throw new Error(`probe from ${probe.from}: not a pod of ${layout.node}`);
  return ns.connect({ from: 'remote', src: from.ip, iface: from.veth, dst, proto }, { trace });
}

/** The reference evaluator's spelling of a probe's source. */
export function probeSource(probe: NetworkPolicyProbe): string | { node: string } {
  return probe.from.startsWith('node:') ? { node: probe.from.slice(5) } : probe.from;
}
