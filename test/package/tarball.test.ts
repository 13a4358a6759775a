/**
 * The package as a user gets it: `npm pack` from a clean copy of the tracked files (no `dist/`, so
 * the package must build itself in `prepack`), install the tarball into an empty project, import
 * both entries, run the bin and a shipped example, follow the shipped documents' links, type-check
 * a consumer, and lint the tarball with publint and attw.
 *
 * The copy shares the repository's `node_modules` (a symbolic link: `npm pack` never packs it, and
 * `npm ci` has already installed exactly the locked versions there). Installs from the local npm
 * cache where it can (`--prefer-offline`): `npm ci` has cached the tarballs of the runtime
 * dependencies and fast-check; only their registry metadata is fetched, once, on a machine whose
 * cache has never seen it.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const TIMEOUT = 180_000;

/** The environment without what an outer `npm test` exports about this repository. */
function cleanEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_userconfig', 'npm_config_globalconfig', 'npm_config_cafile', 'npm_config_registry']);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'INIT_CWD' || (k.toLowerCase().startsWith('npm_') && !keep.has(k.toLowerCase()))) continue;
    env[k] = v;
  }
  env['NO_COLOR'] = '1';
  delete env['FORCE_COLOR'];
  env['npm_config_update_notifier'] = 'false';
  env['npm_config_fund'] = 'false';
  env['npm_config_audit'] = 'false';
  return env;
}

function sh(cmd: string, args: string[], cwd: string, input?: string): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, env: cleanEnv(), encoding: 'utf8', input: input ?? '', timeout: TIMEOUT, maxBuffer: 64 * 1024 * 1024 });
}

