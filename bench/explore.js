// explore: time, classes and regions for the Linkerd and Istio default pods (local and remote
// spaces), Istio's pod with --native-nftables (nft rules) beside its iptables form, kube-proxy
// nodes of growing size in iptables and nftables mode (time, peak memory, classes), and explore
// against sampling the same space with connect until every class is hit once.
//
//   npm run build && node --expose-gc bench/explore.js [--kube 100,1000,10000] [--sample-budget 200000]
//
// Each kube-proxy size runs in its own process (this script with --child), so that its peak
// resident memory is its own.
// Prints a table; raw figures in bench/explore-results.json. Each figure is wall time and the
// process's CPU time (user + system) over the same interval: on a machine shared with other work
// the wall time includes waiting for a core, the CPU time does not.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { explore, classOf, Netns, compileIstio, parseIstioIptablesArgs } from '../dist/index.js';
import { kubeProxyNftRules, kubeProxyNode, kubeProxyRules, kubeProxyServices } from './kube-proxy.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const KUBE = arg('kube', '100,1000,10000').split(',').map(Number);
const SAMPLE_BUDGET = Number(arg('sample-budget', '200000'));

const cpuMs = (c) => (c.user + c.system) / 1000;

/** Wall and CPU time (medians of `runs`) and the result of the last run. */
function timed(fn, runs = 5) {
  const times = [];
  const cpus = [];
  let out;
  for (let i = 0; i < runs; i++) {
    globalThis.gc?.();
    const c = process.cpuUsage();
    const t = performance.now();
    out = fn();
    times.push(performance.now() - t);
    cpus.push(cpuMs(process.cpuUsage(c)));
  }
  times.sort((a, b) => a - b);
  cpus.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], cpuMs: cpus[Math.floor(cpus.length / 2)], out };
}

/** Wall and CPU time of `fn`, and the process's peak resident memory after it (sizes run in ascending order). */
function peakRss(fn) {
  globalThis.gc?.();
  const c = process.cpuUsage();
  const t = performance.now();
  const out = fn();
  const ms = performance.now() - t;
  return { ms, cpuMs: cpuMs(process.cpuUsage(c)), out, peakMB: process.resourceUsage().maxRSS / 1024 };
}

// One kube-proxy size in this process: `--child iptables|nft N` prints its figures as JSON.
if (process.argv.includes('--child')) {
  const mode = arg('child');
  const n = Number(process.argv[process.argv.indexOf('--child') + 2]);
  const services = kubeProxyServices(n);
  const text = mode === 'nft' ? kubeProxyNftRules(services) : kubeProxyRules(services);
  const rules = mode === 'nft' ? text.split('\n').filter((l) => l.startsWith('add rule ') || l.startsWith('add element ')).length : text.split('\n').filter((l) => l.startsWith('-A ')).length;
  const options = mode === 'nft' ? kubeProxyNode(undefined, { nft: text }) : kubeProxyNode(text);
  const r = peakRss(() => explore({ ...options, from: 'local', family: 4 }));
  process.stdout.write(JSON.stringify({ mode, services: n, rules, from: 'local', ms: r.ms, cpuMs: r.cpuMs, peakRssMB: r.peakMB, classes: r.out.classes.length, regions: r.out.regions }) + '\n');
  process.exit(0);
}

const pods = [
  { name: 'Linkerd default pod', rules: readFileSync(join(ROOT, 'test/fixtures/linkerd/injected-default.save'), 'utf8'), listen: [4140, 4143, 4191, 8080] },
];
const istioFile = join(ROOT, '../shared/vectors/istio/kernel-save/derived/injected-sidecar-default.save');
if (existsSync(istioFile)) pods.push({ name: 'Istio default pod', rules: readFileSync(istioFile, 'utf8'), listen: [15001, 15006, 15090, 8080] });
else console.error('skipping the Istio pod: ../shared is not there');

