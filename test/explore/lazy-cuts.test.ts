// explore cuts addresses and ports at the namespace's own ranges (routes, special and local
// addresses, listeners, peers) only where a run reads them. Checked here over the whole space
// against cutting every field up front: wherever a class of one and a class of the other meet,
// they give the same outcome for every probe there, by the same rules.
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rulesetText } from '../../src/arbitraries/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { explore, expectedFor } from '../../src/explore/index.js';
import type { ExploreClass, ExploreOptions, ExploreResult } from '../../src/explore/index.js';
import { addressText } from '../../src/model/address.js';
import { bigToWords } from '../../src/explore/instrument.js';
import { generateConnectCase } from '../kernel/generate.js';
import { generateNftConnectCase } from '../kernel/nft-generate.js';
import { compileIstio, parseIstioIptablesArgs } from '../../src/index.js';
import { ranges } from './helpers.js';

const LISTEN = [8080, 4140, 4143, '127.0.0.1:15001'];
const MATCHES = ['tcp', 'udp', 'icmp', 'icmp6', 'multiport', 'comment', 'owner', 'conntrack', 'state', 'mark', 'connmark', 'addrtype', 'iprange', 'limit', 'sctp', 'rpfilter', 'socket', 'mac', 'recent'];

function both(options: ExploreOptions): [ExploreResult, ExploreResult] | null {
  try {
    return [explore({ maxRegions: 50000, ...options }), explore({ maxRegions: 50000, ...options }, { eagerCuts: true })];
  } catch (e) {
    expect(e).toBeInstanceOf(NetfilterSimError);
    expect((e as NetfilterSimError).code).toBe('UNSUPPORTED');
    return null;
  }
}

/** What a class says for one probe, with every alternative and the deciding rules. */
function says(c: ExploreClass, probe: Record<string, string | number>): unknown {
  return { outcomes: (c.alternatives ?? [c]).map((o) => ({ ...expectedFor(o, probe as { dst: string }), p: 'probability' in o ? o.probability : 1 })), rules: c.rules, assumptions: c.assumptions ?? [] };
}

/** Every pair of boxes that meet, one of each result: the same answer at both corners of the meeting. */
function expectSameEverywhere(lazy: ExploreResult, eager: ExploreResult, ifaces: readonly string[]): number {
  let met = 0;
  for (const family of [4, 6] as const) {
    const boxes = (r: ExploreResult) => r.classes.filter((c) => c.family === family).flatMap((c) => c.boxes.map((b) => ({ c, b, rs: ranges(b, r.fields, ifaces) })));
    const a = boxes(lazy);
    const b = boxes(eager);
    for (const x of a) {
      for (const y of b) {
        const meet = x.rs.map(([lo, hi], f) => [lo > y.rs[f]![0] ? lo : y.rs[f]![0], hi < y.rs[f]![1] ? hi : y.rs[f]![1]] as const);
        if (meet.some(([lo, hi]) => lo > hi)) continue;
        met++;
        for (const corner of [0, 1] as const) {
          const v = meet.map((m) => m[corner]);
          const text = (n: bigint): string => addressText(bigToWords(n, family), family);
          const at = (name: string): bigint => v[lazy.fields.indexOf(name)]!;
          // A local IPv6 socket connecting to ::ffff:0:0/96 makes an IPv4 connection, outside the
          // IPv6 space explore partitions (docs/explore.md).
          if (lazy.from === 'local' && family === 6 && at('dst') >> 32n === 0xffffn) continue;
          const dport = Number(at('dport'));
          const dst = family === 6 ? `[${text(at('dst'))}]:${dport}` : `${text(at('dst'))}:${dport}`;
          const probe: Record<string, string | number> = lazy.from === 'local' ? { uid: Number(at('uid')), gid: Number(at('gid')), dst } : { src: text(at('src')), dst, iface: ifaces[Number(at('iface'))]! };
          expect(says(x.c, probe), `${JSON.stringify(probe)}: lazy class ${JSON.stringify(x.c.example)}, eager class ${JSON.stringify(y.c.example)}`).toEqual(says(y.c, probe));
        }
      }
    }
  }
  return met;
}

describe('explore cuts at the namespace\'s ranges where a run reads them, exactly as cutting them all up front', () => {
  test.prop([rulesetText({ family: 4, maxChains: 2, maxRules: 4, maxMatches: 2, matches: MATCHES }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 30 })(
    'generated IPv4 rule sets',
    (rules, from) => {
      const r = both({ rules, listen: LISTEN, from, family: 4 });
      if (r !== null) expect(expectSameEverywhere(r[0], r[1], ['eth0'])).toBeGreaterThan(0);
    },
  );

  test.prop([rulesetText({ family: 6, maxChains: 2, maxRules: 4, maxMatches: 2, matches: MATCHES }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 20 })(
    'generated IPv6 rule sets',
    (rules6, from) => {
      const r = both({ rules6, listen: LISTEN, from, family: 6 });
      if (r !== null) expect(expectSameEverywhere(r[0], r[1], ['eth0'])).toBeGreaterThan(0);
    },
  );

  test.prop([fc.integer({ min: 1, max: 100000 }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 30 })(
    'the kernel suite\'s generated pods (routes, peers, listeners on addresses, both families)',
    (seed, from) => {
      const c = generateConnectCase(seed);
      const r = both({ ...c.sim, from });
      if (r !== null) expect(expectSameEverywhere(r[0], r[1], ['eth0'])).toBeGreaterThan(0);
    },
  );

  test.prop([fc.integer({ min: 1, max: 100000 }), fc.boolean(), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 20 })(
    'the kernel suite\'s nft and mixed (iptables + nft) pods',
    (seed, mixed, from) => {
      const c = generateNftConnectCase(seed, mixed);
      const r = both({ ...c.sim, nft: c.nft, from });
      if (r !== null) expect(expectSameEverywhere(r[0], r[1], ['eth0'])).toBeGreaterThan(0);
    },
  );

  test('the Linkerd pod and Istio\'s pods (iptables and native nftables), both spaces', () => {
    const args = ['-p', '15001', '-z', '15006', '-u', '1337', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,15020'];
    const pods: Omit<ExploreOptions, 'from'>[] = [
      { rules: readFileSync(join(__dirname, '../fixtures/linkerd/injected-default.save'), 'utf8'), listen: [4140, 4143, 4191, 8080] },
      { rules: compileIstio(parseIstioIptablesArgs(args)).restore.map((r) => r.text).join(''), listen: [15001, 15006, 15090, 8080] },
      { nft: compileIstio(parseIstioIptablesArgs([...args, '--native-nftables'])).nft, listen: [15001, 15006, 15090, 8080] },
    ];
    for (const pod of pods) {
      for (const from of ['local', 'remote'] as const) {
        const r = both({ ...pod, from });
        expect(r).not.toBeNull();
        expect(expectSameEverywhere(r![0], r![1], ['eth0'])).toBeGreaterThan(0);
        // Fewer regions are run, never more.
        expect(r![0].regions).toBeLessThan(r![1].regions);
      }
    }
  });
});
