/**
 * rateest, RATEEST and HMARK: parsing and printing (the rateest vectors, whose kernel side is in
 * test/kernel/extensions.differential.test.ts), the load checks, typed errors with their place,
 * the estimator's arithmetic on the virtual clock, and HMARK's hash.
 */
import { describe, expect, it } from 'vitest';
import { check } from '../../src/iptables/check/index.js';
import { Netns } from '../../src/index.js';
import { RateEstimator } from '../../src/iptables/extensions/rate-estimator.js';
import { hmarkValue, jhash3words, reciprocalScale, type HmarkOptions } from '../../src/iptables/extensions/target/HMARK.js';
import { printIptablesSave } from '../../src/iptables/print/save.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import { parseAddress } from '../../src/model/address.js';
import { parseRuleArgs, tokenize } from './harness.js';
import { RATEEST_PREAMBLE, RATEEST_TABLES, RATEEST_VECTORS } from './rateest-vectors.js';

/** Loads a mangle table as iptables-restore and the kernel would: errors, or the saved lines. */
function load(lines: readonly string[], family: 4 | 6 = 4): { ok: true; lines: string[] } | { ok: false; errors: string[] } {
  const r = parseIptablesSave(`*mangle\n${lines.join('\n')}\nCOMMIT\n`, { family, mode: 'strict' });
  const errors = [...r.diagnostics, ...check(r.ruleset)].filter((d) => d.severity === 'error');
  if (errors.length > 0) return { ok: false, errors: errors.map((d) => `${d.span ? `${d.span.line}:${d.span.column}: ` : ''}${d.code}: ${d.message}`) };
  return { ok: true, lines: printIptablesSave(r.ruleset).split('\n').filter((l) => l.startsWith('-A ')) };
}

describe('rateest vectors (after the RATEEST rules that create foo and 0123456789abcde)', () => {
  it.each(RATEEST_VECTORS.map(([rule, saved]) => [rule, saved] as const))('%s', (rule, saved) => {
    const r = load([...RATEEST_PREAMBLE, `-A OUTPUT ${rule}`]);
    if (saved === null) expect(r.ok, r.ok ? `accepted as ${r.lines[2]}` : '').toBe(false);
    else expect(r).toEqual({ ok: true, lines: [...RATEEST_PREAMBLE.map((l) => l.replace(/interval (\d+)(s|ms)/, 'interval $1.0$2').replace(/ewmalog (\d+)(s|ms)/, 'ewmalog $1.0$2').replace('0123456789abcdef', '0123456789abcde')), `-A OUTPUT ${saved}`] });
  });
});

