/**
 * What kube-proxy knows of a cluster before it writes a rule: its service-port map and its
 * endpoints map for one IP family, read from a {@link Snapshot} the way `pkg/proxy`'s
 * ServiceChangeTracker and EndpointSliceCache read the API objects, and the split of a
 * service's endpoints into the ones each traffic policy uses (`CategorizeEndpoints`).
 *
 * @internal
 * @module
 */
import type { K8sEndpointSlice, K8sNode, K8sService, Snapshot } from '../../model/kubernetes.js';
import { parseIpv6 } from '../../model/address.js';

/** An IP family as kube-proxy runs one proxier per family. */
export type ProxyFamily = 4 | 6;

/** One port of one Service, as kube-proxy's `BaseServicePortInfo` holds it. */
export interface ProxyServicePort {
  readonly namespace: string;
  readonly name: string;
  readonly portName: string;
  /** Lower case, as the chain names and rules use it. */
  readonly protocol: 'tcp' | 'udp' | 'sctp';
  /** `ServicePortName.String()`: `ns/name:port`, or `ns/name` for an unnamed port. */
  readonly nameString: string;
  readonly clusterIP: string;
  readonly port: number;
  /** 0 when the port has none. */
  readonly nodePort: number;
  readonly externalIPs: readonly string[];
  readonly loadBalancerVIPs: readonly string[];
  /** Canonical CIDRs of this family. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** 0 unless the Service needs one (LoadBalancer with `externalTrafficPolicy: Local`). */
  readonly healthCheckNodePort: number;
  readonly externalPolicyLocal: boolean;
  readonly internalPolicyLocal: boolean;
  readonly clientIPAffinity: boolean;
  readonly stickyMaxAgeSeconds: number;
}

/** One endpoint of one service port, as `BaseEndpointInfo`. */
export interface ProxyEndpoint {
  readonly ip: string;
  readonly port: number;
  /** `ip:port`, `[ip]:port`: the order endpoints are sorted in, and the DNAT target. */
  readonly text: string;
  readonly local: boolean;
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
}

/** A service port with its endpoints. */
export interface ProxyService {
  readonly port: ProxyServicePort;
  readonly endpoints: readonly ProxyEndpoint[];
}

/**
 * Parses an address as Go's `netutils.ParseIPSloppy` does (IPv4 parts may carry leading zeros,
 * read as decimal) and prints it as `net.IP.String()`; null when it is not an address of `family`.
 */
export function goIP(text: string, family: ProxyFamily): string | null {
  const t = text.trim();
  if (family === 4) {
    const parts = t.split('.');
    if (parts.length !== 4) return null;
    const bytes: number[] = [];
    for (const p of parts) {
      if (!/^[0-9]{1,3}$/.test(p)) return null;
      const n = Number(p);
      if (n > 255) return null;
      bytes.push(n);
    }
    return bytes.join('.');
  }
  if (!t.includes(':')) return null;
  const words = parseIpv6(t);
  if (!words) return null;
  // An IPv4-mapped address is an IPv4 address to Go.
  if (words[0] === 0 && words[1] === 0 && words[2] === 0xffff) return null;
  return goIPv6String(words);
}

/** `net.IP.String()` for IPv6: RFC 5952, with no dotted IPv4 tail. */
function goIPv6String(words: readonly number[]): string {
  const g: number[] = [];
  for (const w of words) g.push(w >>> 16, w & 0xffff);
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = g.map((x) => x.toString(16));
  if (bestLen < 2) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** The family of an address text, as `utilnet.IPFamilyOfString` (null when it is none). */
export function familyOf(text: string): ProxyFamily | null {
  if (goIP(text, 4) !== null) return 4;
  if (goIP(text, 6) !== null) return 6;
  return null;
}

/** A CIDR parsed as `netutils.ParseCIDRSloppy` and printed as `net.IPNet.String()`, or null. */
export function goCIDR(text: string, family: ProxyFamily): string | null {
  const t = text.trim();
  const slash = t.indexOf('/');
  if (slash < 0) return null;
  const lenText = t.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(lenText)) return null;
  const len = Number(lenText);
  const max = family === 4 ? 32 : 128;
  if (len > max) return null;
  const ip = goIP(t.slice(0, slash), family);
  if (ip === null) return null;
  return `${maskIP(ip, len, family)}/${len}`;
}

