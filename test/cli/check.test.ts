import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

describe('netfilter-sim check', () => {
  it('reports loops, misplaced extensions and missing chains with carets, exit 1', async () => {
    const io = memoryIO({}, '*nat\n-N A\n-N B\n-A OUTPUT -j A\n-A A -j B\n-A B -j A\n-A POSTROUTING -p tcp -j REDIRECT --to-ports 1\n-A OUTPUT -j NOPE\nCOMMIT\n');
    expect(await run(['check', '-'], io)).toBe(1);
    expect(io.err).toMatch(/<stdin>:6:\d+: .*loop/);
    expect(io.err).toMatch(/<stdin>:7:\d+: REDIRECT/);
    expect(io.err).toMatch(/<stdin>:8:\d+: .*NOPE/);
  });
  it('says ok for a good rule set', async () => {
    const io = memoryIO({}, '*nat\n-N X\n-A OUTPUT -p tcp -j X\n-A X -p tcp -j REDIRECT --to-ports 4140\nCOMMIT\n');
    expect(await run(['check', '-'], io)).toBe(0);
    expect(io.out).toContain('ok (2 rules');
  });
  it('prints JSON with --json', async () => {
    const io = memoryIO({}, '*filter\n-A INPUT -j NOPE\nCOMMIT\n');
    expect(await run(['check', '--json', '-'], io)).toBe(1);
    const out = JSON.parse(io.out) as { ok: boolean; diagnostics: { code: string }[] };
    expect(out.ok).toBe(false);
    expect(out.diagnostics.map((d) => d.code)).toContain('UNKNOWN_CHAIN');
  });
});

