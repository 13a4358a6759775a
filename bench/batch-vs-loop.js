// When worker threads pay off: one connectBatch call with workers = 1 (a loop in this thread, in
// one namespace) against workers = 2 (a NetnsPool started for the call and closed after it, as
// connectBatch does), on batches of 1,000 to 100,000 probes of the Linkerd default pod (the mix
// of bench/run.js), untraced and traced. Each size is timed alternately, loop then workers, after
// one warm-up call of each; the medians are compared. The workers' figure includes starting the
// threads and building each one's namespace, which a long-lived NetnsPool pays once.
//
//   npm run build && node --expose-gc bench/batch-vs-loop.js [SIZES] [off,on] [ROUNDS]
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { connectBatch } from '../dist/index.js';
import { LINKERD_SHAPES, mix } from './probes.js';

const ROOT = join(import.meta.dirname, '..');
const SIZES = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number);
const MODES = (process.argv[3] ?? 'off,on').split(',');
const ROUNDS = Number(process.argv[4] ?? 5);
const options = { rules: readFileSync(join(ROOT, 'test/fixtures/linkerd/injected-default.save'), 'utf8'), listen: [4140, 4143, 4191, 8080] };
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const ms = (x) => `${x.toFixed(x < 100 ? 1 : 0)} ms`;
console.log(`node ${process.version}, ${availableParallelism()} cores, ${ROUNDS} rounds a size`);
for (const mode of MODES) {
  const trace = mode === 'on';
  for (const n of SIZES) {
    const probes = mix(LINKERD_SHAPES, n);
    const times = { 1: [], 2: [] };
    for (const w of [1, 2]) await connectBatch(options, probes.slice(0, Math.min(n, 2000)), { workers: w, trace });
    for (let k = 0; k < ROUNDS; k++) {
      for (const w of [1, 2]) {
        globalThis.gc?.();
        const t0 = performance.now();
        const r = await connectBatch(options, probes, { workers: w, trace });
        times[w].push(performance.now() - t0);
        if (r.length !== n) throw new Error(`${r.length} results for ${n} probes`);
      }
    }
    const loop = median(times[1]);
    const two = median(times[2]);
    console.log(`trace ${mode.padEnd(3)} ${String(n).padStart(6)} probes  loop ${ms(loop).padStart(9)}  2 workers ${ms(two).padStart(9)}  loop ÷ workers ${(loop / two).toFixed(2)}×`);
  }
}
