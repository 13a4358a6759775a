// Narrowing is exact: the classes of a narrowed exploration are the full exploration's classes
// cut down to the narrowed box (none split, none changed), and the summary's counts add up to the
// narrowed space and say what connect gives for probes drawn from it.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { classOf, explore, expectedFor, summarizeExplore, renderExploreSummary } from '../../src/explore/index.js';
import type { ExploreClass, ExploreOptions, ExploreResult } from '../../src/explore/index.js';
import { parseAnyAddress } from '../../src/engine/state/routing.js';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectSpec } from '../../src/engine/path/netns.js';
import { bigToWords, wordsToBig } from '../../src/explore/instrument.js';
import { addressText } from '../../src/model/address.js';
import { generateConnectCase, mulberry32 } from '../kernel/generate.js';
import { cornerProbes, expectAgreement, exploreOrRefuse, ranges } from './helpers.js';
import { POLICY_PODS } from './policy-pods.js';

type Range = readonly [bigint, bigint];
const IFACES = ['eth0'];

const vol = (b: readonly Range[]): bigint => b.reduce((v, [lo, hi]) => (hi < lo ? 0n : v * (hi - lo + 1n)), 1n);
const meet = (a: readonly Range[], b: readonly Range[]): Range[] => a.map(([lo, hi], f) => [lo > b[f]![0] ? lo : b[f]![0], hi < b[f]![1] ? hi : b[f]![1]] as const);

function boxesOf(r: ExploreResult, c: ExploreClass): Range[][] {
  return c.boxes.map((b) => ranges(b, r.fields, IFACES));
}

/** `|A ∩ B|` for two unions of disjoint boxes. */
function meetVolume(a: readonly (readonly Range[])[], b: readonly (readonly Range[])[]): bigint {
  let n = 0n;
  for (const x of a) for (const y of b) n += vol(meet(x, y));
  return n;
}

/** A point of `A ∩ B` (their first meeting box's least corner), as a probe. */
function meetingProbe(r: ExploreResult, a: readonly (readonly Range[])[], b: readonly (readonly Range[])[]): Record<string, string | number> {
  for (const x of a) {
    for (const y of b) {
      const m = meet(x, y);
      if (vol(m) === 0n) continue;
      const at = (f: string): bigint => m[r.fields.indexOf(f)]![0];
      const text = (v: bigint): string => addressText(bigToWords(v, 4), 4);
      const dst = `${text(at('dst'))}:${at('dport')}`;
      return r.from === 'local' ? { uid: Number(at('uid')), gid: Number(at('gid')), dst } : { src: text(at('src')), dst, iface: 'eth0' };
    }
  }
  throw new Error('no meeting point');
}

/** The narrowed box of a case: prefixes and ranges around one of its probes. */
function box(seed: number, probe: { dst: string; src?: string; uid?: number }, from: 'local' | 'remote'): { options: Partial<ExploreOptions>; ranges: Range[] } {
  const rand = mulberry32(seed);
  const [addr, port] = probe.dst.split(':') as [string, string];
  const prefix = (a: string, len: number): [string, Range] => {
    const v = wordsToBig(parseAnyAddress(a)!.addr);
    const host = (1n << BigInt(32 - len)) - 1n;
    const base = v & ~host;
    return [`${addressText(bigToWords(base, 4), 4)}/${len}`, [base, base | host]];
  };
  const [dstText, dstRange] = prefix(addr, [8, 16, 24, 30, 32][Math.floor(rand() * 5)]!);
  const k = [0, 3, 1000][Math.floor(rand() * 3)]!;
  const p = Number(port);
  const dport: Range = [BigInt(Math.max(1, p - k)), BigInt(Math.min(65535, p + k))];
  const dportText = dport[0] === dport[1] ? String(dport[0]) : `${dport[0]}-${dport[1]}`;
  if (from === 'local') {
    const u = probe.uid ?? 0;
    const uid: Range = rand() < 0.5 ? [BigInt(u), BigInt(u)] : [0n, BigInt(u + 5)];
    return { options: { dst: dstText, dport: dportText, uid: `${uid[0]}-${uid[1]}` }, ranges: [uid, [0n, 0xffffffffn], dstRange, dport] };
  }
  const [srcText, srcRange] = prefix(probe.src ?? '10.0.0.9', [0, 16, 32][Math.floor(rand() * 3)]!);
  return { options: { dst: dstText, dport: dportText, src: srcText, iface: 'eth0' }, ranges: [srcRange, dstRange, dport, [0n, 0n]] };
}

