/**
 * What nft 1.0.6 and the kernel refuse in nftables' own test suite (test/vectors/nftables-upstream,
 * GPL-2.0 test data): `refusals.json` holds every script of `tests/py` and every `tests/shell`
 * listing that `nft -f` refused on this machine, with the line it named and its message. The
 * kernel differential (test/kernel/nft-upstream.differential.test.ts) holds the file equal to
 * what the kernel says; this test needs no kernel and asserts that we refuse each script on the
 * same line, with a typed error. Scripts refused only because this kernel lacks a module
 * (nft_queue, flowtables, bridge reject and bridge meta, SELinux for secmark) are not in the file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { UPSTREAM_ROOT, upstreamPyCases, upstreamShellDumps } from '../kernel/nft-upstream.js';

interface Refusal {
  readonly id: string;
  readonly line: number;
  readonly nft: string;
}

const refusals = JSON.parse(readFileSync(join(UPSTREAM_ROOT, 'refusals.json'), 'utf8')) as Refusal[];

/** Refusals we do not reproduce yet, each with what we do instead. */
const KNOWN: Readonly<Record<string, string>> = {};

describe("what nft 1.0.6 refuses in nftables' own tests, refused on nft's line", () => {
  const texts = new Map<string, string>([
    ...upstreamPyCases().map((c): [string, string] => [c.id, c.text]),
    ...upstreamShellDumps().map((d): [string, string] => [d.id, d.text]),
  ]);

  it('has the refusals the kernel gave', () => {
    expect(refusals.length).toBeGreaterThan(500);
    for (const r of refusals) expect(texts.has(r.id), r.id).toBe(true);
  });

  it('refuses each on the line nft names', () => {
    const wrong: string[] = [];
    for (const r of refusals) {
      if (KNOWN[r.id] !== undefined) continue;
      try {
        formatNftRuleset(texts.get(r.id)!);
        wrong.push(`${r.id}: accepted; nft: ${r.line}: ${r.nft}`);
      } catch (e) {
        if (!(e instanceof NetfilterSimError)) wrong.push(`${r.id}: crashed: ${String(e)}`);
        else if (e.span?.line !== r.line) wrong.push(`${r.id}: refused on line ${e.span?.line} (${e.message}); nft: ${r.line}: ${r.nft}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('still differs where it is known to', () => {
    for (const id of Object.keys(KNOWN)) {
      const r = refusals.find((x) => x.id === id)!;
      let line: number | undefined;
      try {
        formatNftRuleset(texts.get(id)!);
      } catch (e) {
        line = (e as NetfilterSimError).span?.line;
      }
      expect(line, id).not.toBe(r.line);
    }
  });
});