/** Runs a command and fails with its output if it does not exit 0. */
function ok(cmd: string, args: string[], cwd: string, input?: string): string {
  const r = sh(cmd, args, cwd, input);
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${r.status ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}${r.error ? `\n--- error\n${r.error.message}` : ''}`);
  }
  return r.stdout;
}

interface PackFile {
  path: string;
  size: number;
  mode: number;
}
interface PackResult {
  filename: string;
  version: string;
  size: number;
  unpackedSize: number;
  files: PackFile[];
}

let tmp = '';
let tarball = '';
let pack: PackResult;
let app = '';
let copy = '';
let copyHadDist = true;

/** Copies the files git tracks (as they are in the working tree) to `dest`: the tree without builds. */
function copyTrackedFiles(dest: string): void {
  const files = ok('git', ['ls-files', '-z', '--cached'], ROOT).split('\0').filter((f) => f !== '' && existsSync(join(ROOT, f)));
  for (const f of files) {
    mkdirSync(dirname(join(dest, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(dest, f));
  }
}

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'netfilter-sim-pack-'));
  copy = join(tmp, 'tree');
  copyTrackedFiles(copy);
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
  copyHadDist = existsSync(join(copy, 'dist'));
  const out = ok('npm', ['pack', '--json', '--pack-destination', tmp], copy);
  const parsed = JSON.parse(out) as PackResult[];
  pack = parsed[0]!;
  tarball = join(tmp, pack.filename);

  app = join(tmp, 'app');
  mkdirSync(app);
  ok('npm', ['init', '-y'], app);
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(app, 'package.json'), JSON.stringify({ ...manifest, type: 'module', private: true }, null, 2) + '\n');
  ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball, 'fast-check@4.10.2'], app);
}, TIMEOUT);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('builds the package itself (prepack) from a tree without dist/', () => {
    expect(copyHadDist).toBe(false);
    expect(existsSync(join(copy, 'dist/index.js'))).toBe(true);
  });

  it('ships dist, the guides (with their images), the examples, README, LICENSE and package.json only', () => {
    const paths = pack.files.map((f) => f.path).sort();
    for (const p of paths) expect(p).toMatch(/^(dist\/.+|docs\/[^/]+\.md|docs\/images\/[^/]+\.png|playground\/dist\/index\.html|playground\/dist\/assets\/[^/]+\.(?:js|css)|examples\/.+|README\.md|LICENSE|package\.json)$/);
    for (const f of ['README.md', 'LICENSE', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/arbitraries/index.js', 'dist/arbitraries/index.d.ts', 'dist/cli/main.js']) {
      expect(paths).toContain(f);
    }
    for (const f of ['docs/README.md', 'docs/cli.md', 'examples/README.md', 'examples/quick-start.mjs', 'examples/mesh/web.yaml']) expect(paths).toContain(f);
  });

  it('has no tests, corpus, fixtures, vectors, benchmarks, sources of the build or source maps', () => {
    const bad = pack.files.map((f) => f.path).filter((p) => /(^|\/)(test|tests|__tests__|corpus|fixtures|vectors|bench|src|api)(\/|$)|\.test\.|\.map$|\.tgz$|\.ts$/.test(p) && !p.endsWith('.d.ts'));
    expect(bad).toEqual([]);
    // A copied rule-set dump would show up here long before it shows up in a review.
    expect(pack.unpackedSize).toBeLessThan(10 * 1024 * 1024);
  });

  it('the metadata a registry shows: repository, homepage, bugs, keywords', () => {
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/netfilter-sim/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest['repository']).toEqual({ type: 'git', url: 'git+https://github.com/netfilter-sim/netfilter-sim.git' });
    expect(manifest['homepage']).toBe('https://github.com/netfilter-sim/netfilter-sim#readme');
    expect(manifest['bugs']).toEqual({ url: 'https://github.com/netfilter-sim/netfilter-sim/issues' });
    expect(manifest['keywords']).toEqual(expect.arrayContaining(['iptables', 'netfilter']));
  });

  it('every relative link of the shipped Markdown files leads to a shipped file', () => {
    const shipped = new Set(pack.files.map((f) => f.path));
    const dirs = new Set([...shipped].flatMap((p) => p.split('/').slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join('/'))));
    const broken: string[] = [];
    let links = 0;
    for (const doc of [...shipped].filter((p) => p.endsWith('.md'))) {
      const text = readFileSync(join(app, 'node_modules/netfilter-sim', doc), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!.split('#')[0]!;
        if (target === '' || /^[a-z]+:/.test(target)) continue;
        links++;
        const path = normalize(join(dirname(doc), target)).replace(/\/$/, '');
        if (!shipped.has(path) && !dirs.has(path)) broken.push(`${doc}: ${m[1]}`);
      }
    }
    expect(links).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });

  it('keeps the bin runnable: shebang in dist/cli/main.js', () => {
    expect(readFileSync(join(app, 'node_modules/netfilter-sim/dist/cli/main.js'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});

describe('installed into an empty project', () => {
  it('imports the root entry and netfilter-sim/arbitraries with the project\'s fast-check', () => {
    writeFileSync(
      join(app, 'use.mjs'),
      `import * as fc from 'fast-check';
import * as sim from 'netfilter-sim';
import * as arb from 'netfilter-sim/arbitraries';
import pkg from 'netfilter-sim/package.json' with { type: 'json' };
const out = sim.formatIptablesSave('*nat\\n-A OUTPUT -p tcp -j REDIRECT --to-ports 4140\\nCOMMIT\\n');
const cidrs = fc.sample(arb.cidr(), { numRuns: 5, seed: 1 });
console.log(JSON.stringify({ version: pkg.version, out, cidrs, arbitraries: Object.keys(arb).sort() }));
`,
    );
    const r = JSON.parse(ok('node', ['use.mjs'], app)) as { version: string; out: string; cidrs: unknown[]; arbitraries: string[] };
    const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(r.version).toBe(own.version);
    expect(r.out).toBe('*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A OUTPUT -p tcp -j REDIRECT --to-ports 4140\nCOMMIT\n');
    expect(r.cidrs).toHaveLength(5);
    for (const c of r.cidrs) expect(c).toMatch(/^[0-9a-f.:]+\/\d+$/);
    expect(r.arbitraries).toEqual(expect.arrayContaining(['cidr', 'rule', 'ruleset', 'rulesetText', 'packet', 'connection']));
  });

  it('does not load fast-check from the root entry', () => {
    writeFileSync(
      join(app, 'root-only.mjs'),
      `await import('netfilter-sim');
console.log(JSON.stringify({ ok: true }));
`,
    );
    // A resolve hook that fails as soon as anything under fast-check is resolved.
    writeFileSync(
      join(app, 'hooks.mjs'),
      `export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.includes('/node_modules/fast-check/')) throw new Error('root entry loaded fast-check: ' + r.url);
  return r;
}
`,
    );
    writeFileSync(join(app, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
    expect(JSON.parse(ok('node', ['--import', './register.mjs', 'root-only.mjs'], app))).toEqual({ ok: true });
  });

  it('type-checks a TypeScript consumer (nodenext, strict, without @types/node)', () => {
    writeFileSync(
      join(app, 'consumer.ts'),
      `import * as fc from 'fast-check';
