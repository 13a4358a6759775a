// netfilter-sim benchmarks: every figure from one run, compared inside the run.
//
//   npm run bench          (= npm run build && node --expose-gc bench/run.js)
//
// Prints one table and writes bench/results.json. Workloads: the Linkerd and Istio default pods,
// synthetic kube-proxy rule sets (100, 1,000, 10,000 services), the 5.5k-rule university router
// dump; the fast (lowered) evaluator, the reference interpreter over the model, and a hand-written
// "ideal" of the pods' rules (bench/ideal.js) inside the same namespace model. As root it also
// times the real kernel (bench/kernel.js). docs/performance.md explains each figure.
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { bench, do_not_optimize, run } from 'mitata';
import { Netns, parseIptablesSave, parsePacketSpec } from '../dist/index.js';
import { spawnSync } from 'node:child_process';
import { PacketState } from '../dist/engine/state/packet-state.js';
import { useEvaluator } from './ideal.js';
import { PODS, podOptions, validateIdeal } from './pods.js';
import { connectionRate, harnessCaseCost, kernelUnavailable } from './kernel.js';
import { kubeProxyNode, kubeProxyProbes, kubeProxyRules, kubeProxyServices } from './kube-proxy.js';
import { parseBench } from './parse.js';
import { routerPackets, routerSetup } from './router.js';
import { machineScaling } from './scaling.js';
import { longLived, openMemory } from './long-lived.js';
import { ip, mix as mixProbes } from './probes.js';

const ROOT = join(import.meta.dirname, '..');
const started = performance.now();
const log = (s) => process.stderr.write(`${s}\n`);

// ---------------------------------------------------------------------------------------------
// Workloads

const N_PROBES = 4096;

/** A deterministic mix of N_PROBES (or `n`) connection probes from weighted shapes. */
const mix = (shapes, n = N_PROBES) => mixProbes(shapes, n);

/** A bench body that cycles through `items`, flushing conntrack every 4,096 operations. */
function cycling(ns, items, op) {
  let i = 0;
  return () => {
    if ((++i & 4095) === 0) ns.flushConntrack();
    return do_not_optimize(op(items[i % items.length]));
  };
}

const same = (a, b) => a.outcome === b.outcome && a.address === b.address && a.port === b.port && a.originalDestination === b.originalDestination;

