// The batch API at the target's size: NetnsPool with one and with two worker threads on batches of
// 100,000 connection probes of the Linkerd default pod (the mix of bench/run.js), traces off, on
// (results unread) and read (every result's events read), timed alternately after a warm-up (five
// times untraced, three traced); the medians are compared. A process of its own, so that the
// calling thread's heap is the batch's only (bench/run.js runs it as a child, with --json).
//
//   npm run build && node --expose-gc bench/batch.js [PROBES] [off,on,read] [--json]
//   npm run build && node --expose-gc --single-threaded-gc bench/batch.js
//
// The second form keeps V8's garbage collector on the thread that allocates: on a machine with two
// cores, one worker's collections otherwise run in part on the core the second worker would use.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { NetnsPool } from '../dist/index.js';
import { LINKERD_SHAPES, mix } from './probes.js';

const ROOT = join(import.meta.dirname, '..');
const args = process.argv.slice(2).filter((a) => a !== '--json');
const JSON_OUT = process.argv.includes('--json');
const N = Number(args[0] ?? 100_000);
const MODES = (args[1] ?? 'off,on,read').split(',');
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);
const out = {};
const options = { rules: readFileSync(join(ROOT, 'test/fixtures/linkerd/injected-default.save'), 'utf8'), listen: [4140, 4143, 4191, 8080] };
const probes = mix(LINKERD_SHAPES, N);
const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
say(`node ${process.version}, ${process.execArgv.join(' ') || 'no flags'}, ${N} probes per batch`);
for (const mode of MODES) {
  const trace = mode !== 'off';
  const read = mode === 'read' ? (results) => results.reduce((n, r) => n + r.trace.length, 0) : () => 0;
  const pools = { 1: new NetnsPool(options, { workers: 1 }), 2: new NetnsPool(options, { workers: 2 }) };
  const rates = { 1: [], 2: [] };
  for (const w of [1, 2]) {
    await pools[w].flushConntrack();
    await pools[w].connectBatch(probes.slice(0, 16384), { trace });
  }
  for (let k = 0; k < (trace ? 3 : 5); k++) {
    for (const w of [1, 2]) {
      await pools[w].flushConntrack();
      globalThis.gc?.();
      const t0 = performance.now();
      const r = await pools[w].connectBatch(probes, { trace });
      read(r);
      rates[w].push(N / ((performance.now() - t0) / 1000));
      if (r.length !== N) throw new Error(`${r.length} results for ${N} probes`);
    }
  }
  const one = median(rates[1]);
  const two = median(rates[2]);
  for (const w of [1, 2]) out[`${mode}/${w}`] = { probes: N, rate: median(rates[w]), rates: rates[w] };
  say(`trace ${mode.padEnd(4)}  1 worker ${Math.round(one).toLocaleString('en-US')}/s  2 workers ${Math.round(two).toLocaleString('en-US')}/s  2 ÷ 1 ${(two / one).toFixed(2)}×`);
  await Promise.all([pools[1].close(), pools[2].close()]);
}
if (JSON_OUT) process.stdout.write(`${JSON.stringify(out)}\n`);
