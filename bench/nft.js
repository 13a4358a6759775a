// nftables beside iptables, in one run:
//   1. the Istio sidecar pod with the injector's default flags, compiled once for iptables and once
//      with --native-nftables: connections/s through each (trace off, fast path);
//   2. kube-proxy's iptables mode and nftables mode at 100, 1,000 and 10,000 services: cost per
//      connection and how it grows with the number of services;
//   3. parse MB/s of the 10,000-service kube-proxy nft text next to `nft -c -f` on the same file
//      (when root, `nft` and `unshare` are available).
//
//   npm run build && node --expose-gc bench/nft.js        (writes bench/nft-results.json)
//
// Conditions every figure depends on: one thread; `trace: false`; probes cycle through a fixed
// list of 4,096 and the namespace's conntrack table is flushed after each pass of the list (so
// every probe is a connection's first packet, and the table stays small); the namespaces compared
// in one line are timed in interleaved rounds of at least 0.3 s after a warm-up, 5 each, and the
// best round is kept. Parse: the median of 5 runs; `nft -c -f`: one run (it takes about a
// minute on this file), process start and the kernel's dry run included. Before timing, the two forms of each
// workload are checked to give the same outcome, address and port for every probe they share.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Netns, compileIstio, parseIstioIptablesArgs, parseNftRuleset } from '../dist/index.js';
import { kubeProxyNftRules, kubeProxyNode, kubeProxyProbes, kubeProxyRules, kubeProxyServices } from './kube-proxy.js';
import { ISTIO_SHAPES } from './probes.js';

const log = (s) => process.stderr.write(`${s}\n`);
const N = 4096;

/**
 * Nanoseconds per connection for each namespace, timed in interleaved rounds (A, B, C, A, B, C, …)
 * of at least 0.3 s each, the best round kept: both sides of a ratio meet the same machine.
 */
function connectCosts(optionsList, probes) {
  const nss = optionsList.map((o) => new Netns(o));
  const round = (ns) => {
    let n = 0;
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < 300) {
      for (let i = 0; i < N; i++) ns.connect(probes[i], { trace: false });
      ns.flushConntrack();
      n += N;
      t = performance.now();
    }
    return ((t - t0) * 1e6) / n;
  };
  for (const ns of nss) round(ns);
  const best = nss.map(() => Infinity);
  for (let r = 0; r < 5; r++) nss.forEach((ns, k) => (best[k] = Math.min(best[k], round(ns))));
  return best;
}

function sameOutcomes(what, a, b, probes) {
  const x = new Netns(a);
  const y = new Netns(b);
  let differ = 0;
  for (const p of probes) {
    const r = x.connect(p, { trace: false });
    const s = y.connect(p, { trace: false });
    if (r.outcome !== s.outcome || r.port !== s.port || (r.outcome !== 'remote' && r.address !== s.address)) differ++;
  }
  if (differ > 0) throw new Error(`${what}: the iptables and nft forms disagree on ${differ} of ${probes.length} probes`);
}

// ---- 1. Istio sidecar pod ------------------------------------------------------------------
const wheel = ISTIO_SHAPES.flatMap(([w, f]) => Array.from({ length: w }, () => f));
const istioProbes = Array.from({ length: N }, (_, i) => wheel[i % wheel.length](i));
const ARGS = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020'];
const istioIpt = compileIstio(parseIstioIptablesArgs(ARGS)).restore.map((r) => r.text).join('');
const istioNft = compileIstio(parseIstioIptablesArgs([...ARGS, '--native-nftables'])).nft;
const listen = [15001, 15006, 15090, 8080];
log('istio: checking both forms agree');
sameOutcomes('Istio pod', { rules: istioIpt, listen }, { nft: istioNft, listen }, istioProbes);
log('istio: iptables form, native nft form, nft reference');
const [istioIptNs, istioNftNs, istioRefNs] = connectCosts([{ rules: istioIpt, listen }, { nft: istioNft, listen }, { nft: istioNft, listen, evaluator: 'reference' }], istioProbes);

