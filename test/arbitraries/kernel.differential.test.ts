// The arbitraries against the kernel: every generated rule set loads with iptables-restore
// (ip6tables-restore) into a throw-away namespace, and iptables-save prints it exactly as
// netfilter-sim's printer does. Valid by construction means valid for the kernel.
import * as fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { rulesetText } from '../../src/arbitraries/index.js';
import { describeKernel, kernelSaveMany, type KernelSaveResult } from '../kernel/harness.js';

const PER_FAMILY = 120;

interface Case {
  readonly index: number;
  readonly family: 4 | 6;
  /** iptables-restore input, written as generators write it. */
  readonly restore: string;
  /** What netfilter-sim prints for the same draft. */
  readonly save: string;
}

const cases: Case[] = [];
for (const family of [4, 6] as const) {
  const seed = 9000 + family;
  const restores = fc.sample(rulesetText({ family, format: 'restore' }), { seed, numRuns: PER_FAMILY });
  const saves = fc.sample(rulesetText({ family }), { seed, numRuns: PER_FAMILY });
  restores.forEach((restore, index) => cases.push({ index, family, restore, save: saves[index]! }));
}

describeKernel('arbitraries differential: generated rule sets vs iptables-restore and iptables-save', () => {
  const kernel = new Map<Case, KernelSaveResult>();

  beforeAll(async () => {
    for (const family of [4, 6] as const) {
      const mine = cases.filter((c) => c.family === family);
      const results = await kernelSaveMany(mine.map((c) => c.restore), family);
      mine.forEach((c, i) => kernel.set(c, results[i]!));
    }
  });

  it.for(cases)('rule set $index, IPv$family', (c) => {
    const k = kernel.get(c)!;
    if (!k.ok) expect.fail(`the kernel refused a generated rule set (status ${k.status}):\n${k.stderr}\n--- input ---\n${c.restore}`);
    expect(c.save, `--- input ---\n${c.restore}`).toBe(k.save);
  });
});