/** `ip` with the host bits past `len` cleared. */
export function maskIP(ip: string, len: number, family: ProxyFamily): string {
  if (family === 4) {
    const parts = ip.split('.').map(Number);
    let v = ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
    const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
    v = (v & mask) >>> 0;
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
  }
  const words = parseIpv6(ip)!;
  const out = words.map((w, i) => {
    const bits = Math.max(0, Math.min(32, len - 32 * i));
    const m = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    return (w & m) >>> 0;
  });
  return goIPv6String(out);
}

/** True when `ip` lies in `cidr` (both canonical, same family). */
export function cidrHas(cidr: string, ip: string, family: ProxyFamily): boolean {
  const [net, lenText] = cidr.split('/');
  const len = Number(lenText);
  return maskIP(ip, len, family) === net;
}

/** `net.JoinHostPort(ip, port)`. */
export function joinHostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/** Where a service port came from, for warnings. */
function ref(svc: K8sService): string {
  return `${svc.metadata.namespace ?? 'default'}/${svc.metadata.name}`;
}

/** `GetClusterIPByFamily`: the Service's ClusterIP of this family, or "". */
function clusterIPOf(svc: K8sService, family: ProxyFamily): string {
  const spec = svc.spec;
  const families = spec.ipFamilies ?? [];
  if (families.length === 0) {
    const ip = spec.clusterIP ?? spec.clusterIPs?.[0] ?? '';
    if (ip === '' || ip === 'None') return '';
    return (ip.includes(':') ? 6 : 4) === family ? ip : '';
  }
  const want = family === 4 ? 'IPv4' : 'IPv6';
  const idx = families.indexOf(want);
  if (idx < 0) return '';
  const ips = spec.clusterIPs ?? (spec.clusterIP !== undefined ? [spec.clusterIP] : []);
  return ips[idx] ?? '';
}

/** `apiservice.ExternallyAccessible`: by type, with an unset type read as the API's default. */
function externallyAccessibleType(svc: K8sService): boolean {
  const type = svc.spec.type ?? 'ClusterIP';
  return type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && (svc.spec.externalIPs?.length ?? 0) > 0);
}

/**
 * The service ports kube-proxy's proxier for `family` holds: Services with a ClusterIP of that
 * family (not headless, not ExternalName), one entry per port.
 */
export function servicePorts(snapshot: Snapshot, family: ProxyFamily, warn: (m: string) => void): ProxyServicePort[] {
  const out: ProxyServicePort[] = [];
  for (const svc of snapshot.services) {
    if ((svc.spec.type ?? 'ClusterIP') === 'ExternalName') continue;
    const rawIP = clusterIPOf(svc, family);
    if (rawIP === '' || rawIP === 'None') continue;
    const clusterIP = goIP(rawIP, family);
    if (clusterIP === null) {
      warn(`Service ${ref(svc)}: clusterIP "${rawIP}" is not an IPv${family} address; kube-proxy skips the Service`);
      continue;
    }
    const namespace = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name;
    const externalPolicyLocal = externallyAccessibleType(svc) && svc.spec.externalTrafficPolicy === 'Local';
    const internalPolicyLocal = svc.spec.internalTrafficPolicy === 'Local';
    const externalIPs: string[] = [];
    for (const e of svc.spec.externalIPs ?? []) {
      const ip = goIP(e, family);
      if (ip !== null) externalIPs.push(ip);
      else if (familyOf(e) === null) warn(`Service ${ref(svc)}: externalIP "${e}" is not an address; kube-proxy ignores it`);
    }
    const lbVIPs: string[] = [];
    for (const ing of svc.status?.loadBalancer?.ingress ?? []) {
      if (ing.ip === undefined || ing.ip === '') continue;
      if (ing.ipMode === 'Proxy') continue; // proxy-mode load balancers are not programmed
      const ip = goIP(ing.ip, family);
      if (ip !== null) lbVIPs.push(ip);
    }
    const ranges: string[] = [];
    for (const r of svc.spec.loadBalancerSourceRanges ?? []) {
      const c = goCIDR(r, family);
      if (c !== null) ranges.push(c);
      else if (goCIDR(r, family === 4 ? 6 : 4) === null) warn(`Service ${ref(svc)}: loadBalancerSourceRange "${r}" is not a CIDR; kube-proxy ignores it`);
    }
    const type = svc.spec.type ?? 'ClusterIP';
    const clientIPAffinity = svc.spec.sessionAffinity === 'ClientIP';
    const sticky = clientIPAffinity ? svc.spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800 : 0;
    const needsHealthCheck = type === 'LoadBalancer' && externalPolicyLocal;
    for (const p of svc.spec.ports ?? []) {
      const portName = p.name ?? '';
      const protocol = (p.protocol ?? 'TCP').toLowerCase() as ProxyServicePort['protocol'];
      out.push({
        namespace,
        name,
        portName,
        protocol,
        nameString: portName === '' ? `${namespace}/${name}` : `${namespace}/${name}:${portName}`,
        clusterIP,
        port: p.port,
        nodePort: p.nodePort ?? 0,
        externalIPs,
        loadBalancerVIPs: lbVIPs,
        loadBalancerSourceRanges: ranges,
        healthCheckNodePort: needsHealthCheck ? svc.spec.healthCheckNodePort ?? 0 : 0,
        externalPolicyLocal,
        internalPolicyLocal,
        clientIPAffinity,
        stickyMaxAgeSeconds: sticky,
      });
    }
  }
  return out;
}

