// The CLI as a person uses it: help on every command, files or standard input, JSON, exit codes
// (0 ok, 1 bad input, 2 usage), errors with the line and a caret, no stack traces, colour rules.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { colorFromEnv, FileReadError, memoryIO, readInput } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

const ROOT = resolve(import.meta.dirname, '../..');
const example = (p: string): string => readFileSync(join(ROOT, 'examples', p), 'utf8');
const LINKERD = example('linkerd-default.rules');
const WEB = example('mesh/web.yaml');
const API = example('mesh/api.yaml');
const GARBAGE_YAML = 'kind: Pod\nmetadata: [oops\n  name: web\n';
const dir = mkdtempSync(join(tmpdir(), 'nfsim-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[], files: Record<string, string> = {}, stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files, stdin);
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

const COMMANDS = [
  ['fmt'], ['check'], ['connect'], ['trace'], ['compile'], ['compile', 'linkerd'], ['compile', 'linkerd-cni'],
  ['compile', 'istio'], ['compile', 'istio-cni'], ['mesh'], ['demo'],
];

describe('help', () => {
  it.each(COMMANDS)('%s %s --help: usage and examples on stdout, exit 0', async (...cmd) => {
    const r = await cli([...cmd.filter((c) => c !== undefined), '--help']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toMatch(/^Usage: netfilter-sim /);
    if (cmd[0] !== 'demo') expect(r.out).toMatch(/\nExamples:\n {2}(netfilter-sim|iptables-save|kubectl)/);
  });

  it('-h is --help, and "help COMMAND" is "COMMAND --help"', async () => {
    for (const c of ['fmt', 'check', 'connect', 'trace', 'mesh', 'demo']) {
      const long = await cli([c, '--help']);
      expect((await cli([c, '-h'])).out).toBe(long.out);
      expect((await cli(['help', c])).out).toBe(long.out);
    }
  });

  it('no command: the overview on stderr, exit 2; --help: on stdout, exit 0', async () => {
    const none = await cli([]);
    expect(none).toMatchObject({ code: 2, out: '' });
    expect(none.err).toContain('Commands:');
    const help = await cli(['--help']);
    expect(help).toMatchObject({ code: 0, err: '' });
    expect(help.out).toContain('Exit status: 0 ok, 1 bad input (or a negative answer), 2 usage error.');
  });

  it('an unknown command suggests the closest one, exit 2', async () => {
    const r = await cli(['conect']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^netfilter-sim: unknown command "conect" \(did you mean "connect"\?\)/);
  });
});

describe('usage errors exit 2 and say where to look', () => {
  it.each([
    [['fmt', '--bogus', 'x'], 'fmt'],
    [['check'], 'check'],
    [['connect', '--bogus'], 'connect'],
    [['connect', '--rules', 'r', '--uid', 'x', '--dst', '1.2.3.4:80'], 'connect'],
    [['connect', '--rules', 'r', '--uid', '1', '--sport', '70000', '--dst', '1.2.3.4:80'], 'connect'],
    [['connect', '--rules', 'r', '--uid', '1', '--groups', 'wheel', '--dst', '1.2.3.4:80'], 'connect'],
    [['connect', '--rules', 'r', '--uid', '1', '--in', 'eth0', '--dst', '1.2.3.4:80'], 'connect'],
    [['connect', '--rules', 'r', '--from', 'remote', '--src', '10.1.0.5', '--uid', '1', '--dst', '10.0.0.2:80'], 'connect'],
    [['connect', '--rules', '-', '--rules6', '-', '--uid', '1', '--dst', '1.2.3.4:80'], 'connect'],
    [['trace', '--rules', 'r'], 'trace'],
    [['trace', '--rules', 'r', '--packet', 'tcp > 1.2.3.4:80 uid 1', '--format', 'xml'], 'trace'],
    [['mesh', 'linkerd', '--bogus'], 'mesh'],
    [['mesh', 'consul'], 'mesh'],
    [['mesh', 'linkerd', '--client', '-', '--server', '-'], 'mesh'],
    [['compile', 'nomad'], 'compile'],
    [['compile', 'linkerd', '--bogus'], 'compile linkerd'],
    [['compile', 'linkerd', '-p', '4143', '-o', '4140', '--json', '--format', 'save'], 'compile linkerd'],
    [['compile', 'linkerd-cni', '--pod', 'p.yaml'], 'compile linkerd-cni'],
    [['compile', 'linkerd-cni', '--conf', '-', '--pod', '-'], 'compile linkerd-cni'],
    [['compile', 'istio', '--format', 'yaml'], 'compile istio'],
    [['compile', 'istio-cni'], 'compile istio-cni'],
    [['demo', '--bogus'], 'demo'],
  ])('%j', async (args, name) => {
    const r = await cli(args as string[]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(new RegExp(`^netfilter-sim ${name}: .+\\nRun "netfilter-sim ${name} --help" for usage\\.\\n$`));
  });
});

describe('files and standard input', () => {
  it('every command reads "-" as standard input', async () => {
    expect((await cli(['fmt', '-'], {}, LINKERD)).out).toBe(LINKERD);
    expect((await cli(['check', '-'], {}, LINKERD)).out).toBe('<stdin>: ok (8 rules)\n');
    expect(JSON.parse((await cli(['connect', '--rules', '-', '--listen', '4140', '--uid', '1000', '--dst', '10.96.0.10:80', '--json'], {}, LINKERD)).out))
      .toMatchObject({ outcome: 'local', port: 4140, originalDestination: '10.96.0.10:80' });
    expect((await cli(['trace', '--rules', '-', '--packet', 'tcp > 10.96.0.10:80 uid 1000', '--json'], {}, LINKERD)).out).toContain('"PROXY_INIT_OUTPUT"');
    expect(JSON.parse((await cli(['mesh', 'linkerd', '--client', '-', '--server', 'api.yaml', '--json'], { 'api.yaml': API }, WEB)).out).verdict).toBe('meshed');
    const running = example('mesh/web-running.yaml');
    const cni = await cli(['compile', 'linkerd-cni', '--conf', 'c.json', '--pod', '-', '--format', 'commands'], { 'c.json': '{}' }, running);
    expect(cni.code).toBe(0);
  });

  it.each([
    [['fmt', 'FILE']],
    [['check', 'FILE']],
    [['connect', '--rules', 'FILE', '--uid', '1', '--dst', '1.2.3.4:80']],
    [['trace', '--rules', 'FILE', '--packet', 'tcp > 1.2.3.4:80 uid 1']],
    [['mesh', 'linkerd', '--client', 'FILE']],
    [['compile', 'istio-cni', '--pod', 'FILE']],
    [['compile', 'linkerd-cni', '--conf', 'FILE', '--pod', 'FILE']],
    [['compile', 'linkerd', '-p', '4143', '-o', '4140', '--existing', 'FILE']],
  ])('%j: a missing file or a directory is exit 1, named, without a stack trace', async (args) => {
    for (const [path, why] of [[join(dir, 'missing.rules'), 'no such file or directory'], [dir, 'is a directory']] as const) {
      const r = await cli(args.map((a) => (a === 'FILE' ? path : a)));
      expect(r.code).toBe(1);
      expect(r.err).toMatch(new RegExp(`^netfilter-sim [a-z -]+: cannot read ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: ${why}\\n$`));
    }
  });

  it('readInput names the file and the reason', () => {
    expect(() => readInput(join(dir, 'nope'))).toThrow(FileReadError);
    expect(() => readInput(join(dir, 'nope'))).toThrow(/^cannot read .*nope: no such file or directory$/);
    expect(readInput('-', () => 'from stdin')).toBe('from stdin');
  });

  it.each([
    [['mesh', 'linkerd', '--client', 'pod.yaml']],
    [['compile', 'istio-cni', '--pod', 'pod.yaml']],
    [['compile', 'linkerd-cni', '--conf', 'c.json', '--pod', 'pod.yaml']],
  ])('%j: a manifest that is not YAML is exit 1, with its line and a caret', async (args) => {
    const r = await cli(args, { 'pod.yaml': GARBAGE_YAML, 'c.json': '{}' });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^pod\.yaml:2:\d+: /);
    expect(r.err).toContain('\n  metadata: [oops\n');
    expect(r.err).toMatch(/\n +\^+\n/);
  });

  it('a manifest without a Pod names the file', async () => {
    for (const args of [['mesh', 'linkerd', '--client', 'x.yaml'], ['compile', 'istio-cni', '--pod', 'x.yaml']]) {
      const r = await cli(args, { 'x.yaml': 'just a string\n' });
      expect(r).toMatchObject({ code: 1, err: 'x.yaml: no Pod in the manifest\n' });
    }
  });
});

describe('connect and trace read rules as the engine does, and say what they dropped', () => {
  const TYPO = '*nat\n-A OUTPUT -p tcp -m mutliport --dports 80 -j REDIRECT --to-ports 4140\nCOMMIT\n';

  it('lenient (default): a warning with the line and a caret, then the simulation', async () => {
    const r = await cli(['connect', '--rules', 'typo.rules', '--uid', '1000', '--dst', '10.96.0.10:80', '--json'], { 'typo.rules': TYPO });
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^typo\.rules:2:21: warning: unknown match "mutliport" \(did you mean "multiport"\?\)/);
    expect(r.err).toContain('\n  -A OUTPUT -p tcp -m mutliport --dports 80 -j REDIRECT --to-ports 4140\n');
    expect(r.err).toContain('warning: unknown option "--dports" ignored');
    expect(JSON.parse(r.out).outcome).toBe('refused');
  });

  it('--strict: an error, exit 1', async () => {
    const r = await cli(['trace', '--strict', '--rules', 'typo.rules', '--packet', 'tcp > 10.96.0.10:80 uid 1000'], { 'typo.rules': TYPO });
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^typo\.rules:2:21: unknown match "mutliport"/);
  });

  it('load errors name the file they are in, IPv4 or IPv6', async () => {
    const r = await cli(['connect', '--rules', 'v4.rules', '--rules6', 'v6.rules', '--uid', '1', '--dst', '[fd00::9]:80'], {
      'v4.rules': LINKERD,
      'v6.rules': '*filter\n-A OUTPUT -j NOWHERE\nCOMMIT\n',
    });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^v6\.rules:2:\d+: .*NOWHERE/);
  });

  it('a bad address is exit 1, named by the command', async () => {
    const r = await cli(['connect', '--rules', 'l.rules', '--uid', '1000', '--dst', '10.96.0.300:80'], { 'l.rules': LINKERD });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^netfilter-sim connect: /);
  });
});

