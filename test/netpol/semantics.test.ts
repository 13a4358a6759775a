// The reference evaluator against the behaviour the API reference states and the upstream
// conformance suite (test/e2e/network/netpol) checks, written as that suite writes its
// expectations: a truth table per case (`.` reachable, `X` blocked; rows are sources).
import { describe, expect, it } from 'vitest';
import { NetworkPolicyEvaluator, describeVerdict, evaluateNetworkPolicy } from '../../src/netpol/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { namespace, pod, policy, snapshot, table, truthTable } from './helpers.js';

const denyIngress = (ns: string) => policy(ns, 'deny-ingress', {}, { ingress: [] });

describe('isolation and the default policies', () => {
  it('no policy: every pod reaches every pod', () => {
    const s = snapshot(['x/a', 'x/b', 'y/a']);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a x/b y/a
      x/a .   .   .
      x/b .   .   .
      y/a .   .   .`));
  });

  it('default-deny-ingress isolates every pod of x for ingress, and only for ingress', () => {
    const s = snapshot(['x/a', 'x/b', 'y/a', 'y/b'], [denyIngress('x')]);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a x/b y/a y/b
      x/a .   X   .   .
      x/b X   .   .   .
      y/a X   X   .   .
      y/b X   X   .   .`));
  });

  it('default-deny-all (both policyTypes, no rules) isolates x in both directions', () => {
    const s = snapshot(['x/a', 'x/b', 'y/a'], [policy('x', 'deny-all', {}, { policyTypes: ['Ingress', 'Egress'] })]);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a x/b y/a
      x/a .   X   X
      x/b X   .   X
      y/a X   X   .`));
  });

  it('policyTypes defaults: Ingress always; Egress only when egress has a rule (egress: [] alone does not isolate egress)', () => {
    const withEmptyEgress = snapshot(['x/a', 'y/a'], [policy('x', 'p', {}, { egress: [] })]);
    const v = evaluateNetworkPolicy(withEmptyEgress, { from: 'x/a', to: 'y/a', port: 80 });
    expect(v.egress.reason).toBe('not-isolated');
    expect(evaluateNetworkPolicy(withEmptyEgress, { from: 'y/a', to: 'x/a', port: 80 }).ingress).toMatchObject({ allowed: false, reason: 'isolated' });

    const withEgressRule = snapshot(['x/a', 'y/a', 'z/a'], [policy('x', 'p', {}, { egress: [{ to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'y' } } }] }] })]);
    expect(truthTable(withEgressRule, 80)).toBe(table(`
      -   x/a y/a z/a
      x/a .   .   X
      y/a X   .   .
      z/a X   .   .`));
  });

  it('policyTypes: [Egress] alone leaves ingress open even with ingress rules written', () => {
    const s = snapshot(['x/a', 'y/a'], [policy('x', 'p', {}, { policyTypes: ['Egress'], ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'none' } } }] }] })]);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a y/a
      x/a .   X
      y/a .   .`));
  });

  it('a rule with no from (or from: []) and no ports allows everything: allow-all next to a deny-all', () => {
    for (const rule of [{}, { from: [] }, { from: [], ports: [] }]) {
      const s = snapshot(['x/a', 'x/b', 'y/a'], [denyIngress('x'), policy('x', 'allow-all', {}, { ingress: [rule] })]);
      expect(truthTable(s, 80)).toBe(table(`
        -   x/a x/b y/a
        x/a .   .   .
        x/b .   .   .
        y/a .   .   .`));
    }
  });

  it('policies add up: a second policy unblocks a port the first left closed (stacked policies)', () => {
    const yOn = (p: number) => ({ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'y' } } }], ports: [{ protocol: 'TCP' as const, port: p }] });
    const one = [policy('x', 'allow-81', { matchLabels: { pod: 'a' } }, { ingress: [yOn(81)] })];
    const pods = ['x/a', 'x/b', 'y/a', 'y/b', 'z/a'];
    const allowY = table(`
      -   x/a x/b y/a y/b z/a
      x/a .   .   .   .   .
      x/b X   .   .   .   .
      y/a .   .   .   .   .
      y/b .   .   .   .   .
      z/a X   .   .   .   .`);
    expect(truthTable(snapshot(pods, one), 81)).toBe(allowY);
    expect(truthTable(snapshot(pods, one), 80)).toBe(table(`
      -   x/a x/b y/a y/b z/a
      x/a .   .   .   .   .
      x/b X   .   .   .   .
      y/a X   .   .   .   .
      y/b X   .   .   .   .
      z/a X   .   .   .   .`));
    const two = [...one, policy('x', 'allow-80', { matchLabels: { pod: 'a' } }, { ingress: [yOn(80)] })];
    expect(truthTable(snapshot(pods, two), 80)).toBe(allowY);
  });

  it('a pod is never blocked from itself, even isolated in both directions', () => {
    const s = snapshot(['x/a'], [policy('x', 'deny-all', {}, { policyTypes: ['Ingress', 'Egress'] })]);
    const v = evaluateNetworkPolicy(s, { from: 'x/a', to: 'x/a', port: 80 });
    expect(v.allowed).toBe(true);
    expect([v.egress.reason, v.ingress.reason]).toEqual(['self', 'self']);
  });

  it('egress denied at the client even though the server allows the traffic', () => {
    const s = snapshot(['x/a', 'y/a'], [
      policy('x', 'deny-egress', { matchLabels: { pod: 'a' } }, { policyTypes: ['Egress'] }),
      policy('y', 'allow-from-x', {}, { ingress: [{ from: [{ namespaceSelector: {} }] }] }),
    ]);
    const v = evaluateNetworkPolicy(s, { from: 'x/a', to: 'y/a', port: 80 });
    expect(v.allowed).toBe(false);
    expect(v.policy).toEqual({ namespace: 'x', name: 'deny-egress', direction: 'egress', rule: null });
    expect(v.ingress).toMatchObject({ allowed: true, reason: 'rule', policy: { name: 'allow-from-x', rule: 0 } });
  });

  it('ingress and egress isolation are independent (policies selecting by pod label)', () => {
    const s = snapshot(['x/a', 'x/b', 'x/c'], [
      policy('x', 'a-ingress-from-b', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }] }),
      policy('x', 'b-egress-to-c', { matchLabels: { pod: 'b' } }, { policyTypes: ['Egress'], egress: [{ to: [{ podSelector: { matchLabels: { pod: 'c' } } }] }] }),
    ]);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a x/b x/c
      x/a .   .   .
      x/b X   .   .
      x/c X   .   .`));
  });
});

describe('peers', () => {
  it('podSelector alone: pods of the policy namespace only (x/b allowed, y/b with the same label not)', () => {
    const s = snapshot(['x/a', 'x/b', 'x/c', 'y/b'], [policy('x', 'p', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }] })]);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a x/b x/c y/b
      x/a .   .   .   .
      x/b .   .   .   .
      x/c X   .   .   .
      y/b X   .   .   .`));
  });

  it('namespaceSelector alone: every pod of the selected namespaces; kubernetes.io/metadata.name is set on every namespace', () => {
    // Namespaces without labels in the snapshot still carry kubernetes.io/metadata.name.
    const s = snapshot(['x/a', 'x/b', 'y/a', 'z/a'], [policy('x', 'p', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'y' } } }] }] })]);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a x/b y/a z/a
      x/a .   .   .   .
      x/b X   .   .   .
      y/a .   .   .   .
      z/a X   .   .   .`));
  });

  it('an empty namespaceSelector selects pods of all namespaces', () => {
    const s = snapshot(['x/a', 'x/b', 'y/a', 'z/a'], [policy('x', 'p', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ namespaceSelector: {} }] }] })]);
    expect(truthTable(s, 80)).toBe(truthTable(snapshot(['x/a', 'x/b', 'y/a', 'z/a']), 80));
  });

  it('namespaceSelector by the namespace\'s own labels, with matchExpressions', () => {
    const ns = [namespace('x', { team: 'red' }), namespace('y', { team: 'blue' }), namespace('z', { team: 'green' })];
    const s = snapshot(['x/a', 'y/a', 'z/a'], [policy('x', 'p', {}, { ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['blue', 'red'] }] } }] }] })], ns);
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a y/a z/a
      x/a .   .   .
      y/a .   .   .
      z/a X   .   .`));
  });

  it('podSelector AND namespaceSelector in one peer, versus the same selectors as two peers (OR)', () => {
    const and = { from: [{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn' as const, values: ['x'] }] }, podSelector: { matchLabels: { pod: 'b' } } }] };
    const or = { from: [{ namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn' as const, values: ['x'] }] } }, { podSelector: { matchLabels: { pod: 'b' } } }] };
    const pods = ['x/a', 'x/b', 'y/a', 'y/b', 'z/b'];
    expect(truthTable(snapshot(pods, [policy('x', 'p', { matchLabels: { pod: 'a' } }, { ingress: [and] })]), 80)).toBe(table(`
      -   x/a x/b y/a y/b z/b
      x/a .   .   .   .   .
      x/b X   .   .   .   .
      y/a X   .   .   .   .
      y/b .   .   .   .   .
      z/b .   .   .   .   .`));
    expect(truthTable(snapshot(pods, [policy('x', 'p', { matchLabels: { pod: 'a' } }, { ingress: [or] })]), 80)).toBe(table(`
      -   x/a x/b y/a y/b z/b
      x/a .   .   .   .   .
      x/b .   .   .   .   .
      y/a .   .   .   .   .
      y/b .   .   .   .   .
      z/b .   .   .   .   .`));
  });

  it('matchExpressions operators: In, NotIn (label absent counts), Exists, DoesNotExist', () => {
    const pods = [pod('x/t', 0), pod('x/a', 1, { labels: { tier: 'web' } }), pod('x/b', 2, { labels: { tier: 'db' } }), pod('x/c', 3, { labels: {} })];
    const allowed = (op: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist', values?: string[]): string[] => {
      const p = policy('x', 'p', { matchLabels: { pod: 't' } }, { ingress: [{ from: [{ podSelector: { matchExpressions: [{ key: 'tier', operator: op, ...(values ? { values } : {}) }] } }] }] });
      const ev = new NetworkPolicyEvaluator(snapshot(pods, [p]));
      return ['x/a', 'x/b', 'x/c'].filter((f) => ev.evaluate({ from: f, to: 'x/t', port: 80 }).allowed);
    };
    expect(allowed('In', ['web'])).toEqual(['x/a']);
    expect(allowed('NotIn', ['web'])).toEqual(['x/b', 'x/c']);
    expect(allowed('Exists')).toEqual(['x/a', 'x/b']);
    expect(allowed('DoesNotExist')).toEqual(['x/c']);
  });

  it('ipBlock with except: the CIDR minus the exceptions, for pods and outside addresses alike', () => {
    const s = snapshot(['x/a', 'x/b', 'x/c'], [policy('x', 'p', { matchLabels: { pod: 'a' } }, {
      ingress: [{ from: [{ ipBlock: { cidr: '10.244.1.0/24', except: ['10.244.1.4/32'] } }, { ipBlock: { cidr: '172.17.0.0/16', except: ['172.17.1.0/24'] } }] }],
    })]);
    const ev = new NetworkPolicyEvaluator(s);
    const from = (f: string) => ev.evaluate({ from: f, to: 'x/a', port: 80 }).allowed;
    expect([from('x/b'), from('x/c')]).toEqual([true, false]); // x/b is 10.244.1.3, x/c 10.244.1.4
    expect([from('172.17.0.9'), from('172.17.1.9'), from('172.17.2.9'), from('172.18.0.1')]).toEqual([true, false, true, false]);
  });

  it('an address both excepted by one ipBlock and inside another is allowed (the e2e "IP overlapping both CIDR and except" case)', () => {
    const s = snapshot(['x/a', 'x/b'], [policy('x', 'p', { matchLabels: { pod: 'a' } }, {
      ingress: [{ from: [{ ipBlock: { cidr: '10.244.1.0/24', except: ['10.244.1.3/32'] } }, { ipBlock: { cidr: '10.244.1.3/32' } }] }],
    })]);
    expect(evaluateNetworkPolicy(s, { from: 'x/b', to: 'x/a', port: 80 }).allowed).toBe(true);
  });

  it('egress to an ipBlock: pods in it, external addresses in it; nothing else', () => {
    const s = snapshot(['x/a', 'y/a'], [policy('x', 'p', {}, { egress: [{ to: [{ ipBlock: { cidr: '10.244.1.3/32' } }, { ipBlock: { cidr: '8.8.8.0/24' } }] }] })]);
    const ev = new NetworkPolicyEvaluator(s);
    expect(ev.evaluate({ from: 'x/a', to: 'y/a', port: 80 }).allowed).toBe(true);
    expect(ev.evaluate({ from: 'x/a', to: '8.8.8.8', port: 53, protocol: 'UDP' }).allowed).toBe(true);
    expect(ev.evaluate({ from: 'x/a', to: '1.1.1.1', port: 53, protocol: 'UDP' }).allowed).toBe(false);
  });

  it('a pod peer never matches a source that is not a pod of the snapshot', () => {
    const s = snapshot(['x/a'], [policy('x', 'p', {}, { ingress: [{ from: [{ namespaceSelector: {} }] }] })]);
    expect(evaluateNetworkPolicy(s, { from: '203.0.113.7', to: 'x/a', port: 80 })).toMatchObject({ allowed: false, from: { kind: 'external' } });
  });
});

describe('ports and protocols', () => {
  const onPorts = (ports: object[]) => snapshot(['x/a', 'y/a'], [policy('x', 'p', { matchLabels: { pod: 'a' } }, { ingress: [{ ports: ports as never }] })]);
  const allowedOn = (ports: object[], port: number, protocol: 'TCP' | 'UDP' | 'SCTP' = 'TCP') =>
    evaluateNetworkPolicy(onPorts(ports), { from: 'y/a', to: 'x/a', port, protocol }).allowed;

  it('a numbered port, protocol defaulting to TCP', () => {
    expect([allowedOn([{ port: 81 }], 81), allowedOn([{ port: 81 }], 80), allowedOn([{ port: 81 }], 81, 'UDP')]).toEqual([true, false, false]);
  });

  it('endPort: the range port..endPort, both ends included', () => {
    const r = [{ protocol: 'TCP', port: 80, endPort: 82 }];
    expect([79, 80, 81, 82, 83].map((p) => allowedOn(r, p))).toEqual([false, true, true, true, false]);
  });

  it('a port entry with only a protocol allows every port of that protocol', () => {
    expect([allowedOn([{ protocol: 'UDP' }], 80, 'UDP'), allowedOn([{ protocol: 'UDP' }], 9999, 'UDP'), allowedOn([{ protocol: 'UDP' }], 80)]).toEqual([true, true, false]);
  });

  it('a policy for UDP does not allow TCP; SCTP is a protocol of its own', () => {
    expect(allowedOn([{ protocol: 'UDP', port: 81 }], 81, 'TCP')).toBe(false);
    expect(allowedOn([{ protocol: 'SCTP', port: 81 }], 81, 'SCTP')).toBe(true);
    expect(allowedOn([{ protocol: 'SCTP', port: 81 }], 81, 'UDP')).toBe(false);
  });

  it('ingress named port: resolved against the destination pod\'s container ports, by name and protocol', () => {
    const s = snapshot(['x/a', 'x/b', 'y/a'], [policy('x', 'p', {}, { ingress: [{ ports: [{ port: 'serve-81-tcp' }] }] })]);
    expect(truthTable(s, 81)).toBe(truthTable(snapshot(['x/a', 'x/b', 'y/a']), 81));
    expect(truthTable(s, 80)).toBe(table(`
      -   x/a x/b y/a
      x/a .   X   .
      x/b X   .   .
      y/a X   X   .`));
    // The name with another protocol in the policy does not resolve: serve-81-tcp is TCP.
    const udp = snapshot(['x/a', 'y/a'], [policy('x', 'p', {}, { ingress: [{ ports: [{ port: 'serve-81-tcp', protocol: 'UDP' }] }] })]);
    expect(evaluateNetworkPolicy(udp, { from: 'y/a', to: 'x/a', port: 81, protocol: 'UDP' }).allowed).toBe(false);
  });

  it('a named port resolves per destination pod: the same name may be different numbers', () => {
    const pods = [pod('x/a', 0, { ports: [8080] }), pod('x/b', 1, { ports: [9090] }), pod('y/c', 2)];
    const renamed = pods.map((p) => ({ ...p, spec: { ...p.spec, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: p.spec.containers[0]!.ports![0]!.containerPort }] }] } }));
    const s = snapshot(renamed, [policy('x', 'p', {}, { ingress: [{ ports: [{ port: 'http' }] }] })]);
    const ev = new NetworkPolicyEvaluator(s);
    expect(['x/a:8080', 'x/a:9090', 'x/b:8080', 'x/b:9090'].map((d) => {
      const [to, port] = d.split(':') as [string, string];
      return ev.evaluate({ from: 'y/c', to, port: Number(port) }).allowed;
    })).toEqual([true, false, false, true]);
  });

  it('egress named port: resolved against the destination pod; an address that is no pod has no named ports', () => {
    const s = snapshot(['x/a', 'y/a'], [policy('x', 'p', {}, { egress: [{ ports: [{ port: 'serve-80-tcp' }] }] })]);
    const ev = new NetworkPolicyEvaluator(s);
    expect(ev.evaluate({ from: 'x/a', to: 'y/a', port: 80 }).allowed).toBe(true);
    expect(ev.evaluate({ from: 'x/a', to: 'y/a', port: 81 }).allowed).toBe(false);
    expect(ev.evaluate({ from: 'x/a', to: '203.0.113.1', port: 80 }).allowed).toBe(false);
  });
});

