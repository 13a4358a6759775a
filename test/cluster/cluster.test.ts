// The cluster path, on the two-node fixture: the namespaces a connection crosses and what each
// did, the bridge (bridged and routed frames, hairpin), ptp, Services through hand-written
// kube-proxy rules, answers (RST, REJECT's ICMP) back across namespaces, the NetworkPolicy seam,
// the reachability matrix, and the errors. The kernel differential (test/kernel/cluster.*) checks
// the same path against real namespaces.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/cluster.js';
import type { ClusterConnectResult } from '../../src/cluster/cluster.js';
import { COMPONENTS } from '../../src/cluster/components.js';
import type { PolicyCheck } from '../../src/cluster/components.js';
import { readSnapshot } from '../../src/cluster/snapshot.js';
import { renderClusterOutcome, renderClusterTrace, renderReach } from '../../src/cluster/render.js';
import { thrown as error } from '../thrown.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/cluster');
const SNAPSHOT = readFileSync(join(FIXTURES, 'two-nodes.yaml'), 'utf8');
const KUBE_PROXY = readFileSync(join(FIXTURES, 'kube-proxy.rules'), 'utf8');
const nodeRules = { 'worker-1': KUBE_PROXY, 'worker-2': KUBE_PROXY };

function cluster(extra: Partial<ConstructorParameters<typeof Cluster>[0]> = {}): Cluster {
  return new Cluster({ snapshot: SNAPSHOT, kubeProxy: 'none', netpol: 'none', nodeRules, ...extra });
}

function path(r: ClusterConnectResult): string {
  return r.hops.map((h) => `${h.namespace}(${h.in ?? '-'}→${h.out ?? '-'})`).join(' ');
}

