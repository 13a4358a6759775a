// explore over native nftables chains (and nft beside iptables): the partition law, agreement
// with connect, and the typed refusals for what cannot be split exactly.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/errors.js';
import { explore } from '../../src/explore/index.js';
import { Netns } from '../../src/engine/netns.js';
import type { ExploreOptions, ExploreResult } from '../../src/explore/index.js';
import { mulberry32 } from '../kernel/generate.js';
import { generateNftConnectCase, generateNftText } from '../kernel/nft-generate.js';
import { cornerProbes, expectAgreement, expectPartition } from './helpers.js';

const NFT = `table ip t {
\tchain out {
\t\ttype nat hook output priority -100; policy accept;
\t\tmeta skuid 1337 return
\t\tip daddr 127.0.0.1 return
\t\ttcp dport { 22, 100-200 } return
\t\tip daddr . tcp dport { 10.0.0.1 . 80, 10.0.0.2 . 443 } accept
\t\ttcp dport 80 redirect to :4140
\t}
}
`;

describe('explore over native nftables', () => {
  it('splits on uid, address, port sets and concatenations, and agrees with connect', () => {
    const options = { from: 'local' as const, rules: NFT, listen: [4140], family: 4 as const };
    const r = explore(options);
    expectPartition(r, 4);
    const redirected = r.classes.filter((c) => c.outcome === 'local' && c.port === 4140);
    expect(redirected.length).toBeGreaterThan(0);
    for (const p of cornerProbes(r, 4, mulberry32(7), 60)) expectAgreement(r, options, p);
  });
});

const refusals: string[] = [];

/** explore, or the typed refusal it is allowed to give (naming a rule); null when refused. */
function exploreOrRefuse(options: ExploreOptions): ExploreResult | null {
  try {
    return explore({ maxRegions: 20000, ...options });
  } catch (e) {
    expect(e).toBeInstanceOf(NetfilterSimError);
    expect((e as NetfilterSimError).code).toBe('UNSUPPORTED');
    expect((e as NetfilterSimError).message).toMatch(/rule \d+ \(|more than/);
    refusals.push((e as NetfilterSimError).message);
    return null;
  }
}

const LISTEN = [8080, 15001, 15006, '127.0.0.1:15053'];

/**
 * A generated text without what explore refuses by design (a `limit` bucket and a `numgen inc`
 * counter carry over from earlier packets; the refusal has its own test), or null when the
 * simulator does not load the text (the generator also writes texts nft rejects).
 */
function explorable(text: string): string | null {
  // The generator may continue a rule on the next line (`\` newline) anywhere between words.
  const out = text
    .replace(/limit[\s\\]+rate[\s\\]+(over[\s\\]+)?\d+\/\w+([\s\\]+burst[\s\\]+\d+[\s\\]+packets)?/g, 'counter')
    .replace(/numgen[\s\\]+inc/g, 'numgen random');
  try {
    new Netns({ rules: out });
  } catch {
    return null;
  }
  return out;
}

describe('explore over generated nft rule sets: classes partition the space and agree with connect', () => {
  let explored = 0;
  let runs = 0;
  test.prop([fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 60 })(
    'the nft generator\'s rule sets (families ip, ip6, inet; sets, maps, verdict maps, concatenations, NAT)',
    (seed, from) => {
      const rules = explorable(generateNftText(seed));
      if (rules === null) return;
      runs++;
      const options = { rules, listen: LISTEN, from };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      explored++;
      for (const family of [4, 6] as const) {
        expectPartition(r, family);
        for (const p of cornerProbes(r, family, mulberry32(seed), 8)) expectAgreement(r, options, p);
      }
    },
  );
  it('explored them all but for the typed refusals (none expected once limit and numgen inc are out)', () => {
    expect(refusals).toEqual([]);
    expect(explored).toBe(runs);
  });

  test.prop([fc.integer({ min: 1, max: 100_000 }), fc.boolean(), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 40 })(
    'the kernel suite\'s nft and mixed (iptables + nft) pods, with their own probes',
    (seed, mixed, from) => {
      const c = generateNftConnectCase(seed, mixed);
      const options = { ...c.sim, nft: c.nft, from };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      for (const family of [4, 6] as const) {
        expectPartition(r, family);
        for (const p of cornerProbes(r, family, mulberry32(seed), 8)) expectAgreement(r, options, p);
      }
      for (const p of c.probes) {
        if (p.from !== from) continue;
        const probe: Record<string, string | number> = p.from === 'local' ? { uid: p.uid, gid: p.gid, dst: p.dst } : { src: p.src, dst: p.dst, iface: 'eth0' };
        expectAgreement(r, options, probe);
      }
    },
  );
});