describe('the node, hostNetwork pods, finished pods', () => {
  const nodes = [
    { kind: 'Node' as const, metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP' as const, address: '192.168.0.11' }] } },
    { kind: 'Node' as const, metadata: { name: 'node-2' }, status: { addresses: [{ type: 'InternalIP' as const, address: '192.168.0.12' }] } },
  ];
  const base = () => ({ ...snapshot([pod('x/a', 0), pod('x/b', 1, { node: 'node-2' })], [denyIngress('x')]), nodes });

  it('ingress from the pod\'s own node is allowed (the API\'s exception); from another node it is not', () => {
    const ev = new NetworkPolicyEvaluator(base());
    expect(ev.evaluate({ from: { node: 'node-1' }, to: 'x/a', port: 80 })).toMatchObject({ allowed: true, ingress: { reason: 'own-node' } });
    expect(ev.evaluate({ from: '192.168.0.11', to: 'x/a', port: 80 }).ingress.reason).toBe('own-node');
    expect(ev.evaluate({ from: { node: 'node-2' }, to: 'x/a', port: 80 })).toMatchObject({ allowed: false, ingress: { reason: 'isolated' } });
  });

  it('fromOwnNode: policy puts the node under the rules (an ipBlock of the node address then allows it)', () => {
    const ev = new NetworkPolicyEvaluator(base(), { fromOwnNode: 'policy' });
    expect(ev.evaluate({ from: { node: 'node-1' }, to: 'x/a', port: 80 }).allowed).toBe(false);
    const withBlock = { ...base(), networkPolicies: [policy('x', 'nodes', {}, { ingress: [{ from: [{ ipBlock: { cidr: '192.168.0.0/24' } }] }] })] };
    expect(new NetworkPolicyEvaluator(withBlock, { fromOwnNode: 'policy' }).evaluate({ from: { node: 'node-1' }, to: 'x/a', port: 80 }).ingress).toMatchObject({ allowed: true, reason: 'rule' });
  });

  it('extra node addresses (a CNI bridge address) count as the node', () => {
    const ev = new NetworkPolicyEvaluator(base(), { nodeAddresses: { 'node-1': ['10.244.1.1'] } });
    expect(ev.evaluate({ from: '10.244.1.1', to: 'x/a', port: 80 })).toMatchObject({ allowed: true, from: { kind: 'node', node: 'node-1' } });
  });

  it('egress to the pod\'s own node is under the egress rules', () => {
    const s = { ...snapshot(['x/a'], [policy('x', 'no-egress', {}, { policyTypes: ['Egress'] })]), nodes };
    expect(evaluateNetworkPolicy(s, { from: 'x/a', to: { node: 'node-1' }, port: 10250 }).allowed).toBe(false);
  });

  it('hostNetwork pods are their node by default: not selected, not matched by pod peers', () => {
    const hn = pod('x/h', 5, { hostNetwork: true, labels: { pod: 'b' } });
    const s = { ...snapshot([pod('x/a', 0), hn, pod('x/b', 1, { node: 'node-2' })], [
      policy('x', 'a-from-b', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ podSelector: { matchLabels: { pod: 'b' } } }] }] }),
      policy('x', 'h-isolated', { matchLabels: { pod: 'b' } }, { ingress: [] }),
    ]), nodes };
    const ev = new NetworkPolicyEvaluator(s);
    // x/h runs on node-1 like x/a: it reaches x/a as the node does.
    expect(ev.evaluate({ from: 'x/h', to: 'x/a', port: 80 })).toMatchObject({ allowed: true, from: { kind: 'node', pod: 'x/h' }, ingress: { reason: 'own-node' } });
    // A policy selecting pod=b does not isolate the hostNetwork pod.
    expect(ev.evaluate({ from: 'x/a', to: 'x/h', port: 80 }).ingress.reason).toBe('not-a-pod');
    expect(ev.policiesFor('x/h')).toEqual({ ingress: [], egress: [] });
    // Treated as pods, x/h is matched by the pod peer and isolated by h-isolated.
    const asPods = new NetworkPolicyEvaluator(s, { hostNetwork: 'pod', fromOwnNode: 'policy' });
    expect(asPods.evaluate({ from: 'x/h', to: 'x/a', port: 80 }).ingress).toMatchObject({ reason: 'rule', policy: { name: 'a-from-b' } });
    expect(asPods.evaluate({ from: 'x/a', to: 'x/h', port: 80 }).ingress).toMatchObject({ allowed: false, policy: { name: 'h-isolated' } });
  });

  it('finished pods are not selected and hold no address; naming one is an error', () => {
    const done = pod('x/done', 3, { phase: 'Succeeded', labels: { pod: 'a' } });
    const s = snapshot([pod('x/a', 0), done, pod('y/z', 4, { ip: '10.244.1.5' })], [denyIngress('x')]);
    const ev = new NetworkPolicyEvaluator(s);
    expect(() => ev.evaluate({ from: 'x/done', to: 'x/a', port: 80 })).toThrow(/finished/);
    expect(ev.podsSelectedBy('x/deny-ingress')).toEqual(['x/a']);
  });
});

