/**
 * `Cluster`: a snapshot's nodes and pods as network namespaces joined as a CNI joins them, and
 * one connection driven end to end across every namespace it crosses (the source pod, its node,
 * the other node, the destination pod, and every answer back), with conntrack in each, traced
 * hop by hop. `cluster connect` prints its result; `cluster reach` its matrix.
 *
 * @module
 */
import type { K8sPod, K8sService, Snapshot } from '../model/kubernetes.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import type { ErrorCode } from '../model/errors.js';
import { expectArgument, expectFields, expectOneOf, expectShape } from '../model/guard.js';
import { TCP_FLAGS } from '../model/packet.js';
import type { SocketView } from '../model/packet.js';
import type { Family } from '../model/types.js';
import { addressText, formatEndpoint } from '../model/address.js';
import { Netns, stepsOf } from '../engine/path/netns.js';
import type { ConnectStep, ListenerSpec } from '../engine/path/netns.js';
import { parseEndpoint } from '../engine/path/probe.js';
import type { RouteSpec, RuleSpec } from '../engine/state/routing.js';
import { errnoOfAnswer } from '../engine/path/helpers.js';
import type { SocketRecord } from '../engine/state/packet-state.js';
import type { TraceEvent } from '../engine/trace/events.js';
import { PROTO } from '../engine/state/constants.js';
import { printIptablesSave } from '../iptables/print/save.js';
import { formatIptablesSave } from '../iptables/fmt.js';
import { formatNftRuleset } from '../nftables/index.js';
import { readSnapshot, objectName } from './snapshot.js';
import type { SnapshotSource } from './snapshot.js';
import { planTopology } from './topology.js';
import type { PlannedNode, PlannedPod, Topology } from './topology.js';
import { COMPONENTS, classifyRules, kubeProxyRules, loadNodeRules, policyEnforcer } from './components.js';
import type { CniMode, KubeProxyMode, NetpolImplementation, NodeRuleSets, PolicyEnforcer, PolicyVerdict } from './components.js';
import { Fabric } from './path.js';
import type { End, Place } from './path.js';
import { endpointText } from './addresses.js';
import { reachAllPorts, reachPort } from './reach.js';
import type { AllPortsReachResult, ReachAttribution, ReachHost, ReachOptions, ReachProbe, ReachResult, ReachWhy } from './reach.js';

/** Options of {@link Cluster}. */
export interface ClusterOptions {
  /** The snapshot: read already, or its text(s) (see `readSnapshot`). */
  readonly snapshot: Snapshot | string | readonly SnapshotSource[];
  /** kube-proxy's mode on every node (default `iptables`); `none`: no Service translation. */
  readonly kubeProxy?: KubeProxyMode;
  /** Where NetworkPolicy is enforced (default `reference`); `none`: not at all. */
  readonly netpol?: NetpolImplementation;
  /** How pods are joined to their node (default `bridge`). */
  readonly cni?: CniMode;
  /** Hairpin mode on the bridge's ports (default false, the bridge plugin's default). */
  readonly hairpin?: boolean;
  /**
   * Real rules of a node, which replace what would be compiled for it: node name → texts
   * (`iptables-save`, `ip6tables-save` or `nft list ruleset` output), loaded in order.
   */
  readonly nodeRules?: Readonly<Record<string, string | readonly string[]>>;
  /** Seed of the random choices of every namespace (`statistic`, `numgen`; default 1). */
  readonly seed?: number;
  /**
   * What a pod's own namespace holds besides its containers' listeners, by `ns/name`: the rules a
   * mesh's init container or CNI plugin wrote there (iptables-save or nft text, loaded in order)
   * and more listeners (a proxy's, with its uid). A hostNetwork pod has no namespace of its own.
   */
  readonly podRules?: Readonly<Record<string, PodExtras>>;
}

/**
 * What a pod's namespace holds besides its containers' listeners (see {@link ClusterOptions.podRules}):
 * rules, more listeners, and the routing a mesh adds (addresses on `lo`, routes, `ip rule`s).
 */
export interface PodExtras {
  readonly rules?: readonly string[];
  readonly listen?: readonly ListenerSpec[];
  /** Addresses added to the pod's `lo` (`ADDR/LEN`, as Istio adds `::6/128`). */
  readonly loopback?: readonly string[];
  readonly routes?: readonly RouteSpec[];
  readonly ipRules?: readonly RuleSpec[];
}

/** A packet a NetworkPolicy enforcer is asked about (see {@link Cluster.policyVerdict}). */
export interface ClusterPolicyQuestion {
  readonly direction: 'ingress' | 'egress';
  /** The pod the direction is about, `NS/NAME`. */
  readonly pod: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly src: string;
  readonly sport?: number;
  readonly dst: string;
  readonly dport: number;
}

/** A connection to simulate. */
export interface ClusterConnectSpec {
  /** `NS/POD` or `NS/POD/CONTAINER` (the container's `runAsUser`/`runAsGroup` own the socket). */
  readonly from: string;
  /** `NS/POD`, `NS/svc/NAME` (the Service's ClusterIP), or `ADDR:PORT` / `[V6]:PORT`. */
  readonly to: string;
  /** The port, for a pod or Service target (default: its only port of the protocol). */
  readonly port?: number;
  /** Default `tcp`. */
  readonly proto?: 'tcp' | 'udp' | 'sctp';
  /** The address family, for a dual-stack target (default: the target's first address). */
  readonly family?: 4 | 6;
  /** The socket's owner instead of the container's `runAsUser`/`runAsGroup` (a proxy's, for instance). */
  readonly uid?: number;
  readonly gid?: number;
  /** `SO_MARK` on the connecting socket (default 0). */
  readonly mark?: number;
}

/** A trace step with the namespace it happened in. */
export interface ClusterStep extends ConnectStep {
  readonly namespace: string;
}

/** One namespace the connection crossed. */
export interface ClusterHop {
  /** `pod/NS/NAME`, `node/NAME`, or `outside` (the router to the world). */
  readonly namespace: string;
  /** Where the first packet came in (a node's bridge port `veth…`, `eth0`), null where it was made. */
  readonly in: string | null;
  /** Where it left, null where it ended. */
  readonly out: string | null;
  /** The steps of every packet of the exchange in this namespace, in order. */
  readonly steps: readonly ClusterStep[];
}

/** A trace event with the namespace it happened in. */
export type ClusterTraceEvent = TraceEvent & { readonly namespace: string };