/** The key of a service port in both maps: namespace, name, port name, protocol. */
export function portKey(namespace: string, name: string, portName: string, protocol: string): string {
  return `${namespace}\u0000${name}\u0000${portName}\u0000${protocol.toLowerCase()}`;
}

/**
 * The endpoints map for `family`: every EndpointSlice of the family, its ports matched to service
 * ports by name and protocol, each endpoint's first address, deduplicated by `ip:port` (a local
 * copy wins) and sorted by that text, as `endpointsMapFromEndpointInfo` sorts them.
 */
export function endpointsMap(snapshot: Snapshot, family: ProxyFamily, nodeName: string, warn: (m: string) => void): Map<string, ProxyEndpoint[]> {
  const sets = new Map<string, Map<string, ProxyEndpoint>>();
  const addressType = family === 4 ? 'IPv4' : 'IPv6';
  for (const slice of snapshot.endpointSlices) {
    if (slice.addressType !== addressType) continue;
    const svcName = slice.metadata.labels?.['kubernetes.io/service-name'];
    const namespace = slice.metadata.namespace ?? 'default';
    if (svcName === undefined) {
      warn(`EndpointSlice ${namespace}/${slice.metadata.name}: no kubernetes.io/service-name label; kube-proxy ignores it`);
      continue;
    }
    addSlice(sets, slice, namespace, svcName, family, nodeName, warn);
  }
  const out = new Map<string, ProxyEndpoint[]>();
  for (const [key, set] of sets) {
    const list = [...set.values()];
    list.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
    if (list.length > 0) out.set(key, list);
  }
  return out;
}

function addSlice(
  sets: Map<string, Map<string, ProxyEndpoint>>,
  slice: K8sEndpointSlice,
  namespace: string,
  svcName: string,
  family: ProxyFamily,
  nodeName: string,
  warn: (m: string) => void,
): void {
  for (const port of slice.ports ?? []) {
    if (port.name === undefined) {
      warn(`EndpointSlice ${namespace}/${slice.metadata.name}: a port without a name; kube-proxy ignores it (an unnamed port is name: "")`);
      continue;
    }
    if (port.port === undefined || port.port === 0) continue;
    const key = portKey(namespace, svcName, port.name, port.protocol ?? 'TCP');
    let set = sets.get(key);
    if (set === undefined) {
      set = new Map();
      sets.set(key, set);
    }
    for (const ep of slice.endpoints ?? []) {
      const first = ep.addresses[0];
      if (first === undefined) continue;
      const ip = goIP(first, family);
      if (ip === null) continue;
      const local = ep.nodeName !== undefined && ep.nodeName === nodeName;
      const ready = ep.conditions?.ready ?? true;
      const serving = ep.conditions?.serving ?? ready;
      const terminating = ep.conditions?.terminating ?? false;
      const text = joinHostPort(ip, port.port);
      if (!set.has(text) || local) set.set(text, { ip, port: port.port, text, local, ready, serving, terminating });
    }
  }
}

/** `ExternallyAccessible` of a service port: it has a NodePort, LoadBalancer IPs or external IPs. */
export function externallyAccessible(p: ProxyServicePort): boolean {
  return p.nodePort !== 0 || p.loadBalancerVIPs.length > 0 || p.externalIPs.length > 0;
}

/** `UsesClusterEndpoints`. */
export function usesClusterEndpoints(p: ProxyServicePort): boolean {
  return !p.internalPolicyLocal || externallyAccessible(p);
}