// Istio's sidecar pod as istio-iptables writes it with --native-nftables, and the same
// configuration in iptables form (the flags of bench/nft.js).
const ISTIO_ARGS = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020'];
const istioListen = [15001, 15006, 15090, 8080];
pods.push(
  { name: 'Istio pod, iptables form', rules: compileIstio(parseIstioIptablesArgs(ISTIO_ARGS)).restore.map((r) => r.text).join(''), listen: istioListen, families: [4] },
  { name: 'Istio pod, native nftables', nft: compileIstio(parseIstioIptablesArgs([...ISTIO_ARGS, '--native-nftables'])).nft, listen: istioListen, families: [4, 6] },
);

const results = { node: process.version, pods: [], kubeProxy: [], sampling: [] };
const rows = [];
for (const pod of pods) {
  for (const from of ['local', 'remote']) {
    for (const family of pod.families ?? [4, 6]) {
      const { ms, cpuMs: cpu, out } = timed(() => explore({ ...(pod.rules ? { rules: pod.rules } : {}), ...(pod.nft ? { nft: pod.nft } : {}), listen: pod.listen, from, family }));
      results.pods.push({ pod: pod.name, from, family, ms, cpuMs: cpu, classes: out.classes.length, regions: out.regions });
      rows.push([`${pod.name}, ${from}, IPv${family}`, `${ms.toFixed(1)} ms (cpu ${cpu.toFixed(1)} ms)`, `${out.classes.length} classes`, `${out.regions} regions`]);
    }
  }
}

for (const mode of ['iptables', 'nft']) {
  for (const n of KUBE) {
    const child = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', mode, String(n)], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (child.status !== 0) throw new Error(`kube-proxy ${mode} ${n}: ${child.stderr}`);
    const r = JSON.parse(child.stdout);
    results.kubeProxy.push(r);
    const unit = mode === 'nft' ? 'rules and elements' : 'rules';
    rows.push([`kube-proxy ${mode} ${n} services (${r.rules} ${unit}), ${r.from}`, `${(r.ms / 1000).toFixed(2)} s (cpu ${(r.cpuMs / 1000).toFixed(2)} s)`, `${r.classes} classes`, `${r.regions} regions, peak rss ${r.peakRssMB.toFixed(0)} MB`]);
  }
}

// Sampling: uniform random local probes through connect until every class is hit (or the budget
// runs out). The same pod, the same space.
{
  const pod = pods[0];
  const { ms: exploreMs, out: ex } = timed(() => explore({ rules: pod.rules, listen: pod.listen, from: 'local', family: 4 }), 3);
  const ns = new Netns({ rules: pod.rules, listen: pod.listen });
  let seed = 12345;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const hit = new Set();
  // Only the connects are timed (finding each probe's class is bookkeeping of this bench).
  let connectMs = 0;
  let n = 0;
  for (; n < SAMPLE_BUDGET && hit.size < ex.classes.length; n++) {
    const a = rand();
    const probe = { uid: rand(), gid: rand(), dst: `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}:${1 + (rand() % 65535)}` };
    hit.add(ex.classes.indexOf(classOf(ex, probe)));
    const c0 = performance.now();
    ns.connect({ from: 'local', ...probe, sport: 41000 }, { trace: false });
    connectMs += performance.now() - c0;
    if (n % 4096 === 4095) ns.flushConntrack();
  }
  const sampleMs = connectMs;
  results.sampling.push({ pod: pod.name, exploreMs, classes: ex.classes.length, probes: n, classesHit: hit.size, sampleMs });
  rows.push([`sampling ${pod.name} (local, IPv4), connect time`, `${(sampleMs / 1000).toFixed(2)} s`, `${hit.size} of ${ex.classes.length} classes hit`, `${n} probes; explore: ${exploreMs.toFixed(1)} ms for all`]);
}

const width = rows[0].map((_, k) => Math.max(...rows.map((r) => r[k].length)));
for (const r of rows) console.log(r.map((c, k) => c.padEnd(width[k])).join('  '));
writeFileSync(join(ROOT, 'bench/explore-results.json'), JSON.stringify(results, null, 2) + '\n');
