/**
 * What each node holds besides the kernel: kube-proxy's rules, the CNI plugins' node rules and a
 * NetworkPolicy enforcer, compiled from the snapshot, or a real node's dumps given instead. The
 * compilers live in `compile/`; this module is the one place the cluster reaches them, through
 * {@link COMPONENTS}, so that a build without one of them says so instead of guessing.
 *
 * @module
 */
import type { K8sPod, Snapshot } from '../model/kubernetes.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { expectArgument } from '../model/guard.js';
import type { Ruleset } from '../model/types.js';
import { parseIptablesSave } from '../iptables/syntax/save.js';
import { detectRulesSyntax } from '../nftables/detect.js';
import { compileKubeProxy } from '../compile/kube-proxy/index.js';
import { compileCniNodeRules } from '../compile/cni/index.js';
import { NetworkPolicyEvaluator, compileSelector, defaultNetworkPolicy, selectorMatches } from '../netpol/index.js';
import type { DirectionVerdict } from '../netpol/index.js';
import { compileKubeNetworkPolicies, compileKubeRouter, compileKubeRouterNft, kubeRouterPodChain } from '../compile/netpol/index.js';
import type { QueueAnswer, QueueReader } from '../engine/rules/targets.js';
import type { TraceEvent } from '../engine/trace/events.js';
import { addressText } from '../model/address.js';

/** kube-proxy's mode, or `none` (no kube-proxy rules: Services are not translated on nodes). */
export type KubeProxyMode = 'iptables' | 'nftables' | 'none';
/** Where NetworkPolicy is enforced, or `none`. */
export type NetpolImplementation = 'reference' | 'kube-router' | 'kube-router-nftables' | 'kube-network-policies' | 'none';
/** How pods are joined to their node: the `bridge` plugin (with `cni0`) or `ptp`. */
export type CniMode = 'bridge' | 'ptp';

/** `compileKubeProxy(snapshot, node, { mode })`: iptables-save text (both families) or nft text. */
export type KubeProxyCompiler = (snapshot: Snapshot, node: string, options: { readonly mode: 'iptables' | 'nftables' }) => string;
/** `compileCniNodeRules(snapshot, node, { cni })`: the node rules of the CNI plugins (portmap, bridge ipMasq). */
export type CniRulesCompiler = (snapshot: Snapshot, node: string, options: { readonly cni: CniMode }) => string;

/** The policy and rule that decided a connection (`rule: null`: the pod is isolated and nothing allows). */
export interface PolicyVerdict {
  readonly namespace: string;
  readonly name: string;
  readonly direction: 'ingress' | 'egress';
  readonly rule: number | null;
}

/** A connection's first packet, where a policy enforcer at a pod's veth sees it. */
export interface PolicyCheck {
  readonly direction: 'ingress' | 'egress';
  /** The pod the direction is about: the source pod for egress, the destination pod for ingress. */
  readonly pod: K8sPod;
  readonly node: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly src: string;
  readonly sport: number;
  readonly dst: string;
  readonly dport: number;
}

/** A NetworkPolicy enforcer on the cluster path. */
export interface PolicyEnforcer {
  /** Rule texts the enforcer writes into a node (iptables-save or nft), loaded after the others. */
  readonly nodeRules?: (node: string) => readonly string[];
  /**
   * A verdict at a pod's veth on its node, the way eBPF-based enforcers decide: null allows. Asked
   * for a connection's first packet only (answers of an allowed connection pass): egress with the
   * destination the node forwards it to (after kube-proxy's DNAT), ingress with the source it
   * arrives from (after any masquerade).
   */
  readonly decide?: (check: PolicyCheck) => PolicyVerdict | null;
  /** The ipsets the node's rules name (`ipset save` text), loaded into the node's namespace. */
  readonly nodeIpsets?: (node: string) => string;
  /** The userspace program reading the node's queues (the enforcer's controller answering queued packets). */
  readonly queueReader?: (node: string) => QueueReader;
  /**
   * The policy behind a connection's first packet dropped in a node namespace, when the enforcer's
   * rules or queue dropped it; null when something else did.
   */
  readonly explainDrop?: (drop: PolicyDrop) => PolicyVerdict | null;
  /**
   * For an enforcer whose rules consult a source pod's and a destination pod's chains in the
   * order the pods come in the node's rules (kube-router): which comes first for two pods of one
   * node. A connection both ends' policies refuse is rejected, and explained, by the first.
   */
  readonly chainOrder?: (src: string, dst: string) => 'src-first' | 'dst-first';
}

