// A long-lived namespace: one Netns (the Linkerd default pod) carrying connections that are opened
// and closed 10 ms of virtual time apart, never flushed. Cost per connection over windows of
// 10,000 (the first, the one ending at 100,000, the last of 1,000,000), and memory per live
// connection with its sockets.
//
//   node --expose-gc bench/long-lived.js [TOTAL]     (after npm run build; TOTAL default 1,000,000)
//
// Each connection: SYN, SYN-ACK, ACK, then FIN-ACK, FIN-ACK, ACK (close: true), trace off; the
// app (uid 1000) connects to 10.96.0.10:80, redirected to the proxy's 4140. After each one the
// clock moves 10 ms: conntrack entries leave after 120 s in TIME_WAIT, client sockets after 60 s,
// so about 12,000 entries and 6,000 sockets are alive at any time. Every outcome is checked.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Netns } from '../dist/index.js';

const ROOT = join(import.meta.dirname, '..');
const WINDOW = 10_000;

function fullGc() {
  if (typeof globalThis.gc === 'function') for (let i = 0; i < 4; i++) globalThis.gc();
}
const heap = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

function podOptions() {
  return { rules: readFileSync(join(ROOT, 'examples/linkerd-default.rules'), 'utf8'), listen: [4140, 4143, 8080] };
}

/** Opens and closes `total` connections in one namespace; returns the windows' costs and memory. */
export function longLived(total = 1_000_000) {
  const spec = { from: 'local', uid: 1000, dst: '10.96.0.10:80' };
  // Warm-up in a namespace of its own, so that the first window measures the namespace, not the JIT.
  const warm = new Netns(podOptions());
  for (let i = 0; i < 30_000; i++) {
    warm.connect(spec, { trace: false, close: true });
    warm.advance(0.01);
  }
  const ns = new Netns(podOptions());
  ns.connect(spec, { trace: false, close: true });
  ns.advance(200);
  fullGc();
  const m0 = heap();
  const windows = [];
  let wrong = 0;
  let t = performance.now();
  for (let i = 1; i <= total; i++) {
    const r = ns.connect(spec, { trace: false, close: true });
    if (r.outcome !== 'local' || r.port !== 4140 || r.originalDestination !== '10.96.0.10:80') wrong++;
    ns.advance(0.01);
    if (i % WINDOW === 0) {
      const now = performance.now();
      windows.push({ upTo: i, usPerConnection: ((now - t) * 1000) / WINDOW });
      t = performance.now();
    }
  }
  fullGc();
  const live = ns.conntrack().length;
  const steadyBytes = heap() - m0;
  const at = (n) => windows.find((w) => w.upTo === n)?.usPerConnection ?? NaN;
  return {
    total,
    wrong,
    first10k: at(WINDOW),
    at100k: at(Math.min(100_000, total)),
    last10k: windows[windows.length - 1].usPerConnection,
    liveEntries: live,
    liveSockets: ns.kernel.sockets.connections,
    steadyBytesPerLiveEntry: steadyBytes / live,
    open: null,
  };
}

/**
 * Bytes per open (established, not closed) connection: its conntrack entry and both sockets. Each
 * goes to one Service address on a port of its own (so that the namespace's per-destination route
 * cache holds one entry, not one per connection); all are redirected to 127.0.0.1:4140, where the
 * accepted sides share one address pair, so at most 64,512 can be open at once (the null SNAT
 * binding's port space, 1024–65535) — as in the kernel. A few attempts may be dropped even so: the
 * bounded search (128 consecutive ports from a random offset, then 64, 32, 16) can land four times
 * in the dense block of ephemeral ports; the kernel's search is the same.
 */
export function openMemory(n) {
  if (typeof globalThis.gc !== 'function') return { skipped: 'run with --expose-gc' };
  const ns = new Netns(podOptions());
  ns.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' });
  fullGc();
  const m0 = heap();
  let open = 0;
  for (let k = 0; k < n; k++) if (ns.connect({ from: 'local', uid: 1000, dst: `10.96.0.11:${1 + (k % 65535)}` }, { trace: false }).outcome === 'local') open++;
  fullGc();
  const m1 = heap();
  // Read the namespace after measuring, so that it is alive when measured.
  return { connections: n, open, bytesPerConnection: (m1 - m0) / open, sockets: ns.kernel.sockets.connections };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const total = Number(process.argv[2] ?? 1_000_000);
  const r = longLived(total);
  fullGc();
  r.open = openMemory(50_000);
  const us = (x) => `${x.toFixed(2)} µs`;
  console.log(`long-lived namespace, Linkerd pod, ${total.toLocaleString('en-US')} connections opened and closed 10 ms apart (Node ${process.versions.node})`);
  console.log(`  wrong outcomes                      ${r.wrong}`);
  console.log(`  µs per connection, first 10k        ${us(r.first10k)}`);
  console.log(`  µs per connection, 10k up to 100k   ${us(r.at100k)}`);
  console.log(`  µs per connection, last 10k         ${us(r.last10k)}`);
  console.log(`  last 10k ÷ first 10k                ${(r.last10k / r.first10k).toFixed(2)}× (target ≤ 1.5×)`);
  console.log(`  live conntrack entries at the end   ${r.liveEntries} (sockets: ${r.liveSockets})`);
  console.log(`  bytes per live entry with its socket, steady state ${Math.round(r.steadyBytesPerLiveEntry)}`);
  console.log(`  bytes per open connection (entry + both sockets, ${r.open.open ?? '—'} of ${r.open.connections ?? '—'} attempts open) ${r.open.skipped ?? Math.round(r.open.bytesPerConnection)} (sockets: ${r.open.sockets})`);
}
