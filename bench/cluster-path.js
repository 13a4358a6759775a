// The cluster path's costs (issue "The cluster path", Measure):
//
// (a) `Cluster.connect` on a 3-node, 30-pod, 100-Service cluster: µs per connection (pod → a
//     Service's ClusterIP → an endpoint pod, most of them on another node), untraced and traced,
//     against the same kube-proxy rules in one `Netns` (a node forwarding the pod's SYN: one
//     namespace instead of four, the outcome cache off so that every packet runs the hooks).
// (b) how that cost grows with the Services kube-proxy holds: 100, 1,000 and 10,000.
// (c) what building the cluster costs at 1,000 and 10,000 Services (reading the snapshot, loading
//     the nodes' rules, making the namespaces). kube-proxy's rules are not compiled from the
//     snapshot in this build: they are the synthetic rule sets of bench/kube-proxy.js, given as
//     each node's dump, so the compile cost the issue asks for is not measured here.
// (d) root only: the kernel cluster harness's cost per generated case (test/kernel/cluster-*.ts:
//     namespaces, bridges, veths, routes, iptables-restore, listeners, ~8 connections with real
//     sockets) against the simulator's for the same cases.
//
//   npm run build && node --expose-gc bench/cluster-path.js [a] [b] [c] [d] [--json]   (sections; default all)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Cluster, Netns, readSnapshot } from '../dist/index.js';
import { kubeProxyRules } from './kube-proxy.js';
import { kernelUnavailable } from './kernel.js';
import { rng } from './rng.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const JSON_OUT = process.argv.includes('--json');
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);

/**
 * A cluster of `nodes` nodes and `pods` pods (each listening on 8080), and `services` Services
 * of 1–3 endpoints among the pods, with kube-proxy's rules for them (the same on every node).
 */
export function benchCluster({ nodes = 3, pods = 30, services = 100, seed = 1 } = {}) {
  const r = rng(seed);
  const items = [];
  for (let i = 0; i < nodes; i++) {
    items.push({ kind: 'Node', metadata: { name: `node-${i}` }, spec: { podCIDR: `10.244.${i}.0/24`, podCIDRs: [`10.244.${i}.0/24`] }, status: { addresses: [{ type: 'InternalIP', address: `192.168.0.${10 + i}` }] } });
  }
  const podList = [];
  for (let j = 0; j < pods; j++) {
    const node = j % nodes;
    const ip = `10.244.${node}.${10 + Math.floor(j / nodes)}`;
    podList.push({ key: `app/p${j}`, ip });
    items.push({ kind: 'Pod', metadata: { name: `p${j}`, namespace: 'app', labels: { app: `p${j}` } }, spec: { nodeName: `node-${node}`, containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] }, status: { phase: 'Running', podIPs: [{ ip }] } });
  }
  const svcs = [];
  for (let i = 0; i < services; i++) {
    const n = 1 + Math.floor(r() * 3);
    const endpoints = [];
    for (let k = 0; k < n; k++) endpoints.push(`${podList[Math.floor(r() * pods)].ip}:8080`);
    const vip = `10.96.${(i >> 8) & 255}.${i & 255}`;
    svcs.push({ key: `app/s${i}:http`, vip, port: 80, endpoints: [...new Set(endpoints)], externalIP: null, nodePort: null });
  }
  const rules = kubeProxyRules(svcs);
  const nodeRules = Object.fromEntries(Array.from({ length: nodes }, (_, i) => [`node-${i}`, rules]));
  return { snapshot: JSON.stringify({ kind: 'List', items }), nodeRules, rules, pods: podList, services: svcs };
}

function timeLoop(seconds, body) {
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < seconds * 1000) n += body();
  return ((performance.now() - t0) * 1000) / n;
}

const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];

