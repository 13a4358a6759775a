// nftables' own test suite (1.0.6's tests/py and tests/shell dumps, see nft-upstream.ts) as the
// oracle for the nft front end: every script goes through the real `nft -f` + `nft list ruleset`
// and through formatNftRuleset. A case agrees when both list the same bytes, or both refuse it
// on the same line. Cases the kernel here cannot judge are set aside by reason: statements whose
// kernel module this machine lacks (nft_queue, flowtables, bridge reject, bridge meta and
// conntrack), secmark objects (no SELinux here), and listings that depend on the time (`expires`). The report counts the rest, by reason; the test
// holds the agreement to what was measured, and fails on any crash.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { describeNftKernel, kernelNftListMany, type KernelNftResult } from './harness.js';
import { UPSTREAM_ROOT, upstreamPyCases, upstreamShellDumps } from './nft-upstream.js';

/** Agreement measured last (tests/py 5723/5723, 100 %; tests/shell 167/167, 100 %), less a margin. */
const FLOOR = { py: 0.998, sh: 0.98 } as const;

interface Case {
  readonly source: 'py' | 'sh';
  readonly id: string;
  readonly text: string;
}

type Verdict = 'same' | 'both-refuse' | 'refuse-line' | 'diff-list' | 'we-refuse' | 'we-accept' | 'crash';

interface Outcome {
  readonly verdict: Verdict;
  readonly reason: string;
}

/** Why the kernel here refused a script for want of a module or an LSM, if that is why. */
function kernelLacks(c: Case, err: string): string | undefined {
  // A tests/py script's rule is its last line; a listing is judged whole.
  const rule = c.source === 'py' ? c.text.split('\n').slice(-2).join('\n') : c.text;
  if (/No such file or directory/.test(err) && /\bqueue\b|\bflow(table)?\b/.test(rule)) return 'kernel module missing here (nft_queue, flowtables)';
  if (/No such file or directory/.test(err) && /\bsecmark\b/.test(rule)) return 'kernel here has no SELinux context for secmark';
  if (/No such file or directory/.test(err) && /^add rule bridge .*\breject\b/m.test(rule)) return 'kernel module missing here (bridge reject)';
  if (/Operation not supported|Protocol error/.test(err) && /^add (table|chain|rule) bridge|^table bridge/m.test(c.text)) return 'kernel module missing here (bridge meta, bridge conntrack)';
  return undefined;
}

function judge(c: Case, k: KernelNftResult): Outcome {
  let ours: { ok: true; list: string } | { ok: false; line: number | undefined; code: string; message: string };
  try {
    ours = { ok: true, list: formatNftRuleset(c.text) };
  } catch (e) {
    if (!(e instanceof NetfilterSimError)) return { verdict: 'crash', reason: e instanceof Error ? (e.stack ?? e.message) : String(e) };
    ours = { ok: false, line: e.span?.line, code: e.code, message: e.message };
  }
  if (k.ok && ours.ok) return k.list === ours.list ? { verdict: 'same', reason: '' } : { verdict: 'diff-list', reason: k.list.includes(' expires ') ? 'time-dependent listing (expires)' : 'listed differently' };
  if (!k.ok && !ours.ok) return (ours.line ?? null) === k.line ? { verdict: 'both-refuse', reason: '' } : { verdict: 'refuse-line', reason: 'refused on another line' };
  if (k.ok && !ours.ok) return { verdict: 'we-refuse', reason: ours.code === 'UNSUPPORTED' ? `not modelled: ${ours.message.replace(/^.*?: /, '').replace(/"[^"]*"/g, '"…"').slice(0, 70)}` : 'refused, nft accepts' };
  const lacks = kernelLacks(c, (k as { stderr: string }).stderr);
  if (lacks !== undefined) return { verdict: 'we-accept', reason: lacks };
  return { verdict: 'we-accept', reason: 'accepted, nft refuses' };
}

const SET_ASIDE = /^kernel module missing|^kernel here has no|^time-dependent/;

describeNftKernel("nftables' own tests (tests/py, tests/shell) vs nft 1.0.6 and the kernel", () => {
  const cases: Case[] = [
    ...upstreamPyCases().map((c): Case => ({ source: 'py', id: c.id, text: c.text })),
    ...upstreamShellDumps().map((d): Case => ({ source: 'sh', id: d.id, text: d.text })),
  ];
  const outcomes: Outcome[] = [];
  let kernel: KernelNftResult[] = [];
  const rate = { py: 0, sh: 0 };

  beforeAll(async () => {
    kernel = await kernelNftListMany(cases.map((c) => c.text));
    cases.forEach((c, i) => outcomes.push(judge(c, kernel[i]!)));
    const lines: string[] = [];
    for (const source of ['py', 'sh'] as const) {
      const mine = cases.map((c, i) => ({ c, o: outcomes[i]! })).filter((x) => x.c.source === source);
      const applicable = mine.filter((x) => !SET_ASIDE.test(x.o.reason));
      const agree = applicable.filter((x) => x.o.verdict === 'same' || x.o.verdict === 'both-refuse').length;
      rate[source] = agree / applicable.length;
      lines.push(`[kernel] nft tests/${source === 'py' ? 'py' : 'shell dumps'}: ${agree}/${applicable.length} agree (${(100 * rate[source]).toFixed(1)} %), ${mine.length - applicable.length} set aside, ${mine.length} in all`);
      const reasons = new Map<string, number>();
      for (const x of mine) if (x.o.reason !== '') reasons.set(`${x.o.verdict}: ${x.o.reason}`, (reasons.get(`${x.o.verdict}: ${x.o.reason}`) ?? 0) + 1);
      for (const [r, n] of [...reasons].sort((a, b) => b[1] - a[1]).slice(0, 25)) lines.push(`    ${String(n).padStart(5)}  ${r}`);
    }
    console.log(lines.join('\n'));
  }, 900_000);

  it('refuses what test/vectors/nftables-upstream/refusals.json says, on the same lines', () => {
    // The vectors test/nftables/upstream-refusals.test.ts holds us to, kept equal to the kernel.
    const saved = new Map((JSON.parse(readFileSync(join(UPSTREAM_ROOT, 'refusals.json'), 'utf8')) as { id: string; line: number }[]).map((r) => [r.id, r.line]));
    const now = new Map<string, number | null>();
    cases.forEach((c, i) => {
      const k = kernel[i]!;
      if (!k.ok && kernelLacks(c, k.stderr) === undefined) now.set(c.id, k.line);
    });
    expect(Object.fromEntries(now)).toEqual(Object.fromEntries(saved));
  });

  it('takes every case without crashing', () => {
    const crashes = cases.flatMap((c, i) => (outcomes[i]!.verdict === 'crash' ? [`${c.id}: ${outcomes[i]!.reason}`] : []));
    expect(crashes).toEqual([]);
  });

  it(`agrees with nft on at least ${100 * FLOOR.py} % of tests/py and ${100 * FLOOR.sh} % of the shell dumps`, () => {
    expect(cases.length).toBeGreaterThan(5000);
    expect(rate.py).toBeGreaterThanOrEqual(FLOOR.py);
    expect(rate.sh).toBeGreaterThanOrEqual(FLOOR.sh);
  });
});
