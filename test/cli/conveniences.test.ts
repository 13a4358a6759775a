// What a command-line tool is expected to offer around its commands: version, shell completion
// derived from the command table, -o/--output as an alias of the output flags, conflicting output
// flags refused, "did you mean" for a mistyped flag, help on a subcommand, and error messages that
// cannot carry control characters from the input to the terminal.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { completionScript, commandTree } from '../../src/cli/commands/completion.js';
import { memoryIO } from '../../src/cli/io.js';
import { escapeControl, flagsOfHelp, resolveOutputFlags } from '../../src/cli/output.js';
import { run, VERSION } from '../../src/cli/run.js';

const ROOT = resolve(import.meta.dirname, '../..');
const LINKERD = readFileSync(join(ROOT, 'examples/linkerd-default.rules'), 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'nfsim-conv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[], files: Record<string, string> = {}, stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files, stdin);
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

const CONNECT = ['connect', '--rules', 'l.rules', '--listen', '4140,4143', '--uid', '1000', '--dst', '10.96.0.10:80'];

describe('version', () => {
  it('version, --version and -V print the package version', async () => {
    const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(own.version);
    for (const args of [['version'], ['--version'], ['-V']]) expect(await cli(args)).toEqual({ code: 0, out: `${own.version}\n`, err: '' });
  });

  it('version --json (and -o json) adds the modelled iptables and the Node.js version', async () => {
    for (const args of [['version', '--json'], ['version', '-o', 'json'], ['version', '--output=json']]) {
      const r = await cli(args);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.out)).toEqual({ version: VERSION, iptables: '1.8.9', node: process.version });
    }
  });

  it('version refuses arguments', async () => {
    const r = await cli(['version', 'now']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('version takes no arguments');
  });
});

describe('help on a subcommand', () => {
  it('"help compile istio" is "compile istio --help"', async () => {
    const nested = await cli(['help', 'compile', 'istio']);
    expect(nested.code).toBe(0);
    expect(nested.out).toMatch(/^Usage: netfilter-sim compile istio /);
    expect(nested).toEqual(await cli(['compile', 'istio', '--help']));
  });

  it('"help compile" is "compile --help"; "help version" and "help completion" too', async () => {
    expect(await cli(['help', 'compile'])).toEqual(await cli(['compile', '--help']));
    expect((await cli(['help', 'version'])).out).toMatch(/^Usage: netfilter-sim version/);
    expect((await cli(['help', 'completion'])).out).toMatch(/^Usage: netfilter-sim completion bash\|zsh\|fish/);
  });

  it('the command list names version and completion', async () => {
    const r = await cli(['--help']);
    expect(r.out).toMatch(/\n {2}version +print the version/);
    expect(r.out).toMatch(/\n {2}completion +print a shell completion script/);
  });
});

describe('-o / --output', () => {
  it('-o json is --json for connect, fmt and check, in every spelling', async () => {
    const files = { 'l.rules': LINKERD };
    const json = await cli([...CONNECT, '--json'], files);
    expect(json.code).toBe(0);
    for (const o of [['-o', 'json'], ['-ojson'], ['--output', 'json'], ['--output=json']]) expect(await cli([...CONNECT, ...o], files)).toEqual(json);
    expect(await cli(['fmt', '-o', 'json', 'l.rules'], files)).toEqual(await cli(['fmt', '--json', 'l.rules'], files));
    expect(await cli(['check', '-o', 'json', 'l.rules'], files)).toEqual(await cli(['check', '--json', 'l.rules'], files));
  });

  it('-o text is the default text output; -o FORMAT is --format FORMAT on connect, trace and mesh', async () => {
    const files = { 'l.rules': LINKERD };
    expect(await cli(['fmt', '-o', 'text', 'l.rules'], files)).toEqual(await cli(['fmt', 'l.rules'], files));
    expect(await cli([...CONNECT, '-o', 'text'], files)).toEqual(await cli([...CONNECT, '--format', 'text'], files));
    expect(await cli([...CONNECT, '-o', 'mermaid'], files)).toEqual(await cli([...CONNECT, '--format', 'mermaid'], files));
    const trace = ['trace', '--rules', 'l.rules', '--packet', 'tcp > 10.96.0.10:80 uid 1000'];
    expect(await cli([...trace, '-o', 'dot'], files)).toEqual(await cli([...trace, '--format', 'dot'], files));
    expect(await cli(['mesh', 'linkerd', '-o', 'json'], files)).toEqual(await cli(['mesh', 'linkerd', '--json'], files));
  });

  it('on compile, -o stays the component\'s own flag and --output is the alias of --format', async () => {
    const base = ['compile', 'linkerd', '-p', '4143', '-o', '4140', '-u', '2102', '--ipv6=false'];
    const commands = await cli([...base, '--output', 'commands']);
    expect(commands.code).toBe(0);
    expect(commands).toEqual(await cli([...base, '--format', 'commands']));
    expect(commands.out).toContain('-j REDIRECT --to-port 4140');
  });

  it('refuses a value the command does not have (exit 2)', async () => {
    const r = await cli(['fmt', '-o', 'yaml', 'l.rules'], { 'l.rules': LINKERD });
    expect(r.code).toBe(2);
    expect(r.err).toBe('netfilter-sim fmt: -o is json, text, not "yaml"\nRun "netfilter-sim fmt --help" for usage.\n');
  });

  it('leaves arguments after -- alone', () => {
    expect(resolveOutputFlags('fmt', ['--', '-o', 'json'])).toEqual(['--', '-o', 'json']);
    expect(resolveOutputFlags('demo', ['-o', 'json'])).toEqual(['-o', 'json']);
  });
});