describe('check refuses what the load refuses', () => {
  const checkText = async (text: string, args: string[] = [], files: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> => {
    const io = memoryIO(files, text);
    const code = await run(['check', ...args, '-'], io);
    return { code, out: io.out, err: io.err };
  };

  it.each([
    ['a built-in chain', '*nat\n-A PREROUTING -p tcp -j DROP\nCOMMIT\n', 2],
    ['a user chain, behind a match', '*nat\n:X - [0:0]\n-A X -p tcp -m tcp --dport 80 -j DROP\nCOMMIT\n', 3],
    ['a goto', '*nat\n:X - [0:0]\n-A X -g DROP\nCOMMIT\n', 3],
    ['-P', '*nat\n-P PREROUTING DROP\nCOMMIT\n', 2],
  ])('DROP in the nat table (%s), exit 1 at its line', async (_name, text, line) => {
    const r = await checkText(text);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`<stdin>:${line}:`);
    expect(r.err).toContain('The "nat" table is not intended for filtering');
  });

  it('takes a DROP policy on a nat chain line, as iptables-restore does', async () => {
    expect((await checkText('*nat\n:PREROUTING DROP [0:0]\nCOMMIT\n')).code).toBe(0);
  });

  it('keeps nat DROP with a warning when reading leniently', async () => {
    const r = await checkText('*nat\n-A OUTPUT -j DROP\nCOMMIT\n', ['--lenient']);
    expect(r.code).toBe(0);
    expect(r.err).toContain('warning: The "nat" table is not intended for filtering');
  });

  it.each([
    ['a referenced chain', '*filter\n:FOO - [0:0]\n-A INPUT -j FOO\n-X FOO\nCOMMIT\n', /chain INPUT still jumps to it/],
    ['a chain with rules', '*filter\n:FOO - [0:0]\n-A FOO -j ACCEPT\n-X FOO\nCOMMIT\n', /still has 1 rule/],
    ['every user chain, one not empty', '*filter\n:FOO - [0:0]\n:BAR - [0:0]\n-A FOO -j ACCEPT\n-X\nCOMMIT\n', /"FOO": it still has 1 rule/],
    ['a built-in chain', '*filter\n-X INPUT\nCOMMIT\n', /built-in chain "INPUT"/],
  ])('-X of %s is an error, not a warning', async (_name, text, message) => {
    const r = await checkText(text);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(message);
    expect(r.err).not.toContain('warning:');
  });

  it.each([
    ['-P on a user chain', '*filter\n:FOO - [0:0]\n-P FOO DROP\nCOMMIT\n'],
    ['-D of a rule that is not there', '*filter\n-D INPUT -j ACCEPT\nCOMMIT\n'],
    ['-A to a chain that does not exist', '*filter\n-A NOSUCH -j ACCEPT\nCOMMIT\n'],
    ['-E onto an existing chain', '*filter\n:FOO - [0:0]\n:BAR - [0:0]\n-E FOO BAR\nCOMMIT\n'],
  ])('%s is an error', async (_name, text) => {
    expect((await checkText(text)).code).toBe(1);
  });

  it('deletes an empty, unreferenced chain', async () => {
    const r = await checkText('*filter\n:FOO - [0:0]\n-X FOO\nCOMMIT\n');
    expect(r.code).toBe(0);
  });

  const SETS = 'create allow hash:ip family inet hashsize 1024 maxelem 65536\nadd allow 10.0.0.5\ncreate six hash:net family inet6\ncreate ports bitmap:port range 0-1024\n';
  const ACCT = '{ pkts = 00000000000000000000, bytes = 00000000000000000000 } = http;\n';

  it('warns, without --ipsets, that a named set must exist', async () => {
    const r = await checkText('*filter\n-A INPUT -m set --match-set allow src -j ACCEPT\nCOMMIT\n');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/warning: the rules name ipset "allow"; the load fails unless it exists/);
  });

  it('with --ipsets: a set that exists is ok; an unknown one, or one of the other family, is an error', async () => {
    const files = { 'sets.txt': SETS };
    expect((await checkText('*filter\n-A INPUT -m set --match-set allow src -m set --match-set ports dst -j SET --add-set allow src\nCOMMIT\n', ['--ipsets', 'sets.txt'], files)).code).toBe(0);
    const unknown = await checkText('*filter\n-A INPUT -m set --match-set nosuch src -j ACCEPT\nCOMMIT\n', ['--ipsets', 'sets.txt'], files);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("Set nosuch doesn't exist.");
    const target = await checkText('*filter\n-A INPUT -j SET --del-set gone src\nCOMMIT\n', ['--ipsets', 'sets.txt'], files);
    expect(target.err).toContain("Set gone doesn't exist.");
    const family = await checkText('*filter\n-A INPUT -m set --match-set six src\nCOMMIT\n', ['--ipsets', 'sets.txt'], files);
    expect(family.code).toBe(1);
    expect(family.err).toContain('The protocol family of set six is IPv6, which is not applicable.');
    expect((await checkText('*filter\n-A INPUT -m set --match-set six src\nCOMMIT\n', ['-6', '--ipsets', 'sets.txt'], files)).code).toBe(0);
  });

  it('--ipset NAME=ADDRS tells of one set', async () => {
    expect((await checkText('*filter\n-A INPUT -m set --match-set p src\nCOMMIT\n', ['--ipset', 'p=10.0.0.1'])).code).toBe(0);
    expect((await checkText('*filter\n-A INPUT -m set --match-set q src\nCOMMIT\n', ['--ipset', 'p=10.0.0.1'])).code).toBe(1);
  });

  it('with --nfacct: a known object is ok, an unknown one an error; without it, a warning', async () => {
    const files = { 'acct.txt': ACCT };
    expect((await checkText('*filter\n-A INPUT -m nfacct --nfacct-name http\nCOMMIT\n', ['--nfacct', 'acct.txt'], files)).code).toBe(0);
    const unknown = await checkText('*filter\n-A INPUT -m nfacct --nfacct-name dns\nCOMMIT\n', ['--nfacct', 'acct.txt'], files);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('nfacct object "dns" does not exist');
    const untold = await checkText('*filter\n-A INPUT -m nfacct --nfacct-name dns\nCOMMIT\n');
    expect(untold.code).toBe(0);
    expect(untold.err).toContain('warning: the rules name nfacct object "dns"');
  });

  it('refuses a bad --ipsets or --nfacct file with its line', async () => {
    const bad = await checkText('*filter\nCOMMIT\n', ['--ipsets', 'sets.txt'], { 'sets.txt': 'create x hash:bogus\n' });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('sets.txt:1:10');
    const acct = await checkText('*filter\nCOMMIT\n', ['--nfacct', 'a.txt'], { 'a.txt': 'two words\n' });
    expect(acct.code).toBe(1);
    expect(acct.err).toContain('a.txt:1:');
  });

  it('a comment over 255 bytes loads cut to 255: a warning that says so, exit 0', async () => {
    const r = await checkText(`*filter\n-A INPUT -m comment --comment ${'x'.repeat(300)} -j ACCEPT\nCOMMIT\n`);
    expect(r.code).toBe(0);
    expect(r.err).toContain('iptables 1.8.9 loads the rule and keeps the first 255 bytes');
  });
});

describe('fmt warnings', () => {
  it('a long comment is not said to fail the load; a missing chain is', async () => {
    const io = memoryIO({}, `*filter\n-A INPUT -m comment --comment ${'y'.repeat(256)} -j NOPE\nCOMMIT\n`);
    expect(await run(['fmt', '-'], io)).toBe(0);
    const lines = io.err.split('\n').filter((l) => l.includes('warning:'));
    expect(lines).toHaveLength(2);
    expect(lines.find((l) => l.includes('comment is 256 bytes'))).not.toContain('would fail');
    expect(lines.find((l) => l.includes('NOPE'))).toContain('(loading this into the kernel would fail)');
    expect(io.out).toContain(`--comment ${'y'.repeat(255)} -j NOPE`);
  });

  it('-X of a referenced chain: a warning that the load fails', async () => {
    const io = memoryIO({}, '*filter\n:FOO - [0:0]\n-A INPUT -j FOO\n-X FOO\nCOMMIT\n');
    expect(await run(['fmt', '-'], io)).toBe(0);
    expect(io.err).toContain('chain INPUT still jumps to it (iptables: CHAIN_DEL failed (Device or resource busy)) (loading this into the kernel would fail)');
  });

  it('DROP in the nat table is refused, as iptables-restore --test refuses it', async () => {
    const io = memoryIO({}, '*nat\n-A POSTROUTING -j DROP\nCOMMIT\n');
    expect(await run(['fmt', '-'], io)).toBe(1);
    expect(io.err).toContain('<stdin>:2:19: The "nat" table');
  });
});
