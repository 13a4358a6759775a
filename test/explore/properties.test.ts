// The law explore is tested by: its classes partition the space, and for every probe the class
// that holds it says what Netns.connect gives (with both evaluators).
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { rulesetText } from '../../src/arbitraries/index.js';
import { NetfilterSimError } from '../../src/errors.js';
import { explore } from '../../src/explore/index.js';
import type { ExploreResult, ExploreOptions } from '../../src/explore/index.js';
import { generateConnectCase, mulberry32 } from '../kernel/generate.js';
import { cornerProbes, expectAgreement, expectPartition } from './helpers.js';

const LISTEN = [8080, 4140, 4143, '127.0.0.1:15001'];
/** Every match the arbitraries have but those explore refuses by design (recent, statistic nth). */
const MATCHES = ['tcp', 'udp', 'icmp', 'icmp6', 'multiport', 'comment', 'owner', 'conntrack', 'state', 'mark', 'connmark', 'addrtype', 'iprange', 'limit', 'sctp', 'rpfilter', 'socket', 'mac'];

/** explore, or the typed refusal it is allowed to give (naming a rule). */
function exploreOrRefuse(options: ExploreOptions): ExploreResult | null {
  try {
    return explore({ maxRegions: 20000, ...options });
  } catch (e) {
    expect(e).toBeInstanceOf(NetfilterSimError);
    expect((e as NetfilterSimError).code).toBe('UNSUPPORTED');
    return null;
  }
}

describe('explore: classes partition the space and agree with connect', () => {
  test.prop([rulesetText({ family: 4, maxChains: 2, maxRules: 4, maxMatches: 2, matches: MATCHES }), fc.constantFrom('local' as const, 'remote' as const), fc.integer()], { numRuns: 40 })(
    'generated IPv4 rule sets',
    (rules, from, seed) => {
      const options = { rules, listen: LISTEN, from, family: 4 as const };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      expectPartition(r, 4);
      for (const p of cornerProbes(r, 4, mulberry32(seed), 12)) expectAgreement(r, options, p);
    },
  );

  test.prop([rulesetText({ family: 6, maxChains: 2, maxRules: 4, maxMatches: 2, matches: MATCHES }), fc.constantFrom('local' as const, 'remote' as const), fc.integer()], { numRuns: 25 })(
    'generated IPv6 rule sets',
    (rules6, from, seed) => {
      const options = { rules6, listen: LISTEN, from, family: 6 as const };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      expectPartition(r, 6);
      for (const p of cornerProbes(r, 6, mulberry32(seed), 12)) expectAgreement(r, options, p);
    },
  );

  test.prop([fc.integer({ min: 1, max: 100000 }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 30 })(
    'the kernel suite\'s generated pods, with their own probes',
    (seed, from) => {
      const c = generateConnectCase(seed);
      const options = { ...c.sim, from };
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
