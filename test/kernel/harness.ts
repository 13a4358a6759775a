/**
 * The kernel-differential harness: the same rule text goes through the real kernel (in throw-away
 * network namespaces) and through the simulator, and the results must agree (STYLE.md rule 12).
 *
 * Everything here runs real processes: `iptables-restore`/`-save` (whatever backend the machine's
 * `iptables` resolves to, nf_tables on Debian 12), `ip`, and `probe.py` under python3. Every
 * namespace is anonymous (`unshare --net`, or `unshare(CLONE_NEWNET)` inside probe.py), so it
 * disappears with the last process in it: nothing can leak into the host or into the next case,
 * even when a child is killed. Children run in their own process group and are killed on timeout
 * and when this process exits.
 */
import { kernelOptOut, kernelRequired } from './opt-out.js';
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { availableParallelism } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

// ---------------------------------------------------------------------------------------------
// Availability

/** Whether this machine can run kernel cases, and if not, why. */
export interface KernelStatus {
  readonly available: boolean;
  readonly reason?: string;
}

/** Absolute paths of the tools the harness runs. */
export interface KernelTools {
  readonly ip: string;
  readonly unshare: string;
  readonly python: string;
  readonly iptablesRestore: string;
  readonly ip6tablesRestore: string;
  readonly iptablesSave: string;
  readonly ip6tablesSave: string;
  /** `iptables -V`, e.g. `iptables v1.8.9 (nf_tables)`. */
  readonly version: string;
}

const PROBE_PY = join(dirname(fileURLToPath(import.meta.url)), 'probe.py');

let cachedStatus: KernelStatus | undefined;
let cachedTools: KernelTools | undefined;

