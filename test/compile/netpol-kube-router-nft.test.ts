// kube-router's nftables mode, compiled: the shape of what it writes for the policies that could
// go wrong (named ports, ipBlock with except, endPort, egress-only, default deny,
// namespaceSelector with podSelector, overlapping ipBlocks nft refuses, two families), and the
// law: run by the engine in a node namespace, its tables give the verdict of kube-router's
// iptables rules on every probe, and the reference evaluator's but for a named departure.
import { test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { networkPolicyCase } from '../../src/arbitraries/index.js';
import { compileKubeRouter } from '../../src/compile/netpol/kube-router.js';
import { compileKubeRouterNft } from '../../src/compile/netpol/kube-router-nft.js';
import { compileNetworkPolicy } from '../../src/compile/netpol/index.js';
import { hash16 } from '../../src/compile/netpol/hash.js';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { NetworkPolicyEvaluator } from '../../src/netpol/index.js';
import type { NetworkPolicyProbe } from '../../src/arbitraries/index.js';
import type { Snapshot } from '../../src/model/kubernetes.js';
import { kubeRouterNftDepartures } from '../netpol/departures.js';
import { namespace, pod, policy, snapshot } from '../netpol/helpers.js';
import { nodeLayout, nodeNetns, probeNode, probeSource } from '../netpol/node.js';

/** The chain's rules (one per line, tabs removed), or null when the tables hold no such chain. */
function chain(nft: string, name: string): string[] | null {
  const m = new RegExp(`\\tchain ${name} \\{\\n([^}]*)\\n\\t\\}`).exec(nft);
  return m === null ? null : m[1]!.split('\n').map((l) => l.trim());
}

/** The elements of a set, or null when there is no such set. */
function elements(nft: string, name: string): string[] | null {
  const m = new RegExp(`\\tset ${name} \\{\\n([\\s\\S]*?)\\n\\t\\}`).exec(nft);
  if (m === null) return null;
  const e = /elements = \{ ([^}]*) \}/.exec(m[1]!);
  return e === null ? [] : e[1]!.split(',').map((x) => x.trim()).sort();
}

const podChain = (id: string): string => `KUBE-POD-FW-${hash16(id.replace('/', '') + '0')}`;
const policyChain = (ns: string, name: string, family = 'IPv4'): string => `KUBE-NWPLCY-${hash16(ns + name + '0' + family)}`;
const set = (prefix: 'KUBE-SRC-' | 'KUBE-DST-', text: string): string => `${prefix}${hash16(text)}`;

/** Probes run through the node holding the tables, as the engine decides them. */
function reached(s: Snapshot, nft: string, probes: readonly NetworkPolicyProbe[]): boolean[] {
  const layout = nodeLayout(s);
  const ns = nodeNetns(layout, { nft });
  return probes.map((p) => probeNode(ns, layout, p).outcome === 'remote');
}

