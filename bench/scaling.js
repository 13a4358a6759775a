// How much two busy threads get out of this machine: the same connect loop (Linkerd default pod,
// no trace) in one process alone, then in two processes at once. The batch API cannot scale
// better than this; run.js reports it next to the batch figures.
//
//   node bench/scaling.js            (one measurement, prints connections/s)
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Netns } from '../dist/index.js';

const ROOT = join(import.meta.dirname, '..');

function loop(seconds) {
  const rules = readFileSync(join(ROOT, 'test/fixtures/linkerd/injected-default.save'), 'utf8');
  const ns = new Netns({ rules, listen: [4140, 4143, 8080] });
  const probes = Array.from({ length: 4096 }, (_, i) =>
    i % 2 === 0 ? { from: 'local', uid: 1000, dst: `10.96.${(i >> 8) & 63}.${i & 255}:80` } : { from: 'remote', src: `10.2.${(i >> 8) & 63}.${i & 255}`, dst: '10.0.0.2:8080' },
  );
  for (let i = 0; i < 20000; i++) {
    if ((i & 4095) === 4095) ns.flushConntrack();
    ns.connect(probes[i & 4095], { trace: false });
  }
  ns.flushConntrack();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    for (let k = 0; k < 4096; k++) ns.connect(probes[k], { trace: false });
    ns.flushConntrack();
    n += 4096;
  }
  return n / ((performance.now() - t0) / 1000);
}

function child(seconds) {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [import.meta.filename, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`scaling child exited with ${code}`))));
  });
}

/** Connections/s of one process alone and of each of two at once; their ratio is the ceiling. */
export async function machineScaling(seconds = 2) {
  const one = await child(seconds);
  const [a, b] = await Promise.all([child(seconds), child(seconds)]);
  return { one, two: a + b, ratio: (a + b) / one };
}

if (process.argv[1] === import.meta.filename) console.log(loop(Number(process.argv[2] ?? 2)));
