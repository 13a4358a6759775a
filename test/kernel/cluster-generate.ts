/**
 * Seeded clusters for the multi-namespace kernel differential: two or three nodes, four to eight
 * pods, Services with zero to three endpoints (ClusterIP and NodePort, externalTrafficPolicy
 * Cluster and Local), hostPorts, masquerade on and off (kube-proxy's `--masquerade-all`, the
 * bridge plugin's `ipMasq`), kube-proxy in iptables and nftables mode, `--cni bridge` (hairpin on
 * and off) and `ptp`, IPv4, IPv6 and dual stack. Each node's rules are written here in the shapes
 * kube-proxy (`syncProxyRules`), portmap and the bridge plugin write — by hand, from their upstream
 * sources' layout, not by the compilers under test. One difference, on purpose: kube-proxy picks
 * among endpoints at random (`statistic --mode random`, `numgen random`); the kernel's draws and
 * ours cannot agree, so a Service with several endpoints picks them in turn here (`statistic
 * --mode nth`, `numgen inc`), which both sides count alike.
 */
import { Rng } from './generate.js';
import type { ClusterProbe } from './cluster-harness.js';

/** A generated cluster. */
export interface ClusterCase {
  readonly seed: number;
  readonly description: string;
  /** The snapshot (kubectl `-o yaml` or `-o json`). */
  readonly snapshot: string;
  readonly cni: 'bridge' | 'ptp';
  readonly hairpin: boolean;
  /** Per node, the texts it loads in order (iptables-save, ip6tables-save, nft). */
  readonly nodeRules: Readonly<Record<string, readonly string[]>>;
  readonly probes: readonly ClusterProbe[];
}

type Fam = 4 | 6;

interface GPod {
  readonly ns: string;
  readonly name: string;
  readonly node: number;
  readonly app: string;
  readonly ips: Partial<Record<Fam, string>>;
  readonly ports: readonly { readonly port: number; readonly name: string; readonly hostPort?: number; readonly udp?: boolean }[];
  readonly hostNetwork: boolean;
  readonly uid: number | null;
}

interface GService {
  readonly ns: string;
  readonly name: string;
  readonly app: string;
  readonly vip: Partial<Record<Fam, string>>;
  readonly port: number;
  readonly targetPort: number | string;
  readonly nodePort: number | null;
  readonly local: boolean;
}

const PORTS = [80, 8080, 443, 5000];
const PORT_NAMES: Record<number, string> = { 80: 'http', 8080: 'alt', 443: 'https', 5000: 'api' };

function hash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  let out = '';
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  for (let i = 0; i < 16; i++) {
    out += alphabet[h & 31];
    h = Math.imul(h ^ (h >>> 13), 0x5bd1e995) >>> 0;
    h = (h + i * 0x9e3779b9) >>> 0;
  }
  return out;
}

