// The simulator's cost per generated case of the kernel differential suite: what the suite does per
// case (parse, check and lower the case's rules in a new Netns, then its probes in order), with and
// without traces, over the cases of seeds 1..8. A process of its own, so that the heap is the
// cases' only: in bench/run.js's process, grown by the runs before, a traced case measured up to
// 4× slower. After a warm-up of 1.5 s each, five rounds of 2,000 cases with traces and five
// without are timed alternately; the medians are reported.
//
//   npm run build && node bench/generated.js [--json]
import { Netns } from '../dist/index.js';
import { loadGeneratedCases } from './kernel.js';

const JSON_OUT = process.argv.includes('--json');
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);
const cases = await loadGeneratedCases(8);
const ROUND = 2000;
let next = 0;
function one(trace) {
  const c = cases[next++ % cases.length];
  const ns = new Netns(c.sim);
  let n = 0;
  for (const p of c.probes) n += ns.connect(p, { trace }).outcome.length;
  return n;
}
function timed(trace, cases) {
  const t0 = performance.now();
  let sink = 0;
  for (let i = 0; i < cases; i++) sink += one(trace);
  if (sink === 0) throw new Error('no results');
  return ((performance.now() - t0) * 1000) / cases;
}
for (const trace of [true, false]) {
  const t0 = performance.now();
  while (performance.now() - t0 < 1500) one(trace);
}
const rounds = { on: [], off: [] };
for (let r = 0; r < 5; r++) {
  rounds.on.push(timed(true, ROUND));
  rounds.off.push(timed(false, ROUND));
}
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const out = {
  cases: cases.length,
  probes: cases.reduce((n, c) => n + c.probes.length, 0),
  usPerCase: { on: median(rounds.on), off: median(rounds.off) },
  rounds,
};
say(`${out.cases} generated cases (${out.probes} probes): ${out.usPerCase.on.toFixed(0)} µs a case with traces, ${out.usPerCase.off.toFixed(0)} µs without (medians of 5 rounds of ${ROUND})`);
if (JSON_OUT) process.stdout.write(`${JSON.stringify(out)}\n`);
