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
import { NetworkPolicyEvaluator } from '../netpol/index.js';

/** kube-proxy's mode, or `none` (no kube-proxy rules: Services are not translated on nodes). */
export type KubeProxyMode = 'iptables' | 'nftables' | 'none';
/** Where NetworkPolicy is enforced, or `none`. */
export type NetpolImplementation = 'reference' | 'kube-router' | 'kube-network-policies' | 'none';
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
}

/** Makes an enforcer for a snapshot. */
export type PolicyEnforcerFactory = (snapshot: Snapshot) => PolicyEnforcer;

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
  netpol: { reference: referenceEnforcer },
};

/**
 * The reference evaluator (`netpol/`) as a verdict at the pod's veth: egress judged for the
 * source pod against the address the node forwards to, ingress for the destination pod against
 * the address the packet arrives from.
 */
function referenceEnforcer(snapshot: Snapshot): PolicyEnforcer {
  const evaluator = new NetworkPolicyEvaluator(snapshot);
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
export function policyEnforcer(snapshot: Snapshot, implementation: NetpolImplementation): PolicyEnforcer | null {
  if (implementation === 'none') return null;
  const make = COMPONENTS.netpol[implementation];
  if (make === undefined) unsupported(`NetworkPolicy enforcement "${implementation}" is not available in this build: give --netpol none (netpol: 'none')`);
  return make(snapshot);
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
