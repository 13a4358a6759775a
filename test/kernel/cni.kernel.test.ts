// The CNI's node rules compiled from snapshots, against the kernel: every rule set loads into a
// fresh network namespace and `iptables-save` / `nft list ruleset` print exactly the compiled
// text; then hostPort connections from the node (to its own address and to 127.0.0.1 is left
// out: route_localnet cannot be set from the harness) through the compiled rules, by real
// sockets and by `Netns.connect`.
import { beforeAll, expect, it } from 'vitest';
import { compileCniNodeRules } from '../../src/compile/cni/index.js';
import type { K8sPod, Snapshot } from '../../src/model/kubernetes.js';
import { describeKernel, describeNftKernel, kernelNftListMany, kernelSaveMany, type KernelNftResult, type KernelSaveResult } from './harness.js';
import { namedDifferential, namedLocal } from './connect-differential.js';
import { CNI_NODE, generateCniCluster } from '../compile/cni/generate.js';

const SEEDS = Array.from({ length: Number(process.env['NETFILTER_SIM_CNI_CASES'] ?? 40) }, (_x, i) => i + 1);

describeKernel('CNI node rules, iptables backend: iptables-save after loading the compiled rules', () => {
  const cases: { name: string; family: 4 | 6; text: string }[] = [];
  for (const seed of SEEDS) {
    const g = generateCniCluster(seed);
    for (const family of g.families) {
      cases.push({
        name: `seed ${seed} IPv${family}`,
        family,
        text: compileCniNodeRules(g.snapshot, CNI_NODE, {
          family,
          ipMasq: seed % 2 === 1,
          portmap: seed % 5 === 0 ? { masqAll: true } : seed % 7 === 0 ? { snat: false } : true,
          ...(seed % 3 === 0 ? { flannel: { network: '10.244.0.0/16', ipv6Network: 'fd00:10:244::/56', randomFully: seed % 2 === 0 } } : {}),
        }),
      });
    }
  }
  const results: Record<4 | 6, KernelSaveResult[]> = { 4: [], 6: [] };
  beforeAll(async () => {
    for (const f of [4, 6] as const) results[f] = await kernelSaveMany(cases.filter((c) => c.family === f).map((c) => c.text), f);
  }, 300_000);
  it.for(cases.map((c) => ({ ...c, i: cases.filter((x) => x.family === c.family).indexOf(c) })))('$name', (c) => {
    const k = results[c.family][c.i]!;
    if (!k.ok) expect.fail(`the kernel refused ${c.name}:\n${k.stderr}`);
    expect(c.text).toBe(k.save);
  });
});

describeNftKernel('CNI node rules, nftables backend: nft list ruleset after loading the compiled rules', () => {
  const cases = SEEDS.map((seed) => {
    const g = generateCniCluster(seed);
    return { name: `seed ${seed}`, text: compileCniNodeRules(g.snapshot, CNI_NODE, { backend: 'nftables', ipMasq: seed % 2 === 0, portmap: seed % 7 === 0 ? { snat: false } : true, ...(seed % 3 === 0 ? { flannel: { network: '10.244.0.0/16', ipv6Network: 'fd00:10:244::/56', randomFully: seed % 2 === 1 } } : {}) }) };
  });
  let results: KernelNftResult[] = [];
  beforeAll(async () => {
    results = await kernelNftListMany(cases.map((c) => c.text));
  }, 300_000);
  it.for(cases.map((c, i) => ({ ...c, i })))('$name', (c) => {
    const k = results[c.i]!;
    if (!k.ok) expect.fail(`the kernel refused ${c.name}:\n${k.stderr}`);
    expect(c.text).toBe(k.list);
  });
});

// hostPorts from the node: the harness's pod namespace plays the node (10.0.0.2); the pods'
// addresses (10.244.1.0/24) lie beyond the world, whose listener reports where a connection went.
const hostPortPod = (name: string, ip: string, ports: NonNullable<K8sPod['spec']['containers'][number]['ports']>): K8sPod => ({
  kind: 'Pod', metadata: { name, namespace: 'web', uid: `uid-${name}` }, spec: { nodeName: 'n1', containers: [{ name: 'c', ports }] }, status: { podIPs: [{ ip }] },
});
const hostPortSnapshot: Snapshot = {
  namespaces: [], services: [], endpointSlices: [], networkPolicies: [], warnings: [],
  nodes: [{ kind: 'Node', metadata: { name: 'n1' }, spec: { podCIDR: '10.244.1.0/24' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.2' }] } }],
  pods: [
    hostPortPod('a', '10.244.1.5', [{ containerPort: 80, hostPort: 8080 }, { containerPort: 443, hostPort: 8443, hostIP: '10.0.0.2' }]),
    hostPortPod('b', '10.244.1.6', [{ containerPort: 9090, hostPort: 9000, hostIP: '10.9.9.9' }]),
  ],
};
const HOSTPORT_PROBES = [
  namedLocal('10.0.0.2:8080'), // hostPort on every local address: DNAT to the pod
  namedLocal('10.0.0.2:8443'), // hostPort bound to the node's address
  namedLocal('10.0.0.2:9000'), // bound to another address: not caught
  namedLocal('10.0.0.2:8081'), // no hostPort
];

describeKernel('CNI hostPorts, iptables backend: connections from the node', () => {
  namedDifferential([
    { name: 'portmap with ipMasq', rules4: compileCniNodeRules(hostPortSnapshot, 'n1', { ipMasq: true }), listen: [], probes: HOSTPORT_PROBES },
    { name: 'portmap without snat', rules4: compileCniNodeRules(hostPortSnapshot, 'n1', { portmap: { snat: false } }), listen: [], probes: HOSTPORT_PROBES },
  ]);
});

describeNftKernel('CNI hostPorts, nftables backend: connections from the node', () => {
  namedDifferential([{ name: 'portmap with ipMasq (nftables)', rules4: '', nft: compileCniNodeRules(hostPortSnapshot, 'n1', { backend: 'nftables', ipMasq: true }), listen: [], probes: HOSTPORT_PROBES }]);
});