describe('conflicting output flags are a usage error (exit 2)', () => {
  const files = { 'l.rules': LINKERD };
  it.each([
    [[...CONNECT, '--json', '--format', 'tree'], 'conflicting output flags: --json, --format tree'],
    [[...CONNECT, '-o', 'json', '--format', 'dot'], 'conflicting output flags: -o json, --format dot'],
    [[...CONNECT, '--format', 'text', '--format=dot'], 'conflicting output flags: --format text, --format dot'],
    [[...CONNECT, '--json', '--format', 'json'], 'conflicting output flags: --json, --format json'],
    [['fmt', '--json', '-o', 'text', 'l.rules'], 'conflicting output flags: --json, -o text'],
    [['mesh', 'linkerd', '--json', '--format', 'mermaid'], 'conflicting output flags: --json, --format mermaid'],
    [['compile', 'linkerd', '-p', '4143', '-o', '4140', '--json', '--output', 'save'], 'conflicting output flags: --json, --output save'],
  ])('%j', async (args, message) => {
    const r = await cli(args, files);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(message);
  });

  it('flags that agree are not a conflict', async () => {
    expect((await cli(['mesh', 'linkerd', '--json', '-o', 'json'], files)).code).toBe(0);
    expect((await cli(['compile', 'linkerd', '-p', '4143', '-o', '4140', '--json', '--format', 'json'], files)).code).toBe(0);
    expect((await cli([...CONNECT, '--format', 'tree', '-o', 'tree'], files)).code).toBe(0);
  });
});

describe('did you mean, for flags', () => {
  it.each([
    [['connect', '--lisen', '4140'], "netfilter-sim connect: Unknown option '--lisen' (did you mean \"--listen\"?)"],
    [['fmt', '--lenent', 'x'], "netfilter-sim fmt: Unknown option '--lenent' (did you mean \"--lenient\"?)"],
    [['mesh', 'linkerd', '--clinet', 'x'], "netfilter-sim mesh: Unknown option '--clinet' (did you mean \"--client\"?)"],
    [['check', '--bakend', 'nft', 'x'], "netfilter-sim check: Unknown option '--bakend' (did you mean \"--backend\"?)"],
  ])('%j', async (args, first) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe(first);
  });

  it('no suggestion when nothing is close', async () => {
    const r = await cli(['connect', '--zzzzzzzz']);
    expect(r.code).toBe(2);
    expect(r.err.split('\n')[0]).toBe("netfilter-sim connect: Unknown option '--zzzzzzzz'");
  });

  it('an unknown global option is compared with the global options', async () => {
    const r = await cli(['--verison']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^netfilter-sim: unknown option "--verison" \(did you mean "--version"\?\)/);
  });
});

describe('control characters from the input are escaped in error messages', () => {
  it('a CRLF file: no carriage return reaches standard error', async () => {
    const r = await cli(['fmt', 'crlf.rules'], { 'crlf.rules': '*filter\r\n-A INPUT -j ACCEPTX\r\nCOMMIT\r\n' });
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/[\r\u0000-\u0008\u000b-\u001f]/);
    // iptables-restore stops at the first line: its table name is "filter\r".
    expect(r.err.split('\n')[0]).toMatch(/^crlf\.rules:1:2: table name "filter\\r" invalid/);
  });

  it('a control character in a rule is escaped in the message, whatever the diagnostic', async () => {
    const r = await cli(['fmt', 'bell.rules'], { 'bell.rules': '*filter\n-A INPUT -s 10.0.0.\u00071 -j ACCEPT\nCOMMIT\n' });
    expect(r.code).toBe(1);
    expect(r.err).not.toMatch(/\u0007/);
  });

  it('an escape sequence in a flag or a file name cannot reach the terminal', async () => {
    const flag = await cli(['connect', '--x\u001b[2J']);
    expect(flag.code).toBe(2);
    expect(flag.err).toContain("Unknown option '--x\\x1b[2J'");
    const file = await cli(['fmt', `no-such\u0007file\u009b.rules`]);
    expect(file.code).toBe(1);
    expect(file.err).toBe('netfilter-sim fmt: cannot read no-such\\x07file\\x9b.rules: no such file or directory\n');
  });

  it('escapeControl keeps newlines, tabs and printable Unicode', () => {
    expect(escapeControl('a\tb\nc → é\u0000\u007f\u2028')).toBe('a\tb\nc → é\\x00\\x7f\\u{2028}');
  });

  it('standard output is data and is left as it is', async () => {
    const r = await cli(['compile', 'linkerd', '-p', '4143', '-o', '4140', '--format', 'json']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
  });
});