/**
 * The narrowed exploration is the full one cut down to the box: every full class meets at most
 * one narrowed class and lies in it inside the box, a narrowed class is the union of the full
 * classes it meets inside the box, and those have its rules and outcome.
 */
function expectNarrowedExact(full: ExploreResult, narrowed: ExploreResult, b: readonly Range[]): void {
  const boxVolume = vol(b);
  expect(narrowed.spaces).toEqual([{ family: 4, probes: boxVolume.toString() }]);
  const fulls = full.classes.filter((c) => c.family === 4).map((c) => ({ c, boxes: boxesOf(full, c) }));
  const narrows = narrowed.classes.map((c) => ({ c, boxes: boxesOf(narrowed, c) }));
  let covered = 0n;
  for (const n of narrows) {
    for (const x of n.boxes) for (let f = 0; f < b.length; f++) expect(x[f]![0] >= b[f]![0] && x[f]![1] <= b[f]![1], `a box of ${JSON.stringify(n.c.example)} is outside the narrowed box`).toBe(true);
    const own = n.boxes.reduce((s, x) => s + vol(x), 0n);
    covered += own;
    let met = 0n;
    for (const f of fulls) {
      const v = meetVolume(n.boxes, f.boxes);
      if (v === 0n) continue;
      met += v;
      expect(n.c.rules, `narrowed class ${JSON.stringify(n.c.example)} against full class ${JSON.stringify(f.c.example)}`).toEqual(f.c.rules);
      const probe = meetingProbe(narrowed, n.boxes, f.boxes);
      const want = (f.c.alternatives ?? [f.c]).map((o) => expectedFor(o, probe as { dst: string }));
      const got = (n.c.alternatives ?? [n.c]).map((o) => expectedFor(o, probe as { dst: string }));
      expect(got, `probe ${JSON.stringify(probe)}`).toEqual(want);
    }
    expect(met).toBe(own);
  }
  expect(covered).toBe(boxVolume);
  for (const f of fulls) {
    const inBox = f.boxes.reduce((s, x) => s + vol(meet(x, b)), 0n);
    const meeting = narrows.filter((n) => meetVolume(n.boxes, f.boxes) > 0n);
    expect(meeting.length, `full class ${JSON.stringify(f.c.example)} is split by the narrowing`).toBeLessThanOrEqual(1);
    if (meeting.length === 1) expect(meetVolume(meeting[0]!.boxes, f.boxes)).toBe(inBox);
    else expect(inBox).toBe(0n);
  }
}