/** The result of {@link Cluster.connect}: the `connect --json` object of the whole connection, and its hops. */
export interface ClusterConnectResult {
  readonly outcome: 'local' | 'remote' | 'refused' | 'dropped';
  /** `local`: the accepting socket's address as the destination app sees it; `remote`: where the connection left the cluster. */
  readonly address: string | null;
  readonly port: number | null;
  /** What the destination app's socket reads with `SO_ORIGINAL_DST` (null where its namespace tracks nothing). */
  readonly originalDestination: string | null;
  /** The source the destination saw (`getpeername()`), after any masquerade on the way. */
  readonly source: string | null;
  readonly steps: readonly ClusterStep[];
  readonly reason: string;
  /** What the client's `connect()` returns (see `ConnectResult.errno`); null when it connected. */
  readonly errno: string | null;
  /** The errno of a `connect()` that failed before any packet left. */
  readonly error?: string;
  readonly hops: readonly ClusterHop[];
  /** The NetworkPolicy that decided, when one did. */
  readonly policy: PolicyVerdict | null;
  /** Every event, each with its namespace (only when tracing). */
  readonly trace?: readonly ClusterTraceEvent[];
}

export type { ReachOptions, ReachWhy, ReachResult, ReachRange, AllPortsReachResult } from './reach.js';

function fail(code: ErrorCode, message: string): never {
  throw new NetfilterSimError(diagnostic(code, message));
}

/** A resolved destination. */
interface Target {
  readonly family: Family;
  readonly addr: readonly number[];
  readonly port: number;
}

/**
 * A cluster on the packet path.
 *
 * @example
 * ```ts
 * import { Cluster } from 'netfilter-sim';
 * const cluster = new Cluster({ snapshot: yamlText, kubeProxy: 'none', netpol: 'none' });
 * const r = cluster.connect({ from: 'shop/client', to: 'shop/web-2', port: 80 });
 * r.outcome;                       // 'local'
 * r.hops.map((h) => h.namespace);  // ['pod/shop/client', 'node/worker-1', 'node/worker-2', 'pod/shop/web-2']
 * ```
 */
export class Cluster {
  readonly snapshot: Snapshot;
  readonly topology: Topology;
  /** The snapshot's warnings, then the topology's and the components'. */
  readonly warnings: readonly string[];
  readonly kubeProxy: KubeProxyMode;
  readonly netpol: NetpolImplementation;
  private readonly fabric: Fabric;
  private readonly nodeRuleSets = new Map<string, NodeRuleSets>();
  private readonly podByKey = new Map<string, PlannedPod>();
  private readonly enforcer: PolicyEnforcer | null;
  /** Every rule text loaded into a node or pod namespace (the port cuts of `reach` read them). */
  private readonly ruleTexts: { readonly text: string; readonly where: string }[] = [];
  /** The rule texts as `iptables-save` and `nft list ruleset` list them (numbers for names), made on first use. */
  private listedTexts: { readonly text: string; readonly written: string; readonly where: string }[] | null = null;
  /** Whether real node rules were given (they may name any pod's address). */
  private readonly givenNodeRules: boolean;
  private readonly podsWithRules = new Set<string>();
  /** Where the last connection's first packet was taken by a socket (`local`), else null. */
  private lastDelivered: string | null = null;

  constructor(options: ClusterOptions) {
    expectArgument(options, 'object', 'options');
    expectOneOf(options.kubeProxy, ['iptables', 'nftables', 'none'], 'options.kubeProxy', true);
    expectOneOf(options.netpol, ['reference', 'kube-router', 'kube-router-nftables', 'kube-network-policies', 'none'], 'options.netpol', true);
    expectOneOf(options.cni, ['bridge', 'ptp'], 'options.cni', true);
    expectArgument(options.hairpin, ['boolean', 'undefined'], 'options.hairpin');
    expectShape(options.nodeRules, { kind: ['object', 'undefined'], values: { kind: ['string', 'array'], items: 'string' } }, 'options.nodeRules');
    expectArgument(options.seed, ['integer', 'undefined'], 'options.seed');
    expectShape(options.podRules, { kind: ['object', 'undefined'], values: { kind: 'object', fields: { rules: { kind: ['array', 'undefined'], items: 'string' }, listen: ['array', 'undefined'] } } }, 'options.podRules');
    const snap = options.snapshot;
    expectArgument(snap, ['string', 'array', 'object'], 'options.snapshot');
    this.snapshot = typeof snap === 'string' || Array.isArray(snap) ? readSnapshot(snap as string | readonly SnapshotSource[]) : rereadSnapshot(snap as Snapshot);
    this.kubeProxy = options.kubeProxy ?? 'iptables';
    this.netpol = options.netpol ?? 'reference';
    const cni = options.cni ?? 'bridge';
    this.topology = planTopology(this.snapshot, cni, options.hairpin ?? false);
    const warnings = [...this.snapshot.warnings, ...this.topology.warnings];
    const nodeRules = options.nodeRules ?? {};
    for (const name of Object.keys(nodeRules)) {
      if (!this.topology.nodes.some((n) => n.name === name)) fail('BAD_CONFIG', `node rules for "${name}", which is not a node of the cluster (nodes: ${this.topology.nodes.map((n) => n.name).join(', ') || 'none'})`);
    }
    // The bridge's gateway address is the node's too: what the node sends to its pods over cni0
    // leaves from it.
    const bridgeAddresses = Object.fromEntries(this.topology.nodes.filter((n) => n.bridge.length > 0 && cni === 'bridge').map((n) => [n.name, n.bridge.map((b) => b.text)]));
    this.enforcer = policyEnforcer(this.snapshot, this.netpol, { nodeAddresses: bridgeAddresses });
    this.givenNodeRules = Object.keys(nodeRules).length > 0;
    const hostPortsWithoutRules = this.snapshot.pods.filter((p) => !Object.hasOwn(nodeRules, p.spec.nodeName!) && [...p.spec.containers, ...(p.spec.initContainers ?? [])].some((c) => c.ports?.some((x) => x.hostPort !== undefined)));
    if (COMPONENTS.cniNodeRules === null && hostPortsWithoutRules.length > 0) {
      warnings.push(`the CNI plugins' node rules (portmap) are not compiled in this build: the hostPorts of ${hostPortsWithoutRules.map((p) => objectName(p)).join(', ')} are not reachable unless --node-rules gives their nodes' rules`);
    }
    this.fabric = new Fabric(cni === 'bridge', this.topology.hairpin);
    this.fabric.enforcer = this.enforcer;
    const seed = options.seed ?? 1;
    const read = new Map<string, NodeRuleSets>();
    for (const node of this.topology.nodes) {
      const given = Object.hasOwn(nodeRules, node.name) ? nodeRules[node.name]! : undefined;
      const texts: { text: string; where: string }[] = [];
      if (given !== undefined) {
        const list = typeof given === 'string' ? [given] : given;
        list.forEach((t, i) => texts.push({ text: t, where: `node ${node.name}'s rules${list.length > 1 ? ` (${i + 1})` : ''}` }));
      } else {
        // The enforcer's rules first: kube-router keeps its jumps at the top of INPUT, FORWARD and
        // OUTPUT, ahead of kube-proxy's.
        for (const t of this.enforcer?.nodeRules?.(node.name) ?? []) texts.push({ text: t, where: `the ${this.netpol} NetworkPolicy rules on ${node.name}` });
        const kp = kubeProxyRules(this.snapshot, node.name, this.kubeProxy);
        if (kp !== null) texts.push({ text: kp, where: `kube-proxy's rules on ${node.name}` });
        if (COMPONENTS.cniNodeRules !== null) texts.push({ text: COMPONENTS.cniNodeRules(this.snapshot, node.name, { cni }), where: `the CNI's node rules on ${node.name}` });
      }
      for (const t of texts) this.ruleTexts.push(t);
      const sets = loadNodeRules(texts.flatMap(splitDumps), read);
      this.nodeRuleSets.set(node.name, sets);
      this.addNode(node, sets, seed, given === undefined ? this.enforcer : null);
    }
    this.addOutside(seed);
    const podRules = options.podRules ?? {};
    expectArgument(podRules, 'object', 'options.podRules');
    for (const key of Object.keys(podRules)) {
      const p = this.topology.pods.find((x) => x.key === key);
      if (p === undefined || p.hostNetwork) fail('BAD_CONFIG', `pod rules for "${key}", which is not a pod with a namespace of its own in the cluster${this.topology.leftOut.has(key) ? ` (${this.topology.leftOut.get(key)!})` : ''}`);
    }
    for (const p of this.topology.pods) {
      this.podByKey.set(p.key, p);
      if (!p.hostNetwork) this.addPod(p, seed, Object.hasOwn(podRules, p.key) ? podRules[p.key]! : undefined);
    }
    this.warnings = warnings;
  }