describe('Cluster.connect: the namespaces a connection crosses', () => {
  it('pod to a pod on the other node: pod, node, node, pod, each hop naming its namespace and devices', () => {
    const c = cluster();
    const web2 = c.topology.pods.find((p) => p.key === 'shop/web-2')!;
    const client = c.topology.pods.find((p) => p.key === 'shop/client')!;
    const r = c.connect({ from: 'shop/client', to: 'shop/web-2', port: 80 });
    expect(r.outcome).toBe('local');
    expect([r.address, r.port]).toEqual(['10.244.2.7', 80]);
    expect(r.source).toMatch(/^10\.244\.1\.6:\d+$/);
    // The pods have no rules, so nothing tracks the connection where the app reads SO_ORIGINAL_DST.
    expect(r.originalDestination).toBeNull();
    expect(r.hops.map((h) => [h.namespace, h.in, h.out])).toEqual([
      ['pod/shop/client', null, 'eth0'],
      ['node/worker-1', client.veth, 'eth0'],
      ['node/worker-2', 'eth0', web2.veth],
      ['pod/shop/web-2', 'eth0', null],
    ]);
    // Every step names its namespace; the nodes' steps are kube-proxy's, for every packet.
    expect(r.steps.every((s) => s.namespace.startsWith('node/'))).toBe(true);
    expect(new Set(r.steps.map((s) => s.packet))).toEqual(new Set(['SYN', 'SYN-ACK', 'ACK']));
    expect(r.policy).toBeNull();
    // Conntrack in each namespace that runs it: both nodes hold the connection.
    for (const n of ['node/worker-1', 'node/worker-2']) expect(c.namespace(n)!.conntrack().length).toBe(1);
    expect(c.namespace('pod/shop/client')!.conntrack()).toEqual([]);
  });

  it('a Service: DNAT on the client\'s node, the reply un-NATed there; the app sees the pod\'s address', () => {
    const c = cluster();
    const r = c.connect({ from: 'shop/client', to: '10.96.5.9:6379' });
    expect(r.outcome).toBe('local');
    expect([r.address, r.port]).toEqual(['10.244.2.9', 6379]);
    expect(path(r)).toBe(`pod/shop/client(-→eth0) node/worker-1(${c.topology.pods.find((p) => p.key === 'shop/client')!.veth}→eth0) node/worker-2(eth0→${c.topology.pods.find((p) => p.key === 'db/redis-0')!.veth}) pod/db/redis-0(eth0→-)`);
    const dnat = r.steps.find((s) => s.target === 'DNAT' && s.packet === 'SYN')!;
    expect(dnat).toMatchObject({ namespace: 'node/worker-1', hook: 'PREROUTING', table: 'nat', chain: 'KUBE-SEP-OWJ2ZXMLBAMLX6AY' });
    // The SYN-ACK is un-NATed on worker-1: the client's socket got it from the ClusterIP.
    const back = r.trace!.filter((e) => e.type === 'nat' && e.action === 'apply' && e.label === 'SYN-ACK');
    expect(back.map((e) => [e.namespace, e.type === 'nat' ? e.to : ''])).toEqual([['node/worker-1', '10.96.5.9:6379']]);
  });

  it('NS/svc/NAME targets the Service\'s ClusterIP and its only port', () => {
    const c = cluster();
    const snap = readSnapshot(SNAPSHOT);
    expect(snap.services[0]!.spec.clusterIP).toBe('10.96.0.80');
    const r = c.connect({ from: 'shop/client', to: 'shop/svc/web' });
    expect(r.outcome).toBe('local');
    expect(['10.244.1.5', '10.244.2.7']).toContain(r.address);
    expect(r.trace!.find((e) => e.type === 'packet')).toMatchObject({ dst: '10.96.0.80', dport: 80 });
  });

  it('a pod on the same node through a Service: bridged by cni0, FORWARD and POSTROUTING see both bridge ports', () => {
    const c = cluster();
    const r = c.connect({ from: 'shop/client', to: '10.96.0.81:80' });
    const client = c.topology.pods.find((p) => p.key === 'shop/client')!;
    const web1 = c.topology.pods.find((p) => p.key === 'shop/web-1')!;
    expect(r.outcome).toBe('local');
    expect(path(r)).toBe(`pod/shop/client(-→eth0) node/worker-1(${client.veth}→${web1.veth}) pod/shop/web-1(eth0→-)`);
    const bridged = r.trace!.find((e) => e.type === 'route' && e.namespace === 'node/worker-1' && e.label === 'SYN')!;
    expect(bridged).toMatchObject({ result: 'forward', dev: 'cni0', reason: `bridged from port ${client.veth} to port ${web1.veth}` });
  });

  it('hairpin: a pod through its own Service is dropped by the bridge, unless hairpin mode is on; then the source is masqueraded to cni0', () => {
    const off = cluster().connect({ from: 'shop/web-1', to: '10.96.0.81:80' });
    expect(off.outcome).toBe('dropped');
    expect(off.reason).toMatch(/^node\/worker-1: the bridge does not send a frame back out of the port it came in by \(veth[0-9a-f]{8}: hairpin mode off\)$/);
    const on = cluster({ hairpin: true }).connect({ from: 'shop/web-1', to: '10.96.0.81:80' });
    expect(on.outcome).toBe('local');
    expect(on.address).toBe('10.244.1.5');
    expect(on.source).toMatch(/^10\.244\.1\.1:\d+$/);
    expect(on.steps.some((s) => s.target === 'MASQUERADE' && s.namespace === 'node/worker-1')).toBe(true);
  });

  it('answers cross namespaces: a closed port resets from the pod; a Service without endpoints is REJECTed on the node', () => {
    const c = cluster();
    const closed = c.connect({ from: 'shop/client', to: 'db/redis-0', port: 81 });
    expect(closed).toMatchObject({ outcome: 'refused', errno: 'ECONNREFUSED', reason: 'no listener at 10.244.2.9:81 in pod/db/redis-0: connection reset' });
    expect(closed.trace!.filter((e) => e.type === 'packet' && e.label === 'RST').map((e) => e.namespace)).toEqual(['pod/db/redis-0', 'node/worker-2', 'node/worker-1', 'pod/shop/client']);
    const empty = c.connect({ from: 'shop/client', to: '10.96.0.99:80' });
    expect(empty.outcome).toBe('refused');
    expect(empty.errno).toBe('ECONNREFUSED');
    expect(empty.reason).toBe('rejected (icmp-port-unreachable) in node/worker-1: REJECT --reject-with icmp-port-unreachable');
    const icmp = empty.trace!.filter((e) => e.type === 'packet' && e.label === 'ICMP');
    expect(icmp.map((e) => e.namespace)).toEqual(['node/worker-1', 'pod/shop/client']);
  });

  it('UDP: a datagram to a port nothing listens on comes back as ICMP port unreachable', () => {
    const r = cluster().connect({ from: 'shop/client', to: 'shop/web-2', port: 80, proto: 'udp' });
    expect(r).toMatchObject({ outcome: 'refused', reason: 'no socket at 10.244.2.7:80 in pod/shop/web-2: ICMP port unreachable' });
  });

  it('outside the cluster: the node routes to the gateway, the world accepts; an unknown address in a pod CIDR is dropped at ARP', () => {
    const c = cluster();
    const out = c.connect({ from: 'shop/client', to: '203.0.113.7:443' });
    expect(out).toMatchObject({ outcome: 'remote', address: '203.0.113.7', port: 443, errno: null });
    expect(out.hops.map((h) => h.namespace)).toEqual(['pod/shop/client', 'node/worker-1', 'outside']);
    const nobody = c.connect({ from: 'shop/client', to: '10.244.2.200:80' });
    expect(nobody).toMatchObject({ outcome: 'dropped', errno: 'ETIMEDOUT', reason: "node/worker-2: no neighbour on cni0 answers ARP for 10.244.2.200" });
  });

  it('--cni ptp: no bridge, the node routes each pod\'s /32 to its veth; a pod through its own Service is routed back without hairpin', () => {
    const c = cluster({ cni: 'ptp' });
    const web1 = c.topology.pods.find((p) => p.key === 'shop/web-1')!;
    const r = c.connect({ from: 'shop/web-1', to: '10.96.0.81:80' });
    expect(r.outcome).toBe('local');
    expect(path(r)).toBe(`pod/shop/web-1(-→eth0) node/worker-1(${web1.veth}→${web1.veth})`);
    const far = c.connect({ from: 'shop/client', to: 'db/redis-0', port: 6379 });
    expect(far.outcome).toBe('local');
    expect(far.hops.map((h) => h.namespace)).toEqual(['pod/shop/client', 'node/worker-1', 'node/worker-2', 'pod/db/redis-0']);
    // The node's own pod CIDR is a blackhole: an address no pod holds is dropped there.
    expect(c.connect({ from: 'shop/client', to: '10.244.2.200:80' })).toMatchObject({ outcome: 'dropped', reason: 'node/worker-2: blackhole' });
  });

  it('the namespaces keep their conntrack tables and sockets across calls, as a cluster does', () => {
    const c = cluster();
    c.connect({ from: 'shop/client', to: 'db/redis-0', port: 6379 });
    c.connect({ from: 'shop/client', to: 'db/redis-0', port: 6379 });
    expect(c.namespace('node/worker-2')!.conntrack()).toHaveLength(2);
  });
});

