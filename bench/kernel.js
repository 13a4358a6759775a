// The real kernel's side of the comparison (root only):
//
// (a) connectionRate(): TCP connections per second through a pod's rules, measured with a small C
//     client/server (bench/kernel/connrate.c, built with gcc here) in a throw-away network
//     namespace: lo, a veth "eth0" with 10.0.0.2/24 and a default route via 10.0.0.1, the rules
//     loaded with iptables-restore, a server listening on the proxy port and a client connecting
//     as the app's uid to a service address that the rules redirect.
//
// (b) harnessCaseCost(): what one generated case of the kernel-differential suite costs the kernel
//     harness (test/kernel/harness.ts kernelConnect: two namespaces, a veth, iptables-restore,
//     listeners and ~8 probes with real sockets, python3 probe.py). The harness and the generator
//     are TypeScript; they are transpiled as they are (typescript's transpileModule, types erased;
//     the harness's vitest import, used only by describeKernel, points at a stub) into
//     node_modules/.cache/netfilter-sim-bench/ next to a copy of probe.py, and imported from there.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'netfilter-sim-bench');

function have(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
}

/** Why the kernel figures cannot be taken here, or null when they can. */
export function kernelUnavailable() {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return 'not root';
  for (const c of ['gcc', 'unshare', 'ip', 'iptables-restore', 'python3']) if (!have(c)) return `${c} not installed`;
  return null;
}

function buildConnrate() {
  mkdirSync(CACHE, { recursive: true });
  const out = join(CACHE, 'connrate');
  execFileSync('gcc', ['-O2', '-Wall', '-o', out, join(HERE, 'kernel', 'connrate.c')], { stdio: ['ignore', 'ignore', 'pipe'] });
  return out;
}

/**
 * (a) The kernel's connections/s through `rulesFile`, as the median of `runs` runs of `seconds`.
 * `uid` connects to `dst` (IP:PORT); the server listens on `listen`.
 */
export function connectionRate({ rulesFile, uid = 1000, dst = '10.96.0.10:80', listen = 4140, seconds = 1, runs = 3 }) {
  const bin = buildConnrate();
  const [ip, port] = dst.split(':');
  const script = [
    'set -e',
    'ip link set lo up',
    'ip link add eth0 type veth peer name veth-peer',
    'ip link set veth-peer up',
    'ip addr add 10.0.0.2/24 dev eth0',
    'ip link set eth0 up',
    'ip route add default via 10.0.0.1',
    `iptables-restore < '${rulesFile}'`,
    `'${bin}' ${uid} ${ip} ${port} ${listen} ${seconds}`,
  ].join('\n');
  const results = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync('unshare', ['--net', 'sh', '-c', script], { encoding: 'utf8', timeout: (seconds + 30) * 1000 });
    const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
    let parsed;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`connrate failed (status ${r.status}): ${r.stderr}`);
    }
    results.push(parsed);
  }
  results.sort((a, b) => a.rate - b.rate);
  const median = results[Math.floor(results.length / 2)];
  return { ...median, runs: results.map((r) => Math.round(r.rate)) };
}

// Transpiles in a child process, so that neither typescript nor vitest is loaded into the process
// that takes the timings (their code and heap changed the figures of what ran after them).
const TRANSPILE = `
import ts from 'typescript';
import { readFileSync, writeFileSync } from 'node:fs';
const [root, dir] = process.argv.slice(1);
for (const name of ['harness', 'generate', 'opt-out']) {
  const src = readFileSync(root + '/test/kernel/' + name + '.ts', 'utf8');
  let js = ts.transpileModule(src, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
    fileName: name + '.ts',
  }).outputText;
  // describeKernel (the only user of vitest in the harness) is not called here.
  js = js.replace("from 'vitest';", "from './vitest-stub.js';");
  writeFileSync(dir + '/' + name + '.js', js);
}
writeFileSync(dir + '/vitest-stub.js', 'export const describe = () => {};\\nexport const it = () => {};\\n');
`;

let modules = null;

/** Transpiles the kernel harness and generator (and copies probe.py) into the cache and imports them. */
async function harnessModules() {
  if (modules !== null) return modules;
  const dir = join(CACHE, 'kernel-harness');
  mkdirSync(dir, { recursive: true });
  execFileSync(process.execPath, ['--input-type=module', '-e', TRANSPILE, ROOT, dir], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  copyFileSync(join(ROOT, 'test', 'kernel', 'probe.py'), join(dir, 'probe.py'));
  modules = {
    harness: await import(pathToFileURL(join(dir, 'harness.js')).href),
    generate: await import(pathToFileURL(join(dir, 'generate.js')).href),
  };
  return modules;
}

/** The differential suite's generated connect cases for seeds 1..`cases` (no root needed). */
export async function loadGeneratedCases(cases, firstSeed = 1) {
  const { generate } = await harnessModules();
  return Array.from({ length: cases }, (_, i) => generate.generateConnectCase(firstSeed + i));
}

/**
 * (b) The kernel harness's cost per generated connect case, run one after another (as a failing
 * case is replayed), over the cases of seeds 1..`cases`.
 */
export async function harnessCaseCost({ cases = 6, firstSeed = 1 } = {}) {
  const { harness, generate } = await harnessModules();
  const status = harness.kernelStatus();
  if (!status.available) return { skipped: status.reason };
  const list = Array.from({ length: cases }, (_, i) => generate.generateConnectCase(firstSeed + i));
  // One warm-up case (python's start, page cache), not counted.
  await harness.kernelConnect(list[0].kernel);
  const times = [];
  let probes = 0;
  for (const c of list) {
    const t0 = performance.now();
    await harness.kernelConnect(c.kernel);
    times.push(performance.now() - t0);
    probes += c.probes.length;
  }
  const total = times.reduce((a, b) => a + b, 0);
  return { cases: list.length, probes, msPerCase: total / list.length, msPerCaseEach: times.map((t) => Math.round(t)) };
}