  // ---- building -------------------------------------------------------------------------------

  private addNode(node: PlannedNode, sets: NodeRuleSets, seed: number, enforcer: PolicyEnforcer | null): void {
    const bridge = this.topology.cni === 'bridge';
    const interfaces = [{ name: 'eth0', addresses: node.eth0 }];
    const routes: RouteSpec[] = [];
    if (bridge) {
      interfaces.push({ name: 'cni0', addresses: node.bridge.map((b, i) => `${b.text}/${node.cidrs[i]!.prefix}`) });
    } else {
      // Calico's shape: the node's own pod CIDR is a blackhole, so that an address of it no pod
      // holds is dropped here instead of going back to the gateway, which routes it here again.
      for (const c of node.cidrs) routes.push({ dst: c.text, type: 'blackhole' });
      for (const p of node.pods) {
        if (p.hostNetwork) continue;
        interfaces.push({ name: p.veth, addresses: p.addresses.some((a) => a.family === 6) ? ['fe80::1/64'] : [] });
        for (const a of p.addresses) routes.push({ dst: `${a.text}/${a.family === 4 ? 32 : 128}`, dev: p.veth });
      }
    }
    for (const other of this.topology.nodes) {
      if (other === node) continue;
      for (const via of other.internal) {
        const fam = other.cidrs.filter((c) => c.family === via.family);
        if (fam.length > 0) for (const c of fam) routes.push({ dst: c.text, via: via.text, dev: 'eth0' });
        else for (const p of other.pods) for (const a of p.addresses) if (!p.hostNetwork && a.family === via.family) routes.push({ dst: `${a.text}/${a.family === 4 ? 32 : 128}`, via: via.text, dev: 'eth0' });
      }
    }
    const listen: ListenerSpec[] = [];
    for (const p of node.pods) if (p.hostNetwork) for (const l of p.listeners) if (l.proto !== 'sctp') listen.push({ port: l.port, proto: l.proto });
    const netns = new Netns({
      ...(sets.rules4 !== null ? { rules: sets.rules4 } : {}),
      ...(sets.rules6 !== null ? { rules6: sets.rules6 } : {}),
      ...(sets.nft.length > 0 ? { nft: sets.nft } : {}),
      ...(enforcer?.nodeIpsets !== undefined ? { ipsets: enforcer.nodeIpsets(node.name) } : {}),
      ...(enforcer?.queueReader !== undefined ? { queueReader: enforcer.queueReader(node.name) } : {}),
      interfaces,
      gateway: node.gateways,
      routes,
      ipForward: true,
      listen,
      seed,
    });
    this.fabric.add({ name: node.place, kind: 'node', netns, ex: netns.exchange(), node, pod: null }, node.internal.map((a) => a.text));
  }

  private addOutside(seed: number): void {
    const routes: RouteSpec[] = [{ dst: 'default', dev: 'eth0' }, { dst: '::/0', dev: 'eth0' }];
    for (const n of this.topology.nodes) {
      for (const via of n.internal) {
        const fam = n.cidrs.filter((c) => c.family === via.family);
        if (fam.length > 0) for (const c of fam) routes.push({ dst: c.text, via: via.text, dev: 'lan0' });
        else for (const p of n.pods) for (const a of p.addresses) if (!p.hostNetwork && a.family === via.family) routes.push({ dst: `${a.text}/${a.family === 4 ? 32 : 128}`, via: via.text, dev: 'lan0' });
      }
    }
    // The world is `eth0` (no address: nothing picks a gateway on it); the nodes' segment `lan0`.
    const netns = new Netns({ interfaces: [{ name: 'lan0', addresses: this.topology.outside.eth0 }, { name: 'eth0', addresses: [] }], gateway: [], routes, ipForward: true, seed });
    this.fabric.add({ name: 'outside', kind: 'outside', netns, ex: netns.exchange(), node: null, pod: null }, this.topology.outside.eth0.map((a) => a.slice(0, a.indexOf('/'))));
  }