describe('Cluster: rules inside pods (a mesh\'s, for instance)', () => {
  const outbound = '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m owner ! --uid-owner 1337 -j REDIRECT --to-ports 15001\nCOMMIT\n';
  const inbound = '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp -j REDIRECT --to-ports 15006\nCOMMIT\n';

  it('a pod\'s OUTPUT REDIRECT keeps the connection in the pod; SO_ORIGINAL_DST is where the app was going', () => {
    const c = cluster({ podRules: { 'shop/client': { rules: [outbound], listen: [{ port: 15001, proto: 'tcp', uid: 1337 }] } } });
    const r = c.connect({ from: 'shop/client', to: 'db/redis-0', port: 6379 });
    expect(r).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 15001, originalDestination: '10.244.2.9:6379' });
    expect(r.hops.map((h) => h.namespace)).toEqual(['pod/shop/client']);
    expect(r.steps.find((s) => s.target === 'REDIRECT')).toMatchObject({ namespace: 'pod/shop/client', hook: 'OUTPUT' });
  });

  it('a server pod\'s PREROUTING REDIRECT: the node forwards to the app\'s port, the pod sends it to its proxy\'s', () => {
    const c = cluster({ podRules: { 'db/redis-0': { rules: [inbound], listen: [{ port: 15006, proto: 'tcp' }] } } });
    const r = c.connect({ from: 'shop/web-2', to: '10.96.5.9:6379' });
    expect(r).toMatchObject({ outcome: 'local', address: '10.244.2.9', port: 15006, originalDestination: '10.244.2.9:6379' });
    expect(r.source).toMatch(/^10\.244\.2\.7:\d+$/);
  });

  it('rules for a pod that has no namespace of its own are an error', () => {
    expect(error(() => cluster({ podRules: { 'shop/nope': { rules: [inbound] } } })).message).toBe('pod rules for "shop/nope", which is not a pod with a namespace of its own in the cluster');
  });
});

