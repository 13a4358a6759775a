// Checks shared by the explore tests: the partition law and agreement with Netns.connect.
import { expect } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectSpec, NetnsOptions } from '../../src/engine/path/netns.js';
import { parseAnyAddress } from '../../src/engine/state/routing.js';
import { classOf, explore, expectedFor } from '../../src/explore/index.js';
import type { ExploreBox, ExploreClass, ExploreOptions, ExploreResult } from '../../src/explore/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { wordsToBig, bigToWords } from '../../src/explore/instrument.js';
import { addressText } from '../../src/model/address.js';
import { mulberry32 } from '../kernel/generate.js';
import type { SimProbe } from '../kernel/generate.js';

type Range = readonly [bigint, bigint];

function addr(a: string): bigint {
  return wordsToBig(parseAnyAddress(a)!.addr);
}

/** A box as numeric ranges in the order of `result.fields` (the interface as its name's index). */
export function ranges(b: ExploreBox, fields: readonly string[], ifaces: readonly string[]): Range[] {
  return fields.map((f) => {
    const v = (b as Record<string, unknown>)[f];
    if (f === 'iface') {
      const i = BigInt(ifaces.indexOf(v as string));
      return [i, i] as const;
    }
    const [lo, hi] = v as readonly [string | number, string | number];
    return typeof lo === 'string' ? ([addr(lo), addr(hi as string)] as const) : ([BigInt(lo), BigInt(hi as number)] as const);
  });
}

/** The classes' boxes are pairwise disjoint and their volumes add up to the whole space. */
export function expectPartition(r: ExploreResult, family: 4 | 6, ifaces: readonly string[] = ['eth0']): void {
  const all: Range[][] = [];
  for (const c of r.classes) if (c.family === family) for (const b of c.boxes) all.push(ranges(b, r.fields, ifaces));
  const addrSpace = family === 4 ? 1n << 32n : 1n << 128n;
  const space = r.from === 'local' ? (1n << 32n) * (1n << 32n) * addrSpace * 65535n : addrSpace * addrSpace * 65535n * BigInt(ifaces.length);
  let volume = 0n;
  for (const b of all) volume += b.reduce((v, [lo, hi]) => v * (hi - lo + 1n), 1n);
  expect(volume).toBe(space);
  // Sorted by the first field, a box can only overlap the ones that start before it ends.
  const sorted = [...all].sort((a, b) => (a[0]![0] < b[0]![0] ? -1 : a[0]![0] > b[0]![0] ? 1 : 0));
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i + 1; j < sorted.length && sorted[j]![0]![0] <= sorted[i]![0]![1]; j++) {
      const overlap = sorted[i]!.every(([lo, hi], f) => lo <= sorted[j]![f]![1] && sorted[j]![f]![0] <= hi);
      expect(overlap, `boxes ${i} and ${j} overlap`).toBe(false);
    }
  }
}

/** Probes at the corners of each box and one inside it (at most `limit` boxes). */
export function cornerProbes(r: ExploreResult, family: 4 | 6, rand: () => number, limit = 40): Record<string, string | number>[] {
  const out: Record<string, string | number>[] = [];
  const boxes = r.classes.filter((c) => c.family === family).flatMap((c) => c.boxes);
  const pick = boxes.length <= limit ? boxes : Array.from({ length: limit }, () => boxes[Math.floor(rand() * boxes.length)]!);
  for (const b of pick) {
    for (const where of ['lo', 'hi', 'mid'] as const) {
      const at = (v: readonly [string | number, string | number]): bigint => {
        const lo = typeof v[0] === 'string' ? addr(v[0]) : BigInt(v[0]);
        const hi = typeof v[1] === 'string' ? addr(v[1]) : BigInt(v[1]);
        if (where === 'lo') return lo;
        if (where === 'hi') return hi;
        return lo + (((hi - lo) * BigInt(Math.floor(rand() * 1e9))) / 1000000000n);
      };
      const text = (v: bigint): string => addressText(bigToWords(v, family), family);
      const dv = at(b.dst!);
      const dst = text(dv);
      const dport = Number(at(b.dport!));
      const d = family === 6 ? `[${dst}]:${dport}` : `${dst}:${dport}`;
      // A local IPv6 socket connecting to ::ffff:0:0/96 makes an IPv4 connection, outside the
      // IPv6 space explore partitions (docs/explore.md).
      if (r.from === 'local' && family === 6 && (dv >> 32n) === 0xffffn) continue;
      if (r.from === 'local') out.push({ uid: Number(at(b.uid!)), gid: Number(at(b.gid!)), dst: d });
      else out.push({ src: text(at(b.src!)), dst: d, iface: b.iface! });
    }
  }
  return out;
}