describe('rate estimators: the load checks', () => {
  it.each(RATEEST_TABLES.map(([lines, loads], i) => [i, lines, loads] as const))('table %i loads as in the kernel', (_i, lines, loads) => {
    expect(load(lines).ok).toBe(loads);
  });
  const est = '-A OUTPUT -j RATEEST --rateest-name e --rateest-interval 1s --rateest-ewmalog 4s';
  const use = '-A OUTPUT -m rateest --rateest e --rateest-gt --rateest-pps 1';
  it('a rateest before the RATEEST that creates its estimator is refused, at its place', () => {
    const r = load([use, est]);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual([expect.stringMatching(/^2:\d+: UNKNOWN_ESTIMATOR: rateest: no rate estimator "e": no earlier RATEEST rule creates it .*No such file or directory/)]);
  });
  it('an estimator from another table loaded earlier counts', () => {
    const r = parseIptablesSave(`*raw\n-A PREROUTING -j RATEEST --rateest-name e --rateest-interval 1s --rateest-ewmalog 4s\nCOMMIT\n*filter\n-A INPUT -m rateest --rateest e --rateest-lt --rateest-bps 1mbit\nCOMMIT\n`, { family: 4 });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(check(r.ruleset)).toEqual([]);
  });
  it('a second RATEEST with one name must agree on its timing', () => {
    expect(load([est, est]).ok).toBe(true);
    const r = load([est, '-A OUTPUT -j RATEEST --rateest-name e --rateest-interval 2s --rateest-ewmalog 8s']);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatch(/^3:\d+: CONFLICTING_OPTIONS: RATEEST: estimator "e" exists with another interval or ewmalog/);
  });
  it('a bad rate blames the rate token', () => {
    const r = load([est, '-A OUTPUT -m rateest --rateest e --rateest-gt --rateest-bps 5xbit']);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatch(/^3:61: BAD_VALUE: rateest: could not parse rate `5xbit'/);
  });
  it('RATEEST timing errors name the option', () => {
    const r = load(['-A OUTPUT -j RATEEST --rateest-name e --rateest-interval 9s --rateest-ewmalog 64s']);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatch(/^2:\d+: BAD_VALUE: RATEEST: interval value is too large/);
  });
});

describe('RateEstimator (est_timer on the virtual clock)', () => {
  it('is 0 before the first tick, then the weighted average of what it counted', () => {
    // 250 ms (interval -2), ewma_log 1: avbps = (1000 << 10) >> 1 after the first tick.
    const e = new RateEstimator('x', -2, 1, 100);
    e.add(1000, 100.1);
    expect(e.read(100.2)).toEqual({ bps: 0, pps: 0 });
    expect(e.read(100.25)).toEqual({ bps: 2000, pps: 2 });
    // An idle tick halves it.
    expect(e.read(100.5)).toEqual({ bps: 1000, pps: 1 });
    // Long idle: it decays to 0 (and the ticks left are skipped).
    expect(e.read(100 + 86400)).toEqual({ bps: 0, pps: 0 });
    e.add(500, 100 + 86400);
    expect(e.read(100 + 86400 + 0.25)).toEqual({ bps: 1000, pps: 2 });
  });
  it('counts every packet up to the tick, with the period of its interval', () => {
    // 1 s (interval 0): brate = bytes << 8; ewma_log 2.
    const e = new RateEstimator('y', 0, 2, 0);
    for (let i = 0; i < 10; i++) e.add(100, 0.1 * i);
    // 1000 bytes in the first second: avbps = (1000 << 8) >> 2 = 64000, read >> 8 = 250.
    expect(e.read(1)).toEqual({ bps: 250, pps: 2 });
    // The second second, idle: avbps -= avbps >> 2.
    expect(e.read(2)).toEqual({ bps: 187, pps: 1 });
  });
});

describe('RATEEST and rateest in a namespace', () => {
  const rules = [
    '*mangle',
    '-A PREROUTING -p tcp -j RATEEST --rateest-name in --rateest-interval 1s --rateest-ewmalog 2s',
    'COMMIT',
    '*filter',
    '-A INPUT -p tcp -m tcp --dport 8080 -m rateest --rateest in --rateest-gt --rateest-pps 0 -j DROP',
    '-A INPUT -p tcp -m tcp --dport 8081 -m rateest --rateest in --rateest-lt --rateest-bps 8 -j DROP',
    'COMMIT',
    '',
  ].join('\n');
  it('the rate is 0 until the estimator ticks, then the traffic shows, then it decays', () => {
    const ns = new Netns({ rules, listen: [8080, 8081] });
    const probe = (port: number) => ns.connect({ from: 'remote', src: '10.1.0.5', dst: `10.0.0.2:${port}` }).outcome;
    // Before the first tick: gt 0 is false, lt 1 B/s is true.
    expect(probe(8080)).toBe('local');
    expect(probe(8081)).toBe('dropped');
    ns.advance(1);
    expect(probe(8080)).toBe('dropped');
    expect(probe(8081)).toBe('local');
    ns.advance(120);
    expect(probe(8080)).toBe('local');
  });
  it('a rateest naming no estimator is refused when the namespace loads', () => {
    expect(() => new Netns({ rules: '*filter\n-A INPUT -m rateest --rateest nope --rateest-gt --rateest-pps 0\nCOMMIT\n', listen: [] })).toThrow(/no rate estimator "nope"/);
  });
});

describe('HMARK', () => {
  const opts = (line: string, family: 4 | 6 = 4): HmarkOptions => {
    const r = parseRuleArgs(tokenize(`-j HMARK ${line}`), { family, table: 'mangle', chain: 'PREROUTING' });
    if (!r.target || 'verdict' in r.target) throw new Error('no target');
    return r.target.options as HmarkOptions;
  };
  const v4 = (s: string): number[] => parseAddress(s, 4)!;
  it('reciprocal_scale is the exact high word of the 64-bit product', () => {
    for (const [a, b] of [[0xffffffff, 0xffffffff], [0xdeadbeef, 7], [12345, 0x80000000], [0x9e3779b9, 1000]] as const) {
      expect(reciprocalScale(a, b)).toBe(Number((BigInt(a) * BigInt(b)) >> 32n));
    }
  });
  it('jhash_3words: the kernel results (checked through marks in the kernel differential)', () => {
    // The kernel's mark for 10.98.250.156:21189 -> 10.0.0.2:8080 under the first random case of
    // test/kernel/extension-fates.differential.test.ts (--hmark-tuple dst,sport
    // --hmark-dport-mask 0xc8f0 --hmark-rnd 0xe4f3f317 --hmark-mod 5 --hmark-offset 616) is 616 (redirected to port 9000).
    const o = opts('--hmark-tuple dst,sport --hmark-dport-mask 0xc8f0 --hmark-rnd 0xe4f3f317 --hmark-mod 5 --hmark-offset 616');
    expect(hmarkValue(o, { family: 4, src: v4('10.98.250.156'), dst: v4('10.0.0.2'), proto: 6, ports: { sport: 21189, dport: 8080 } })).toBe(616);
    expect(jhash3words(0, 0, 0, 0)).toBe(jhash3words(0, 0, 0, 0));
    expect(jhash3words(1, 2, 3, 4)).not.toBe(jhash3words(1, 2, 3, 5));
  });
  it('is the same for both directions when the masks are', () => {
    const o = opts('--hmark-tuple src,dst,sport,dport,proto --hmark-rnd 0x1234 --hmark-mod 1000 --hmark-offset 5');
    const a = { family: 4 as const, src: v4('10.0.0.1'), dst: v4('10.9.9.9'), proto: 6, ports: { sport: 40000, dport: 80 } };
    const b = { family: 4 as const, src: v4('10.9.9.9'), dst: v4('10.0.0.1'), proto: 6, ports: { sport: 80, dport: 40000 } };
    const m = hmarkValue(o, a);
    expect(hmarkValue(o, b)).toBe(m);
    expect(m).toBeGreaterThanOrEqual(5);
    expect(m).toBeLessThan(1005);
  });
  it('fields without a mask do not count; an IPv6 address is folded by XOR', () => {
    const o = opts('--hmark-dst-prefix 64 --hmark-rnd 1 --hmark-mod 4096', 6);
    const t = (src: string, dst: string) => ({ family: 6 as const, src: parseAddress(src, 6)!, dst: parseAddress(dst, 6)!, proto: 6, ports: { sport: 1, dport: 2 } });
    expect(hmarkValue(o, t('fd00::1', 'fd00:1::5'))).toBe(hmarkValue(o, t('fd00::99', 'fd00:1::7')));
    expect(hmarkValue(o, t('fd00::1', 'fd00:1::5'))).toBe(hmarkValue(o, t('::', 'fd00:1::')));
  });
  it('sets the mark in a namespace; with --hmark-tuple ct and no entry it leaves it', () => {
    const rules = '*raw\n-A PREROUTING -p tcp -j HMARK --hmark-tuple ct --hmark-rnd 1 --hmark-mod 3 --hmark-offset 5\nCOMMIT\n*mangle\n-A PREROUTING -p tcp -j HMARK --hmark-tuple src --hmark-rnd 1 --hmark-mod 3 --hmark-offset 10\nCOMMIT\n';
    const ns = new Netns({ rules, listen: [8080] });
    const r = ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }, { trace: true });
    const effects = (r.trace ?? []).filter((e) => e.type === 'effect' && (e as { target?: string }).target === 'HMARK').map((e) => (e as { detail?: string }).detail);
    expect(effects[0]).toBe('no conntrack entry: mark unchanged');
    const mark = hmarkValue(opts('--hmark-tuple src --hmark-rnd 1 --hmark-mod 3 --hmark-offset 10'), { family: 4, src: v4('10.1.0.5'), dst: v4('10.0.0.2'), proto: 6, ports: null });
    expect(effects[1]).toBe(`mark 0x0 → 0x${mark.toString(16)}`);
  });
  it('errors say what and where', () => {
    const r = load(['-A OUTPUT -j HMARK --hmark-tuple src,foo --hmark-rnd 1 --hmark-mod 2']);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toBe('2:34: BAD_VALUE: HMARK: Bad type "foo"');
    const s = load(['-A OUTPUT -j HMARK --hmark-tuple src --hmark-src-prefix 16 --hmark-rnd 1 --hmark-mod 2']);
    if (!s.ok) expect(s.errors[0]).toMatch(/^2:\d+: DUPLICATE_OPTION: HMARK: option "--hmark-src-prefix" can only be used once/);
    expect(s.ok).toBe(false);
    const k = load(['-A OUTPUT -j HMARK --hmark-tuple src --hmark-rnd 1 --hmark-mod 2 --hmark-sport 1 --hmark-spi 2']);
    expect(k.ok).toBe(false);
    if (!k.ok) expect(k.errors[0]).toMatch(/CONFLICTING_OPTIONS: HMARK: the kernel refuses --hmark-spi together with --hmark-sport/);
  });
});
