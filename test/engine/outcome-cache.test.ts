// Netns.connect's outcome cache against the same namespace without it: for generated rule sets the
// cache serves and generated sequences of connections (repeated probes, closes, the clock moving,
// flushes, a small conntrack table and a small source-port range), every result, the counters and
// the conntrack table are the same after every step.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectResult, ConnectSpec, NetnsOptions } from '../../src/engine/path/netns.js';

const ROOT = join(import.meta.dirname, '..', '..');

const VIPS = ['10.96.0.10', '10.96.0.11', '172.30.0.41', '10.0.0.2', '127.0.0.1'];
const PORTS = [80, 443, 4140, 8080, 15001];
const UIDS = [0, 1000, 2102];

/** A rule the cache serves: pure matches, verdicts, jumps, marks and single-port NAT. */
function ruleBody(table: 'nat' | 'filter' | 'mangle', chain: string): fc.Arbitrary<string> {
  const local = chain === 'OUTPUT';
  const match = fc.constantFrom(
    '',
    '-p tcp ',
    '-p udp ',
    `-d ${VIPS[0]}/32 `,
    '-d 10.96.0.0/12 ',
    '! -d 127.0.0.1/32 ',
    '-s 10.1.0.0/16 ',
    '-o lo ',
    '-p tcp -m tcp --dport 80 ',
    '-p tcp -m tcp ! --dport 4140 ',
    '-p tcp -m multiport --dports 80,443,8080 ',
    '-m mark --mark 0x1/0x1 ',
    '-m connmark --mark 0x2/0x2 ',
    '-m conntrack --ctstate NEW ',
    '-m conntrack --ctstate ESTABLISHED,RELATED ',
    '-m state --state NEW ',
    '-m addrtype --dst-type LOCAL ',
    ...(local ? ['-m owner --uid-owner 2102 ', '-m owner ! --uid-owner 1000 ', '-m owner --gid-owner 1000 '] : []),
  );
  const targets: string[] = ['-j ACCEPT', '-j RETURN', '-j MARK --set-xmark 0x1/0x1', '-j CONNMARK --set-xmark 0x2/0x2', '-j USER', '-g USER', '-j LOG', ''];
  if (table === 'nat') targets.push('-p tcp -j REDIRECT --to-ports 4140', '-p tcp -j REDIRECT --to-ports 8080', '-j DNAT --to-destination 10.0.0.2:8080', '-j DNAT --to-destination 10.1.0.9');
  if (table === 'filter') targets.push('-j DROP', '-j REJECT', '-p tcp -j REJECT --reject-with tcp-reset');
  if (table === 'mangle') targets.push('-j CONNMARK --save-mark', '-j CONNMARK --restore-mark');
  return fc.tuple(match, fc.constantFrom(...targets)).map(([m, t]) => {
    // A protocol-specific target brings its own -p unless the match has one.
    if (t.startsWith('-p ') && m.includes('-p ')) return `${m}${t.slice(7)}`;
    return `${m}${t}`.trim();
  });
}

const HOOKS = { nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'], filter: ['INPUT', 'FORWARD', 'OUTPUT'], mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'] } as const;

function tableText(table: 'nat' | 'filter' | 'mangle'): fc.Arbitrary<string> {
  const chains = [...HOOKS[table], 'USER'];
  return fc.tuple(...chains.map((c) => fc.array(ruleBody(table, c === 'USER' ? 'OUTPUT' : c), { maxLength: 4 }))).map((lists) => {
    const lines = [`*${table}`];
    for (const c of HOOKS[table]) lines.push(`:${c} ACCEPT [0:0]`);
    lines.push(':USER - [0:0]');
    chains.forEach((c, i) => {
      for (const body of lists[i]!) {
        // USER never jumps to itself.
        if (c === 'USER' && /-[jg] USER/.test(body)) continue;
        lines.push(`-A ${c} ${body}`.trimEnd());
      }
    });
    lines.push('COMMIT');
    return lines.join('\n');
  });
}

const rules = fc.tuple(tableText('mangle'), tableText('nat'), tableText('filter')).map((t) => `${t.join('\n')}\n`);

const probe: fc.Arbitrary<ConnectSpec> = fc.oneof(
  fc.record({
    from: fc.constant('local' as const),
    uid: fc.constantFrom(...UIDS),
    dst: fc.tuple(fc.constantFrom(...VIPS), fc.constantFrom(...PORTS)).map(([a, p]) => `${a}:${p}`),
    proto: fc.constantFrom('tcp' as const, 'tcp' as const, 'udp' as const),
    mark: fc.constantFrom(0, 0, 1),
  }),
  fc.record({
    from: fc.constant('remote' as const),
    src: fc.constantFrom('10.1.0.5', '10.0.0.5', '192.0.2.7'),
    dst: fc.constantFrom('10.0.0.2:8080', '10.0.0.2:80', '10.0.0.2:15001', '10.0.0.2:4140'),
    proto: fc.constantFrom('tcp' as const, 'udp' as const),
  }),
);

