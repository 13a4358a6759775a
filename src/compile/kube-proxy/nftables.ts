/**
 * kube-proxy's nftables mode (`pkg/proxy/nftables/proxier.go`): the transaction of a full
 * `syncProxyRules` on a fresh node — `setupNFTables` then every service — in the text form
 * sigs.k8s.io/knftables hands to `nft -f` (`Transaction.String()`).
 *
 * Releases differ in the filter base chains: 1.33 hooks `filter-prerouting`, `filter-input`,
 * `filter-forward`, `filter-output` at dstnat-10 and `filter-output-post-dnat` at dstnat+10;
 * 1.34 (kubernetes#132456) keeps dstnat-10 only for `filter-prerouting-pre-dnat` and
 * `filter-output-pre-dnat` and moves `filter-input`, `filter-forward`, `filter-output` to
 * priority filter (0), with `cluster-ips-check` jumped to from `filter-output`; and since 1.34
 * (kubernetes#131492) a service chain's masquerade rule matches the ClusterIP alone.
 *
 * @internal
 * @module
 */
import type { ResolvedKubeProxyOptions } from './options.js';
import { minorOf } from './options.js';
import { categorizeEndpoints, cidrHas, externallyAccessible, usesClusterEndpoints, usesLocalEndpoints, type ProxyEndpoint, type ProxyService, type ProxyServicePort } from './services.js';
import { nftEndpointBase, nftServiceBase } from './names.js';

interface BaseChain {
  readonly name: string;
  readonly type: 'filter' | 'nat';
  readonly hook: string;
  readonly priority: number;
}

/** `nftablesBaseChains` of 1.33. */
const BASE_CHAINS_133: readonly BaseChain[] = [
  { name: 'filter-prerouting', type: 'filter', hook: 'prerouting', priority: -110 },
  { name: 'filter-input', type: 'filter', hook: 'input', priority: -110 },
  { name: 'filter-forward', type: 'filter', hook: 'forward', priority: -110 },
  { name: 'filter-output', type: 'filter', hook: 'output', priority: -110 },
  { name: 'filter-output-post-dnat', type: 'filter', hook: 'output', priority: -90 },
  { name: 'nat-prerouting', type: 'nat', hook: 'prerouting', priority: -100 },
  { name: 'nat-output', type: 'nat', hook: 'output', priority: -100 },
  { name: 'nat-postrouting', type: 'nat', hook: 'postrouting', priority: 100 },
];

/** `nftablesBaseChains` from 1.34 on. */
const BASE_CHAINS_134: readonly BaseChain[] = [
  { name: 'filter-prerouting-pre-dnat', type: 'filter', hook: 'prerouting', priority: -110 },
  { name: 'filter-output-pre-dnat', type: 'filter', hook: 'output', priority: -110 },
  { name: 'filter-input', type: 'filter', hook: 'input', priority: 0 },
  { name: 'filter-forward', type: 'filter', hook: 'forward', priority: 0 },
  { name: 'filter-output', type: 'filter', hook: 'output', priority: 0 },
  { name: 'nat-prerouting', type: 'nat', hook: 'prerouting', priority: -100 },
  { name: 'nat-output', type: 'nat', hook: 'output', priority: -100 },
  { name: 'nat-postrouting', type: 'nat', hook: 'postrouting', priority: 100 },
];

/** `nftablesJumpChains`: [destination, source, condition]. */
function jumpChains(minor: number): readonly (readonly [string, string, string])[] {
  const pre = minor >= 34 ? ['filter-prerouting-pre-dnat', 'filter-output-pre-dnat'] : ['filter-prerouting', 'filter-output'];
  const postDnatOutput = minor >= 34 ? 'filter-output' : 'filter-output-post-dnat';
  return [
    ['nodeport-endpoints-check', 'filter-input', 'ct state new'],
    ['service-endpoints-check', 'filter-input', 'ct state new'],
    ['service-endpoints-check', 'filter-forward', 'ct state new'],
    ['service-endpoints-check', 'filter-output', 'ct state new'],
    ['firewall-check', pre[0]!, 'ct state new'],
    ['firewall-check', pre[1]!, 'ct state new'],
    ['services', 'nat-output', ''],
    ['services', 'nat-prerouting', ''],
    ['masquerading', 'nat-postrouting', ''],
    ['cluster-ips-check', 'filter-forward', 'ct state new'],
    ['cluster-ips-check', postDnatOutput, 'ct state new'],
  ];
}