describe('what the verdict says', () => {
  it('names the deciding policy and rule index, and the policy JSON of DESIGN', () => {
    const s = snapshot(['x/a', 'x/b', 'y/a'], [
      denyIngress('x'),
      policy('x', 'web', { matchLabels: { pod: 'a' } }, { ingress: [{ ports: [{ port: 443 }] }, { from: [{ podSelector: { matchLabels: { pod: 'b' } } }], ports: [{ port: 80 }] }] }),
    ]);
    const ev = new NetworkPolicyEvaluator(s);
    const ok = ev.evaluate({ from: 'x/b', to: 'x/a', port: 80 });
    expect(ok.policy).toEqual({ namespace: 'x', name: 'web', direction: 'ingress', rule: 1 });
    expect(ok.ingress.policies).toEqual(['x/deny-ingress', 'x/web']);
    const no = ev.evaluate({ from: 'y/a', to: 'x/a', port: 80 });
    expect(no.policy).toEqual({ namespace: 'x', name: 'deny-ingress', direction: 'ingress', rule: null });
    expect(describeVerdict(no)).toBe('blocked: ingress to x/a is isolated by x/deny-ingress (and 1 more policy) and no rule allows y/a (10.244.1.4) on TCP 80');
    expect(describeVerdict(ok)).toBe('allowed: x/b (10.244.1.3) → x/a (10.244.1.2) on TCP 80 (egress not isolated; ingress by x/web ingress[1])');
  });

  it('an unknown pod, a bad port or protocol is a BAD_PROBE error naming it', () => {
    const ev = new NetworkPolicyEvaluator(snapshot(['x/a']));
    const code = (f: () => unknown) => { try { f(); return 'none'; } catch (e) { return e instanceof NetfilterSimError ? `${e.code}: ${e.message}` : String(e); } };
    expect(code(() => ev.evaluate({ from: 'x/nope', to: 'x/a', port: 80 }))).toBe('BAD_PROBE: from: no pod x/nope in the snapshot (pods are named NAMESPACE/NAME)');
    expect(code(() => ev.evaluate({ from: 'x/a', to: 'x/a', port: 0 }))).toBe('BAD_PROBE: port 0 is not a port number (1-65535)');
    expect(code(() => ev.evaluate({ from: 'x/a', to: 'x/a', port: 80, protocol: 'ICMP' as never }))).toBe('BAD_PROBE: protocol "ICMP" is not TCP, UDP or SCTP');
    expect(code(() => ev.evaluate({ from: 'x/a', to: 'fd00::1', port: 80 }))).toBe('BAD_PROBE: from and to have no address family in common');
  });

  it('dual-stack pods: IPv4 by default, IPv6 when an address says so, ipBlocks per family', () => {
    const p = (id: string, i: number) => ({ ...pod(id, i), status: { podIPs: [{ ip: `10.244.1.${i + 2}` }, { ip: `fd00::${i + 2}` }], phase: 'Running' } });
    const s = snapshot([p('x/a', 0), p('y/a', 1)], [policy('x', 'v6-only', {}, { ingress: [{ from: [{ ipBlock: { cidr: 'fd00::/64' } }] }] })]);
    const ev = new NetworkPolicyEvaluator(s);
    expect(ev.evaluate({ from: 'y/a', to: 'x/a', port: 80 })).toMatchObject({ allowed: false, from: { address: '10.244.1.3' } });
    expect(ev.evaluate({ from: 'y/a', to: { pod: 'x/a', address: 'fd00::2' }, port: 80 })).toMatchObject({ allowed: true, from: { address: 'fd00::3' } });
  });

  it('warns about what it reads with a doubt: a namespace with no object, two pods with one address', () => {
    const s = { ...snapshot([pod('x/a', 0), pod('x/b', 0)]), namespaces: [] };
    const ev = new NetworkPolicyEvaluator(s);
    expect(ev.warnings).toEqual([
      'namespace x (of pod x/a) has no Namespace object in the snapshot: its only label is kubernetes.io/metadata.name=x',
      'pods x/a and x/b both have 10.244.1.2; x/a is kept for it',
    ]);
  });
});
