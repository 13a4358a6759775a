// The pods' probe mixes on the namespace path (the outcome cache off) against IdealPod, the whole
// connection by hand (bench/ideal.js), in a process of their own: inside bench/run.js, IdealPod's
// cost moves with the heap the runs before it have grown (2.2 and 2.9 µs a connection in run H,
// docs/performance.md).
//
// Each pod's mix (4,096 probes, cycled, conntrack flushed every 4,096 connections as in
// bench/run.js) is warmed up for a second on each side. Then eight rounds of 50,000 connections
// alternate between the two sides, the first side changing every round, twice: once with one
// namespace per side kept for all eight rounds ("kept"), once with a new one each round ("new").
// The two differ on this machine: a new Netns is slower for its first 50,000 connections than one
// kept, and a kept IdealPod slower than a new one. The medians are reported. Every result's
// `reason` is read, so that neither side can skip building its result.
//
// With --cpu, rounds are timed by the process's CPU time rather than the wall clock (on a machine
// shared with other work, the wall time includes waiting for a core).
//
//   npm run build && node --expose-gc bench/mix.js [--cpu] [--json]
import { Netns } from '../dist/index.js';
import { PODS, podOptions, timeMix, validateIdeal } from './pods.js';
import { mix } from './probes.js';

const JSON_OUT = process.argv.includes('--json');
const CPU = process.argv.includes('--cpu');
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);
const ROUND = 50000;
const ROUNDS = 8;

const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const out = {};
for (const [name, pod] of Object.entries(PODS)) {
  const probes = mix(pod.shapes, 4096);
  validateIdeal(`${name} fast vs ideal namespace`, probes, () => new Netns(podOptions(pod, { outcomeCache: false })), pod.idealPod);
  const make = { fast: () => new Netns(podOptions(pod, { outcomeCache: false })), ideal: pod.idealPod };
  for (const m of Object.values(make)) {
    const ns = m();
    const t0 = performance.now();
    while (performance.now() - t0 < 1000) timeMix(ns, probes, 4096);
  }
  out[name] = {};
  for (const mode of ['kept', 'new']) {
    const kept = { fast: make.fast(), ideal: make.ideal() };
    const rounds = { fast: [], ideal: [] };
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? ['fast', 'ideal'] : ['ideal', 'fast'];
      for (const side of order) rounds[side].push(timeMix(mode === 'kept' ? kept[side] : make[side](), probes, ROUND, CPU));
    }
    const fast = median(rounds.fast);
    const ideal = median(rounds.ideal);
    out[name][mode] = { usPerConnection: { fast, ideal }, ratio: fast / ideal, rounds };
    say(`${pod.title}, the mix without the outcome cache, namespaces ${mode}: ${fast.toFixed(2)} µs${CPU ? ' (cpu)' : ''} a connection, IdealPod ${ideal.toFixed(2)} µs: ${(fast / ideal).toFixed(2)}× (medians of ${ROUNDS} rounds of ${ROUND})`);
  }
}
if (JSON_OUT) process.stdout.write(`${JSON.stringify(out)}\n`);