describe('JSON everywhere a result is printed', () => {
  it('compile --json is --format json', async () => {
    const linkerd = ['compile', 'linkerd', '-p', '4143', '-o', '4140', '-u', '2102', '--ipv6=false'];
    expect((await cli([...linkerd, '--json'])).out).toBe((await cli([...linkerd, '--format', 'json'])).out);
    const rulesets = JSON.parse((await cli([...linkerd, '--json'])).out) as { family: number; tables: { name: string }[] }[];
    expect(rulesets.map((r) => [r.family, r.tables.map((t) => t.name)])).toEqual([[4, ['nat']]]);
    expect((await cli(['compile', 'istio', '--json'])).out).toBe((await cli(['compile', 'istio', '--format', 'json'])).out);
  });

  it('fmt, check, connect, trace and mesh print one JSON document on stdout', async () => {
    const files = { 'l.rules': LINKERD };
    for (const args of [
      ['fmt', '--json', 'l.rules'],
      ['check', '--json', 'l.rules'],
      ['connect', '--rules', 'l.rules', '--uid', '1000', '--dst', '10.96.0.10:80', '--json'],
      ['trace', '--rules', 'l.rules', '--packet', 'tcp > 10.96.0.10:80 uid 1000', '--json'],
      ['trace', '--rules', 'l.rules', '--packet', 'tcp > 10.96.0.10:80 uid 1000', '--format', 'json'],
      ['mesh', 'istio', '--json'],
    ]) {
      const r = await cli(args, files);
      expect(r.code, args.join(' ')).toBe(0);
      expect(() => JSON.parse(r.out), args.join(' ')).not.toThrow();
    }
  });
});