  private addPod(pod: PlannedPod, seed: number, extra?: PodExtras): void {
    const node = this.topology.nodes.find((n) => n.name === pod.node)!;
    const bridge = this.topology.cni === 'bridge';
    const routes: RouteSpec[] = [];
    let addresses: string[];
    let gateway: string[];
    if (bridge) {
      addresses = pod.addresses.map((a) => `${a.text}/${node.cidrs.find((c) => c.family === a.family)!.prefix}`);
      gateway = pod.addresses.map((a) => node.bridge.find((b) => b.family === a.family)!.text);
    } else {
      addresses = pod.addresses.map((a) => `${a.text}/${a.family === 4 ? 32 : 128}`);
      gateway = [];
      if (pod.addresses.some((a) => a.family === 4)) routes.push({ dst: '169.254.1.1/32', dev: 'eth0' }, { dst: 'default', via: '169.254.1.1', dev: 'eth0' });
      if (pod.addresses.some((a) => a.family === 6)) routes.push({ dst: 'default', via: 'fe80::1', dev: 'eth0' });
    }
    const listen: ListenerSpec[] = pod.listeners.filter((l) => l.proto !== 'sctp').map((l) => ({ port: l.port, proto: l.proto as 'tcp' | 'udp' }));
    if (extra?.listen !== undefined) {
      expectArgument(extra.listen, 'array', `options.podRules["${pod.key}"].listen`);
      listen.push(...extra.listen);
    }
    const texts = (extra?.rules ?? []).map((text, i) => ({ text, where: `pod ${pod.key}'s rules (${i + 1})` }));
    if (extra !== undefined) this.podsWithRules.add(pod.key);
    for (const t of texts) this.ruleTexts.push(t);
    const sets = loadNodeRules(texts.flatMap(splitDumps));
    if (extra?.routes !== undefined) {
      expectArgument(extra.routes, 'array', `options.podRules["${pod.key}"].routes`);
      routes.push(...extra.routes);
    }
    if (extra?.loopback !== undefined) expectArgument(extra.loopback, 'array', `options.podRules["${pod.key}"].loopback`);
    if (extra?.ipRules !== undefined) expectArgument(extra.ipRules, 'array', `options.podRules["${pod.key}"].ipRules`);
    const netns = new Netns({
      interfaces: [...(extra?.loopback !== undefined && extra.loopback.length > 0 ? [{ name: 'lo', addresses: [...extra.loopback] }] : []), { name: 'eth0', addresses }], gateway, routes, listen, seed,
      ...(extra?.ipRules !== undefined && extra.ipRules.length > 0 ? { ipRules: [...extra.ipRules] } : {}),
      ...(sets.rules4 !== null ? { rules: sets.rules4 } : {}),
      ...(sets.rules6 !== null ? { rules6: sets.rules6 } : {}),
      ...(sets.nft.length > 0 ? { nft: sets.nft } : {}),
    });
    this.fabric.add({ name: pod.place, kind: 'pod', netns, ex: netns.exchange(), node: null, pod }, []);
  }

  // ---- lookups --------------------------------------------------------------------------------

  /** The namespaces of the cluster, by name (`pod/ns/name`, `node/NAME`, `outside`). */
  namespace(name: string): Netns | null {
    return this.fabric.places.get(name)?.netns ?? null;
  }

  /** Forgets every connection of every namespace (`conntrack -F` and the sockets of connections everywhere). */
  flushConntrack(): void {
    for (const p of this.fabric.places.values()) p.netns.flushConntrack();
  }

  /**
   * What the enforcer's verdict at the pod's veth would be for one packet (null: allowed, or no
   * enforcer decides there: `none`, or one that writes rules instead of deciding at the veth).
   */
  policyVerdict(q: ClusterPolicyQuestion): PolicyVerdict | null {
    expectArgument(q, 'object', 'question');
    expectOneOf(q.direction, ['ingress', 'egress'], 'question.direction');
    expectOneOf(q.protocol, ['TCP', 'UDP', 'SCTP'], 'question.protocol');
    const pod = this.pod(q.pod, 'policy question');
    if (this.enforcer?.decide === undefined) return null;
    return this.enforcer.decide({ direction: q.direction, pod: pod.pod, node: pod.node, protocol: q.protocol, src: q.src, sport: q.sport ?? 0, dst: q.dst, dport: q.dport });
  }

  /** Whether the enforcer decides at the pods' veths (so {@link policyVerdict} answers). */
  get decidesAtVeth(): boolean {
    return this.enforcer?.decide !== undefined;
  }

  /**
   * The rules a node holds, as `iptables-save` (both families) and `nft list ruleset` would print
   * them, and the ipsets its NetworkPolicy enforcer keeps (kube-router's), as `ipset save` prints
   * them ('' when none).
   */
  nodeRules(node: string): { readonly save: string; readonly nft: readonly string[]; readonly ipsets: string } {
    expectArgument(node, 'string', 'node');
    const sets = this.nodeRuleSets.get(node);
    if (sets === undefined) fail('BAD_CONFIG', `no node "${node}" in the cluster (nodes: ${this.topology.nodes.map((n) => n.name).join(', ') || 'none'})`);
    const save = (sets.rules4 !== null ? printIptablesSave(sets.rules4) : '') + (sets.rules6 !== null ? printIptablesSave(sets.rules6) : '');
    return { save, nft: sets.nft, ipsets: this.enforcer?.nodeIpsets?.(node) ?? '' };
  }

  private pod(key: string, what: string): PlannedPod {
    const p = this.podByKey.get(key);
    if (p !== undefined) return p;
    const why = this.topology.leftOut.get(key) ?? this.snapshot.warnings.find((w) => w.startsWith(`Pod ${key}:`))?.slice(`Pod ${key}: `.length);
    if (why !== undefined) fail('BAD_PROBE', `${what} ${key} is not on the cluster path: ${why}`);
    const known = [...this.podByKey.keys()];
    return fail('BAD_PROBE', `${what}: no pod ${key} in the snapshot${known.length > 0 ? ` (pods: ${known.slice(0, 8).join(', ')}${known.length > 8 ? ', …' : ''})` : ''}`);
  }

  private target(spec: ClusterConnectSpec, proto: 'tcp' | 'udp' | 'sctp'): Target {
    const to = spec.to;
    const wantFamily = spec.family;
    const k8sProto = proto.toUpperCase() as 'TCP' | 'UDP' | 'SCTP';
    const parts = to.split('/');
    if (parts.length === 3 && parts[1] === 'svc') {
      const svc = this.snapshot.services.find((s) => s.metadata.namespace === parts[0] && s.metadata.name === parts[2]);
      if (svc === undefined) fail('BAD_PROBE', `--to ${to}: no Service ${parts[0]}/${parts[2]} in the snapshot`);
      return this.serviceTarget(svc, spec.port, k8sProto, wantFamily, to);
    }
    if (parts.length === 2 && !to.includes(':')) {
      const pod = this.pod(to, '--to');
      const addr = pod.addresses.find((a) => wantFamily === undefined || a.family === wantFamily);
      if (addr === undefined) fail('BAD_PROBE', `--to ${to}: the pod has no IPv${wantFamily} address`);
      let port = spec.port;
      if (port === undefined) {
        const ls = pod.listeners.filter((l) => l.proto === proto);
        if (ls.length !== 1) fail('BAD_PROBE', `--to ${to}: give --port (the pod declares ${ls.length === 0 ? `no ${k8sProto} port` : `${k8sProto} ports ${ls.map((l) => l.port).join(', ')}`})`);
        port = ls[0]!.port;
      }
      return { family: addr.family, addr: addr.words, port };
    }
    let e;
    try {
      e = parseEndpoint(to, true);
    } catch (err) {
      if (err instanceof NetfilterSimError) fail('BAD_PROBE', `--to ${to}: not NS/POD, NS/svc/NAME or ADDR:PORT (${err.message})`);
      throw err;
    }
    if (spec.port !== undefined && spec.port !== e.port) fail('BAD_PROBE', `--to ${to} has its port; --port ${spec.port} disagrees`);
    return { family: e.family, addr: e.addr, port: e.port };
  }