/** A connection's first packet dropped (or rejected) in a node namespace. */
export interface PolicyDrop {
  readonly node: string;
  readonly src: string;
  readonly dst: string;
  readonly dport: number;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  /** The engine's reason (`REJECT --reject-with …`, `NFQUEUE: …`). */
  readonly reason: string;
  /** The node's trace events of this packet, when traced. */
  readonly events: readonly TraceEvent[] | null;
  /**
   * Untraced, for an enforcer whose rules consult the two pods' chains one after the other
   * (`PolicyEnforcer.chainOrder`): which pod's chain comes first, when not the one the node holds.
   */
  readonly order?: 'src-first' | 'dst-first';
}

/** Makes an enforcer for a snapshot. */
/**
 * Makes an enforcer for a snapshot. `context.nodeAddresses` holds each node's addresses beyond
 * its `status.addresses` (the bridge's gateway address the CNI gives it), so that traffic the node
 * sends from them counts as the node's.
 */
export type PolicyEnforcerFactory = (snapshot: Snapshot, context?: EnforcerContext) => PolicyEnforcer;

/** What the cluster knows about its nodes beyond the snapshot, for {@link PolicyEnforcerFactory}. */
export interface EnforcerContext {
  readonly nodeAddresses?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The compilers this build has. kube-proxy, the CNI node rules and the NetworkPolicy enforcers are
 * compiled in `compile/kube-proxy`, `compile/cni` and `compile/netpol`; where a build lacks one,
 * its entry is null (or absent) and asking for it is a typed `UNSUPPORTED` error naming the
 * component, except the CNI node rules, whose absence is a warning (pods still connect; hostPorts
 * and the bridge's masquerade do not happen).
 */
export const COMPONENTS: {
  kubeProxy: KubeProxyCompiler | null;
  cniNodeRules: CniRulesCompiler | null;
  netpol: Partial<Record<Exclude<NetpolImplementation, 'none'>, PolicyEnforcerFactory>>;
} = {
  kubeProxy: (snapshot, node, { mode }) => compileKubeProxy(snapshot, node, { mode }),
  cniNodeRules: (snapshot, node) => compileCniNodeRules(snapshot, node, {}),
  netpol: {
    reference: referenceEnforcer,
    'kube-router': (snapshot, context) => kubeRouterEnforcer(snapshot, context, 'iptables'),
    'kube-router-nftables': (snapshot, context) => kubeRouterEnforcer(snapshot, context, 'nftables'),
    'kube-network-policies': kubeNetworkPoliciesEnforcer,
  },
};

/**
 * The reference evaluator (`netpol/`) as a verdict at the pod's veth: egress judged for the
 * source pod against the address the node forwards to, ingress for the destination pod against
 * the address the packet arrives from.
 */
function referenceEnforcer(snapshot: Snapshot, context: EnforcerContext = {}): PolicyEnforcer {
  const evaluator = new NetworkPolicyEvaluator(snapshot, context.nodeAddresses !== undefined ? { nodeAddresses: context.nodeAddresses } : {});
  return {
    decide(c: PolicyCheck): PolicyVerdict | null {
      const pod = `${c.pod.metadata.namespace ?? 'default'}/${c.pod.metadata.name}`;
      const v = c.direction === 'egress'
        ? evaluator.evaluate({ from: { pod, address: c.src }, to: { address: c.dst }, port: c.dport, protocol: c.protocol }).egress
        : evaluator.evaluate({ from: { address: c.src }, to: { pod, address: c.dst }, port: c.dport, protocol: c.protocol }).ingress;
      if (v.allowed) return null;
      return { namespace: v.policy?.namespace ?? c.pod.metadata.namespace ?? 'default', name: v.policy?.name ?? '', direction: c.direction, rule: v.policy?.rule ?? null };
    },
  };
}

/** A pod with a namespace of its own and an address, as enforcers find it by address. */
interface AddressedPod {
  readonly key: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly node: string;
  readonly ips: readonly string[];
}

function addressedPods(snapshot: Snapshot): Map<string, AddressedPod> {
  const byIp = new Map<string, AddressedPod>();
  for (const p of snapshot.pods) {
    if (p.spec.hostNetwork === true || ['Failed', 'Succeeded'].includes(p.status?.phase ?? '')) continue;
    const ips = p.status?.podIPs?.map((x) => x.ip) ?? (p.status?.podIP !== undefined ? [p.status.podIP] : []);
    const namespace = p.metadata.namespace ?? 'default';
    const pod = { key: `${namespace}/${p.metadata.name}`, namespace, labels: p.metadata.labels ?? {}, node: p.spec.nodeName ?? '', ips };
    for (const ip of ips) byIp.set(ip, pod);
  }
  return byIp;
}

/** The reference's verdict of one direction as the policy that decided (the isolating policy when it blocks). */
function asVerdict(v: DirectionVerdict, direction: 'ingress' | 'egress'): PolicyVerdict | null {
  if (v.allowed || v.policy === null) return null;
  return { namespace: v.policy.namespace, name: v.policy.name, direction, rule: v.policy.rule };
}

/** What kube-router leaves on a node, in either mode. */
interface KubeRouterNode {
  readonly texts: readonly string[];
  readonly ipsets: string;
}

/**
 * kube-router's network-policy controller: in its iptables mode, its filter rules and ipsets
 * compiled for each node (`compile/netpol`), loaded into the node's namespace before kube-proxy's
 * (the controller keeps its jumps first in INPUT, FORWARD and OUTPUT); in its nftables mode, its
 * tables `kube-router-filter-ipv4`/`-ipv6` with their named sets. A connection its rules reject is
 * attributed to the pod whose `KUBE-POD-FW-*` chain rejected it (read from the trace; without one,
 * the first of the two pods' chains the node's rules reach whose direction the reference evaluator
 * blocks) and to the policy isolating that pod.
 */
function kubeRouterEnforcer(snapshot: Snapshot, context: EnforcerContext = {}, mode: 'iptables' | 'nftables' = 'iptables'): PolicyEnforcer {
  const dual = snapshot.pods.some((p) => (p.status?.podIPs ?? []).some((x) => x.ip.includes(':')));
  const compiled = new Map<string, KubeRouterNode>();
  const rules = (node: string): KubeRouterNode => {
    let r = compiled.get(node);
    if (r === undefined) {
      if (mode === 'nftables') r = { texts: [compileKubeRouterNft(snapshot, node, { families: dual ? [4, 6] : [4] }).nft], ipsets: '' };
      else {
        const k = compileKubeRouter(snapshot, node, { families: dual ? [4, 6] : [4] });
        r = { texts: [k.rules, k.rules6].filter((t) => t !== ''), ipsets: k.ipsets };
      }
      compiled.set(node, r);
    }
    return r;
  };
  const evaluator = new NetworkPolicyEvaluator(snapshot, context.nodeAddresses !== undefined ? { nodeAddresses: context.nodeAddresses } : {});
  const byIp = addressedPods(snapshot);
  const byChain = new Map<string, AddressedPod>();
  for (const p of byIp.values()) byChain.set(kubeRouterPodChain(p.namespace, p.key.slice(p.namespace.length + 1)), p);
  const policies = snapshot.networkPolicies.map((p) => ({ p: defaultNetworkPolicy(p), sel: compileSelector(p.spec?.podSelector ?? {}) }));
  // The compilers write a node's pods in the snapshot's order (kube-router takes it from a map):
  // the top chains reach each pod's chain, for traffic to it and from it, in that order.
  const rank = new Map(snapshot.pods.map((p, i) => [`${p.metadata.namespace ?? 'default'}/${p.metadata.name}`, i]));
  const order = (src: string, dst: string): 'src-first' | 'dst-first' => ((rank.get(src) ?? 0) <= (rank.get(dst) ?? 0) ? 'src-first' : 'dst-first');
  /** The policy kube-router's chain for `pod` held for `direction`: the reference's isolating one, else the first that selects the pod. */
  const isolating = (pod: AddressedPod, direction: 'ingress' | 'egress', d: PolicyDrop): PolicyVerdict => {
    const from = byIp.get(d.src);
    const to = byIp.get(d.dst);
    const v = evaluator.evaluate({ from: from !== undefined ? { pod: from.key, address: d.src } : { address: d.src }, to: to !== undefined ? { pod: to.key, address: d.dst } : { address: d.dst }, port: d.dport, protocol: d.protocol });
    const ref = asVerdict(direction === 'ingress' ? v.ingress : v.egress, direction);
    if (ref !== null) return { ...ref, rule: null };
    const first = policies.find((x) => x.p.namespace === pod.namespace && selectorMatches(x.sel, pod.labels) && (direction === 'ingress' ? x.p.ingress : x.p.egress))
      ?? policies.find((x) => x.p.namespace === pod.namespace && selectorMatches(x.sel, pod.labels));
    return { namespace: pod.namespace, name: first?.p.name ?? '', direction, rule: null };
  };
  return {
    nodeRules: (node) => rules(node).texts,
    ...(mode === 'iptables' ? { nodeIpsets: (node: string) => rules(node).ipsets } : {}),
    explainDrop(d) {
      // Only a node holding the compiled rules (not one given its own dump) is explained.
      if (!d.reason.startsWith('REJECT') || !compiled.has(d.node)) return null;
      if (d.events !== null) {
        // The rejecting rule: iptables names its target REJECT, nft its verdict (drop).
        let chain: string | null = null;
        for (const e of d.events) if (e.type === 'rule' && (e.target === 'REJECT' || (e.target === 'drop' && e.chain.startsWith('KUBE-POD-FW-')))) chain = e.chain;
        const pod = chain !== null ? byChain.get(chain) : undefined;
        if (pod === undefined) return null;
        return isolating(pod, pod.ips.includes(d.dst) ? 'ingress' : 'egress', d);
      }
      // Untraced: the pods of this node in the order their chains are reached (see chainOrder);
      // the first whose direction no rule allows is the chain that rejected.
      const src = byIp.get(d.src);
      const dst = byIp.get(d.dst);
      const candidates: [AddressedPod, 'ingress' | 'egress'][] = [];
      if (src !== undefined && src.node === d.node) candidates.push([src, 'egress']);
      if (dst !== undefined && dst.node === d.node) candidates.push([dst, 'ingress']);
      if (candidates.length === 2 && (d.order ?? order(src!.key, dst!.key)) === 'dst-first') candidates.reverse();
      for (const [pod, dir] of candidates) {
        const v = isolating(pod, dir, d);
        if (v.rule === null && v.name !== '') return v;
      }
      return candidates.length > 0 ? isolating(candidates[0]![0], candidates[0]![1], d) : null;
    },
    chainOrder: order,
  };
}

/** The conntrack label kube-network-policies' verdict sets on an accepted connection. */
const KNP_LABEL = 100;

/**
 * kube-network-policies: its nftables table on each node (`compile/netpol`), and its controller
 * as the program reading the queue: each queued packet is judged as the controller judges it
 * (egress of the source pod, then ingress of the destination pod, each pod looked up by address
 * in the whole cluster) by the reference evaluator; an accepted connection gets the conntrack
 * label 100, which lets its later packets pass the table's `ct label` rule.
 */
function kubeNetworkPoliciesEnforcer(snapshot: Snapshot, context: EnforcerContext = {}): PolicyEnforcer {
  const evaluator = new NetworkPolicyEvaluator(snapshot, context.nodeAddresses !== undefined ? { nodeAddresses: context.nodeAddresses } : {});
  const byIp = addressedPods(snapshot);
  const lastDrop = new Map<string, PolicyVerdict>();
  const by = 'kube-network-policies (the reference evaluator)';
  return {
    nodeRules: (node) => [compileKubeNetworkPolicies(snapshot, node).nft],
    queueReader: (node) => (q): QueueAnswer => {
      const protocol = q.proto === 6 ? 'TCP' : q.proto === 17 ? 'UDP' : q.proto === 132 ? 'SCTP' : null;
      if (protocol === null) return { verdict: 'accept', by, why: 'not TCP, UDP or SCTP', label: KNP_LABEL };
      const src = addressText(q.src, q.family);
      const dst = addressText(q.dst, q.family);
      const from = byIp.get(src);
      const to = byIp.get(dst);
      const v = evaluator.evaluate({ from: from !== undefined ? { pod: from.key, address: src } : { address: src }, to: to !== undefined ? { pod: to.key, address: dst } : { address: dst }, port: q.dport, protocol });
      const denied = asVerdict(v.egress, 'egress') ?? asVerdict(v.ingress, 'ingress');
      if (denied !== null) {
        lastDrop.set(node, denied);
        return { verdict: 'drop', by, why: `NetworkPolicy ${denied.namespace}/${denied.name}, ${denied.direction}, isolated and no rule allows it` };
      }
      const allowedBy = v.egress.reason === 'rule' ? v.egress.policy : v.ingress.reason === 'rule' ? v.ingress.policy : null;
      return { verdict: 'accept', by, why: allowedBy !== null ? `NetworkPolicy ${allowedBy.namespace}/${allowedBy.name} ${allowedBy.direction} rule ${allowedBy.rule}` : 'no policy isolates either end', label: KNP_LABEL };
    },
    explainDrop: (d) => (d.reason.startsWith('NFQUEUE: queued') ? lastDrop.get(d.node) ?? null : null),
  };
}

function unsupported(message: string): never {
  throw new NetfilterSimError(diagnostic('UNSUPPORTED', message));
}

/** kube-proxy's rules for a node, or an error when this build cannot compile them. */
export function kubeProxyRules(snapshot: Snapshot, node: string, mode: KubeProxyMode): string | null {
  if (mode === 'none') return null;
  const compile = COMPONENTS.kubeProxy;
  if (compile === null) unsupported(`kube-proxy (${mode} mode) is not compiled in this build: give each node's rules with --node-rules NODE=FILE (nodeRules), or --kube-proxy none`);
  return compile(snapshot, node, { mode });
}

/** The NetworkPolicy enforcer, null for `none`, or an error when this build has not got it. */
export function policyEnforcer(snapshot: Snapshot, implementation: NetpolImplementation, context: EnforcerContext = {}): PolicyEnforcer | null {
  if (implementation === 'none') return null;
  const make = COMPONENTS.netpol[implementation];
  if (make === undefined) unsupported(`NetworkPolicy enforcement "${implementation}" is not available in this build: give --netpol none (netpol: 'none')`);
  return make(snapshot, context);
}

/** The rules one node namespace loads, by front end. */
export interface NodeRuleSets {
  /** IPv4 iptables rules (several texts loaded in order, as `iptables-restore --noflush` would). */
  readonly rules4: Ruleset | null;
  readonly rules6: Ruleset | null;
  /** nft texts, loaded in order. */
  readonly nft: readonly string[];
}

/**
 * Which front end and family a rule text is for: nft (its first statement is an nft command),
 * ip6tables-save (its header says so, or it reads only as IPv6), or iptables-save.
 */
export function classifyRules(text: string, where: string): 'nft' | 4 | 6 {
  expectArgument(text, 'string', where);
  if (detectRulesSyntax(text) === 'nft') return 'nft';
  if (/^# Generated by ip6tables-save/m.test(text)) return 6;
  if (/^# Generated by iptables-save/m.test(text)) return 4;
  // Without the header: IPv6 when an address option holds an IPv6 address or the rules name
  // ICMPv6 (what only ip6tables-save prints), else IPv4; the parse then says what it cannot read.
  const v6 = /(^|\s)(-s|-d|--source|--destination|--to-destination|--to-source|--to|--on-ip)\s+(!\s+)?\[?[0-9a-fA-F]*:[0-9a-fA-F:.]*[:/\]]/m.test(text) || /(^|\s)(-p\s+(ipv6-icmp|icmpv6)|--icmpv6-type|--reject-with\s+icmp6-)/m.test(text);
  return v6 ? 6 : 4;
}

/**
 * Loads rule texts into one node's rule sets, in order: iptables texts of a family on top of each
 * other (as `iptables-restore --noflush` applies them), nft texts in a list.
 */
export function loadNodeRules(texts: readonly { readonly text: string; readonly where: string }[], cache?: Map<string, NodeRuleSets>): NodeRuleSets {
  // Nodes often hold the same rules (kube-proxy writes one set per cluster): read once.
  const key = cache !== undefined ? texts.map((t) => t.text).join('\u0000') : '';
  const hit = cache?.get(key);
  if (hit !== undefined) return hit;
  let rules4: Ruleset | null = null;
  let rules6: Ruleset | null = null;
  const nft: string[] = [];
  for (const { text, where } of texts) {
    const kind = classifyRules(text, where);
    if (kind === 'nft') {
      nft.push(text);
      continue;
    }
    const base = kind === 4 ? rules4 : rules6;
    const r = parseIptablesSave(text, { family: kind, ...(base !== null ? { noflush: base } : {}) });
    const errors = r.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new NetfilterSimError(errors.map((d) => ({ ...d, message: `${where}: ${d.message}` })));
    if (kind === 4) rules4 = r.ruleset;
    else rules6 = r.ruleset;
  }
  const sets = { rules4, rules6, nft };
  cache?.set(key, sets);
  return sets;
}
