/**
 * The kernel is the judge: seeded random proxy-init configurations are compiled, their
 * `--format commands` lines are run with the real iptables 1.8.9 (legacy and nft back ends) in
 * throw-away network namespaces, and the result must be exactly our `--format save` (and our
 * failures must be iptables' failures, at the same line, with the same status and message).
 * Some configurations start from the rules of a previous random run (the re-run path, with the
 * real `*-save -t nat` output as `existing`); some reproduce older proxy-init releases.
 *
 * Needs root, `ip`, `nsenter` and the iptables binaries. Under CI=true their absence is a
 * failure; elsewhere the suite is skipped with a notice.
 */
import { kernelOptOut, kernelRequired } from '../../kernel/opt-out.js';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyInitConfig, type ProxyInitConfig } from '../../../src/compile/linkerd/config.js';
import { renderLinkerd } from '../../../src/compile/linkerd/output.js';
import { compileProxyInit, type ProxyInitResult } from '../../../src/compile/linkerd/proxy-init.js';

const run = promisify(execFile);
const SEED = Number(process.env['LINKERD_KERNEL_SEED'] ?? 20260830);
const CONFIGS = 120;
const MIN_EXECUTED = 100;
const PARALLEL = 12;
const TIMESTAMP = 1681263857;
const BINARIES = ['ip', 'nsenter', 'iptables', 'ip6tables', 'iptables-legacy', 'iptables-nft', 'ip6tables-legacy', 'ip6tables-nft',
  'iptables-legacy-save', 'iptables-nft-save', 'ip6tables-legacy-save', 'ip6tables-nft-save', 'iptables-save', 'ip6tables-save'];

function missingPrerequisite(): string | undefined {
  const off = kernelOptOut();
  if (off !== null) return off;
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root';
  for (const bin of BINARIES) {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
    } catch {
      return `${bin} not found`;
    }
  }
  const probe = `nfsim-lk-probe-${process.pid}`;
  try {
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'ignore' });
  } catch {
    return 'cannot create a network namespace';
  } finally {
    try { execFileSync('ip', ['netns', 'del', probe], { stdio: 'ignore' }); } catch { /* not created */ }
  }
  return undefined;
}

// ---- random configurations -------------------------------------------------------------------

interface KernelCase {
  readonly config: Partial<ProxyInitConfig>;
  readonly upstreamVersion?: string;
  /** A previous proxy-init run in the same namespace; its result is the main run's `existing`. */
  readonly prior?: Partial<ProxyInitConfig>;
}

const port = fc.integer({ min: 0, max: 65535 });
const portEntry = fc.oneof(
  { weight: 8, arbitrary: port.map(String) },
  { weight: 4, arbitrary: fc.tuple(port, port).map(([a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 65535 }).map((p) => `${p}-${p}`) },
  { weight: 1, arbitrary: fc.constantFrom('notanumber', '25-23', ' 8080', '+8443', '70000', '080', '1-2-3', '', '-1') },
);
const portList = fc.oneof(
  { weight: 3, arbitrary: fc.constant<string[]>([]) },
  { weight: 5, arbitrary: fc.array(portEntry, { minLength: 1, maxLength: 8 }) },
  { weight: 2, arbitrary: fc.array(portEntry, { minLength: 9, maxLength: 24 }) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom('notanumber', '99999'), { minLength: 1, maxLength: 2 }) },
);
const prefixText = (max: number) => fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 1, max }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('0', '08', '010', '032') },
);
const subnet4 = fc.tuple(fc.ipV4(), prefixText(32)).map(([a, p]) => `${a}/${p}`);
const subnet6 = fc.tuple(fc.ipV6(), prefixText(128)).map(([a, p]) => `${a}/${p}`);
const ownerId = fc.oneof(
  { weight: 3, arbitrary: fc.constant(-1) },
  { weight: 1, arbitrary: fc.constant(0) },
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 70000 }) },
  { weight: 1, arbitrary: fc.constantFrom(4294967294, 4294967295) },
);