  private serviceTarget(svc: K8sService, port: number | undefined, proto: 'TCP' | 'UDP' | 'SCTP', family: 4 | 6 | undefined, what: string): Target {
    const ips = (svc.spec.clusterIPs ?? []).filter((ip) => ip !== 'None');
    if (ips.length === 0) fail('BAD_PROBE', `--to ${what}: the Service has no ClusterIP (${svc.spec.type === 'ExternalName' ? 'ExternalName' : 'headless'}); connect to a pod`);
    const ip = ips.map((t) => parseEndpoint(t.includes(':') ? `[${t}]:1` : `${t}:1`, true)).find((a) => family === undefined || a.family === family);
    if (ip === undefined) fail('BAD_PROBE', `--to ${what}: the Service has no IPv${family} ClusterIP`);
    const ports = (svc.spec.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === proto);
    let chosen: number;
    if (port !== undefined) {
      if (!ports.some((p) => p.port === port)) fail('BAD_PROBE', `--to ${what}: the Service has no ${proto} port ${port} (${ports.map((p) => p.port).join(', ') || 'none'})`);
      chosen = port;
    } else {
      if (ports.length !== 1) fail('BAD_PROBE', `--to ${what}: give --port (the Service has ${ports.length === 0 ? `no ${proto} port` : `${proto} ports ${ports.map((p) => p.port).join(', ')}`})`);
      chosen = ports[0]!.port;
    }
    return { family: ip.family, addr: ip.addr, port: chosen };
  }

  // ---- connections ----------------------------------------------------------------------------

  /**
   * Simulates a connection from a pod: for TCP the SYN, the answer and the ACK, for UDP one
   * datagram, each through every namespace and hook it crosses. The namespaces keep their
   * conntrack tables and sockets from one call to the next, as a cluster does.
   */
  connect(spec: ClusterConnectSpec, options: { readonly trace?: boolean } = {}): ClusterConnectResult {
    expectArgument(spec, 'object', 'spec');
    expectArgument(spec.from, 'string', 'spec.from');
    expectArgument(spec.to, 'string', 'spec.to');
    expectShape(options, { kind: 'object', fields: { trace: ['boolean', 'undefined'] } }, 'options');
    expectOneOf(spec.proto, ['tcp', 'udp', 'sctp'], 'spec.proto', true);
    expectOneOf(spec.family, [4, 6], 'spec.family', true);
    if (spec.port !== undefined && (!Number.isInteger(spec.port) || spec.port < 1 || spec.port > 65535)) fail('BAD_PROBE', `bad port ${String(spec.port)} (a port is from 1 to 65535)`);
    const proto = spec.proto ?? 'tcp';
    if (proto === 'sctp') fail('UNSUPPORTED', 'SCTP connections are not simulated (the engine drives TCP and UDP); the policy verdicts for SCTP ports are the policy evaluator\'s');
    const fromParts = spec.from.split('/');
    if (fromParts.length !== 2 && fromParts.length !== 3) fail('BAD_PROBE', `--from ${spec.from}: write NS/POD or NS/POD/CONTAINER`);
    const client = this.pod(`${fromParts[0]}/${fromParts[1]}`, '--from');
    for (const k of ['uid', 'gid', 'mark'] as const) {
      const x = spec[k];
      if (x !== undefined && (!Number.isInteger(x) || x < 0 || x > 0xffffffff)) fail('BAD_PROBE', `bad ${k} ${String(x)} (from 0 to 4294967295)`);
    }
    const own = this.ownerOf(client.pod, fromParts[2], spec.from);
    const owner: SocketView = spec.uid !== undefined || spec.gid !== undefined ? { uid: spec.uid ?? own.uid, gid: spec.gid ?? spec.uid ?? own.gid, groups: [] } : own;
    const mark = spec.mark ?? 0;
    const target = this.target(spec, proto);
    if (!client.addresses.some((a) => a.family === target.family)) fail('BAD_PROBE', `--from ${spec.from}: the pod has no IPv${target.family} address to reach ${formatEndpoint(target.addr, target.port, target.family)}`);
    const place = this.fabric.places.get(client.place)!;
    const fabric = this.fabric;
    fabric.visits = [];
    fabric.lastExplained = null;
    fabric.tracing = options.trace !== false;
    let r: Omit<ClusterConnectResult, 'steps' | 'hops' | 'trace' | 'policy'> & { policy?: PolicyVerdict | null };
    try {
      r = proto === 'udp' ? this.udp(place, target, owner, mark) : this.tcp(place, target, owner, mark);
    } finally {
      // Only the namespaces the exchange visited hold anything to settle (a cluster of thousands
      // of pods is not walked on every connection).
      const settled = new Set<Place>([place]);
      for (const v of fabric.visits) settled.add(v.place);
      for (const p of settled) p.ex.settle();
    }
    const visits = fabric.visits;
    let delivered: string | null = null;
    if (r.outcome === 'local') for (const v of visits) if (v.packet === 0) delivered = v.place.name;
    this.lastDelivered = delivered;
    const hops: { namespace: string; in: string | null; out: string | null; steps: ClusterStep[] }[] = [];
    const steps: ClusterStep[] = [];
    for (const v of visits) {
      let h = hops.find((x) => x.namespace === v.place.name);
      if (h === undefined) hops.push((h = { namespace: v.place.name, in: v.in, out: v.out, steps: [] }));
      if (v.tr !== null) {
        for (const s of stepsOf(v.tr.events)) {
          const step = { namespace: v.place.name, ...s };
          h.steps.push(step);
          steps.push(step);
        }
      }
    }
    const out: ClusterConnectResult = { ...r, policy: r.policy ?? null, steps, hops, ...(fabric.tracing ? { trace: fabric.events() } : {}) };
    fabric.visits = [];
    return out;
  }

