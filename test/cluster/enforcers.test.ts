// NetworkPolicy enforcers on the cluster path: kube-router's compiled iptables rules and ipsets in
// each node's namespace, kube-network-policies' nft table with its queue answered by the
// reference evaluator, and the reference evaluator at the veth; each names the policy that decided.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Cluster } from '../../src/cluster/cluster.js';
import type { ClusterConnectResult } from '../../src/cluster/cluster.js';
import type { K8sNode, Snapshot } from '../../src/model/kubernetes.js';
import { namespace, pod, policy } from '../netpol/helpers.js';

function node(n: number): K8sNode {
  return { kind: 'Node', metadata: { name: `node-${n}` }, spec: { podCIDR: `10.244.${n}.0/24` }, status: { addresses: [{ type: 'InternalIP', address: `192.168.0.${10 + n}` }] } };
}

/** x/a and x/b on node-1, y/a on node-2; x/a admits only pod=b on 80. */
function demo(): Snapshot {
  const pods = [pod('x/a', 0), pod('x/b', 1), pod('y/a', 2, { node: 'node-2' })];
  return {
    namespaces: [namespace('x'), namespace('y')], nodes: [node(1), node(2)], pods, services: [], endpointSlices: [],
    networkPolicies: [policy('x', 'only-b', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'b' } } }], ports: [{ port: 80 }] }] })],
    warnings: [],
  };
}

const ruleSteps = (r: ClusterConnectResult, ns: string): string[] => r.steps.filter((s) => s.event === 'rule' && s.namespace === ns).map((s) => `${s.chain} ${s.target}`);

describe.each(['reference', 'kube-router', 'kube-network-policies'] as const)('--netpol %s', (netpol) => {
  it('allows what the policy allows and blocks the rest, naming the isolating policy', () => {
    const c = new Cluster({ snapshot: demo(), kubeProxy: 'none', netpol });
    expect(c.connect({ from: 'x/b', to: 'x/a', port: 80 }).outcome).toBe('local');
    expect(c.connect({ from: 'x/b', to: 'x/a', port: 81 }).outcome).not.toBe('local');
    expect(c.connect({ from: 'x/a', to: 'y/a', port: 81 }).outcome).toBe('local');
    for (const trace of [true, false]) {
      const r = c.connect({ from: 'y/a', to: 'x/a', port: 80 }, { trace });
      expect(r.outcome).not.toBe('local');
      expect(r.policy).toEqual({ namespace: 'x', name: 'only-b', direction: 'ingress', rule: null });
    }
  });

  it('with kube-proxy iptables on the nodes too', () => {
    const c = new Cluster({ snapshot: demo(), kubeProxy: 'iptables', netpol });
    expect(c.connect({ from: 'x/b', to: 'x/a', port: 80 }).outcome).toBe('local');
    expect(c.connect({ from: 'y/a', to: 'x/a', port: 80 }).outcome).not.toBe('local');
  });
});

describe('kube-router on the cluster path', () => {
  it('the node holds the compiled rules and ipsets; the trace shows the pod chain that REJECTed, the client hears the ICMP error', () => {
    const c = new Cluster({ snapshot: demo(), kubeProxy: 'none', netpol: 'kube-router' });
    expect(c.nodeRules('node-1').save).toMatch(/^:KUBE-POD-FW-[A-Z2-7]{16} - /m);
    const r = c.connect({ from: 'y/a', to: 'x/a', port: 80 });
    expect(r.outcome).toBe('refused');
    expect(r.reason).toContain('rejected (icmp-port-unreachable) in node/node-1');
    expect(ruleSteps(r, 'node/node-1').some((x) => /^KUBE-ROUTER-FORWARD KUBE-POD-FW-/.test(x))).toBe(true);
    const reject = r.steps.find((s) => s.event === 'rule' && s.target === 'REJECT')!;
    expect(reject.namespace).toBe('node/node-1');
    expect(reject.chain).toMatch(/^KUBE-POD-FW-/);
    expect(reject.text).toContain('"x/a reject"');
    // The allowed peer matched the policy chain's ipset rule (KUBE-SRC-… src, KUBE-DST-… dst) and was marked.
    const ok = c.connect({ from: 'x/b', to: 'x/a', port: 80 });
    const mark = ok.steps.find((s) => s.event === 'rule' && /^KUBE-NWPLCY-(?!COMMON|DEFAULT|TAIL)/.test(s.chain ?? '') && s.target === 'MARK');
    expect(mark?.text).toMatch(/--match-set KUBE-SRC-\S+ src -m set --match-set KUBE-DST-\S+ dst/);
  });

  it('given node rules replace the compiled ones (no ipsets are loaded for them)', () => {
    const c = new Cluster({ snapshot: demo(), kubeProxy: 'none', netpol: 'kube-router', nodeRules: { 'node-1': '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n' } });
    expect(c.connect({ from: 'y/a', to: 'x/a', port: 80 }).outcome).toBe('local');
  });
});

