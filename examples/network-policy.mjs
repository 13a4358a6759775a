// NetworkPolicy, the library way: judge connections with the reference evaluator, see a policy the
// API server would refuse, and run the rules kube-router writes for the same policies through a node.
// Run with `npm run build && node examples/network-policy.mjs`.
import { readFileSync } from 'node:fs';
import { Netns, NetworkPolicyEvaluator, compileNetworkPolicy, describeVerdict, validateNetworkPolicy } from 'netfilter-sim';

// Namespaces, a node, pods and policies, with the API's field names (netpol/shop.json).
const snapshot = JSON.parse(readFileSync(new URL('netpol/shop.json', import.meta.url), 'utf8'));

const evaluator = new NetworkPolicyEvaluator(snapshot);
for (const connection of [
  { from: 'shop/web', to: 'shop/api', port: 8080 },
  { from: 'shop/web', to: 'shop/db', port: 5432 },
  { from: 'monitoring/prometheus', to: 'shop/api', port: 9090 },
  { from: { node: 'worker-1' }, to: 'shop/db', port: 5432 },
  // A meshed client's connection to an opaque port arrives on the server proxy's inbound port, 4143.
  { from: 'shop/api', to: 'shop/cache', port: 6379 },
  { from: 'shop/api', to: 'shop/cache', port: 4143 },
]) console.log(describeVerdict(evaluator.evaluate(connection)));
console.log(JSON.stringify(evaluator.evaluate({ from: 'shop/web', to: 'shop/db', port: 5432 }).policy));

// What the API server would say of a policy that never reached it.
const typo = { kind: 'NetworkPolicy', metadata: { namespace: 'shop', name: 'range' }, spec: { podSelector: {}, ingress: [{ ports: [{ port: 9000, endPort: 8000 }] }] } };
for (const e of validateNetworkPolicy(typo)) console.log(`${e.policy}: ${e.message}`);

// kube-router's rules for worker-1, run in a namespace standing for the node: web's connection to db is rejected.
const { rules, ipsets } = compileNetworkPolicy(snapshot, 'worker-1', { implementation: 'kube-router' });
const node = new Netns({
  rules, ipsets, ipForward: true, gateway: [],
  interfaces: { eth0: ['192.168.0.11/24'], veth1: [], veth2: [], veth3: [] },
  routes: [{ dst: '10.244.1.10/32', dev: 'veth1' }, { dst: '10.244.1.11/32', dev: 'veth2' }, { dst: '10.244.1.12/32', dev: 'veth3' }],
});
const r = node.connect({ from: 'remote', src: '10.244.1.10', iface: 'veth1', dst: '10.244.1.12:5432' });
console.log(r.outcome, '-', r.reason);
for (const s of r.steps.filter((s) => s.packet === 'SYN')) console.log(`  ${s.hook} ${s.chain} ${s.rule} ${s.target}`);