type Step = { readonly kind: 'connect'; readonly probe: number; readonly close: boolean } | { readonly kind: 'advance'; readonly seconds: number } | { readonly kind: 'flush' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('connect' as const), probe: fc.nat(5), close: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), seconds: fc.constantFrom(0.5, 1, 11, 31, 61, 121, 432_001) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'flush' as const }) },
);

const limits = fc.record({
  conntrackMax: fc.constantFrom(undefined, undefined, 3),
  localPortRange: fc.constantFrom(undefined, undefined, [40000, 40003] as const),
});

function build(options: NetnsOptions): Netns | null {
  try {
    return new Netns(options);
  } catch {
    return null;
  }
}

/** Runs the steps on both namespaces; returns the cached namespace's replays. */
function agree(cached: Netns, plain: Netns, probes: readonly ConnectSpec[], steps: readonly Step[]): number {
  for (const [i, s] of steps.entries()) {
    if (s.kind === 'advance') {
      cached.advance(s.seconds);
      plain.advance(s.seconds);
    } else if (s.kind === 'flush') {
      cached.flushConntrack();
      plain.flushConntrack();
    } else {
      const p = probes[s.probe % probes.length]!;
      const a = cached.connect(p, { trace: false, close: s.close });
      const b = plain.connect(p, { trace: false, close: s.close });
      expect(a, `step ${i}: ${JSON.stringify(p)}`).toStrictEqual(b);
    }
    expect(cached.conntrack(), `conntrack after step ${i}`).toStrictEqual(plain.conntrack());
  }
  expect(cached.counters(4)).toStrictEqual(plain.counters(4));
  return cached.outcomeReplays;
}

/**
 * Connects `p` three times, the clock moving 121 s after each (every socket and entry of it gone):
 * the cache sees the first, records the second and replays the third, which it returns.
 */
function primed(ns: Netns, p: ConnectSpec, close: boolean): ConnectResult {
  let r: ConnectResult | null = null;
  for (let i = 0; i < 3; i++) {
    r = ns.connect(p, { trace: false, close });
    ns.advance(121);
  }
  return r!;
}

/**
 * Runs `run` on a namespace with the cache and on one without; what it returns must be the same.
 * Gives the cached namespace and what it returned.
 */
function bothWays<T>(options: NetnsOptions, run: (ns: Netns) => T): { cached: Netns; seen: T } {
  const cached = new Netns(options);
  const seen = run(cached);
  expect(seen).toStrictEqual(run(new Netns({ ...options, outcomeCache: false })));
  return { cached, seen };
}