// ---- 2. kube-proxy, both modes -------------------------------------------------------------
const kube = [];
for (const n of [100, 1000, 10000]) {
  const services = kubeProxyServices(n, 1);
  const probes = kubeProxyProbes(services, N, 7);
  const ipt = kubeProxyNode(kubeProxyRules(services));
  const nft = kubeProxyNode(undefined, { nft: kubeProxyNftRules(services) });
  if (n === 100) sameOutcomes('kube-proxy 100 services', ipt, nft, probes.filter((p) => !p.dst.startsWith('10.2.')));
  log(`kube-proxy ${n}: iptables mode, nftables mode${n <= 1000 ? ', nft reference' : ''}`);
  const [iptNs, nftNs, nftRefNs = null] = connectCosts(n <= 1000 ? [ipt, nft, { ...nft, evaluator: 'reference' }] : [ipt, nft], probes);
  kube.push({ services: n, iptablesUs: iptNs / 1000, nftUs: nftNs / 1000, nftReferenceUs: nftRefNs === null ? null : nftRefNs / 1000 });
}

// ---- 3. parse MB/s -------------------------------------------------------------------------
const bigText = kubeProxyNftRules(kubeProxyServices(10000, 1));
const mb = Buffer.byteLength(bigText) / 1e6;
const parseTimes = [];
for (let k = 0; k < 5; k++) {
  const t0 = performance.now();
  const r = parseNftRuleset(bigText);
  parseTimes.push(performance.now() - t0);
  if (r.diagnostics.some((d) => d.severity === 'error')) throw new Error('the kube-proxy nft text does not parse');
}
parseTimes.sort((a, b) => a - b);
const oursMBps = mb / (parseTimes[2] / 1000);
let kernel = null;
const whyNot = process.getuid?.() !== 0 ? 'not root' : spawnSync('nft', ['--version']).status !== 0 ? 'no nft' : null;
if (whyNot === null) {
  const dir = mkdtempSync(join(tmpdir(), 'nfsim-bench-'));
  const file = join(dir, 'kube-proxy.nft');
  writeFileSync(file, bigText);
  const runs = [];
  for (let k = 0; k < 1; k++) {
    const t0 = performance.now();
    const r = spawnSync('unshare', ['--net', 'nft', '-c', '-f', file], { encoding: 'utf8' });
    runs.push(performance.now() - t0);
    if (r.status !== 0) throw new Error(`nft -c -f refused the benchmark input: ${r.stderr}`);
  }
  rmSync(dir, { recursive: true, force: true });
  runs.sort((a, b) => a - b);
  kernel = { ms: runs[0], MBps: mb / (runs[0] / 1000) };
}

// ---- report --------------------------------------------------------------------------------
const f2 = (x) => (x < 10 ? x.toFixed(2) : x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));
const lines = [];
lines.push(`Istio default sidecar pod (${N} probes, trace off)`);
lines.push(`  iptables form     ${Math.round(1e9 / istioIptNs).toLocaleString('en-US')} connections/s (${f2(istioIptNs / 1000)} µs)`);
lines.push(`  native nft form   ${Math.round(1e9 / istioNftNs).toLocaleString('en-US')} connections/s (${f2(istioNftNs / 1000)} µs); nft / iptables cost ${f2(istioNftNs / istioIptNs)}×`);
lines.push(`  nft, reference    ${Math.round(1e9 / istioRefNs).toLocaleString('en-US')} connections/s; lowered is ${f2(istioRefNs / istioNftNs)}× the reference`);
lines.push('kube-proxy, cost per connection');
for (const k of kube) {
  lines.push(`  ${String(k.services).padStart(6)} services   iptables ${f2(k.iptablesUs).padStart(6)} µs   nftables ${f2(k.nftUs).padStart(6)} µs${k.nftReferenceUs === null ? '' : `   (nft reference ${f2(k.nftReferenceUs)} µs)`}`);
}
lines.push(`  growth 100 → 10,000 services: iptables ${f2(kube[2].iptablesUs / kube[0].iptablesUs)}×, nftables ${f2(kube[2].nftUs / kube[0].nftUs)}×`);
lines.push(`Parse: kube-proxy nft, 10,000 services (${mb.toFixed(1)} MB)`);
lines.push(`  parseNftRuleset   ${f2(oursMBps)} MB/s (${f2(parseTimes[2])} ms)`);
lines.push(kernel ? `  nft -c -f         ${f2(kernel.MBps)} MB/s (${f2(kernel.ms)} ms, process start included)` : `  nft -c -f         not run: ${whyNot}`);
console.log(lines.join('\n'));
writeFileSync(join(import.meta.dirname, 'nft-results.json'), `${JSON.stringify({
  date: new Date().toISOString(), node: process.version,
  istio: { iptablesNs: istioIptNs, nftNs: istioNftNs, nftReferenceNs: istioRefNs },
  kubeProxy: kube, parse: { bytes: Buffer.byteLength(bigText), oursMs: parseTimes[2], oursMBps, kernel },
}, null, 2)}\n`);
