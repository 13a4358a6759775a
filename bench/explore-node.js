// explore on a kube-proxy node of 3,000 Services, as a user runs it: `netfilter-sim explore` on
// the node's rules (compiled by compileKubeProxy from the snapshot of bench/kube-proxy-compile.js,
// node-a, iptables mode unless --mode says otherwise), whole and narrowed (to the Service CIDR
// 10.96.0.0/12, to one Service's cluster IP), with and without --summary.
//
//   npm run build && node bench/explore-node.js [--services 3000] [--mode iptables|nftables] [--remote] [--all-remote]
//
// Each command runs in a process of its own (this script with --child), through the CLI's own
// entry (files read, rules parsed, checked and lowered, the space explored, the output rendered
// into memory). Its figures are the process's own from its start: wall time (performance.now())
// and CPU time (user + system), so Node's start and the module loading are included; and the
// output's size in bytes. --remote adds the remote space narrowed to the Service CIDR and to one
// Service; --all-remote the whole remote space (minutes).
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

if (process.argv.includes('--child')) {
  const args = JSON.parse(arg('child'));
  const { run } = await import('../dist/cli/run.js');
  const { memoryIO } = await import('../dist/cli/io.js');
  const io = memoryIO();
  const code = await run(args, io);
  const cpu = process.cpuUsage();
  process.stdout.write(JSON.stringify({ code, wallMs: performance.now(), cpuMs: (cpu.user + cpu.system) / 1000, bytes: Buffer.byteLength(io.out), first: io.out.split('\n')[0], err: io.err.slice(0, 500), peakRssMB: process.resourceUsage().maxRSS / 1024 }) + '\n');
  process.exit(0);
}

const { compileKubeProxy } = await import('../dist/index.js');
const { benchSnapshot } = await import('./kube-proxy-compile.js');
const services = Number(arg('services', '3000'));
const mode = arg('mode', 'iptables');
const dir = mkdtempSync(join(tmpdir(), 'explore-node-'));
const rulesFile = join(dir, 'node.rules');
const text = compileKubeProxy(benchSnapshot(services), 'node-a', { mode, clusterCIDR: '10.244.0.0/16' });
writeFileSync(rulesFile, text);
// node-a of the snapshot: 192.168.0.2 on the node network, the first address of its pod CIDR on the bridge.
const node = ['--rules', rulesFile, '--iface', 'eth0=192.168.0.2/24', '--iface', 'cni0=10.244.0.1/24', '--gateway', '192.168.0.1', '--ip-forward'];
const runs = [
  ['local, whole space (both families)', ['--from', 'local']],
  ['local, whole space, --summary', ['--from', 'local', '--summary']],
  ['local, --dst 10.96.0.0/12 (the Service CIDR)', ['--from', 'local', '--dst', '10.96.0.0/12']],
  ['local, --dst 10.96.0.0/12 --summary', ['--from', 'local', '--dst', '10.96.0.0/12', '--summary']],
  ['local, --dst 10.96.0.10/32 (one Service)', ['--from', 'local', '--dst', '10.96.0.10/32']],
];
if (process.argv.includes('--remote') || process.argv.includes('--all-remote')) {
  runs.push(['remote, --dst 10.96.0.10/32 (one Service)', ['--from', 'remote', '--dst', '10.96.0.10/32']]);
  runs.push(['remote, --dst 10.96.0.0/12 (the Service CIDR)', ['--from', 'remote', '--dst', '10.96.0.0/12']]);
}
if (process.argv.includes('--all-remote')) runs.push(['remote, whole space (both families)', ['--from', 'remote']]);

const lines = text.split('\n').length;
console.log(`kube-proxy ${mode}, ${services} Services (node-a of bench/kube-proxy-compile.js's snapshot): ${lines} lines of rules, ${Buffer.byteLength(text)} bytes`);
const rows = [];
for (const [name, extra] of runs) {
  const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify(['explore', ...node, ...extra])], { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (child.status !== 0) throw new Error(`${name}: ${child.stderr}`);
  const r = JSON.parse(child.stdout);
  if (r.code !== 0) throw new Error(`${name}: exit ${r.code}: ${r.err}`);
  rows.push({ name, args: extra, ...r });
  console.log(`${name.padEnd(48)} ${(r.wallMs / 1000).toFixed(2).padStart(6)} s wall  ${(r.cpuMs / 1000).toFixed(2).padStart(6)} s cpu  ${String(r.bytes).padStart(9)} bytes out  ${r.peakRssMB.toFixed(0)} MB  | ${r.first}`);
}
writeFileSync(join(fileURLToPath(new URL('.', import.meta.url)), 'explore-node-results.json'), JSON.stringify({ node: process.version, services, mode, rulesLines: lines, rows }, null, 2) + '\n');