describe('Cluster: the NetworkPolicy seam', () => {
  const built = { reference: COMPONENTS.netpol.reference, kubeProxy: COMPONENTS.kubeProxy };
  afterEach(() => {
    COMPONENTS.netpol.reference = built.reference;
    COMPONENTS.kubeProxy = built.kubeProxy;
  });

  it('this build has the reference evaluator and kube-proxy wired', () => {
    expect(typeof built.reference).toBe('function');
    expect(typeof built.kubeProxy).toBe('function');
  });

  it('netpol reference is a typed error in a build without the evaluator; none runs no policy', () => {
    delete COMPONENTS.netpol.reference;
    COMPONENTS.kubeProxy = null;
    const e = error(() => new Cluster({ snapshot: SNAPSHOT, kubeProxy: 'none', nodeRules }));
    expect(e.code).toBe('UNSUPPORTED');
    expect(e.message).toContain('NetworkPolicy enforcement "reference" is not available in this build');
    expect(error(() => new Cluster({ snapshot: SNAPSHOT, netpol: 'none' })).message).toContain('kube-proxy (iptables mode) is not compiled in this build');
  });

  it('an enforcer\'s verdict at the veth drops the connection and is named in the result, the hop and the reason', () => {
    const seen: PolicyCheck[] = [];
    COMPONENTS.netpol.reference = () => ({
      decide: (check) => {
        seen.push(check);
        return check.direction === 'ingress' && check.pod.metadata.name === 'redis-0' ? { namespace: 'db', name: 'deny-all', direction: 'ingress', rule: null } : null;
      },
    });
    const c = new Cluster({ snapshot: SNAPSHOT, kubeProxy: 'none', netpol: 'reference', nodeRules });
    const r = c.connect({ from: 'shop/client', to: '10.96.5.9:6379' });
    expect(r.outcome).toBe('dropped');
    expect(r.policy).toEqual({ namespace: 'db', name: 'deny-all', direction: 'ingress', rule: null });
    expect(r.reason).toBe('node/worker-2: dropped by NetworkPolicy db/deny-all (ingress, isolated, and no rule allows it)');
    // Egress was judged on the client's node with the destination kube-proxy chose; ingress on the
    // destination's node; both on the SYN only.
    expect(seen.map((s) => [s.direction, s.pod.metadata.name, s.node, s.dst, s.dport])).toEqual([
      ['egress', 'client', 'worker-1', '10.244.2.9', 6379],
      ['ingress', 'redis-0', 'worker-2', '10.244.2.9', 6379],
    ]);
    expect(renderClusterOutcome(r)).toContain('NetworkPolicy db/deny-all (ingress, nothing allows)');
    const ok = c.connect({ from: 'shop/client', to: 'shop/web-2', port: 80 });
    expect(ok.outcome).toBe('local');
  });
});

describe('Cluster.reach', () => {
  it('the matrix over the pods for a port, to each pod\'s address, with why each blocked cell is blocked', () => {
    const r = cluster().reach({ port: 80 });
    expect(r.pods).toEqual(['db/redis-0', 'shop/client', 'shop/web-1', 'shop/web-2']);
    expect(r.allowed).toEqual([
      [false, false, true, true],
      [false, false, true, true],
      [false, false, true, true],
      [false, false, true, true],
    ]);
    expect(r.why['shop/client→db/redis-0']).toMatchObject({ policy: null, outcome: 'refused' });
    expect(renderReach(r).split('\n').slice(0, 3)).toEqual(['-\tdb/redis-0\tshop/client\tshop/web-1\tshop/web-2', 'db/redis-0\tX\tX\t.\t.', 'shop/client\tX\tX\t.\t.']);
  });

  it('--to service goes through a Service that selects the pod; a pod no Service selects is blocked, saying so', () => {
    const r = cluster().reach({ port: 80, to: 'service', namespaces: ['shop'] });
    expect(r.pods).toEqual(['shop/client', 'shop/web-1', 'shop/web-2']);
    expect(r.allowed[0]).toEqual([false, true, true]);
    expect(r.why['shop/client→shop/client']!.reason).toBe('no Service selects pod/shop/client with a port to 80/TCP');
  });
});

