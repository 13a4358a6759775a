// `cluster reach` at scale (issue "NetworkPolicy on the cluster path", Measure):
//
// (a) one port, 1,000 pods and 200 NetworkPolicies;
// (b) one port, 5,000 pods and 1,000 NetworkPolicies (time and peak memory);
// (c) every port (`allPorts`), 1,000 pods and 200 NetworkPolicies.
//
// Each section runs in a process of its own (so that its peak resident memory is its own): it
// builds the cluster (kube-proxy iptables and the reference enforcer compiled from the snapshot),
// times `Cluster.reach` (the classes, one connection per pair of classes, the matrix), then the
// reading of `why` (made on first reading: every blocked cell's entry; read in (a) only: at 5,000
// pods it would hold ~20 million entries, over every port ~9 million), and times a naive pair-by-pair loop over the
// same cluster: one `Cluster.connect` per cell. The naive loop is SAMPLED (a few thousand random
// cells per port) and its time per cell multiplied by the cells of the matrix (pods² per port,
// and per probed port of (c)): it would take minutes to hours to run whole.
//
// The snapshot is shaped like a cluster of Deployments: namespaces of 10 Deployments each, 10
// (a, c) or 20 (b) replicas per Deployment spread over two of the nodes, one Service per
// Deployment (port 80 → the named container port `http`, 8080; `metrics` on 9090), a default-deny
// ingress per namespace, and per Deployment policies allowing ingress from other Deployments
// (by label, by namespace, some by ipBlock), port ranges and egress rules. Pods of a Deployment
// on one node form a class, so the classes are twice the Deployments.
//
//   npm run build && node --expose-gc bench/cluster-reach.js [a] [b] [c] [--json]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Cluster } from '../dist/index.js';
import { rng } from './rng.js';

const SELF = fileURLToPath(import.meta.url);
const JSON_OUT = process.argv.includes('--json');
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);

