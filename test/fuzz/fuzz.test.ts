// A seeded fuzz suite: every row of FUZZ_TARGETS gets thousands of mutated inputs in-process, the
// public library functions get wrongly typed arguments, and a sample goes through the CLI binary.
// Every answer must be a result or a NetfilterSimError with a code; the CLI must exit 0, 1 or 2
// without a stack trace. FUZZ_SEED and FUZZ_RUNS replay or widen a run.
import { mulberry32 } from '../kernel/generate.js';
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as lib from '../../src/index.js';
import * as arbitraries from '../../src/arbitraries/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { MAX_INPUT_BYTES } from '../../src/model/limits.js';
import { FUZZ_TARGETS, type FuzzTarget } from './targets.js';

const SEED = Number(process.env['FUZZ_SEED'] ?? 20261201);
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 1500);
const ROOT = resolve(import.meta.dirname, '../..');

/** The kernel generators' seeded PRNG: the same sequence everywhere. */
const rng = mulberry32;

// Tokens that have broken parsers before, or are meant to: syntax of each input kind, control
// characters, prototype keys, numbers at and past their limits.
const DICTIONARY = [
  '*filter', '*nat', '*mangle', '*raw', 'COMMIT', ':INPUT ACCEPT [0:0]', ':X - [0:0]', '-A', '-I', '-D', '-N', '-X', '-P', '-j', '-g', '-m', '-p', '!', '! !',
  '-s', '-d', '10.0.0.0/8', '::1', '0.0.0.0/0', '1,2,3', '--dport', '--dports', '65535', '65536', '0x', '-1', '4294967296', '18446744073709551616',
  '99999999999999999999', 'multiport', 'comment', '--comment', '"', "'", '\\', '"a b"', 'owner', '--uid-owner', 'REDIRECT', 'DNAT', '--to-destination',
  'RETURN', 'ACCEPT', 'DROP', 'TPROXY', 'MARK', '--set-xmark', 'conntrack', '--ctstate', 'NEW', 'statistic', '--probability', '0.5',
  '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', '\r', '\r\n', '\0', '\t', '\ufeff', '\u00e9', '\ud83d\ude00', '\ud800',
  ': ', '- ', '[', ']', '{', '}', '&a', '*a', '---', '...', 'kind: Pod', 'kind: List', 'items:', 'metadata:', 'annotations:', 'spec:', 'containers:',
  '{"kind":"Pod"}', 'null', 'true', '1e309', 'NaN', '>', 'tcp', 'udp', 'icmp', 'uid', 'gid', 'mark', 'in', 'eth0', 'flags', 'S,A',
  '--ipv6=false', '--proxy-uid', '-u', '-p', '-z', '-o', '-b', '-i', '-x', '*', '--', '=',
];

function mutate(seed: string, r: () => number, others: readonly string[]): string {
  let s = seed;
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) {
    const at = Math.floor(r() * (s.length + 1));
    const op = Math.floor(r() * 9);
    const word = DICTIONARY[Math.floor(r() * DICTIONARY.length)]!;
    switch (op) {
      case 0: // insert a token
        s = s.slice(0, at) + word + s.slice(at);
        break;
      case 1: // replace a span with a token
        s = s.slice(0, at) + word + s.slice(at + Math.floor(r() * 12));
        break;
      case 2: // delete a span
        s = s.slice(0, at) + s.slice(at + Math.floor(r() * 40));
        break;
      case 3: // a random code unit
        s = s.slice(0, at) + String.fromCharCode(Math.floor(r() * 0x10000)) + s.slice(at + 1);
        break;
      case 4: { // repeat a span (bounded)
        const len = Math.floor(r() * 200);
        const times = 1 + Math.floor(r() * 50);
        s = s.slice(0, at) + s.slice(at, at + len).repeat(times) + s.slice(at);
        break;
      }
      case 5: { // splice a line from another seed
        const other = others[Math.floor(r() * others.length)] ?? '';
        const lines = other.split('\n');
        s = s.slice(0, at) + (lines[Math.floor(r() * lines.length)] ?? '') + '\n' + s.slice(at);
        break;
      }
      case 6: // swap two halves
        s = s.slice(at) + s.slice(0, at);
        break;
      case 7: // a long run of one token
        s = s.slice(0, at) + `${word},`.repeat(Math.floor(r() * 300)) + s.slice(at);
        break;
      default: // nest
        s = s.slice(0, at) + '['.repeat(Math.floor(r() * 100)) + s.slice(at) + ']'.repeat(Math.floor(r() * 100));
    }
  }
  return s.length > 256 * 1024 ? s.slice(0, 256 * 1024) : s;
}

/** Runs `f`; a result or a NetfilterSimError with a code passes, anything else is returned as the defect. */
function verdict(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (e) {
    if (e instanceof NetfilterSimError && typeof e.code === 'string' && /^[A-Z_]+$/.test(e.code) && e.message !== '') return null;
    return e instanceof Error ? `${e.name}: ${e.message}\n${e.stack?.split('\n').slice(1, 4).join('\n')}` : String(e);
  }
}

