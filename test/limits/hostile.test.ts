// Hostile and oversized input, each reproduction run through the built CLI (or a library call) in
// a child process with a small heap (--max-old-space-size) and a timeout: the answer is a result or
// a clear, typed error, exit 0/1/2, and never a stack trace. These are bounds, not timings.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

vi.setConfig({ testTimeout: 300_000 });

const ROOT = resolve(import.meta.dirname, '../..');
const MAIN = join(ROOT, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'nfsim-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** The CLI in a child process: heap in MiB, a timeout in seconds. */
export function cli(args: string[], opts: { stdin?: string; heap?: number; timeout?: number } = {}): Run {
  const r = spawnSync(process.execPath, [`--max-old-space-size=${opts.heap ?? 256}`, MAIN, ...args], {
    input: opts.stdin ?? '',
    encoding: 'utf8',
    timeout: (opts.timeout ?? 120) * 1000,
    maxBuffer: 512 * 1024 * 1024,
  });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

/** A library call in a child process: `script` is an ES module body with `L` (the package) in scope. */
let scripts = 0;
function lib(script: string, opts: { heap?: number; timeout?: number } = {}): Run {
  const body = `import * as L from ${JSON.stringify(join(ROOT, 'dist/index.js'))};\n${script}`;
  const path = file(`script-${scripts++}.mjs`, body);
  const r = spawnSync(process.execPath, [`--max-old-space-size=${opts.heap ?? 256}`, path], {
    encoding: 'utf8',
    timeout: (opts.timeout ?? 120) * 1000,
  });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/** Finished in time, exit 0, 1 or 2, no stack trace, no internal error. */
function answered(r: Run): void {
  expect(r.signal, `killed: ${r.err.slice(0, 300)}`).toBeNull();
  expect([0, 1, 2], r.err.slice(0, 500)).toContain(r.code);
  expect(r.err).not.toMatch(/\n\s+at |internal error|RangeError|TypeError|ReferenceError/);
}

const POD = (extra = ''): string => `kind: Pod\nmetadata: {name: x${extra}}\nspec: {containers: [{name: a}]}\n`;

describe('crashes that were', () => {
  it('-s × -d expanding to 129,600 rules (a 1.4 KB line) is formatted', () => {
    const s = Array(360).fill('1').join(',');
    const r = cli(['fmt', '-'], { stdin: `*filter\n-A INPUT -s ${s} -d ${s} -j ACCEPT\nCOMMIT\n`, heap: 512 });
    answered(r);
    expect(r.code).toBe(0);
    expect(r.out.split('\n').filter((l) => l.startsWith('-A INPUT')).length).toBe(360 * 360);
  });

  it('jump chains 10,000 deep: check answers JUMP_TOO_DEEP (nft) and ok (legacy)', () => {
    const n = 10_000;
    const lines = ['*filter'];
    for (let i = 0; i < n; i++) lines.push(`:C${i} - [0:0]`);
    lines.push('-A INPUT -j C0');
    for (let i = 0; i < n - 1; i++) lines.push(`-A C${i} -j C${i + 1}`);
    lines.push('COMMIT', '');
    const p = file('deep.rules', lines.join('\n'));
    const nft = cli(['check', p]);
    answered(nft);
    expect(nft.code).toBe(1);
    expect(nft.err).toContain(`nest ${n} chains deep; iptables-nft allows 15`);
    const legacy = cli(['check', '--backend', 'legacy', p]);
    answered(legacy);
    expect(legacy.code).toBe(0);
    // and a loop at the bottom of it is found
    const loop = cli(['check', '--backend', 'legacy', '-'], { stdin: lines.join('\n').replace('COMMIT', `-A C${n - 1} -j C0\nCOMMIT`) });
    answered(loop);
    expect(loop.code).toBe(1);
    expect(loop.err).toContain(`-j C0 in filter chain C${n - 1} closes a loop`);
  });

  const bomb = 'a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n';
  it.each([
    [['mesh', 'linkerd', '--client', '-']],
    [['compile', 'istio-cni', '--pod', '-']],
    [['compile', 'linkerd-cni', '--conf', 'CONF', '--pod', '-']],
  ])('a YAML alias bomb is BAD_MANIFEST: %j', (args) => {
    const conf = file('conf.json', '{"linkerd": {"incoming-proxy-port": 4143, "outgoing-proxy-port": 4140, "proxy-uid": 2102}}');
    const r = cli(args.map((a) => (a === 'CONF' ? conf : a)), { stdin: bomb + POD() });
    answered(r);
    expect(r.code).toBe(1);
    expect(r.err).toContain('aliases expand past the limit');
  });

  it('a YAML alias bomb reaches library callers as NetfilterSimError', () => {
    const r = lib(`try { L.readPod(${JSON.stringify(bomb + POD())}); } catch (e) { console.log(e instanceof L.NetfilterSimError, e.code); }`);
    expect(r.out.trim()).toBe('true BAD_MANIFEST');
  });

  it('compile istio -o with 20,000 ports (one argument holds at most 128 KiB), 65,000 in the library and the excludeOutboundPorts annotation', () => {
    const some = Array.from({ length: 20_000 }, (_, i) => String(i + 1)).join(',');
    const r = cli(['compile', 'istio', '-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-o', some], { heap: 512 });
    answered(r);
    expect(r.code).toBe(0);
    expect(r.out).toContain('--dport 20000 -j RETURN');
    const ports = Array.from({ length: 65_000 }, (_, i) => String(i + 1)).join(',');
    const l = lib(`const r = L.compileIstio({ outboundPortsExclude: ${JSON.stringify(ports)} }); console.log(L.formatIstioSave(r).includes('--dport 65000 -j RETURN'));`, { heap: 512, timeout: 120 });
    expect(l.err).toBe('');
    expect(l.out.trim()).toBe('true');
    const pod = `kind: Pod\nmetadata:\n  name: x\n  annotations:\n    sidecar.istio.io/status: '{"initContainers":[],"containers":["istio-proxy"]}'\n    traffic.sidecar.istio.io/excludeOutboundPorts: "${ports}"\nspec:\n  containers:\n  - name: istio-proxy\n    securityContext: {runAsUser: 1337}\n`;
    const cni = cli(['compile', 'istio-cni', '--pod', '-'], { stdin: pod, heap: 512 });
    answered(cni);
    expect(cni.code).toBe(0);
    expect(cni.out).toContain('--dport 65000 -j RETURN');
  }, 300_000);

  it('compile linkerd and istio with 150,000 arguments: LIMIT_EXCEEDED past 65536, exit 1', () => {
    const many = Array.from({ length: 75_000 }, () => ['-r', '1']).flat();
    const l = cli(['compile', 'linkerd', ...many]);
    answered(l);
    const many2 = Array.from({ length: 75_000 }, () => ['-o', '1']).flat();
    const i = cli(['compile', 'istio', ...many2]);
    answered(i);
    // proxy-init's parser refuses (exit 1); istio-iptables' flags are usage (exit 2), as its other flag errors
    expect(l.code).toBe(1);
    expect(i.code).toBe(2);
    for (const r of [l, i]) expect(r.err).toContain('argv has 150000 arguments; the most netfilter-sim reads is 65536');
  });

  it('a kind: List of 150,000 items is read', () => {
    const items = Array.from({ length: 150_000 }, (_, i) => `{"kind":"ConfigMap","metadata":{"name":"c${i}"}}`);
    const json = `{"kind":"List","items":[${items.join(',')},{"kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"a"}]}}]}`;
    const r = lib(`const p = L.readPod(${JSON.stringify(json)}); console.log(p.name);`, { heap: 512 });
    expect(r.err).toBe('');
    expect(r.out.trim()).toBe('web');
  });

  it.each([[['toString']], [['constructor']], [['__proto__']], [['help', 'toString']], [['compile', 'constructor']], [['compile', 'hasOwnProperty']]])(
    'a command named after an Object.prototype member is unknown: %j',
    (args) => {
      const r = cli(args);
      answered(r);
      if (args[0] === 'help') expect(r.code).toBe(0);
      else {
        expect(r.code).toBe(2);
        expect(r.err).toMatch(/unknown (command|mesh)/);
      }
    },
  );

  it('fmt --json streams a rule set whose JSON is larger than the heap allows as one string', () => {
    // 14,400 rules print about 57 MB of JSON, which does not fit in a 48 MiB heap as one string.
    const s = Array(120).fill('1.1.1.1').join(',');
    const line = `-A INPUT -s ${s} -d ${s} -p tcp -m comment --comment "${'c'.repeat(200)}" -j ACCEPT\n`;
    const r = cli(['fmt', '--json', '-'], { stdin: `*filter\n${line}COMMIT\n`, heap: 48 });
    answered(r);
    expect(r.code).toBe(0);
    expect(r.out.length).toBeGreaterThan(48 * 1024 * 1024);
    const parsed = JSON.parse(r.out) as { tables: { chains: { rules: unknown[] }[] }[] };
    expect(parsed.tables[0]!.chains[0]!.rules.length).toBe(120 * 120);
  });

  it('trace --json on 70,000 jump rules keeps 65536 rule events, says so, and stays in bounds', () => {
    const lines = ['*filter', ':C - [0:0]'];
    for (let i = 0; i < 70_000; i++) lines.push('-A INPUT -j C');
    lines.push('COMMIT', '');
    const p = file('jumps.rules', lines.join('\n'));
    const r = cli(['trace', '--rules', p, '--packet', 'tcp 10.0.0.5:1 > 10.0.0.2:80 in eth0', '--json'], { heap: 512, timeout: 120 });
    answered(r);
    expect(r.code).toBe(0);
    expect(r.err).toContain('the trace keeps the first 65536 rule events; 74464 more were left out');
    const j = JSON.parse(r.out) as { traceOmitted: number; trace: { type: string }[] };
    expect(j.traceOmitted).toBe(74_464);
    expect(j.trace.filter((e) => e.type === 'rule' || e.type === 'return').length).toBe(65_536);
    expect(j.trace.some((e) => e.type === 'verdict')).toBe(true);
  });
});

describe('hangs and unbounded memory that were', () => {
  it('check is linear on layered jump graphs: 40 levels × 4 chains (4^40 paths)', () => {
    const L = 40;
    const W = 4;
    const lines = ['*filter'];
    for (let l = 0; l < L; l++) for (let w = 0; w < W; w++) lines.push(`:L${l}_${w} - [0:0]`);
    for (let w = 0; w < W; w++) lines.push(`-A INPUT -j L0_${w}`);
    for (let l = 0; l < L - 1; l++) for (let w = 0; w < W; w++) for (let v = 0; v < W; v++) lines.push(`-A L${l}_${w} -j L${l + 1}_${v}`);
    lines.push('COMMIT', '');
    const p = file('layers.rules', lines.join('\n'));
    const r = cli(['check', p], { timeout: 120 });
    answered(r);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`nest ${L} chains deep`);
    const shallow = lines.filter((l) => !/L(1[5-9]|[2-3]\d)_/.test(l)).join('\n');
    const ok = cli(['check', '-'], { stdin: shallow, timeout: 120 });
    answered(ok);
    expect(ok.code, ok.err).toBe(0);
    // connect and trace run the same check at load
    const t = cli(['trace', '--rules', p, '--packet', 'tcp 10.0.0.5:1 > 10.0.0.2:80 in eth0'], { timeout: 120 });
    answered(t);
    expect(t.code).toBe(1);
  });

  it('fmt /dev/zero stops at 64 MiB with a clear error', () => {
    const r = cli(['fmt', '/dev/zero'], { heap: 256, timeout: 120 });
    answered(r);
    expect(r.code).toBe(1);
    expect(r.err).toBe('netfilter-sim fmt: /dev/zero is larger than 67108864 bytes (64 MiB), the most netfilter-sim reads from one input\n');
  });

  it('the argv parsers are linear: 65,536 arguments each, and a string where an array belongs is BAD_ARGUMENT', () => {
    const r = lib(
      `const n = 65536;
       const a = ['-A', 'INPUT']; for (let i = 0; a.length + 4 <= n; i++) a.push('-m', 'comment', '--comment', 'x');
       const out = [];
       out.push(L.parseIptablesArgv(a, { family: 4, mode: 'strict' }).rules.length);
       const p = []; while (p.length < n) p.push('--inbound-ports-to-ignore', '1');
       out.push(L.parseProxyInitArgs(p).ok);
       const q = []; while (q.length < n) q.push('-b', '1');
       out.push(L.parseIstioIptablesArgs(q).inboundPortsInclude);
       for (const f of [() => L.parseIptablesArgv('x'.repeat(1 << 20), { family: 4 }), () => L.parseProxyInitArgs('x'.repeat(1 << 20)), () => L.parseIstioIptablesArgs('x'.repeat(1 << 20))]) {
         try { f(); out.push('no error'); } catch (e) { out.push(e.code); }
       }
       try { L.parseIptablesArgv(Array(n + 1).fill('-v'), { family: 4 }); } catch (e) { out.push(e.code); }
       console.log(JSON.stringify(out));`,
      { timeout: 120 },
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual([1, true, '1', 'BAD_ARGUMENT', 'BAD_ARGUMENT', 'BAD_ARGUMENT', 'LIMIT_EXCEEDED']);
  });

  it('nf_conntrack_max: at the limit the table holds, the next new connection is dropped, the trace says why', () => {
    // The default (262144) takes tens of seconds of probes to fill; the same code path is shown on
    // a limit of 4096. test/limits/limits.test.ts covers the option itself.
    const r = lib(
      `const ns = new L.Netns({ conntrack: true, conntrackMax: 4096 });
       let last;
       for (let i = 0; i < 4096; i++) last = ns.connect({ from: 'local', uid: 0, proto: 'udp', dst: '10.1.' + (i >> 8) + '.' + ((i & 255) || 1) + ':' + (1 + i) }, { trace: false });
       const full = ns.connect({ from: 'local', uid: 0, proto: 'udp', dst: '10.9.0.8:53' });
       console.log(JSON.stringify([last.outcome, ns.conntrack().length, full.outcome, full.reason, full.trace.filter((e) => e.type === 'drop').map((e) => e.reason)]));`,
      { heap: 128, timeout: 120 },
    );
    expect(r.err).toBe('');
    const [last, size, outcome, reason, drops] = JSON.parse(r.out) as [string, number, string, string, string[]];
    expect(last).toBe('remote');
    expect(size).toBe(4096);
    expect(outcome).toBe('dropped');
    expect(reason).toBe('nf_conntrack: table full, dropping packet (nf_conntrack_max 4096)');
    expect(drops).toEqual([reason]);
  });

  it('worker pools accept 1 to 64 workers', () => {
    const r = lib(
      `const out = [];
       for (const w of [0, 65, 1.5, -1, 1e9]) { try { new L.NetnsPool({}, { workers: w }); out.push('accepted'); } catch (e) { out.push(e.code); } }
       console.log(JSON.stringify(out));`,
    );
    expect(r.err).toBe('');
    expect(JSON.parse(r.out)).toEqual(['BAD_CONFIG', 'BAD_CONFIG', 'BAD_CONFIG', 'BAD_CONFIG', 'BAD_CONFIG']);
  });
});

describe('input the CLI reads', () => {
  it('invalid UTF-8 is read as U+FFFD with a warning naming the line', () => {
    const r = spawnSync(process.execPath, [MAIN, 'fmt', '-'], {
      input: Buffer.concat([Buffer.from('*filter\n-A INPUT -m comment --comment "a'), Buffer.from([0xff]), Buffer.from('b" -j ACCEPT\nCOMMIT\n')]),
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('netfilter-sim: warning: <stdin>:2: invalid UTF-8 (first at byte 40); each bad sequence is read as U+FFFD\n');
    expect(r.stdout).toContain('--comment "a\uFFFDb"');
  });
});
