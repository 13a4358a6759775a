// Errors that used to be unclear, and answers that used to be silently wrong.
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { Netns } from '../../src/engine/path/netns.js';
import { parsePacketSpec } from '../../src/engine/path/probe.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatDiagnostic } from '../../src/model/diagnostic-text.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';

async function cli(args: string[], files: Record<string, string> = {}, stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files, stdin);
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

describe('unclear errors made clear', () => {
  it('CRLF line endings: the CR is shown as \\r, the cause is named', async () => {
    const r = await cli(['fmt', '-'], {}, '*filter\r\n-A INPUT -j ACCEPT\r\nCOMMIT\r\n');
    expect(r.code).toBe(1);
    expect(r.err).toContain('(the line ends with a carriage return (\\r): CRLF line endings');
    expect(r.err).toContain('␍');
    expect(r.err).not.toContain('\r');
    // what iptables-restore accepts with a CR (policy counters read by sscanf) is accepted
    expect(parseIptablesSave('*filter\n:INPUT ACCEPT [0:0]\r\nCOMMIT\n').diagnostics).toEqual([]);
    // lenient mode strips them
    expect((await cli(['fmt', '--lenient', '-'], {}, '*filter\r\n-A INPUT -j ACCEPT\r\nCOMMIT\r\n')).code).toBe(0);
  });

  it('CR-only line endings are named', () => {
    const d = parseIptablesSave('*filter\r-A INPUT -j ACCEPT\rCOMMIT\r').diagnostics[0]!;
    expect(d.message).toContain('the input has CR-only line endings');
    expect(d.message).toContain('"filter\\r-A"');
  });

  it('a byte-order mark is named (strict), skipped with a warning (lenient)', () => {
    const strict = parseIptablesSave('\ufeff*filter\nCOMMIT\n').diagnostics;
    expect(strict[0]!.message).toBe('line outside of a table (expected "*table") (the input starts with a UTF-8 byte-order mark (U+FEFF), which iptables-restore does not skip)');
    expect(formatDiagnostic(strict[0]!, '\ufeff*filter\nCOMMIT\n')).toContain('␣*filter');
    const lenient = parseIptablesSave('\ufeff*filter\n-A INPUT -j DROP\nCOMMIT\n', { mode: 'lenient' });
    expect(lenient.diagnostics.map((d) => d.severity)).toEqual(['warning']);
    expect(lenient.ruleset.tables[0]!.chains.find((c) => c.name === 'INPUT')!.rules).toHaveLength(1);
  });

  it('a negative number to a numeric flag says which flag wants a number', async () => {
    const r = await cli(['connect', '--uid', '-1', '--dst', '10.0.0.9:80']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--uid needs a value, and the next argument starts with "-"; numbers here are never negative');
  });

  it('deeply nested YAML is BAD_MANIFEST about nesting, not a stack overflow', async () => {
    const r = await cli(['mesh', 'linkerd', '--client', '-'], {}, `kind: Pod\nmetadata: {name: x}\nspec: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('nested more than 64 levels deep');
    expect(r.err).not.toMatch(/call stack/);
  });
});

describe('silent wrong answers made explicit', () => {
  it('uids: the same range (0 to 4294967295) in trace, connect, mesh and the library', async () => {
    expect(() => parsePacketSpec('tcp > 10.0.0.9:80 uid 4294967296')).toThrow('"uid" is at most 4294967295');
    expect(parsePacketSpec('tcp > 10.0.0.9:80 uid 4294967295').uid).toBe(4294967295);
    expect(() => parsePacketSpec('tcp > 10.0.0.9:80 mark 4294967296')).toThrow(NetfilterSimError);
    expect((await cli(['connect', '--uid', '4294967296', '--dst', '10.0.0.9:80'])).code).toBe(2);
    expect((await cli(['trace', '--packet', 'tcp > 10.0.0.9:80 uid 4294967296'])).code).toBe(1);
    expect((await cli(['mesh', 'linkerd', '--uid', '4294967296'])).err).toContain('--uid is at most 4294967295');
    expect(() => new Netns().connect({ from: 'local', uid: 2 ** 32, dst: '10.0.0.9:80' })).toThrow('bad uid');
  });

  it('--iface and --peer keys named __proto__ are kept, not dropped', async () => {
    const peer = await cli(['connect', '--peer', '__proto__=80', '--uid', '0', '--dst', '10.0.0.9:80']);
    expect(peer.code).toBe(1);
    expect(peer.err).toContain('bad peer address "__proto__"');
    const iface = await cli(['connect', '--iface', '__proto__=10.1.0.2/24', '--uid', '0', '--dst', '10.1.0.9:80', '--json']);
    expect(iface.code).toBe(0);
    expect(iface.out).toContain('__proto__');
  });

  it('a wrongly typed argument is BAD_ARGUMENT naming it', () => {
    const call = (f: () => unknown): string => {
      try {
        f();
        return 'no error';
      } catch (e) {
        return e instanceof NetfilterSimError ? `${e.code}: ${e.message}` : String(e);
      }
    };
    expect(call(() => parseIptablesSave(42 as unknown as string))).toBe('BAD_ARGUMENT: text must be a string, not an integer');
    expect(call(() => new Netns().trace({} as unknown as string))).toBe('BAD_ARGUMENT: packet.family must be an integer, not undefined');
  });
});