const nodeIp = (i: number, f: Fam): string => (f === 4 ? `192.168.0.${10 + i}` : `fd00::${10 + i}`);
const podCidr = (i: number, f: Fam): string => (f === 4 ? `10.244.${i + 1}.0/24` : `fd10:244:${i + 1}::/64`);
const clusterCidr = (f: Fam): string => (f === 4 ? '10.244.0.0/16' : 'fd10:244::/32');
const hostBits = (f: Fam): string => (f === 4 ? '/32' : '/128');
const ep = (addr: string, port: number): string => (addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`);

/** A Service's endpoints: the pods its selector picks that have its target port (by name, or any for a number). */
function endpointsOf(s: GService, pods: readonly GPod[]): { pod: GPod; port: number }[] {
  const out: { pod: GPod; port: number }[] = [];
  for (const p of pods) {
    if (p.ns !== s.ns || p.app !== s.app || p.hostNetwork) continue;
    if (typeof s.targetPort === 'number') out.push({ pod: p, port: s.targetPort });
    else {
      const named = p.ports.find((x) => x.name === s.targetPort && x.udp !== true);
      if (named !== undefined) out.push({ pod: p, port: named.port });
    }
  }
  return out;
}

/** kube-proxy's iptables rules of one family on one node (`syncProxyRules`' layout). */
function kubeProxyIptables(f: Fam, node: number, services: readonly GService[], pods: readonly GPod[], masqueradeAll: boolean): string {
  const filter: string[] = [];
  const nat: string[] = [];
  const natChains = new Set<string>(['KUBE-MARK-MASQ', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-SERVICES']);
  const reject = f === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable';
  const lo = f === 4 ? '127.0.0.0/8' : '::1/128';
  const nodePorts: string[] = [];
  for (const s of services) {
    const vip = s.vip[f];
    if (vip === undefined) continue;
    const key = `${s.ns}/${s.name}:p`;
    const svc = `KUBE-SVC-${hash(`${key}${f}`)}`;
    const eps = endpointsOf(s, pods).filter((e) => e.pod.ips[f] !== undefined);
    if (eps.length === 0) {
      filter.push(`-A KUBE-SERVICES -d ${vip}${hostBits(f)} -p tcp -m comment --comment "${key} has no endpoints" -m tcp --dport ${s.port} -j REJECT --reject-with ${reject}`);
      if (s.nodePort !== null) filter.push(`-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "${key} has no endpoints" -m addrtype --dst-type LOCAL -m tcp --dport ${s.nodePort} -j REJECT --reject-with ${reject}`);
      continue;
    }
    natChains.add(svc);
    nat.push(`-A KUBE-SERVICES -d ${vip}${hostBits(f)} -p tcp -m comment --comment "${key} cluster IP" -m tcp --dport ${s.port} -j ${svc}`);
    nat.push(masqueradeAll
      ? `-A ${svc} -d ${vip}${hostBits(f)} -p tcp -m comment --comment "${key} cluster IP" -m tcp --dport ${s.port} -j KUBE-MARK-MASQ`
      : `-A ${svc} ! -s ${clusterCidr(f)} -d ${vip}${hostBits(f)} -p tcp -m comment --comment "${key} cluster IP" -m tcp --dport ${s.port} -j KUBE-MARK-MASQ`);
    const sepOf = (e: { pod: GPod; port: number }): string => `KUBE-SEP-${hash(`${key}${e.pod.ips[f]}${e.port}`)}`;
    const jumps = (chain: string, list: readonly { pod: GPod; port: number }[]): void => {
      list.forEach((e, i) => {
        const addr = e.pod.ips[f]!;
        const rest = list.length - i;
        const pick = rest > 1 ? ` -m statistic --mode nth --every ${rest} --packet 0` : '';
        nat.push(`-A ${chain} -m comment --comment "${key} -> ${ep(addr, e.port)}"${pick} -j ${sepOf(e)}`);
      });
    };
    jumps(svc, eps);
    for (const e of eps) {
      const sep = sepOf(e);
      if (natChains.has(sep)) continue;
      natChains.add(sep);
      const addr = e.pod.ips[f]!;
      nat.push(`-A ${sep} -s ${addr}${hostBits(f)} -m comment --comment "${key}" -j KUBE-MARK-MASQ`);
      nat.push(`-A ${sep} -p tcp -m comment --comment "${key}" -m tcp -j DNAT --to-destination ${ep(addr, e.port)}`);
    }
    if (s.nodePort !== null) {
      const ext = `KUBE-EXT-${hash(`${key}${f}`)}`;
      natChains.add(ext);
      nodePorts.push(`-A KUBE-NODEPORTS -p tcp -m comment --comment "${key}" -m tcp --dport ${s.nodePort} -j ${ext}`);
      if (!s.local) {
        nat.push(`-A ${ext} -m comment --comment "masquerade traffic for ${key} external destinations" -j KUBE-MARK-MASQ`);
        nat.push(`-A ${ext} -j ${svc}`);
      } else {
        const local = eps.filter((e) => e.pod.node === node);
        nat.push(`-A ${ext} -s ${clusterCidr(f)} -m comment --comment "pod traffic for ${key} external destinations" -j ${svc}`);
        nat.push(`-A ${ext} -m comment --comment "masquerade LOCAL traffic for ${key} external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`);
        nat.push(`-A ${ext} -m comment --comment "route LOCAL traffic for ${key} external destinations" -m addrtype --src-type LOCAL -j ${svc}`);
        if (local.length > 0) {
          const svl = `KUBE-SVL-${hash(`${key}${f}`)}`;
          natChains.add(svl);
          nat.push(`-A ${ext} -j ${svl}`);
          jumps(svl, local);
        } else {
          filter.push(`-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment "${key} has no local endpoints" -m addrtype --dst-type LOCAL -m tcp --dport ${s.nodePort} -j DROP`);
        }
      }
    }
  }
  nat.push('-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS');
  const chainLines = (names: Iterable<string>): string => [...names].sort().map((c) => `:${c} - [0:0]`).join('\n');
  return [
    '*filter',
    ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]',
    chainLines(['KUBE-EXTERNAL-SERVICES', 'KUBE-FIREWALL', 'KUBE-FORWARD', 'KUBE-NODEPORTS', 'KUBE-PROXY-FIREWALL', 'KUBE-SERVICES']),
    '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
    '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    '-A INPUT -j KUBE-FIREWALL',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
    '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -j KUBE-FIREWALL',
    ...(f === 4 ? [`-A KUBE-FIREWALL ! -s ${lo} -d ${lo} -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP`] : []),
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
    ...filter,
    'COMMIT',
    '*nat',
    ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]',
    chainLines(natChains),
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
    ...nodePorts,
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE --random-fully',
    ...nat,
    'COMMIT',
    '',
  ].join('\n');
}