  private ownerOf(pod: K8sPod, container: string | undefined, what: string): SocketView {
    let c = pod.spec.containers[0]!;
    if (container !== undefined) {
      const found = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].find((x) => x.name === container);
      if (found === undefined) fail('BAD_PROBE', `--from ${what}: the pod has no container ${container} (${pod.spec.containers.map((x) => x.name).join(', ')})`);
      c = found;
    }
    const uid = c.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser ?? 0;
    const gid = c.securityContext?.runAsGroup ?? pod.spec.securityContext?.runAsGroup ?? 0;
    return { uid, gid, groups: [] };
  }

  /** Whether an answer (RST, ICMP error, SYN-ACK) ended at the client's socket or its namespace. */
  private reachedClient(end: End, client: Place, s: SocketRecord): boolean {
    if (end.kind === 'socket' && end.socket === s) return true;
    if ((end.kind === 'refused' || end.kind === 'socket') && end.place === client) {
      const p = end.p;
      // A segment reaches the socket of its 4-tuple only (a RST from another address is no answer).
      if (p.proto === PROTO.TCP) return false;
      // An ICMP error reaches the socket its carried packet names (tcp_v4_err, __udp4_lib_err:
      // the socket is looked up by that packet's addresses and ports).
      const inner = p.inner;
      return inner !== null && inner.proto === s.proto && sameWords(inner.src, s.local!) && inner.sport === s.localPort && sameWords(inner.dst, s.remote!) && inner.dport === s.remotePort;
    }
    return false;
  }

  /** The answer to a packet a namespace rejected, sent from there; whether it reached the client. */
  private answer(end: End & { kind: 'dropped' }, client: Place, s: SocketRecord, index: number): boolean {
    const a = end.place.ex.answerTo(end.p, end.reject!);
    if (a === null) return false;
    const e = this.fabric.sendFrom(end.place, a, index, a.proto === PROTO.TCP ? 'RST' : 'ICMP', false);
    return this.reachedClient(e, client, s);
  }

  /** The first packet dropped on its way: rejected with an answer that reached the client, or not. */
  private firstDropped(end: End & { kind: 'dropped' }, client: Place, s: SocketRecord): Result {
    if (end.reject === null) return dropped(`${end.place.name}: ${end.reason}`, end.policy);
    if (this.answer(end, client, s, 1)) return refused(`rejected (${end.reject}) in ${end.place.name}: ${end.reason}`, end.policy, errnoOfAnswer(end.p.family, end.reject));
    return dropped(`rejected (${end.reject}) in ${end.place.name}: ${end.reason}; the answer did not reach the client`, end.policy);
  }

  /** How a packet of the exchange failed to arrive, as a result. */
  private failure(end: End, what: string, client: Place, s: SocketRecord, fromClient: boolean, index: number): Result {
    if (end.kind === 'dropped') {
      if (end.reject !== null) {
        // Only the client's ACK comes here from the client: its connect() returned with the
        // SYN-ACK, so the answer resets an established socket (as Netns.connect says it).
        if (fromClient && this.answer(end, client, s, index + 1)) return refused(`${what}: rejected (${end.reject}) in ${end.place.name}: ${end.reason}`, end.policy, 'ECONNRESET');
        if (!fromClient) this.answer(end, client, s, index + 1);
        return dropped(`${what}: rejected (${end.reject}) in ${end.place.name}, and the answer goes to its sender, not to the client, which hears nothing`, end.policy);
      }
      return dropped(`${what}: ${end.place.name}: ${end.reason}`, end.policy);
    }
    if (end.kind === 'lost') return dropped(`${what}: ${end.place.name}: ${end.reason}`, null);
    if (end.kind === 'world') return dropped(`${what} left the cluster through the outside router instead of reaching the other end`, null);
    return dropped(`${what} reached ${end.place.name}${end.kind === 'refused' ? `, where no socket has ${formatEndpoint(end.p.dst, end.p.dport, end.p.family)}` : ''}, not the other end`, null);
  }

  private tcp(client: Place, t: Target, owner: SocketView, mark: number): Result {
    const fabric = this.fabric;
    const open = client.ex.open(t.family, PROTO.TCP, t.addr, t.port, owner, mark);
    if (open.kind === 'error') return { ...refused(open.reason, null, open.errno), error: open.errno };
    const c = open.socket;
    let ok = false;
    try {
      const end = fabric.sendFrom(client, open.packet, 0, 'SYN', true);
      switch (end.kind) {
        case 'socket': {
          const server = end.place;
          const l = end.socket;
          if (l.remote !== null) return dropped(`the SYN reached an established connection in ${server.name}`, null);
          const req = server.ex.request(l, end.p);
          const e2 = fabric.sendFrom(server, server.ex.fromSocket(req, TCP_FLAGS.SYN | TCP_FLAGS.ACK), 1, 'SYN-ACK', false);
          if (!(e2.kind === 'socket' && e2.socket === c)) {
            server.ex.close(req);
            return this.failure(e2, 'the SYN-ACK', client, c, false, 1);
          }
          const e3 = fabric.sendFrom(client, client.ex.fromSocket(c, TCP_FLAGS.ACK), 2, 'ACK', false);
          if (!(e3.kind === 'socket' && e3.socket === req)) {
            server.ex.close(req);
            return this.failure(e3, 'the ACK', client, c, true, 2);
          }
          server.ex.established(req);
          ok = true;
          const where = `${l.local === null ? (l.family === 4 ? '0.0.0.0' : '[::]') : addressText(l.local, l.family)}:${l.localPort}`;
          return {
            outcome: 'local', address: addressText(req.local!, req.family), port: req.localPort, originalDestination: server.ex.originalDst(req),
            source: formatEndpoint(req.remote!, req.remotePort, req.family), errno: null, reason: `accepted by the listener ${where} in ${server.name}`,
          };
        }
        case 'refused': {
          const e2 = fabric.sendFrom(end.place, end.place.ex.resetFor(end.p), 1, 'RST', false);
          const at = `${formatEndpoint(end.p.dst, end.p.dport, end.p.family)} in ${end.place.name}`;
          if (this.reachedClient(e2, client, c)) return refused(`no listener at ${at}: connection reset`, null);
          return this.failure(e2, `no listener at ${at}; the RST`, client, c, false, 1);
        }
        case 'dropped':
          return this.firstDropped(end, client, c);
        case 'lost':
          return dropped(`${end.place.name}: ${end.reason}`, null);
        case 'world': {
          // The world accepts: its SYN-ACK comes in through the router.
          const p = end.p;
          const w = { family: p.family, proto: PROTO.TCP, src: p.dst.slice(), sport: p.dport, dst: p.src.slice(), dport: p.sport, tcpFlags: TCP_FLAGS.SYN | TCP_FLAGS.ACK, icmpType: -1, icmpCode: -1, ttl: 64, tos: 0, length: p.family === 4 ? 60 : 80, inner: null };
          const e2 = fabric.fromWorld(w, 1, 'SYN-ACK', false);
          if (!(e2.kind === 'socket' && e2.socket === c)) return this.failure(e2, 'the SYN-ACK from outside', client, c, false, 1);
          const e3 = fabric.sendFrom(client, client.ex.fromSocket(c, TCP_FLAGS.ACK), 2, 'ACK', false);
          if (e3.kind !== 'world' || !sameWords(e3.p.dst, p.dst) || e3.p.dport !== p.dport) return this.failure(e3, 'the ACK', client, c, true, 2);
          ok = true;
          return {
            outcome: 'remote', address: addressText(p.dst, p.family), port: p.dport, originalDestination: null,
            source: formatEndpoint(p.src, p.sport, p.family), errno: null, reason: 'left the cluster through the outside router; the world accepts every connection',
          };
        }
        default:
          return unreachable(end);
      }
    } finally {
      if (!ok) client.ex.close(c);
    }
  }

  private udp(client: Place, t: Target, owner: SocketView, mark: number): Result {
    const fabric = this.fabric;
    const open = client.ex.open(t.family, PROTO.UDP, t.addr, t.port, owner, mark);
    if (open.kind === 'error') return { ...refused(open.reason, null, open.errno), error: open.errno };
    const c = open.socket;
    try {
      const end = fabric.sendFrom(client, open.packet, 0, 'UDP', true);
      switch (end.kind) {
        case 'socket':
          return {
            outcome: 'local', address: addressText(end.p.dst, end.p.family), port: end.p.dport, originalDestination: end.place.ex.originalDstOf(end.p),
            source: formatEndpoint(end.p.src, end.p.sport, end.p.family), errno: null, reason: `delivered to the socket at ${formatEndpoint(end.p.dst, end.p.dport, end.p.family)} in ${end.place.name}`,
          };
        case 'refused': {
          const at = `${formatEndpoint(end.p.dst, end.p.dport, end.p.family)} in ${end.place.name}`;
          const a = end.place.ex.answerTo(end.p, end.p.family === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable');
          if (a !== null && this.reachedClient(fabric.sendFrom(end.place, a, 1, 'ICMP', false), client, c)) return refused(`no socket at ${at}: ICMP port unreachable`, null);
          return dropped(`no socket at ${at}; the ICMP port unreachable did not reach the client`, null);
        }
        case 'dropped':
          return this.firstDropped(end, client, c);
        case 'lost':
          return dropped(`${end.place.name}: ${end.reason}`, null);
        case 'world':
          return {
            outcome: 'remote', address: addressText(end.p.dst, end.p.family), port: end.p.dport, originalDestination: null,
            source: formatEndpoint(end.p.src, end.p.sport, end.p.family), errno: null, reason: 'left the cluster through the outside router',
          };
        default:
          return unreachable(end);
      }
    } finally {
      client.ex.close(c);
    }
  }

  // ---- reachability ---------------------------------------------------------------------------

  /**
   * The reachability matrix over the pods for one port (`port`), or over every port at once
   * (`allPorts`: the ranges of ports that share one answer in every cell): `allowed[i][j]` is
   * whether a connection from `pods[i]` reaches `pods[j]` (to its address, or through a Service
   * that selects it), with why each blocked cell is blocked. Pods that nothing on the path tells
   * apart form a class, answered by one connection per pair of classes (see `reach.ts`).
   * hostNetwork pods are left out.
   */
  reach(options: ReachOptions & { readonly allPorts: true }): AllPortsReachResult;
  reach(options: ReachOptions & { readonly port: number; readonly allPorts?: false }): ReachResult;
  reach(options: ReachOptions): ReachResult | AllPortsReachResult;
  reach(options: ReachOptions): ReachResult | AllPortsReachResult {
    expectArgument(options, 'object', 'options');
    expectArgument(options.allPorts, ['boolean', 'undefined'], 'options.allPorts');
    expectArgument(options.classes, ['boolean', 'undefined'], 'options.classes');
    const all = options.allPorts === true;
    if (all && options.port !== undefined) fail('BAD_PROBE', 'give a port or allPorts, not both');
    if (!all && (!Number.isInteger(options.port) || options.port! < 1 || options.port! > 65535)) fail('BAD_PROBE', `bad port ${String(options.port)} (a port is from 1 to 65535)`);
    expectOneOf(options.proto, ['tcp', 'udp', 'sctp'], 'options.proto', true);
    expectOneOf(options.to, ['pod', 'service'], 'options.to', true);
    expectShape(options.namespaces, { kind: ['array', 'undefined'], items: 'string' }, 'options.namespaces');
    if ((options.proto ?? 'tcp') === 'sctp') fail('UNSUPPORTED', 'SCTP connections are not simulated (the engine drives TCP and UDP); the policy verdicts for SCTP ports are the policy evaluator\'s');
    const host = this.reachHost();
    return all ? reachAllPorts(host, options) : reachPort(host, { ...options, port: options.port! });
  }

  private reachHost(): ReachHost {
    return {
      snapshot: this.snapshot,
      pods: this.topology.pods,
      alone: (p) => this.givenNodeRules || this.podsWithRules.has(p.key),
      chainOrder: (from, to) => this.enforcer?.chainOrder?.(from.key, to.key) ?? 'src-first',
      ruleTexts: () => (this.listedTexts ??= this.ruleTexts.flatMap(splitDumps).map((t) => ({ text: listed(t), written: t.text, where: t.where }))),
      probePod: (from, dest, port, proto) => this.reachPod(from, dest, port, proto),
      probeService: (from, svc, port, proto, choice) => this.reachService(from, svc, port, proto, choice),
      forget: () => this.flushConntrack(),
    };
  }

  private reachPod(from: PlannedPod, dest: PlannedPod, port: number, proto: 'tcp' | 'udp' | 'sctp'): ReachProbe {
    const family = from.addresses.some((a) => a.family === 4) && dest.addresses.some((a) => a.family === 4) ? 4 : 6;
    const addr = dest.addresses.find((a) => a.family === family);
    if (addr === undefined || !from.addresses.some((a) => a.family === family)) return { ok: false, why: { policy: null, direction: null, rule: null, outcome: 'refused', reason: 'the pods share no address family' } };
    const r = this.connect({ from: from.key, to: endpointText(addr.text, port), proto, family }, { trace: false });
    const ok = r.outcome === 'local' && this.lastDelivered === dest.place;
    return ok ? { ok, why: null } : { ok, why: whyOf(r, dest, this.lastDelivered), ...this.byOrder(r) };
  }

  /**
   * A refusal the enforcer explains by the order of two pods' chains (kube-router): the policy
   * named in either order, so that a class's answer is told right of pairs whose pods come in the
   * other order. Nothing when both orders name the same.
   */
  private byOrder(r: ClusterConnectResult): Pick<ReachProbe, 'byOrder'> {
    const last = this.fabric.lastExplained;
    const e = this.enforcer;
    if (r.policy === null || last === null || e?.chainOrder === undefined || e.explainDrop === undefined) return {};
    const told = (order: 'src-first' | 'dst-first'): ReachAttribution => {
      const v = e.explainDrop!({ ...last, order });
      return { policy: v === null ? null : `${v.namespace}/${v.name}`, direction: v?.direction ?? null, rule: v?.rule ?? null };
    };
    const a = told('src-first');
    const b = told('dst-first');
    return a.policy === b.policy && a.direction === b.direction && a.rule === b.rule ? {} : { byOrder: { 'src-first': a, 'dst-first': b } };
  }

  /**
   * A connection through a Service, with the k-th choice of every random draw of the nodes (the
   * k-th endpoint of kube-proxy's `statistic`/`numgen` choice): which endpoint it went to, and how
   * it ended there.
   */
  private reachService(from: PlannedPod, svc: K8sService, port: number, proto: 'tcp' | 'udp' | 'sctp', choice: number): ReachProbe {
    const script = [...new Array<boolean>(choice).fill(false), true];
    const spec = { from: from.key, to: `${svc.metadata.namespace}/svc/${svc.metadata.name}`, port, proto };
    const attempt = (trace: boolean): ClusterConnectResult => {
      for (const p of this.fabric.places.values()) if (p.kind === 'node') p.netns.scriptDraws(script);
      try {
        return this.connect(spec, { trace });
      } finally {
        for (const p of this.fabric.places.values()) if (p.kind === 'node') p.netns.scriptDraws(null);
      }
    };
    let r = attempt(false);
    let delivered = this.lastDelivered;
    let chosen: string | null;
    if (r.outcome === 'local' && delivered !== null && delivered.startsWith('pod/')) {
      chosen = this.podByKey.get(delivered.slice(4))?.addresses.some((a) => a.text === r.address) === true ? r.address : null;
    } else chosen = null;
    if (chosen === null) {
      // Which endpoint the Service chose is in the trace: the same draws again, traced.
      r = attempt(true);
      delivered = this.lastDelivered;
      chosen = chosenEndpoint(r);
    }
    const dest = chosen === null ? null : this.topology.pods.find((p) => !p.hostNetwork && p.addresses.some((a) => a.text === chosen)) ?? null;
    const ok = dest !== null && r.outcome === 'local' && delivered === dest.place;
    return { ok, why: ok ? null : whyOf(r, dest, delivered), chosen, ...(ok ? {} : this.byOrder(r)) };
  }
}