describe('shell completion', () => {
  const helpOf = async (path: readonly string[]): Promise<{ code: number; out: string }> => {
    const io = memoryIO();
    const code = await run([...path, '--help'], io);
    return { code, out: io.out };
  };

  it('the tree comes from the command table: every command, the meshes, each help\'s flags', async () => {
    const top = await cli(['--help']);
    const names = [...top.out.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((m) => m[1]);
    const tree = await commandTree(names.map((name) => ({ name: name!, summary: '' })), helpOf);
    expect(tree.map((c) => c.name)).toEqual(['fmt', 'check', 'connect', 'trace', 'explore', 'compile', 'mesh', 'cluster', 'playground', 'demo', 'version', 'completion']);
    const byName = new Map(tree.map((c) => [c.name, c]));
    expect(byName.get('compile')!.subcommands.map((s) => s.name)).toEqual(['linkerd', 'linkerd-cni', 'istio', 'istio-cni', 'istio-ambient']);
    expect(byName.get('mesh')!.subcommands.map((s) => s.name)).toEqual(['linkerd', 'istio']);
    expect(byName.get('cluster')!.subcommands.map((s) => s.name)).toEqual(['connect', 'reach', 'rules']);
    expect(byName.get('cluster')!.subcommands.find((s) => s.name === 'connect')!.flags).toEqual(expect.arrayContaining(['--snapshot', '--from', '--to', '--node-rules', '--hairpin']));
    expect(byName.get('completion')!.subcommands.map((s) => s.name)).toEqual(['bash', 'zsh', 'fish']);
    expect(byName.get('fmt')!.subcommands).toEqual([]);
    expect(byName.get('fmt')!.flags).toEqual(flagsOfHelp((await cli(['fmt', '--help'])).out));
    expect(byName.get('fmt')!.flags).toEqual(['--strict', '--lenient', '-4', '-6', '--counters', '--json', '--syntax', '--iface', '-I']);
    const istio = byName.get('compile')!.subcommands.find((s) => s.name === 'istio')!;
    expect(istio.flags).toEqual(expect.arrayContaining(['-p', '--envoy-port', '--redirect-dns', '--format']));
  });

  it('a new command in the table is completed without touching the completion code', async () => {
    const fake = async (path: readonly string[]): Promise<{ code: number; out: string }> =>
      path[0] === 'frobnicate'
        ? { code: path.length === 1 || path[1] === 'slow' ? 0 : 2, out: 'Usage: netfilter-sim frobnicate slow|fast [--widgets N]\n\n  --widgets N   how many\n' }
        : helpOf(path);
    const tree = await commandTree([{ name: 'fmt', summary: 'f' }, { name: 'frobnicate', summary: 'new' }], fake);
    const script = completionScript('bash', tree);
    expect(script).toContain('cmds="fmt frobnicate help"');
    expect(script).toContain('frobnicate)');
    expect(script).toContain('--widgets');
    // Only the names whose help works are subcommands.
    expect(tree[1]!.subcommands.map((s) => s.name)).toEqual(['slow']);
  });

  it('bash: the script loads, and completes commands, meshes, flags and file names', async () => {
    const script = (await cli(['completion', 'bash'])).out;
    const file = join(dir, 'nfsim.bash');
    writeFileSync(file, script);
    writeFileSync(join(dir, 'web.yaml'), '');
    const complete = (line: string): string[] => {
      const words = line.split(' ');
      const r = spawnSync('bash', ['-c', `source "$1"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _netfilter_sim; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', file], { cwd: dir, encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return r.stdout.split('\n').filter((l) => l !== '');
    };
    expect(complete('netfilter-sim ')).toEqual(['fmt', 'check', 'connect', 'trace', 'explore', 'compile', 'mesh', 'cluster', 'playground', 'demo', 'version', 'completion', 'help']);
    expect(complete('netfilter-sim co')).toEqual(['connect', 'compile', 'completion']);
    expect(complete('netfilter-sim cluster ')).toEqual(['connect', 'reach', 'rules']);
    expect(complete('netfilter-sim cluster connect --node')).toEqual(['--node-rules']);
    expect(complete('netfilter-sim compile ')).toEqual(['linkerd', 'linkerd-cni', 'istio', 'istio-cni', 'istio-ambient']);
    expect(complete('netfilter-sim compile istio --redirect')).toEqual(['--redirect-dns']);
    expect(complete('netfilter-sim connect --li')).toEqual(['--listen']);
    expect(complete('netfilter-sim help com')).toEqual(['compile', 'completion']);
    expect(complete('netfilter-sim completion ')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete('netfilter-sim --')).toEqual(['--help', '--version']);
    // An argument that is not a flag: nothing from us, so bash falls back to file names (-o default).
    expect(complete('netfilter-sim fmt we')).toEqual([]);
    // The values a flag's help names.
    expect(complete('netfilter-sim connect --syntax ')).toEqual(['iptables', 'nft']);
    expect(complete('netfilter-sim connect --from r')).toEqual(['remote']);
    expect(complete('netfilter-sim trace --format ')).toEqual(['text', 'tree', 'json', 'mermaid', 'dot']);
    expect(complete('netfilter-sim compile istio --format ')).toEqual(['save', 'restore', 'commands', 'json']);
    expect(complete('netfilter-sim version -o ')).toEqual(['json', 'text']);
    expect(complete('netfilter-sim mesh istio --native-sidecars ')).toEqual(['on', 'off']);
    expect(complete('netfilter-sim check --backend ')).toEqual(['nft', 'legacy']);
    expect(complete('netfilter-sim explore -')).toEqual(expect.arrayContaining(['-4', '-6']));
    // A flag whose value is not one of a few words (a file) still falls back to file names.
    expect(complete('netfilter-sim connect --rules we')).toEqual([]);
    expect(script).toContain('complete -o default -F _netfilter_sim netfilter-sim');
  });

  it('zsh and fish: every command, mesh and flag is in the script', async () => {
    const zsh = (await cli(['completion', 'zsh'])).out;
    const fish = (await cli(['completion', 'fish'])).out;
    expect(zsh.startsWith('#compdef netfilter-sim\n')).toBe(true);
    expect(zsh).toContain('compdef _netfilter_sim netfilter-sim');
    for (const c of ['fmt', 'check', 'connect', 'trace', 'compile', 'mesh', 'demo', 'version', 'completion']) {
      expect(zsh).toContain(`'${c}'`);
      expect(fish).toContain(`complete -c netfilter-sim -n __fish_use_subcommand -f -a ${c} -d `);
    }
    expect(zsh).toMatch(/ {8}istio-cni\) flags=\(--pod /);
    expect(fish).toContain("complete -c netfilter-sim -n '__fish_seen_subcommand_from compile; and not __fish_seen_subcommand_from linkerd linkerd-cni istio istio-cni istio-ambient' -f -a istio -d ");
    expect(fish).toContain("complete -c netfilter-sim -n '__fish_seen_subcommand_from compile; and __fish_seen_subcommand_from istio' -l redirect-dns");
    expect(fish).toContain("complete -c netfilter-sim -n '__fish_seen_subcommand_from connect' -l listen");
    expect(fish).toContain("-d 'simulate a TCP connection (or UDP datagram) through a pod\\'s rules'");
    // Flags that take one of a few words complete them.
    expect(zsh).toContain('--syntax) vals=(iptables nft) ;;');
    expect(fish).toContain("complete -c netfilter-sim -n '__fish_seen_subcommand_from connect' -l syntax -x -a 'iptables nft'");
    expect(fish).toContain("complete -c netfilter-sim -n '__fish_seen_subcommand_from compile; and __fish_seen_subcommand_from istio' -l format -x -a 'save restore commands json'");
    // Each shell's own parser accepts the script where the shell is installed.
    for (const [shell, text] of [['zsh', zsh], ['fish', fish]] as const) {
      const which = spawnSync('sh', ['-c', `command -v ${shell}`], { encoding: 'utf8' });
      if (which.status !== 0) continue;
      const f = join(dir, `nfsim.${shell}`);
      writeFileSync(f, text);
      expect(spawnSync(shell, ['-n', f], { encoding: 'utf8' }).status).toBe(0);
    }
  });

  it('usage errors: no shell, an unknown shell', async () => {
    expect((await cli(['completion'])).code).toBe(2);
    const r = await cli(['completion', 'tcsh']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown shell "tcsh" (one of: bash, zsh, fish)');
  });
});