/** The snapshot: `pods` pods in Deployments of `replicas`, `policies` NetworkPolicies, `nodes` nodes. */
export function reachSnapshot({ pods, policies, nodes, replicas, seed = 1 }) {
  const r = rng(seed);
  const items = [];
  for (let n = 0; n < nodes; n++) {
    items.push({ kind: 'Node', metadata: { name: `node-${n}` }, spec: { podCIDR: `10.244.${n}.0/24` }, status: { addresses: [{ type: 'InternalIP', address: `192.168.0.${10 + n}` }] } });
  }
  const deployments = Math.ceil(pods / replicas);
  const namespaces = Math.ceil(deployments / 10);
  for (let k = 0; k < namespaces; k++) items.push({ kind: 'Namespace', metadata: { name: `ns-${k}`, labels: { 'kubernetes.io/metadata.name': `ns-${k}`, team: ['red', 'blue', 'green'][k % 3] } } });
  const nextHost = new Array(nodes).fill(2);
  const deps = [];
  let made = 0;
  for (let d = 0; d < deployments; d++) {
    const ns = `ns-${Math.floor(d / 10)}`;
    const app = `app-${d % 10}`;
    const homes = [(d * 7) % nodes, (d * 7 + 1) % nodes];
    const ips = [];
    for (let i = 0; i < replicas && made < pods; i++, made++) {
      const node = homes[i % 2];
      const ip = `10.244.${node}.${nextHost[node]++}`;
      if (nextHost[node] > 254) throw new Error(`node-${node} is full: more nodes`);
      ips.push({ ip, node });
      items.push({
        kind: 'Pod',
        metadata: { name: `${app}-${i}`, namespace: ns, labels: { app, tier: d % 3 === 0 ? 'db' : 'web' } },
        spec: { nodeName: `node-${node}`, containers: [{ name: 'main', ports: [{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 9090 }] }] },
        status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
      });
    }
    const vip = `10.96.${Math.floor(d / 250)}.${(d % 250) + 2}`;
    items.push({ kind: 'Service', metadata: { name: app, namespace: ns }, spec: { selector: { app }, clusterIP: vip, clusterIPs: [vip], ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] } });
    items.push({
      kind: 'EndpointSlice', metadata: { name: `${app}-1`, namespace: ns, labels: { 'kubernetes.io/service-name': app } }, addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: ips.map((e) => ({ addresses: [e.ip], conditions: { ready: true }, nodeName: `node-${e.node}` })),
    });
    deps.push({ ns, app, ips });
  }
  let count = 0;
  const policy = (ns, name, spec) => {
    items.push({ kind: 'NetworkPolicy', metadata: { name, namespace: ns }, spec });
    count++;
  };
  for (let k = 0; k < namespaces && count < policies; k++) policy(`ns-${k}`, 'default-deny-ingress', { podSelector: {}, policyTypes: ['Ingress'] });
  for (let i = 0; count < policies; i++) {
    const d = deps[i % deps.length];
    const other = deps[Math.floor(r() * deps.length)];
    const kind = i % 5;
    const name = `allow-${d.app}-${i}`;
    if (kind === 0) policy(d.ns, name, { podSelector: { matchLabels: { app: d.app } }, ingress: [{ from: [{ podSelector: { matchLabels: { app: other.app } } }], ports: [{ port: 'http' }] }] });
    else if (kind === 1) policy(d.ns, name, { podSelector: { matchLabels: { app: d.app } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: ['red', 'blue', 'green'][i % 3] } }, podSelector: { matchLabels: { tier: 'web' } } }], ports: [{ port: 8000, endPort: 8100, protocol: 'TCP' }] }] });
    else if (kind === 2) policy(d.ns, name, { podSelector: { matchLabels: { app: d.app } }, ingress: [{ from: [{ ipBlock: { cidr: `10.244.${other.ips[0].node}.0/24`, except: [`${other.ips[0].ip}/32`] } }], ports: [{ port: 9090 }] }] });
    else if (kind === 3) policy(d.ns, name, { podSelector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': other.ns } } }] }] });
    else policy(d.ns, name, { podSelector: { matchLabels: { app: d.app } }, policyTypes: ['Egress'], egress: [{ to: [{ podSelector: {} }], ports: [{ port: 8080 }, { port: 9000, endPort: 9100 }] }, { to: [{ namespaceSelector: {} }], ports: [{ port: 53, protocol: 'UDP' }] }] });
  }
  return JSON.stringify({ kind: 'List', items });
}

const SECTIONS = {
  a: { what: 'one port (8080), 1,000 pods, 200 policies', pods: 1000, policies: 200, nodes: 10, replicas: 10, port: 8080 },
  b: { what: 'one port (8080), 5,000 pods, 1,000 policies', pods: 5000, policies: 1000, nodes: 40, replicas: 20, port: 8080 },
  c: { what: 'every port, 1,000 pods, 200 policies', pods: 1000, policies: 200, nodes: 10, replicas: 10, port: null },
};

/** µs per cell of the naive loop: `samples` random cells, one `Cluster.connect` each (untraced). */
function naivePerCell(cluster, pods, ports, samples, seed) {
  const r = rng(seed);
  const keys = pods.map((p) => p.metadata.namespace + '/' + p.metadata.name);
  const ips = pods.map((p) => p.status.podIP);
  const t0 = performance.now();
  for (let k = 0; k < samples; k++) {
    const i = Math.floor(r() * keys.length);
    const j = Math.floor(r() * keys.length);
    const port = ports[Math.floor(r() * ports.length)];
    cluster.connect({ from: keys[i], to: `${ips[j]}:${port}` }, { trace: false });
    if ((k & 4095) === 4095) cluster.flushConntrack();
  }
  return ((performance.now() - t0) * 1000) / samples;
}