const NAMESPACES = new WeakMap<NetnsOptions, Map<string, Netns>>();

function namespace(options: NetnsOptions, evaluator: 'lowered' | 'reference'): Netns {
  let m = NAMESPACES.get(options);
  if (!m) NAMESPACES.set(options, (m = new Map()));
  let ns = m.get(evaluator);
  if (!ns) m.set(evaluator, (ns = new Netns({ ...options, evaluator })));
  return ns;
}

/** The probe's class says what a fresh namespace's `connect` (both evaluators) gives it. */
export function expectAgreement(r: ExploreResult, options: NetnsOptions, probe: Record<string, string | number>): void {
  const c: ExploreClass | undefined = classOf(r, probe as { dst: string });
  expect(c, `no class holds ${JSON.stringify(probe)}`).toBeDefined();
  const spec = { ...probe, from: r.from, sport: r.sport, proto: r.proto } as unknown as ConnectSpec;
  const want = (c!.alternatives ?? [c!]).map((o) => ({ ...expectedFor(o, probe as { dst: string }), probability: 'probability' in o ? o.probability : 1 }));
  for (const evaluator of ['lowered', 'reference'] as const) {
    // connectAll leaves the namespace as it found it: every probe meets a fresh one.
    const got = namespace(options, evaluator).connectAll(spec, { trace: false });
    const seen = got.map((g) => ({ outcome: g.outcome, address: g.address, port: g.port, originalDestination: g.originalDestination, probability: g.probability ?? 1 }));
    expect(seen, `${evaluator} connect of ${JSON.stringify(probe)} (class ${JSON.stringify(c!.example)})`).toEqual(want);
  }
}

/** A generated case's probe as `classOf` and `expectAgreement` take it (remote probes arrive on eth0). */
export function exploreProbe(p: SimProbe): Record<string, string | number> {
  return p.from === 'local' ? { uid: p.uid, gid: p.gid, dst: p.dst } : { src: p.src, dst: p.dst, iface: 'eth0' };
}

/**
 * A generated case explored from one side: the partition law in both families, agreement with
 * `connect` at the corners of its boxes, and at each of the case's own probes from that side.
 */
export function expectGeneratedCase(r: ExploreResult, options: NetnsOptions, probes: readonly SimProbe[], seed: number): void {
  for (const family of [4, 6] as const) {
    expectPartition(r, family);
    for (const p of cornerProbes(r, family, mulberry32(seed), 8)) expectAgreement(r, options, p);
  }
  for (const p of probes) if (p.from === r.from) expectAgreement(r, options, exploreProbe(p));
}

/**
 * explore on generated input, or the typed refusal it may give (`UNSUPPORTED`): null when
 * refused, `onRefusal` told the error first.
 */
export function exploreOrRefuse(options: ExploreOptions, onRefusal?: (e: NetfilterSimError) => void): ExploreResult | null {
  try {
    return explore({ maxRegions: 20000, ...options });
  } catch (e) {
    expect(e).toBeInstanceOf(NetfilterSimError);
    expect((e as NetfilterSimError).code).toBe('UNSUPPORTED');
    onRefusal?.(e as NetfilterSimError);
    return null;
  }
}
