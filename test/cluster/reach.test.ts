// `Cluster.reach` by classes of pods and over every port, on generated snapshots (the netpol
// generators' clusters with Services added): the class answer is the pair-by-pair answer, cell
// for cell (allowed, and why: policy, direction, rule, outcome and reason); every port of a range
// of `allPorts` gives the range's answer when asked alone; `to: 'service'` goes to each endpoint
// of the Service in turn, the same on every run.
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/cluster.js';
import type { ReachResult } from '../../src/cluster/cluster.js';
import { networkPolicySnapshot, PROBE_PORTS } from '../../src/arbitraries/netpol.js';
import type { K8sEndpointSlice, K8sService, Snapshot } from '../../src/model/kubernetes.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { thrown } from '../thrown.js';
import { COMPONENTS } from '../../src/cluster/components.js';

/** Every NetworkPolicy enforcer this build has, and none. */
const ENFORCERS = [...Object.keys(COMPONENTS.netpol), 'none'] as ('reference' | 'none')[];
import { pod, policy, snapshot as podsSnapshot } from '../netpol/helpers.js';

/** The pods' snapshot with the nodes they name (node-N: 10.244.N.0/24, 192.168.0.(10+N)). */
function snapshot(...args: Parameters<typeof podsSnapshot>): Snapshot {
  const s = podsSnapshot(...args);
  const nodes = [...new Set(s.pods.map((p) => p.spec.nodeName!))].sort().map((name) => {
    const n = Number(/(\d+)$/.exec(name)![1]);
    return { kind: 'Node' as const, metadata: { name }, spec: { podCIDR: `10.244.${n}.0/24` }, status: { addresses: [{ type: 'InternalIP' as const, address: `192.168.0.${10 + n}` }] } };
  });
  return { ...s, nodes };
}

/**
 * The snapshot with a Service per app of each namespace (port 80 → 80 and 81 → 8080, TCP; 53 →
 * 53 UDP) and its EndpointSlice listing every selected pod, so that kube-proxy has rules to hold
 * and choices to make.
 */
function withServices(s: Snapshot): Snapshot {
  const services: K8sService[] = [];
  const slices: K8sEndpointSlice[] = [];
  const namespaces = [...new Set(s.pods.map((p) => p.metadata.namespace!))].sort();
  namespaces.forEach((ns, n) => {
    const apps = [...new Set(s.pods.filter((p) => p.metadata.namespace === ns).map((p) => p.metadata.labels?.['app']).filter((a): a is string => a !== undefined))].sort();
    apps.forEach((app, a) => {
      const name = `svc-${app}`;
      services.push({
        kind: 'Service',
        metadata: { name, namespace: ns },
        spec: {
          selector: { app },
          clusterIP: `10.96.${n}.${a + 10}`,
          clusterIPs: [`10.96.${n}.${a + 10}`],
          ports: [{ name: 'web', port: 80, targetPort: 80, protocol: 'TCP' }, { name: 'alt', port: 81, targetPort: 8080, protocol: 'TCP' }, { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' }],
        },
      } as K8sService);
      const members = s.pods.filter((p) => p.metadata.namespace === ns && p.metadata.labels?.['app'] === app);
      slices.push({
        kind: 'EndpointSlice',
        metadata: { name: `${name}-1`, namespace: ns, labels: { 'kubernetes.io/service-name': name } },
        addressType: 'IPv4',
        ports: [{ name: 'web', port: 80, protocol: 'TCP' }, { name: 'alt', port: 8080, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }],
        endpoints: members.map((p) => ({ addresses: [p.status!.podIP!], conditions: { ready: true }, nodeName: p.spec.nodeName! })),
      } as K8sEndpointSlice);
    });
  });
  return { ...s, services, endpointSlices: slices };
}

/**
 * Replicas of the generated pods, as a Deployment makes them: the same labels, ports and node,
 * another name and address (so an ipBlock around the original may leave them out).
 */
function withReplicas(s: Snapshot, counts: readonly number[]): Snapshot {
  const extra = s.pods.flatMap((p, i) => Array.from({ length: counts[i % counts.length]! }, (_, k) => {
    const node = Number(/(\d+)$/.exec(p.spec.nodeName!)![1]);
    const ip = `10.244.${node}.${100 + i * 4 + k}`;
    return { ...p, metadata: { ...p.metadata, name: `${p.metadata.name}-r${k}` }, status: { ...p.status, podIP: ip, podIPs: [{ ip }] } };
  }));
  return { ...s, pods: [...s.pods, ...extra] };
}

const snapshots = fc
  .tuple(networkPolicySnapshot({ nodes: 2, minPods: 2, maxPods: 4, maxPolicies: 3 }), fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 4 }))
  .map(([s, counts]) => withServices(withReplicas(s, counts)));

