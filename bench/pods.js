// The Linkerd and Istio default pods the benches time: their rules, listeners, hand-written
// equivalents (bench/ideal.js) and probe mixes. Shared by bench/run.js and bench/mix.js.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { istioIdeal, istioIdealPod, linkerdIdeal, linkerdIdealPod } from './ideal.js';
import { ISTIO_SHAPES, LINKERD_SHAPES, svc } from './probes.js';

const ROOT = join(import.meta.dirname, '..');

export const PODS = {
  linkerd: {
    title: 'Linkerd default pod',
    text: readFileSync(join(ROOT, 'test/fixtures/linkerd/injected-default.save'), 'utf8'),
    listen: [4140, 4143, 4191, 8080],
    ideal: linkerdIdeal,
    idealPod: linkerdIdealPod,
    shapes: LINKERD_SHAPES,
    packets: ['tcp > 10.96.0.10:80 uid 1000', 'tcp > 10.1.0.7:8080 uid 2102', 'tcp 10.2.0.5 > 10.0.0.2:8080', 'udp > 10.96.0.10:53 uid 1000'],
    // The kernel bench's connection (bench/kernel/connrate.c): the app to 10.96.0.10:80, each time.
    repeatProbe: { from: 'local', uid: 1000, dst: '10.96.0.10:80' },
    // The same, each to another Service address: no connection repeats a probe.
    spreadProbe: (i) => ({ from: 'local', uid: 1000, dst: `${svc(i)}:80` }),
  },
  istio: {
    title: 'Istio default pod',
    text: readFileSync(join(ROOT, 'test/fixtures/istio/kernel-save/derived/injected-sidecar-default.save'), 'utf8'),
    listen: [15001, 15006, 15090, 8080],
    ideal: istioIdeal,
    idealPod: istioIdealPod,
    repeatProbe: { from: 'local', uid: 1000, dst: '10.96.0.10:80' },
    shapes: ISTIO_SHAPES,
    packets: ['tcp > 10.96.0.10:80 uid 1000', 'tcp > 10.1.0.7:8080 uid 1337 gid 1337', 'tcp 10.2.0.5 > 10.0.0.2:8080', 'udp > 10.96.0.10:53 uid 1000'],
  },
};

/** `Netns` options for a pod. */
export function podOptions(pod, extra = {}) {
  return { rules: pod.text, listen: pod.listen, ...extra };
}

/** The hand-written namespace gives the same results as Netns, but for the source ports it picks. */
export function validateIdeal(what, probes, makeNs, makeIdeal) {
  const a = makeNs();
  const b = makeIdeal();
  const strip = (r) => JSON.stringify({ ...r, source: r.source === null ? null : r.source.replace(/:\d+$/, '') });
  for (const p of probes) {
    const x = strip(a.connect(p, { trace: false }));
    const y = strip(b.connect(p));
    if (x !== y) throw new Error(`${what}: results differ for ${JSON.stringify(p)}:\n${x}\n${y}`);
  }
}

/**
 * µs a connection over `n` connections of `probes` (cycled, conntrack flushed every 4,096
 * connections, as bench/run.js does), untraced. Every result's `reason` is read, so that no side
 * can skip building its result. With `cpu`, the process's CPU time (user + system, the
 * collector's helper threads included) instead of the wall time: on a machine shared with other
 * work, the wall time includes waiting for a core.
 */
export function timeMix(ns, probes, n, cpu = false) {
  let sink = 0;
  const c0 = cpu ? process.cpuUsage() : null;
  const t0 = performance.now();
  for (let i = 1; i <= n; i++) {
    if ((i & 4095) === 0) ns.flushConntrack();
    sink += ns.connect(probes[i % probes.length], { trace: false }).reason.length;
  }
  if (sink === 0) throw new Error('no results');
  if (c0 !== null) {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / n;
  }
  return ((performance.now() - t0) * 1000) / n;
}
