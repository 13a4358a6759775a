// Every refusal of the catalogue (refusal-cases.ts) against `netfilter-sim check`, without the
// kernel: what the kernel did is pinned in each case (test/kernel/refusals.differential.test.ts
// asserts it still does), and check must agree, under both back ends.
import { describe, expect, it } from 'vitest';
import { agrees, checkCase, REFUSAL_CASES } from './refusal-cases.js';

describe('check agrees with every refusal of the catalogue', () => {
  for (const backend of ['nft', 'legacy'] as const) {
    it.for(REFUSAL_CASES)(`${backend}: $name`, async (c) => {
      const refused = backend === 'legacy' ? c.legacy ?? c.refused : c.refused;
      const r = await checkCase(c, backend);
      expect(agrees(c, refused, r), `${c.source}\nthe load ${refused ? 'fails' : 'succeeds'}; check exit ${r.code}:\n${r.err}`).toBe(true);
    });
  }

  it('covers both answers', () => {
    expect(REFUSAL_CASES.filter((c) => c.refused).length).toBeGreaterThan(60);
    expect(REFUSAL_CASES.filter((c) => !c.refused).length).toBeGreaterThan(20);
  });
});