describe('colour', () => {
  it('only on a terminal, never with NO_COLOR, forced by FORCE_COLOR', () => {
    expect(colorFromEnv({}, true)).toBe(true);
    expect(colorFromEnv({}, false)).toBe(false);
    expect(colorFromEnv({ NO_COLOR: '1' }, true)).toBe(false);
    expect(colorFromEnv({ NO_COLOR: '' }, true)).toBe(true); // no-color.org: only a non-empty value counts
    expect(colorFromEnv({ TERM: 'dumb' }, true)).toBe(false);
    expect(colorFromEnv({ FORCE_COLOR: '1' }, false)).toBe(true);
    expect(colorFromEnv({ FORCE_COLOR: '0' }, true)).toBe(true);
    expect(colorFromEnv({ FORCE_COLOR: '0' }, false)).toBe(false);
    expect(colorFromEnv({ FORCE_COLOR: '1', NO_COLOR: '1' }, true)).toBe(false);
  });

  it('memoryIO (not a terminal) gives plain text; --color forces it for one run', async () => {
    const plain = await cli(['mesh', 'linkerd']);
    expect(plain.out).not.toMatch(/\x1b\[/);
    const coloured = await cli(['mesh', 'linkerd', '--color']);
    expect(coloured.out).toMatch(/\x1b\[/);
  });
});

describe.skipIf(!existsSync(join(ROOT, 'dist/cli/main.js')))('the installed command', () => {
  const bin = (args: string[], env: Record<string, string | undefined> = {}) => {
    const merged: NodeJS.ProcessEnv = { ...process.env };
    for (const [k, v] of Object.entries(env)) {
      if (v === undefined) delete merged[k];
      else merged[k] = v;
    }
    return spawnSync(process.execPath, [join(ROOT, 'dist/cli/main.js'), ...args], { encoding: 'utf8', env: merged, input: '' });
  };

  it('prints no stack trace for a directory, a missing file or garbage', () => {
    for (const args of [['fmt', dir], ['check', join(dir, 'missing')], ['mesh', 'linkerd', '--client', dir], ['compile', 'istio-cni', '--pod', dir]]) {
      const r = bin(args);
      expect(r.status, args.join(' ')).toBe(1);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.stderr).not.toContain('internal error');
    }
  });

  it('is never coloured through a pipe, even with FORCE_COLOR unset and NO_COLOR set', () => {
    const env = { NO_COLOR: '1', FORCE_COLOR: undefined };
    expect(bin(['mesh', 'linkerd'], env).stdout).not.toMatch(/\x1b\[/);
    expect(bin(['mesh', 'linkerd'], { FORCE_COLOR: '1', NO_COLOR: undefined }).stdout).toMatch(/\x1b\[/);
  });
});