function which(name: string): string | undefined {
  const dirs = (process.env['PATH'] ?? '').split(delimiter).concat(['/usr/sbin', '/sbin', '/usr/bin', '/bin']);
  for (const d of dirs) {
    if (!d) continue;
    const p = join(d, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

function probeStatus(): KernelStatus {
  if (process.platform !== 'linux') return { available: false, reason: `not Linux (${process.platform})` };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { available: false, reason: 'not running as root (network namespaces need CAP_SYS_ADMIN)' };
  }
  const names = ['ip', 'unshare', 'python3', 'iptables', 'iptables-restore', 'ip6tables-restore', 'iptables-save', 'ip6tables-save'];
  const found = new Map<string, string>();
  const missing: string[] = [];
  for (const n of names) {
    const p = which(n);
    if (p) found.set(n, p);
    else missing.push(n);
  }
  if (missing.length > 0) {
    return { available: false, reason: `missing ${missing.join(', ')} (install iptables, iproute2, python3, util-linux)` };
  }
  const get = (n: string): string => found.get(n) as string;
  // Resolve python3 to the real interpreter: a pyenv-style shim costs ~60 ms per start.
  const py = spawnSync(get('python3'), ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8', timeout: 20_000 });
  const python = py.status === 0 && py.stdout.trim() ? py.stdout.trim() : get('python3');
  const ver = spawnSync(get('iptables'), ['-V'], { encoding: 'utf8', timeout: 20_000 });
  const tools: KernelTools = {
    ip: get('ip'),
    unshare: get('unshare'),
    python,
    iptablesRestore: get('iptables-restore'),
    ip6tablesRestore: get('ip6tables-restore'),
    iptablesSave: get('iptables-save'),
    ip6tablesSave: get('ip6tables-save'),
    version: (ver.stdout ?? '').trim(),
  };
  // Can we make a namespace and load a table in it?
  const ns = spawnSync(tools.unshare, ['--net', '--', tools.iptablesRestore, '--test'], {
    input: '*filter\n:INPUT ACCEPT [0:0]\nCOMMIT\n',
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (ns.status !== 0) {
    return { available: false, reason: `cannot create a network namespace and run iptables-restore in it: ${(ns.stderr || String(ns.error ?? ns.signal)).trim()}` };
  }
  // The full connect topology (two namespaces, a veth, listeners, local v4/v6 connects).
  const self = spawnSync(tools.python, [PROBE_PY], {
    input: JSON.stringify({ mode: 'selftest', tools }),
    encoding: 'utf8',
    timeout: 30_000,
  });
  let parsed: { ok?: boolean; stage?: string; stderr?: string } = {};
  try {
    parsed = JSON.parse(self.stdout) as typeof parsed;
  } catch {
    parsed = { ok: false, stage: 'probe.py', stderr: self.stderr || String(self.error ?? self.signal) };
  }
  if (!parsed.ok) {
    return { available: false, reason: `probe.py self-test failed at ${parsed.stage}: ${(parsed.stderr ?? '').trim()}` };
  }
  cachedTools = tools;
  return { available: true };
}

/** Checks once (root, binaries, a namespace, the probe topology) and caches the answer. */
export function kernelStatus(): KernelStatus {
  const off = kernelOptOut();
  if (off !== null) return { available: false, reason: off };
  cachedStatus ??= probeStatus();
  return cachedStatus;
}

/** The resolved tool paths; throws when the kernel is not available. */
export function kernelTools(): KernelTools {
  const s = kernelStatus();
  if (!s.available || !cachedTools) throw new Error(`kernel harness unavailable: ${s.reason ?? 'unknown'}`);
  return cachedTools;
}

/**
 * `describe` for suites that need the kernel. Runs the suite when the kernel is available. When
 * it is not: under `CI=true` registers one failing test carrying the reason (CI must not go green
 * by skipping); elsewhere skips the suite with a visible warning.
 */
export function describeKernel(name: string, fn: () => void): void {
  describeWhen(kernelStatus(), 'kernel harness', name, fn);
}

/** Runs the suite when `s` says its tools are there; otherwise fails it under CI, or skips it visibly. */
function describeWhen(s: KernelStatus, what: string, name: string, fn: () => void): void {
  if (s.available) {
    describe(name, fn);
    return;
  }
  const reason = s.reason ?? 'unknown reason';
  if (kernelRequired()) {
    describe(name, () => {
      it(`needs the ${what}`, () => {
        throw new Error(`${what} unavailable under CI=true: ${reason}`);
      });
    });
    return;
  }
  console.warn(`[kernel] skipping "${name}": ${reason}`);
  describe.skip(name, fn);
}

// ---------------------------------------------------------------------------------------------
// Processes

export interface RunResult {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

const live = new Set<number>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const pid of live) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/** Runs a process in its own process group, with a wall-clock limit (killed with its group on timeout). */
export function run(argv: readonly string[], input: string, timeoutMs: number): Promise<RunResult> {
  installExitHook();
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = argv;
    const child = spawn(cmd as string, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const pid = child.pid;
    if (pid !== undefined) live.add(pid);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (pid !== undefined) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }, timeoutMs);
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      if (pid !== undefined) live.delete(pid);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (pid !== undefined) live.delete(pid);
      resolve({
        status: code ?? (signal ? 128 : -1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        timedOut,
      });
    });
    child.stdin.on('error', () => {
      // the child may exit before reading all of its input (a rejected restore)
    });
    child.stdin.end(input);
  });
}

/** Runs `fn` over `items` with at most `concurrency` in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  });
  await Promise.all(workers);
  return results;
}

function defaultConcurrency(): number {
  return Math.max(2, availableParallelism() * 2);
}

// ---------------------------------------------------------------------------------------------
// iptables-restore + iptables-save

/** What `iptables-save` printed (minus the `# Generated`/`# Completed` lines), or the rejection. */
export type KernelSaveResult =
  | { readonly ok: true; readonly save: string; readonly stderr: string }
  | { readonly ok: false; readonly status: number; readonly stderr: string };

/** Options for the batch runners. */
export interface BatchOptions {
  /** Cases in flight at once; default twice the CPU count. */
  readonly concurrency?: number;
  /** Per-case wall-clock limit in ms; default 30 s. */
  readonly timeoutMs?: number;
}

const SAVE_FAILED = 125;

/** Drops the `# Generated by …` and `# Completed on …` lines, nothing else. */
export function stripSaveComments(save: string): string {
  return save
    .split('\n')
    .filter((l) => !l.startsWith('# Generated by ') && !l.startsWith('# Completed on '))
    .join('\n');
}

/**
 * Loads `text` with `iptables-restore` (`ip6tables-restore` for family 6) into a fresh network
 * namespace, then prints it back with `iptables-save`. The namespace dies with the process.
 */
export async function kernelSave(text: string, family: 4 | 6, options: { timeoutMs?: number; setup?: KernelObjects; backend?: 'nft' | 'legacy' } = {}): Promise<KernelSaveResult> {
  const t = kernelTools();
  const [restore, save] = options.backend === 'legacy'
    ? legacyTools(family)
    : family === 6 ? [t.ip6tablesRestore, t.ip6tablesSave] : [t.iptablesRestore, t.iptablesSave];
  const script = `"$1"; s=$?; [ $s -eq 0 ] || exit $s; "$2" || { echo "nfsim: $2 failed" >&2; exit ${SAVE_FAILED}; }`;
  const setup = options.setup;
  const argv = setup === undefined || (setup.ipsets === undefined && (setup.nfacct ?? []).length === 0)
    ? [t.unshare, '--net', '--', 'sh', '-c', script, 'sh', restore, save]
    : [t.unshare, '--net', '--', 'sh', '-c',
      // $3 the ipsets, $4 ipset, $5 python, $6 nfacct.py, then the nfacct names; the rules stay on stdin.
      `r=$1 w=$2 sets=$3 ipset=$4 py=$5 acct=$6; shift 6
{ [ -z "$sets" ] || printf '%s' "$sets" | "$ipset" restore; } && { [ $# -eq 0 ] || "$py" "$acct" "$@"; } || { echo "nfsim: setup failed" >&2; exit ${SETUP_FAILED}; }
set -- "$r" "$w"; ${script}`,
      'sh', restore, save, setup.ipsets ?? '', setup.ipsets === undefined ? '' : ipsetBinary(), t.python, NFACCT_PY, ...(setup.nfacct ?? [])];
  const r = await run(argv, text, options.timeoutMs ?? 30_000);
  if (r.timedOut) throw new Error(`kernelSave: timed out\n${r.stderr}`);
  if (r.status === SETUP_FAILED) throw new Error(`kernelSave: creating the ipsets or nfacct objects failed:\n${r.stderr}`);
  if (r.status === SAVE_FAILED) throw new Error(`kernelSave: ${save} failed after a successful restore:\n${r.stderr}`);
  if (r.status !== 0) return { ok: false, status: r.status, stderr: r.stderr };
  return { ok: true, save: stripSaveComments(r.stdout), stderr: r.stderr };
}

/** {@link kernelSave} over many inputs, several namespaces at a time. */
export function kernelSaveMany(texts: readonly string[], family: 4 | 6, options: BatchOptions & { setup?: KernelObjects } = {}): Promise<KernelSaveResult[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return mapLimit(texts, options.concurrency ?? defaultConcurrency(), (text) => kernelSave(text, family, { timeoutMs, ...(options.setup ? { setup: options.setup } : {}) }));
}

/** Named objects to create in the namespace before the rules are loaded. */
export interface KernelObjects {
  /** `ipset restore` input (`create NAME TYPE …` lines). */
  readonly ipsets?: string;
  /** nfacct object names (`nfacct add NAME`, made by `nfacct.py`). */
  readonly nfacct?: readonly string[];
}

const SETUP_FAILED = 124;
export const NFACCT_PY = join(dirname(fileURLToPath(import.meta.url)), 'nfacct.py');

/** `ip[6]tables-legacy-restore` and `-save`, for loads with the ip_tables back end. */
function legacyTools(family: 4 | 6): [string, string] {
  const pre = family === 6 ? 'ip6tables' : 'iptables';
  const restore = which(`${pre}-legacy-restore`);
  const save = which(`${pre}-legacy-save`);
  if (restore === undefined || save === undefined) throw new Error(`kernelSave: ${pre}-legacy-restore/-save are not installed (the iptables package has them)`);
  return [restore, save];
}

/** The `ipset` binary. */
export function ipsetBinary(): string {
  const p = which('ipset');
  if (p === undefined) throw new Error('kernelSave: ipset is not installed (apt-get install ipset)');
  return p;
}

/** The outcome of `iptables-restore --test`. */
export interface KernelRestoreTestResult {
  readonly ok: boolean;
  readonly status: number;
  readonly stderr: string;
}

/**
 * `iptables-restore --test` (or `ip6tables-restore --test`) in a fresh namespace.
 *
 * On nf_tables, `--test` only runs the userspace parser: it never hands the rules to the kernel,
 * so it accepts what the kernel then refuses at commit (REDIRECT in filter, owner in INPUT).
 * {@link kernelSave} (a real load) is the stricter judge.
 */
export async function kernelRestoreTest(text: string, family: 4 | 6, options: { timeoutMs?: number } = {}): Promise<KernelRestoreTestResult> {
  const t = kernelTools();
  const restore = family === 6 ? t.ip6tablesRestore : t.iptablesRestore;
  const r = await run([t.unshare, '--net', '--', restore, '--test'], text, options.timeoutMs ?? 30_000);
  if (r.timedOut) throw new Error(`kernelRestoreTest: timed out\n${r.stderr}`);
  return { ok: r.status === 0, status: r.status, stderr: r.stderr };
}

/** {@link kernelRestoreTest} over many inputs. */
export function kernelRestoreTestMany(texts: readonly string[], family: 4 | 6, options: BatchOptions = {}): Promise<KernelRestoreTestResult[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return mapLimit(texts, options.concurrency ?? defaultConcurrency(), (text) => kernelRestoreTest(text, family, { timeoutMs }));
}

// ---------------------------------------------------------------------------------------------
// Connections

/** A socket listening in the pod. Without `address` it binds 0.0.0.0 and [::] (IPV6_V6ONLY). */
export interface KernelListener {
  readonly address?: string;
  readonly port: number;
  /** The listening socket is created with this uid/gid (owner matches see it on SYN-ACKs). */
  readonly uid?: number;
  /** `IP_TRANSPARENT` (`IPV6_TRANSPARENT`) on the listening socket, as a TPROXY proxy sets it. */
  readonly transparent?: boolean;
}

/** One connection attempt. `dst` is `10.96.0.10:80` or `[fd00::2]:8080`. */
export type KernelProbe =
  | {
      readonly from: 'local';
      readonly uid: number;
      /** Default: the uid. */
      readonly gid?: number;
      /** Supplementary groups; default none. */
      readonly groups?: readonly number[];
      readonly dst: string;
      readonly sport?: number;
      readonly proto?: 'tcp';
      /** `SO_MARK` of the connecting socket. */
      readonly mark?: number;
      /** The address the connecting socket binds (default: the wildcard, routing picks). */
      readonly src?: string;
      /** `IP_TRANSPARENT` on the connecting socket. */
      readonly transparent?: boolean;
      /** Keep both ends of the connection open until the case ends (default: closed with a RST after the probe). */
      readonly keep?: boolean;
      /** Wait this long before the probe. */
      readonly waitMs?: number;
    }
  | { readonly from: 'remote'; readonly src: string; readonly dst: string; readonly sport?: number; readonly keep?: boolean; readonly waitMs?: number };

/** A pod (rules + listeners) and the probes to run against it, in order. */
export interface KernelCase {
  readonly rules4?: string;
  readonly rules6?: string;
  /** An `nft -f` file loaded after the iptables rules (needs {@link nftStatus}). */
  readonly nft?: string;
  readonly listeners: readonly KernelListener[];
  readonly probes: readonly KernelProbe[];
  /** `ipset restore` input, loaded in the pod before the rules (sets the rules name). */
  readonly ipsets?: string;
  /** `ip -batch` lines run in the pod before the rules (`rule add fwmark …`, `route add …`); a line starting `-6 ` goes to `ip -6 -batch`. */
  readonly ipBatch?: readonly string[];
  /** `ip -batch` lines run in the world after its own setup (a route to the pod for an address it does not own, a route back to an extra pod address). */
  readonly worldBatch?: readonly string[];
  /** `ip route add` arguments run in the world (`10.96.0.0/12 via 10.0.0.2`): where it sends destinations the pod does not own. */
  readonly worldRoutes?: readonly string[];
}

/** The DESIGN `connect --json` object, minus `steps`, as the kernel decided it. */
export interface KernelProbeResult {
  readonly outcome: 'local' | 'remote' | 'refused' | 'dropped';
  /** `local`: the accepting socket's local address; `remote`: the destination seen by the world. */
  readonly address: string | null;
  readonly port: number | null;
  /** `local`: SO_ORIGINAL_DST of the accepted socket (null when it fails: no conntrack entry). */
  readonly originalDestination: string | null;
  /** errno name for `refused`, `timeout` for `dropped`, or a harness note. */
  readonly error?: string;
  /** The connecting socket's own address after connect (before any SNAT). */
  readonly source?: string;
  /** The peer address the accepting socket saw (after any SNAT). */
  readonly peer?: string;
}

/** Everything probe.py reports for one case. */
export type KernelConnectReport =
  | { readonly ok: true; readonly results: readonly KernelProbeResult[]; readonly timing: { readonly setupMs: number; readonly probesMs: number } }
  | { readonly ok: false; readonly stage: string; readonly status: number; readonly stderr: string };

/** Options for {@link kernelConnect}. */
export interface KernelConnectOptions {
  /** How long a connect() may take before the probe counts as `dropped`; default 400 ms. */
  readonly connectTimeoutMs?: number;
  /** After connect() succeeds, how long to wait for a listener to have it; default 250 ms. */
  readonly acceptWaitMs?: number;
  /** Wall-clock limit for the whole case; default 30 s plus the probes' timeouts. */
  readonly timeoutMs?: number;
}

/** A case whose rules (or topology) could not be set up. */
export class KernelSetupError extends Error {
  readonly stage: string;
  readonly status: number;
  readonly stderr: string;
  constructor(stage: string, status: number, stderr: string) {
    super(`kernel case setup failed at ${stage} (status ${status}): ${stderr.trim()}`);
    this.name = 'KernelSetupError';
    this.stage = stage;
    this.status = status;
    this.stderr = stderr;
  }
}

/** Runs one case and returns probe.py's whole report (a load failure is a value here). */
export async function kernelConnectReport(c: KernelCase, options: KernelConnectOptions = {}): Promise<KernelConnectReport> {
  const tools = kernelTools();
  const connectTimeoutMs = options.connectTimeoutMs ?? 400;
  const acceptWaitMs = options.acceptWaitMs ?? 250;
  const request = {
    mode: 'connect',
    tools,
    rules4: c.rules4 ?? '',
    rules6: c.rules6 ?? '',
    ...(c.nft ? { nft: c.nft, nftBinary: nftBinary() } : {}),
    listeners: c.listeners,
    probes: c.probes,
    ...(c.ipsets === undefined ? {} : { ipsets: c.ipsets }),
    ...(c.ipBatch === undefined ? {} : { ipBatch: c.ipBatch }),
    ...(c.worldBatch === undefined ? {} : { worldBatch: c.worldBatch }),
    ...(c.worldRoutes === undefined ? {} : { worldRoutes: c.worldRoutes }),
    connectTimeoutMs,
    acceptWaitMs,
  };
  const timeoutMs = options.timeoutMs ?? 30_000 + c.probes.length * (connectTimeoutMs + acceptWaitMs);
  const r = await run([tools.python, PROBE_PY], JSON.stringify(request), timeoutMs);
  if (r.timedOut) return { ok: false, stage: 'timeout', status: -1, stderr: `probe.py timed out after ${timeoutMs} ms\n${r.stderr}` };
  try {
    return JSON.parse(r.stdout) as KernelConnectReport;
  } catch {
    return { ok: false, stage: 'probe.py', status: r.status, stderr: r.stderr || r.stdout };
  }
}

/**
 * Builds the pod and the world, loads the rules, opens the listeners, runs the probes in order
 * and reports each outcome. Throws {@link KernelSetupError} when the rules do not load.
 */
export async function kernelConnect(c: KernelCase, options: KernelConnectOptions = {}): Promise<KernelProbeResult[]> {
  const report = await kernelConnectReport(c, options);
  if (!report.ok) throw new KernelSetupError(report.stage, report.status, report.stderr);
  return [...report.results];
}

/** {@link kernelConnectReport} over many cases, several at a time (most of a case is waiting). */
export function kernelConnectMany(cases: readonly KernelCase[], options: BatchOptions & KernelConnectOptions = {}): Promise<KernelConnectReport[]> {
  return mapLimit(cases, options.concurrency ?? Math.max(4, availableParallelism() * 3), (c) => kernelConnectReport(c, options));
}

// ---------------------------------------------------------------------------------------------
// nft -f + nft list ruleset

let cachedNft: { status: KernelStatus; nft?: string } | undefined;

/** Whether the nft suites can run: the kernel harness and an `nft` binary (1.0.6 on Debian 12). */
export function nftStatus(): KernelStatus {
  if (cachedNft) return cachedNft.status;
  const k = kernelStatus();
  if (!k.available) {
    cachedNft = { status: k };
    return k;
  }
  const nft = which('nft');
  if (!nft) {
    cachedNft = { status: { available: false, reason: 'missing nft (install nftables)' } };
    return cachedNft.status;
  }
  const r = spawnSync(kernelTools().unshare, ['--net', '--', nft, '-f', '-'], { input: 'add table ip t\n', encoding: 'utf8', timeout: 20_000 });
  if (r.status !== 0) {
    cachedNft = { status: { available: false, reason: `nft -f fails in a fresh namespace: ${(r.stderr || String(r.error ?? r.signal)).trim()}` } };
    return cachedNft.status;
  }
  cachedNft = { status: { available: true }, nft };
  return cachedNft.status;
}

/** The `nft` binary; throws when {@link nftStatus} says it is unavailable. */
export function nftBinary(): string {
  const s = nftStatus();
  if (!s.available || !cachedNft?.nft) throw new Error(`nft harness unavailable: ${s.reason ?? 'unknown'}`);
  return cachedNft.nft;
}

/** {@link describeKernel} for suites that also need `nft`. */
export function describeNftKernel(name: string, fn: () => void): void {
  describeWhen(nftStatus(), 'nft kernel harness', name, fn);
}

/** What `nft list ruleset` printed after `nft -f`, or nft's refusal (its stderr, first line `FILE:LINE:COL-COL: Error: …`). */
export type KernelNftResult =
  | { readonly ok: true; readonly list: string }
  | { readonly ok: false; readonly status: number; readonly stderr: string; readonly line: number | null };

/**
 * Loads each text with `nft -f` into an empty rule set and lists it back with `nft list ruleset`.
 * Cases run in a few throw-away namespaces (one per worker), each case after `nft flush ruleset`,
 * so hundreds of cases cost a handful of process trees.
 */
export async function kernelNftListMany(texts: readonly string[], options: { workers?: number; timeoutMs?: number; vethPairs?: readonly (readonly [string, string])[] } = {}): Promise<KernelNftResult[]> {
  const nft = nftBinary();
  const { mkdtempSync, writeFileSync, readFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'nfsim-nft-'));
  try {
    texts.forEach((t, i) => writeFileSync(join(dir, `${i}.nft`), t));
    const workers = Math.max(1, Math.min(options.workers ?? availableParallelism() * 2, texts.length));
    // `vethPairs`: interfaces the namespace has before the files load ([name, peer], the peer
    // gets the lower ifindex), for rules that name interfaces by index.
    const links = (options.vethPairs ?? []).map(([a, b]) => `ip link add ${a} type veth peer name ${b} || exit 1; `).join('');
    const script = `${links}for i in "$@"; do f="$D/$i.nft"; "$N" flush ruleset; "$N" -f "$f" >"$f.out" 2>"$f.err"; echo $? >"$f.rc"; "$N" list ruleset >"$f.list" 2>>"$f.err"; done`;
    const slices: number[][] = Array.from({ length: workers }, () => []);
    texts.forEach((_t, i) => slices[i % workers]!.push(i));
    await Promise.all(slices.map(async (slice) => {
      const r = await run([kernelTools().unshare, '--net', '--', 'env', `D=${dir}`, `N=${nft}`, 'sh', '-c', script, 'sh', ...slice.map(String)], '', options.timeoutMs ?? 600_000);
      if (r.timedOut) throw new Error(`kernelNftListMany: timed out\n${r.stderr}`);
      if (r.status !== 0) throw new Error(`kernelNftListMany: worker failed (${r.status}): ${r.stderr}`);
    }));
    return texts.map((_t, i): KernelNftResult => {
      const f = join(dir, `${i}.nft`);
      const status = Number(readFileSync(`${f}.rc`, 'utf8').trim());
      if (status === 0) return { ok: true, list: readFileSync(`${f}.list`, 'utf8') };
      const stderr = readFileSync(`${f}.err`, 'utf8');
      const m = /:(\d+):\d+(?:-\d+)?: Error/.exec(stderr);
      return { ok: false, status, stderr, line: m ? Number(m[1]) : null };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * connect()'s timeout when a differential asks the kernel again for a case whose only
 * disagreements were connections left unanswered within the batch's shorter timeout: on a loaded
 * machine a RST or an ICMP error can wait in the softirq backlog past it, while a packet the rules
 * really drop stays unanswered however long the wait.
 */
export const RETRY_TIMEOUT_MS = 3000;
