// `formatIptablesSave` against the kernel: the same restore text is loaded with iptables-restore
// into a throw-away namespace and printed back with iptables-save; our printer must produce the
// same bytes, and must reject what iptables-restore rejects.
import { beforeAll, expect, it } from 'vitest';
import { generateRulesetText, mutate } from './generate.js';
import { describeKernel, kernelRestoreTestMany, kernelSaveMany } from './harness.js';
import type { KernelRestoreTestResult, KernelSaveResult } from './harness.js';
import { describeError, loadFormat } from './sim.js';
import type { FormatIptablesSave } from './sim.js';

const GENERATED_PER_FAMILY = 160; // 320 rule sets, v4 and v6
const MUTATIONS = 320;

interface Case {
  readonly seed: number;
  readonly family: 4 | 6;
  readonly text: string;
  readonly mutation?: string;
}

function ours(format: FormatIptablesSave, c: Case): { ok: true; save: string } | { ok: false; error: string } {
  try {
    return { ok: true, save: format(c.text, { family: c.family, strict: true }) };
  } catch (e) {
    return { ok: false, error: describeError(e) };
  }
}

function report(title: string, c: Case, parts: Record<string, string>): string {
  const lines = [`${title}: seed=${c.seed} family=${c.family}${c.mutation ? ` mutation=${c.mutation}` : ''}`, '--- input (restore text) ---', c.text];
  for (const [k, v] of Object.entries(parts)) lines.push(`--- ${k} ---`, v);
  return lines.join('\n');
}

describeKernel('fmt differential: generated rule sets vs iptables-save', () => {
  const cases: Case[] = [];
  for (let seed = 1; seed <= GENERATED_PER_FAMILY; seed++) {
    cases.push({ seed, family: 4, text: generateRulesetText(seed, 4) });
    cases.push({ seed, family: 6, text: generateRulesetText(seed, 6) });
  }
  const kernel = new Map<Case, KernelSaveResult>();
  let format: FormatIptablesSave | Error;

  beforeAll(async () => {
    format = await loadFormat().catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    if (format instanceof Error) return;
    for (const family of [4, 6] as const) {
      const mine = cases.filter((c) => c.family === family);
      const results = await kernelSaveMany(
        mine.map((c) => c.text),
        family,
      );
      mine.forEach((c, i) => kernel.set(c, results[i] as KernelSaveResult));
    }
  });

  it.for(cases)('seed $seed, IPv$family', (c) => {
    if (format instanceof Error) throw format;
    const k = kernel.get(c) as KernelSaveResult;
    const o = ours(format, c);
    if (!k.ok) {
      // The generator aims at valid input; the kernel still decides.
      expect(o.ok, report('kernel rejected, we accepted', c, { kernel: `status ${k.status}\n${k.stderr}`, ours: o.ok ? o.save : '' })).toBe(false);
      return;
    }
    if (!o.ok) expect.fail(report('kernel accepted, we rejected', c, { kernel: k.save, ours: o.error }));
    expect(o.save, report('printed form differs', c, { kernel: k.save, ours: o.save })).toBe(k.save);
  });
});

describeKernel('fmt differential: mutations vs iptables-restore (strict)', () => {
  const cases: Case[] = [];
  for (let seed = 1; seed <= MUTATIONS; seed++) {
    const family = seed % 2 === 0 ? 6 : 4;
    const m = mutate(generateRulesetText(seed + 10_000, family), seed, family);
    cases.push({ seed, family, text: m.text, mutation: `${m.kind} (${m.description})` });
  }
  const loaded = new Map<Case, KernelSaveResult>();
  const tested = new Map<Case, KernelRestoreTestResult>();
  let format: FormatIptablesSave | Error;

  beforeAll(async () => {
    format = await loadFormat().catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    if (format instanceof Error) return;
    for (const family of [4, 6] as const) {
      const mine = cases.filter((c) => c.family === family);
      const texts = mine.map((c) => c.text);
      const [l, t] = await Promise.all([kernelSaveMany(texts, family), kernelRestoreTestMany(texts, family)]);
      mine.forEach((c, i) => {
        loaded.set(c, l[i] as KernelSaveResult);
        tested.set(c, t[i] as KernelRestoreTestResult);
      });
    }
    // What only the kernel refuses (at commit) is `check`'s business, not the parser's.
    const commitOnly = cases.filter((c) => tested.get(c)?.ok && !loaded.get(c)?.ok);
    if (commitOnly.length > 0) {
      console.log(`[kernel] ${commitOnly.length}/${cases.length} mutations pass iptables-restore --test but fail the real load: ${commitOnly.map((c) => `seed ${c.seed} ${c.mutation?.split(' ')[0]}`).join(', ')}`);
    }
  });

  // Strict mode accepts exactly what `iptables-restore --test` accepts; where the real load
  // succeeded too, the printed form must be the kernel's.
  it.for(cases)('mutation seed $seed, IPv$family', (c) => {
    if (format instanceof Error) throw format;
    const t = tested.get(c) as KernelRestoreTestResult;
    const l = loaded.get(c) as KernelSaveResult;
    const o = ours(format, c);
    const kernelSays = `restore --test: status ${t.status}${t.stderr ? `\n${t.stderr}` : ''}\nreal restore: ${l.ok ? 'loaded' : `status ${l.status}\n${l.stderr}`}`;
    if (!t.ok) {
      expect(o.ok, report('iptables-restore rejected, we accepted', c, { kernel: kernelSays, ours: o.ok ? o.save : '' })).toBe(false);
      return;
    }
    if (!o.ok) expect.fail(report('iptables-restore accepted, we rejected', c, { kernel: kernelSays, ours: o.error }));
    if (l.ok) expect(o.save, report('printed form differs', c, { kernel: l.save, ours: o.save })).toBe(l.save);
  });
});
