// A cluster's worth of namespaces: N pods of five kinds, each with its mesh's rules (or none),
// built one after another and connected once each, against IdealPod (bench/ideal.js) made the
// same way. What a property test of generated pods, `explore` and a cluster snapshot pay: a
// namespace per pod before its first connection.
//
//   npm run build && node --expose-gc bench/cluster.js [--sizes 100,1000,10000] [--json]
//
// The kinds: the Linkerd default pod, Linkerd's control-plane pod (outbound 443 and 6443
// skipped), a Linkerd pod with CNI skip annotations (outbound 9999, inbound 80 and 8080 skipped),
// the Istio default sidecar pod, and a pod without a mesh (no rules, a listener on 8080). Pod i is
// kind i mod 5, with eth0 at an address of its own in 10.244/16, and makes one connection: probe
// i / 5 of its kind's mix (the shapes of bench/probes.js: the app to a Service, the proxy out,
// loopback, inbound to the app and to the proxy's admin port).
//
// Each size runs in a process of its own (this script with --child N), so that its heap and
// peak resident memory are its own. There, after a warm-up (the kinds built and connected a
// few hundred times, on both sides, as pods with addresses of their own), two rounds alternate
// the sides (Netns first, then IdealPod first): build N namespaces, then one connection through
// each. Per side: µs per namespace built and per first connection (the better round), heap bytes
// per namespace (JS heap and typed arrays, after full collections, with the N namespaces alive,
// before and after their connection). Every Netns result must equal IdealPod's (but for the source port the side picked).
// "Cold" is a namespace whose rule text the process has not seen (a comment line makes each
// text new): what the first pod of a kind pays.
//
// Each figure is wall time and, beside it, the process's CPU time (user + system, which includes
// the collector's helper threads): on a machine shared with other work the wall time includes
// waiting for a core.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Netns } from '../dist/index.js';
import { IdealPod, istioIdealPod } from './ideal.js';
import { ISTIO_SHAPES, LINKERD_SHAPES, client, ext, ip, mix, svc } from './probes.js';

const ROOT = join(import.meta.dirname, '..');
const args = process.argv.slice(2);
const JSON_OUT = args.includes('--json');
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const fixture = (path) => readFileSync(join(ROOT, 'test/fixtures', path), 'utf8');

