// The batch API: probes shared out over worker threads give what the same shares give in fresh
// namespaces of this thread. Workers run the built package (dist/), which `npm test` builds first.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NetnsPool, connectBatch } from '../../dist/index.js';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectResult, ConnectSpec } from '../../src/engine/path/netns.js';
import { defaultRegistry } from '../../src/engine/rules/registry.js';

const RULES = readFileSync(join(import.meta.dirname, '../fixtures/linkerd/injected-default.save'), 'utf8');
const OPTIONS = { rules: RULES, listen: [4140, 4143, 4191, 8080] };

const PROBES: ConnectSpec[] = Array.from({ length: 40 }, (_, i): ConnectSpec => {
  switch (i % 4) {
    case 0:
      return { from: 'local', uid: 1000, dst: `10.96.0.${i}:80` };
    case 1:
      return { from: 'local', uid: 2102, dst: `10.1.0.${i}:8080` };
    case 2:
      return { from: 'remote', src: `10.2.0.${i}`, dst: '10.0.0.2:8080' };
    default:
      return { from: 'remote', src: `10.2.0.${i}`, dst: '10.0.0.2:4191', proto: 'udp' };
  }
});

/** What the shares give in fresh namespaces of this thread, one after another. */
function inShares(probes: readonly ConnectSpec[], shares: number, trace: boolean): ConnectResult[] {
  const out: ConnectResult[] = [];
  for (let i = 0; i < shares; i++) {
    const ns = new Netns(OPTIONS);
    const from = Math.round((probes.length * i) / shares);
    const to = Math.round((probes.length * (i + 1)) / shares);
    for (const p of probes.slice(from, to)) out.push(ns.connect(p, { trace }));
  }
  return out;
}

