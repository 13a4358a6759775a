// kube-network-policies' table, compiled: its listing pinned by a golden file, the sets holding the
// local pods some policy selects (and nothing else), the flags' effects; and compileNetworkPolicy,
// the entry point for both enforcers.
import { describe, expect, it } from 'vitest';
import { compileKubeNetworkPolicies, compileNetworkPolicy } from '../../src/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { pod, policy, snapshot } from '../netpol/helpers.js';

const cluster = () => snapshot(
  ['x/a', 'x/b', 'y/a', pod('x/far', 3, { node: 'node-2' }), pod('x/host', 4, { hostNetwork: true }), { ...pod('x/done', 5), status: { phase: 'Succeeded', podIP: '10.244.1.9', podIPs: [{ ip: '10.244.1.9' }] } }],
  [policy('x', 'web', { matchLabels: { pod: 'a' } }, { ingress: [] }), policy('x', 'all', {}, { policyTypes: ['Egress'] }), policy('y', 'none', { matchLabels: { pod: 'zzz' } })],
);

describe('compileKubeNetworkPolicies', () => {
  it('lists as nft lists it (golden)', async () => {
    await expect(compileKubeNetworkPolicies(cluster(), 'node-1').nft).toMatchFileSnapshot('../golden/netpol/kube-network-policies.golden');
  });

  it('the sets hold the local pods some policy selects: not other nodes\' pods, not hostNetwork pods, not unselected ones', () => {
    const { nft } = compileKubeNetworkPolicies(cluster(), 'node-1');
    const set = /set podips-v4 \{[^}]*elements = \{ ([^}]*) \}/s.exec(nft)![1]!.replace(/\s+/g, ' ');
    // x/a (web, all), x/b (all); x/done finished but still named by its spec: the controller lists pods regardless of phase.
    expect(set.split(', ').map((s) => s.trim())).toEqual(['10.244.1.2', '10.244.1.3', '10.244.1.9']);
    expect(nft).not.toContain('10.244.1.4'); // y/a: no policy selects it
    expect(nft).not.toContain('10.244.2.5'); // x/far: another node
  });

  it('flags: fail-open off drops bypass, the queue number, the DNS workaround chain', () => {
    const on = compileKubeNetworkPolicies(cluster(), 'node-1').nft;
    const off = compileKubeNetworkPolicies(cluster(), 'node-1', { failOpen: false, queueId: 100, netfilterBug1766Fix: false }).nft;
    expect(on).toContain('ip saddr @podips-v4 queue flags bypass to 98');
    expect(off).toContain('ip saddr @podips-v4 queue to 100');
    expect(on).toContain('chain prerouting {');
    expect(on).toContain('\t\tudp dport 53 accept\n');
    expect(off).not.toContain('prerouting');
    expect(off).not.toContain('udp dport 53 accept');
  });

  it('with verdicts, each queue statement becomes a jump to a chain of fixed answers', () => {
    const { nft } = compileKubeNetworkPolicies(cluster(), 'node-1', { verdicts: [{ src: '10.244.1.3', dst: '10.244.1.2', protocol: 'TCP', port: 80, accept: false }] });
    expect(nft).not.toMatch(/ queue (flags|to) /);
    expect(nft.match(/jump nfqueue-verdicts/g)!.length).toBe(10);
    expect(nft).toContain('\tchain nfqueue-verdicts {\n\t\tip saddr 10.244.1.3 ip daddr 10.244.1.2 tcp dport 80 drop\n\t}');
  });
});

describe('compileNetworkPolicy', () => {
  it('returns what Netns takes, per implementation', () => {
    const kr = compileNetworkPolicy(cluster(), 'node-1', { implementation: 'kube-router' });
    expect([kr.rules.startsWith('*filter\n'), kr.rules6, kr.ipsets.startsWith('create KUBE-'), kr.nft]).toEqual([true, '', true, '']);
    const knp = compileNetworkPolicy(cluster(), 'node-1', { implementation: 'kube-network-policies' });
    expect([knp.rules, knp.ipsets, knp.nft.startsWith('table inet kube-network-policies {')]).toEqual(['', '', true]);
  });

  it('an unknown implementation or node argument is a typed error', () => {
    const err = (f: () => unknown): string => { try { f(); return 'none'; } catch (e) { return e instanceof NetfilterSimError ? `${e.code}: ${e.message}` : String(e); } };
    expect(err(() => compileNetworkPolicy(cluster(), 'node-1', { implementation: 'calico' } as never))).toBe('BAD_CONFIG: implementation "calico" is not kube-router, kube-router-nftables or kube-network-policies');
    expect(err(() => compileNetworkPolicy(cluster(), '', { implementation: 'kube-router' }))).toBe('BAD_ARGUMENT: node must be a node name');
  });
});