function build(s: Snapshot, netpol: (typeof ENFORCERS)[number] = 'reference', kubeProxy: 'iptables' | 'nftables' = 'iptables'): Cluster {
  return new Cluster({ snapshot: s, netpol, kubeProxy });
}

/** The matrix and every cell's why, as plain data (the why is computed on reading). */
function plain(r: ReachResult): unknown {
  return { pods: r.pods, allowed: r.allowed, why: { ...r.why } };
}

describe('Cluster.reach: classes of pods', () => {
  it('the class answer is the pair-by-pair answer, cell for cell, on generated snapshots', () => {
    let merged = 0;
    let runs = 0;
    fc.assert(
      fc.property(snapshots, fc.constantFrom(...PROBE_PORTS), fc.constantFrom('tcp' as const, 'udp' as const), fc.constantFrom('pod' as const, 'service' as const), fc.constantFrom(...ENFORCERS), (s, port, proto, to, netpol) => {
        const byClass = build(s, netpol).reach({ port, proto, to });
        const byPair = build(s, netpol).reach({ port, proto, to, classes: false });
        expect(plain(byClass)).toEqual(plain(byPair));
        expect(byPair.classes).toHaveLength(byPair.pods.length);
        expect(byClass.classes.flat().sort((a, b) => a - b)).toEqual(byClass.pods.map((_, i) => i));
        runs++;
        if (byClass.classes.length < byClass.pods.length) {
          merged++;
          if (to === 'pod') expect(byClass.probes).toBeLessThan(byPair.probes);
          else expect(byClass.probes).toBeLessThanOrEqual(byPair.probes);
        }
      }),
      { numRuns: 60, seed: 29 },
    );
    // The property says something only if classes of several pods happened.
    expect(merged).toBeGreaterThan(runs / 4);
  });

  it('pods alike in all but an ipBlock\'s answer, the node or the labels are classes apart', () => {
    const a = pod('x/a', 0, { labels: { app: 'a' }, ports: [80] });
    const b = pod('x/b', 1, { labels: { app: 'a' }, ports: [80] });
    const c = pod('x/c', 2, { labels: { app: 'a' }, ports: [80] });
    const d = pod('x/d', 3, { labels: { app: 'b' }, ports: [80] });
    const e = pod('x/e', 4, { labels: { app: 'a' }, ports: [80], node: 'node-2' });
    const s = snapshot([a, b, c, d, e], [{
      kind: 'NetworkPolicy', metadata: { name: 'only-c', namespace: 'x' },
      spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: `${c.status!.podIP!}/32` } }] }] },
    }]);
    const r = build(s).reach({ port: 80 });
    expect(r.classes.map((k) => k.map((i) => r.pods[i]))).toEqual([['x/a', 'x/b'], ['x/c'], ['x/d'], ['x/e']]);
    // Only x/c (the ipBlock) gets in anywhere but to itself.
    expect(r.allowed.map((row) => row.map((x) => (x ? '.' : 'X')).join(''))).toEqual(['.XXXX', 'X.XXX', '.....', 'XXX.X', 'XXXX.']);
    expect(r.why['x/b→x/a']).toMatchObject({ policy: 'x/only-c', direction: 'ingress', rule: null, outcome: 'dropped' });
    expect(plain(r)).toEqual(plain(build(s).reach({ port: 80, classes: false })));
  });

  it('rules given for a node may name any pod: every pod is then its own class', () => {
    const s = snapshot(['x/a', 'x/b', 'x/c']);
    const rules = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A FORWARD -d 10.244.1.3/32 -j DROP\nCOMMIT\n';
    const r = new Cluster({ snapshot: s, netpol: 'none', kubeProxy: 'none', nodeRules: { 'node-1': rules } }).reach({ port: 80 });
    expect(r.classes).toHaveLength(3);
    // The rule drops what goes to x/b: the SYNs to it and the answers to its own SYNs.
    expect(r.allowed.map((row) => row.map((x) => (x ? '.' : 'X')).join(''))).toEqual(['.X.', 'X.X', '.X.']);
  });

  it('bad options are typed errors', () => {
    const c = build(snapshot(['x/a']));
    for (const o of [{}, { port: 0 }, { port: 80, allPorts: true }, { port: 80, proto: 'sctp' }, { port: 80, classes: 'yes' }]) {
      expect(() => c.reach(o as never)).toThrow(NetfilterSimError);
    }
  });
});

