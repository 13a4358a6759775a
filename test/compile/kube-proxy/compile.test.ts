// compileKubeProxy beyond upstream's expectations: what every output is (our own printers print it
// unchanged), the traffic-policy and endpoint-condition corners, dual stack, and bad input.
import { describe, expect, it } from 'vitest';
import { compileKubeProxy, kubeProxyNfacctNames } from '../../../src/compile/kube-proxy/index.js';
import { formatIptablesSave } from '../../../src/iptables/fmt.js';
import { formatNftRuleset } from '../../../src/nftables/index.js';
import { NetfilterSimError } from '../../../src/model/errors.js';
import { Netns } from '../../../src/engine/index.js';
import { DUPLICATE_EXTERNAL_IP, FAKE_IPTABLES, OVERALL, service, slice, snapshot, TEST_NODE, testNode } from './fixtures.js';
import { GEN_CLUSTER_CIDR, GEN_NODE, generateCluster } from './generate.js';

const SEEDS = Array.from({ length: 60 }, (_x, i) => i + 1);

describe('every compiled rule set is what our printers print', () => {
  it.each(SEEDS)('seed %i: iptables-save and nft list ruleset forms are fixed points', (seed) => {
    const g = generateCluster(seed);
    for (const family of g.families) {
      const save = compileKubeProxy(g.snapshot, GEN_NODE, { mode: 'iptables', family, clusterCIDR: GEN_CLUSTER_CIDR });
      expect(formatIptablesSave(save, { family })).toBe(save);
      const restore = compileKubeProxy(g.snapshot, GEN_NODE, { mode: 'iptables', family, clusterCIDR: GEN_CLUSTER_CIDR, format: 'restore' });
      // The payload alone loads too (chains it jumps to are its own).
      expect(() => formatIptablesSave(restore, { family })).not.toThrow();
    }
    for (const version of ['1.33', '1.35'] as const) {
      const list = compileKubeProxy(g.snapshot, GEN_NODE, { mode: 'nftables', version, clusterCIDR: GEN_CLUSTER_CIDR });
      expect(formatNftRuleset(list)).toBe(list);
      const tx = compileKubeProxy(g.snapshot, GEN_NODE, { mode: 'nftables', version, clusterCIDR: GEN_CLUSTER_CIDR, format: 'restore' });
      expect(formatNftRuleset(tx)).toBe(list);
      expect(list.startsWith(g.families[0] === 4 ? 'table ip kube-proxy {' : 'table ip6 kube-proxy {')).toBe(true);
      expect(list.includes('table ip6 kube-proxy {')).toBe(g.families.includes(6));
    }
  });
});

