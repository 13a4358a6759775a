// A Kubernetes node with kube-proxy-shaped rules (examples/kube-proxy/node.rules): where a pod's
// call to a ClusterIP, an outside client's call to a NodePort and a call to a Service without
// endpoints end, and which rules sent them there.
// Run with `npm run build && node examples/kube-proxy-trace.mjs`.
import { readFileSync } from 'node:fs';
import { Netns, check, parseIptablesSaveOrThrow } from 'netfilter-sim';

const text = readFileSync(new URL('./kube-proxy/node.rules', import.meta.url), 'utf8');
const rules = parseIptablesSaveOrThrow(text); // strict: exactly what iptables-restore accepts
const problems = check(rules); // what the kernel would refuse at load: none here
console.log(`${rules.tables.map((t) => t.name).join(', ')}: ${problems.length} problems`);

// The node: 192.168.0.2 on eth0, this node's pods behind cbr0, forwarding on.
const node = () =>
  new Netns({
    rules,
    interfaces: { eth0: ['192.168.0.2/24'], cbr0: ['10.244.0.1/24'] },
    gateway: '192.168.0.1',
    ipForward: true,
  });

const show = (name, results) => {
  for (const r of results) {
    // The rules the SYN matched, by hook and table, as `iptables -L --line-numbers` counts them.
    const path = [];
    for (const s of r.steps.filter((s) => s.packet === 'SYN' && s.event === 'rule')) {
      const head = `${s.hook}/${s.table}`;
      if (path.at(-1)?.head !== head) path.push({ head, rules: [] });
      path.at(-1).rules.push(`${s.chain}:${s.rule}`);
    }
    const masq = r.trace.some((e) => e.type === 'nat' && e.action === 'MASQUERADE');
    const where = r.address === null ? '' : `${r.address}:${r.port}`;
    const p = r.probability === undefined ? '' : ` p=${r.probability}`;
    console.log(`${name}: ${r.outcome}${where ? ` ${where}` : ''}${p}${masq ? ' (masqueraded)' : ''}`);
    for (const { head, rules } of path) console.log(`    ${head.padEnd(18)} ${rules.join(' → ')}`);
  }
};

// A pod on this node calls the web Service's ClusterIP: one of two endpoints, 50/50.
show('pod 10.244.0.5 → 10.96.0.10:80', node().connectAll({ from: 'remote', src: '10.244.0.5', dst: '10.96.0.10:80' }));
// An outside client calls the NodePort: DNAT to an endpoint, and masqueraded on the way out.
show('client 192.168.0.50 → node:30080', [node().connect({ from: 'remote', src: '192.168.0.50', dst: '192.168.0.2:30080' })]);
// The db Service has no endpoints: kube-proxy's REJECT answers at once.
show('pod 10.244.0.5 → 10.96.0.20:5432', [node().connect({ from: 'remote', src: '10.244.0.5', dst: '10.96.0.20:5432' })]);
