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