describe('what it writes', () => {
  it('the table and its base chains: hooks input, forward and output at priority filter, the TAIL accept of 0x20000, nft list ruleset\'s own form', () => {
    const s = snapshot(['x/a', 'x/b'], [policy('x', 'deny', {}, { ingress: [] })]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    expect(nft.startsWith('table ip kube-router-filter-ipv4 {\n\tcomment "rules for kube-router-filter-ipv4"\n')).toBe(true);
    expect(nft).not.toContain('kube-router-filter-ipv6');
    for (const [c, hook] of [['KUBE-ROUTER-INPUT', 'input'], ['KUBE-ROUTER-FORWARD', 'forward'], ['KUBE-ROUTER-OUTPUT', 'output']]) {
      const rules = chain(nft, c!)!;
      expect(rules.slice(0, 2)).toEqual([`comment "top level ${c} chain for kube-router"`, `type filter hook ${hook} priority filter; policy accept;`]);
      expect(rules.at(-1)).toBe('meta mark & 0x00020000 == 0x00020000 counter packets 0 bytes 0 accept comment "accept netpol-ok"');
      expect(rules.at(-2)).toBe('counter packets 0 bytes 0 jump KUBE-NWPLCY-TAIL comment "netpol accept/reject"');
    }
    expect(chain(nft, 'KUBE-ROUTER-INPUT')!.slice(2, 6)).toEqual([
      'ip daddr 10.96.0.0/12 counter packets 0 bytes 0 return comment "allow cluster IP range"',
      'fib daddr type local tcp dport 30000-32767 counter packets 0 bytes 0 return comment "allow tcp nodeport"',
      'fib daddr type local udp dport 30000-32767 counter packets 0 bytes 0 return comment "allow udp nodeport"',
      'fib daddr type local sctp dport 30000-32767 counter packets 0 bytes 0 return comment "allow sctp nodeport"',
    ]);
    // The text is already what nft lists: our formatter changes nothing.
    expect(formatNftRuleset(nft)).toBe(nft);
  });

  it('default deny (empty podSelector, no rules): an empty policy chain, each pod jumping to it, no default chain for ingress, log and reject what is unmarked', () => {
    const s = snapshot(['x/a', 'x/b'], [policy('x', 'deny', {}, { ingress: [] })]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    expect(chain(nft, policyChain('x', 'deny'))).toEqual(['comment "netpol x/deny"']);
    expect(chain(nft, podChain('x/a'))).toEqual([
      'comment "podfw x/a"',
      'counter packets 0 bytes 0 jump KUBE-NWPLCY-COMMON comment "common netpol rules"',
      'fib saddr type local ip daddr 10.244.1.2 counter packets 0 bytes 0 accept comment "from local node"',
      `ip daddr 10.244.1.2 counter packets 0 bytes 0 jump ${policyChain('x', 'deny')} comment "x/deny policy"`,
      'ip saddr 10.244.1.2 counter packets 0 bytes 0 jump KUBE-NWPLCY-DEFAULT comment "default egress"',
      'meta mark & 0x00010000 == 0x00000000 limit rate 10/minute burst 10 packets log group 100 comment "x/a log-drop"',
      'meta mark & 0x00010000 == 0x00000000 counter packets 0 bytes 0 reject comment "x/a reject"',
      'meta mark set meta mark & 0xfffeffff comment "clear netpol mark"',
      'meta mark set meta mark | 0x00020000 comment "set netpol-ok mark"',
    ]);
    expect(reached(s, nft, [{ from: 'x/a', to: 'x/b', port: 80, protocol: 'TCP' }, { from: 'node:node-1', to: 'x/b', port: 80, protocol: 'TCP' }])).toEqual([false, true]);
  });

  it('egress-only: the pod jumps to the policy on its source address, and to the default chain for ingress', () => {
    const s = snapshot(['x/a', 'x/b'], [policy('x', 'out', { matchLabels: { pod: 'a' } }, { policyTypes: ['Egress'], egress: [{ to: [{ podSelector: { matchLabels: { pod: 'b' } } }], ports: [{ port: 80 }] }] })]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    const a = chain(nft, podChain('x/a'))!;
    expect(a).toContain(`ip saddr 10.244.1.2 counter packets 0 bytes 0 jump ${policyChain('x', 'out')} comment "x/out policy"`);
    expect(a).toContain('ip daddr 10.244.1.2 counter packets 0 bytes 0 jump KUBE-NWPLCY-DEFAULT comment "default ingress"');
    expect(a.some((r) => r.includes('"default egress"'))).toBe(false);
    const src = set('KUBE-SRC-', 'xoutIPv4');
    const dst = set('KUBE-DST-', 'xoutegressrule0IPv4pod');
    expect(chain(nft, policyChain('x', 'out'))).toEqual(['comment "netpol x/out"', `ip saddr @${src} ip daddr @${dst} tcp dport 80 counter packets 0 bytes 0 meta mark set meta mark | 0x00010000 return comment "x/out egress pods"`]);
    expect([elements(nft, src), elements(nft, dst)]).toEqual([['10.244.1.2'], ['10.244.1.3']]);
    expect(reached(s, nft, [{ from: 'x/a', to: 'x/b', port: 80, protocol: 'TCP' }, { from: 'x/a', to: 'x/b', port: 81, protocol: 'TCP' }, { from: 'x/b', to: 'x/a', port: 81, protocol: 'TCP' }])).toEqual([true, false, true]);
  });

  it('a named port: a set of the pods that declare it, matched with the number it resolves to; a protocol with no port is meta l4proto', () => {
    const s = snapshot([pod('x/a', 0, { ports: [80] }), pod('x/b', 1, { ports: [81] }), pod('x/c', 2)], [
      policy('x', 'np', {}, { ingress: [{ from: [{ podSelector: {} }], ports: [{ port: 'serve-81-tcp' }, { protocol: 'UDP' }] }] }),
    ]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    const npSet = set('KUBE-DST-', 'xnpingressrule00IPv4namedport');
    expect(elements(nft, npSet)).toEqual(['10.244.1.3', '10.244.1.4']);
    const rules = chain(nft, policyChain('x', 'np'))!;
    expect(rules).toContain(`ip saddr @${set('KUBE-SRC-', 'xnpingressrule0IPv4pod')} ip daddr @${npSet} tcp dport 81 counter packets 0 bytes 0 meta mark set meta mark | 0x00010000 return comment "x/np ingress pods np"`);
    expect(rules).toContain(`ip saddr @${set('KUBE-SRC-', 'xnpingressrule0IPv4pod')} ip daddr @${set('KUBE-DST-', 'xnpIPv4')} meta l4proto udp counter packets 0 bytes 0 meta mark set meta mark | 0x00010000 return comment "x/np ingress pods"`);
    // x/a declares no serve-81-tcp: port 81 to it is refused; x/b's is allowed.
    expect(reached(s, nft, [{ from: 'x/c', to: 'x/a', port: 81, protocol: 'TCP' }, { from: 'x/c', to: 'x/b', port: 81, protocol: 'TCP' }, { from: 'x/c', to: 'x/b', port: 80, protocol: 'TCP' }])).toEqual([false, true, false]);
  });

  it('endPort: a port range', () => {
    const s = snapshot(['x/a', 'x/b'], [policy('x', 'range', {}, { ingress: [{ ports: [{ protocol: 'TCP', port: 79, endPort: 80 }] }] })]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    expect(chain(nft, policyChain('x', 'range'))).toContain(`ip daddr @${set('KUBE-DST-', 'xrangeIPv4')} tcp dport 79-80 counter packets 0 bytes 0 meta mark set meta mark | 0x00010000 return comment "x/range ingress any"`);
    expect(reached(s, nft, [{ from: 'x/a', to: 'x/b', port: 80, protocol: 'TCP' }, { from: 'x/a', to: 'x/b', port: 81, protocol: 'TCP' }])).toEqual([true, false]);
  });

  it('ipBlock with except: an interval set without the excepts, an except set, and a sub-chain that returns for them before the match', () => {
    const s = snapshot(['x/a', 'x/b', 'x/c'], [policy('x', 'cidr', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ ipBlock: { cidr: '10.244.1.0/24', except: ['10.244.1.4/32'] } }] }] })]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    const main = set('KUBE-SRC-', 'xcidringressrule0IPv4ipblock');
    const except = set('KUBE-SRC-', 'xcidringressrule0IPv4ipblockexcept');
    const sub = `KUBE-NWPLCY-${hash16('xcidringressrule0IPv4ipblockchain')}`;
    expect([elements(nft, main), elements(nft, except)]).toEqual([['10.244.1.0/24'], ['10.244.1.4']]);
    expect(nft).toContain(`\tset ${main} {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\tcomment "netpol ipblock set"`);
    expect(chain(nft, policyChain('x', 'cidr'))).toEqual(['comment "netpol x/cidr"', `counter packets 0 bytes 0 jump ${sub} comment "x/cidr ipblock"`]);
    expect(chain(nft, sub)).toEqual([
      `ip saddr @${except} counter packets 0 bytes 0 return comment "x/cidr except-src"`,
      `ip saddr @${main} ip daddr @${set('KUBE-DST-', 'xcidrIPv4')} counter packets 0 bytes 0 meta mark set meta mark | 0x00010000 return comment "x/cidr ingress cidr"`,
    ]);
    expect(reached(s, nft, [{ from: 'x/b', to: 'x/a', port: 80, protocol: 'TCP' }, { from: 'x/c', to: 'x/a', port: 80, protocol: 'TCP' }])).toEqual([true, false]);
  });

  it('namespaceSelector with podSelector: the peer set holds the pods matching both', () => {
    const s = snapshot(['x/a', 'x/b', 'y/a', 'y/b'], [
      policy('x', 'both', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'y' } }, podSelector: { matchLabels: { pod: 'b' } } }] }] }),
    ], [namespace('x'), namespace('y', { team: 'y' })]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    const ip = (id: string): string => s.pods.find((p) => `${p.metadata.namespace}/${p.metadata.name}` === id)!.status!.podIP!;
    expect(elements(nft, set('KUBE-SRC-', 'xbothingressrule0IPv4pod'))).toEqual([ip('y/b')]);
    expect(reached(s, nft, [{ from: 'y/b', to: 'x/a', port: 80, protocol: 'TCP' }, { from: 'y/a', to: 'x/a', port: 80, protocol: 'TCP' }, { from: 'x/b', to: 'x/a', port: 80, protocol: 'TCP' }])).toEqual([true, false, false]);
  });

  it('overlapping ipBlocks of one rule: nft refuses the policy\'s transaction, the policy is left out (a warning says so) and its pods fail closed', () => {
    const s = snapshot(['x/a', 'x/b'], [policy('x', 'wide', { matchLabels: { pod: 'a' } }, { ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' } }, { ipBlock: { cidr: '10.244.0.0/16' } }] }] })]);
    const { nft, warnings } = compileKubeRouterNft(s, 'node-1');
    expect(warnings.join('\n')).toMatch(/NetworkPolicy x\/wide: nft refuses kube-router's IPv4 transaction .*10\.0\.0\.0\/8 and 10\.244\.0\.0\/16, which overlap/);
    expect(chain(nft, policyChain('x', 'wide'))).toBeNull();
    const a = chain(nft, podChain('x/a'))!;
    expect(a.some((r) => r.includes('x/wide') || r.includes('default ingress'))).toBe(false);
    // The reference allows x/b (inside both blocks); kube-router's pod chain rejects it.
    expect(new NetworkPolicyEvaluator(s).evaluate({ from: 'x/b', to: 'x/a', port: 80 }).allowed).toBe(true);
    expect(reached(s, nft, [{ from: 'x/b', to: 'x/a', port: 80, protocol: 'TCP' }])).toEqual([false]);
    expect(kubeRouterNftDepartures(s, { from: 'x/b', to: 'x/a', port: 80, protocol: 'TCP' })).toContain('ipblock-intervals-conflict');
  });

  it('IPv6 pods: a second table, ip6, with ICMPv6 neighbour discovery; families: [4] leaves it out', () => {
    const dual = (id: string, i: number) => ({ ...pod(id, i), status: { phase: 'Running', podIP: `10.244.1.${i + 2}`, podIPs: [{ ip: `10.244.1.${i + 2}` }, { ip: `fd00:10:244:1::${i + 2}` }] } });
    const s = snapshot([dual('x/a', 0), dual('x/b', 1)], [policy('x', 'p', {}, { ingress: [{ from: [{ ipBlock: { cidr: 'fd00:10:244::/48' } }] }] })]);
    const { nft } = compileKubeRouterNft(s, 'node-1');
    expect(nft).toContain('table ip kube-router-filter-ipv4 {');
    const v6 = nft.slice(nft.indexOf('table ip6 kube-router-filter-ipv6 {'));
    expect(v6).toContain('icmpv6 type nd-neighbor-solicit counter packets 0 bytes 0 accept comment "allow icmp nd-neighbor-solicit messages"');
    expect(v6).toContain(`ip6 daddr fd00:10:244:1::2 counter packets 0 bytes 0 jump ${policyChain('x', 'p', 'IPv6')} comment "x/p policy"`);
    expect(elements(v6, set('KUBE-SRC-', 'xpingressrule0IPv6ipblock'))).toEqual(['fd00:10:244::/48']);
    expect(compileKubeRouterNft(s, 'node-1', { families: [4] }).nft).not.toContain('ip6');
  });

  it('compileNetworkPolicy: implementation kube-router-nftables gives the tables in nft; an unknown implementation names the choices', () => {
    const s = snapshot(['x/a'], [policy('x', 'deny', {}, { ingress: [] })]);
    const r = compileNetworkPolicy(s, 'node-1', { implementation: 'kube-router-nftables' });
    expect(r).toMatchObject({ implementation: 'kube-router-nftables', rules: '', rules6: '', ipsets: '' });
    expect(r.nft).toBe(compileKubeRouterNft(s, 'node-1').nft);
    expect(() => compileNetworkPolicy(s, 'node-1', { implementation: 'calico' } as never)).toThrow(/kube-router, kube-router-nftables or kube-network-policies/);
    expect(() => compileKubeRouterNft(s, 'node-1', { serviceNodePortRange: '9-1' })).toThrow(/serviceNodePortRange "9-1"/);
  });
});

describe('agreement', () => {
  const counts = { probes: 0, sameAsIptables: 0, departures: 0, blocked: 0 };
  test.prop([networkPolicyCase({ maxPods: 5, maxPolicies: 4 })], { numRuns: 200 })(
    'its tables, run in the node, give the verdict of kube-router\'s iptables rules, and the reference\'s but for a named departure',
    ({ snapshot: s, probes }) => {
      const ps = probes.map((p) => ({ ...p, protocol: 'TCP' as const }));
      const nft = reached(s, compileKubeRouterNft(s, 'node-1').nft, ps);
      const layout = nodeLayout(s);
      const iptNs = nodeNetns(layout, compileKubeRouter(s, 'node-1'));
      const ev = new NetworkPolicyEvaluator(s);
      ps.forEach((p, i) => {
        counts.probes++;
        const ipt = probeNode(iptNs, layout, p).outcome === 'remote';
        const ref = ev.evaluate({ from: probeSource(p), to: p.to, port: p.port, protocol: 'TCP' }).allowed;
        if (!nft[i]) counts.blocked++;
        const why = kubeRouterNftDepartures(s, p);
        if (nft[i] === ipt) counts.sameAsIptables++;
        else expect(why, `nft ${nft[i]}, iptables ${ipt} on ${JSON.stringify(p)}`).toContain('ipblock-intervals-conflict');
        if (nft[i] !== ref) {
          expect(why, `nft ${nft[i] ? 'allows' : 'blocks'} ${JSON.stringify(p)}, the reference does not`).not.toEqual([]);
          counts.departures++;
        }
      });
    },
  );

  it('the property judged enough probes, both ways, and departures stay the exception', () => {
    expect(counts.probes).toBeGreaterThan(600);
    expect(counts.blocked).toBeGreaterThan(counts.probes / 10);
    expect(counts.blocked).toBeLessThan(counts.probes);
    expect(counts.sameAsIptables).toBeGreaterThan(counts.probes * 0.9);
    expect(counts.departures).toBeLessThan(counts.probes / 10);
    console.log(`kube-router nftables agreement: ${counts.probes} probes, ${counts.blocked} blocked, ${counts.probes - counts.sameAsIptables} differ from the iptables mode, ${counts.departures} departures from the reference`);
  });
});
