// `connect`'s namespace flags: --rule/--route (ip rule/ip route arguments), --listen attributes
// (transparent, uid=, gid=) and --probes FILE (several connections in one namespace).
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { parseIpRoute, parseIpRule } from '../../src/engine/path/ip-args.js';
import { thrown as errorOf } from '../thrown.js';

async function cli(args: string[], files: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files);
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

const TPROXY = '*mangle\n-A PREROUTING -d 10.9.9.0/24 -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x1/0x1\nCOMMIT\n';
const POLICY = ['--rule', 'fwmark 1 lookup 100', '--route', 'local default dev lo table 100'];
const REMOTE = ['--from', 'remote', '--src', '10.1.0.5', '--dst', '10.9.9.9:80', '--json'];

describe('ip rule / ip route arguments', () => {
  it('reads fwmark rules as ip rule add does (IPv4 unless -6; hex, masks, table names, pref)', () => {
    expect(parseIpRule('fwmark 1 lookup 100')).toEqual({ fwmark: 1, table: 100, family: 4 });
    expect(parseIpRule('-6 from all fwmark 0x111/0xfff pref 32764 lookup 100')).toEqual({ fwmark: 0x111, mask: 0xfff, table: 100, family: 6, priority: 32764 });
    expect(parseIpRule('fwmark 010 table main')).toEqual({ fwmark: 8, table: 254, family: 4 });
  });

  it('refuses what it does not model or cannot read, naming the token', () => {
    for (const [text, token] of [
      ['fwmark x lookup 100', 'x'],
      ['fwmark 1/2/3 lookup 100', '1/2/3'],
      ['fwmark 1 lookup 0', '0'],
      ['fwmark 1 lookup 100 iif eth0', 'iif'],
      ['from 10.0.0.0/8 fwmark 1 lookup 100', '10.0.0.0/8'],
      ['fwmark 1 lookup 100 bogus', 'bogus'],
      ['fwmark 1 lookup', 'lookup'],
    ] as const) {
      const e = errorOf(() => parseIpRule(text));
      expect(e.code).toBe('BAD_CONFIG');
      expect(e.diagnostics[0]!.token).toBe(token);
      expect(e.message).toContain(`"${text}"`);
    }
    expect(errorOf(() => parseIpRule('lookup 100')).message).toMatch(/needs fwmark/);
    expect(errorOf(() => parseIpRule('fwmark 1')).message).toMatch(/needs lookup TABLE/);
  });

  it('reads routes as ip route add does (type, default per family, host prefixes, via/dev/table/src)', () => {
    expect(parseIpRoute('local default dev lo table 100')).toEqual({ dst: '0.0.0.0/0', type: 'local', dev: 'lo', table: 100 });
    expect(parseIpRoute('-6 local default dev lo table 100')).toEqual({ dst: '::/0', type: 'local', dev: 'lo', table: 100 });
    expect(parseIpRoute('default via fd00::1')).toEqual({ dst: '::/0', via: 'fd00::1' });
    expect(parseIpRoute('10.96.0.0/12 via 10.0.0.1 dev eth0 src 10.0.0.2')).toEqual({ dst: '10.96.0.0/12', via: '10.0.0.1', dev: 'eth0', src: '10.0.0.2' });
    expect(parseIpRoute('blackhole 192.0.2.7')).toEqual({ dst: '192.0.2.7/32', type: 'blackhole' });
    expect(parseIpRoute('unreachable fd00:1::/64 table local')).toEqual({ dst: 'fd00:1::/64', type: 'unreachable', table: 255 });
  });

  it('refuses bad routes naming the token', () => {
    for (const [text, token] of [
      ['local default dev lo table 100 metric 5', 'metric'],
      ['local 10.0.0.300 dev lo', '10.0.0.300'],
      ['10.0.0.0/33 dev eth0', '10.0.0.0/33'],
      ['10.0.0.0/8 via fd00::1', 'fd00::1'],
      ['-6 10.0.0.0/8 dev eth0', '10.0.0.0/8'],
      ['multicast 224.0.0.0/4 dev eth0', 'multicast'],
      ['10.0.0.0/8 dev', 'dev'],
      ['10.0.0.0/8 table x', 'x'],
    ] as const) {
      const e = errorOf(() => parseIpRoute(text));
      expect(e.code).toBe('BAD_CONFIG');
      expect(e.diagnostics[0]!.token).toBe(token);
    }
    expect(errorOf(() => parseIpRoute('local')).message).toMatch(/needs a destination prefix/);
  });
});