describe('the outcome cache', () => {
  let replays = 0;
  let runs = 0;

  test.prop([rules, fc.array(probe, { minLength: 1, maxLength: 6 }), fc.array(step, { minLength: 20, maxLength: 60 }), limits], { numRuns: 150 })(
    'generated rule sets and sequences: the same results, counters and conntrack with and without it',
    (text, probes, steps, lim) => {
      const options: NetnsOptions = { rules: text, listen: [4140, 8080, 15001, '127.0.0.1:80/udp'], peers: { '10.96.0.11': [443] }, ...(lim.conntrackMax ? { conntrackMax: lim.conntrackMax } : {}), ...(lim.localPortRange ? { localPortRange: lim.localPortRange } : {}) };
      const cached = build(options);
      fc.pre(cached !== null);
      expect(cached!.outcomeCacheOff).toBeNull();
      const plain = new Netns({ ...options, outcomeCache: false });
      replays += agree(cached!, plain, probes, steps);
      runs++;
    },
  );

  it('served the generated sequences (most connections of a repeated probe are replays)', () => {
    expect(runs).toBeGreaterThan(100);
    expect(replays).toBeGreaterThan(runs * 3);
  });

  it('the Linkerd and Istio default pods: 20,000 connections with and without it, replayed from the third connection of each probe on', () => {
    const pods: [string, number[]][] = [
      ['test/fixtures/linkerd/injected-default.save', [4140, 4143, 4191, 8080]],
      ['test/fixtures/istio/kernel-save/derived/injected-sidecar-default.save', [15001, 15006, 15090, 8080]],
    ];
    for (const [file, listen] of pods) {
      const options: NetnsOptions = { rules: readFileSync(join(ROOT, file), 'utf8'), listen };
      const cached = new Netns(options);
      const plain = new Netns({ ...options, outcomeCache: false });
      expect(cached.outcomeCacheOff).toBeNull();
      const probes: ConnectSpec[] = [
        { from: 'local', uid: 1000, dst: '10.96.0.10:80' },
        { from: 'local', uid: 2102, dst: '10.1.0.9:8080' },
        { from: 'local', uid: 1337, dst: '10.1.0.9:8080' },
        { from: 'local', uid: 1000, dst: '127.0.0.1:8080' },
        { from: 'local', uid: 1000, dst: '10.96.0.10:53', proto: 'udp' },
        { from: 'remote', src: '10.2.0.7', dst: '10.0.0.2:8080' },
        { from: 'remote', src: '10.2.0.8', dst: '10.0.0.2:4191' },
      ];
      for (let i = 0; i < 20_000; i++) {
        const p = probes[(i * 7919) % probes.length]!;
        const close = i % 3 !== 0;
        expect(cached.connect(p, { trace: false, close })).toStrictEqual(plain.connect(p, { trace: false, close }));
        if (i % 1000 === 999) {
          cached.advance(10);
          plain.advance(10);
          expect(cached.conntrack()).toStrictEqual(plain.conntrack());
        }
      }
      expect(cached.counters()).toStrictEqual(plain.counters());
      expect(cached.outcomeReplays).toBeGreaterThan(19_000);
    }
  });

  it('is off, and says why, for rules whose outcome can depend on more than the probe', () => {
    const off = (rules: string, extra: NetnsOptions = {}): string | null => new Netns({ rules, ...extra }).outcomeCacheOff;
    const nat = (line: string): string => `*nat\n:OUTPUT ACCEPT [0:0]\n${line}\nCOMMIT\n`;
    expect(off(nat('-A OUTPUT -p tcp -j REDIRECT --to-ports 4140'))).toBeNull();
    expect(off(nat('-A OUTPUT -m statistic --mode random --probability 0.5 -j RETURN'))).toBe('-m statistic');
    expect(off(nat('-A OUTPUT -p tcp -m tcp --sport 40000 -j RETURN'))).toBe('-m tcp --sport');
    expect(off(nat('-A OUTPUT -p tcp -m multiport --sports 80 -j RETURN'))).toBe('-m multiport on source ports');
    expect(off(nat('-A OUTPUT -m conntrack --ctexpire 10:20 -j RETURN'))).toBe('-m conntrack expire');
    expect(off(nat('-A OUTPUT -p tcp -j REDIRECT --to-ports 4140-4150'))).toBe('-j REDIRECT to a port range');
    expect(off(nat('-A OUTPUT -p tcp -j DNAT --to-destination 10.0.0.9:80-90'))).toBe('-j DNAT to a port range');
    expect(off('*nat\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -j SNAT --to-source 10.0.0.9\nCOMMIT\n')).toBe('-j SNAT');
    expect(off(nat('-A OUTPUT -m recent --set'))).toBe('-m recent');
    expect(off(nat('-A OUTPUT -p tcp -j REDIRECT --to-ports 4140'), { evaluator: 'reference' })).toBe('the reference evaluator');
    expect(off(nat('-A OUTPUT -p tcp -j REDIRECT --to-ports 4140'), { outcomeCache: false })).toBe('turned off (outcomeCache: false)');
    expect(new Netns({ nft: 'table ip t { chain c { type nat hook output priority -100; }; }' }).outcomeCacheOff).toBe('native nft rules');
    expect(() => new Netns({ outcomeCache: 'yes' as unknown as boolean })).toThrow(/outcomeCache must be true or false/);
  });

  it('gives way to a full conntrack table', () => {
    // A probe that repeats in a table with room for two entries: its connections meet each
    // other's entries and sockets and the table fills, until a flush.
    const options: NetnsOptions = { rules: '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -d 10.96.0.10 -j REDIRECT --to-ports 4140\nCOMMIT\n', listen: [4140], localPortRange: [40000, 40003], conntrackMax: 2 };
    const cached = new Netns(options);
    const plain = new Netns({ ...options, outcomeCache: false });
    const p: ConnectSpec = { from: 'local', uid: 1000, dst: '10.96.0.10:80' };
    primed(cached, p, true);
    primed(plain, p, true);
    const outcomes: string[] = [];
    for (let i = 0; i < 24; i++) {
      const a = cached.connect(p, { trace: false, close: i % 4 === 1 });
      expect(a).toStrictEqual(plain.connect(p, { trace: false, close: i % 4 === 1 }));
      expect(cached.conntrack()).toStrictEqual(plain.conntrack());
      outcomes.push(a.error ?? a.outcome);
      if (i % 4 === 3) {
        cached.flushConntrack();
        plain.flushConntrack();
      }
    }
    // Accepted and dropped (table full) both occurred, and replays.
    expect(new Set(outcomes)).toStrictEqual(new Set(['local', 'dropped']));
    expect(cached.outcomeReplays).toBeGreaterThan(6);
  });

  it('gives way when another connection holds its reply tuple or its server end', () => {
    // One source port: B's connections and A's share it. A's connection to another address is
    // redirected to the same port, so it holds the tuple B's replies come back on.
    const options: NetnsOptions = { rules: '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -j REDIRECT --to-ports 4140\nCOMMIT\n', listen: [4140], localPortRange: [40000, 40000] };
    const a: ConnectSpec = { from: 'local', uid: 1000, dst: '10.96.0.10:80' };
    const b: ConnectSpec = { from: 'local', uid: 1000, dst: '10.96.0.11:80' };
    const run = (ns: Netns): string[] => {
      const seen: string[] = [];
      const take = (r: { outcome: string; reason: string; source: string | null }): void => void seen.push(`${r.outcome} from ${r.source}: ${r.reason}`);
      take(primed(ns, b, true));
      take(ns.connect(a, { trace: false }));
      // A's entry is live: B's reply tuple is taken, so B's source port is remapped (the null SNAT
      // binding finds it a free one).
      take(ns.connect(b, { trace: false, close: true }));
      // A's entry expires, its sockets stay: B's SYN meets A's accepted socket.
      ns.advance(432_001);
      take(ns.connect(b, { trace: false, close: true }));
      return seen;
    };
    const { cached, seen } = bothWays(options, run);
    expect(seen[0]).toBe('local from 10.0.0.2:40000: accepted by the listener 0.0.0.0:4140; closed (client in TIME_WAIT)');
    expect(seen[2]).toMatch(/^local from 10\.0\.0\.2:(?!40000)\d+: accepted/);
    expect(seen[3]).toBe('dropped from null: the SYN reached an established connection');
    // Only the priming's last connection was replayed.
    expect(cached.outcomeReplays).toBe(1);
  });

  it('gives way to the entry of a closed connection on its tuple or its reply tuple', () => {
    const options: NetnsOptions = { rules: '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -j REDIRECT --to-ports 4140\nCOMMIT\n', listen: [4140], localPortRange: [40000, 40000] };
    const a: ConnectSpec = { from: 'local', uid: 1000, dst: '10.96.0.10:80' };
    const b: ConnectSpec = { from: 'local', uid: 1000, dst: '10.96.0.11:80' };
    const run = (ns: Netns): unknown[] => {
      const seen: unknown[] = [];
      seen.push(primed(ns, b, true));
      ns.connect(b, { trace: false, close: true });
      // After 61 s the client's TIME_WAIT socket is gone; the entry (TIME_WAIT, 120 s) is not.
      ns.advance(61);
      // The port is free again: B's SYN meets its own old entry, which it re-opens.
      seen.push(ns.connect(b, { trace: false, close: true }), ns.conntrack());
      ns.advance(121);
      seen.push(ns.connect(a, { trace: false, close: true }));
      ns.advance(61);
      // A's closed entry holds B's reply tuple: B's source port is remapped.
      seen.push(ns.connect(b, { trace: false, close: true }), ns.conntrack());
      return seen;
    };
    const { cached, seen } = bothWays(options, run);
    expect(seen[2]).toHaveLength(1);
    expect((seen[4] as { source: string }).source).not.toBe('10.0.0.2:40000');
    // The priming's last connection and the one right after it were replayed; none after.
    expect(cached.outcomeReplays).toBe(2);
  });

  it('gives way to the closed entry of another probe on its own tuple', () => {
    // Marked connections are redirected, unmarked ones leave: the unmarked one's closed entry
    // holds the marked probe's tuple but not its reply tuple.
    const options: NetnsOptions = { rules: '*nat\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m mark --mark 0x1 -j REDIRECT --to-ports 4140\nCOMMIT\n', listen: [4140], localPortRange: [40000, 40000] };
    const marked: ConnectSpec = { from: 'local', uid: 1000, dst: '10.96.0.11:80', mark: 1 };
    const plainProbe: ConnectSpec = { from: 'local', uid: 1000, dst: '10.96.0.11:80' };
    const run = (ns: Netns): unknown[] => {
      const seen: unknown[] = [primed(ns, marked, true)];
      seen.push(ns.connect(plainProbe, { trace: false, close: true }));
      ns.advance(61);
      seen.push(ns.connect(marked, { trace: false, close: true }), ns.conntrack());
      return seen;
    };
    const { cached, seen } = bothWays(options, run);
    expect(seen[3]).toHaveLength(1);
    expect(cached.outcomeReplays).toBe(1);
  });
});