type Result = Omit<ClusterConnectResult, 'steps' | 'hops' | 'trace' | 'policy'> & { readonly policy?: PolicyVerdict | null };

/** A refused connection; `errno` is what the client reads (a RST's or ICMP port unreachable's by default). */
function refused(reason: string, policy: PolicyVerdict | null, errno = 'ECONNREFUSED'): Result {
  return { outcome: 'refused', address: null, port: null, originalDestination: null, source: null, errno, reason, policy };
}

/** A dropped connection: the client's `connect()` times out. */
function dropped(reason: string, policy: PolicyVerdict | null): Result {
  return { outcome: 'dropped', address: null, port: null, originalDestination: null, source: null, errno: 'ETIMEDOUT', reason, policy };
}

/**
 * A snapshot given as data is read again through the reader (as JSON), so that an object built by
 * hand meets the same checks and defaults as one read from text; its warnings are kept.
 */
function rereadSnapshot(s: Snapshot): Snapshot {
  expectFields(s, { namespaces: 'array', nodes: 'array', pods: 'array', services: 'array', endpointSlices: 'array', networkPolicies: 'array', warnings: 'array' }, 'options.snapshot');
  const items = [...s.namespaces, ...s.nodes, ...s.pods, ...s.services, ...s.endpointSlices, ...s.networkPolicies];
  const again = readSnapshot([{ name: '<snapshot object>', text: JSON.stringify({ kind: 'List', items }) }]);
  const warnings = [...s.warnings.filter((w): w is string => typeof w === 'string'), ...again.warnings.filter((w) => !s.warnings.includes(w))];
  return { ...again, warnings };
}

