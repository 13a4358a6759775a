/**
 * kube-proxy's iptables mode (`pkg/proxy/iptables/proxier.go`, `syncProxyRules`): the
 * iptables-restore payload of a full sync, and the node as `iptables-save` shows it afterwards
 * (the payload plus the chains and jump rules kube-proxy adds with `iptables -N`/`-I` before
 * it, and its canary chains).
 *
 * @internal
 * @module
 */
import type { ResolvedKubeProxyOptions } from './options.js';
import { categorizeEndpoints, cidrHas, type ProxyService, type ProxyServicePort, type ProxyEndpoint } from './services.js';
import { iptablesEndpointChain, iptablesServiceChains } from './names.js';

/** largeClusterEndpointsThreshold: past this many endpoints, per-endpoint comments are dropped. */
export const LARGE_CLUSTER_ENDPOINTS_THRESHOLD = 1000;

/** nfacct counter names (pkg/proxy/metrics). */
const NFACCT_INVALID = 'ct_state_invalid_dropped_pkts';
const NFACCT_LOCALHOST_NODEPORT = 'localhost_nps_accepted_pkts';

/** The nfacct objects the rules name when `nfacct` is on (they must exist before the rules load). */
export function kubeProxyNfacctObjects(o: ResolvedKubeProxyOptions): string[] {
  if (!o.nfacct) return [];
  const out: string[] = [];
  if (!o.conntrackTCPBeLiberal) out.push(NFACCT_INVALID);
  if (o.localhostNodePorts && o.family === 4) out.push(NFACCT_LOCALHOST_NODEPORT);
  return out;
}

/** A chain's jump rule as kube-proxy ensures it (`iptablesJumpChains`). */
interface JumpChain {
  readonly table: 'filter' | 'nat';
  readonly dst: string;
  readonly src: string;
  readonly comment: string;
  readonly extra: readonly string[];
}

const NEW = ['-m', 'conntrack', '--ctstate', 'NEW'];

/** `iptablesJumpChains`, then `iptablesKubeletJumpChains` (no comment). */
const JUMP_CHAINS: readonly JumpChain[] = [
  { table: 'filter', dst: 'KUBE-EXTERNAL-SERVICES', src: 'INPUT', comment: 'kubernetes externally-visible service portals', extra: NEW },
  { table: 'filter', dst: 'KUBE-EXTERNAL-SERVICES', src: 'FORWARD', comment: 'kubernetes externally-visible service portals', extra: NEW },
  { table: 'filter', dst: 'KUBE-NODEPORTS', src: 'INPUT', comment: 'kubernetes health check service ports', extra: [] },
  { table: 'filter', dst: 'KUBE-SERVICES', src: 'FORWARD', comment: 'kubernetes service portals', extra: NEW },
  { table: 'filter', dst: 'KUBE-SERVICES', src: 'OUTPUT', comment: 'kubernetes service portals', extra: NEW },
  { table: 'filter', dst: 'KUBE-FORWARD', src: 'FORWARD', comment: 'kubernetes forwarding rules', extra: [] },
  { table: 'filter', dst: 'KUBE-PROXY-FIREWALL', src: 'INPUT', comment: 'kubernetes load balancer firewall', extra: NEW },
  { table: 'filter', dst: 'KUBE-PROXY-FIREWALL', src: 'OUTPUT', comment: 'kubernetes load balancer firewall', extra: NEW },
  { table: 'filter', dst: 'KUBE-PROXY-FIREWALL', src: 'FORWARD', comment: 'kubernetes load balancer firewall', extra: NEW },
  { table: 'nat', dst: 'KUBE-SERVICES', src: 'OUTPUT', comment: 'kubernetes service portals', extra: [] },
  { table: 'nat', dst: 'KUBE-SERVICES', src: 'PREROUTING', comment: 'kubernetes service portals', extra: [] },
  { table: 'nat', dst: 'KUBE-POSTROUTING', src: 'POSTROUTING', comment: 'kubernetes postrouting rules', extra: [] },
  { table: 'filter', dst: 'KUBE-FIREWALL', src: 'INPUT', comment: '', extra: [] },
  { table: 'filter', dst: 'KUBE-FIREWALL', src: 'OUTPUT', comment: '', extra: [] },
];