const LINKERD_LISTEN = [4140, 4143, 4191, 8080];
/** The Linkerd pods' nat rules by hand: the outbound ports skipped, the inbound ports skipped. */
const linkerdLike = (out, inb) => ({
  output: (uid, gid, lo, dst, dport) => (uid === 2102 || lo || out.includes(dport) ? 0 : 4140),
  prerouting: (dport) => (inb.includes(dport) ? 0 : 4143),
});
/** The Linkerd mix with the pod's own address (bench/probes.js's LINKERD_SHAPES, to `pod`). */
const linkerdShapes = (pod) => [
  [4, (i) => ({ from: 'local', uid: 1000, dst: `${svc(i)}:80` })],
  [2, (i) => ({ from: 'local', uid: 2102, dst: `${ext(i)}:8080` })],
  [1, (i) => ({ from: 'local', uid: 1000, dst: `${svc(i)}:4567` })],
  [1, () => ({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' })],
  [3, (i) => ({ from: 'remote', src: client(i), dst: `${pod}:8080` })],
  [1, (i) => ({ from: 'remote', src: client(i), dst: `${pod}:4191` })],
];
const istioShapes = (pod) => [
  [4, (i) => ({ from: 'local', uid: 1000, dst: `${svc(i)}:80` })],
  [2, (i) => ({ from: 'local', uid: 1337, gid: 1337, dst: `${ext(i)}:8080` })],
  [1, () => ({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' })],
  [1, () => ({ from: 'local', uid: 1337, gid: 1337, dst: `${pod}:8080` })],
  [3, (i) => ({ from: 'remote', src: client(i), dst: `${pod}:8080` })],
  [1, (i) => ({ from: 'remote', src: client(i), dst: `${pod}:15090` })],
];
if (LINKERD_SHAPES.length !== 6 || ISTIO_SHAPES.length !== 6) throw new Error('bench/probes.js changed its shapes: change these too');

const KINDS = [
  { name: 'linkerd-default', text: fixture('linkerd/injected-default.save'), listen: LINKERD_LISTEN, ideal: linkerdLike([4567, 4568], [4190, 4191, 4567, 4568]), shapes: linkerdShapes },
  { name: 'linkerd-control-plane', text: fixture('linkerd/injected-control-plane.save'), listen: LINKERD_LISTEN, ideal: linkerdLike([443, 6443], [4190, 4191, 4567, 4568]), shapes: linkerdShapes },
  { name: 'linkerd-cni-skip', text: fixture('linkerd/cni-skip-outbound-annotation.save'), listen: LINKERD_LISTEN, ideal: linkerdLike([9999], [4191, 4190, 80, 8080]), shapes: linkerdShapes },
  { name: 'istio-sidecar', text: fixture('istio/kernel-save/derived/injected-sidecar-default.save'), listen: [15001, 15006, 15090, 8080], ideal: null, shapes: istioShapes },
  { name: 'no-mesh', text: null, listen: [8080], ideal: { output: () => 0, prerouting: () => 0 }, conntrack: false, shapes: linkerdShapes },
];

/** Pod i's address: 10.244.0.2 on, one per pod. */
const podAddr = (i) => ((10 << 24) | (244 << 16)) + 2 + i;
/** The warm-up's pods: addresses no measured pod has (so that nothing the warm-up built is shared with them). */
const WARM = 60000;

/** Probe j of a mix of `shapes` (bench/probes.js's mix(shapes, j + 1)[j], without the first j). */
function nthProbe(shapes, j) {
  const total = shapes.reduce((s, [w]) => s + w, 0);
  let k = (j * 7919) % total;
  for (const [w, make] of shapes) {
    if (k < w) return make(j);
    k -= w;
  }
  throw new Error('unreachable');
}

/** Pod i: its kind, address, options for Netns, the hand-written pod, and its one probe. */
function pod(i, cold = '') {
  const kind = KINDS[i % KINDS.length];
  const addr = podAddr(i);
  const text = ip(addr);
  const options = { listen: kind.listen, interfaces: { eth0: [`${text}/16`] } };
  if (kind.text !== null) options.rules = cold + kind.text;
  const j = Math.floor(i / KINDS.length);
  const probe = nthProbe(kind.shapes(text), j);
  if (i < 50 && JSON.stringify(probe) !== JSON.stringify(mix(kind.shapes(text), j + 1)[j])) throw new Error('nthProbe differs from mix');
  return { kind, addr, options, probe };
}

function idealOf(p) {
  const k = p.kind;
  if (k.ideal === null) {
    // The Istio pod's rules are those of istioIdealPod; only the address differs.
    const base = istioIdealPod();
    return new IdealPod({ listen: k.listen, output: base.output, prerouting: base.prerouting, pod: p.addr });
  }
  return new IdealPod({ listen: k.listen, ...k.ideal, pod: p.addr, conntrack: k.conntrack ?? true });
}

const SIDES = {
  fast: { make: (p) => new Netns(p.options), connect: (ns, probe) => ns.connect(probe, { trace: false }) },
  ideal: { make: idealOf, connect: (ns, probe) => ns.connect(probe) },
};

const heap = () => {
  globalThis.gc();
  globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
const cpuMs = (c) => (c.user + c.system) / 1000;

/** What a round keeps alive while its heap is measured (a local the JIT sees unused may be freed). */
let alive = null;

/** Builds n pods' namespaces with one side, then connects each once. */
function round(side, pods) {
  const n = pods.length;
  const base = heap();
  let c = process.cpuUsage();
  let t = performance.now();
  const nss = new Array(n);
  alive = nss;
  for (let i = 0; i < n; i++) nss[i] = side.make(pods[i]);
  const build = { wall: performance.now() - t, cpu: cpuMs(process.cpuUsage(c)) };
  const built = heap();
  c = process.cpuUsage();
  t = performance.now();
  const results = new Array(n);
  for (let i = 0; i < n; i++) results[i] = side.connect(nss[i], pods[i].probe);
  const connect = { wall: performance.now() - t, cpu: cpuMs(process.cpuUsage(c)) };
  const connected = heap();
  alive = null;
  return { build, connect, bytesBuilt: (built - base) / n, bytesConnected: (connected - base) / n, results };
}

const strip = (r) => JSON.stringify({ ...r, source: r.source === null ? null : r.source.replace(/:\d+$/, '') });

function child(n) {
  const pods = Array.from({ length: n }, (_, i) => pod(i));
  // Warm-up: every kind built and connected, on both sides, with probes of its mix.
  for (let k = 0; k < 300; k++) {
    const p = pod(WARM + k);
    for (const side of Object.values(SIDES)) side.connect(side.make(p), p.probe);
  }
  // A namespace whose rules this process has not read: the first pod of a kind.
  const cold = [];
  const warm = [];
  for (let k = 0; k < 20; k++) {
    const i = WARM + 300 + (k % KINDS.length === 4 ? k + 1 : k);
    const p = pod(i, `# cold ${k}\n`);
    let t = performance.now();
    new Netns(p.options);
    cold.push((performance.now() - t) * 1000);
    const q = pod(i + 100);
    t = performance.now();
    new Netns(q.options);
    warm.push((performance.now() - t) * 1000);
  }
  const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const rounds = { fast: [], ideal: [] };
  for (let r = 0; r < 2; r++) {
    for (const name of r === 0 ? ['fast', 'ideal'] : ['ideal', 'fast']) rounds[name].push(round(SIDES[name], pods));
  }
  for (let i = 0; i < n; i++) {
    const a = strip(rounds.fast[0].results[i]);
    const b = strip(rounds.ideal[0].results[i]);
    if (a !== b) throw new Error(`pod ${i} (${pods[i].kind.name}): Netns and IdealPod differ for ${JSON.stringify(pods[i].probe)}:\n${a}\n${b}`);
  }
  const out = { n, coldBuildUs: median(cold), warmBuildUs: median(warm) };
  for (const [name, rs] of Object.entries(rounds)) {
    const best = (f) => Math.min(...rs.map(f));
    out[name] = {
      buildUs: best((x) => x.build.wall) * 1000 / n,
      buildCpuUs: best((x) => x.build.cpu) * 1000 / n,
      connectUs: best((x) => x.connect.wall) * 1000 / n,
      connectCpuUs: best((x) => x.connect.cpu) * 1000 / n,
      totalMs: best((x) => x.build.wall + x.connect.wall),
      totalCpuMs: best((x) => x.build.cpu + x.connect.cpu),
      bytesBuilt: rs[0].bytesBuilt,
      bytesConnected: rs[0].bytesConnected,
      rounds: rs.map((x) => ({ build: x.build, connect: x.connect, bytesBuilt: x.bytesBuilt, bytesConnected: x.bytesConnected })),
    };
  }
  out.maxRssMB = process.resourceUsage().maxRSS / 1024;
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

if (args[0] === '--child') {
  child(Number(args[1]));
} else {
  const sizes = arg('sizes', '100,1000,10000').split(',').map(Number);
  const all = [];
  const f = (x, d = 1) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
  for (const n of sizes) {
    const c = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', String(n)], { encoding: 'utf8', maxBuffer: 1 << 24 });
    if (c.status !== 0) throw new Error(`cluster.js --child ${n} failed: ${c.stderr}`);
    const r = JSON.parse(c.stdout);
    all.push(r);
    const { fast, ideal } = r;
    say(`${f(n, 0)} pods of ${KINDS.length} kinds (peak RSS ${f(r.maxRssMB, 0)} MB, both sides and the warm-up):`);
    say(`  µs per namespace built     Netns ${f(fast.buildUs)} (cpu ${f(fast.buildCpuUs)})   IdealPod ${f(ideal.buildUs, 2)} (cpu ${f(ideal.buildCpuUs, 2)})   ${f(fast.buildUs / ideal.buildUs)}×`);
    say(`  µs per first connection    Netns ${f(fast.connectUs)} (cpu ${f(fast.connectCpuUs)})   IdealPod ${f(ideal.connectUs, 2)} (cpu ${f(ideal.connectCpuUs, 2)})   ${f(fast.connectUs / ideal.connectUs)}×`);
    say(`  bytes per namespace        Netns ${f(fast.bytesBuilt, 0)} built, ${f(fast.bytesConnected, 0)} connected   IdealPod ${f(ideal.bytesBuilt, 0)}, ${f(ideal.bytesConnected, 0)}   ${f(fast.bytesConnected / ideal.bytesConnected)}×`);
    say(`  all built and connected    Netns ${f(fast.totalMs, 0)} ms (cpu ${f(fast.totalCpuMs, 0)})   IdealPod ${f(ideal.totalMs, 0)} ms   ${f(fast.totalMs / ideal.totalMs)}×`);
    say(`  a namespace of a kind not seen before: ${f(r.coldBuildUs)} µs; of a kind seen before: ${f(r.warmBuildUs)} µs`);
  }
  if (JSON_OUT) process.stdout.write(`${JSON.stringify(all)}\n`);
}
