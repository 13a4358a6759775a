// Synthetic kube-proxy (iptables mode) rule sets, shaped like kube-proxy's own TestTracePacket
// fixture (shared/corpus/kubernetes_kube-proxy_tracepacket-fixture.kernel-save, as iptables-save
// prints it): filter KUBE-SERVICES / KUBE-EXTERNAL-SERVICES / KUBE-NODEPORTS / KUBE-FORWARD,
// nat KUBE-SERVICES with one `-d VIP/32 -p tcp -m comment … -m tcp --dport P -j KUBE-SVC-…` rule
// per service port (plus external and load-balancer IPs), KUBE-SVC-* with the masquerade rule and
// one `statistic --mode random` rule per endpoint, KUBE-SEP-* with the hairpin mark and the DNAT,
// KUBE-EXT-*, KUBE-NODEPORTS, KUBE-MARK-MASQ and KUBE-POSTROUTING.
//
// Everything is a pure function of (services, seed).
//
//   import { kubeProxyRules, kubeProxyNode, kubeProxyProbes } from './kube-proxy.js';
import { rng } from './rng.js';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** A 16-character chain suffix, as kube-proxy's base32 of a SHA-256 looks. */
function suffix(kind, key) {
  let h = 0x811c9dc5;
  const s = `${kind}/${key}`;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  let out = '';
  let x = h >>> 0;
  let y = Math.imul(h ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  for (let i = 0; i < 16; i++) {
    out += B32[(i < 8 ? x : y) & 31];
    if (i < 8) x = (x >>> 5) | ((x & 31) << 27);
    else y = (y >>> 5) | ((y & 31) << 27);
    x = Math.imul(x ^ i, 0x27d4eb2d) >>> 0;
  }
  return out;
}

const ip = (n) => `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;

/** The services of a cluster: VIP, port, endpoints, external IP, node port. */
export function kubeProxyServices(count, seed = 1) {
  const r = rng(seed);
  const services = [];
  const clusterBase = (172 << 24) | (30 << 16); // 172.30.0.0/16, as the fixture
  const podBase = (10 << 24) | (180 << 16); // 10.180.0.0/16 endpoints
  let nextPod = 1;
  let nextNodePort = 30001;
  for (let i = 0; i < count; i++) {
    const ns = `ns${1 + (i % 97)}`;
    const name = `svc${i + 1}`;
    const port = r() < 0.7 ? 80 : [443, 8080, 9090, 53, 5432][Math.floor(r() * 5)];
    const vip = clusterBase + 10 + i;
    const noEndpoints = r() < 0.03;
    const n = noEndpoints ? 0 : 1 + Math.floor(r() * 3);
    const endpoints = [];
    for (let k = 0; k < n; k++) endpoints.push(ip(podBase + nextPod++) + ':' + (port === 80 ? 80 : port + 1000));
    services.push({
      key: `${ns}/${name}:p${port}`,
      vip: ip(vip),
      port,
      endpoints,
      externalIP: r() < 0.05 ? ip((192 << 24) | (168 << 16) | (99 << 8) | (20 + (i % 200))) : null,
      nodePort: r() < 0.1 ? nextNodePort++ : null,
    });
  }
  return services;
}

/** iptables-save text of kube-proxy's rules for `services`. */
export function kubeProxyRules(services) {
  const filter = [
    '*filter',
    ':INPUT ACCEPT [0:0]',
    ':FORWARD ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':KUBE-EXTERNAL-SERVICES - [0:0]',
    ':KUBE-FIREWALL - [0:0]',
    ':KUBE-FORWARD - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-PROXY-FIREWALL - [0:0]',
    ':KUBE-SERVICES - [0:0]',
    '-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
    '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    '-A FORWARD -m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A FORWARD -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    '-A OUTPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP',
    '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
    '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
  ];
  const nat = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':INPUT ACCEPT [0:0]',
    ':OUTPUT ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':KUBE-MARK-MASQ - [0:0]',
    ':KUBE-NODEPORTS - [0:0]',
    ':KUBE-POSTROUTING - [0:0]',
    ':KUBE-SERVICES - [0:0]',
  ];
  const chains = [];
  const services4 = [];
  const svcChains = [];
  const sepChains = [];
  const extChains = [];
  const nodePorts = [];
  for (const s of services) {
    if (s.endpoints.length === 0) {
      filter.push(`-A KUBE-SERVICES -d ${s.vip}/32 -p tcp -m comment --comment "${s.key} has no endpoints" -m tcp --dport ${s.port} -j REJECT --reject-with icmp-port-unreachable`);
      if (s.externalIP) filter.push(`-A KUBE-EXTERNAL-SERVICES -d ${s.externalIP}/32 -p tcp -m comment --comment "${s.key} has no endpoints" -m tcp --dport ${s.port} -j REJECT --reject-with icmp-port-unreachable`);
      continue;
    }
    const svc = `KUBE-SVC-${suffix('svc', s.key)}`;
    chains.push(svc);
    services4.push(`-A KUBE-SERVICES -d ${s.vip}/32 -p tcp -m comment --comment "${s.key} cluster IP" -m tcp --dport ${s.port} -j ${svc}`);
    let ext = null;
    if (s.externalIP || s.nodePort) {
      ext = `KUBE-EXT-${suffix('ext', s.key)}`;
      chains.push(ext);
      extChains.push(`-A ${ext} -m comment --comment "masquerade traffic for ${s.key} external destinations" -j KUBE-MARK-MASQ`, `-A ${ext} -j ${svc}`);
    }
    if (s.externalIP) services4.push(`-A KUBE-SERVICES -d ${s.externalIP}/32 -p tcp -m comment --comment "${s.key} external IP" -m tcp --dport ${s.port} -j ${ext}`);
    if (s.nodePort) nodePorts.push(`-A KUBE-NODEPORTS -p tcp -m comment --comment "${s.key}" -m tcp --dport ${s.nodePort} -j ${ext}`);
    svcChains.push(`-A ${svc} ! -s 10.0.0.0/8 -d ${s.vip}/32 -p tcp -m comment --comment "${s.key} cluster IP" -m tcp --dport ${s.port} -j KUBE-MARK-MASQ`);
    const n = s.endpoints.length;
    s.endpoints.forEach((ep, k) => {
      const sep = `KUBE-SEP-${suffix('sep', `${s.key}/${ep}`)}`;
      chains.push(sep);
      const left = n - k;
      const prob = left > 1 ? ` -m statistic --mode random --probability ${(1 / left).toFixed(11)}` : '';
      svcChains.push(`-A ${svc} -m comment --comment "${s.key} -> ${ep}"${prob} -j ${sep}`);
      const [addr] = ep.split(':');
      sepChains.push(
        `-A ${sep} -s ${addr}/32 -m comment --comment "${s.key}" -j KUBE-MARK-MASQ`,
        `-A ${sep} -p tcp -m comment --comment "${s.key}" -m tcp -j DNAT --to-destination ${ep}`,
      );
    });
  }
  for (const c of chains) nat.push(`:${c} - [0:0]`);
  nat.push(
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
    ...extChains,
    '-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000',
    ...nodePorts,
    '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
    '-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0',
    '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
    ...sepChains,
    ...services4,
    '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    ...svcChains,
    'COMMIT',
  );
  filter.push('COMMIT');
  return `${filter.join('\n')}\n${nat.join('\n')}\n`;
}

/** The node's namespace options (as test/engine/kube-proxy.test.ts builds it). */
export function kubeProxyNode(rules, extra = {}) {
  return {
    rules,
    interfaces: { eth0: ['192.168.0.2/24', '192.168.99.11/24'], cbr0: ['10.0.0.1/8'] },
    gateway: ['192.168.0.1'],
    ipForward: true,
    routeLocalnet: true,
    ...extra,
  };
}

/**
 * Connection probes from pods behind cbr0: 90 % to a service's cluster IP and port (spread
 * evenly over the services), the rest to a pod address that is no service.
 */
export function kubeProxyProbes(services, count, seed = 7) {
  const r = rng(seed);
  const out = [];
  for (let i = 0; i < count; i++) {
    const src = ip((10 << 24) | (1 << 16) | (1 + Math.floor(r() * 60000)));
    if (r() < 0.9) {
      const s = services[Math.floor(r() * services.length)];
      out.push({ from: 'remote', src, dst: `${s.vip}:${s.port}` });
    } else {
      out.push({ from: 'remote', src, dst: `${ip((10 << 24) | (2 << 16) | Math.floor(r() * 60000))}:8080` });
    }
  }
  return out;
}

/**
 * The same services as kube-proxy's nftables mode writes them (pkg/proxy/nftables): one `ip
 * kube-proxy` table whose `service-ips` verdict map, keyed on `ip daddr . meta l4proto . th dport`,
 * sends each service to its chain, which picks an endpoint with `numgen random mod N vmap`; the
 * endpoint chain marks hairpin traffic and DNATs. Services without endpoints are rejected through
 * the `no-endpoint-services` map, traffic to unused cluster IPs is dropped, node ports go through
 * `service-nodeports`, and marked traffic is masqueraded.
 */
export function kubeProxyNftRules(services) {
  const out = [];
  const add = (line) => out.push(line);
  const t = 'ip kube-proxy';
  add(`add table ${t} { comment "rules for kube-proxy" ; }`);
  add(`add set ${t} cluster-ips { type ipv4_addr ; comment "Active ClusterIPs" ; }`);
  add(`add map ${t} no-endpoint-services { type ipv4_addr . inet_proto . inet_service : verdict ; comment "vmap to drop or reject packets to services with no endpoints" ; }`);
  add(`add map ${t} service-ips { type ipv4_addr . inet_proto . inet_service : verdict ; comment "ClusterIP, ExternalIP and LoadBalancer IP traffic" ; }`);
  add(`add map ${t} service-nodeports { type inet_proto . inet_service : verdict ; comment "NodePort traffic" ; }`);
  add(`add chain ${t} filter-prerouting { type filter hook prerouting priority -110 ; }`);
  add(`add chain ${t} filter-input { type filter hook input priority -110 ; }`);
  add(`add chain ${t} filter-forward { type filter hook forward priority -110 ; }`);
  add(`add chain ${t} filter-output { type filter hook output priority -110 ; }`);
  add(`add chain ${t} filter-output-post-dnat { type filter hook output priority -90 ; }`);
  add(`add chain ${t} nat-prerouting { type nat hook prerouting priority -100 ; }`);
  add(`add chain ${t} nat-output { type nat hook output priority -100 ; }`);
  add(`add chain ${t} nat-postrouting { type nat hook postrouting priority 100 ; }`);
  for (const c of ['reject-chain', 'mark-for-masquerade', 'masquerading', 'services', 'service-endpoints-check', 'cluster-ips-check', 'nodeport-endpoints-check']) add(`add chain ${t} ${c}`);
  add(`add rule ${t} filter-input ct state new jump service-endpoints-check`);
  add(`add rule ${t} filter-forward ct state new jump service-endpoints-check`);
  add(`add rule ${t} filter-forward ct state new jump cluster-ips-check`);
  add(`add rule ${t} filter-output ct state new jump service-endpoints-check`);
  add(`add rule ${t} filter-output-post-dnat ct state new jump cluster-ips-check`);
  add(`add rule ${t} nat-prerouting jump services`);
  add(`add rule ${t} nat-output jump services`);
  add(`add rule ${t} nat-postrouting jump masquerading`);
  add(`add rule ${t} reject-chain reject`);
  add(`add rule ${t} mark-for-masquerade meta mark set meta mark or 0x4000`);
  add(`add rule ${t} masquerading meta mark & 0x4000 == 0 return`);
  add(`add rule ${t} masquerading meta mark set meta mark xor 0x4000`);
  add(`add rule ${t} masquerading masquerade fully-random`);
  add(`add rule ${t} services ip daddr . meta l4proto . th dport vmap @service-ips`);
  add(`add rule ${t} services fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports`);
  add(`add rule ${t} service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services`);
  add(`add rule ${t} cluster-ips-check ip daddr @cluster-ips reject comment "Reject traffic to invalid ports of ClusterIPs"`);
  add(`add rule ${t} cluster-ips-check ip daddr 172.30.0.0/16 drop comment "Drop traffic to unallocated ClusterIPs"`);
  const usedExternal = new Set();
  for (const s of services) {
    const id = suffix('svc', s.key).slice(0, 8);
    const name = `service-${id}-${s.key.replace(/[/:]/g, '-')}`;
    add(`add element ${t} cluster-ips { ${s.vip} }`);
    if (s.endpoints.length === 0) {
      add(`add element ${t} no-endpoint-services { ${s.vip} . tcp . ${s.port} comment "${s.key}" : goto reject-chain }`);
      continue;
    }
    add(`add chain ${t} ${name}`);
    add(`add rule ${t} ${name} ip daddr ${s.vip} tcp dport ${s.port} ip saddr != 10.0.0.0/8 jump mark-for-masquerade`);
    const targets = s.endpoints.map((ep, k) => {
      const [addr, port] = ep.split(':');
      const e = `endpoint-${suffix('sep', `${s.key}/${ep}`).slice(0, 8)}-${s.key.replace(/[/:]/g, '-')}-${addr}-${port}`;
      add(`add chain ${t} ${e}`);
      add(`add rule ${t} ${e} ip saddr ${addr} jump mark-for-masquerade`);
      add(`add rule ${t} ${e} meta l4proto tcp dnat to ${addr}:${port}`);
      return `${k} : goto ${e}`;
    });
    add(`add rule ${t} ${name} numgen random mod ${s.endpoints.length} vmap { ${targets.join(', ')} }`);
    add(`add element ${t} service-ips { ${s.vip} . tcp . ${s.port} : goto ${name} }`);
    // Two services may claim one external IP and port (the iptables rules then keep the first);
    // a verdict map holds one of them, so the later ones are left out, as the kernel would refuse them.
    if (s.externalIP && !usedExternal.has(`${s.externalIP}:${s.port}`)) {
      usedExternal.add(`${s.externalIP}:${s.port}`);
      add(`add element ${t} service-ips { ${s.externalIP} . tcp . ${s.port} : goto ${name} }`);
    }
    if (s.nodePort) add(`add element ${t} service-nodeports { tcp . ${s.nodePort} : goto ${name} }`);
  }
  return `${out.join('\n')}\n`;
}
