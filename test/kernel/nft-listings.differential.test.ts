// The grammar cases of test/fixtures/nft-listings against nft 1.0.6: each file is loaded with
// `nft -f` and listed back; the recorded listing beside it and formatNftRuleset must both be
// what nft lists now.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { describeNftKernel, kernelNftListMany, type KernelNftResult } from './harness.js';

const DIR = join(import.meta.dirname, '..', 'fixtures', 'nft-listings');
const names = readdirSync(DIR).filter((f) => f.endsWith('.nft')).map((f) => f.slice(0, -4)).sort();

describeNftKernel('nft grammar cases: fmt and the recorded listings vs nft list ruleset', () => {
  let results: KernelNftResult[] = [];
  beforeAll(async () => {
    results = await kernelNftListMany(names.map((n) => readFileSync(join(DIR, `${n}.nft`), 'utf8')));
  }, 300_000);
  it.for(names.map((n, i) => ({ n, i })))('$n', ({ n, i }) => {
    const k = results[i]!;
    if (!k.ok) expect.fail(`nft refused ${n}:\n${k.stderr}`);
    expect(readFileSync(join(DIR, `${n}.list`), 'utf8')).toBe(k.list);
    expect(formatNftRuleset(readFileSync(join(DIR, `${n}.nft`), 'utf8'))).toBe(k.list);
  });
});
