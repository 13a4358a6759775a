import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

describe('netfilter-sim fmt', () => {
  it('formats a file read from standard input', async () => {
    const io = memoryIO({}, '*nat\n-N X\n-A OUTPUT -j X\nCOMMIT\n');
    expect(await run(['fmt', '-'], io)).toBe(0);
    expect(io.out).toBe('*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:X - [0:0]\n-A OUTPUT -j X\nCOMMIT\n');
    expect(io.err).toBe('');
  });
  it('reports bad input as FILE:LINE:COLUMN with a caret, exit 1, no stack trace', async () => {
    const io = memoryIO({ 'r.txt': '*filter\n-A INPUT -s 1.2.3.999 -j ACCEPT\nCOMMIT\n' });
    expect(await run(['fmt', 'r.txt'], io)).toBe(1);
    expect(io.err).toMatch(/^r\.txt:2:13: invalid IPv4 address "1\.2\.3\.999"/);
    expect(io.err).toContain('\n  -A INPUT -s 1.2.3.999 -j ACCEPT\n');
    expect(io.err).toContain('^^^^^^^^^');
    expect(io.err).not.toContain('    at ');
    expect(io.out).toBe('');
  });
  it('warns about what would fail to load but still prints, as iptables-restore --test', async () => {
    const io = memoryIO({}, '*filter\n-A INPUT -j NOPE\nCOMMIT\n');
    expect(await run(['fmt', '-'], io)).toBe(0);
    const io2 = memoryIO({}, '*filter\n-A NOPE -j ACCEPT\nCOMMIT\n');
    expect(await run(['fmt', '-'], io2)).toBe(0);
    expect(io2.err).toContain('warning: chain "NOPE" does not exist');
  });
  it('exits 2 on usage errors', async () => {
    const io = memoryIO();
    expect(await run(['fmt'], io)).toBe(2);
    expect(await run(['fmt', '--bogus', 'x'], io)).toBe(2);
    expect(await run(['nosuchcommand'], io)).toBe(2);
  });
  it('has --help with examples', async () => {
    const io = memoryIO();
    expect(await run(['fmt', '--help'], io)).toBe(0);
    expect(io.out).toContain('Examples:');
  });
});

describe('fmt: chain policies as iptables-restore reads them', () => {
  it('refuses a bad policy on a built-in chain (the load says "Bad policy name"), at its token', async () => {
    for (const [text, col] of [['*filter\n:FORWARD BLAH [0:0]\nCOMMIT\n', 10], ['*filter\n:INPUT RETURN [0:0]\nCOMMIT\n', 8]] as const) {
      const io = memoryIO({}, text);
      expect(await run(['fmt', '-'], io)).toBe(1);
      expect(io.err).toMatch(new RegExp(`^<stdin>:2:${col}: policy "(BLAH|RETURN)" invalid for built-in chain`));
      expect(io.out).toBe('');
    }
  });

  it('ignores the policy word of a user chain, as iptables-restore does, strict or lenient', async () => {
    for (const args of [['fmt', '-'], ['fmt', '--lenient', '-']]) {
      const io = memoryIO({}, '*filter\n:FOO BLAH [0:0]\n:PREROUTING ACCEPT [0:0]\n-A FOO -j ACCEPT\nCOMMIT\n');
      expect(await run(args, io)).toBe(0);
      expect(io.err).toBe('');
      expect(io.out).toBe('*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:FOO - [0:0]\n:PREROUTING - [0:0]\n-A FOO -j ACCEPT\nCOMMIT\n');
    }
  });
});