import { formatIptablesSave, parseIptablesSave } from 'netfilter-sim';
import { cidr, rulesetText } from 'netfilter-sim/arbitraries';
const text: string = formatIptablesSave('*nat\\nCOMMIT\\n');
const parsed = parseIptablesSave(text);
const texts: fc.Arbitrary<string> = rulesetText();
const nets: string[] = fc.sample(cidr(), 1);
export { parsed, texts, nets };
`,
    );
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, types: [], skipLibCheck: false },
        files: ['consumer.ts'],
      }),
    );
    ok(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], app);
  });

  it('runs the bin: npx netfilter-sim --help', () => {
    const out = ok('npx', ['--no', '--', 'netfilter-sim', '--help'], app);
    expect(out).toMatch(/^netfilter-sim \d+\.\d+\.\d+/);
    expect(out).toContain('Usage: netfilter-sim <command>');
    expect(out).toContain('fmt');
  });

  it('runs a shipped example with plain node: examples/quick-start.mjs', () => {
    const out = ok('node', ['node_modules/netfilter-sim/examples/quick-start.mjs'], app);
    expect(out.split('\n')[0]).toBe('local 127.0.0.1 4140 10.96.0.10:80');
  });

  it("runs the README's tour on the shipped pod manifests: netfilter-sim mesh linkerd", () => {
    const dir = 'node_modules/netfilter-sim/examples/mesh';
    const out = ok('npx', ['--no', '--', 'netfilter-sim', 'mesh', 'linkerd', '--client', `${dir}/web.yaml`, '--server', `${dir}/api.yaml`], app);
    expect(out).toContain('verdict: meshed (both proxies were traversed)');
  });

  it('runs the bin: npx netfilter-sim version, and its bash completion script parses', () => {
    expect(ok('npx', ['--no', '--', 'netfilter-sim', 'version'], app)).toBe(`${pack.version}\n`);
    const script = ok('npx', ['--no', '--', 'netfilter-sim', 'completion', 'bash'], app);
    expect(script).toContain('complete -o default -F _netfilter_sim netfilter-sim');
    ok('bash', ['-n'], app, script);
  });

  it('runs the bin: npx netfilter-sim fmt - reads standard input', () => {
    const r = sh('npx', ['--no', '--', 'netfilter-sim', 'fmt', '-'], app, '*nat\n-N X\n-A OUTPUT -j X\nCOMMIT\n');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:X - [0:0]\n-A OUTPUT -j X\nCOMMIT\n');
    expect(r.status).toBe(0);
  });

  it('runs the bin: npx netfilter-sim playground serves the shipped page on 127.0.0.1', async () => {
    const { spawn } = await import('node:child_process');
    const child = spawn('npx', ['--no', '--', 'netfilter-sim', 'playground', '--port', '0'], { cwd: app, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((done, fail) => {
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => { out += d.toString(); const m = /http:\/\/127\.0\.0\.1:\d+\//.exec(out); if (m) done(m[0]); });
        child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
        child.on('exit', (code) => fail(new Error(`playground exited ${code}: ${err}`)));
      });
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('<script');
      const asset = /src="\.?\/?(assets\/[^"]+\.js)"/.exec(html);
      expect(asset).not.toBeNull();
      expect((await fetch(url + asset![1])).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('runs the bin: bad input exits 1 with FILE:LINE:COLUMN, no stack trace', () => {
    const r = sh('npx', ['--no', '--', 'netfilter-sim', 'fmt', '-'], app, '*filter\n-A INPUT -s 1.2.3.999 -j ACCEPT\nCOMMIT\n');
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^<stdin>:2:13: /);
    expect(r.stderr).not.toContain('    at ');
  });
});

describe('package linters on the tarball', () => {
  it('publint --strict: all good', () => {
    const out = ok('npx', ['--no', '--', 'publint', 'run', tarball, '--strict'], ROOT);
    expect(out).toContain('All good!');
  });

  it('attw --profile esm-only: no problems on any entry', () => {
    const r = sh('npx', ['--no', '--', 'attw', tarball, '--profile', 'esm-only', '--format', 'json'], ROOT);
    const report = JSON.parse(r.stdout) as { analysis: { types: unknown; entrypoints: Record<string, unknown> }; problems?: Record<string, unknown[]> };
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(['.', './arbitraries', './package.json']);
    expect(report.analysis.types).toBeTruthy();
    expect(r.status, r.stdout + r.stderr).toBe(0);
  });
});