function unreachable(x: never): never {
  throw new Error(`unexpected end of a travel: ${JSON.stringify(x)}`);
}

function sameWords(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}


/** The address a node's DNAT sent the connection's first packet to, or null when none did. */
function chosenEndpoint(r: ClusterConnectResult): string | null {
  for (const e of r.trace ?? []) {
    if (e.type === 'nat' && e.packet === 0 && e.manip === 'DST' && e.action !== 'apply' && e.action !== 'skipped' && e.action !== 'null-binding') {
      return e.to.startsWith('[') ? e.to.slice(1, e.to.indexOf(']')) : e.to.slice(0, e.to.lastIndexOf(':'));
    }
  }
  return null;
}


function whyOf(r: ClusterConnectResult, dest: PlannedPod | null, delivered: string | null): ReachWhy {
  const p = r.policy;
  const reason = r.outcome === 'local' ? `accepted in ${delivered ?? '?'}, not in ${dest?.place ?? 'a pod'}` : r.reason;
  return { policy: p === null ? null : `${p.namespace}/${p.name}`, direction: p?.direction ?? null, rule: p?.rule ?? null, outcome: r.outcome, reason };
}

/**
 * A rule text as the tools list it (`nft list ruleset`, `iptables-save`): ports and protocols by
 * number, whatever names the text used. A text the formatter refuses stays as written (loading
 * it has already said what is wrong).
 */
function listed(t: { readonly text: string; readonly where: string }): string {
  try {
    const kind = classifyRules(t.text, t.where);
    return kind === 'nft' ? formatNftRuleset(t.text) : formatIptablesSave(t.text, { family: kind });
  } catch {
    return t.text;
  }
}

/**
 * Splits a text holding several dumps (`iptables-save; ip6tables-save` written to one file) at
 * their `# Generated by` lines; one dump stays whole.
 */
function splitDumps(t: { text: string; where: string }): { text: string; where: string }[] {
  const marks = [...t.text.matchAll(/^# Generated by ip6?tables-save.*$/gm)].map((m) => m.index);
  if (marks.length < 2) return [t];
  const out: { text: string; where: string }[] = [];
  const starts = [0, ...marks.slice(1)];
  for (let i = 0; i < starts.length; i++) out.push({ text: t.text.slice(starts[i], starts[i + 1] ?? t.text.length), where: t.where });
  return out;
}