/** Quotes an argument as kube-proxy writes it into the restore payload (it quotes comments with spaces itself). */
function q(s: string): string {
  return `"${s}"`;
}

/** proxier.probability(n): `%0.10f` of 1/n. */
export function probability(n: number): string {
  return (1 / n).toFixed(10);
}

/** The restore payload's four line buffers. */
class Buffers {
  readonly filterChains: string[] = [];
  readonly filterRules: string[] = [];
  readonly natChains: string[] = [];
  readonly natRules: string[] = [];
}

const chainLine = (name: string): string => `:${name} - [0:0]`;
/** Joins words and lists of words with spaces (without `flat()`, which dominated the compile's profile). */
function line(...words: readonly (string | readonly string[])[]): string {
  let out = '';
  for (const w of words) {
    if (typeof w === 'string') out = out === '' ? w : `${out} ${w}`;
    else for (const x of w) out = out === '' ? x : `${out} ${x}`;
  }
  return out;
}

/**
 * The iptables-restore payload of one full `syncProxyRules` (its `iptablesData`), services in
 * the order given.
 */
export function iptablesRestorePayload(services: readonly ProxyService[], o: ResolvedKubeProxyOptions): string {
  const b = new Buffers();
  const isIPv6 = o.family === 6;
  const mark = o.masqueradeMark;
  for (const c of ['KUBE-SERVICES', 'KUBE-EXTERNAL-SERVICES', 'KUBE-FORWARD', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL']) b.filterChains.push(chainLine(c));
  for (const c of ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ']) b.natChains.push(chainLine(c));
  b.natRules.push(line('-A', 'KUBE-POSTROUTING', '-m', 'mark', '!', '--mark', `${mark}/${mark}`, '-j', 'RETURN'));
  b.natRules.push(line('-A', 'KUBE-POSTROUTING', '-j', 'MARK', '--xor-mark', mark));
  b.natRules.push(line('-A', 'KUBE-POSTROUTING', '-m', 'comment', '--comment', q('kubernetes service traffic requiring SNAT'), '-j', 'MASQUERADE', o.randomFully ? ['--random-fully'] : []));
  b.natRules.push(line('-A', 'KUBE-MARK-MASQ', '-j', 'MARK', '--or-mark', mark));
  if (!isIPv6 && o.localhostNodePorts) {
    b.filterChains.push(chainLine('KUBE-FIREWALL'));
    b.filterRules.push(line('-A', 'KUBE-FIREWALL', '-m', 'comment', '--comment', q('block incoming localnet connections'), '-d', '127.0.0.0/8', '!', '-s', '127.0.0.0/8', '-m', 'conntrack', '!', '--ctstate', 'RELATED,ESTABLISHED,DNAT', '-j', 'DROP'));
  }
  let totalEndpoints = 0;
  for (const s of services) totalEndpoints += s.endpoints.length;
  const largeCluster = totalEndpoints > LARGE_CLUSTER_ENDPOINTS_THRESHOLD;
  const withComment = (args: string[], comment: string): string[] => (largeCluster ? args : [...args, '-m', 'comment', '--comment', comment]);

  for (const s of services) writeService(b, s, o, withComment);

  // The tail call to KUBE-NODEPORTS, after every service rule.
  const lastComment = q('kubernetes service nodeports; NOTE: this must be the last rule in this chain');
  if (o.nodePortIPs === null) {
    const dst = ['-m', 'addrtype', '--dst-type', 'LOCAL'];
    if (isIPv6) dst.push('!', '-d', '::1/128');
    else if (!o.localhostNodePorts) dst.push('!', '-d', '127.0.0.0/8');
    b.natRules.push(line('-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', lastComment, dst, '-j', 'KUBE-NODEPORTS'));
  } else {
    for (const ip of o.nodePortIPs) {
      const loopback = ip === '::1' || ip.startsWith('127.');
      if (loopback && (isIPv6 || !o.localhostNodePorts)) continue;
      b.natRules.push(line('-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', lastComment, '-d', ip, '-j', 'KUBE-NODEPORTS'));
    }
  }
  if (!o.conntrackTCPBeLiberal) {
    b.filterRules.push(line('-A', 'KUBE-FORWARD', '-m', 'conntrack', '--ctstate', 'INVALID', o.nfacct ? ['-m', 'nfacct', '--nfacct-name', NFACCT_INVALID] : [], '-j', 'DROP'));
  }
  b.filterRules.push(line('-A', 'KUBE-FORWARD', '-m', 'comment', '--comment', q('kubernetes forwarding rules'), '-m', 'mark', '--mark', `${mark}/${mark}`, '-j', 'ACCEPT'));
  b.filterRules.push(line('-A', 'KUBE-FORWARD', '-m', 'comment', '--comment', q('kubernetes forwarding conntrack rule'), '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', 'ACCEPT'));
  const out = ['*filter', ...b.filterChains, ...b.filterRules, 'COMMIT', '*nat', ...b.natChains, ...b.natRules, 'COMMIT'];
  return out.join('\n') + '\n';
}

function writeService(b: Buffers, s: ProxyService, o: ResolvedKubeProxyOptions, withComment: (args: string[], comment: string) => string[]): void {
  const p = s.port;
  const protocol = p.protocol;
  const name = p.nameString;
  const chains = iptablesServiceChains(p);
  const cat = categorizeEndpoints(s.endpoints, p);
  const usesClusterPolicyChain = cat.cluster.length > 0 && usesCluster(p);
  const usesLocalPolicyChain = cat.local.length > 0 && usesLocal(p);
  let internalPolicyChain = chains.svc;
  let hasInternalEndpoints = cat.hasAny;
  if (p.internalPolicyLocal) {
    internalPolicyChain = chains.svl;
    if (cat.local.length === 0) hasInternalEndpoints = false;
  }
  let externalPolicyChain = chains.svc;
  let hasExternalEndpoints = cat.hasAny;
  if (p.externalPolicyLocal) {
    externalPolicyChain = chains.svl;
    if (cat.local.length === 0) hasExternalEndpoints = false;
  }
  const externalTrafficChain = chains.ext;
  const usesExternalTrafficChain = cat.hasAny && (p.nodePort !== 0 || p.loadBalancerVIPs.length > 0 || p.externalIPs.length > 0);
  const usesFWChain = cat.hasAny && p.loadBalancerVIPs.length > 0 && p.loadBalancerSourceRanges.length > 0;
  const loadBalancerTrafficChain = usesFWChain ? chains.fw : externalTrafficChain;
  let internalTarget = '';
  let internalComment = '';
  let externalTarget = '';
  let externalComment = '';
  if (!cat.hasAny) {
    internalTarget = 'REJECT';
    internalComment = q(`${name} has no endpoints`);
    externalTarget = 'REJECT';
    externalComment = internalComment;
  } else {
    if (!hasInternalEndpoints) {
      internalTarget = 'DROP';
      internalComment = q(`${name} has no local endpoints`);
    }
    if (!hasExternalEndpoints) {
      externalTarget = 'DROP';
      externalComment = q(`${name} has no local endpoints`);
    }
  }
  const port = String(p.port);
  // Capture the ClusterIP.
  if (hasInternalEndpoints) {
    b.natRules.push(line('-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', q(`${name} cluster IP`), '-m', protocol, '-p', protocol, '-d', p.clusterIP, '--dport', port, '-j', internalPolicyChain));
  } else {
    b.filterRules.push(line('-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', internalComment, '-m', protocol, '-p', protocol, '-d', p.clusterIP, '--dport', port, '-j', internalTarget));
  }
  // External IPs.
  for (const ip of p.externalIPs) {
    if (cat.hasAny) b.natRules.push(line('-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', q(`${name} external IP`), '-m', protocol, '-p', protocol, '-d', ip, '--dport', port, '-j', externalTrafficChain));
    if (!hasExternalEndpoints) b.filterRules.push(line('-A', 'KUBE-EXTERNAL-SERVICES', '-m', 'comment', '--comment', externalComment, '-m', protocol, '-p', protocol, '-d', ip, '--dport', port, '-j', externalTarget));
  }
  // Load-balancer ingress.
  for (const ip of p.loadBalancerVIPs) {
    if (cat.hasAny) b.natRules.push(line('-A', 'KUBE-SERVICES', '-m', 'comment', '--comment', q(`${name} loadbalancer IP`), '-m', protocol, '-p', protocol, '-d', ip, '--dport', port, '-j', loadBalancerTrafficChain));
    if (usesFWChain) b.filterRules.push(line('-A', 'KUBE-PROXY-FIREWALL', '-m', 'comment', '--comment', q(`${name} traffic not accepted by ${chains.fw}`), '-m', protocol, '-p', protocol, '-d', ip, '--dport', port, '-j', 'DROP'));
  }
  if (!hasExternalEndpoints) {
    for (const ip of p.loadBalancerVIPs) b.filterRules.push(line('-A', 'KUBE-EXTERNAL-SERVICES', '-m', 'comment', '--comment', externalComment, '-m', protocol, '-p', protocol, '-d', ip, '--dport', port, '-j', externalTarget));
  }
  // NodePorts.
  if (p.nodePort !== 0) {
    const np = String(p.nodePort);
    if (cat.hasAny) {
      if (o.localhostNodePorts && o.family === 4 && o.nfacct) {
        b.natRules.push(line('-A', 'KUBE-NODEPORTS', '-m', 'comment', '--comment', name, '-m', protocol, '-p', protocol, '-d', '127.0.0.0/8', '--dport', np, '-m', 'nfacct', '--nfacct-name', NFACCT_LOCALHOST_NODEPORT, '-j', externalTrafficChain));
      }
      b.natRules.push(line('-A', 'KUBE-NODEPORTS', '-m', 'comment', '--comment', name, '-m', protocol, '-p', protocol, '--dport', np, '-j', externalTrafficChain));
    }
    if (!hasExternalEndpoints) {
      b.filterRules.push(line('-A', 'KUBE-EXTERNAL-SERVICES', '-m', 'comment', '--comment', externalComment, '-m', 'addrtype', '--dst-type', 'LOCAL', '-m', protocol, '-p', protocol, '--dport', np, '-j', externalTarget));
    }
  }
  // Health check NodePort.
  if (p.healthCheckNodePort !== 0) {
    b.filterRules.push(line('-A', 'KUBE-NODEPORTS', '-m', 'comment', '--comment', q(`${name} health check node port`), '-m', 'tcp', '-p', 'tcp', '--dport', String(p.healthCheckNodePort), '-j', 'ACCEPT'));
  }
  // Internal traffic.
  if (hasInternalEndpoints) {
    const args = ['-m', 'comment', '--comment', q(`${name} cluster IP`), '-m', protocol, '-p', protocol, '-d', p.clusterIP, '--dport', port];
    if (o.masqueradeAll) b.natRules.push(line('-A', internalPolicyChain, args, '-j', 'KUBE-MARK-MASQ'));
    else if (o.localCIDR !== null) b.natRules.push(line('-A', internalPolicyChain, args, '!', '-s', o.localCIDR, '-j', 'KUBE-MARK-MASQ'));
  }
  // External traffic.
  if (usesExternalTrafficChain) {
    b.natChains.push(chainLine(externalTrafficChain));
    if (!p.externalPolicyLocal) {
      b.natRules.push(line('-A', externalTrafficChain, '-m', 'comment', '--comment', q(`masquerade traffic for ${name} external destinations`), '-j', 'KUBE-MARK-MASQ'));
    } else {
      if (o.localCIDR !== null) b.natRules.push(line('-A', externalTrafficChain, '-m', 'comment', '--comment', q(`pod traffic for ${name} external destinations`), '-s', o.localCIDR, '-j', chains.svc));
      b.natRules.push(line('-A', externalTrafficChain, '-m', 'comment', '--comment', q(`masquerade LOCAL traffic for ${name} external destinations`), '-m', 'addrtype', '--src-type', 'LOCAL', '-j', 'KUBE-MARK-MASQ'));
      b.natRules.push(line('-A', externalTrafficChain, '-m', 'comment', '--comment', q(`route LOCAL traffic for ${name} external destinations`), '-m', 'addrtype', '--src-type', 'LOCAL', '-j', chains.svc));
    }
    if (hasExternalEndpoints) b.natRules.push(line('-A', externalTrafficChain, '-j', externalPolicyChain));
  }
  // Firewall chain.
  if (usesFWChain) {
    b.natChains.push(chainLine(chains.fw));
    const args = ['-A', chains.fw, '-m', 'comment', '--comment', q(`${name} loadbalancer IP`)];
    let allowFromNode = false;
    for (const cidr of p.loadBalancerSourceRanges) {
      b.natRules.push(line(args, '-s', cidr, '-j', externalTrafficChain));
      if (cidrHas(cidr, o.nodeIP, o.family)) allowFromNode = true;
    }
    if (allowFromNode) for (const ip of p.loadBalancerVIPs) b.natRules.push(line(args, '-s', ip, '-j', externalTrafficChain));
    b.natRules.push(line('-A', chains.fw, '-m', 'comment', '--comment', q(`other traffic to ${name} will be dropped by KUBE-PROXY-FIREWALL`)));
  }
  if (usesClusterPolicyChain) {
    b.natChains.push(chainLine(chains.svc));
    writeServiceToEndpointRules(b, p, chains.svc, cat.cluster, withComment);
  }
  if (usesLocalPolicyChain) {
    b.natChains.push(chainLine(chains.svl));
    writeServiceToEndpointRules(b, p, chains.svl, cat.local, withComment);
  }
  for (const ep of cat.allReachable) {
    const chain = iptablesEndpointChain(p, ep);
    b.natChains.push(chainLine(chain));
    const args = withComment(['-A', chain], name);
    b.natRules.push(line(args, '-s', ep.ip, '-j', 'KUBE-MARK-MASQ'));
    const dnat = [...args];
    if (p.clientIPAffinity) dnat.push('-m', 'recent', '--name', chain, '--set');
    dnat.push('-m', protocol, '-p', protocol, '-j', 'DNAT', '--to-destination', ep.text);
    b.natRules.push(line(dnat));
  }
}

function writeServiceToEndpointRules(b: Buffers, p: ProxyServicePort, svcChain: string, endpoints: readonly ProxyEndpoint[], withComment: (args: string[], comment: string) => string[]): void {
  if (p.clientIPAffinity) {
    for (const ep of endpoints) {
      const chain = iptablesEndpointChain(p, ep);
      const args = withComment(['-A', svcChain], q(`${p.nameString} -> ${ep.text}`));
      b.natRules.push(line(args, '-m', 'recent', '--name', chain, '--rcheck', '--seconds', String(p.stickyMaxAgeSeconds), '--reap', '-j', chain));
    }
  }
  const n = endpoints.length;
  endpoints.forEach((ep, i) => {
    const args = withComment(['-A', svcChain], q(`${p.nameString} -> ${ep.text}`));
    if (i < n - 1) args.push('-m', 'statistic', '--mode', 'random', '--probability', probability(n - i));
    b.natRules.push(line(args, '-j', iptablesEndpointChain(p, ep)));
  });
}

function usesCluster(p: ProxyServicePort): boolean {
  return !p.internalPolicyLocal || p.nodePort !== 0 || p.loadBalancerVIPs.length > 0 || p.externalIPs.length > 0;
}

function usesLocal(p: ProxyServicePort): boolean {
  return p.internalPolicyLocal || (p.externalPolicyLocal && (p.nodePort !== 0 || p.loadBalancerVIPs.length > 0 || p.externalIPs.length > 0));
}

/**
 * What kube-proxy adds outside the payload, before it: its canary chains (mangle, nat, filter),
 * the chains it jumps to, and the jump rules, each inserted at the head of its built-in chain
 * (`EnsureRule(Prepend, …)`) in `iptablesJumpChains` order — so the last one ensured comes first.
 * Returned as restore text that, loaded before the payload, builds the same chains.
 */
export function iptablesEnsuredRules(): { readonly mangle: string[]; readonly filter: string[]; readonly nat: string[] } {
  const head = new Map<string, string[]>();
  const chains = { filter: new Set<string>(['KUBE-PROXY-CANARY']), nat: new Set<string>(['KUBE-PROXY-CANARY']) };
  for (const j of JUMP_CHAINS) {
    chains[j.table].add(j.dst);
    const key = `${j.table} ${j.src}`;
    const args = [...j.extra];
    if (j.comment !== '') args.push('-m', 'comment', '--comment', q(j.comment));
    args.push('-j', j.dst);
    const list = head.get(key) ?? [];
    list.unshift(line('-A', j.src, args));
    head.set(key, list);
  }
  const rulesOf = (table: 'filter' | 'nat'): string[] => {
    const out: string[] = [...[...chains[table]].map(chainLine)];
    for (const [key, list] of head) if (key.startsWith(table + ' ')) out.push(...list);
    return out;
  };
  return { mangle: [chainLine('KUBE-PROXY-CANARY')], filter: rulesOf('filter'), nat: rulesOf('nat') };
}