/** kube-proxy's nftables table of one family on one node (the layout of its nftables proxier). */
function kubeProxyNft(f: Fam, services: readonly GService[], pods: readonly GPod[], masqueradeAll: boolean): string {
  const fam = f === 4 ? 'ip' : 'ip6';
  const t = `${fam} kube-proxy`;
  const addrType = f === 4 ? 'ipv4_addr' : 'ipv6_addr';
  const daddr = `${fam} daddr`;
  const saddr = `${fam} saddr`;
  const out: string[] = [];
  const add = (l: string): void => void out.push(l);
  add(`add table ${t} { comment "rules for kube-proxy" ; }`);
  add(`add set ${t} cluster-ips { type ${addrType} ; comment "Active ClusterIPs" ; }`);
  add(`add map ${t} no-endpoint-services { type ${addrType} . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`);
  add(`add map ${t} no-endpoint-nodeports { type inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to service nodeports with no endpoints" ; }`);
  add(`add map ${t} service-ips { type ${addrType} . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`);
  add(`add map ${t} service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`);
  add(`add chain ${t} filter-input { type filter hook input priority -110 ; }`);
  add(`add chain ${t} filter-forward { type filter hook forward priority -110 ; }`);
  add(`add chain ${t} filter-output { type filter hook output priority -110 ; }`);
  add(`add chain ${t} nat-prerouting { type nat hook prerouting priority -100 ; }`);
  add(`add chain ${t} nat-output { type nat hook output priority -100 ; }`);
  add(`add chain ${t} nat-postrouting { type nat hook postrouting priority 100 ; }`);
  for (const c of ['reject-chain', 'mark-for-masquerade', 'masquerading', 'services', 'service-endpoints-check', 'nodeport-endpoints-check']) add(`add chain ${t} ${c}`);
  add(`add rule ${t} filter-input ct state new jump nodeport-endpoints-check`);
  add(`add rule ${t} filter-input ct state new jump service-endpoints-check`);
  add(`add rule ${t} filter-forward ct state new jump service-endpoints-check`);
  add(`add rule ${t} filter-output ct state new jump service-endpoints-check`);
  add(`add rule ${t} nat-prerouting jump services`);
  add(`add rule ${t} nat-output jump services`);
  add(`add rule ${t} nat-postrouting jump masquerading`);
  add(`add rule ${t} reject-chain reject`);
  add(`add rule ${t} mark-for-masquerade meta mark set meta mark or 0x4000`);
  add(`add rule ${t} masquerading meta mark & 0x4000 == 0 return`);
  add(`add rule ${t} masquerading meta mark set meta mark xor 0x4000`);
  add(`add rule ${t} masquerading masquerade fully-random`);
  add(`add rule ${t} services ${daddr} . meta l4proto . th dport vmap @service-ips`);
  add(`add rule ${t} services fib daddr type local ${daddr} != ${f === 4 ? '127.0.0.0/8' : '::1'} meta l4proto . th dport vmap @service-nodeports`);
  add(`add rule ${t} service-endpoints-check ${daddr} . meta l4proto . th dport vmap @no-endpoint-services`);
  add(`add rule ${t} nodeport-endpoints-check fib daddr type local ${daddr} != ${f === 4 ? '127.0.0.0/8' : '::1'} meta l4proto . th dport vmap @no-endpoint-nodeports`);
  for (const s of services) {
    const vip = s.vip[f];
    if (vip === undefined) continue;
    const key = `${s.ns}/${s.name}/tcp/p`;
    const id = hash(`${key}${f}`).slice(0, 8);
    const name = `service-${id}-${s.ns}/${s.name}/tcp/p`;
    add(`add element ${t} cluster-ips { ${vip} }`);
    const eps = endpointsOf(s, pods).filter((e) => e.pod.ips[f] !== undefined);
    if (eps.length === 0) {
      add(`add element ${t} no-endpoint-services { ${vip} . tcp . ${s.port} comment "${key}" : goto reject-chain }`);
      if (s.nodePort !== null) add(`add element ${t} no-endpoint-nodeports { tcp . ${s.nodePort} comment "${key}" : goto reject-chain }`);
      continue;
    }
    add(`add chain ${t} ${name}`);
    add(masqueradeAll
      ? `add rule ${t} ${name} ${daddr} ${vip} tcp dport ${s.port} jump mark-for-masquerade`
      : `add rule ${t} ${name} ${daddr} ${vip} tcp dport ${s.port} ${saddr} != ${clusterCidr(f)} jump mark-for-masquerade`);
    const targets = eps.map((e, k) => {
      const addr = e.pod.ips[f]!;
      const epName = `endpoint-${hash(`${key}${addr}${e.port}`).slice(0, 8)}-${s.ns}/${s.name}/tcp/p__${addr.replace(/:/g, '_')}/${e.port}`;
      add(`add chain ${t} ${epName}`);
      add(`add rule ${t} ${epName} ${saddr} ${addr} jump mark-for-masquerade`);
      add(`add rule ${t} ${epName} meta l4proto tcp dnat to ${ep(addr, e.port)}`);
      return { k, epName };
    });
    add(targets.length === 1
      ? `add rule ${t} ${name} goto ${targets[0]!.epName}`
      : `add rule ${t} ${name} numgen inc mod ${targets.length} vmap { ${targets.map((x) => `${x.k} : goto ${x.epName}`).join(', ')} }`);
    add(`add element ${t} service-ips { ${vip} . tcp . ${s.port} comment "${key}" : goto ${name} }`);
    if (s.nodePort !== null) {
      const ext = `external-${id}-${s.ns}/${s.name}/tcp/p`;
      add(`add chain ${t} ${ext}`);
      add(`add rule ${t} ${ext} jump mark-for-masquerade`);
      add(`add rule ${t} ${ext} goto ${name}`);
      add(`add element ${t} service-nodeports { tcp . ${s.nodePort} comment "${key}" : goto ${ext} }`);
    }
  }
  return out.join('\n') + '\n';
}