describe(`fuzz (seed ${SEED}, ${RUNS} inputs per target)`, () => {
  it.each(FUZZ_TARGETS.map((t) => [t.name, t] as [string, FuzzTarget]))('%s: every input answered with a result or a typed error', (_name, target) => {
    const seeds = target.seeds();
    expect(seeds.length).toBeGreaterThan(0);
    const r = rng(SEED ^ hash(target.name));
    const defects: string[] = [];
    let slowest = 0;
    for (let i = 0; i < RUNS; i++) {
      const input = mutate(seeds[Math.floor(r() * seeds.length)]!, r, seeds);
      const t0 = performance.now();
      const d = verdict(() => target.run(input));
      slowest = Math.max(slowest, performance.now() - t0);
      if (d !== null) defects.push(`input ${JSON.stringify(input.slice(0, 300))}\n${d}`);
      if (defects.length >= 3) break;
    }
    expect(defects).toEqual([]);
    // A bound, not a timing: an input that takes seconds is a hang in waiting.
    expect(slowest).toBeLessThan(10_000);
  }, 120_000);

  it('the public library functions answer wrongly typed arguments with NetfilterSimError', async () => {
    const weird: unknown[] = [undefined, null, 0, -1, 1.5, NaN, Infinity, '', 'x', '*nat', 1n, true, {}, [], [1], ['x'], Symbol('s'), () => 1, { length: 5 }, Object.create(null), 'a'.repeat(1000)];
    const defects: string[] = [];
    const entries = [...Object.entries(lib), ...Object.entries(arbitraries).map(([k, v]) => [`arbitraries.${k}`, v] as const)];
    let calls = 0;
    for (const [name, f] of entries) {
      if (typeof f !== 'function' || name === 'NetfilterSimError') continue;
      const isClass = /^[A-Z]/.test(name.replace('arbitraries.', ''));
      // Each weird value as the first argument, then as the second after a weird first one.
      const pairs: [unknown, unknown][] = [...weird.map((a): [unknown, unknown] => [a, undefined]), ...weird.map((b): [unknown, unknown] => [Symbol('first'), b]), ...weird.map((b): [unknown, unknown] => ['', b])];
      for (const [a, b] of pairs) {
        calls++;
        try {
          const out: unknown = isClass ? new (f as new (...x: unknown[]) => unknown)(a, b) : (f as (...x: unknown[]) => unknown)(a, b);
          if (out instanceof Promise) await out.catch((e: unknown) => { if (!(e instanceof NetfilterSimError)) throw e; });
          if (out instanceof lib.NetnsPool) await out.close();
        } catch (e) {
          if (e instanceof NetfilterSimError) continue;
          defects.push(`${name}(${String(typeof a)}, ${String(typeof b)}): ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
        }
      }
    }
    expect(calls).toBeGreaterThan(5000);
    expect([...new Set(defects)].slice(0, 10)).toEqual([]);
    // Netns methods
    const ns = new lib.Netns();
    for (const m of ['connect', 'trace', 'connectAll'] as const) for (const a of weird) {
      try { (ns[m] as (x: unknown) => unknown)(a); } catch (e) { if (!(e instanceof NetfilterSimError)) defects.push(`Netns.${m}: ${String(e)}`); }
    }
    expect(defects).toEqual([]);
  }, 300_000);

  it('a sample through the CLI binary exits 0, 1 or 2, without a stack trace, within its bounds', async () => {
    const r = rng(SEED);
    const byName = new Map(FUZZ_TARGETS.map((t) => [t.name, t]));
    const pick = (name: string): string => {
      const seeds = byName.get(name)!.seeds();
      return mutate(seeds[Math.floor(r() * seeds.length)]!, r, seeds);
    };
    const runs: { args: string[]; stdin: string }[] = [];
    for (let i = 0; i < 4; i++) {
      runs.push({ args: ['fmt', '-'], stdin: pick('fmt') });
      runs.push({ args: ['check', '--json', '-'], stdin: pick('check') });
      runs.push({ args: ['trace', '--packet', pick('connect (packet descriptions traced through a pod)')], stdin: '' });
      runs.push({ args: ['compile', 'linkerd', ...pick('proxy-init flags').split(' ').filter(Boolean)], stdin: '' });
      runs.push({ args: ['compile', 'istio', ...pick('istio-iptables flags').split(' ').filter(Boolean)], stdin: '' });
      runs.push({ args: ['mesh', 'linkerd', '--client', '-'], stdin: pick('YAML/JSON manifests') });
      runs.push({ args: ['cluster', 'connect', '--snapshot', '-', '--kube-proxy', 'none', '--netpol', 'none', '--from', 'shop/client', '--to', 'shop/web-1', '--port', '80'], stdin: pick('cluster snapshots') });
    }
    const bad: string[] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const batch = await Promise.all(runs.slice(i, i + 2).map((x) => child(x.args.map((a) => a.replace(/\0/g, '')), x.stdin)));
      batch.forEach((res, k) => {
        const x = runs[i + k]!;
        if (res.signal !== null || ![0, 1, 2].includes(res.code ?? -1) || /\n\s+at |internal error/.test(res.err)) {
          bad.push(`${JSON.stringify(x.args).slice(0, 200)} → ${res.code} ${res.signal} ${res.err.slice(0, 300)}`);
        }
      });
    }
    expect(bad).toEqual([]);
    expect(MAX_INPUT_BYTES).toBe(64 * 1024 * 1024);
  }, 300_000);
});

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function child(args: string[], stdin: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; err: string }> {
  return new Promise((done) => {
    const p = spawn(process.execPath, ['--max-old-space-size=256', join(ROOT, 'dist/cli/main.js'), ...args], { timeout: 60_000 });
    let err = '';
    p.stderr.on('data', (d: Buffer) => void (err += d.toString()));
    p.stdout.resume();
    p.stdin.on('error', () => {});
    p.stdin.end(stdin);
    p.on('close', (code, signal) => done({ code, signal, err }));
  });
}
