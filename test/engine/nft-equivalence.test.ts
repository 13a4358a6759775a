// The lowered nft engine against the reference interpreter over the nft model: for generated nft
// rule sets (the shapes the kernel differentials use: every family, base chains of every type at
// varied priorities, sets, maps, vmaps, concatenations, bitwise marks, Istio's shapes), the
// Istio native-nftables goldens and kube-proxy's nftables mode, every probe gets the same result,
// trace, counters and conntrack table from both.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectSpec, NetnsOptions } from '../../src/engine/path/netns.js';
import { mulberry32 } from '../kernel/generate.js';
import { generateNftConnectCase, generateNftText } from '../kernel/nft-generate.js';
import { kubeProxyNftRules, kubeProxyNode, kubeProxyProbes, kubeProxyServices } from '../../bench/kube-proxy.js';

type Probe = ConnectSpec;

/** Both evaluators over the same options, or the same refusal from both. */
function pair(options: NetnsOptions): { ref: Netns; low: Netns } | { error: string } {
  let refErr: string | null = null;
  let lowErr: string | null = null;
  let ref: Netns | null = null;
  let low: Netns | null = null;
  try {
    ref = new Netns({ ...options, evaluator: 'reference' });
  } catch (e) {
    refErr = (e as Error).message;
  }
  try {
    low = new Netns({ ...options, evaluator: 'lowered' });
  } catch (e) {
    lowErr = (e as Error).message;
  }
  expect(lowErr).toBe(refErr);
  return ref && low ? { ref, low } : { error: refErr ?? '' };
}

function same(ref: Netns, low: Netns, probes: readonly Probe[], context: string): void {
  for (const [i, probe] of probes.entries()) {
    const trace = i % 2 === 0;
    const a = ref.connect(probe, { trace });
    const b = low.connect(probe, { trace });
    expect(b, `${context}\nprobe ${i} ${JSON.stringify(probe)}`).toEqual(a);
  }
  expect(low.counters()).toEqual(ref.counters());
  expect(low.conntrack()).toEqual(ref.conntrack());
}

/** Addresses and ports the rule text mentions, so probes hit its matches. */
function probesFor(text: string, rng: () => number, n: number): Probe[] {
  const v4 = [...new Set([...text.matchAll(/\b(\d{1,3}(?:\.\d{1,3}){3})\b/g)].map((m) => m[1]!))];
  const v6 = [...new Set([...text.matchAll(/\b((?:[0-9a-f]{1,4}:){1,7}:?[0-9a-f]{0,4})(?![:.\w])/gi)].map((m) => m[1]!).filter((a) => a.includes('::')))];
  const ports = [...new Set([...text.matchAll(/\b(?:dport|sport|to :|\. )\s*\{?\s*(\d{1,5})\b/g)].map((m) => Number(m[1])).filter((p) => p > 0 && p < 65536))];
  const pick = <T>(xs: readonly T[], fallback: T): T => (xs.length === 0 ? fallback : xs[Math.floor(rng() * xs.length)]!);
  const out: Probe[] = [];
  for (let i = 0; i < n; i++) {
    const six = v6.length > 0 && rng() < 0.3;
    const addr = six ? pick(v6, 'fd00::9') : pick([...v4, '10.96.0.10', '127.0.0.1', '10.0.0.2'], '10.0.0.9');
    const port = rng() < 0.8 ? pick([...ports, 80, 8080], 8080) : 1 + Math.floor(rng() * 65535);
    const dst = six ? `[${addr}]:${port}` : `${addr}:${port}`;
    if (rng() < 0.55) {
      const uid = pick([0, 1000, 1337, 2102, 101], 1000);
      out.push({ from: 'local', uid, gid: rng() < 0.5 ? uid : 1000, dst, ...(rng() < 0.2 ? { mark: pick([0x539, 0x111, 1, 0x1337], 0) } : {}) } as Probe);
    } else {
      const src = six ? pick(v6.filter((a) => a !== addr), 'fd00::5') : pick(v4.filter((a) => a !== addr && !a.startsWith('127.')), '10.0.0.5');
      out.push({ from: 'remote', src, dst: six ? `[fd00::2]:${port}` : `10.0.0.2:${port}`, ...(rng() < 0.2 ? { proto: 'udp' } : {}) } as Probe);
    }
  }
  return out;
}

const LISTEN = [15001, 15006, 15008, 15053, 4140, 4143, 8080, 9090, 80, 53];

describe('lowered nft engine equals the reference', () => {
  it.for(Array.from({ length: 300 }, (_, i) => i + 1))('generated nft pod, seed %i', (seed) => {
    const c = generateNftConnectCase(seed, seed % 5 === 0);
    const r = pair({ rules: c.sim.rules, ...(c.sim.rules6 ? { rules6: c.sim.rules6 } : {}), nft: c.nft, listen: c.sim.listen });
    if ('error' in r) return;
    same(r.ref, r.low, [...c.probes, ...probesFor(c.nft, mulberry32(seed), 12)], `seed ${seed}\n${c.nft}`);
  });

  it.for(Array.from({ length: 300 }, (_, i) => i + 1))('generated nft rule set, seed %i', (seed) => {
    const text = generateNftText(seed);
    const r = pair({ nft: text, listen: LISTEN });
    if ('error' in r) {
      // A rule set the namespace refuses is refused by both, with the same message (checked in pair).
      expect(r.error.length).toBeGreaterThan(0);
      return;
    }
    same(r.ref, r.low, probesFor(text, mulberry32(seed * 31), 24), `seed ${seed}\n${text}`);
  });

  it('the Istio native-nftables capture goldens', () => {
    const dir = join(import.meta.dirname, '../fixtures/istio-nftables/capture-nft');
    const files = readdirSync(dir).filter((f) => f.endsWith('.golden'));
    expect(files.length).toBeGreaterThan(10);
    let ran = 0;
    for (const f of files) {
      const text = readFileSync(join(dir, f), 'utf8');
      const r = pair({ nft: text, listen: LISTEN });
      if ('error' in r) continue;
      same(r.ref, r.low, probesFor(text, mulberry32(text.length), 30), f);
      ran++;
    }
    expect(ran).toBeGreaterThan(10);
  });

  it('kube-proxy in nftables mode, 300 services', () => {
    const services = kubeProxyServices(300, 7);
    const text = kubeProxyNftRules(services);
    const r = pair(kubeProxyNode(undefined, { nft: text }));
    if ('error' in r) expect.fail(r.error);
    const probes = kubeProxyProbes(services, 400, 11) as Probe[];
    same(r.ref, r.low, probes, 'kube-proxy nft');
    // The maps decide: a probe to a service with endpoints reaches one of them.
    const byVip = new Map(services.map((s) => [`${s.vip}:${s.port}`, s]));
    let reached = 0;
    for (const p of probes) {
      const s = byVip.get(p.dst);
      if (s === undefined || s.endpoints.length === 0) continue;
      const x = r.low.connect(p, { trace: false });
      expect(s.endpoints).toContain(`${x.address}:${x.port}`);
      reached++;
    }
    expect(reached).toBeGreaterThan(300);
  });

  test.prop([fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 0, max: 2 ** 31 - 1 })], { numRuns: 60 })(
    'any seed, any probes', (seed, probeSeed) => {
      const text = generateNftText(seed);
      const r = pair({ nft: text, listen: LISTEN, seed: probeSeed });
      if ('error' in r) return;
      same(r.ref, r.low, probesFor(text, mulberry32(probeSeed), 16), `seed ${seed}\n${text}`);
    });
});