/** Builds one knftables transaction's text. */
class Tx {
  readonly ops: string[] = [];
  readonly prefix: string;
  constructor(prefix: string) {
    this.prefix = prefix;
  }
  op(verb: string, what: string, rest = ''): void {
    this.ops.push(`${verb} ${what} ${this.prefix}${rest === '' ? '' : ' ' + rest}`);
  }
  addChain(name: string, spec?: BaseChain, comment?: string): void {
    let body = '';
    if (spec) body = ` { type ${spec.type} hook ${spec.hook} priority ${spec.priority} ; }`;
    else if (comment !== undefined) body = ` { comment ${quote(comment)} ; }`;
    this.op('add', 'chain', name + body);
  }
  rule(chain: string, rule: string, comment?: string): void {
    this.op('add', 'rule', `${chain} ${rule}${comment === undefined ? '' : ' comment ' + quote(comment)}`);
  }
  /** Elements added so far, by container: key → value (nftElementStorage's view of this sync). */
  private readonly held = new Map<string, Map<string, string>>();
  /**
   * `nftElementStorage.ensureElem`: an element whose key is there already with another value is
   * deleted and added again (the later Service wins); with the same value, nothing is written.
   */
  element(container: string, key: readonly string[], value?: string, comment?: string): void {
    const k = key.join(' . ');
    let held = this.held.get(container);
    if (held === undefined) {
      held = new Map();
      this.held.set(container, held);
    }
    const before = held.get(k);
    if (before !== undefined) {
      if (before === (value ?? '')) return;
      this.op('delete', 'element', `${container} { ${k} }`);
    }
    held.set(k, value ?? '');
    let body = `{ ${key.join(' . ')}`;
    if (comment !== undefined) body += ` comment ${quote(comment)}`;
    if (value !== undefined) body += ` : ${value}`;
    this.op('add', 'element', `${container} ${body} }`);
  }
}

