// Bytes allocated per connection on the namespace path, by the function that allocated them: the
// Linkerd pod's mix (4,096 probes, cycled, conntrack flushed every 4,096 connections), untraced,
// the outcome cache off. After 100,000 connections to warm up, V8's sampling heap profiler (one
// sample per 128 bytes on average, objects the collector has freed included) watches 200,000
// more. Prints the total per connection and the functions that allocate the most.
//
//   npm run build && node bench/alloc.js [--json] [build directory, default: this checkout]
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PODS, podOptions } from './pods.js';
import { mix } from './probes.js';

const JSON_OUT = process.argv.includes('--json');
const root = resolve(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? join(import.meta.dirname, '..'));
const { Netns } = await import(pathToFileURL(join(root, 'dist/index.js')).href);
const WARM = 100000;
const N = 200000;

const pod = PODS.linkerd;
const probes = mix(pod.shapes, 4096);
const ns = new Netns(podOptions(pod, { outcomeCache: false }));
let sink = 0;
const run = (n) => {
  for (let i = 1; i <= n; i++) {
    if ((i & 4095) === 0) ns.flushConntrack();
    sink += ns.connect(probes[i % 4096], { trace: false }).reason.length;
  }
};
run(WARM);
const session = new Session();
session.connect();
await session.post('HeapProfiler.startSampling', { samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
run(N);
const { profile } = await session.post('HeapProfiler.stopSampling');
session.disconnect();
if (sink === 0) throw new Error('no results');

const bySite = new Map();
let total = 0;
(function walk(node) {
  const f = node.callFrame;
  const site = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
  bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  total += node.selfSize;
  for (const c of node.children ?? []) walk(c);
})(profile.head);
const top = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 12).filter(([, v]) => v / N >= 1).map(([site, v]) => ({ site, bytesPerConnection: v / N }));
const out = { connections: N, bytesPerConnection: total / N, top };
const say = (line) => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);
say(`${pod.title}, the mix, untraced, no outcome cache: ${Math.round(out.bytesPerConnection).toLocaleString('en-US')} bytes allocated per connection (${N.toLocaleString('en-US')} connections)`);
for (const t of top) say(`  ${Math.round(t.bytesPerConnection).toString().padStart(6)}  ${t.site}`);
if (JSON_OUT) process.stdout.write(`${JSON.stringify(out)}\n`);