function runSection(name) {
  const s = SECTIONS[name];
  const text = reachSnapshot(s);
  global.gc?.();
  const t0 = performance.now();
  const cluster = new Cluster({ snapshot: text, kubeProxy: 'iptables', netpol: 'reference' });
  const buildMs = performance.now() - t0;
  const t1 = performance.now();
  const result = s.port === null ? cluster.reach({ allPorts: true }) : cluster.reach({ port: s.port });
  const reachMs = performance.now() - t1;
  // `why` is made on first reading: at 5,000 pods it would hold ~20 million entries (several GiB),
  // over every port ~9 million, so (b) and (c) leave it unread and count the blocked cells.
  const t2 = performance.now();
  let blocked = 0;
  const readWhy = s.pods < 5000 && s.port !== null;
  if (!readWhy) for (const m of s.port === null ? result.ranges.map((x) => x.allowed) : [result.allowed]) for (const row of m) for (const x of row) blocked += x ? 0 : 1;
  else blocked = Object.keys(result.why).length;
  const whyMs = readWhy ? performance.now() - t2 : 0;
  const pods = JSON.parse(text).items.filter((o) => o.kind === 'Pod');
  const n = result.pods.length;
  const ports = s.port === null ? result.ranges.map((x) => x.first) : [s.port];
  // Probed ports of the naive loop over every port: every port of 1–65535 would be 65,535 matrices;
  // the fair comparison is the cuts' ports, what a naive loop would need at the least to be exact.
  const cutPorts = s.port === null ? result.probedPorts : 1;
  const perCell = naivePerCell(cluster, pods, ports, s.pods >= 5000 ? 2000 : 4000, 11);
  const naiveMs = (perCell * n * n * cutPorts) / 1000;
  const peak = process.resourceUsage().maxRSS * 1024;
  return {
    section: name, what: s.what, pods: n, policies: s.policies, nodes: s.nodes, classes: result.classes.length, probes: result.probes,
    ranges: s.port === null ? result.ranges.length : undefined, cutPorts: s.port === null ? cutPorts : undefined,
    buildMs: Math.round(buildMs), reachMs: Math.round(reachMs), whyMs: Math.round(whyMs), blocked,
    naiveUsPerCell: Math.round(perCell), naiveMs: Math.round(naiveMs), ratio: Math.round(naiveMs / (reachMs + whyMs)), peakRssMiB: Math.round(peak / 2 ** 20),
  };
}

const child = process.argv.indexOf('--child');
if (child !== -1) {
  process.stdout.write(JSON.stringify(runSection(process.argv[child + 1])) + '\n');
} else if (process.argv[1] === SELF) {
  const wanted = process.argv.slice(2).filter((a) => Object.hasOwn(SECTIONS, a));
  const results = [];
  for (const name of wanted.length > 0 ? wanted : Object.keys(SECTIONS)) {
    say(`(${name}) ${SECTIONS[name].what} …`);
    const p = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=4096', SELF, '--child', name], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (p.status !== 0) {
      say(`  failed: ${p.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      continue;
    }
    const r = JSON.parse(p.stdout.trim().split('\n').pop());
    results.push(r);
    say(`  ${r.pods} pods in ${r.classes} classes, ${r.nodes} nodes; building ${(r.buildMs / 1000).toFixed(1)} s; reach ${(r.reachMs / 1000).toFixed(1)} s (${r.probes} connections${r.ranges !== undefined ? `, ${r.cutPorts} port pieces probed, ${r.ranges} ranges` : ''}) + why ${(r.whyMs / 1000).toFixed(1)} s (${r.blocked} blocked cells); peak RSS ${r.peakRssMiB} MiB`);
    say(`  naive pair-by-pair (sampled): ${r.naiveUsPerCell} µs per cell → ${(r.naiveMs / 1000).toFixed(0)} s for the matrix; ratio ${r.ratio}×`);
  }
  if (JSON_OUT) process.stdout.write(JSON.stringify(results, null, 2) + '\n');
}
