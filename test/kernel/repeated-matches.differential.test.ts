// Rules with repeated tcp and udp matches (repeated-matches-generate.ts) against the kernel:
// each is loaded with iptables-restore into a throw-away namespace and listed with iptables-save
// (1.8.9, nf_tables), which merges the tcp and udp matches it turned into payload tests. Where
// the kernel loads the rule, `fmt` must print the same line; where the load fails, `check` must
// refuse it.
import { beforeAll, expect, it } from 'vitest';
import { repeatedMatchRule } from './repeated-matches-generate.js';
import { describeKernel, kernelSaveMany, type KernelSaveResult } from './harness.js';
import { formatIptablesSave } from '../../src/iptables/fmt.js';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

const PER_FAMILY = 250;

interface Case {
  readonly seed: number;
  readonly family: 4 | 6;
  readonly rule: string;
  readonly text: string;
}

const cases: Case[] = [];
for (let seed = 1; seed <= PER_FAMILY * 2; seed++) {
  const family = seed % 2 === 0 ? 6 : 4;
  const rule = repeatedMatchRule(seed, family);
  cases.push({ seed, family, rule, text: `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT ${rule}\nCOMMIT\n` });
}

describeKernel('repeated matches: fmt vs iptables-save', () => {
  const kernel = new Map<Case, KernelSaveResult>();
  beforeAll(async () => {
    for (const family of [4, 6] as const) {
      const mine = cases.filter((c) => c.family === family);
      const results = await kernelSaveMany(mine.map((c) => c.text), family);
      mine.forEach((c, i) => kernel.set(c, results[i]!));
    }
  }, 600_000);

  it.for(cases)('seed $seed (IPv$family): $rule', async (c) => {
    const k = kernel.get(c)!;
    if (k.ok) {
      expect(formatIptablesSave(c.text, { family: c.family }), `kernel:\n${k.save}`).toBe(k.save);
      return;
    }
    const io = memoryIO({}, c.text);
    const code = await run(['check', ...(c.family === 6 ? ['-6'] : []), '-'], io);
    expect(code, `the load failed:\n${k.stderr}\ncheck said:\n${io.out}${io.err}`).not.toBe(0);
  });

  it('merges happen: at least a third of the loaded rules list fewer tcp/udp matches than they were given', () => {
    const merged = cases.filter((c) => {
      const k = kernel.get(c)!;
      if (!k.ok) return false;
      const count = (s: string): number => (s.match(/-m (tcp|udp)\b/g) ?? []).length;
      const given = count(c.rule) + (/^-p \w+ --/.test(c.rule) ? 1 : 0);
      return count(k.save) < given;
    });
    expect(merged.length).toBeGreaterThan(cases.filter((c) => kernel.get(c)!.ok).length / 3);
  });
});
