// Parse throughput: MB/s of parseIptablesSave (and parse + print) on the 5.5k-rule router dump,
// next to `iptables-restore --test` on the same file in the same run (when root and iptables exist).
//
//   npm run build && node --expose-gc bench/parse.js
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bench, do_not_optimize, run, summary } from 'mitata';
import { formatIptablesSave, parseIptablesSave } from '../dist/index.js';

const file = join(import.meta.dirname, '../../shared/corpus/netnetwork_tum-i8-firewall_2016-06-27.iptables-save');

export async function parseBench({ quiet = false } = {}) {
  // The dump's MAC addresses were anonymised to XX:XX:XX:XX:XX:XX, which iptables refuses; give
  // them a valid (made-up) value so that both parsers read the whole file.
  const text = readFileSync(file, 'utf8').replaceAll('XX:XX:XX:XX:XX:XX', '02:00:00:00:00:01');
  const errors = parseIptablesSave(text).diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(`the benchmark input does not parse: ${errors[0].message}`);
  const mb = Buffer.byteLength(text) / 1e6;
  const rules = (text.match(/^-A /gm) ?? []).length;
  let stats;
  summary(() => {
    bench('parseIptablesSave (5.5k-rule router dump)', () => do_not_optimize(parseIptablesSave(text))).gc('inner');
    bench('parse + print (fmt)', () => do_not_optimize(formatIptablesSave(text))).gc('inner');
  });
  stats = await run({ format: quiet ? 'quiet' : 'mitata', colors: false });
  const parseNs = stats.benchmarks[0].runs[0].stats.avg;
  const fmtNs = stats.benchmarks[1].runs[0].stats.avg;
  const out = {
    file: 'netnetwork_tum-i8-firewall_2016-06-27.iptables-save',
    bytes: Buffer.byteLength(text),
    rules,
    parseMBps: mb / (parseNs / 1e9),
    fmtMBps: mb / (fmtNs / 1e9),
    parseMsPerFile: parseNs / 1e6,
    kernel: kernelRestoreTest(text, mb),
  };
  return out;
}

/** Times `iptables-restore --test` on the same file inside a throw-away namespace. */
function kernelRestoreTest(text, mb) {
  if (process.getuid?.() !== 0) return { skipped: 'not root' };
  const which = spawnSync('sh', ['-c', 'command -v iptables-restore']);
  if (which.status !== 0) return { skipped: 'iptables-restore not installed' };
  const ns = `nfsim-bench-${process.pid}`;
  execFileSync('ip', ['netns', 'add', ns]);
  try {
    const times = [];
    for (let i = 0; i < 5; i++) {
      const t0 = process.hrtime.bigint();
      const r = spawnSync('ip', ['netns', 'exec', ns, 'iptables-restore', '--test'], { input: text });
      const t1 = process.hrtime.bigint();
      if (r.status !== 0) return { skipped: `iptables-restore --test failed: ${r.stderr}` };
      times.push(Number(t1 - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const ms = times[2];
    return { msPerFile: ms, MBps: mb / (ms / 1000) };
  } finally {
    spawnSync('ip', ['netns', 'del', ns]);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await parseBench();
  console.log(JSON.stringify(r, null, 2));
}