describe('Cluster.reach: kube-router, where the order of the pods\' chains decides which one rejects', () => {
  // x/a and x/a2 are alike (one class); x/b comes between them in the node's rules. Every pod is
  // isolated both ways by separate policies, so a connection between two of them is refused by
  // whichever of the two pods' chains the node reaches first: the source's (egress) when the
  // source comes first, the destination's (ingress) otherwise.
  const s = snapshot([
    pod('x/a', 0, { labels: { app: 'a' } }),
    pod('x/b', 1, { labels: { app: 'b' } }),
    pod('x/a2', 2, { labels: { app: 'a' } }),
  ], [policy('x', 'no-ingress', {}, { policyTypes: ['Ingress'] }), policy('x', 'no-egress', {}, { policyTypes: ['Egress'] })]);
  for (const netpol of ['kube-router', 'kube-router-nftables'] as const) {
    it(`${netpol}: each cell names the policy of the pod whose chain rejected it, as the traced connection does`, () => {
      const c = new Cluster({ snapshot: s, netpol, kubeProxy: 'none' });
      const r = c.reach({ port: 80 });
      expect(r.classes.some((k) => k.length === 2)).toBe(true);
      const expected: Record<string, string> = { 'x/a→x/b': 'egress', 'x/a2→x/b': 'ingress', 'x/b→x/a': 'ingress', 'x/b→x/a2': 'egress', 'x/a→x/a2': 'egress', 'x/a2→x/a': 'ingress' };
      for (const [cell, direction] of Object.entries(expected)) {
        expect(r.why[cell], cell).toMatchObject({ policy: direction === 'egress' ? 'x/no-egress' : 'x/no-ingress', direction, outcome: 'refused' });
        const [from, to] = cell.split('→') as [string, string];
        const ip = s.pods.find((p) => `${p.metadata.namespace}/${p.metadata.name}` === to)!.status!.podIP!;
        const traced = new Cluster({ snapshot: s, netpol, kubeProxy: 'none' }).connect({ from, to: `${ip}:80` });
        expect(traced.policy, cell).toMatchObject({ name: direction === 'egress' ? 'no-egress' : 'no-ingress', direction });
      }
    });
  }
});

describe('Cluster.reach: every port', () => {
  it('each range covers the ports in order, and any port of it asked alone gives the range\'s answer', () => {
    fc.assert(
      fc.property(snapshots, fc.constantFrom('tcp' as const, 'udp' as const), fc.constantFrom('pod' as const, 'service' as const), fc.integer({ min: 0, max: 1_000_000 }), (s, proto, to, pick) => {
        const all = build(s).reach({ allPorts: true, proto, to });
        expect(all.ranges[0]!.first).toBe(1);
        expect(all.ranges[all.ranges.length - 1]!.last).toBe(65535);
        all.ranges.forEach((r, i) => {
          if (i > 0) expect(r.first).toBe(all.ranges[i - 1]!.last + 1);
          expect(r.last).toBeGreaterThanOrEqual(r.first);
        });
        const verdicts = (w: Readonly<Record<string, { policy: string | null; direction: string | null; rule: number | null; outcome: string }>>): unknown =>
          Object.fromEntries(Object.entries(w).map(([k, v]) => [k, [v.policy, v.direction, v.rule, v.outcome]]));
        const single = build(s);
        for (const r of all.ranges) {
          const inside = r.first + (pick % (r.last - r.first + 1));
          for (const port of new Set([r.first, inside, r.last])) {
            const one = single.reach({ port, proto, to, classes: false });
            expect(one.allowed, `${proto} ${port} in ${r.first}-${r.last}`).toEqual(r.allowed);
            expect(verdicts(one.why), `${proto} ${port} in ${r.first}-${r.last}`).toEqual(verdicts(r.why));
          }
        }
        // Neighbouring ranges differ somewhere (equal ones are joined).
        for (let i = 1; i < all.ranges.length; i++) {
          const a = all.ranges[i - 1]!;
          const b = all.ranges[i]!;
          expect(JSON.stringify([a.allowed, verdicts(a.why)]) === JSON.stringify([b.allowed, verdicts(b.why)])).toBe(false);
        }
      }),
      { numRuns: 12, seed: 28 },
    );
  });
});

