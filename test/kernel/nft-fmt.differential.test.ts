// `formatNftRuleset` against the kernel: the same text is loaded with `nft -f` into an empty
// rule set in a throw-away namespace and listed with `nft list ruleset`; our listing must be
// the same bytes, and we must refuse what nft refuses, on the same line.
import { beforeAll, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { describeNftKernel, kernelNftListMany, type KernelNftResult } from './harness.js';
import { generateNftText, mutateNft } from './nft-generate.js';

const GENERATED = 320;
const MUTATIONS = 320;

interface Case {
  readonly seed: number;
  readonly text: string;
  readonly mutation?: string;
}

type Ours = { ok: true; list: string } | { ok: false; line: number | undefined; error: string };

function ours(c: Case): Ours {
  try {
    return { ok: true, list: formatNftRuleset(c.text, { file: '/dev/stdin' }) };
  } catch (e) {
    if (e instanceof NetfilterSimError) return { ok: false, line: e.span?.line, error: `${e.code}: ${e.message}` };
    return { ok: false, line: undefined, error: `crash: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}` };
  }
}

function report(title: string, c: Case, parts: Record<string, string>): string {
  const numbered = c.text.split('\n').map((l, i) => `${String(i + 1).padStart(3)}  ${l}`).join('\n');
  const lines = [`${title}: seed=${c.seed}${c.mutation ? ` mutation=${c.mutation}` : ''}`, '--- input ---', numbered];
  for (const [k, v] of Object.entries(parts)) lines.push(`--- ${k} ---`, v);
  return lines.join('\n');
}

function compare(c: Case, k: KernelNftResult): void {
  const o = ours(c);
  if (o.ok === false && o.error.startsWith('crash')) expect.fail(report('crashed', c, { ours: o.error }));
  if (!k.ok) {
    if (o.ok) expect.fail(report('nft refused, we accepted', c, { kernel: k.stderr, ours: o.list }));
    expect(o.line, report('refused on another line', c, { kernel: k.stderr, ours: o.error })).toBe(k.line);
    return;
  }
  if (!o.ok) expect.fail(report('nft accepted, we refused', c, { kernel: k.list, ours: o.error }));
  expect(o.list, report('listing differs', c, { kernel: k.list, ours: o.list })).toBe(k.list);
}

describeNftKernel('nft fmt differential: generated rule sets vs nft list ruleset', () => {
  const cases: Case[] = [];
  for (let seed = 1; seed <= GENERATED; seed++) cases.push({ seed, text: generateNftText(seed) });
  let kernel: KernelNftResult[] = [];
  beforeAll(async () => {
    kernel = await kernelNftListMany(cases.map((c) => c.text));
    const refused = kernel.filter((k) => !k.ok).length;
    console.log(`[kernel] nft accepted ${cases.length - refused}/${cases.length} generated rule sets`);
  }, 600_000);
  it('the generator mostly writes what nft accepts', () => {
    expect(kernel.filter((k) => k.ok).length).toBeGreaterThanOrEqual(cases.length * 0.8);
  });
  it.for(cases.map((c, i) => ({ ...c, i })))('seed $seed', (c) => compare(c, kernel[c.i]!));
});

describeNftKernel('nft fmt differential: mutations vs nft -f', () => {
  const cases: Case[] = [];
  for (let seed = 1; seed <= MUTATIONS; seed++) {
    const m = mutateNft(generateNftText(seed + 50_000), seed);
    cases.push({ seed, text: m.text, mutation: `${m.kind} at line ${m.line}` });
  }
  let kernel: KernelNftResult[] = [];
  beforeAll(async () => {
    kernel = await kernelNftListMany(cases.map((c) => c.text));
    const refused = kernel.filter((k) => !k.ok).length;
    console.log(`[kernel] nft refused ${refused}/${cases.length} mutations`);
  }, 600_000);
  it('a good share of the mutations is refused', () => {
    expect(kernel.filter((k) => !k.ok).length).toBeGreaterThanOrEqual(cases.length * 0.3);
  });
  it.for(cases.map((c, i) => ({ ...c, i })))('mutation seed $seed', (c) => compare(c, kernel[c.i]!));
});
