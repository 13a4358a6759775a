// compileCniNodeRules: whole nodes — what every output is (our printers print it unchanged), how
// the plugins' calls order POSTROUTING, how sandbox IDs are derived, and bad input.
import { describe, expect, it } from 'vitest';
import { compileCniNodeRules, podSandboxId } from '../../../src/compile/cni/index.js';
import { cniChainName } from '../../../src/compile/cni/portmap.js';
import { formatIptablesSave } from '../../../src/iptables/fmt.js';
import { formatNftRuleset } from '../../../src/nftables/index.js';
import { NetfilterSimError } from '../../../src/model/errors.js';
import type { K8sPod, Snapshot } from '../../../src/model/kubernetes.js';
import { CNI_NODE, generateCniCluster } from './generate.js';

const pod = (name: string, ip: string, ports: K8sPod['spec']['containers'][number]['ports'] = []): K8sPod => ({
  kind: 'Pod',
  metadata: { name, namespace: 'x', uid: `uid-${name}` },
  spec: { nodeName: 'n1', containers: [{ name: 'c', ports }] },
  status: { podIPs: [{ ip }] },
});
const snap = (pods: readonly K8sPod[]): Snapshot => ({
  namespaces: [], services: [], endpointSlices: [], networkPolicies: [], warnings: [], pods,
  nodes: [{ kind: 'Node', metadata: { name: 'n1' }, spec: { podCIDR: '10.244.1.0/24' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.0.2' }] } }],
});

describe('every compiled rule set is what our printers print', () => {
  it.each(Array.from({ length: 40 }, (_x, i) => i + 1))('seed %i', (seed) => {
    const g = generateCniCluster(seed);
    for (const family of g.families) {
      const save = compileCniNodeRules(g.snapshot, CNI_NODE, { family, ipMasq: true, flannel: { network: '10.244.0.0/16', ipv6Network: 'fd00:10:244::/56' } });
      expect(formatIptablesSave(save, { family })).toBe(save);
    }
    const nft = compileCniNodeRules(g.snapshot, CNI_NODE, { backend: 'nftables', ipMasq: seed % 2 === 0 });
    expect(formatNftRuleset(nft)).toBe(nft);
  });
});

describe('a node', () => {
  const s = snap([pod('a', '10.244.1.5', [{ containerPort: 80, hostPort: 8080 }]), pod('b', '10.244.1.6')]);

  it('derives sandbox IDs from the pod uid', () => {
    const a = s.pods[0]!;
    expect(podSandboxId(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(podSandboxId(a)).toBe(podSandboxId({ ...a, metadata: { ...a.metadata, name: 'renamed' } }));
    expect(podSandboxId(a)).not.toBe(podSandboxId(s.pods[1]!));
  });

  it('orders POSTROUTING as the plugins do: portmap\'s masquerade jump first, then each pod\'s ipMasq chain', () => {
    const save = compileCniNodeRules(s, 'n1', { ipMasq: true });
    const post = save.split('\n').filter((l) => l.startsWith('-A POSTROUTING '));
    const ca = cniChainName('cbr0', podSandboxId(s.pods[0]!));
    const cb = cniChainName('cbr0', podSandboxId(s.pods[1]!));
    expect(post).toEqual([
      '-A POSTROUTING -m comment --comment "CNI portfwd requiring masquerade" -j CNI-HOSTPORT-MASQ',
      `-A POSTROUTING -s 10.244.1.5/32 -m comment --comment "name: \\"cbr0\\" id: \\"${podSandboxId(s.pods[0]!)}\\"" -j ${ca}`,
      `-A POSTROUTING -s 10.244.1.6/32 -m comment --comment "name: \\"cbr0\\" id: \\"${podSandboxId(s.pods[1]!)}\\"" -j ${cb}`,
    ]);
    expect(save).toContain(`-A ${ca} -d 10.244.1.0/24 -m comment --comment "name: \\"cbr0\\" id: \\"${podSandboxId(s.pods[0]!)}\\"" -j ACCEPT`);
    expect(save).toContain(`-A ${ca} ! -d 224.0.0.0/4 -m comment --comment "name: \\"cbr0\\" id: \\"${podSandboxId(s.pods[0]!)}\\"" -j MASQUERADE`);
    expect(save).toContain('-A PREROUTING -m addrtype --dst-type LOCAL -j CNI-HOSTPORT-DNAT');
    expect(save).toContain('-A CNI-HOSTPORT-SETMARK -m comment --comment "CNI portfwd masquerade mark" -j MARK --set-xmark 0x2000/0x2000');
    expect(save).toMatch(/-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment "dnat name: \\"cbr0\\" id: \\"[0-9a-f]{64}\\"" -m multiport --dports 8080 -j CNI-DN-[0-9a-f]{21}/);
  });

  it('writes nothing for pods without hostPorts when ipMasq is off', () => {
    expect(compileCniNodeRules(snap([pod('b', '10.244.1.6')]), 'n1')).toBe('');
    expect(compileCniNodeRules(snap([pod('b', '10.244.1.6')]), 'n1', { backend: 'nftables' })).toBe('');
  });

  it('takes the container ID from options.containerId', () => {
    const save = compileCniNodeRules(s, 'n1', { ipMasq: true, containerId: (p) => `id-${p.metadata.name}` });
    expect(save).toContain(`-j ${cniChainName('cbr0', 'id-a')}`);
    expect(save).toContain('id: \\"id-a\\"');
  });

  it('warns about pods it cannot set up, naming them', () => {
    const warnings: string[] = [];
    const p = { ...pod('c', '10.9.9.9'), status: {} } as K8sPod;
    compileCniNodeRules(snap([p, pod('d', '10.9.9.9', [{ containerPort: 1, hostPort: 2 }])]), 'n1', { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([
      'Pod x/c: no status.podIPs; no rules for it',
      "Pod x/d: 10.9.9.9 is in none of node n1's pod CIDRs; its subnet is taken as /32",
    ]);
  });

  it('writes flanneld\'s nftables tables before the pods\' rules, and leaves out the masquerade chain of a family without a lease', () => {
    const s: Snapshot = {
      namespaces: [], services: [], endpointSlices: [], networkPolicies: [], warnings: [], pods: [],
      nodes: [{ kind: 'Node', metadata: { name: 'n1' }, spec: { podCIDR: '10.244.1.0/24' } }],
    };
    const warnings: string[] = [];
    const text = compileCniNodeRules(s, 'n1', { backend: 'nftables', flannel: { network: '10.244.0.0/16', ipv6Network: 'fd00:10:244::/56', randomFully: false }, onWarning: (w) => warnings.push(w) });
    expect(text.match(/^table \S+ \S+/gm)).toEqual(['table ip flannel-ipv4', 'table ip6 flannel-ipv6']);
    expect(text).toContain('\t\tip saddr != 10.244.1.0/24 ip daddr 10.244.0.0/16 return\n');
    expect(text).toContain('\t\tip saddr 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade\n');
    expect(text).not.toContain('fully-random');
    // IPv6: the forward chain only (flanneld sets it up from the network alone).
    const v6 = text.slice(text.indexOf('table ip6 flannel-ipv6'));
    expect(v6.match(/^\tchain \S+/gm)).toEqual(['\tchain forward']);
    expect(warnings).toEqual(['Node n1: no IPv6 pod CIDR, which flannel takes as its lease; no flannel masquerade rules for IPv6']);
  });

  it('refuses bad options and unknown nodes', () => {
    const code = (f: () => unknown): string => {
      try {
        f();
        return 'no error';
      } catch (e) {
        return e instanceof NetfilterSimError ? `${e.code}: ${e.message}` : String(e);
      }
    };
    expect(code(() => compileCniNodeRules(s, 'nope'))).toBe('BAD_MANIFEST: no Node named "nope" in the snapshot');
    expect(code(() => compileCniNodeRules(s, 'n1', { backend: 'ebpf' as never }))).toBe('BAD_CONFIG: options.backend must be "iptables" or "nftables", not "ebpf"');
    expect(code(() => compileCniNodeRules(s, 'n1', { portmap: { markMasqBit: 40 } }))).toBe('BAD_CONFIG: options.portmap.markMasqBit must be between 0 and 31');
    expect(code(() => compileCniNodeRules(s, 'n1', { flannel: { network: '10.0.0.0/99' } }))).toBe('BAD_CONFIG: options.flannel.network: "10.0.0.0/99" is not an IPv4 CIDR');
    const pod = { kind: 'Pod', metadata: { name: 'p', namespace: 'x' }, spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ containerPort: '80' as never, hostPort: 8080 }] }] }, status: { podIPs: [{ ip: '10.244.1.9' }] } } as const;
    expect(code(() => compileCniNodeRules({ ...s, pods: [pod] }, 'n1'))).toBe('BAD_MANIFEST: snapshot.pods[0].spec.containers[0].ports[0].containerPort must be a port number (an integer 0–65535), not a string ("80")');
    expect(code(() => compileCniNodeRules({ ...s, pods: [{} as never] }, 'n1'))).toBe('BAD_MANIFEST: snapshot.pods[0].metadata is missing');
    expect(code(() => podSandboxId(5 as never))).toMatch(/^BAD_ARGUMENT: /);
  });
});