/** portmap's hostPort rules and the bridge plugin's ipMasq chains on one node, one family. */
function cniRules(f: Fam, node: number, pods: readonly GPod[], ipMasq: boolean, loopbackHostPorts: boolean): string | null {
  const mine = pods.filter((p) => p.node === node && !p.hostNetwork && p.ips[f] !== undefined);
  const hostPorts = mine.flatMap((p) => p.ports.filter((x) => x.hostPort !== undefined).map((x) => ({ p, x })));
  if (hostPorts.length === 0 && !ipMasq) return null;
  const chains: string[] = [];
  const rules: string[] = [];
  const id = (p: GPod): string => hash(`${p.ns}/${p.name}`).toLowerCase();
  if (hostPorts.length > 0) {
    chains.push('CNI-HOSTPORT-DNAT', 'CNI-HOSTPORT-MASQ', 'CNI-HOSTPORT-SETMARK');
    rules.push('-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT');
    rules.push('-A OUTPUT -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT');
    rules.push('-A POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ');
    rules.push('-A CNI-HOSTPORT-MASQ -m mark --mark 0x2000/0x2000 -j MASQUERADE');
    rules.push('-A CNI-HOSTPORT-SETMARK -m comment --comment "CNI portfwd masquerade mark" -j MARK --set-xmark 0x2000/0x2000');
    const byPod = new Map<GPod, { port: number; hostPort: number }[]>();
    for (const { p, x } of hostPorts) byPod.set(p, [...(byPod.get(p) ?? []), { port: x.port, hostPort: x.hostPort! }]);
    for (const [p, list] of byPod) {
      const dn = `CNI-DN-${hash(`dn${p.ns}/${p.name}${f}`).slice(0, 20).toLowerCase()}`;
      chains.push(dn);
      rules.push(`-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \\"cbr0\\" id: \\"${id(p)}\\"" -m multiport --dports ${list.map((l) => l.hostPort).join(',')} -j ${dn}`);
      for (const l of list) {
        rules.push(`-A ${dn} -s ${podCidr(node, f)} -p tcp -m tcp --dport ${l.hostPort} -j CNI-HOSTPORT-SETMARK`);
        if (f === 4 && loopbackHostPorts) rules.push(`-A ${dn} -s 127.0.0.1/32 -p tcp -m tcp --dport ${l.hostPort} -j CNI-HOSTPORT-SETMARK`);
        rules.push(`-A ${dn} -p tcp -m tcp --dport ${l.hostPort} -j DNAT --to-destination ${ep(p.ips[f]!, l.port)}`);
      }
    }
  }
  if (ipMasq) {
    for (const p of mine) {
      const c = `CNI-${hash(`masq${p.ns}/${p.name}${f}`).slice(0, 24).toLowerCase()}`;
      const comment = `-m comment --comment "name: \\"cbr0\\" id: \\"${id(p)}\\""`;
      chains.push(c);
      rules.push(`-A POSTROUTING -s ${p.ips[f]}${hostBits(f)} ${comment} -j ${c}`);
      rules.push(`-A ${c} -d ${podCidr(node, f)} ${comment} -j ACCEPT`);
      rules.push(`-A ${c} ! -d ${f === 4 ? '224.0.0.0/4' : 'ff00::/8'} ${comment} -j MASQUERADE`);
    }
  }
  return ['*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', ...chains.map((c) => `:${c} - [0:0]`), ...rules, 'COMMIT', ''].join('\n');
}