/** µs per connection from random pods to random Services, `rounds` medians. */
function clusterCost(c, trace, rounds = 5, seconds = 1) {
  const cluster = new Cluster({ snapshot: c.snapshot, kubeProxy: 'none', netpol: 'none', nodeRules: c.nodeRules });
  const r = rng(7);
  const probes = Array.from({ length: 512 }, () => ({ from: c.pods[Math.floor(r() * c.pods.length)].key, to: `${c.services[Math.floor(r() * c.services.length)].vip}:80` }));
  let i = 0;
  const one = () => {
    cluster.connect(probes[i++ & 511], { trace });
    // Established connections stay in every namespace they crossed, as in a cluster: forgotten
    // every 4,096 connections, as bench/run.js flushes a Netns.
    if ((i & 4095) === 0) cluster.flushConntrack();
    return 1;
  };
  timeLoop(0.5, one);
  const out = [];
  for (let k = 0; k < rounds; k++) out.push(timeLoop(seconds, one));
  return median(out);
}

/** The same Services' SYN forwarded by one node namespace (the rules of the cluster's nodes). */
function netnsCost(c, rounds = 5, seconds = 1) {
  const ns = new Netns({
    rules: c.rules,
    interfaces: { eth0: ['192.168.0.10/24'], cni0: ['10.244.0.1/24'] },
    gateway: ['192.168.0.1'],
    routes: [{ dst: '10.244.1.0/24', via: '192.168.0.11' }, { dst: '10.244.2.0/24', via: '192.168.0.12' }],
    ipForward: true,
    outcomeCache: false,
  });
  const r = rng(7);
  const probes = Array.from({ length: 512 }, () => ({ from: 'remote', src: c.pods[Math.floor(r() * c.pods.length)].ip, dst: `${c.services[Math.floor(r() * c.services.length)].vip}:80`, iface: 'cni0' }));
  let i = 0;
  const one = () => {
    ns.connect(probes[i++ & 511], { trace: false });
    if ((i & 4095) === 0) ns.flushConntrack();
    return 1;
  };
  timeLoop(0.5, one);
  const out = [];
  for (let k = 0; k < rounds; k++) out.push(timeLoop(seconds, one));
  return median(out);
}

function buildCost(c, runs = 3) {
  const out = [];
  for (let k = 0; k < runs; k++) {
    const t0 = performance.now();
    new Cluster({ snapshot: c.snapshot, kubeProxy: 'none', netpol: 'none', nodeRules: c.nodeRules });
    out.push(performance.now() - t0);
  }
  return median(out);
}

// Transpiles the cluster harness and generator (types erased) into the cache, as kernel.js does
// for the connect harness, in a child process.
const TRANSPILE = `
import ts from 'typescript';
import { readFileSync, writeFileSync } from 'node:fs';
const [root, dir] = process.argv.slice(1);
for (const name of ['harness', 'generate', 'opt-out', 'cluster-harness', 'cluster-generate']) {
  const src = readFileSync(root + '/test/kernel/' + name + '.ts', 'utf8');
  let js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true }, fileName: name + '.ts' }).outputText;
  js = js.replace("from 'vitest';", "from './vitest-stub.js';");
  writeFileSync(dir + '/' + name + '.js', js);
}
writeFileSync(dir + '/vitest-stub.js', 'export const describe = () => {};\\nexport const it = () => {};\\n');
`;

