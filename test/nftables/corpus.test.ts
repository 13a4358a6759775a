/**
 * The real-world nft corpus (test/fixtures/nft-corpus, described in test/kernel/nft-corpus.ts):
 * every file lists exactly as nft 1.0.6 listed it (recorded beside it; the kernel differential
 * test/kernel/nft-corpus.differential.test.ts compares with nft live and makes the probes with
 * real sockets).
 */
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { CORPUS, corpusListing, corpusText } from '../kernel/nft-corpus.js';

describe('real-world nft rule sets list as nft 1.0.6 lists them', () => {
  it('has the shapes the issue names', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(13);
  });
  it.for(CORPUS)('$name ($shape)', (c) => {
    expect(formatNftRuleset(corpusText(c.name), c.interfaces ? { interfaces: c.interfaces } : {})).toBe(corpusListing(c.name));
  });
});

describe('real-world nft rule sets run in a namespace', () => {
  it.for(CORPUS)('$name: every probe gets an outcome', (c) => {
    const ns = new Netns({
      nft: corpusText(c.name), listen: [...c.listen],
      interfaces: { eth0: ['10.0.0.2/24', 'fd00::2/64'], ...Object.fromEntries((c.interfaces ?? []).map((n) => [n, []])) },
    });
    for (const p of c.probes) expect(['local', 'remote', 'refused', 'dropped']).toContain(ns.connect(p, { trace: false }).outcome);
  });
});