/** The snapshot of a generated cluster, as kubectl prints it. */
function snapshotOf(nodes: number, fams: readonly Fam[], pods: readonly GPod[], services: readonly GService[], json: boolean): string {
  const items: unknown[] = [];
  for (const ns of ['x', 'y']) items.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'kubernetes.io/metadata.name': ns } } });
  for (let i = 0; i < nodes; i++) {
    const cidrs = fams.map((f) => podCidr(i, f));
    items.push({
      apiVersion: 'v1', kind: 'Node', metadata: { name: `node-${i}` },
      spec: { podCIDR: cidrs[0], podCIDRs: cidrs },
      status: { addresses: [...fams.map((f) => ({ type: 'InternalIP', address: nodeIp(i, f) })), { type: 'Hostname', address: `node-${i}` }] },
    });
  }
  for (const p of pods) {
    const ips = p.hostNetwork ? fams.map((f) => nodeIp(p.node, f)) : fams.map((f) => p.ips[f]!).filter((x) => x !== undefined);
    items.push({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: p.name, namespace: p.ns, labels: { app: p.app } },
      spec: {
        nodeName: `node-${p.node}`,
        ...(p.hostNetwork ? { hostNetwork: true } : {}),
        containers: [{
          name: 'main', image: 'registry.example/app:1',
          ...(p.uid !== null ? { securityContext: { runAsUser: p.uid } } : {}),
          ports: p.ports.map((x) => ({ containerPort: x.port, name: x.name, protocol: x.udp === true ? 'UDP' : 'TCP', ...(x.hostPort !== undefined ? { hostPort: x.hostPort } : {}) })),
        }],
      },
      status: { phase: 'Running', hostIP: nodeIp(p.node, fams[0]!), podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) },
    });
  }
  for (const s of services) {
    const ips = fams.map((f) => s.vip[f]!);
    items.push({
      apiVersion: 'v1', kind: 'Service', metadata: { name: s.name, namespace: s.ns },
      spec: {
        type: s.nodePort !== null ? 'NodePort' : 'ClusterIP', selector: { app: s.app }, clusterIP: ips[0], clusterIPs: ips, ipFamilies: fams.map((f) => (f === 4 ? 'IPv4' : 'IPv6')),
        ports: [{ name: 'p', protocol: 'TCP', port: s.port, targetPort: s.targetPort, ...(s.nodePort !== null ? { nodePort: s.nodePort } : {}) }],
        ...(s.nodePort !== null ? { externalTrafficPolicy: s.local ? 'Local' : 'Cluster' } : {}),
      },
    });
    for (const f of fams) {
      const eps = endpointsOf(s, pods);
      items.push({
        apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', addressType: f === 4 ? 'IPv4' : 'IPv6',
        metadata: { name: `${s.name}-${f === 4 ? 'v4' : 'v6'}`, namespace: s.ns, labels: { 'kubernetes.io/service-name': s.name } },
        endpoints: eps.filter((e) => e.pod.ips[f] !== undefined).map((e) => ({ addresses: [e.pod.ips[f]], conditions: { ready: true, serving: true, terminating: false }, nodeName: `node-${e.pod.node}`, targetRef: { kind: 'Pod', namespace: e.pod.ns, name: e.pod.name } })),
        ports: [{ name: 'p', protocol: 'TCP', port: eps[0]?.port ?? (typeof s.targetPort === 'number' ? s.targetPort : 80) }],
      });
    }
  }
  const list = { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } };
  if (json) return JSON.stringify(list, null, 4) + '\n';
  return toYaml(list);
}