describe('Cluster: renderers', () => {
  it('every trace format names the namespaces; the tree and text show each namespace above its steps', () => {
    const r = cluster().connect({ from: 'shop/client', to: '10.96.5.9:6379' });
    const tree = renderClusterTrace(r.trace!, 'tree');
    expect(tree).toMatch(/^── pod\/shop\/client \(made here → eth0\)\n {2}SYN 10\.244\.1\.6:\d+ → 10\.96\.5\.9:6379/);
    expect(tree).toContain('── node/worker-2 (eth0 → cni0)');
    expect(renderClusterTrace(r.trace!, 'text')).toContain('TRACE: nat:KUBE-SEP-OWJ2ZXMLBAMLX6AY:rule:2 SYN PREROUTING -j DNAT');
    const json = JSON.parse(renderClusterTrace(r.trace!, 'json')) as { namespace: string }[];
    expect(new Set(json.map((e) => e.namespace))).toEqual(new Set(['pod/shop/client', 'node/worker-1', 'node/worker-2', 'pod/db/redis-0']));
    expect(renderClusterTrace(r.trace!, 'mermaid')).toContain('subgraph s1["node/worker-1"]');
    expect(renderClusterTrace(r.trace!, 'dot')).toContain('label="node/worker-2";');
  });
});

describe('Cluster: errors', () => {
  it('a pod not on the path, a bad target, SCTP, rules for a node that is not there: typed errors that say why', () => {
    const c = cluster();
    expect(error(() => c.connect({ from: 'shop/nope', to: 'shop/web-1', port: 80 })).message).toBe('--from: no pod shop/nope in the snapshot (pods: shop/web-1, shop/client, shop/web-2, db/redis-0)');
    expect(c.connect({ from: 'shop/client', to: 'shop/web-1' }).port).toBe(80);
    expect(error(() => c.connect({ from: 'shop/client', to: 'shop/client' })).message).toBe('--to shop/client: give --port (the pod declares no TCP port)');
    expect(error(() => c.connect({ from: 'shop/client', to: 'shop/svc/nope' })).message).toBe('--to shop/svc/nope: no Service shop/nope in the snapshot');
    expect(error(() => c.connect({ from: 'shop/client', to: 'not a target' })).code).toBe('BAD_PROBE');
    expect(error(() => c.connect({ from: 'shop/client', to: 'shop/web-1', port: 80, proto: 'sctp' })).code).toBe('UNSUPPORTED');
    expect(error(() => cluster({ nodeRules: { 'worker-9': '' } })).message).toBe('node rules for "worker-9", which is not a node of the cluster (nodes: worker-1, worker-2)');
    const left = SNAPSHOT.replace('    podIP: 10.244.2.9\n    podIPs:\n    - ip: 10.244.2.9\n', '');
    const e = error(() => new Cluster({ snapshot: left, kubeProxy: 'none', netpol: 'none' }).connect({ from: 'shop/client', to: 'db/redis-0', port: 6379 }));
    expect(e.message).toBe('--to db/redis-0 is not on the cluster path: no status.podIPs (phase Running): left out of the cluster');
  });

  it('a snapshot object is read again, so a hand-made one meets the same checks', () => {
    const snap = readSnapshot(SNAPSHOT);
    const broken = { ...snap, pods: [{ ...snap.pods[0]!, status: { podIPs: [{ ip: 'nope' }] } }] };
    expect(error(() => new Cluster({ snapshot: broken, kubeProxy: 'none', netpol: 'none' })).message).toContain('Pod shop/web-1: status.podIPs[0].ip: "nope" is not an IP address');
    expect(error(() => new Cluster({ snapshot: {} as never })).code).toBe('BAD_ARGUMENT');
  });
});