/** `UsesLocalEndpoints`. */
export function usesLocalEndpoints(p: ProxyServicePort): boolean {
  return p.internalPolicyLocal || (p.externalPolicyLocal && externallyAccessible(p));
}

/** What `CategorizeEndpoints` returns. */
export interface EndpointCategories {
  readonly cluster: readonly ProxyEndpoint[];
  readonly local: readonly ProxyEndpoint[];
  readonly allReachable: readonly ProxyEndpoint[];
  readonly hasAny: boolean;
}

/**
 * `CategorizeEndpoints` without topology hints (a snapshot carries none): the endpoints the
 * Cluster policy uses (ready ones, or the serving terminating ones when no endpoint is ready),
 * the ones the Local policy uses (local ready ones, or local serving terminating ones), every
 * endpoint this node can reach, and whether the service has any usable endpoint at all.
 */
export function categorizeEndpoints(endpoints: readonly ProxyEndpoint[], p: ProxyServicePort): EndpointCategories {
  let cluster: ProxyEndpoint[] = [];
  let hasAny = false;
  if (usesClusterEndpoints(p)) {
    cluster = endpoints.filter((e) => e.ready);
    if (cluster.length === 0) cluster = endpoints.filter((e) => e.serving && e.terminating);
    if (cluster.length > 0) hasAny = true;
  }
  if (!usesLocalEndpoints(p)) return { cluster, local: [], allReachable: cluster, hasAny };
  let localReady = false;
  let localServingTerminating = false;
  for (const e of endpoints) {
    if (e.ready) {
      hasAny = true;
      if (e.local) localReady = true;
    } else if (e.serving && e.terminating) {
      hasAny = true;
      if (e.local) localServingTerminating = true;
    }
  }
  let local: ProxyEndpoint[] = [];
  let servingTerminating = false;
  if (localReady) local = endpoints.filter((e) => e.local && e.ready);
  else if (localServingTerminating) {
    servingTerminating = true;
    local = endpoints.filter((e) => e.local && e.serving && e.terminating);
  }
  if (!usesClusterEndpoints(p)) return { cluster, local, allReachable: local, hasAny };
  if (!servingTerminating) return { cluster, local, allReachable: cluster, hasAny };
  // Upstream merges the two lists through a map (no defined order); we keep the sorted order.
  const merged = new Map<string, ProxyEndpoint>();
  for (const e of cluster) merged.set(e.text, e);
  for (const e of local) merged.set(e.text, e);
  const all = [...merged.values()].sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return { cluster, local, allReachable: all, hasAny };
}

/**
 * Every service port of the family with its endpoints, sorted by `ServicePortName` string then
 * protocol: kube-proxy walks its map in Go's random order, we walk it in this one.
 */
export function proxyServices(snapshot: Snapshot, family: ProxyFamily, nodeName: string, warn: (m: string) => void): ProxyService[] {
  const ports = servicePorts(snapshot, family, warn);
  const eps = endpointsMap(snapshot, family, nodeName, warn);
  const keyed = ports.map((port) => ({ key: port.nameString + '\u0000' + port.protocol, s: { port, endpoints: eps.get(portKey(port.namespace, port.name, port.portName, port.protocol)) ?? [] } }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return keyed.map((k) => k.s);
}

/** The node kube-proxy runs on; a typed error names what is missing. */
export function findNode(snapshot: Snapshot, nodeName: string): K8sNode | undefined {
  return snapshot.nodes.find((n) => n.metadata.name === nodeName);
}

/**
 * The node's addresses of a family, as kube-proxy's node IP detection orders them: InternalIP
 * addresses first, then ExternalIP ones.
 */
export function nodeAddresses(node: K8sNode, family: ProxyFamily): string[] {
  const out: string[] = [];
  for (const type of ['InternalIP', 'ExternalIP'] as const) {
    for (const a of node.status?.addresses ?? []) {
      if (a.type !== type) continue;
      const ip = goIP(a.address, family);
      if (ip !== null && !out.includes(ip)) out.push(ip);
    }
  }
  return out;
}

/** The node's pod CIDRs of a family, canonical. */
export function nodePodCIDRs(node: K8sNode, family: ProxyFamily): string[] {
  const list = node.spec?.podCIDRs ?? (node.spec?.podCIDR !== undefined ? [node.spec.podCIDR] : []);
  const out: string[] = [];
  for (const c of list) {
    const n = goCIDR(c, family);
    if (n !== null) out.push(n);
  }
  return out;
}
