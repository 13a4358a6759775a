// Source ports, EADDRNOTAVAIL and TIME_WAIT against the real kernel: ports.py runs each case in
// a throw-away namespace (its own ip_local_port_range), and a Netns with the same range and rules
// must give the same outcomes and ports.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import type { ConnectResult } from '../../src/index.js';
import { describeKernel, kernelTools } from './harness.js';

const PORTS_PY = join(dirname(fileURLToPath(import.meta.url)), 'ports.py');

interface Attempt {
  readonly port?: number;
  readonly accepted?: number;
  readonly error?: string;
}
interface KernelRun {
  readonly range: readonly string[];
  readonly tw_reuse: number;
  readonly results: readonly Attempt[];
  /** reuse/noreuse: whether the closes and the third attempt fell in one second, as the case needs. */
  readonly window?: boolean;
}

/** A case whose timing window can be missed on a busy machine is run again, up to 5 times. */
async function kernelCaseInWindow(name: string): Promise<KernelRun> {
  let run = await kernelCase(name);
  for (let i = 1; i < 5 && run.window === false; i++) run = await kernelCase(name);
  return run;
}

function kernelCase(name: string): Promise<KernelRun> {
  const { unshare, python } = kernelTools();
  return new Promise((resolve, reject) => {
    const p = spawn(unshare, ['--net', python, PORTS_PY, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const t = setTimeout(() => p.kill('SIGKILL'), 30_000);
    p.on('close', (code) => {
      clearTimeout(t);
      if (code !== 0) reject(new Error(`ports.py ${name} exited ${String(code)}: ${err}`));
      else resolve(JSON.parse(out) as KernelRun);
    });
  });
}

/** A simulated attempt in the shape ports.py prints. */
function attempt(r: ConnectResult): Attempt {
  if (r.error !== undefined) return { error: r.error };
  if (r.outcome !== 'local') return { error: r.outcome };
  const syn = r.trace!.find((e) => e.type === 'packet')!;
  return { port: (syn as { sport: number }).sport, accepted: r.port! };
}

const redirect = (addr: string): string => `*nat\n-A OUTPUT -d ${addr}/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080\nCOMMIT\n`;

describeKernel('source ports and TIME_WAIT against the kernel', () => {
  const runs = new Map<string, KernelRun>();
  beforeAll(async () => {
    const names = ['fill', 'fresh', 'reuse', 'noreuse', 'snat'];
    const results = await Promise.all(names.map(kernelCaseInWindow));
    names.forEach((n, i) => runs.set(n, results[i]!));
  }, 60_000);

  it('the kernel runs with the defaults the simulator assumes', () => {
    for (const r of runs.values()) {
      expect(r.range).toEqual(['32768', '60999']);
      expect(r.tw_reuse).toBe(2);
    }
  });

  it('a full ip_local_port_range: connect() fails with EADDRNOTAVAIL, after the same ports', () => {
    const ns = new Netns({ listen: ['127.0.0.1:8080'], localPortRange: [40000, 40002] });
    const ours = [0, 1, 2, 3, 4].map(() => attempt(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:8080' })));
    const kernel = runs.get('fill')!.results;
    // Both leave 40002 unused: the scan covers an even number of ports (remaining &= ~1).
    expect(kernel.map((a) => a.error ?? a.port)).toEqual([40000, 40001, 'EADDRNOTAVAIL', 'EADDRNOTAVAIL', 'EADDRNOTAVAIL']);
    expect(ours).toEqual(kernel);
  });

  it('a fresh socket takes a port of 32768–60999', () => {
    const k = runs.get('fresh')!.results[0]!;
    const ours = attempt(new Netns({ listen: ['127.0.0.1:8080'] }).connect({ from: 'local', uid: 0, dst: '127.0.0.1:8080' }));
    for (const a of [k, ours]) {
      expect(a.port).toBeGreaterThanOrEqual(32768);
      expect(a.port).toBeLessThanOrEqual(60999);
    }
  });

  for (const [name, addr] of [['reuse', '127.0.0.1'], ['noreuse', '10.0.0.2']] as const) {
    it(`closed connections to ${addr}: TIME_WAIT holds the ports, loopback ones are reused a second later`, () => {
      const ns = new Netns({ rules: redirect(addr), listen: [8080], localPortRange: [40000, 40001] });
      const spec = { from: 'local', uid: 0, dst: `${addr}:80` } as const;
      const ours: Attempt[] = [];
      for (let i = 0; i < 3; i++) {
        ours.push(attempt(ns.connect(spec, { close: true })));
        ns.advance(0.05);
      }
      ns.advance(1.1);
      const last = ns.connect(spec);
      ours.push(attempt(last));
      expect(runs.get(name)!.window, 'the kernel run kept missing its one-second window').toBe(true);
      expect(ours).toEqual(runs.get(name)!.results);
      if (name === 'reuse') {
        // The SYN met the first connection's conntrack entry in TIME_WAIT and re-opened it.
        expect(last.trace!.some((e) => e.type === 'conntrack' && e.action === 'reopen')).toBe(true);
      }
    });
  }

  it('SNAT to a two-port range: the third connection finds no free port and its SYN is dropped', () => {
    const rules = '*nat\n-A POSTROUTING -d 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j SNAT --to-source 127.0.0.1:50000-50001\nCOMMIT\n';
    const ns = new Netns({ rules, listen: ['127.0.0.1:8080'] });
    const ours = [0, 1, 2].map(() => ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:8080' }));
    const kernel = runs.get('snat')!.results as readonly { peer?: number; error?: string }[];
    expect(kernel.map((k) => (k.error === 'timeout' ? 'dropped' : 'local'))).toEqual(ours.map((r) => r.outcome));
    // The ports the listener saw: the reply tuples' destinations.
    const seen = ns.conntrack().map((c) => Number(/:(\d+)$/.exec(c.reply)![1]));
    expect(seen.sort()).toEqual(kernel.filter((k) => k.peer !== undefined).map((k) => k.peer).sort());
    expect(ours[2]!.reason).toMatch(/insert failed/);
  });
});