describe('explore narrowing', () => {
  test.prop([fc.integer({ min: 1, max: 100000 }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 25 })(
    "the kernel suite's generated pods: narrowed classes are the full classes cut to the box",
    (seed, from) => {
      const c = generateConnectCase(seed);
      const probe = c.probes.find((p) => p.from === from && !p.dst.startsWith('['));
      if (probe === undefined) return;
      const options = { ...c.sim, from, family: 4 as const };
      const full = exploreOrRefuse(options);
      if (full === null) return;
      const b = box(seed, probe, from);
      const narrowed = explore({ ...options, ...b.options, maxRegions: 20000 });
      expect(narrowed.narrowed).toBeDefined();
      expectNarrowedExact(full, narrowed, b.ranges);
      for (const p of cornerProbes(narrowed, 4, mulberry32(seed), 8)) expectAgreement(narrowed, options, p);
    },
  );

  it('with policy routing (the TPROXY and ambient pods): narrowed classes are the full classes cut to the box', () => {
    const full = (i: number, from: 'local' | 'remote'): ExploreResult => explore({ ...POLICY_PODS[i]!.options, from, family: 4 });
    for (let i = 0; i < POLICY_PODS.length; i++) {
      const remote = { dst: '10.0.0.0/24', dport: '15000-15010', src: '10.1.0.0/16' };
      const r = explore({ ...POLICY_PODS[i]!.options, from: 'remote', family: 4, ...remote });
      expectNarrowedExact(full(i, 'remote'), r, [[0x0a010000n, 0x0a01ffffn], [0x0a000000n, 0x0a0000ffn], [15000n, 15010n], [0n, 0n]]);
      const local = { dst: '127.0.0.0/8', dport: '15001,15006,8080', uid: '1336-1338' };
      const l = explore({ ...POLICY_PODS[i]!.options, from: 'local', family: 4, ...local });
      // Three single ports: the box's volume is the sum over them (expectNarrowedExact takes one range each).
      expect(l.spaces[0]!.probes).toBe((3n * (1n << 32n) * (1n << 24n) * 3n).toString());
      const f = full(i, 'local');
      for (const port of [15001n, 15006n, 8080n]) {
        const one = explore({ ...POLICY_PODS[i]!.options, from: 'local', family: 4, ...local, dport: String(port) });
        expectNarrowedExact(f, one, [[1336n, 1338n], [0n, 0xffffffffn], [0x7f000000n, 0x7fffffffn], [port, port]]);
      }
    }
  });

  it('a destination prefix of one family explores only that family', () => {
    const r = explore({ rules: '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -d 10.96.0.10 --dport 80 -j DNAT --to-destination 10.1.0.5:8080\nCOMMIT\n', from: 'local', dst: '10.96.0.0/12', dport: '80,443' });
    expect(r.spaces.map((s) => s.family)).toEqual([4]);
    expect(r.classes.every((c) => c.family === 4)).toBe(true);
    // uid × gid × 2^20 destinations × 2 ports.
    expect(r.spaces[0]!.probes).toBe(((1n << 32n) * (1n << 32n) * (1n << 20n) * 2n).toString());
    const dnat = classOf(r, { uid: 0, gid: 0, dst: '10.96.0.10:80' })!;
    expect(expectedFor(dnat, { dst: '10.96.0.10:80' }).address).toBe('10.1.0.5');
    expect(classOf(r, { uid: 0, gid: 0, dst: '10.96.0.10:8080' })).toBeUndefined();
  });

  it('bad narrowing values are BAD_ARGUMENT errors naming the option', () => {
    const cases: [Partial<ExploreOptions>, 'local' | 'remote', RegExp][] = [
      [{ dst: '10.0.0.0/33' }, 'local', /dst: "10.0.0.0\/33": the prefix length/],
      [{ dst: 'nowhere' }, 'local', /dst: "nowhere" is not an address/],
      [{ dport: '0' }, 'local', /dport: "0" is outside the ports 1-65535/],
      [{ dport: '90-80' }, 'local', /dport: "90-80" has its first value above its last/],
      [{ dport: [] }, 'local', /dport: an empty list/],
      [{ uid: 'root' }, 'local', /uid: "root" is not N or N-M/],
      [{ gid: '4294967296' }, 'local', /gid: "4294967296" is outside the gids/],
      [{ uid: '1' }, 'remote', /uid: narrows the local space/],
      [{ src: '10.0.0.0/8' }, 'local', /src: narrows the remote space/],
      [{ iface: 'wlan9' }, 'remote', /iface: the namespace has no interface "wlan9"/],
      [{ iface: 'lo' }, 'remote', /iface: remote probes do not arrive on the loopback/],
      [{ dport: 80 as unknown as string, dst: { a: 1 } as unknown as string }, 'local', /dst: expected a string, not object/],
      [{ dst: 'fd00::/64' }, 'local', /the narrowed space is empty/],
    ];
    for (const [narrow, from, message] of cases) {
      let err: unknown;
      try {
        explore({ from, family: 4, ...narrow });
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(narrow)).toBeInstanceOf(NetfilterSimError);
      expect((err as NetfilterSimError).code).toBe('BAD_ARGUMENT');
      expect((err as Error).message).toMatch(message);
    }
  });
});

describe('explore summary', () => {
  test.prop([fc.integer({ min: 1, max: 100000 }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 15 })(
    'shares add up to the space and sampled probes get their outcome',
    (seed, from) => {
      const c = generateConnectCase(seed);
      const probe = c.probes.find((p) => p.from === from && !p.dst.startsWith('['));
      const options = { ...c.sim, from, family: 4 as const, ...(probe ? box(seed, probe, from).options : {}) };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      const s = summarizeExplore(r);
      const space = BigInt(r.spaces[0]!.probes);
      expect(s.outcomes.reduce((n, o) => n + BigInt(o.probes), 0n)).toBe(space);
      expect(s.outcomes.reduce((n, o) => n + o.classes, 0)).toBe(r.classes.length);
      const shares = s.outcomes.reduce((n, o) => n + o.share, 0);
      expect(Math.abs(shares - 100)).toBeLessThan(1e-6);
      // Uniform probes of the space: each gets what its outcome says, and the outcomes are hit
      // about as often as their shares say (within 5 standard deviations of 300 draws).
      const rand = mulberry32(seed ^ 0x5eed);
      const draws = 300;
      const hits = new Map<number, number>();
      const ns = new Netns({ ...c.sim });
      const classBoxes = r.classes.map((k) => boxesOf(r, k));
      const outcomeOf = (k: ExploreClass): number => s.outcomes.findIndex((o) => o.outcome === k.outcome && o.address === k.address && o.port === k.port && o.originalDestination === k.originalDestination && JSON.stringify(o.alternatives ?? null) === JSON.stringify(k.alternatives ?? null));
      const all = classBoxes.flat();
      const total = all.reduce((n, x) => n + vol(x), 0n);
      for (let i = 0; i < draws; i++) {
        // A uniform probe: a box by its volume, then a point in it.
        let at = (BigInt(Math.floor(rand() * 2 ** 52)) * total) >> 52n;
        let pick = all[0]!;
        for (const x of all) {
          if (at < vol(x)) {
            pick = x;
            break;
          }
          at -= vol(x);
        }
        const point = pick.map(([lo, hi]) => lo + ((hi - lo + 1n) * BigInt(Math.floor(rand() * 2 ** 52))) / (1n << 52n));
        const get = (f: string): bigint => point[r.fields.indexOf(f)]!;
        const text = (v: bigint): string => addressText(bigToWords(v, 4), 4);
        const dst = `${text(get('dst'))}:${get('dport')}`;
        const p = from === 'local' ? { uid: Number(get('uid')), gid: Number(get('gid')), dst } : { src: text(get('src')), dst, iface: 'eth0' };
        const k = classOf(r, p)!;
        expect(k).toBeDefined();
        const o = outcomeOf(k);
        expect(o).toBeGreaterThanOrEqual(0);
        hits.set(o, (hits.get(o) ?? 0) + 1);
        const got = ns.connect({ ...p, from, sport: r.sport, proto: r.proto } as ConnectSpec, { trace: false });
        ns.flushConntrack();
        if (!k.alternatives) expect({ outcome: got.outcome, address: got.address, port: got.port }).toEqual((({ outcome, address, port }) => ({ outcome, address, port }))(expectedFor(s.outcomes[o]!, p)));
      }
      s.outcomes.forEach((o, i) => {
        const want = o.share / 100;
        const sd = Math.sqrt((draws * want * (1 - want)) || 1);
        expect(Math.abs((hits.get(i) ?? 0) - draws * want)).toBeLessThanOrEqual(5 * sd + 1);
      });
      expect(renderExploreSummary(s)).toContain(`${s.outcomes.length} outcomes`);
    },
  );
});
