/**
 * What NetworkPolicy enforcers write on a node, compiled from a snapshot: kube-router's
 * network-policy controller (iptables and ipsets, or its nftables mode's tables and named sets)
 * and kube-network-policies (an nftables table that queues first packets to its controller).
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import type { Snapshot } from '../../model/kubernetes.js';
import { compileKubeNetworkPolicies } from './kube-network-policies.js';
import type { KubeNetworkPoliciesOptions } from './kube-network-policies.js';
import { compileKubeRouter } from './kube-router.js';
import type { KubeRouterOptions } from './kube-router.js';
import { compileKubeRouterNft } from './kube-router-nft.js';
import type { KubeRouterNftOptions } from './kube-router-nft.js';

export { compileKubeRouter, kubeRouterPodChain, type KubeRouterOptions, type KubeRouterRules } from './kube-router.js';
export { compileKubeRouterNft, KUBE_ROUTER_NFT_TABLES, type KubeRouterNftOptions, type KubeRouterNftRules } from './kube-router-nft.js';
export { compileKubeNetworkPolicies, VERDICT_CHAIN, type KubeNetworkPoliciesOptions, type QueueVerdict } from './kube-network-policies.js';

/** The enforcers {@link compileNetworkPolicy} compiles. */
export type NetworkPolicyImplementation = 'kube-router' | 'kube-router-nftables' | 'kube-network-policies';

/** Options of {@link compileNetworkPolicy}: the implementation, and its own options. */
export type CompileNetworkPolicyOptions =
  | ({ readonly implementation: 'kube-router' } & KubeRouterOptions)
  | ({ readonly implementation: 'kube-router-nftables' } & KubeRouterNftOptions)
  | ({ readonly implementation: 'kube-network-policies' } & KubeNetworkPoliciesOptions);

/**
 * What an enforcer leaves on a node, in the fields `Netns` takes: `rules`/`rules6`
 * (iptables-save text) and `ipsets` (ipset save text) for kube-router, `nft` (nft list ruleset
 * text) for kube-router's nftables mode and kube-network-policies; empty where the enforcer
 * writes nothing.
 */
export interface CompiledNetworkPolicy {
  readonly implementation: NetworkPolicyImplementation;
  readonly rules: string;
  readonly rules6: string;
  readonly ipsets: string;
  readonly nft: string;
  readonly warnings: readonly string[];
}

/**
 * The rules a NetworkPolicy enforcer writes on `node` for the snapshot's policies, pods and
 * namespaces. A policy the API server would refuse throws `INVALID_NETWORK_POLICY`.
 *
 * @example
 * ```ts
 * const kr = compileNetworkPolicy(snapshot, 'worker-1', { implementation: 'kube-router' });
 * kr.rules;  // iptables-save of the filter table
 * kr.ipsets; // the KUBE-SRC-* / KUBE-DST-* sets
 * ```
 */
export function compileNetworkPolicy(snapshot: Pick<Snapshot, 'namespaces' | 'pods' | 'networkPolicies'>, node: string, options: CompileNetworkPolicyOptions): CompiledNetworkPolicy {
  if (typeof node !== 'string' || node === '') throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', 'node must be a node name'));
  switch (options?.implementation) {
    case 'kube-router': {
      const r = compileKubeRouter(snapshot, node, options);
      return { implementation: 'kube-router', rules: r.rules, rules6: r.rules6, ipsets: r.ipsets, nft: '', warnings: r.warnings };
    }
    case 'kube-router-nftables': {
      const r = compileKubeRouterNft(snapshot, node, options);
      return { implementation: 'kube-router-nftables', rules: '', rules6: '', ipsets: '', nft: r.nft, warnings: r.warnings };
    }
    case 'kube-network-policies': {
      const r = compileKubeNetworkPolicies(snapshot, node, options);
      return { implementation: 'kube-network-policies', rules: '', rules6: '', ipsets: '', nft: r.nft, warnings: r.warnings };
    }
    default:
      throw new NetfilterSimError(diagnostic('BAD_CONFIG', `implementation "${String((options as { implementation?: unknown } | undefined)?.implementation)}" is not kube-router, kube-router-nftables or kube-network-policies`));
  }
}