const configArb = (ipv6Subnets: boolean): fc.Arbitrary<Partial<ProxyInitConfig>> =>
  fc.record({
    incomingProxyPort: port,
    outgoingProxyPort: port,
    proxyUid: ownerId,
    proxyGid: ownerId,
    portsToRedirect: fc.oneof(
      { weight: 5, arbitrary: fc.constant<number[]>([]) },
      { weight: 2, arbitrary: fc.array(port, { minLength: 1, maxLength: 4 }) },
      { weight: 1, arbitrary: fc.array(fc.constantFrom(-5, 70000, 8080), { minLength: 1, maxLength: 2 }) },
    ),
    inboundPortsToIgnore: portList,
    outboundPortsToIgnore: portList,
    subnetsToIgnore: fc.oneof(
      { weight: 4, arbitrary: fc.constant<string[]>([]) },
      { weight: 3, arbitrary: fc.array(subnet4, { minLength: 1, maxLength: 3 }) },
      { weight: ipv6Subnets ? 1 : 0, arbitrary: fc.array(fc.oneof(subnet4, subnet6), { minLength: 1, maxLength: 2 }) },
      { weight: 1, arbitrary: fc.constantFrom(['0.0.0.0/0'], ['::/0'], [' 10.1.0.0/16 ']) },
    ),
    iptablesMode: fc.constantFrom('legacy', 'nft', 'plain', '', ''),
    firewallBinPath: fc.constantFrom('', 'iptables-nft', 'iptables-legacy', 'iptables'),
    ipv6: fc.boolean(),
    useWaitFlag: fc.boolean(),
    simulate: fc.oneof({ weight: 15, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  });

const caseArb: fc.Arbitrary<KernelCase> = fc
  .tuple(
    configArb(true),
    fc.oneof(
      { weight: 16, arbitrary: fc.constant<string | undefined>(undefined) },
      { weight: 2, arbitrary: fc.constantFrom('v2.4.0', 'v2.3.0', 'v2.2.0', 'v2.1.0', 'v1.6.0', 'v1.5.2', 'v1.3.12') },
    ),
    fc.option(configArb(false), { freq: 3 }),
  )
  .map(([config, upstreamVersion, prior]) => {
    let c = config;
    if (upstreamVersion !== undefined) {
      const v = upstreamVersion;
      const gidOk = v === 'v2.4.0';
      const modeOk = v === 'v2.4.0' || v === 'v2.3.0';
      const binPathOk = modeOk || v === 'v2.2.0' || v === 'v2.1.0' || v === 'v1.6.0';
      // Older releases name the binaries themselves: keep pairs whose save shows the same back end.
      const pairs: Record<string, string> = { '': '', 'iptables-nft': 'iptables-nft-save', 'iptables-legacy': 'iptables-legacy-save', iptables: 'iptables-save' };
      c = {
        ...c,
        ...(gidOk ? {} : { proxyGid: -1 }),
        ...(modeOk ? {} : { iptablesMode: '' }),
        ...(binPathOk ? { firewallSaveBinPath: modeOk ? '' : pairs[c.firewallBinPath ?? '']! } : { firewallBinPath: '' }),
        ...(v === 'v1.3.12' ? { subnetsToIgnore: [] } : {}),
      };
    }
    return { config: c, ...(upstreamVersion ? { upstreamVersion } : {}), ...(prior ? { prior: { ...prior, simulate: false } } : {}) };
  });

// ---- running commands in a namespace ---------------------------------------------------------

interface KernelRun {
  readonly failure?: { readonly line: number; readonly exitCode: number; readonly stderr: string };
  readonly saves: readonly string[];
}

function script(lines: readonly string[], execute: boolean, saveBins: readonly string[]): string {
  const out = [
    'T=$(mktemp -d)',
    'n=0',
    'step() { n=$((n+1)); "$@" >/dev/null 2>"$T/err"; rc=$?; if [ $rc -ne 0 ]; then echo "@@FAIL $n $rc"; cat "$T/err"; echo "@@END"; return 1; fi; }',
  ];
  if (execute && lines.length > 0) out.push(`{ ${lines.map((l) => `step ${l}`).join(' && \\\n  ')}; } || true`);
  for (const bin of saveBins) out.push(`echo "@@SAVE"`, `${bin} -t nat 2>/dev/null`);
  out.push('rm -rf "$T"');
  return out.join('\n') + '\n';
}

function parseRun(stdout: string): KernelRun {
  let failure: KernelRun['failure'];
  const fail = /^@@FAIL (\d+) (\d+)\n([\s\S]*?)@@END\n/m.exec(stdout);
  if (fail) failure = { line: Number(fail[1]), exitCode: Number(fail[2]), stderr: fail[3]! };
  const saves = stdout.split(/^@@SAVE\n/m).slice(1).map((s) => s.split('\n').filter((l) => !l.startsWith('#')).join('\n'));
  return { ...(failure ? { failure } : {}), saves };
}

async function inNamespace(ns: string, text: string): Promise<KernelRun> {
  const { stdout } = await run('ip', ['netns', 'exec', ns, 'sh', '-c', text], {
    // iptables-legacy serialises on an xtables lock file shared by every namespace: one each.
    env: { ...process.env, XTABLES_LOCKFILE: `/tmp/${ns}.xtables.lock` },
    maxBuffer: 1 << 24,
  });
  return parseRun(stdout);
}

interface Outcome {
  readonly kase: KernelCase;
  readonly result: ProxyInitResult;
  readonly kernel?: KernelRun;
  readonly skipped?: string;
}

async function runCase(kase: KernelCase, index: number): Promise<Outcome> {
  const ns = `nfsim-lk-${process.pid}-${index}`;
  const netnsPath = `/run/netns/${ns}`;
  // One configuration in twelve runs its commands through nsenter, as --netns does.
  const config = index % 12 === 5 ? { ...kase.config, netns: netnsPath } : kase.config;
  const options = { ...(kase.upstreamVersion ? { upstreamVersion: kase.upstreamVersion } : {}), timestamp: TIMESTAMP };
  const planned = compileProxyInit(config, options);
  if (planned.error?.stage === 'config') return { kase, result: planned, skipped: planned.error.message };
  await run('ip', ['netns', 'add', ns]);
  try {
    let existing: string | undefined;
    let existing6: string | undefined;
    const saveBins = planned.passes.map((p) => p.saveBin);
    if (kase.prior) {
      const prior = compileProxyInit(kase.prior, { timestamp: TIMESTAMP });
      const state = await inNamespace(ns, script(prior.commands, prior.error?.stage !== 'config', [proxyInitConfigSave(planned, 4), proxyInitConfigSave(planned, 6)]));
      existing = state.saves[0];
      existing6 = state.saves[1];
    }
    const result = compileProxyInit(config, {
      ...options,
      ...(existing !== undefined ? { existing } : {}),
      ...(existing6 !== undefined ? { existing6 } : {}),
    });
    const kernel = await inNamespace(ns, script(result.commands, !proxyInitConfig(config).simulate, saveBins));
    return { kase, result, kernel };
  } finally {
    await run('ip', ['netns', 'del', ns]).catch(() => undefined);
    await run('rm', ['-f', `/tmp/${ns}.xtables.lock`]).catch(() => undefined);
  }
}

function proxyInitConfigSave(result: ProxyInitResult, family: 4 | 6): string {
  const pass = result.passes.find((p) => p.family === family);
  if (pass) return pass.saveBin;
  const v4 = result.passes[0]!.saveBin;
  return family === 6 ? v4.replace(/^iptables/, 'ip6tables') : v4;
}

// The first command our model says fails, and what it prints (fatal or, before v2.4.1, survived).
function expectedFailure(result: ProxyInitResult): KernelRun['failure'] {
  for (const r of result.runs) {
    const f = r.failures[0];
    if (f) return { line: result.commands.length, exitCode: f.exitCode, stderr: f.stderr };
  }
  return undefined;
}

// ---- the suite -------------------------------------------------------------------------------

const cases = fc.sample(caseArb, { seed: SEED, numRuns: CONFIGS });
const missing = missingPrerequisite();

describe('proxy-init against the kernel', () => {
  if (missing !== undefined) {
    if (kernelRequired()) {
      it('has root, ip, nsenter and iptables (required under CI=true)', () => {
        throw new Error(`kernel differential tests cannot run: ${missing}`);
      });
    } else {
      console.warn(`[kernel.test] skipping the kernel differential tests: ${missing}`);
      it.skip('needs root, ip, nsenter and iptables', () => undefined);
    }
    return;
  }

  const outcomes: Outcome[] = [];
  beforeAll(async () => {
    for (let i = 0; i < cases.length; i += PARALLEL) {
      const batch = cases.slice(i, i + PARALLEL).map((k, j) => runCase(k, i + j));
      outcomes.push(...(await Promise.all(batch)));
    }
  }, 300_000);

  afterAll(() => {
    const executed = outcomes.filter((o) => o.kernel).length;
    console.info(`[kernel.test] seed ${SEED}: ${executed} configurations run in the kernel, ${outcomes.length - executed} rejected before any command`);
  });

  it(`runs at least ${MIN_EXECUTED} configurations in the kernel`, () => {
    expect(outcomes.filter((o) => o.kernel).length).toBeGreaterThanOrEqual(MIN_EXECUTED);
    expect(outcomes.filter((o) => o.kernel && o.kase.prior).length).toBeGreaterThan(10);
    expect(outcomes.filter((o) => o.kernel && expectedFailure(o.result)).length).toBeGreaterThan(5);
  });

  it.each(cases.map((_, i) => [i] as const))('configuration %i: same failure, same nat tables', (i) => {
    const o = outcomes[i];
    expect(o, 'not run').toBeDefined();
    if (!o!.kernel) return;
    const context = JSON.stringify({ seed: SEED, index: i, case: o!.kase, commands: o!.result.commands });
    expect(o!.kernel.failure, context).toEqual(expectedFailure(o!.result));
    expect(o!.kernel.saves.join(''), context).toBe(renderLinkerd(o!.result, 'save'));
  });
});