describe('kube-network-policies on the cluster path', () => {
  it('the first packet is queued and the reference evaluator answers; the accepted connection carries ct label 100, which lets its answers pass', () => {
    const c = new Cluster({ snapshot: demo(), kubeProxy: 'none', netpol: 'kube-network-policies' });
    expect(c.nodeRules('node-1').nft.join('')).toContain('queue flags bypass to 98');
    const ok = c.connect({ from: 'x/b', to: 'x/a', port: 80 });
    expect(ok.outcome).toBe('local');
    const queued = (ok.trace ?? []).filter((e) => e.type === 'effect' && e.target === 'queue');
    expect(queued.length).toBeGreaterThan(0);
    expect(queued.every((e) => e.type === 'effect' && /^queued to queue 98; kube-network-policies \(the reference evaluator\) answered accept \(NetworkPolicy x\/only-b ingress rule 0\), ct label 100 set$/.test(e.detail))).toBe(true);
    // The SYN-ACK is not queued again: the ct label rule accepts it.
    const synAck = ok.steps.filter((s) => s.packet === 'SYN-ACK' && s.event === 'rule' && s.namespace === 'node/node-1');
    expect(synAck.some((s) => s.text?.startsWith('ct label 100 ct state established,related'))).toBe(true);
    expect(synAck.some((s) => s.text?.includes('queue'))).toBe(false);
    const bad = c.connect({ from: 'y/a', to: 'x/a', port: 80 });
    expect(bad.outcome).toBe('dropped');
    expect(bad.reason).toContain('NFQUEUE: queued to queue 98; kube-network-policies (the reference evaluator) answered drop (NetworkPolicy x/only-b, ingress');
  });

  it('a pod no policy selects is not queued on its node', () => {
    const c = new Cluster({ snapshot: demo(), kubeProxy: 'none', netpol: 'kube-network-policies' });
    const r = c.connect({ from: 'x/a', to: 'y/a', port: 81 });
    expect(r.outcome).toBe('local');
    expect((r.trace ?? []).filter((e) => e.type === 'effect' && e.target === 'queue' && e.namespace === 'node/node-2')).toEqual([]);
  });
});

describe('cluster reach with each enforcer', () => {
  it('the worked example (examples/netpol/shop-list.json): the same matrix, each blocked cell naming the same policy', () => {
    const text = readFileSync(resolve(import.meta.dirname, '../../examples/netpol/shop-list.json'), 'utf8');
    const results = (['reference', 'kube-router', 'kube-network-policies'] as const).map((netpol) => new Cluster({ snapshot: text, kubeProxy: 'none', netpol }).reach({ port: 5432 }));
    const [ref, kr, knp] = results;
    expect(ref!.allowed.flat().filter((x) => x).length).toBeGreaterThan(0);
    expect(ref!.allowed.flat().filter((x) => !x).length).toBeGreaterThan(0);
    for (const r of [kr!, knp!]) {
      expect(r.allowed).toEqual(ref!.allowed);
      expect(Object.fromEntries(Object.entries(r.why).map(([k, v]) => [k, v.policy]))).toEqual(Object.fromEntries(Object.entries(ref!.why).map(([k, v]) => [k, v.policy])));
    }
  });
});

describe('a node given its own dump', () => {
  it('a REJECT in a given dump is not attributed to a NetworkPolicy', () => {
    const dump = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A FORWARD -p tcp --dport 80 -j REJECT\nCOMMIT\n';
    const c = new Cluster({ snapshot: demo(), kubeProxy: 'none', netpol: 'kube-router', nodeRules: { 'node-1': dump } });
    for (const trace of [true, false]) {
      const r = c.connect({ from: 'y/a', to: 'x/a', port: 80 }, { trace });
      expect(r.outcome).toBe('refused');
      expect(r.policy).toBeNull();
    }
  });
});
