// The Istio ambient and native-nftables rule sets as compiled here, loaded into real network
// namespaces: the iptables ones with iptables-restore/ip6tables-restore --noflush (ipsets created
// first, as the vectors' setup says) and listed with iptables-save/ip6tables-save; the nft ones
// with nft -f (sets created first) and listed with nft list ruleset (the builder goldens' dumps too). What the kernel lists must be
// what `--format save` prints (iptables), and the vectors' recorded kernel listing (nft).
import { spawn } from 'node:child_process';
import { beforeAll, expect, it } from 'vitest';
import { compileIstioAmbient } from '../../src/compile/istio/ambient.js';
import { compileIstio } from '../../src/compile/istio/compile.js';
import { formatIstioAmbientResult } from '../../src/compile/istio/format.js';
import { ambientCases, ambientInput, stripSaveComments } from '../mesh/istio/ambient-vectors.js';
import { toIstioConfig } from '../mesh/istio/vectors.js';
import { BUILDER_CASES, CH, T } from '../mesh/istio/nft-builder-cases.js';
import { NftablesRuleBuilder } from '../../src/compile/istio/nft-transaction.js';
import { describeKernel, mapLimit } from './harness.js';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Job {
  readonly name: string;
  /** A shell script run inside `unshare --net`; files are passed on stdin, split by markers. */
  readonly script: string;
  readonly expected: string | null;
  readonly ours: string;
  readonly kernelAccepted: boolean;
}

function sh(script: string, timeoutMs = 30_000): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn('unshare', ['--net', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
    p.on('close', (code) => {
      clearTimeout(t);
      resolve({ code: code ?? -1, out, err });
    });
  });
}

const quote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

const jobs: Job[] = [];
for (const [name, c] of ambientCases('iptables')) {
  const r = compileIstioAmbient(ambientInput(c, 'iptables'));
  const setup = c.kernel.setup ? `${c.kernel.setup} && ` : '';
  const loads = r.restore.map((x) => `printf %s ${quote(x.text)} | ${x.family === 4 ? 'iptables' : 'ip6tables'}-restore --noflush`).join(' && ');
  jobs.push({
    name: `ambient iptables ${name}`,
    script: `set -e; ${setup}${loads}; iptables-save; echo '@@6'; ip6tables-save`,
    expected: null,
    ours: formatIstioAmbientResult(r, 'save'),
    kernelAccepted: c.kernel.accepted,
  });
}
for (const [name, c] of ambientCases('nftables')) {
  const r = compileIstioAmbient(ambientInput(c, 'nftables'));
  const setup = c.kernel.setup ? `printf %s ${quote(c.kernel.setup)} | nft -f - && ` : '';
  jobs.push({ name: `ambient nftables ${name}`, script: `set -e; ${setup}printf %s ${quote(r.nft)} | nft -f -; nft list ruleset`, expected: c.kernel.list ?? '', ours: '', kernelAccepted: c.kernel.accepted });
}
const NFT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'istio-nftables');
const BASE = {
  ProxyPort: '15001', InboundCapturePort: '15006', InboundTunnelPort: '15008', ProxyUID: '1337', ProxyGID: '1337',
  InboundTProxyMark: '1337', InboundTProxyRouteTable: '133', OwnerGroupsInclude: '*', HostIPv4LoopbackCidr: '127.0.0.1/32',
};
const nftCases = JSON.parse(readFileSync(join(NFT_DIR, 'cases.json'), 'utf8')) as Record<string, { overrides?: Record<string, unknown>; kernel?: { accepted: boolean; list?: string } }>;
for (const [key, c] of Object.entries(nftCases)) {
  if (!key.startsWith('capture-nft/')) continue;
  const r = compileIstio({ ...toIstioConfig({ ...BASE, ...c.overrides }), nativeNftables: true });
  jobs.push({ name: `sidecar ${key}`, script: `set -e; printf %s ${quote(r.nft ?? '')} | nft -f -; nft list ruleset`, expected: c.kernel?.list ?? '', ours: '', kernelAccepted: c.kernel?.accepted ?? false });
}
for (const [name, calls] of BUILDER_CASES) {
  const b = new NftablesRuleBuilder({ enableIPv6: true });
  calls(b);
  const c = nftCases[`builder-nft/${name}`];
  jobs.push({ name: `builder ${name}`, script: `set -e; printf %s ${quote(b.dump(T, [{ name: CH }]))} | nft -f -; nft list ruleset`, expected: c?.kernel?.list ?? '', ours: '', kernelAccepted: c?.kernel?.accepted ?? false });
}

describeKernel('Istio ambient and native nftables rule sets in a real namespace', () => {
  let results: { code: number; out: string; err: string }[] = [];
  beforeAll(async () => {
    results = await mapLimit(jobs, 4, (j) => sh(j.script));
  }, 180_000);

  it.each(jobs.map((j, i) => [j.name, i] as const))('%s', (_n, i) => {
    const j = jobs[i]!;
    const r = results[i]!;
    if (!j.kernelAccepted) {
      // The vectors record that the kernel refused the upstream golden here (e.g. unknown groups): ours too.
      expect(r.code).not.toBe(0);
      return;
    }
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    if (j.expected === null) {
      const [v4, v6] = r.out.split('@@6\n');
      expect(j.ours).toBe(stripSaveComments(v4!) + stripSaveComments(v6 ?? ''));
    } else {
      expect(r.out).toBe(j.expected);
    }
  });
});
