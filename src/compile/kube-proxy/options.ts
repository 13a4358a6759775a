/**
 * kube-proxy's settings as the compiler takes them: the flags and config fields that change what
 * `syncProxyRules` writes, with kube-proxy's defaults, and the releases whose output differs.
 *
 * @module
 */
import { diagnostic, NetfilterSimError } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';
import { goCIDR, nodeAddresses, nodePodCIDRs, type ProxyFamily } from './services.js';
import type { K8sNode } from '../../model/kubernetes.js';

/**
 * The Kubernetes releases the compiler knows, oldest first. 1.36 is not among them: its nftables
 * mode reworked masquerading (kubernetes#135800, #136499) in ways not modelled here.
 */
export const KUBE_PROXY_VERSIONS = ['1.33', '1.34', '1.35'] as const;

/** A Kubernetes minor release. */
export type KubeProxyVersion = (typeof KUBE_PROXY_VERSIONS)[number];

/** The release compiled when none is named. */
export const KUBE_PROXY_DEFAULT_VERSION: KubeProxyVersion = '1.35';

/** The proxy modes compiled: `--proxy-mode`. */
export type KubeProxyMode = 'iptables' | 'nftables';

/**
 * How kube-proxy tells pod traffic from other traffic (`--detect-local-mode`): by
 * `--cluster-cidr` (`ClusterCIDR`, the default), by the node's `spec.podCIDRs` (`NodeCIDR`), or
 * not at all (`None`: what kube-proxy does when ClusterCIDR mode has no cluster CIDR).
 */
export type DetectLocalMode = 'ClusterCIDR' | 'NodeCIDR' | 'None';

/** Options of {@link compileKubeProxy}. */
export interface KubeProxyOptions {
  /** `--proxy-mode`. */
  readonly mode: KubeProxyMode;
  /** The Kubernetes release; default {@link KUBE_PROXY_DEFAULT_VERSION}. */
  readonly version?: KubeProxyVersion;
  /**
   * The IP family: 4 or 6 (one proxier's rules), or `'dual'` (nftables mode only: both tables,
   * `ip` then `ip6`). Default: the family of the node's first address for iptables; every family
   * the node has an address in for nftables.
   */
  readonly family?: 4 | 6 | 'dual';
  /**
   * `'save'` (default): what `iptables-save` / `nft list ruleset` print on the node once
   * kube-proxy synced. `'restore'`: what kube-proxy itself writes — the iptables-restore payload
   * of `syncProxyRules` (iptables mode; the jump rules it adds with `iptables -I` are not part of
   * it), or the nftables transaction as `add` commands in the order kube-proxy issues them.
   */
  readonly format?: 'save' | 'restore';
  /** `--cluster-cidr`: comma-separated CIDRs (one per family). Default none. */
  readonly clusterCIDR?: string;
  /** `--detect-local-mode`; default `ClusterCIDR`. */
  readonly detectLocalMode?: DetectLocalMode;
  /** `--masquerade-all`; default false. */
  readonly masqueradeAll?: boolean;
  /** `--iptables-masquerade-bit` (also used by nftables mode); default 14, the mark 0x4000. */
  readonly masqueradeBit?: number;
  /**
   * `--nodeport-addresses`: CIDRs, or `['primary']` (the node's primary address of each family).
   * Default: every local address for iptables, `['primary']` for nftables (kube-proxy's defaults).
   */
  readonly nodePortAddresses?: readonly string[];
  /** `--iptables-localhost-nodeports`; default true (IPv4 only). */
  readonly localhostNodePorts?: boolean;
  /** Whether iptables supports `MASQUERADE --random-fully` (1.6.2 and later do); default true. */
  readonly randomFully?: boolean;
  /**
   * Whether kube-proxy could create its nfacct counters (`nfnetlink_acct` in the kernel); default
   * true. They add `-m nfacct` to the INVALID drop and the localhost NodePort rules.
   */
  readonly nfacct?: boolean;
  /** Whether `net.netfilter.nf_conntrack_tcp_be_liberal` is set (no INVALID drop rule); default false. */
  readonly conntrackTCPBeLiberal?: boolean;
  /** The ServiceCIDR objects' ranges (nftables: unallocated ClusterIPs are dropped); comma-separated. Default none. */
  readonly serviceCIDRs?: string;
  /** Called with what kube-proxy would skip (a Service with a bad address, an unnamed slice port …). */
  readonly onWarning?: (message: string) => void;
}