/** A small YAML writer for the snapshot (block style, as kubectl prints it). */
function toYaml(v: unknown, indent = ''): string {
  const scalar = (x: unknown): string => (typeof x === 'string' ? (/^[A-Za-z0-9_./-][A-Za-z0-9_./: -]*$/.test(x) && !/^(true|false|null|\d+(\.\d+)?)$/.test(x) && !x.includes(': ') && !x.endsWith(':') && !/^[0-9a-f:]+$/i.test(x) ? x : JSON.stringify(x)) : String(x));
  const lines: string[] = [];
  const walk = (x: unknown, pad: string, out: string[]): void => {
    if (Array.isArray(x)) {
      if (x.length === 0) return void (out[out.length - 1] += ' []');
      for (const item of x) {
        if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
          const sub: string[] = [];
          walk(item, pad + '  ', sub);
          out.push(`${pad}- ${sub[0]!.trimStart()}`, ...sub.slice(1));
        } else out.push(`${pad}- ${scalar(item)}`);
      }
      return;
    }
    for (const [k, val] of Object.entries(x as Record<string, unknown>)) {
      if (val !== null && typeof val === 'object') {
        if (Array.isArray(val) && val.length === 0) out.push(`${pad}${k}: []`);
        else if (!Array.isArray(val) && Object.keys(val).length === 0) out.push(`${pad}${k}: {}`);
        else {
          out.push(`${pad}${k}:`);
          walk(val, Array.isArray(val) ? pad : pad + '  ', out);
        }
      } else out.push(`${pad}${k}: ${scalar(val)}`);
    }
  };
  walk(v, indent, lines);
  return lines.join('\n') + '\n';
}