describe('iptables mode on the node', () => {
  const save = compileKubeProxy(OVERALL, TEST_NODE, { ...FAKE_IPTABLES });

  it('inserts its jump rules at the head of the built-in chains, the last ensured first', () => {
    const input = save.split('\n').filter((l) => l.startsWith('-A INPUT '));
    expect(input).toEqual([
      '-A INPUT -j KUBE-FIREWALL',
      '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL',
      '-A INPUT -m comment --comment "kubernetes health check service ports" -j KUBE-NODEPORTS',
      '-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes externally-visible service portals" -j KUBE-EXTERNAL-SERVICES',
    ]);
    expect(save).toContain('*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:KUBE-PROXY-CANARY - [0:0]\nCOMMIT\n');
  });

  it('prints MARK as iptables-save does (--set-xmark) and the probability with eleven digits', () => {
    expect(save).toContain('-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n');
    expect(save).toContain('-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n');
    expect(save).toContain('-m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-UKSFD7AGPMPPLUHC');
    expect(save).toContain('-j REJECT --reject-with icmp-port-unreachable');
    expect(save).toContain('-m nfacct --nfacct-name  ct_state_invalid_dropped_pkts');
  });

  it('names the nfacct objects the rules need', () => {
    expect(kubeProxyNfacctNames(OVERALL, TEST_NODE, FAKE_IPTABLES)).toEqual(['ct_state_invalid_dropped_pkts', 'localhost_nps_accepted_pkts']);
    expect(kubeProxyNfacctNames(OVERALL, TEST_NODE, { ...FAKE_IPTABLES, nfacct: false })).toEqual([]);
    expect(kubeProxyNfacctNames(OVERALL, TEST_NODE, { ...FAKE_IPTABLES, family: 6 })).toEqual(['ct_state_invalid_dropped_pkts']);
    expect(kubeProxyNfacctNames(OVERALL, TEST_NODE, { mode: 'nftables' })).toEqual([]);
  });

  it('externalTrafficPolicy: Local with a local endpoint sends outside traffic to KUBE-SVL', () => {
    const snap = snapshot(
      [service('ns1', 'web', { type: 'NodePort', externalTrafficPolicy: 'Local', clusterIP: '172.30.0.10', ports: [{ name: 'http', port: 80, nodePort: 30080 }] })],
      [slice('ns1', 'web', [{ addresses: ['10.0.1.5'], nodeName: TEST_NODE }, { addresses: ['10.0.2.5'], nodeName: 'other' }], [{ name: 'http', port: 8080 }])],
    );
    const payload = compileKubeProxy(snap, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    const ext = payload.split('\n').filter((l) => l.startsWith('-A KUBE-EXT-'));
    expect(ext.at(-1)).toMatch(/^-A KUBE-EXT-(\w+) -j KUBE-SVL-\1$/);
    const svl = payload.split('\n').filter((l) => l.startsWith('-A KUBE-SVL-'));
    expect(svl).toHaveLength(1);
    expect(svl[0]).toContain('"ns1/web:http -> 10.0.1.5:8080"');
    // The cluster chain still balances over both endpoints (pods and the node short-circuit to it).
    expect(payload.split('\n').filter((l) => l.startsWith('-A KUBE-SVC-') && l.includes('-> '))).toHaveLength(2);
  });

  it('internalTrafficPolicy: Local without a local endpoint drops ClusterIP traffic in filter', () => {
    const snap = snapshot(
      [service('ns1', 'db', { clusterIP: '172.30.0.11', internalTrafficPolicy: 'Local', ports: [{ port: 5432 }] })],
      [slice('ns1', 'db', [{ addresses: ['10.0.2.7'], nodeName: 'other' }], [{ name: '', port: 5432 }])],
    );
    const payload = compileKubeProxy(snap, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    expect(payload).toContain('-A KUBE-SERVICES -m comment --comment "ns1/db has no local endpoints" -m tcp -p tcp -d 172.30.0.11 --dport 5432 -j DROP');
    expect(payload).not.toContain('KUBE-SVC-');
  });

  it('uses serving terminating endpoints when none is ready, and skips not-serving ones', () => {
    const snap = snapshot(
      [service('ns1', 'api', { clusterIP: '172.30.0.12', ports: [{ name: 'h', port: 80 }] })],
      [slice('ns1', 'api', [
        { addresses: ['10.0.1.1'], conditions: { ready: false, serving: true, terminating: true } },
        { addresses: ['10.0.1.2'], conditions: { ready: false, serving: false, terminating: true } },
      ], [{ name: 'h', port: 80 }])],
    );
    const payload = compileKubeProxy(snap, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    expect(payload).toContain('DNAT --to-destination 10.0.1.1:80');
    expect(payload).not.toContain('10.0.1.2:80');
  });

  it('sorts endpoints by their ip:port text, as kube-proxy does ("10.0.0.10:80" before "10.0.0.1:80")', () => {
    const snap = snapshot(
      [service('ns1', 'a', { clusterIP: '172.30.0.13', ports: [{ name: 'h', port: 80 }] })],
      [slice('ns1', 'a', [{ addresses: ['10.0.0.2'] }, { addresses: ['10.0.0.10'] }, { addresses: ['10.0.0.1'] }], [{ name: 'h', port: 80 }])],
    );
    const payload = compileKubeProxy(snap, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    const order = [...payload.matchAll(/-> (10\.0\.0\.\d+):80" (-m statistic --mode random --probability (\S+) )?/g)].map((m) => [m[1], m[3] ?? null]);
    expect(order).toEqual([['10.0.0.10', '0.3333333333'], ['10.0.0.1', '0.5000000000'], ['10.0.0.2', null]]);
  });

  it('leaves out load-balancer IPs with ipMode Proxy', () => {
    const snap = snapshot(
      [service('ns1', 'lb', { type: 'LoadBalancer', clusterIP: '172.30.0.14', ports: [{ name: 'h', port: 80, nodePort: 30001 }] }, { loadBalancer: { ingress: [{ ip: '1.2.3.4', ipMode: 'Proxy' }, { ip: '5.6.7.8' }] } })],
      [slice('ns1', 'lb', [{ addresses: ['10.0.0.5'] }], [{ name: 'h', port: 80 }])],
    );
    const payload = compileKubeProxy(snap, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    expect(payload).not.toContain('1.2.3.4');
    expect(payload).toContain('-d 5.6.7.8 --dport 80');
  });

  it('writes one family per rule set: IPv6 rules for family 6', () => {
    const snap = snapshot(
      [service('ns1', 'v6', { clusterIP: 'fd00:172:30::41', ipFamilies: ['IPv6'], clusterIPs: ['fd00:172:30::41'], ports: [{ name: 'h', port: 80 }] })],
      [slice('ns1', 'v6', [{ addresses: ['fd00:10::5'] }], [{ name: 'h', port: 80 }], { addressType: 'IPv6' })],
    );
    const save = compileKubeProxy(snap, TEST_NODE, { mode: 'iptables', family: 6, clusterCIDR: 'fd00:10::/64' });
    expect(save).toContain('-A KUBE-SEP-');
    expect(save).toContain('--to-destination [fd00:10::5]:80');
    expect(save).toContain('! -d ::1/128 -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS');
    expect(save).not.toContain('block incoming localnet connections');
    expect(compileKubeProxy(snap, TEST_NODE, { mode: 'iptables', family: 4 })).not.toContain('fd00');
  });
});

describe('bad input', () => {
  const code = (f: () => unknown): string => {
    try {
      f();
    } catch (e) {
      if (e instanceof NetfilterSimError) return `${e.code}: ${e.message}`;
      throw e;
    }
    return 'no error';
  };

  it('names a node missing from the snapshot', () => {
    expect(code(() => compileKubeProxy(OVERALL, 'nope', { mode: 'iptables' }))).toBe('BAD_MANIFEST: no Node named "nope" in the snapshot (nodes: test-node)');
  });

  it('refuses options out of range, naming the option', () => {
    expect(code(() => compileKubeProxy(OVERALL, TEST_NODE, { mode: 'ipvs' as never }))).toMatch(/^BAD_CONFIG: options.mode must be "iptables" or "nftables"/);
    expect(code(() => compileKubeProxy(OVERALL, TEST_NODE, { mode: 'nftables', version: '1.36' as never }))).toBe('BAD_CONFIG: options.version "1.36" is not one of 1.33, 1.34, 1.35');
    expect(code(() => compileKubeProxy(OVERALL, TEST_NODE, { mode: 'iptables', family: 'dual' }))).toMatch(/^BAD_CONFIG: options.family "dual" is for nftables mode/);
    expect(code(() => compileKubeProxy(OVERALL, TEST_NODE, { mode: 'iptables', masqueradeBit: 32 }))).toBe('BAD_CONFIG: options.masqueradeBit must be an integer from 0 to 31, not 32');
    expect(code(() => compileKubeProxy(OVERALL, TEST_NODE, { mode: 'iptables', clusterCIDR: '10.0.0.0/33' }))).toBe('BAD_CONFIG: options.clusterCIDR: "10.0.0.0/33" is not a CIDR');
    expect(code(() => compileKubeProxy(OVERALL, TEST_NODE, { mode: 'nftables', nodePortAddresses: ['primary', '10.0.0.0/8'] }))).toBe('BAD_CONFIG: options.nodePortAddresses: "primary" must be the only entry');
  });

  it('names the first malformed field of a snapshot object, with its path', () => {
    const n = [testNode()];
    expect(code(() => compileKubeProxy(snapshot([{} as never], [], n), TEST_NODE, { mode: 'iptables' }))).toBe('BAD_MANIFEST: snapshot.services[0].metadata is missing');
    expect(code(() => compileKubeProxy(snapshot([service('ns1', 'a', { clusterIP: '172.30.0.9', ports: 5 as never })], [], n), TEST_NODE, { mode: 'nftables' }))).toBe(
      'BAD_MANIFEST: snapshot.services[0].spec.ports must be an array, not 5',
    );
    expect(code(() => compileKubeProxy(snapshot([service('ns1', 'a', { clusterIP: '172.30.0.9', ports: [{ port: 70000 }] })], [], n), TEST_NODE, { mode: 'iptables' }))).toBe(
      'BAD_MANIFEST: snapshot.services[0].spec.ports[0].port must be a port number (an integer 0–65535), not 70000',
    );
    expect(code(() => compileKubeProxy(snapshot([], [slice('ns1', 'a', [{ addresses: [10 as never] }], [{ name: '', port: 80 }])], n), TEST_NODE, { mode: 'iptables' }))).toBe(
      'BAD_MANIFEST: snapshot.endpointSlices[0].endpoints[0].addresses[0] must be a string, not 10',
    );
    expect(code(() => compileKubeProxy(snapshot([], [], [{ kind: 'Node', metadata: { name: TEST_NODE }, status: { addresses: 'x' as never } }]), TEST_NODE, { mode: 'iptables' }))).toBe(
      'BAD_MANIFEST: snapshot.nodes[0].status.addresses must be an array, not a string ("x")',
    );
  });

  it('names a node without an address of the family', () => {
    const snap = snapshot([], [], [testNode({ status: { addresses: [{ type: 'InternalIP', address: '192.168.0.2' }] } })]);
    expect(code(() => compileKubeProxy(snap, TEST_NODE, { mode: 'iptables', family: 6 }))).toBe(
      'BAD_MANIFEST: Node test-node has no IPv6 address in status.addresses (InternalIP or ExternalIP); kube-proxy needs one for its IPv6 rules',
    );
    expect(code(() => compileKubeProxy(snap, TEST_NODE, { mode: 'iptables', detectLocalMode: 'NodeCIDR', family: 4 }))).toBe('no error');
    const bare = snapshot([], [], [testNode({ spec: {} })]);
    expect(code(() => compileKubeProxy(bare, TEST_NODE, { mode: 'iptables', detectLocalMode: 'NodeCIDR' }))).toBe('BAD_MANIFEST: Node test-node has no IPv4 pod CIDR (spec.podCIDRs) for detectLocalMode NodeCIDR');
  });

  it('warns, naming the object, about what kube-proxy skips', () => {
    const warnings: string[] = [];
    const snap = snapshot(
      [
        service('ns1', 'bad', { clusterIP: '172.30.0.300', ports: [{ port: 80 }] }),
        service('ns1', 'ok', { clusterIP: '172.30.0.20', externalIPs: ['not-an-ip'], ports: [{ port: 80 }] }),
      ],
      [
        slice('ns1', 'ok', [{ addresses: ['10.0.0.9'] }], [{ port: 80 } as never]),
        { kind: 'EndpointSlice', metadata: { name: 'orphan', namespace: 'ns1' }, addressType: 'IPv4', endpoints: [], ports: [] },
      ],
    );
    const payload = compileKubeProxy(snap, TEST_NODE, { mode: 'iptables', format: 'restore', onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([
      'Service ns1/bad: clusterIP "172.30.0.300" is not an IPv4 address; kube-proxy skips the Service',
      'Service ns1/ok: externalIP "not-an-ip" is not an address; kube-proxy ignores it',
      'EndpointSlice ns1/ok-1: a port without a name; kube-proxy ignores it (an unnamed port is name: "")',
      'EndpointSlice ns1/orphan: no kubernetes.io/service-name label; kube-proxy ignores it',
    ]);
    // The Service without usable endpoints is rejected, as kube-proxy would.
    expect(payload).toContain('"ns1/ok has no endpoints"');
  });
});

describe('compiled rules in Netns', () => {
  // Endpoints beyond the node's gateway; the node's own connections to the ClusterIP.
  const snap = (affinity: boolean): ReturnType<typeof snapshot> => snapshot(
    [service('web', 's', { clusterIP: '10.96.0.15', ...(affinity ? { sessionAffinity: 'ClientIP' as const } : {}), ports: [{ name: 'http', port: 80 }] })],
    [slice('web', 's', [{ addresses: ['10.200.2.7'] }, { addresses: ['10.200.2.8'] }, { addresses: ['10.200.2.9'] }], [{ name: 'http', port: 8080 }])],
    [testNode({ status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] } })],
  );
  const endpointsHit = (mode: 'iptables' | 'nftables', affinity: boolean): Set<string> => {
    const text = compileKubeProxy(snap(affinity), TEST_NODE, { mode, clusterCIDR: '10.244.0.0/16' });
    const ns = new Netns({ ...(mode === 'iptables' ? { rules: text } : { rules: '', nft: text }), listen: [] });
    const hit = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const r = ns.connect({ from: 'local', uid: 1000, gid: 1000, dst: '10.96.0.15:80' }, { trace: false });
      hit.add(`${r.outcome} ${r.address}:${r.port}`);
    }
    return hit;
  };
  it.each(['iptables', 'nftables'] as const)('%s: load balancing spreads the node\'s connections; ClientIP affinity keeps them on one endpoint', (mode) => {
    const spread = endpointsHit(mode, false);
    expect(spread.size).toBeGreaterThan(1);
    for (const h of spread) expect(h).toMatch(/^remote 10\.200\.2\.[789]:8080$/);
    const sticky = endpointsHit(mode, true);
    expect(sticky.size).toBe(1);
    expect([...sticky][0]).toMatch(/^remote 10\.200\.2\.[789]:8080$/);
  });
});

describe('two Services claiming one external IP and port', () => {
  const dup = DUPLICATE_EXTERNAL_IP;
  it('iptables: both rules, the first in KUBE-SERVICES wins', () => {
    const payload = compileKubeProxy(dup, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    expect(payload.match(/-d 192\.168\.99\.5 --dport 80 -j/g)).toHaveLength(2);
  });
  it('nftables: the later Service replaces the element (delete, then add), as nftElementStorage does', () => {
    const tx = compileKubeProxy(dup, TEST_NODE, { mode: 'nftables', format: 'restore' });
    expect(tx).toContain('delete element ip kube-proxy service-ips { 192.168.99.5 . tcp . 80 }\n');
    const list = compileKubeProxy(dup, TEST_NODE, { mode: 'nftables' });
    expect(list).toMatch(/192\.168\.99\.5 \. tcp \. 80 : goto external-\w+-b\/second\/tcp\/h/);
    expect(list).not.toMatch(/192\.168\.99\.5 \. tcp \. 80 : goto external-\w+-a\/first/);
  });
});