/** Go's `%q` for the plain strings kube-proxy writes. */
function quote(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * The transaction of a full sync for one family, services in the order given: every operation
 * kube-proxy issues on a node where its table does not exist yet (the add/delete pairs that
 * recreate base chains, the flushes), as `nft -f` input.
 */
export function nftablesTransaction(services: readonly ProxyService[], o: ResolvedKubeProxyOptions): string {
  const minor = minorOf(o.version);
  const ipX = o.family === 4 ? 'ip' : 'ip6';
  const addrType = o.family === 4 ? 'ipv4_addr' : 'ipv6_addr';
  const noLocalhost = o.family === 4 ? 'ip daddr != 127.0.0.0/8' : 'ip6 daddr != ::1';
  const tx = new Tx(`${ipX} kube-proxy`);
  const mark = o.masqueradeMark;
  const baseChains = minor >= 34 ? BASE_CHAINS_134 : BASE_CHAINS_133;

  // setupNFTables
  tx.ops.push(`add table ${ipX} kube-proxy { comment "rules for kube-proxy" ; }`);
  for (const bc of baseChains) {
    tx.addChain(bc.name);
    tx.op('delete', 'chain', bc.name);
  }
  for (const bc of baseChains) {
    tx.addChain(bc.name, bc);
    tx.op('flush', 'chain', bc.name);
  }
  const created = new Set<string>();
  const ensureChain = (name: string): void => {
    if (created.has(name)) return;
    created.add(name);
    tx.addChain(name);
    tx.op('flush', 'chain', name);
  };
  for (const [dst, src, extra] of jumpChains(minor)) {
    ensureChain(dst);
    tx.rule(src, extra === '' ? `jump ${dst}` : `${extra} jump ${dst}`);
  }
  for (const c of ['services', 'cluster-ips-check', 'masquerading', 'mark-for-masquerade']) ensureChain(c);
  tx.rule('mark-for-masquerade', `mark set mark or ${mark}`);
  tx.rule('masquerading', `mark and ${mark} == 0 return`);
  tx.rule('masquerading', `mark set mark xor ${mark}`);
  tx.rule('masquerading', 'masquerade fully-random');
  tx.op('add', 'set', `cluster-ips { type ${addrType} ; comment "Active ClusterIPs" ; }`);
  tx.rule('cluster-ips-check', `${ipX} daddr @cluster-ips reject`, 'Reject traffic to invalid ports of ClusterIPs');
  if (o.serviceCIDRs.length > 0) tx.rule('cluster-ips-check', `${ipX} daddr { ${o.serviceCIDRs.join(',')} } drop`, 'Drop traffic to unallocated ClusterIPs');
  tx.op('add', 'set', `nodeport-ips { type ${addrType} ; comment "IPs that accept NodePort traffic" ; }`);
  const matchAll = o.nodePortIPs === null;
  if (matchAll) tx.op('delete', 'set', 'nodeport-ips');
  else {
    tx.op('flush', 'set', 'nodeport-ips');
    for (const ip of o.nodePortIPs!) {
      if (ip === '::1' || ip.startsWith('127.')) {
        o.warn('--nodeport-addresses includes localhost but localhost NodePorts are not supported (nftables mode); kube-proxy leaves it out');
        continue;
      }
      tx.element('nodeport-ips', [ip]);
    }
  }
  tx.op('add', 'map', `no-endpoint-services { type ${addrType} . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`);
  tx.op('add', 'map', 'no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }');
  tx.addChain('reject-chain', undefined, 'helper for @no-endpoint-services / @no-endpoint-nodeports');
  tx.op('flush', 'chain', 'reject-chain');
  tx.rule('reject-chain', 'reject');
  tx.rule('service-endpoints-check', `${ipX} daddr . meta l4proto . th dport vmap @no-endpoint-services`);
  if (matchAll) tx.rule('nodeport-endpoints-check', `${noLocalhost} meta l4proto . th dport vmap @no-endpoint-nodeports`);
  else tx.rule('nodeport-endpoints-check', `${ipX} daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports`);
  tx.op('add', 'map', `firewall-ips { type ${addrType} . inet_proto . inet_service : verdict ; comment "destinations that are subject to LoadBalancerSourceRanges" ; }`);
  ensureChain('firewall-check');
  tx.rule('firewall-check', `${ipX} daddr . meta l4proto . th dport vmap @firewall-ips`);
  tx.op('add', 'map', `service-ips { type ${addrType} . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`);
  tx.op('add', 'map', 'service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }');
  tx.rule('services', `${ipX} daddr . meta l4proto . th dport vmap @service-ips`);
  if (matchAll) tx.rule('services', `fib daddr type local ${noLocalhost} meta l4proto . th dport vmap @service-nodeports`);
  else tx.rule('services', `${ipX} daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports`);
  tx.op('flush', 'set', 'cluster-ips');
  for (const m of ['service-ips', 'firewall-ips', 'no-endpoint-services', 'no-endpoint-nodeports', 'service-nodeports']) tx.op('flush', 'map', m);

  // syncProxyRules: every service
  const active = new Set<string>();
  const ensureServiceChain = (name: string): void => {
    if (active.has(name)) return;
    active.add(name);
    tx.addChain(name);
    tx.op('flush', 'chain', name);
  };
  for (const s of services) writeService(tx, s, o, ipX, addrType, ensureServiceChain);
  return tx.ops.join('\n') + '\n';
}

function writeService(tx: Tx, s: ProxyService, o: ResolvedKubeProxyOptions, ipX: string, addrType: string, ensureChain: (name: string) => void): void {
  const minor = minorOf(o.version);
  const p = s.port;
  const protocol = p.protocol;
  const base = nftServiceBase(p);
  const clusterPolicyChain = `service-${base}`;
  const localPolicyChain = `local-${base}`;
  const externalTrafficChain = `external-${base}`;
  const fwChain = `firewall-${base}`;
  const cat = categorizeEndpoints(s.endpoints, p);
  const epChain = (ep: ProxyEndpoint): string => `endpoint-${nftEndpointBase(p, ep)}`;
  const affinitySet = (ep: ProxyEndpoint): string => `affinity-${nftEndpointBase(p, ep)}`;
  for (const ep of cat.allReachable) ensureChain(epChain(ep));
  const usesClusterPolicyChain = cat.cluster.length > 0 && usesClusterEndpoints(p);
  if (usesClusterPolicyChain) ensureChain(clusterPolicyChain);
  const usesLocalPolicyChain = cat.local.length > 0 && usesLocalEndpoints(p);
  if (usesLocalPolicyChain) ensureChain(localPolicyChain);
  let internalTrafficChain = clusterPolicyChain;
  let hasInternalEndpoints = cat.hasAny;
  if (p.internalPolicyLocal) {
    internalTrafficChain = localPolicyChain;
    if (cat.local.length === 0) hasInternalEndpoints = false;
  }
  let externalPolicyChain = clusterPolicyChain;
  let hasExternalEndpoints = cat.hasAny;
  if (p.externalPolicyLocal) {
    externalPolicyChain = localPolicyChain;
    if (cat.local.length === 0) hasExternalEndpoints = false;
  }
  const usesExternalTrafficChain = cat.hasAny && externallyAccessible(p);
  if (usesExternalTrafficChain) ensureChain(externalTrafficChain);
  let internalVerdict = '';
  let externalVerdict = '';
  if (!cat.hasAny) {
    internalVerdict = 'goto reject-chain';
    externalVerdict = 'goto reject-chain';
  } else {
    if (!hasInternalEndpoints) internalVerdict = 'drop';
    if (!hasExternalEndpoints) externalVerdict = 'drop';
  }
  const port = String(p.port);
  tx.element('cluster-ips', [p.clusterIP]);
  if (hasInternalEndpoints) tx.element('service-ips', [p.clusterIP, protocol, port], `goto ${internalTrafficChain}`);
  else tx.element('no-endpoint-services', [p.clusterIP, protocol, port], internalVerdict, p.nameString);
  for (const ip of p.externalIPs) {
    if (cat.hasAny) tx.element('service-ips', [ip, protocol, port], `goto ${externalTrafficChain}`);
    if (!hasExternalEndpoints) tx.element('no-endpoint-services', [ip, protocol, port], externalVerdict, p.nameString);
  }
  const usesFWChain = p.loadBalancerVIPs.length > 0 && p.loadBalancerSourceRanges.length > 0;
  if (usesFWChain) ensureChain(fwChain);
  for (const ip of p.loadBalancerVIPs) {
    if (cat.hasAny) tx.element('service-ips', [ip, protocol, port], `goto ${externalTrafficChain}`);
    if (usesFWChain) tx.element('firewall-ips', [ip, protocol, port], `goto ${fwChain}`);
  }
  if (!hasExternalEndpoints) for (const ip of p.loadBalancerVIPs) tx.element('no-endpoint-services', [ip, protocol, port], externalVerdict, p.nameString);
  if (p.nodePort !== 0) {
    if (cat.hasAny) tx.element('service-nodeports', [protocol, String(p.nodePort)], `goto ${externalTrafficChain}`);
    if (!hasExternalEndpoints) tx.element('no-endpoint-nodeports', [protocol, String(p.nodePort)], externalVerdict, p.nameString);
  }
  if (hasInternalEndpoints) {
    // kubernetes#131492 (1.34): the chain is only reached through @service-ips, which matched the
    // protocol and port already, so the rule stopped matching them again.
    const match = minor >= 34 ? `${ipX} daddr ${p.clusterIP}` : `${ipX} daddr ${p.clusterIP} ${protocol} dport ${port}`;
    if (o.masqueradeAll) tx.rule(internalTrafficChain, `${match} jump mark-for-masquerade`);
    else if (o.localCIDR !== null) tx.rule(internalTrafficChain, `${match} ${ipX} saddr != ${o.localCIDR} jump mark-for-masquerade`);
  }
  if (usesExternalTrafficChain) {
    if (!p.externalPolicyLocal) tx.rule(externalTrafficChain, 'jump mark-for-masquerade');
    else {
      if (o.localCIDR !== null) tx.rule(externalTrafficChain, `${ipX} saddr ${o.localCIDR} goto ${clusterPolicyChain}`, 'short-circuit pod traffic');
      tx.rule(externalTrafficChain, 'fib saddr type local jump mark-for-masquerade', 'masquerade local traffic');
      tx.rule(externalTrafficChain, `fib saddr type local goto ${clusterPolicyChain}`, 'short-circuit local traffic');
    }
    if (hasExternalEndpoints) tx.rule(externalTrafficChain, `goto ${externalPolicyChain}`);
  }
  if (usesFWChain) {
    const sources: string[] = [];
    let allowFromNode = false;
    for (const cidr of p.loadBalancerSourceRanges) {
      if (sources.length > 0) sources.push(',');
      sources.push(cidr);
      if (cidrHas(cidr, o.nodeIP, o.family)) allowFromNode = true;
    }
    if (allowFromNode) for (const ip of p.loadBalancerVIPs) sources.push(',', ip);
    tx.rule(fwChain, `${ipX} saddr != { ${sources.join(' ')} } drop`);
  }
  if (p.clientIPAffinity) {
    for (const ep of cat.allReachable) {
      tx.op('add', 'set', `${affinitySet(ep)} { type ${addrType} ; flags dynamic,timeout ; timeout ${p.stickyMaxAgeSeconds}s ; }`);
    }
  }
  if (usesClusterPolicyChain) writeServiceToEndpointRules(tx, p, clusterPolicyChain, cat.cluster, ipX, epChain, affinitySet);
  if (usesLocalPolicyChain) writeServiceToEndpointRules(tx, p, localPolicyChain, cat.local, ipX, epChain, affinitySet);
  for (const ep of cat.allReachable) {
    const chain = epChain(ep);
    tx.rule(chain, `${ipX} saddr ${ep.ip} jump mark-for-masquerade`);
    if (p.clientIPAffinity) tx.rule(chain, `update @${affinitySet(ep)} { ${ipX} saddr }`);
    tx.rule(chain, `meta l4proto ${protocol} dnat to ${ep.text}`);
  }
}

function writeServiceToEndpointRules(
  tx: Tx,
  p: ProxyServicePort,
  svcChain: string,
  endpoints: readonly ProxyEndpoint[],
  ipX: string,
  epChain: (ep: ProxyEndpoint) => string,
  affinitySet: (ep: ProxyEndpoint) => string,
): void {
  if (p.clientIPAffinity) for (const ep of endpoints) tx.rule(svcChain, `${ipX} saddr @${affinitySet(ep)} goto ${epChain(ep)}`);
  const elements: string[] = [];
  endpoints.forEach((ep, i) => {
    elements.push(String(i), ':', 'goto', epChain(ep));
    if (i !== endpoints.length - 1) elements.push(',');
  });
  tx.rule(svcChain, `numgen random mod ${endpoints.length} vmap { ${elements.join(' ')} }`);
}