describe('connectBatch', () => {
  it('with one worker (this thread): one namespace, probes in order', async () => {
    expect(await connectBatch(OPTIONS, PROBES, { trace: true })).toEqual(inShares(PROBES, 1, true));
  });

  it('with two workers: each half in its own namespace, results in probe order, with traces', async () => {
    expect(await connectBatch(OPTIONS, PROBES, { workers: 2, trace: true })).toEqual(inShares(PROBES, 2, true));
  });

  it('without traces unless asked for, in this thread and in workers', async () => {
    expect(await connectBatch(OPTIONS, PROBES)).toEqual(inShares(PROBES, 1, false));
    const got = await connectBatch(OPTIONS, PROBES, { workers: 2 });
    expect(got).toEqual(inShares(PROBES, 2, false));
    expect(got.every((r) => r.steps.length === 0)).toBe(true);
    // With traces asked for, the same probes do record steps.
    expect((await connectBatch(OPTIONS, PROBES, { workers: 2, trace: true })).some((r) => r.steps.length > 0)).toBe(true);
  });

  it('without traces: the same results as Netns.connect(p, { trace: false })', async () => {
    const got = await connectBatch(OPTIONS, PROBES, { workers: 3, trace: false });
    const want = inShares(PROBES, 3, false);
    expect(got).toEqual(want);
    // The same fields in the same order, as JSON shows them.
    expect(JSON.stringify(got)).toBe(JSON.stringify(want));
  });

  it('with traces: the same fields in the same order as Netns.connect, read when asked for', async () => {
    const got = await connectBatch(OPTIONS, PROBES, { workers: 2, trace: true });
    const want = inShares(PROBES, 2, true);
    expect(JSON.stringify(got)).toBe(JSON.stringify(want));
    // Each result's steps are those of its own events.
    for (let i = 0; i < got.length; i++) {
      expect(got[i]!.steps).toEqual(want[i]!.steps);
      expect(got[i]!.trace!.length).toBe(want[i]!.trace!.length);
    }
    expect(got.some((r) => r.trace!.some((e) => e.type === 'nat'))).toBe(true);
  });

  it('with traces: a result with an error, and one past the trace limit (traceOmitted), as Netns.connect gives them', async () => {
    // 32,769 jumps to an empty chain in INPUT: each is a rule and a return event, one more than kept.
    const rules = `${RULES}*filter\n:INPUT ACCEPT [0:0]\n:C - [0:0]\n${'-A INPUT -j C\n'.repeat(32_769)}COMMIT\n`;
    const options = { ...OPTIONS, rules };
    const probes: ConnectSpec[] = [
      { from: 'local', uid: 1000, dst: '224.0.0.1:80' },
      { from: 'remote', src: '10.2.0.9', dst: '10.0.0.2:8080' },
      { from: 'local', uid: 1000, dst: '10.96.0.10:80' },
    ];
    const got = await connectBatch(options, probes, { workers: 2, trace: true });
    const want: ConnectResult[] = [];
    for (const share of [probes.slice(0, 2), probes.slice(2)]) {
      const ns = new Netns(options);
      for (const p of share) want.push(ns.connect(p, { trace: true }));
    }
    expect(want[0]!.error).toBe('ENETUNREACH');
    expect(want[1]!.traceOmitted).toBeGreaterThan(0);
    expect(JSON.stringify(got)).toBe(JSON.stringify(want));
    expect(got.map((r) => Object.keys(r))).toEqual(want.map((r) => Object.keys(r)));
  });

  it('with traces of text outside ASCII (a rule comment), byte for byte as Netns.connect, past one buffer of traces', async () => {
    const rules = RULES.replace('-j PROXY_INIT_OUTPUT', '-m comment --comment "sortie → proxy, café ü 漢字 😀" -j PROXY_INIT_OUTPUT');
    expect(rules).not.toBe(RULES);
    const options = { ...OPTIONS, rules };
    // Enough probes that one message's traces outgrow the first buffer.
    const probes = Array.from({ length: 300 }, (_, i) => PROBES[i % PROBES.length]!);
    const got = await connectBatch(options, probes, { workers: 2, trace: true });
    const want: ConnectResult[] = [];
    for (const half of [probes.slice(0, 150), probes.slice(150)]) {
      const ns = new Netns(options);
      for (const p of half) want.push(ns.connect(p, { trace: true }));
    }
    expect(JSON.stringify(want)).toContain('café ü 漢字 😀');
    expect(JSON.stringify(got)).toBe(JSON.stringify(want));
  });

  it('closes each connection when asked, in this thread and in workers', async () => {
    const probes: ConnectSpec[] = Array.from({ length: 6 }, () => ({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }));
    const open = inShares(probes, 2, true);
    const closedHere = (() => {
      const out: ConnectResult[] = [];
      for (let i = 0; i < 2; i++) {
        const ns = new Netns(OPTIONS);
        for (const p of probes.slice(i * 3, i * 3 + 3)) out.push(ns.connect(p, { trace: true, close: true }));
      }
      return out;
    })();
    // Closing adds the FIN exchange to each trace.
    expect(closedHere.every((r, i) => r.steps.length > open[i]!.steps.length || r.trace!.length > open[i]!.trace!.length)).toBe(true);
    expect(JSON.stringify(await connectBatch(OPTIONS, probes, { workers: 2, trace: true, close: true }))).toBe(JSON.stringify(closedHere));
    const ns = new Netns(OPTIONS);
    expect(await connectBatch(OPTIONS, probes, { trace: true, close: true })).toEqual(probes.map((p) => ns.connect(p, { trace: true, close: true })));
  });

  it('a bad probe rejects the batch with the typed error', async () => {
    const bad = [...PROBES.slice(0, 3), { from: 'local', uid: 1000, dst: 'nowhere' } as ConnectSpec];
    await expect(connectBatch(OPTIONS, bad, { workers: 2 })).rejects.toMatchObject({ name: 'NetfilterSimError', code: 'BAD_PROBE' });
  });

  it('refuses what cannot cross to a worker', () => {
    expect(() => new NetnsPool({ ...OPTIONS, registry: defaultRegistry() }, { workers: 2 })).toThrow(/registry/);
    expect(() => new NetnsPool(OPTIONS, { workers: 0 })).toThrow(/worker count/);
  });
});

describe('NetnsPool', () => {
  it('keeps each worker\'s namespace (and its conntrack) across batches until flushed', async () => {
    const pool = new NetnsPool(OPTIONS, { workers: 2 });
    try {
      const probe: ConnectSpec = { from: 'local', uid: 1000, sport: 45000, dst: '10.96.0.10:80' };
      const ns = new Netns(OPTIONS);
      const first = ns.connect(probe, { trace: false });
      const second = ns.connect(probe, { trace: false });
      expect(second.outcome).not.toBe(first.outcome);
      expect(await pool.connectBatch([probe, probe], { trace: false })).toEqual([first, first]);
      // The same 4-tuple again in each worker's namespace meets the connection made before.
      expect(await pool.connectBatch([probe, probe], { trace: false })).toEqual([second, second]);
      await pool.flushConntrack();
      expect(await pool.connectBatch([probe, probe], { trace: false })).toEqual([first, first]);
    } finally {
      await pool.close();
    }
  });
});