describe('connect --rule / --route / --listen attributes', () => {
  it('TPROXY reaches a transparent listener only with the policy routing and IP_TRANSPARENT', async () => {
    const files = { 't.rules': TPROXY };
    const base = ['connect', '--rules', 't.rules', ...REMOTE];
    const both = await cli([...base, '--listen', '0.0.0.0:15006,transparent', ...POLICY], files);
    expect(both.code).toBe(0);
    expect(JSON.parse(both.out)).toMatchObject({ outcome: 'local', address: '10.9.9.9', port: 80 });
    const notTransparent = await cli([...base, '--listen', '0.0.0.0:15006', ...POLICY], files);
    expect(JSON.parse(notTransparent.out)).toMatchObject({ outcome: 'dropped' });
    const noRule = await cli([...base, '--listen', '15006,transparent', '--route', 'local default dev lo table 100'], files);
    expect(JSON.parse(noRule.out)).toMatchObject({ outcome: 'dropped' });
  });

  it('uid= and gid= own every listener of the same --listen (owner rules see them on the SYN-ACK)', async () => {
    const files = { 'o.rules': '*filter\n-A OUTPUT -m owner --uid-owner 1337 -j DROP\n-A OUTPUT -m owner --gid-owner 7 -j REJECT\nCOMMIT\n' };
    const go = async (listen: string, port: number): Promise<unknown> =>
      JSON.parse((await cli(['connect', '--rules', 'o.rules', '--listen', listen, '--from', 'remote', '--src', '10.1.0.5', '--dst', `10.0.0.2:${port}`, '--json'], files)).out);
    expect(await go('8080,8081,uid=1337', 8081)).toMatchObject({ outcome: 'dropped' });
    expect(await go('8080,8081,uid=1000', 8081)).toMatchObject({ outcome: 'local', port: 8081 });
    expect(await go('8080,uid=1000,gid=7', 8080)).not.toMatchObject({ outcome: 'local' });
    expect(await go('8080', 8080)).toMatchObject({ outcome: 'local' });
  });

  it('refuses an unknown listener attribute or a bad owner as a usage error', async () => {
    const files = { 'e.rules': '*filter\nCOMMIT\n' };
    const a = await cli(['connect', '--rules', 'e.rules', '--listen', '8080,transparant', '--uid', '0', '--dst', '10.0.0.2:8080'], files);
    expect(a.code).toBe(2);
    expect(a.err).toContain('unknown attribute "transparant"');
    const b = await cli(['connect', '--rules', 'e.rules', '--listen', '8080,uid=-1', '--uid', '0', '--dst', '10.0.0.2:8080'], files);
    expect(b.code).toBe(2);
    expect(b.err).toContain('uid needs a number');
    const c = await cli(['connect', '--rules', 'e.rules', '--listen', 'transparent', '--uid', '0', '--dst', '10.0.0.2:8080'], files);
    expect(c.code).toBe(2);
  });

  it('a bad --rule or --route exits 1 naming the token', async () => {
    const files = { 'e.rules': '*filter\nCOMMIT\n' };
    const a = await cli(['connect', '--rules', 'e.rules', '--rule', 'fwmark 1 lookup 100 iif eth0', '--uid', '0', '--dst', '10.0.0.2:8080'], files);
    expect(a.code).toBe(1);
    expect(a.err).toBe('netfilter-sim connect: ip rule "fwmark 1 lookup 100 iif eth0": "iif" is not modelled (rules are fwmark M[/MASK] [pref N] lookup TABLE)\n');
    const b = await cli(['connect', '--rules', 'e.rules', '--route', 'local default dev eth9 table 100', '--uid', '0', '--dst', '10.0.0.2:8080'], files);
    expect(b.code).toBe(1);
    expect(b.err).toContain('eth9');
  });

  it('explore takes --rule and --route: TPROXY with its policy routing delivers what it drops without', async () => {
    const args = ['explore', '--rules', 't.rules', '--listen', '15006,transparent', '--from', 'remote', '-4', '--dst', '10.9.9.0/24', '--dport', '80', '--summary', '--json'];
    const outcomes = (out: string): string[] => (JSON.parse(out) as { outcomes: { outcome: string }[] }).outcomes.map((o) => o.outcome);
    const withPolicy = await cli([...args, ...POLICY], { 't.rules': TPROXY });
    expect(withPolicy.code, withPolicy.err).toBe(0);
    expect(outcomes(withPolicy.out)).toContain('local');
    const without = await cli(args, { 't.rules': TPROXY });
    expect(without.code, without.err).toBe(0);
    expect(outcomes(without.out)).not.toContain('local');
  });
});