async function kernelCaseCost(cases = 6) {
  const why = kernelUnavailable();
  if (why !== null) return { skipped: why };
  const dir = join(ROOT, 'node_modules', '.cache', 'netfilter-sim-bench', 'cluster-harness');
  mkdirSync(dir, { recursive: true });
  execFileSync(process.execPath, ['--input-type=module', '-e', TRANSPILE, ROOT, dir], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  for (const f of ['probe.py', 'cluster-probe.py']) copyFileSync(join(ROOT, 'test', 'kernel', f), join(dir, f));
  const harness = await import(pathToFileURL(join(dir, 'cluster-harness.js')).href);
  const generate = await import(pathToFileURL(join(dir, 'cluster-generate.js')).href);
  const status = (await import(pathToFileURL(join(dir, 'harness.js')).href)).kernelStatus();
  if (!status.available) return { skipped: status.reason };
  const list = Array.from({ length: cases }, (_, i) => generate.generateClusterCase(i + 1));
  const make = (c) => new Cluster({ snapshot: c.snapshot, kubeProxy: 'none', netpol: 'none', cni: c.cni, hairpin: c.hairpin, nodeRules: c.nodeRules });
  await harness.kernelCluster(make(list[0]), list[0].nodeRules, list[0].probes);
  const kernel = [];
  for (const c of list) {
    const t0 = performance.now();
    const k = await harness.kernelCluster(make(c), c.nodeRules, c.probes);
    kernel.push(performance.now() - t0);
    if (!k.ok) throw new Error(`kernel case ${c.seed}: ${k.stage} ${k.stderr}`);
  }
  // The simulator's side of the same cases: build the cluster (from the snapshot read once, as the
  // harness is handed its plan), make every connection, untraced.
  const read = new Map(list.map((c) => [c, readSnapshot(c.snapshot)]));
  const one = (c) => {
    const s = new Cluster({ snapshot: read.get(c), kubeProxy: 'none', netpol: 'none', cni: c.cni, hairpin: c.hairpin, nodeRules: c.nodeRules });
    for (const p of c.probes) s.connect({ from: p.from, to: p.dst, proto: p.proto ?? 'tcp' }, { trace: false });
  };
  for (const c of list) one(c);
  const sim = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    for (const c of list) one(c);
    sim.push((performance.now() - t0) / list.length);
  }
  const msKernel = kernel.reduce((a, b) => a + b, 0) / kernel.length;
  return { cases: list.length, probes: list.reduce((n, c) => n + c.probes.length, 0), msPerCaseKernel: msKernel, msPerCaseSim: median(sim), ratio: msKernel / median(sim) };
}

if (process.argv[1] !== fileURLToPath(import.meta.url)) {
  // Imported (by a script that wants benchCluster): nothing is timed.
} else await main();

async function main() {
const only = process.argv.slice(2).filter((a) => /^[abcd]$/.test(a));
const run = (section) => only.length === 0 || only.includes(section);
const results = {};
const base = benchCluster();
if (run('a')) {
results.cluster = { untracedUs: clusterCost(base, false), tracedUs: clusterCost(base, true), oneNetnsUs: netnsCost(base) };
say(`(a) 3 nodes, 30 pods, 100 Services: ${results.cluster.untracedUs.toFixed(1)} µs a connection untraced, ${results.cluster.tracedUs.toFixed(1)} µs traced; one node namespace forwarding the same SYN: ${results.cluster.oneNetnsUs.toFixed(1)} µs (${(results.cluster.untracedUs / results.cluster.oneNetnsUs).toFixed(1)}×)`);
}
if (run('b')) {
results.growth = {};
for (const n of [100, 1000, 10000]) results.growth[n] = clusterCost(benchCluster({ services: n }), false, 3, 1);
say(`(b) untraced µs a connection by Services: ${Object.entries(results.growth).map(([n, us]) => `${n}: ${us.toFixed(1)}`).join(', ')}; 10,000 / 100 = ${(results.growth[10000] / results.growth[100]).toFixed(2)}×`);
}
if (run('c')) {
results.build = {};
for (const n of [1000, 10000]) results.build[n] = buildCost(benchCluster({ services: n }));
say(`(c) building the cluster (snapshot, nodes' rules, namespaces): ${Object.entries(results.build).map(([n, ms]) => `${n} Services ${ms.toFixed(0)} ms`).join(', ')}`);
}
if (run('d')) {
results.kernel = await kernelCaseCost();
if (results.kernel.skipped) say(`(d) kernel harness: skipped (${results.kernel.skipped})`);
else say(`(d) ${results.kernel.cases} generated clusters (${results.kernel.probes} connections): kernel harness ${results.kernel.msPerCaseKernel.toFixed(0)} ms a case, simulator ${results.kernel.msPerCaseSim.toFixed(2)} ms (${results.kernel.ratio.toFixed(0)}× cheaper)`);
}
if (JSON_OUT) process.stdout.write(`${JSON.stringify(results)}\n`);
}
