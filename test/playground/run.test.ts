/**
 * The playground's views give what the CLI gives for the same input: each view is run in this
 * process (as the page's worker runs it) and compared with the built CLI's output for the
 * equivalent flags. Needs the built `dist/` (`npm test` builds first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_STATE, checkRules, normalizeState, runCompile, runConnect, runExplore, runMesh, runPacket, shellWords, type PlaygroundState } from '../../src/playground/index.js';
import type { OutlineNode } from '../../src/trace/outline.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = join(ROOT, 'dist/cli/main.js');
const read = (p: string): string => readFileSync(join(ROOT, p), 'utf8');
const LINKERD = read('examples/linkerd-default.rules');
const tmp = mkdtempSync(join(tmpdir(), 'nfsim-playground-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function cli(args: string[], input?: { name: string; text: string }[]): { stdout: string; stderr: string; status: number | null } {
  for (const f of input ?? []) writeFileSync(join(tmp, f.name), f.text);
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmp, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

function state(over: Partial<PlaygroundState>): PlaygroundState {
  return normalizeState({ ...DEFAULT_STATE, ...over });
}

const linkerd = state({ rules: LINKERD, ns: { ...DEFAULT_STATE.ns, listen: '4140,4143,8080' } });

describe.skipIf(!existsSync(CLI))('the playground gives what the CLI gives', () => {
  it('check: an error at the line and column check reports, with its caret text', () => {
    const text = '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m owner --uid-owner 1337 -j REDIRECT --to-ports 15001x\nCOMMIT\n';
    const v = checkRules(state({ rules: text }));
    const c = cli(['check', 'rules'], [{ name: 'rules', text }]);
    expect(c.status).toBe(1);
    expect(v.ok).toBe(false);
    expect(v.diagnostics[0]).toMatchObject({ severity: 'error', line: 3, column: 67 });
    expect(v.diagnostics.map((d) => d.text).join('\n') + '\n').toBe(c.stderr);
  });

  it('check: nft text is detected and its errors placed as check places them', () => {
    const text = read('examples/nftables/broken.nft');
    const v = checkRules(state({ rules: text }));
    const c = cli(['check', 'rules'], [{ name: 'rules', text }]);
    expect(v.syntax).toBe('nft');
    expect(v.ok).toBe(c.status === 0);
    expect(v.diagnostics.map((d) => d.text).join('\n') + '\n').toBe(c.stderr);
  });

  it('check: a clean file prints the summary check prints', () => {
    const v = checkRules(state({ rules: LINKERD }));
    expect(v.ok).toBe(true);
    expect(`${v.summary}\n`).toBe(cli(['check', 'rules'], [{ name: 'rules', text: LINKERD }]).stdout);
  });

  it('connect: the result object, the tree and the outcome of connect', () => {
    const v = runConnect(linkerd);
    if (!v.ok) throw new Error(JSON.stringify(v));
    const args = ['connect', '--rules', 'rules', '--strict', '--listen', '4140,4143,8080', '--uid', '1000', '--dst', '10.96.0.10:80'];
    expect(v.command).toBe(`netfilter-sim ${args.join(' ')}`);
    expect(JSON.parse(JSON.stringify(v.result))).toEqual(JSON.parse(cli([...args, '--json'], [{ name: 'rules', text: LINKERD }]).stdout));
    expect(v.tree + v.outcome).toBe(cli(args).stdout);
    expect(v.text).toBe(cli([...args, '--format', 'text']).stdout.slice(0, v.text.length));
    expect(v.mermaid).toBe(cli([...args, '--format', 'mermaid']).stdout);
    expect(v.result).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140, originalDestination: '10.96.0.10:80' });
  });

  it('connect: the outline marks the rules the tree marks ★, with their lines in the source', () => {
    const v = runConnect(linkerd);
    if (!v.ok) throw new Error('connect failed');
    const marked: OutlineNode[] = [];
    const walk = (ns: readonly OutlineNode[]): void => ns.forEach((n) => { if (n.deciding) marked.push(n); walk(n.children); });
    walk(v.outline);
    const stars = v.tree.split('\n').filter((l) => l.includes('★')).map((l) => l.slice(l.indexOf('★') + 2));
    expect(marked.map((n) => n.text)).toEqual(stars);
    const redirect = marked.find((n) => n.text.startsWith('PROXY_INIT_OUTPUT:4 REDIRECT'))!;
    expect(redirect.span?.line).toBe(LINKERD.split('\n').findIndex((l) => l.includes('redirect-all-outgoing-to-proxy-port')) + 1);
    expect(v.outline.map((n) => n.kind)).toEqual(['packet', 'packet', 'packet']);
    expect(v.sequence.messages.map((m) => [m.from, m.end])).toEqual([['initiator', 'delivered'], ['responder', 'delivered'], ['initiator', 'delivered']]);
  });

  it('connect: a remote client, with the namespace form as flags', () => {
    const s = state({ rules: LINKERD, ns: { ...DEFAULT_STATE.ns, listen: '4143\n8080', ifaces: 'eth0=10.0.0.2/24', routes: '10.96.0.0/12 via 10.0.0.1 dev eth0' }, conn: { ...DEFAULT_STATE.conn, from: 'remote', src: '10.0.0.9', dst: '10.0.0.2:8080' } });
    const v = runConnect(s);
    if (!v.ok) throw new Error(JSON.stringify(v));
    const args = v.command.split(' ').slice(1).map((w) => w.replace(/^'(.*)'$/, '$1'));
    // The command's words re-split as a shell would: the route is one quoted word.
    const words = shellWords(v.command).slice(1);
    expect(words).toContain('10.96.0.0/12 via 10.0.0.1 dev eth0');
    expect(args[0]).toBe('connect');
    expect(JSON.parse(JSON.stringify(v.result))).toEqual(JSON.parse(cli([...words, '--json'], [{ name: 'rules', text: LINKERD }]).stdout));
    expect(v.result.port).toBe(4143);
  });

  it('trace: a packet as trace --packet prints it', () => {
    const s = state({ ...linkerd, packet: 'tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0' });
    const v = runPacket(s);
    if (!v.ok) throw new Error(JSON.stringify(v));
    expect(v.tree + v.outcome).toBe(cli(shellWords(v.command).slice(1), [{ name: 'rules', text: LINKERD }]).stdout);
  });

  it('connect: a rules error comes back with its place, not thrown', () => {
    const v = runConnect(state({ ...linkerd, rules: '*nat\n-A OUTPUT -j NOPE\nCOMMIT\n' }));
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.source).toBe('rules');
    expect(v.diagnostics[0]!.line).toBe(2);
    const bad = runConnect(state({ ...linkerd, ns: { ...linkerd.ns, listen: 'bogus=1' } }));
    expect(bad).toMatchObject({ ok: false, source: 'listen' });
  });

  it('explore: the classes of explore --json', () => {
    const s = state({ ...linkerd, explore: { ...DEFAULT_STATE.explore, from: 'local', family: '4' } });
    const v = runExplore(s);
    if (!v.ok) throw new Error(JSON.stringify(v));
    const out = cli(shellWords(v.command).slice(1).concat('--json'), [{ name: 'rules', text: LINKERD }]);
    expect(JSON.parse(JSON.stringify(v.result))).toEqual(JSON.parse(out.stdout));
    expect(v.report).toBe(cli(shellWords(v.command).slice(1)).stdout);
  });

  it('explore with policy routing: the classes of explore --rule … --route … --json', () => {
    const tproxy = '*mangle\n-A PREROUTING -d 10.9.9.0/24 -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1\nCOMMIT\n';
    const s = state({ rules: tproxy, ns: { ...DEFAULT_STATE.ns, listen: '15006,transparent', ipRules: 'fwmark 1 lookup 100', routes: 'local default dev lo table 100' }, explore: { ...DEFAULT_STATE.explore, from: 'remote', family: '4' } });
    const v = runExplore(s);
    if (!v.ok) throw new Error(JSON.stringify(v));
    expect(v.command).toContain("--rule 'fwmark 1 lookup 100'");
    const out = cli(shellWords(v.command).slice(1).concat('--json'), [{ name: 'rules', text: tproxy }]);
    expect(JSON.parse(JSON.stringify(v.result))).toEqual(JSON.parse(out.stdout));
    expect(v.result.classes.some((c) => c.outcome === 'local' && c.rules.some((r) => r.includes('TPROXY')))).toBe(true);
  });

  for (const [mesh, client, server, extra] of [
    ['linkerd', 'web.yaml', 'api.yaml', {}],
    ['linkerd', 'web.yaml', 'api.yaml', { cni: true, nativeSidecars: 'off', phase: 'init:fetch-config' }],
    ['istio', 'istio-web.yaml', 'istio-api.yaml', {}],
    ['istio', 'ambient-web.yaml', 'ambient-api.yaml', {}],
  ] as const) {
    it(`mesh ${mesh} ${client} ${server} ${JSON.stringify(extra)}: the verdict, hops and diagnosis of mesh --json`, () => {
      const files = [{ name: 'client.yaml', text: read(`examples/mesh/${client}`) }, { name: 'server.yaml', text: read(`examples/mesh/${server}`) }];
      const v = runMesh(state({ mesh: { ...DEFAULT_STATE.mesh, mesh, client: files[0]!.text, server: files[1]!.text, ...extra } }));
      if (!v.ok) throw new Error(JSON.stringify(v));
      const words = shellWords(v.command).slice(1);
      expect(v.json).toEqual(JSON.parse(cli([...words, '--json'], files).stdout));
      expect(v.text).toBe(cli(words).stdout);
    });
  }

  it('mesh: a manifest error names the pod and its line', () => {
    const v = runMesh(state({ mesh: { ...DEFAULT_STATE.mesh, client: 'kind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n    - name: web\n      securityContext: {runAsUser: root}\n' } }));
    expect(v).toMatchObject({ ok: false, source: 'client' });
  });

  for (const [mesh, flags, format] of [
    ['linkerd', '-p 4143 -o 4140 -u 2102 --ipv6=false', 'save'],
    ['linkerd', '-p 4143 -o 4140 -u 2102 --inbound-ports-to-ignore 4190,4191', 'commands'],
    ['istio', '-p 15001 -z 15006 -u 1337 -m REDIRECT -i \'*\' -b \'*\'', 'restore'],
    ['istio', '-p 15001 -z 15006 -u 1337 -m TPROXY -i \'*\' -b \'*\'', 'save'],
  ] as const) {
    it(`compile ${mesh} ${flags} --format ${format}`, () => {
      const v = runCompile(state({ compile: { mesh, input: 'flags', flags, pod: '', format } }));
      if (!v.ok) throw new Error(JSON.stringify(v));
      expect(v.output).toBe(cli(['compile', mesh, ...shellWords(flags), '--format', format]).stdout);
      expect(shellWords(v.command).slice(1)).toEqual(['compile', mesh, ...shellWords(flags), '--format', format]);
    });
  }

  for (const [mesh, pod] of [['linkerd', 'web.yaml'], ['istio', 'istio-web.yaml']] as const) {
    it(`compile ${mesh} --pod ${pod}`, () => {
      const text = read(`examples/mesh/${pod}`);
      const v = runCompile(state({ compile: { mesh, input: 'pod', flags: '', pod: text, format: 'save' } }));
      if ('diagnostics' in v) throw new Error(JSON.stringify(v));
      expect(v.output).toBe(cli(['compile', mesh, '--pod', 'pod.yaml'], [{ name: 'pod.yaml', text }]).stdout);
      expect(v.output).toContain('COMMIT');
    });
  }

  it('compile: a flag proxy-init does not know is an error', () => {
    expect(runCompile(state({ compile: { ...DEFAULT_STATE.compile, flags: '--nope' } }))).toMatchObject({ ok: false, source: 'flags' });
  });
});

describe('a state from a link', () => {
  it('keeps known fields of the right type and drops the rest', () => {
    const s = normalizeState({ view: 'mesh', rules: 42, strict: 'yes', conn: { from: 'elsewhere', uid: '7', evil: 1 }, extra: true, __proto__: { view: 'x' } });
    expect(s.view).toBe('mesh');
    expect(s.rules).toBe('');
    expect(s.strict).toBe(true);
    expect(s.conn).toEqual({ ...DEFAULT_STATE.conn, uid: '7' });
    expect(Object.keys(s)).toEqual(Object.keys(DEFAULT_STATE));
    expect(normalizeState(null)).toEqual(DEFAULT_STATE);
    expect(normalizeState([1, 2])).toEqual(DEFAULT_STATE);
  });
});

describe('shell words', () => {
  it('splits as a shell does, without expansions', () => {
    expect(shellWords(`a 'b c' "d \\"e\\" $f" g\\ h \\\n i`)).toEqual(['a', 'b c', 'd "e" $f', 'g h', 'i']);
    expect(shellWords('')).toEqual([]);
    expect(() => shellWords("'open")).toThrow(/unterminated/);
  });
});