describe('connect --probes', () => {
  const RECENT = '*filter\n'
    + '-A INPUT -p tcp --syn --dport 22 -m recent --update --seconds 60 --hitcount 2 --name ssh -j DROP\n'
    + '-A INPUT -p tcp --syn --dport 22 -m recent --set --name ssh\nCOMMIT\n';
  const SSH = '--from remote --src 10.1.0.5 --dst 10.0.0.2:22';

  it('runs the probes in order in one namespace, one result a line (recent lists carry over; --after moves the clock)', async () => {
    const probes = `# three SSH connections, then one a minute later\n${SSH}\n\n${SSH} --close\n  ${SSH}\n--after 61 ${SSH}\r\n--uid 0 --dst 10.0.0.2:22\n`;
    const r = await cli(['connect', '--rules', 'r.rules', '--listen', '22', '--probes', 'p.txt'], { 'r.rules': RECENT, 'p.txt': probes });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(5);
    expect(lines.map((l) => l.replace(/ \(.*$/, ''))).toEqual([
      '2: delivered to 10.0.0.2:22',
      '4: delivered to 10.0.0.2:22',
      '5: dropped: ETIMEDOUT',
      '6: delivered to 10.0.0.2:22',
      '7: delivered to 10.0.0.2:22',
    ]);
    expect(lines[1]).toContain('closed');
    const json = await cli(['connect', '--rules', 'r.rules', '--listen', '22', '--probes', 'p.txt', '--json'], { 'r.rules': RECENT, 'p.txt': probes });
    const objects = json.out.trimEnd().split('\n').map((l) => JSON.parse(l) as { outcome: string; steps: unknown[] });
    expect(objects.map((o) => o.outcome)).toEqual(['local', 'local', 'dropped', 'local', 'local']);
    expect(objects[2]!.steps.length).toBeGreaterThan(0);
  });

  it('checks every line before running any, and names FILE:LINE:COLUMN', async () => {
    const files = { 'r.rules': RECENT };
    const bad = async (text: string): Promise<{ code: number; out: string; err: string }> => cli(['connect', '--rules', 'r.rules', '--probes', 'p.txt'], { ...files, 'p.txt': text });
    const a = await bad(`${SSH}\n  --uid 1000 --dts 10.0.0.2:22\n`);
    expect(a.code).toBe(1);
    expect(a.out).toBe('');
    expect(a.err).toMatch(/^p\.txt:2:14: probe: Unknown option '--dts'/);
    const b = await bad('--uid 1000 --dst 10.0.0.300:22\n');
    expect(b.err).toMatch(/^p\.txt:1:18: probe: bad address "10\.0\.0\.300"/);
    const c = await bad('--from remote --dst 10.0.0.2:22\n');
    expect(c.err).toMatch(/^p\.txt:1:1: probe: --from remote needs --src IP/);
    const d = await bad('--uid 0 --dst 10.0.0.2:22 --after soon\n');
    expect(d.err).toMatch(/^p\.txt:1:\d+: probe: --after needs a number of seconds, not "soon"/);
    const e = await bad('# nothing\n\n');
    expect(e.code).toBe(1);
    expect(e.err).toContain('no probes in p.txt');
  });

  it('probe flags go in the file, not beside --probes', async () => {
    const files = { 'r.rules': RECENT, 'p.txt': `${SSH}\n` };
    const a = await cli(['connect', '--rules', 'r.rules', '--probes', 'p.txt', '--dst', '10.0.0.2:22'], files);
    expect(a.code).toBe(2);
    expect(a.err).toContain('--dst goes on the lines of the --probes file');
    expect((await cli(['connect', '--rules', 'r.rules', '--probes', 'p.txt', '--enumerate'], files)).code).toBe(2);
    expect((await cli(['connect', '--rules', 'r.rules', '--probes', 'p.txt', '--format', 'text'], files)).code).toBe(2);
    const missing = await cli(['connect', '--rules', 'r.rules', '--probes', 'nope.txt'], { 'r.rules': RECENT });
    expect(missing.code).toBe(1);
  });
});