describe('Cluster.reach: the port cuts', () => {
  it('a port range in a node\'s rules cuts the ports at both of its ends', () => {
    const s = snapshot(['x/a', 'x/b']);
    const rules = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A FORWARD -p tcp -m tcp --dport 8000:8100 -j DROP\nCOMMIT\n';
    const r = new Cluster({ snapshot: s, netpol: 'none', kubeProxy: 'none', nodeRules: { 'node-1': rules } }).reach({ allPorts: true });
    expect(r.ranges.map((x) => `${x.first}-${x.last}`)).toEqual(['1-79', '80-81', '82-7999', '8000-8100', '8101-65535']);
    expect(r.ranges[3]!.why['x/a→x/b']).toMatchObject({ outcome: 'dropped' });
    expect(r.ranges[3]!.why['x/a→x/b']!.reason).toContain('FORWARD');
  });

  it('ports a dump names by service name are cut as their numbers, in iptables and nft text', () => {
    const s = snapshot(['x/a', 'x/b']);
    const save = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A FORWARD -p tcp --dport ssh -j DROP\nCOMMIT\n';
    const byName = new Cluster({ snapshot: s, netpol: 'none', kubeProxy: 'none', nodeRules: { 'node-1': save } }).reach({ allPorts: true });
    expect(byName.ranges.map((x) => `${x.first}-${x.last}`)).toEqual(['1-21', '22-22', '23-79', '80-81', '82-65535']);
    const nft = 'table ip f {\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\ttcp dport { ssh, https } drop\n\t}\n}\n';
    const named = new Cluster({ snapshot: s, netpol: 'none', kubeProxy: 'none', nodeRules: { 'node-1': nft } }).reach({ allPorts: true });
    for (const port of [22, 443]) {
      expect(named.ranges.find((x) => x.first === port)).toMatchObject({ last: port });
      expect(named.ranges.find((x) => x.first === port)!.allowed[0]![1]).toBe(false);
    }
  });

  it('a dump that tells ports apart by a mask, a hash or raw bytes is refused, naming the node and the rule', () => {
    const s = snapshot(['x/a', 'x/b']);
    const texts = [
      'table ip f {\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\ttcp dport & 0xff00 == 0x1f00 drop\n\t}\n}\n',
      'table ip f {\n\tchain forward {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tmeta mark set jhash ip saddr . tcp dport mod 2\n\t}\n}\n',
      '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A FORWARD -p tcp -m u32 --u32 "0>>22&0x3C@0>>16=0x1F90" -j DROP\nCOMMIT\n',
    ];
    for (const rules of texts) {
      const c = new Cluster({ snapshot: s, netpol: 'none', kubeProxy: 'none', nodeRules: { 'node-1': rules } });
      expect(c.reach({ port: 80 }).pods).toHaveLength(2);
      const d = thrown(() => c.reach({ allPorts: true })).diagnostics[0]!;
      expect(d.code).toBe('UNSUPPORTED');
      expect(d.message).toMatch(/node-1/);
      expect(d.message).toMatch(/--port N/);
    }
  });
});

describe('Cluster.reach: through a Service', () => {
  it('every endpoint of the Service is reached in turn, the same on every run, and the classes agree', () => {
    const pods = ['x/a', 'x/b', 'x/c', 'x/d'].map((id, i) => pod(id, i, { labels: { app: 'web' }, ports: [80], node: i < 2 ? 'node-1' : 'node-2' }));
    const s = withServices(snapshot([...pods, pod('x/client', 9, { labels: { app: 'client' } })]));
    for (const kubeProxy of ['iptables', 'nftables'] as const) {
      const runs = [1, 2].map(() => new Cluster({ snapshot: s, netpol: 'none', kubeProxy }).reach({ port: 80, to: 'service' }));
      expect(plain(runs[0]!)).toEqual(plain(runs[1]!));
      const r = runs[0]!;
      const client = r.pods.indexOf('x/client');
      // From the client, each of the four endpoints is a cell of its own, all reached.
      expect(r.allowed[client], kubeProxy).toEqual(r.pods.map((p) => p !== 'x/client'));
      // To itself through its own Service: the bridge's port has hairpin mode off.
      expect(r.why['x/client→x/client']).toMatchObject({ policy: null, outcome: 'dropped' });
      expect(r.classes.map((k) => k.map((i) => r.pods[i]))).toEqual([['x/a', 'x/b'], ['x/c', 'x/d'], ['x/client']]);
      const byPair = new Cluster({ snapshot: s, netpol: 'none', kubeProxy }).reach({ port: 80, to: 'service', classes: false });
      expect(plain(r)).toEqual(plain(byPair));
    }
  });
});
