/**
 * The mesh scenario on the cluster path (`mesh --cluster`): the two pods on their nodes, the
 * node hops, kube-proxy for a Service no proxy resolved, a socket load balancer, and the mesh ×
 * NetworkPolicy incidents (linkerd/linkerd2#12382 and #15246, Istio sidecar and ambient), each
 * with the port and source the node's enforcer saw.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { simulateMeshOnCluster, type MeshClusterOptions, type MeshClusterResult } from '../../../src/mesh/cluster.js';
import { linkerdTransport } from '../../../src/mesh/simulate.js';
import { renderMesh } from '../../../src/mesh/render.js';
import { runMesh } from '../../../src/cli/commands/mesh.js';
import { memoryIO } from '../../../src/cli/io.js';
import { thrown as error } from '../../thrown.js';

const path = (name: string): string => fileURLToPath(new URL(`../../fixtures/mesh-cluster/${name}`, import.meta.url));
const text = (name: string): string => readFileSync(path(name), 'utf8');
const snapshot = (...files: string[]): { name: string; text: string }[] => ['nodes.yaml', ...files].map((f) => ({ name: f, text: text(f) }));

function run(o: Partial<MeshClusterOptions> & Pick<MeshClusterOptions, 'snapshot'>): MeshClusterResult {
  return simulateMeshOnCluster({ mesh: 'linkerd', client: 'shop/web', server: 'shop/redis', ...o });
}

const LINKERD_6379 = snapshot('linkerd-redis.yaml', 'redis-allow-6379.yaml');
const LINKERD_4143 = snapshot('linkerd-redis.yaml', 'redis-allow-4143.yaml');

const ALLOW_PROBES = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-probes, namespace: shop}
spec:
  podSelector: {matchLabels: {app: api}}
  policyTypes: [Ingress]
  ingress:
  - from: [{ipBlock: {cidr: 169.254.7.127/32}}]
    ports: [{port: 8080, protocol: TCP}]
`;
const ALLOW_HBONE = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-hbone, namespace: shop}
spec:
  podSelector: {matchLabels: {app: api}}
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {app: web}}}]
    ports: [{port: 15008, protocol: TCP}]
`;

describe('mesh on the cluster path: Linkerd', () => {
  it('an opaque port against a port-scoped policy: dropped at the server veth on 4143, the policy named with why', () => {
    const r = run({ snapshot: LINKERD_6379, dst: 'shop/svc/redis' });
    expect(r.verdict).toBe('dropped');
    expect(r.cause).toBe('network-policy');
    expect(r.nodes).toEqual({ client: 'worker-1', server: 'worker-2' });
    expect(r.policy).toEqual({
      namespace: 'shop', name: 'redis', direction: 'ingress', rule: null, pod: 'shop/redis', node: 'worker-2',
      src: '10.244.1.5', dst: '10.244.2.8', port: 4143, protocol: 'TCP', appPort: 6379, why: 'opaque',
    });
    // The hops: the client's two legs, then the two nodes; the second node's hop carries the policy.
    expect(r.hops.map((h) => h.pod)).toEqual(['web', 'web', 'node/worker-1', 'node/worker-2']);
    const last = r.hops[3]!;
    expect(last.outcome).toBe('dropped');
    expect(last.policy?.name).toBe('redis');
    expect(last.to).toBe('10.244.2.8:4143');
    expect(r.hops[2]!.steps.length).toBeGreaterThan(0);
    expect(r.diagnosis[0]).toMatch(/^dropped by NetworkPolicy shop\/redis \(ingress to shop\/redis on node worker-2\): the connection arrives on 4143, the proxy's inbound port, because 6379 is opaque/);
    expect(r.diagnosis[0]).toContain('Allow 4143/TCP from 10.244.1.5');
    // The client proxy saw the Service address: it resolved it, so the node translated nothing.
    expect(r.hops[0]!.receiver).toContain('SO_ORIGINAL_DST 10.96.0.20:6379');
    expect(r.hops[2]!.why).not.toContain('DNAT');
    expect(renderMesh(r, 'text', { color: false })).toContain('verdict: dropped (by NetworkPolicy shop/redis, ingress to shop/redis on node worker-2)');
    const json = JSON.parse(renderMesh(r, 'json')) as { cause: string; policy: { port: number }; hops: { pod: string; policy?: { name: string } }[] };
    expect(json.cause).toBe('network-policy');
    expect(json.policy.port).toBe(4143);
    expect(json.hops.find((h) => h.policy !== undefined)?.pod).toBe('node/worker-2');
  });

  it('the same connection without an enforcer is meshed: the policy is the cause', () => {
    const r = run({ snapshot: LINKERD_6379, dst: 'shop/svc/redis', netpol: 'none' });
    expect(r.verdict).toBe('meshed');
    expect(r.cause).toBeUndefined();
    expect(r.policy).toBeUndefined();
  });

  it('before 2.10 there is no opaque transport: the node sees 6379, which the policy allows', () => {
    const r = run({ snapshot: LINKERD_6379, dst: 'shop/svc/redis', linkerdVersion: '2.9' });
    expect(r.verdict).toBe('meshed');
    expect(r.hops.find((h) => h.pod === 'node/worker-2')!.to).toBe('10.244.2.8:6379');
  });

  it('the converse: with 4143 allowed, the opaque port goes through and the port rules no longer restrict meshed clients (2.18+)', () => {
    const opaque = run({ snapshot: LINKERD_4143, dst: 'shop/svc/redis' });
    expect(opaque.verdict).toBe('meshed');
    // 9121 (the exporter) is not in the policy: before 2.18 the proxy connects to 9121 itself and the policy drops it…
    const before = run({ snapshot: LINKERD_4143, dst: '10.244.2.8:9121', linkerdVersion: '2.17' });
    expect(before.verdict).toBe('dropped');
    expect(before.policy).toMatchObject({ port: 9121, appPort: null, why: null });
    // …from 2.18 every meshed connection travels to 4143, which the policy allows: 9121 is reached.
    const after = run({ snapshot: LINKERD_4143, dst: '10.244.2.8:9121', linkerdVersion: '2.19' });
    expect(after.verdict).toBe('meshed');
    expect(after.hops.find((h) => h.pod === 'node/worker-2')!.to).toBe('10.244.2.8:4143');
    expect(after.hops[after.hops.length - 1]!.receiver).toBe('exporter (uid 59000)');
    expect(after.diagnosis.join('\n')).toContain('shop/redis would drop 9121/TCP from 10.244.1.5 (ingress to shop/redis on node worker-2), but the connection arrived on the proxy\'s inbound port 4143');
    // And with only 6379 allowed, 2.19's transport header is dropped on 4143, said so.
    const dropped = run({ snapshot: LINKERD_6379, dst: '10.244.2.8:9121', linkerdVersion: 'edge-25.2.3' });
    expect(dropped.policy).toMatchObject({ port: 4143, appPort: 9121, why: 'forced' });
    expect(dropped.diagnosis[0]).toContain('because Linkerd 2.18 and later send every meshed pod-to-pod connection there');
  });

  it('an egress policy of the client that admits 6379 only: the proxy leaves for 4143, dropped on the client\'s node', () => {
    const egress = `
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-egress, namespace: shop}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Egress]
  egress:
  - to: [{podSelector: {matchLabels: {app: redis}}}]
    ports: [{port: 6379, protocol: TCP}]
`;
    const r = run({ snapshot: [...LINKERD_4143, { name: 'egress', text: egress }], dst: 'shop/svc/redis' });
    expect(r.policy).toMatchObject({ name: 'web-egress', direction: 'egress', pod: 'shop/web', node: 'worker-1', port: 4143, appPort: 6379, why: 'opaque' });
    expect(r.hops.map((h) => h.pod)).toEqual(['web', 'web', 'node/worker-1']);
    expect(r.diagnosis[0]).toContain('(egress from shop/web on node worker-1): the connection leaves for 4143');
    expect(r.diagnosis[0]).toContain('Allow 4143/TCP to 10.244.2.8 in the policy\'s egress rules');
  });

  it('the node hops are actors of their own in diagrams', () => {
    const r = run({ snapshot: LINKERD_6379, dst: 'shop/svc/redis' });
    const mermaid = renderMesh(r, 'mermaid');
    expect(mermaid).toContain('as worker-1 @ node');
    expect(mermaid).toContain('as worker-2 @ node');
    expect(renderMesh(r, 'dot')).toContain('worker-2');
  });

  it('the release decides the transport', () => {
    expect(['2.9', '2.10', '2.17', '2.18', '2.19', 'stable-2.14.10', 'edge-25.2.2', 'edge-25.2.3', 'edge-26.1.1'].map((v) => linkerdTransport(v)))
      .toEqual(['none', 'opaque', 'opaque', 'forced', 'forced', 'opaque', 'opaque', 'forced', 'forced']);
    expect(linkerdTransport(undefined)).toBe('opaque');
    expect(error(() => linkerdTransport('latest')).code).toBe('BAD_CONFIG');
    expect(error(() => linkerdTransport('3.0')).message).toContain('2.x');
  });

  it('an unmeshed client to the Service: the node\'s kube-proxy translates it; the server proxy reads the endpoint', () => {
    const r = run({ snapshot: LINKERD_6379, client: 'shop/batch', dst: 'shop/svc/redis' });
    expect(r.verdict).toBe('client-bypass');
    const node1 = r.hops.find((h) => h.pod === 'node/worker-1')!;
    expect(node1.why).toContain('DNAT 10.96.0.20:6379 → 10.244.2.8:6379 (kube-proxy)');
    const inbound = r.hops.find((h) => h.pod === 'redis')!;
    expect(inbound.originalDestination).toBe('10.244.2.8:6379');
    expect(inbound.to).toBe('10.244.2.8:4143');
    // kube-proxy off: nothing translates the ClusterIP and the connection leaves the cluster.
    const none = run({ snapshot: LINKERD_6379, client: 'shop/batch', dst: 'shop/svc/redis', kubeProxy: 'none' });
    expect(none.hops.some((h) => h.pod === 'redis')).toBe(false);
    expect(none.hops.find((h) => h.pod === 'node/worker-1')!.why).not.toContain('DNAT');
  });

  it('a socket load balancer translates the Service before the pod\'s rules: SO_ORIGINAL_DST is the endpoint', () => {
    const r = run({ snapshot: LINKERD_4143, dst: 'shop/svc/redis', serviceLb: 'socket' });
    expect(r.verdict).toBe('meshed');
    expect(r.hops[0]!.receiver).toContain('SO_ORIGINAL_DST 10.244.2.8:6379');
    expect(r.hops[0]!.why).toContain('the socket load balancer translates Service 10.96.0.20:6379 to 10.244.2.8:6379 at connect()');
    const kp = run({ snapshot: LINKERD_4143, dst: 'shop/svc/redis' });
    expect(kp.hops[0]!.receiver).toContain('SO_ORIGINAL_DST 10.96.0.20:6379');
  });
});

describe('mesh on the cluster path: Istio', () => {
  const SIDECAR = snapshot('istio-sidecar.yaml');
  const AMBIENT = snapshot('istio-ambient.yaml');

  it('sidecar: the node sees the application port, the pod redirects to 15006 after', () => {
    const r = run({ mesh: 'istio', snapshot: SIDECAR, server: 'shop/api' });
    expect(r.verdict).toBe('meshed');
    expect(r.hops.find((h) => h.pod === 'node/worker-2')!.to).toBe('10.244.2.8:8080');
    const inbound = r.hops.find((h) => h.pod === 'api')!;
    expect(inbound.to).toBe('10.244.2.8:15006');
    expect(inbound.originalDestination).toBe('10.244.2.8:8080');
    const blocked = run({ mesh: 'istio', snapshot: SIDECAR, server: 'shop/api', dst: '10.244.2.8:9090' });
    expect(blocked.verdict).toBe('dropped');
    expect(blocked.policy).toMatchObject({ name: 'api', port: 9090, appPort: null, why: null });
    expect(blocked.diagnosis[0]).toContain("The node sees the application's port 9090: the sidecar's rules redirect it to Envoy's 15006 only inside the pod");
  });

  it('ambient: HBONE arrives on 15008, which a policy on 8080 drops; allowing 15008 meshes it', () => {
    const r = run({ mesh: 'istio', snapshot: AMBIENT, server: 'shop/api' });
    expect(r.verdict).toBe('dropped');
    expect(r.policy).toMatchObject({ name: 'api', port: 15008, appPort: 8080, why: 'hbone', node: 'worker-2' });
    expect(r.diagnosis[0]).toContain("the connection arrives on 15008, ztunnel's HBONE port");
    const ok = run({ mesh: 'istio', snapshot: [...AMBIENT, { name: 'hbone', text: ALLOW_HBONE }], server: 'shop/api' });
    expect(ok.verdict).toBe('meshed');
    expect(ok.hops.find((h) => h.pod === 'api')!.to).toBe('10.244.2.8:15008');
  });

  it('ambient: the kubelet probe arrives from 169.254.7.127, and the policy must allow it', () => {
    const r = run({ mesh: 'istio', snapshot: AMBIENT, server: 'shop/api', kubelet: true });
    expect(r.verdict).toBe('dropped');
    expect(r.policy).toMatchObject({ src: '169.254.7.127', port: 8080, why: 'probe-snat', pod: 'shop/api', node: 'worker-2' });
    expect(r.diagnosis[0]).toContain('Allow ingress from ipBlock 169.254.7.127/32 to port 8080/TCP');
    const allowed = run({ mesh: 'istio', snapshot: [...AMBIENT, { name: 'probes', text: ALLOW_PROBES }], server: 'shop/api', kubelet: true });
    expect(allowed.policy).toBeUndefined();
    expect(allowed.hops.find((h) => h.pod === 'node/worker-2')!.why).toContain('admits it from 169.254.7.127');
    expect(allowed.hops[allowed.hops.length - 1]!.receiver).toContain('api');
    // Without istio-cni's host rule the probe keeps the node's address (cni0's): the pod's own node is always admitted.
    const plain = run({ mesh: 'istio', snapshot: AMBIENT, server: 'shop/api', kubelet: true, hostRules: false });
    expect(plain.policy).toBeUndefined();
    expect(plain.hops.find((h) => h.pod === 'node/worker-2')!.why).toContain("from 10.244.2.1, the pod's own node");
  });
});

describe('mesh on the cluster path: bad input', () => {
  it('names a missing pod, a missing Service and a bad release', () => {
    expect(error(() => run({ snapshot: LINKERD_6379, server: 'shop/nope' })).message).toMatch(/^--server: no pod shop\/nope in the snapshot \(pods: shop\/web, shop\/redis, shop\/batch\)/);
    expect(error(() => run({ snapshot: LINKERD_6379, client: 'web' })).message).toBe('--client web: write NS/POD');
    expect(error(() => run({ snapshot: LINKERD_6379, dst: 'shop/svc/nope' })).message).toBe('--dst shop/svc/nope: no Service shop/nope in the snapshot');
    expect(error(() => run({ snapshot: LINKERD_6379, dst: 'shop/svc/redis:80' })).message).toBe('--dst shop/svc/redis:80: the Service has no TCP port 80');
    expect(error(() => run({ snapshot: LINKERD_6379, linkerdVersion: 'two' })).code).toBe('BAD_CONFIG');
  });

  it('a pod the path leaves out, or on the host network, is named with why', () => {
    const yaml = text('linkerd-redis.yaml');
    const unscheduled = yaml.replace('  nodeName: worker-1\n  containers:\n  - name: web', '  containers:\n  - name: web');
    expect(unscheduled).not.toBe(yaml);
    const e1 = error(() => run({ snapshot: [{ name: 'nodes', text: text('nodes.yaml') }, { name: 'pods', text: unscheduled }] }));
    expect([e1.code, e1.message.startsWith('--client shop/web is not on the cluster path: ')]).toEqual(['BAD_PROBE', true]);
    const host = yaml.replace('  nodeName: worker-1\n  containers:\n  - name: web', '  nodeName: worker-1\n  hostNetwork: true\n  containers:\n  - name: web');
    const e2 = error(() => run({ snapshot: [{ name: 'nodes', text: text('nodes.yaml') }, { name: 'pods', text: host }] }));
    expect(e2.message).toBe('--client shop/web runs on the host network: it has no namespace of its own to hold a mesh\'s rules (meshes do not inject host-network pods)');
    const elsewhere = yaml.replace('  nodeName: worker-2', '  nodeName: worker-9');
    const e3 = error(() => run({ snapshot: [{ name: 'nodes', text: text('nodes.yaml') }, { name: 'pods', text: elsewhere }] }));
    expect(e3.message).toMatch(/^--server shop\/redis is not on the cluster path/);
  });
});

describe('netfilter-sim mesh --cluster', () => {
  async function mesh(args: string[]): Promise<{ code: number; out: string; err: string }> {
    const files: Record<string, string> = {};
    for (const f of ['nodes.yaml', 'linkerd-redis.yaml', 'redis-allow-6379.yaml']) files[f] = text(f);
    const io = memoryIO(files);
    const code = await runMesh(args, io);
    return { code, out: io.out, err: io.err };
  }
  const cluster = ['--cluster', 'nodes.yaml', '--cluster', 'linkerd-redis.yaml', '--cluster', 'redis-allow-6379.yaml'];

  it('runs the scenario on the snapshot; exit 0 whatever the verdict', async () => {
    const r = await mesh(['linkerd', ...cluster, '--client', 'shop/web', '--server', 'shop/redis', '--dst', 'shop/svc/redis', '--json']);
    expect(r.code).toBe(0);
    const o = JSON.parse(r.out) as { verdict: string; cause: string; policy: { port: number; why: string } };
    expect([o.verdict, o.cause, o.policy.port, o.policy.why]).toEqual(['dropped', 'network-policy', 4143, 'opaque']);
    const v = await mesh(['linkerd', ...cluster, '--client', 'shop/web', '--server', 'shop/redis', '--dst', '10.244.2.8:9121', '--linkerd-version', '2.19']);
    expect(v.out).toContain('the connection arrives on 4143, the proxy\'s inbound port, not 9121');
    const none = await mesh(['linkerd', ...cluster, '--client', 'shop/web', '--server', 'shop/redis', '--netpol', 'none', '--kube-proxy', 'nftables']);
    expect(none.out).toContain('verdict: meshed');
  });

  it('usage errors: cluster flags without --cluster, manifests flags with it, bad choices', async () => {
    expect((await mesh(['linkerd', '--kube-proxy', 'iptables'])).err).toContain('--kube-proxy is for a mesh on a cluster (--cluster PATH)');
    const svc = await mesh(['linkerd', ...cluster, '--client', 'shop/web', '--server', 'shop/redis', '--service', '10.96.0.1:80=10.0.0.1:80']);
    expect(svc.code).toBe(2);
    expect(svc.err).toContain('--service does not go with --cluster (the Services come from the snapshot)');
    expect((await mesh(['linkerd', ...cluster, '--client', 'shop/web'])).err).toContain('--cluster needs --client NS/POD and --server NS/POD');
    const bad = await mesh(['linkerd', ...cluster, '--client', 'shop/web', '--server', 'shop/redis', '--service-lb', 'ebpf']);
    expect([bad.code, bad.err.includes('--service-lb is kube-proxy, socket, not "ebpf"')]).toEqual([2, true]);
    expect((await mesh(['istio', '--linkerd-version', '2.19'])).code).toBe(2);
    const missing = await mesh(['linkerd', ...cluster, '--client', 'shop/web', '--server', 'db/redis']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no pod db/redis in the snapshot');
  });
});