/** One generated cluster, a pure function of its seed. */
export function generateClusterCase(seed: number): ClusterCase {
  const rng = new Rng(seed);
  const famPick = rng.weighted<readonly Fam[]>([[6, [4]], [2, [6]], [2, [4, 6]]]);
  const nodes = rng.weighted([[7, 2], [3, 3]] as const);
  const cni = rng.chance(0.25) ? 'ptp' : 'bridge';
  const hairpin = cni === 'bridge' && rng.chance(0.35);
  const mode = rng.chance(0.3) ? 'nftables' : 'iptables';
  const masqueradeAll = rng.chance(0.2);
  const ipMasq = rng.chance(0.5);
  const apps = ['a', 'b', 'c'];
  const pods: GPod[] = [];
  const n = rng.int(4, 8);
  const hostPortsUsed = new Set<string>();
  for (let j = 0; j < n; j++) {
    const node = rng.int(0, nodes - 1);
    const hostNetwork = j > 0 && rng.chance(0.08);
    const ports = rng.sample(PORTS, rng.int(0, 2)).map((port) => {
      let hostPort: number | undefined;
      if (!hostNetwork && rng.chance(0.2)) {
        const hp = 8000 + rng.int(0, 9);
        if (!hostPortsUsed.has(`${node}:${hp}`)) {
          hostPortsUsed.add(`${node}:${hp}`);
          hostPort = hp;
        }
      }
      return { port: hostNetwork ? 9000 + port % 1000 : port, name: PORT_NAMES[port]!, ...(hostPort !== undefined ? { hostPort } : {}) };
    });
    const ips: Partial<Record<Fam, string>> = {};
    if (!hostNetwork) for (const f of famPick) ips[f] = f === 4 ? `10.244.${node + 1}.${5 + j}` : `fd10:244:${node + 1}::${(5 + j).toString(16)}`;
    // A UDP listener (a DNS server, say) on some pods.
    const withUdp = rng.chance(0.35) ? [...ports, { port: hostNetwork ? 9053 : 53, name: 'dns', udp: true }] : ports;
    pods.push({ ns: rng.chance(0.7) ? 'x' : 'y', name: `p${j}`, node, app: rng.pick(apps), ips, ports: withUdp, hostNetwork, uid: rng.chance(0.2) ? 1000 : null });
  }
  // The first pod is a client (not hostNetwork) and every case has one.
  const services: GService[] = [];
  const s = rng.int(2, 4);
  for (let k = 0; k < s; k++) {
    const port = rng.pick([80, 443, 8080]);
    const targetPort: number | string = rng.chance(0.3) ? rng.pick(['http', 'alt', 'https', 'api']) : rng.pick(PORTS);
    const nodePort = rng.chance(0.35) ? 30000 + k * 7 + rng.int(0, 6) : null;
    const vip: Partial<Record<Fam, string>> = {};
    for (const f of famPick) vip[f] = f === 4 ? `10.96.0.${10 + k}` : `fd96::${(10 + k).toString(16)}`;
    services.push({ ns: rng.chance(0.7) ? 'x' : 'y', name: `s${k}`, app: rng.pick(apps), vip, port, targetPort, nodePort, local: nodePort !== null && mode === 'iptables' && rng.chance(0.4) });
  }
  const nodeRules: Record<string, string[]> = {};
  for (let i = 0; i < nodes; i++) {
    const texts: string[] = [];
    // Each dump starts as iptables-save / ip6tables-save start theirs.
    const header = (f: Fam): string => `# Generated by ${f === 4 ? 'iptables' : 'ip6tables'}-save v1.8.9 (nf_tables)\n`;
    for (const f of famPick) texts.push(mode === 'nftables' ? kubeProxyNft(f, services, pods, masqueradeAll) : header(f) + kubeProxyIptables(f, i, services, pods, masqueradeAll));
    for (const f of famPick) {
      const c = cniRules(f, i, pods, ipMasq, true);
      if (c !== null) texts.push(header(f) + c);
    }
    nodeRules[`node-${i}`] = texts;
  }
  // Probes.
  const clients = pods.filter((p) => !p.hostNetwork);
  const probes: ClusterProbe[] = [];
  const m = rng.int(6, 10);
  for (let q = 0; q < m; q++) {
    const from = rng.pick(clients);
    const f = rng.pick(famPick);
    const kind = rng.weighted<'pod' | 'service' | 'nodeport' | 'hostport' | 'outside' | 'nowhere' | 'udp'>([[5, 'pod'], [6, 'service'], [2, 'nodeport'], [2, 'hostport'], [1, 'outside'], [1, 'nowhere'], [2, 'udp']]);
    let dst: string;
    if (kind === 'udp') {
      // A datagram to a pod's port 53 (or a hostNetwork pod's 9053): a listener, or ICMP port unreachable back across the nodes.
      const to = rng.pick(pods);
      probes.push({ from: `${from.ns}/${from.name}`, dst: ep(to.hostNetwork ? nodeIp(to.node, f) : to.ips[f]!, to.hostNetwork ? 9053 : 53), proto: 'udp' });
      continue;
    }
    if (kind === 'pod') {
      const to = rng.pick(pods);
      const port = to.ports.length > 0 && rng.chance(0.8) ? rng.pick(to.ports).port : rng.pick(PORTS);
      dst = ep(to.hostNetwork ? nodeIp(to.node, f) : to.ips[f]!, port);
    } else if (kind === 'service') {
      const svc = rng.pick(services);
      dst = ep(svc.vip[f]!, rng.chance(0.9) ? svc.port : svc.port + 1);
    } else if (kind === 'nodeport') {
      const svc = services.find((x) => x.nodePort !== null) ?? rng.pick(services);
      dst = ep(nodeIp(rng.int(0, nodes - 1), f), svc.nodePort ?? 30999);
    } else if (kind === 'hostport') {
      const withHp = pods.filter((p) => p.ports.some((x) => x.hostPort !== undefined) && p.ips[f] !== undefined);
      const target = withHp.length > 0 ? rng.pick(withHp) : null;
      const hp = target?.ports.find((x) => x.hostPort !== undefined)?.hostPort ?? 8000;
      const node = target !== null && rng.chance(0.7) ? target.node : rng.int(0, nodes - 1);
      dst = ep(nodeIp(node, f), hp);
    } else if (kind === 'outside') {
      dst = ep(f === 4 ? '203.0.113.10' : '2001:db8::10', 443);
    } else {
      const node = rng.int(0, nodes - 1);
      dst = ep(f === 4 ? `10.244.${node + 1}.250` : `fd10:244:${node + 1}::fa`, 80);
    }
    probes.push({ from: `${from.ns}/${from.name}`, dst });
  }
  const json = rng.chance(0.3);
  const description = `${nodes} nodes, ${n} pods, ${s} services, ${famPick.map((f) => `IPv${f}`).join('+')}, kube-proxy ${mode}${masqueradeAll ? ' --masquerade-all' : ''}, --cni ${cni}${hairpin ? ' --hairpin' : ''}${ipMasq ? ', ipMasq' : ''}`;
  return { seed, description, snapshot: snapshotOf(nodes, famPick, pods, services, json), cni, hairpin, nodeRules, probes };
}