/** The options filled with their defaults, for one family. @internal */
export interface ResolvedKubeProxyOptions {
  readonly mode: KubeProxyMode;
  readonly version: KubeProxyVersion;
  readonly family: ProxyFamily;
  readonly nodeName: string;
  readonly nodeIP: string;
  /** Null when local traffic is not detected. */
  readonly localCIDR: string | null;
  readonly masqueradeAll: boolean;
  readonly masqueradeMark: string;
  /** Null when NodePorts are open on every local address. */
  readonly nodePortIPs: readonly string[] | null;
  /** IPv4 loopback NodePorts are open (iptables). */
  readonly localhostNodePorts: boolean;
  readonly randomFully: boolean;
  readonly nfacct: boolean;
  readonly conntrackTCPBeLiberal: boolean;
  readonly serviceCIDRs: readonly string[];
  readonly warn: (message: string) => void;
}

function bad(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', message));
}

/** The version's minor number. @internal */
export function minorOf(v: KubeProxyVersion): number {
  return Number(v.split('.')[1]);
}

/** Checks the options' types and values; throws `BAD_CONFIG` naming the option. @internal */
export function checkOptions(options: KubeProxyOptions): void {
  expectArgument(options, 'object', 'options');
  if (options.mode !== 'iptables' && options.mode !== 'nftables') bad(`options.mode must be "iptables" or "nftables", not ${JSON.stringify(options.mode)}`);
  if (options.version !== undefined && !(KUBE_PROXY_VERSIONS as readonly string[]).includes(options.version)) {
    bad(`options.version ${JSON.stringify(options.version)} is not one of ${KUBE_PROXY_VERSIONS.join(', ')}`);
  }
  if (options.family !== undefined && options.family !== 4 && options.family !== 6 && options.family !== 'dual') bad(`options.family must be 4, 6 or "dual", not ${JSON.stringify(options.family)}`);
  if (options.family === 'dual' && options.mode === 'iptables') bad('options.family "dual" is for nftables mode; iptables keeps one rule set per family (compile 4 and 6 apart)');
  if (options.format !== undefined && options.format !== 'save' && options.format !== 'restore') bad(`options.format must be "save" or "restore", not ${JSON.stringify(options.format)}`);
  if (options.detectLocalMode !== undefined && !['ClusterCIDR', 'NodeCIDR', 'None'].includes(options.detectLocalMode)) bad(`options.detectLocalMode ${JSON.stringify(options.detectLocalMode)} is not ClusterCIDR, NodeCIDR or None`);
  if (options.masqueradeBit !== undefined && (!Number.isInteger(options.masqueradeBit) || options.masqueradeBit < 0 || options.masqueradeBit > 31)) bad(`options.masqueradeBit must be an integer from 0 to 31, not ${String(options.masqueradeBit)}`);
  for (const k of ['clusterCIDR', 'serviceCIDRs'] as const) {
    const v = options[k];
    if (v !== undefined && typeof v !== 'string') bad(`options.${k} must be a string of comma-separated CIDRs`);
    for (const c of (v ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '')) {
      if (goCIDR(c, 4) === null && goCIDR(c, 6) === null) bad(`options.${k}: "${c}" is not a CIDR`);
    }
  }
  if (options.nodePortAddresses !== undefined) {
    if (!Array.isArray(options.nodePortAddresses)) bad('options.nodePortAddresses must be an array of CIDRs or ["primary"]');
    for (const c of options.nodePortAddresses) {
      if (c === 'primary') {
        if (options.nodePortAddresses.length !== 1) bad('options.nodePortAddresses: "primary" must be the only entry');
        continue;
      }
      if (typeof c !== 'string' || (goCIDR(c, 4) === null && goCIDR(c, 6) === null)) bad(`options.nodePortAddresses: ${JSON.stringify(c)} is not a CIDR`);
    }
  }
  for (const k of ['masqueradeAll', 'localhostNodePorts', 'randomFully', 'nfacct', 'conntrackTCPBeLiberal'] as const) {
    if (options[k] !== undefined && typeof options[k] !== 'boolean') bad(`options.${k} must be a boolean`);
  }
  if (options.onWarning !== undefined && typeof options.onWarning !== 'function') bad('options.onWarning must be a function');
}