function validate(what, probes, makeA, makeB, full) {
  const a = makeA();
  const b = makeB();
  for (const p of probes) {
    const x = a.connect(p, { trace: full });
    const y = b.connect(p, { trace: full });
    if (full ? JSON.stringify(x) !== JSON.stringify(y) : !same(x, y)) {
      throw new Error(`${what}: results differ for ${JSON.stringify(p)}:\n${JSON.stringify(x)}\n${JSON.stringify(y)}`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Registration: each entry is one mitata bench; `ops` says what one call does.

const registered = [];

/**
 * Registers a bench that first runs `fn` for a while, right before mitata measures it: mitata
 * warms up with a call or two, while a workload that goes through the parser, the checker and the
 * lowering (a 10,000-service reference walk) needs thousands of calls before the
 * JIT has compiled it and the heap has grown to its working size (mitata's own calibration forces
 * collections, after which V8 shrinks the young generation): such a workload measured 2× slower
 * without it. No forced collection before a bench, for the same reason.
 */
function add(key, fnOrSetup, warmMs = 300, lazy = false, round = 1) {
  registered.push(key);
  bench(`${key}#${round}`, function* () {
    const fn = lazy ? fnOrSetup() : fnOrSetup;
    const t0 = performance.now();
    while (performance.now() - t0 < warmMs) for (let i = 0; i < 16; i++) fn();
    yield { bench: fn, heap: false };
  }).gc(false);
}

const SYN = 0x02;
const stubHost = {
  // Targets need the namespace for NAT; the decision-only benches answer for it the same way for
  // every evaluator, so they time the rule walk and nothing else.
  natSetup: () => 1,
  redirectAddress: (p) => (p.hook === 'OUTPUT' ? [0x7f000001] : [0x0a000002]),
  masqueradeAddress: () => null,
  tproxyLookup: () => null,
};
const packetHost = { addressType: () => 2, statisticRandom: () => false };

/** The first packet of each probe as the nat table sees it at OUTPUT or PREROUTING. */
function natPackets(probes) {
  return probes.map((pr) => {
    const [addr, port] = pr.dst.split(':');
    const d = addr.split('.').reduce((n, o) => ((n << 8) | Number(o)) >>> 0, 0);
    if (pr.from === 'local') {
      const p = new PacketState(packetHost, 4, 6, [0x0a000002], 41000, [d], Number(port), SYN);
      p.socket = { uid: pr.uid, gid: pr.gid ?? pr.uid, groups: [] };
      p.hook = 'OUTPUT';
      const lo = d >>> 24 === 127 || d === 0x0a000002;
      p.outIface = lo ? 'lo' : 'eth0';
      p.outIndex = lo ? 1 : 2;
      return { hook: 3, p };
    }
    const s = pr.src.split('.').reduce((n, o) => ((n << 8) | Number(o)) >>> 0, 0);
    const p = new PacketState(packetHost, 4, 6, [s], 40000, [d], Number(port), SYN);
    p.hook = 'PREROUTING';
    p.inIface = 'eth0';
    p.inIndex = 2;
    return { hook: 0, p };
  });
}

const NAT = 2;

function registerPod(name, pod) {
  const probes = mix(pod.shapes);
  log(`${pod.title}: checking the fast evaluator, the reference and the ideal agree on ${probes.length} probes`);
  validate(`${name} fast vs reference`, probes.slice(0, 512), () => new Netns(podOptions(pod)), () => new Netns(podOptions(pod, { evaluator: 'reference' })), true);
  validate(`${name} fast vs ideal`, probes, () => new Netns(podOptions(pod)), () => useEvaluator(new Netns(podOptions(pod)), pod.ideal), false);
  // The evaluators are compared on the namespace path itself: the mix is cycled, so the outcome
  // cache would replay most of it (the reference has none); it is timed on its own below.
  const evaluators = {
    fast: () => new Netns(podOptions(pod, { outcomeCache: false })),
    reference: () => new Netns(podOptions(pod, { evaluator: 'reference' })),
    ideal: () => useEvaluator(new Netns(podOptions(pod, { outcomeCache: false })), pod.ideal),
  };
  log(`${pod.title}: checking the hand-written namespace agrees with the fast path (but for source ports)`);
  validateIdeal(`${name} fast vs ideal namespace`, [...probes, ...mix([[1, () => pod.repeatProbe]], 64)], () => new Netns(podOptions(pod)), pod.idealPod);
  const specs = pod.packets.map((t) => parsePacketSpec(t));
  const packets = natPackets(probes.slice(0, 256));
  // Two rounds, interleaved; each figure is the better of its two (this machine drifts by 10-20 %
  // from one second to the next, and the variants of a comparison should meet the same drift).
  for (const round of [1, 2]) {
    for (const [ev, make] of Object.entries(evaluators)) {
      const ns = make();
      add(`${name}/connect/${ev}/off`, cycling(ns, probes, (p) => ns.connect(p, { trace: false })), 300, false, round);
    }
    for (const ev of ['fast', 'reference']) {
      const ns = evaluators[ev]();
      add(`${name}/connect/${ev}/on`, cycling(ns, probes, (p) => ns.connect(p)), 300, false, round);
    }
    for (const [ev, make] of Object.entries(evaluators)) {
      const ns = make();
      add(`${name}/packet/${ev}/off`, cycling(ns, specs, (p) => ns.trace(p, { trace: false })), 300, false, round);
    }
    for (const ev of ['fast', 'reference']) {
      const ns = evaluators[ev]();
      add(`${name}/packet/${ev}/on`, cycling(ns, specs, (p) => ns.trace(p)), 300, false, round);
    }
    // The nat decision alone: one table walk on a prepared first packet.
    const tables = { fast: evaluators.fast().kernel.ev4, reference: evaluators.reference().kernel.ev4, ideal: pod.ideal };
    for (const [ev, t] of Object.entries(tables)) {
      let i = 0;
      add(`${name}/decision/${ev}/off`, () => {
        const x = packets[i++ & 255];
        return do_not_optimize(t.doTable(NAT, x.hook, x.p, stubHost, null));
      }, 300, false, round);
    }
    {
      const idealPod = pod.idealPod();
      add(`${name}/connect/idealns/off`, cycling(idealPod, probes, (p) => idealPod.connect(p)), 300, false, round);
      const cached = new Netns(podOptions(pod));
      add(`${name}/connect/cached/off`, cycling(cached, probes, (p) => cached.connect(p, { trace: false })), 300, false, round);
    }
    // One probe, repeated: served by the outcome cache after its first connection.
    const repeated = mix([[1, () => pod.repeatProbe]]);
    for (const [ev, make] of [['fast', () => new Netns(podOptions(pod))], ['nocache', () => new Netns(podOptions(pod, { outcomeCache: false }))], ['idealns', pod.idealPod]]) {
      const ns = make();
      add(`${name}/repeat/${ev}/off`, cycling(ns, repeated, ev === 'idealns' ? (p) => ns.connect(p) : (p) => ns.connect(p, { trace: false })), 300, false, round);
    }
    if (pod.spreadProbe) {
      // The namespace path (the outcome cache off: the cycled addresses would repeat).
      const spread = mix([[1, pod.spreadProbe]]);
      const ns = evaluators.fast();
      add(`${name}/spread/fast/off`, cycling(ns, spread, (p) => ns.connect(p, { trace: false })), 300, false, round);
    }
  }
}

const KUBE_SIZES = [100, 1000, 10000];

function registerKubeProxy() {
  // The namespaces are built right before their benches and dropped after them, so that the large
  // ones are not in the heap (and in every collection) while the other workloads are timed.
  const info = {};
  for (const n of KUBE_SIZES) {
    const services = kubeProxyServices(n);
    const probes = kubeProxyProbes(services, N_PROBES);
    let state = null;
    const get = () => {
      if (state !== null) return state;
      const text = kubeProxyRules(services);
      const t0 = performance.now();
      const ruleset = parseIptablesSave(text, { family: 4, mode: 'lenient' }).ruleset;
      const fast = new Netns(kubeProxyNode(ruleset));
      info[n] = { services: n, rules: (text.match(/^-A /gm) ?? []).length, loadMs: performance.now() - t0 };
      log(`kube-proxy ${n} services (${info[n].rules} rules): checking fast and reference agree`);
      validate(`kube-proxy ${n}`, probes.slice(0, 64), () => new Netns(kubeProxyNode(ruleset)), () => new Netns(kubeProxyNode(ruleset, { evaluator: 'reference' })), true);
      state = { fast, ref: new Netns(kubeProxyNode(ruleset, { evaluator: 'reference' })), fastOn: new Netns(kubeProxyNode(ruleset)) };
      return state;
    };
    add(`kube${n}/connect/fast/off`, () => {
      const { fast } = get();
      return cycling(fast, probes, (p) => fast.connect(p, { trace: false }));
    }, 300, true);
    add(`kube${n}/connect/fast/on`, () => {
      const { fastOn } = get();
      return cycling(fastOn, probes, (p) => fastOn.connect(p));
    }, 300, true);
    add(`kube${n}/connect/reference/off`, () => {
      const { ref } = get();
      state = null;
      return cycling(ref, probes, (p) => ref.connect(p, { trace: false }));
    }, 1000, true);
  }
  return info;
}

function registerRouter() {
  // Built right before its benches, as the kube-proxy namespaces.
  const info = {};
  let state = null;
  const get = () => {
    if (state !== null) return state;
    const { options, nets } = routerSetup();
    const t0 = performance.now();
    const fast = new Netns(options);
    info.loadMs = performance.now() - t0;
    info.rules = (options.rules.match(/^-A /gm) ?? []).length;
    info.interfaces = Object.keys(options.interfaces).length;
    const ref = new Netns({ ...options, evaluator: 'reference' });
    const specs = routerPackets(nets, N_PROBES).map((t) => parsePacketSpec(t));
    log('router: checking fast and reference agree');
    for (const p of specs.slice(0, 256)) {
      if (JSON.stringify(fast.trace(p)) !== JSON.stringify(ref.trace(p))) throw new Error(`router: fast and reference differ on ${JSON.stringify(p)}`);
    }
    state = { fast, ref, specs };
    return state;
  };
  const keys = [];
  for (const ev of ['fast', 'reference']) for (const t of ['off', 'on']) keys.push([ev, t]);
  keys.forEach(([ev, t], i) => {
    add(`router/packet/${ev}/${t}`, () => {
      const { fast, ref, specs } = get();
      if (i === keys.length - 1) state = null;
      const ns = ev === 'fast' ? fast : ref;
      return cycling(ns, specs, (p) => ns.trace(p, { trace: t === 'on' }));
    }, 300, true);
  });
  return info;
}

// ---------------------------------------------------------------------------------------------
// Memory and threads (outside mitata)

function heap() {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function fullGc() {
  if (typeof globalThis.gc === 'function') for (let i = 0; i < 4; i++) globalThis.gc();
}

/** Heap (JS heap + typed-array memory) per tracked connection, with `n` connections. */
function conntrackMemory(n) {
  if (typeof globalThis.gc !== 'function') return { skipped: 'run with --expose-gc' };
  const pod = PODS.linkerd;
  // Room for every connection: the default nf_conntrack_max (262,144) would drop the rest.
  const ns = new Netns(podOptions(pod, { conntrackMax: n + 1 }));
  ns.connect({ from: 'remote', src: '10.2.0.1', dst: '10.0.0.2:8080' });
  ns.flushConntrack();
  fullGc();
  const m0 = heap();
  const t0 = performance.now();
  // Inbound connections (redirected to the proxy's 4143), each from its own client address.
  for (let i = 0; i < n; i++) ns.connect({ from: 'remote', src: ip(0x0a020000 + i), dst: '10.0.0.2:8080' }, { trace: false });
  const seconds = (performance.now() - t0) / 1000;
  fullGc();
  const m1 = heap();
  const entries = ns.kernel.conntrack.size;
  // Without the accepted sockets, what is left is conntrack (and the route cache).
  ns.kernel.sockets.clearConnections();
  fullGc();
  const m2 = heap();
  return {
    connections: n,
    entries,
    seconds,
    bytesPerEntry: (m2 - m0) / entries,
    bytesPerConnection: (m1 - m0) / entries,
    socketBytesPerConnection: (m1 - m2) / entries,
  };
}

/**
 * The batch API, in a process of its own (bench/batch.js): this process's heap, grown by the runs
 * before, would otherwise slow the calling thread that unpacks the results.
 */
function batchRates() {
  return childFigures(['--expose-gc'], 'bench/batch.js', ['100000', 'off,on,read']);
}

/** The cost per generated case, in a process of its own (bench/generated.js says why). */
function generatedCaseCost() {
  return childFigures([], 'bench/generated.js', []);
}

/** The pods' mixes against IdealPod, in a process of its own (bench/mix.js says why). */
function mixAlone() {
  return childFigures(['--expose-gc'], 'bench/mix.js', []);
}

/** Runs a bench script in a process of its own and reads the figures it prints with --json. */
function childFigures(nodeFlags, script, args) {
  const child = spawnSync(process.execPath, [...nodeFlags, join(ROOT, script), ...args, '--json'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (child.status !== 0) throw new Error(`${script} failed: ${child.stderr}`);
  return JSON.parse(child.stdout);
}

// ---------------------------------------------------------------------------------------------
// The run

const machine = {
  node: process.version,
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: availableParallelism(),
  memoryGB: Math.round(totalmem() / 2 ** 30),
  platform: `${process.platform} ${process.arch}`,
  date: new Date().toISOString(),
};
log(`netfilter-sim bench: Node ${machine.node}, ${machine.cores} × ${machine.cpu}`);

for (const [name, pod] of Object.entries(PODS)) registerPod(name, pod);
const router = registerRouter();
const kube = registerKubeProxy();

log(`timing ${registered.length} benchmarks with mitata (${new Set(registered).size} figures)`);
const stats = await run({ format: 'quiet', colors: false });
// ns per operation: mitata's mean over its samples, the lower of a figure's rounds.
const avg = {};
const rounds = {};
for (const b of stats.benchmarks) {
  const s = b.runs[0]?.stats;
  const key = b.alias.replace(/#\d+$/, '');
  if (!s) {
    log(`${b.alias}: ${b.runs[0]?.error?.stack ?? 'no result'}`);
    continue;
  }
  (rounds[key] ??= []).push(s.avg);
  avg[key] = Math.min(avg[key] ?? Infinity, s.avg);
}

// What disturbs the heap, the JIT or the machine comes after the mitata run, and the real kernel
// last: tearing down its namespaces (tens of thousands of connections) keeps a core busy for a
// while after it.
let generated = null;
log('generated cases: the simulator per case of the differential suite (a process of its own)');
try {
  generated = generatedCaseCost();
} catch (e) {
  log(`generated cases unavailable: ${e.message}`);
}
let mixes = null;
log('the pods\' mixes against the hand-written namespace (a process of its own)');
try {
  mixes = mixAlone();
} catch (e) {
  log(`the mixes alone unavailable: ${e.message}`);
}
log('threads: the batch API with one and two worker threads');
const batch = batchRates();
log('threads: one process, then two at once, running the same loop');
const scaling = await machineScaling(2);
log('memory: one million connections tracked');
const memory = conntrackMemory(1_000_000);
log('long-lived namespace: one million connections opened and closed, never flushed');
const long = longLived(1_000_000);
fullGc();
long.open = openMemory(50_000);
fullGc();

log('parse: the router dump, next to iptables-restore --test');
const parse = await parseBench({ quiet: true });

const kernelWhyNot = kernelUnavailable();
let kernel = { skipped: kernelWhyNot };
if (kernelWhyNot === null) {
  log('kernel: the differential harness on 8 generated cases, one after another');
  const harness = await harnessCaseCost({ cases: 8 });
  log('kernel: TCP connections through the Linkerd default rules (C client and server, 3 × 1 s)');
  const rate = connectionRate({ rulesFile: join(ROOT, 'test/fixtures/linkerd/injected-default.save') });
  kernel = { connections: rate, harness };
}

// ---------------------------------------------------------------------------------------------
// Figures, ratios, the table

const perSec = (key) => (avg[key] ? 1e9 / avg[key] : NaN);
const us = (key) => (avg[key] ? avg[key] / 1000 : NaN);
const fmtRate = (x) => (Number.isFinite(x) ? `${Math.round(x).toLocaleString('en-US')} /s` : '—');
const fmtUs = (x) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US')} µs` : '—');
const fmtX = (x) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US')}×` : '—');
const rows = [];
const targets = [];
const row = (workload, figure, value, target = '', met = null) => rows.push({ workload, figure, value, target, met });
function goal(workload, figure, ratio, op, bound, extra = '') {
  const met = Number.isFinite(ratio) ? (op === '≥' ? ratio >= bound : ratio <= bound) : null;
  const target = `${op} ${bound}×`;
  targets.push({ workload, figure, ratio, target, met });
  row(workload, figure + extra, fmtX(ratio), target, met);
}

for (const [name, pod] of Object.entries(PODS)) {
  const w = pod.title;
  for (const t of ['off', 'on']) {
    const tr = t === 'off' ? 'no trace' : 'trace';
    row(w, `connections/s, ${tr}: fast`, fmtRate(perSec(`${name}/connect/fast/${t}`)));
    row(w, `connections/s, ${tr}: reference`, fmtRate(perSec(`${name}/connect/reference/${t}`)));
    if (t === 'off') row(w, `connections/s, ${tr}: ideal (hand-written rules)`, fmtRate(perSec(`${name}/connect/ideal/off`)));
  }
  for (const t of ['off', 'on']) {
    const tr = t === 'off' ? 'no trace' : 'trace';
    row(w, `packets/s, ${tr}: fast`, fmtRate(perSec(`${name}/packet/fast/${t}`)));
    row(w, `packets/s, ${tr}: reference`, fmtRate(perSec(`${name}/packet/reference/${t}`)));
    if (t === 'off') row(w, `packets/s, ${tr}: ideal`, fmtRate(perSec(`${name}/packet/ideal/off`)));
  }
  const ns = (ev) => (avg[`${name}/decision/${ev}/off`] ?? NaN).toFixed(0);
  row(w, 'ns per nat decision (one table walk): fast / reference / ideal', `${ns('fast')} / ${ns('reference')} / ${ns('ideal')}`);
  const speedup = avg[`${name}/connect/reference/off`] / avg[`${name}/connect/fast/off`];
  if (name === 'linkerd') goal(w, 'fast ÷ reference, connections, no trace', speedup, '≥', 3);
  else row(w, 'fast ÷ reference, connections, no trace', fmtX(speedup));
  row(w, 'fast ÷ reference, packets, no trace', fmtX(avg[`${name}/packet/reference/off`] / avg[`${name}/packet/fast/off`]));
  row(w, 'fast ÷ reference, nat decision alone', fmtX(avg[`${name}/decision/reference/off`] / avg[`${name}/decision/fast/off`]));
  goal(w, 'fast cost ÷ ideal cost, connections, no trace', avg[`${name}/connect/fast/off`] / avg[`${name}/connect/ideal/off`], '≤', 2);
  goal(w, 'fast cost, trace ÷ no trace, connections', avg[`${name}/connect/fast/on`] / avg[`${name}/connect/fast/off`], '≤', 2);
  row(w, 'connections/s, no trace: fast with the outcome cache (the mix cycled)', fmtRate(perSec(`${name}/connect/cached/off`)));
  row(w, 'connections/s, no trace: ideal namespace (hand-written connection)', fmtRate(perSec(`${name}/connect/idealns/off`)));
  goal(w, 'fast cost ÷ ideal namespace cost, connections, no trace', avg[`${name}/connect/fast/off`] / avg[`${name}/connect/idealns/off`], '≤', 1.5);
  for (const mode of ['kept', 'new']) {
    const alone = mixes?.[name]?.[mode];
    const what = `the mix in a process of its own, namespaces ${mode}`;
    if (!alone) {
      row(w, what, '—');
      continue;
    }
    row(w, `${what}, µs a connection: fast / ideal namespace`, `${fmtUs(alone.usPerConnection.fast)} / ${fmtUs(alone.usPerConnection.ideal)}`);
    goal(w, `fast cost ÷ ideal namespace cost, ${what}`, alone.ratio, '≤', 1.5);
  }
  row(w, 'one probe repeated, connections/s: fast (outcome cache)', fmtRate(perSec(`${name}/repeat/fast/off`)));
  row(w, 'one probe repeated, connections/s: fast without the cache', fmtRate(perSec(`${name}/repeat/nocache/off`)));
  row(w, 'one probe repeated, connections/s: ideal namespace', fmtRate(perSec(`${name}/repeat/idealns/off`)));
  goal(w, 'fast cost ÷ ideal namespace cost, one probe repeated', avg[`${name}/repeat/fast/off`] / avg[`${name}/repeat/idealns/off`], '≤', 1.5);
  goal(w, 'fast cost ÷ ideal cost, packets, no trace', avg[`${name}/packet/fast/off`] / avg[`${name}/packet/ideal/off`], '≤', 2);
  row(w, 'fast cost ÷ ideal cost, nat decision alone', fmtX(avg[`${name}/decision/fast/off`] / avg[`${name}/decision/ideal/off`]));
}

for (const n of KUBE_SIZES) {
  const w = `kube-proxy, ${n.toLocaleString('en-US')} services (${kube[n].rules.toLocaleString('en-US')} rules)`;
  row(w, 'µs per connection, no trace: fast', fmtUs(us(`kube${n}/connect/fast/off`)));
  row(w, 'µs per connection, no trace: reference', fmtUs(us(`kube${n}/connect/reference/off`)));
  row(w, 'µs per connection, trace: fast', fmtUs(us(`kube${n}/connect/fast/on`)));
  if (n === 10000) goal(w, 'fast ÷ reference, connections, no trace', avg[`kube${n}/connect/reference/off`] / avg[`kube${n}/connect/fast/off`], '≥', 10);
  else row(w, 'fast ÷ reference, connections, no trace', fmtX(avg[`kube${n}/connect/reference/off`] / avg[`kube${n}/connect/fast/off`]));
}
goal('kube-proxy', 'cost growth 100 → 10,000 services: fast', avg['kube10000/connect/fast/off'] / avg['kube100/connect/fast/off'], '≤', 3);
row('kube-proxy', 'cost growth 100 → 10,000 services: reference', fmtX(avg['kube10000/connect/reference/off'] / avg['kube100/connect/reference/off']));

const rw = `router dump (${router.rules.toLocaleString('en-US')} rules, ${router.interfaces} interfaces)`;
for (const t of ['off', 'on']) {
  const tr = t === 'off' ? 'no trace' : 'trace';
  row(rw, `packets/s, ${tr}: fast`, fmtRate(perSec(`router/packet/fast/${t}`)));
  row(rw, `packets/s, ${tr}: reference`, fmtRate(perSec(`router/packet/reference/${t}`)));
}
row(rw, 'fast ÷ reference, packets, no trace', fmtX(avg['router/packet/reference/off'] / avg['router/packet/fast/off']));
row(rw, 'parse: MB/s (parse + print)', `${parse.parseMBps.toFixed(1)} (${parse.fmtMBps.toFixed(1)})`);
row(rw, 'parse: iptables-restore --test, MB/s', parse.kernel.MBps ? parse.kernel.MBps.toFixed(1) : `— (${parse.kernel.skipped})`);

if (memory.skipped) row('conntrack', 'bytes per entry', `— (${memory.skipped})`);
else {
  row('conntrack', `bytes per entry, ${memory.entries.toLocaleString('en-US')} tracked`, Math.round(memory.bytesPerEntry).toLocaleString('en-US'), '≤ 512', memory.bytesPerEntry <= 512);
  row('conntrack', 'bytes per connection with its accepted socket', Math.round(memory.bytesPerConnection).toLocaleString('en-US'));
  targets.push({ workload: 'conntrack', figure: 'bytes per entry', ratio: memory.bytesPerEntry, target: '≤ 512', met: memory.bytesPerEntry <= 512 });
}

{
  const w = 'long-lived namespace (Linkerd pod, close: true, 10 ms apart, never flushed)';
  row(w, `wrong outcomes of ${long.total.toLocaleString('en-US')}`, String(long.wrong), '0', long.wrong === 0);
  row(w, 'µs per connection: first 10k / 10k to 100k / last 10k of 1M', `${fmtUs(long.first10k)} / ${fmtUs(long.at100k)} / ${fmtUs(long.last10k)}`);
  goal(w, 'last 10k ÷ first 10k', long.last10k / long.first10k, '≤', 1.5);
  row(w, `bytes per live entry with its socket (${long.liveEntries.toLocaleString('en-US')} entries, ${long.liveSockets.toLocaleString('en-US')} sockets)`, Math.round(long.steadyBytesPerLiveEntry).toLocaleString('en-US'));
  if (!long.open.skipped) row(w, `bytes per open connection (entry + both sockets, ${long.open.open.toLocaleString('en-US')} open)`, Math.round(long.open.bytesPerConnection).toLocaleString('en-US'), '≤ 512', long.open.bytesPerConnection <= 512);
}

row('batch (Linkerd pod)', 'connections/s, no trace: in this thread (Netns.connect)', fmtRate(perSec('linkerd/connect/fast/off')));
for (const t of ['off', 'on', 'read']) {
  const tr = t === 'off' ? 'no trace' : t === 'on' ? 'trace' : 'trace, every result\'s events read';
  row('batch (Linkerd pod)', `connections/s, ${tr}: 1 worker thread`, fmtRate(batch[`${t}/1`].rate));
  row('batch (Linkerd pod)', `connections/s, ${tr}: 2 worker threads`, fmtRate(batch[`${t}/2`].rate));
  const r = batch[`${t}/2`].rate / batch[`${t}/1`].rate;
  if (t !== 'read') goal('batch (Linkerd pod)', `2 threads ÷ 1 thread, ${tr}`, r, '≥', 1.7);
  else row('batch (Linkerd pod)', `2 threads ÷ 1 thread, ${tr}`, fmtX(r));
}
row('batch (Linkerd pod)', 'this machine: 2 processes ÷ 1 process, same loop', fmtX(scaling.ratio));

if (kernel.connections) {
  const k = kernel.connections.rate;
  const sim = perSec('linkerd/repeat/fast/off');
  const spread = perSec('linkerd/spread/fast/off');
  row('kernel', 'TCP connections/s through the Linkerd rules (C client + server)', fmtRate(k));
  row('kernel', 'the same connections in the simulator: fast, no trace', fmtRate(sim));
  goal('kernel', 'simulator ÷ kernel, connections/s', sim / k, '≥', 100);
  row('kernel', 'the same, each to another Service address: fast, no trace, no cache', fmtRate(spread));
  row('kernel', 'simulator ÷ kernel, each to another Service address', fmtX(spread / k));
  const h = kernel.harness;
  if (h.skipped) row('kernel', 'harness cost per generated case', `— (${h.skipped})`);
  else {
    row('kernel', `harness: ms per generated case (${h.cases} cases, ${h.probes} probes)`, `${h.msPerCase.toFixed(0)} ms`);
    if (generated === null) row('kernel', 'simulator per generated case', '— (see the log)');
    else {
      row('kernel', 'simulator: µs per generated case (parse, check, probes with traces)', fmtUs(generated.usPerCase.on));
      row('kernel', 'simulator: µs per generated case (parse, check, probes, no traces)', fmtUs(generated.usPerCase.off));
      goal('kernel', 'harness ÷ simulator, per generated case, with traces', (h.msPerCase * 1e3) / generated.usPerCase.on, '≥', 1000);
      row('kernel', 'harness ÷ simulator, per generated case, no traces', fmtX((h.msPerCase * 1e3) / generated.usPerCase.off));
    }
  }
} else {
  row('kernel', 'kernel figures', `— (${kernel.skipped})`);
  if (generated !== null) row('kernel', 'simulator: µs per generated case (parse, check, probes with traces)', fmtUs(generated.usPerCase.on));
}

function printTable() {
  const cells = (r) => [r.workload, r.figure, r.value, r.target, r.met === null ? '' : r.met ? 'yes' : 'NO'];
  const all = [['workload', 'figure', 'value', 'target', 'met'], ...rows.map(cells)];
  const width = all[0].map((_, i) => Math.max(...all.map((c) => String(c[i]).length)));
  const line = (c) => c.map((x, i) => (i === 2 ? String(x).padStart(width[i]) : String(x).padEnd(width[i]))).join('  ').trimEnd();
  const out = [`netfilter-sim bench — Node ${machine.node}, ${machine.cores} × ${machine.cpu}, ${machine.platform}, ${machine.date.slice(0, 10)}`, line(all[0]), width.map((w) => '-'.repeat(w)).join('  ')];
  let last = '';
  for (const c of all.slice(1)) {
    const shown = [...c];
    if (c[0] === last) shown[0] = '';
    last = c[0];
    out.push(line(shown));
  }
  console.log(out.join('\n'));
}

printTable();
const seconds = (performance.now() - started) / 1000;
console.log(`(${seconds.toFixed(0)} s; raw figures in bench/results.json)`);

const results = {
  machine,
  seconds,
  nsPerOp: avg,
  nsPerOpRounds: rounds,
  pods: Object.fromEntries(Object.keys(PODS).map((n) => [n, { probes: N_PROBES }])),
  kubeProxy: kube,
  router,
  parse,
  memory,
  longLived: long,
  batch,
  scaling,
  kernel,
  generated,
  mixes,
  targets,
  table: rows,
};
writeFileSync(join(import.meta.dirname, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