/** The CIDRs of one family in a comma-separated list. */
function cidrsOf(list: string | undefined, family: ProxyFamily): string[] {
  const out: string[] = [];
  for (const c of (list ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '')) {
    const n = goCIDR(c, family);
    if (n !== null) out.push(n);
  }
  return out;
}

/**
 * The options for one family's proxier on `node`: the node IP (its first address of the family),
 * the local-traffic CIDR, the NodePort addresses. @internal
 */
export function resolveOptions(options: KubeProxyOptions, node: K8sNode, family: ProxyFamily): ResolvedKubeProxyOptions {
  const nodeName = node.metadata.name;
  const addrs = nodeAddresses(node, family);
  const nodeIP = addrs[0];
  if (nodeIP === undefined) {
    throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `Node ${nodeName} has no IPv${family} address in status.addresses (InternalIP or ExternalIP); kube-proxy needs one for its IPv${family} rules`));
  }
  const mode = options.detectLocalMode ?? 'ClusterCIDR';
  let localCIDR: string | null = null;
  if (mode === 'ClusterCIDR') localCIDR = cidrsOf(options.clusterCIDR, family)[0] ?? null;
  else if (mode === 'NodeCIDR') {
    localCIDR = nodePodCIDRs(node, family)[0] ?? null;
    if (localCIDR === null) throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `Node ${nodeName} has no IPv${family} pod CIDR (spec.podCIDRs) for detectLocalMode NodeCIDR`));
  }
  const bit = options.masqueradeBit ?? 14;
  // NewProxier: fmt.Sprintf("%#08x", 1<<bit), which pads the digits to eight: 0x00004000.
  const mark = '0x' + (2 ** bit).toString(16).padStart(8, '0');
  const npa = options.nodePortAddresses ?? (options.mode === 'nftables' ? ['primary'] : []);
  let cidrs: string[];
  if (npa.length === 1 && npa[0] === 'primary') cidrs = [`${nodeIP}/${family === 4 ? 32 : 128}`];
  else cidrs = npa.map((c) => goCIDR(c, family)).filter((c): c is string => c !== null);
  // NewNodePortAddresses: no CIDR of this family, or a zero CIDR among them, opens every address.
  const matchAll = cidrs.length === 0 || cidrs.some((c) => c.endsWith('/0'));
  let nodePortIPs: string[] | null = null;
  if (!matchAll) {
    const local = [...addrs, family === 4 ? '127.0.0.1' : '::1'];
    const set = new Set<string>();
    for (const c of cidrs) for (const ip of local) if (cidrContainsText(c, ip, family)) set.add(ip);
    nodePortIPs = [...set].sort(compareIPs(family));
  }
  const containsV4Loopback = matchAll || cidrs.some((c) => family === 4 && cidrContainsText(c, '127.0.0.1', 4));
  return {
    mode: options.mode,
    version: options.version ?? KUBE_PROXY_DEFAULT_VERSION,
    family,
    nodeName,
    nodeIP,
    localCIDR,
    masqueradeAll: options.masqueradeAll ?? false,
    masqueradeMark: mark,
    nodePortIPs,
    // NewProxier: localhost NodePorts need a loopback address among the NodePort addresses (IPv4 only).
    localhostNodePorts: family === 4 && (options.localhostNodePorts ?? true) && containsV4Loopback,
    randomFully: options.randomFully ?? true,
    nfacct: options.nfacct ?? true,
    conntrackTCPBeLiberal: options.conntrackTCPBeLiberal ?? false,
    serviceCIDRs: cidrsOf(options.serviceCIDRs, family),
    warn: options.onWarning ?? (() => undefined),
  };
}

function cidrContainsText(cidr: string, ip: string, family: ProxyFamily): boolean {
  const [net, len] = cidr.split('/');
  const masked = goCIDR(`${ip}/${len}`, family);
  return masked === `${net}/${len}`;
}

/** Orders addresses numerically (kube-proxy's own order comes from a Go map). */
function compareIPs(family: ProxyFamily): (a: string, b: string) => number {
  const key = (ip: string): string => (family === 4 ? ip.split('.').map((x) => x.padStart(3, '0')).join('.') : ip);
  return (a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
}
