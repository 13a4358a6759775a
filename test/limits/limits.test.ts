// Each bound of docs/semantics.md ("Bounds on input"), at the bound and one past it.
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputTooLargeError, memoryIO, readBounded } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { Netns } from '../../src/engine/path/netns.js';
import { NetnsPool } from '../../src/engine/batch/pool.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import {
  DEFAULT_CONNTRACK_MAX, MAX_ARGS, MAX_CONNTRACK_MAX, MAX_INPUT_BYTES, MAX_MANIFEST_DEPTH, MAX_RULES, MAX_TRACE_RULE_EVENTS, MAX_WORKERS, MAX_YAML_BYTES,
  truncateUtf8, utf8Length,
} from '../../src/model/limits.js';
import { readManifests } from '../../src/compile/pod.js';
import type { Rule, Ruleset } from '../../src/model/types.js';
import { parseIptablesArgv } from '../../src/iptables/syntax/command.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import { parseProxyInitArgs } from '../../src/compile/linkerd/config.js';

const dir = mkdtempSync(join(tmpdir(), 'nfsim-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function codeOf(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    if (e instanceof NetfilterSimError) return e.code;
    throw e;
  }
}
const errors = (text: string, options = {}): string[] => parseIptablesSave(text, options).diagnostics.filter((d) => d.severity === 'error').map((d) => d.code);

describe('bounds', () => {
  it(`input: ${MAX_INPUT_BYTES} bytes are read, one more is refused`, () => {
    const p = join(dir, 'big');
    writeFileSync(p, Buffer.alloc(MAX_INPUT_BYTES, 0x23));
    const fd = openSync(p, 'r');
    try {
      expect(readBounded(fd, p).length).toBe(MAX_INPUT_BYTES);
    } finally {
      closeSync(fd);
    }
    writeFileSync(p, Buffer.alloc(MAX_INPUT_BYTES + 1, 0x23));
    const fd2 = openSync(p, 'r');
    try {
      expect(() => readBounded(fd2, p)).toThrow(InputTooLargeError);
    } finally {
      closeSync(fd2);
    }
  });

  it(`rules: ${MAX_RULES} are created, one more is TOO_MANY_RULES`, () => {
    const one: Rule = { matches: [], target: { kind: 'verdict', verdict: 'ACCEPT' } };
    const noflush: Ruleset = { family: 4, tables: [{ name: 'filter', chains: [{ name: 'INPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: new Array<Rule>(MAX_RULES - 1).fill(one) }] }] };
    const ok = parseIptablesSave('*filter\n-A INPUT -j DROP\nCOMMIT\n', { noflush });
    expect(ok.diagnostics).toEqual([]);
    expect(ok.ruleset.tables[0]!.chains.find((c) => c.name === 'INPUT')!.rules.length).toBe(MAX_RULES);
    expect(errors('*filter\n-A INPUT -s 1.1.1.1,2.2.2.2 -j DROP\nCOMMIT\n', { noflush })).toEqual(['TOO_MANY_RULES']);
    // an expansion past the bound is refused before a rule is made
    const a = Array(1025).fill('1').join(',');
    const b = Array(1024).fill('1').join(',');
    expect(errors(`*filter\n-A INPUT -s ${a} -d ${b} -j DROP\nCOMMIT\n`)).toEqual(['LINE_TOO_LONG']);
    expect(codeOf(() => parseIptablesArgv(['-A', 'INPUT', '-s', a, '-d', b, '-j', 'DROP'], { family: 4, mode: 'strict' }))).toBe('TOO_MANY_RULES');
  });

  it('a line of 10239 bytes is read, 10240 is LINE_TOO_LONG, counted in UTF-8 bytes', () => {
    // a comment line: iptables-restore's buffer limit applies before anything else is read
    const line = (bytes: number): string => `# ${'é'.repeat((bytes - 2) / 2)}`;
    expect(utf8Length(line(10238))).toBe(10238);
    const at = `*filter\n${line(10238)}x\nCOMMIT\n`;
    expect(errors(at).filter((c) => c === 'LINE_TOO_LONG')).toEqual([]);
    expect(errors(`*filter\n${line(10238)}xy\nCOMMIT\n`)).toEqual(['LINE_TOO_LONG']);
  });

  it('chain names: 28 bytes, 29 refused, counted in UTF-8 bytes', () => {
    expect(errors(`*filter\n:${'é'.repeat(14)} - [0:0]\nCOMMIT\n`)).toEqual([]);
    expect(errors(`*filter\n:${'é'.repeat(14)}x - [0:0]\nCOMMIT\n`)).toEqual(['CHAIN_NAME_TOO_LONG']);
    expect(codeOf(() => parseIptablesArgv(['-A', 'INPUT', '-j', 'é'.repeat(15)], { family: 4, mode: 'strict' }))).toBe('CHAIN_NAME_TOO_LONG');
  });

  it('interface names: 15 bytes, 16 refused', () => {
    expect(codeOf(() => parseIptablesArgv(['-A', 'INPUT', '-i', 'é'.repeat(7) + 'x', '-j', 'DROP'], { family: 4, mode: 'strict' }))).toBeUndefined();
    expect(codeOf(() => parseIptablesArgv(['-A', 'INPUT', '-i', 'é'.repeat(8), '-j', 'DROP'], { family: 4, mode: 'strict' }))).toBe('BAD_INTERFACE');
  });

  it('comments: 255 bytes kept, 256 cut to 255 without splitting a character, with a warning', () => {
    const at = parseIptablesSave(`*filter\n-A INPUT -m comment --comment "x${'é'.repeat(127)}" -j ACCEPT\nCOMMIT\n`);
    expect(at.diagnostics).toEqual([]);
    const past = parseIptablesSave(`*filter\n-A INPUT -m comment --comment "${'é'.repeat(128)}" -j ACCEPT\nCOMMIT\n`);
    expect(past.diagnostics.map((d) => [d.code, d.severity])).toEqual([['COMMENT_TOO_LONG', 'warning']]);
    expect(past.diagnostics[0]!.message).toContain('comment is 256 bytes long');
    const kept = past.ruleset.tables[0]!.chains.find((c) => c.name === 'INPUT')!.rules[0]!.matches[0]!.options as { comment: string };
    expect(kept.comment).toBe('é'.repeat(127));
    expect(truncateUtf8('aé', 2)).toBe('a');
  });

  it('counters: 2^53 - 1 kept exactly, 2^53 refused when kept, anything read when dropped', () => {
    const max = String(Number.MAX_SAFE_INTEGER);
    const past = '9007199254740992';
    expect(errors(`*filter\n:INPUT ACCEPT [${max}:${max}]\n[${max}:1] -A INPUT -j ACCEPT\nCOMMIT\n`, { counters: true })).toEqual([]);
    expect(errors(`*filter\n:INPUT ACCEPT [${past}:0]\nCOMMIT\n`, { counters: true })).toEqual(['BAD_COUNTERS']);
    expect(errors(`*filter\n[1:${past}] -A INPUT -j ACCEPT\nCOMMIT\n`, { counters: true })).toEqual(['BAD_COUNTERS']);
    expect(errors(`*filter\n:INPUT ACCEPT [${past}0000:0]\nCOMMIT\n`)).toEqual([]);
    expect(codeOf(() => parseIptablesArgv(['-A', 'INPUT', '-c', max, '1', '-j', 'DROP'], { family: 4, mode: 'strict' }))).toBeUndefined();
    expect(codeOf(() => parseIptablesArgv(['-A', 'INPUT', '-c', past, '1', '-j', 'DROP'], { family: 4, mode: 'strict' }))).toBe('BAD_COUNTERS');
  });

  it(`manifests: ${MAX_MANIFEST_DEPTH} levels of nesting are read, one more is BAD_MANIFEST (flow, block and JSON)`, () => {
    const flow = (n: number): string => `a: ${'['.repeat(n - 1)}${']'.repeat(n - 1)}\n`;
    expect(readManifests(flow(MAX_MANIFEST_DEPTH))).toHaveLength(1);
    expect(codeOf(() => readManifests(flow(MAX_MANIFEST_DEPTH + 1)))).toBe('BAD_MANIFEST');
    const block = (n: number): string => Array.from({ length: n }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n';
    expect(readManifests(block(MAX_MANIFEST_DEPTH))).toHaveLength(1);
    expect(codeOf(() => readManifests(block(MAX_MANIFEST_DEPTH + 1)))).toBe('BAD_MANIFEST');
    const json = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    expect(readManifests(json(MAX_MANIFEST_DEPTH))).toHaveLength(1);
    expect(codeOf(() => readManifests(json(MAX_MANIFEST_DEPTH + 1)))).toBe('BAD_MANIFEST');
    // thousands deep: the same error, not the yaml package's stack overflow or memory exhaustion
    expect(codeOf(() => readManifests(flow(50_000)))).toBe('BAD_MANIFEST');
    expect(codeOf(() => readManifests(block(3000)))).toBe('BAD_MANIFEST');
  });

  it(`YAML manifests: ${MAX_YAML_BYTES} bytes are read, one more is BAD_MANIFEST`, () => {
    const yaml = (bytes: number): string => {
      const head = 'kind: Pod\nmetadata: {name: x}\n# ';
      return head + 'x'.repeat(bytes - head.length - 1) + '\n';
    };
    expect(readManifests(yaml(MAX_YAML_BYTES))).toHaveLength(1);
    expect(codeOf(() => readManifests(yaml(MAX_YAML_BYTES + 1)))).toBe('BAD_MANIFEST');
  });

  it(`argv parsers: ${MAX_ARGS} arguments are read, one more is LIMIT_EXCEEDED`, () => {
    const argv = (n: number): string[] => ['-A', 'INPUT', '-j', 'DROP', ...Array<string>(n - 4).fill('-v')];
    expect(parseIptablesArgv(argv(MAX_ARGS), { family: 4, mode: 'strict' }).rules).toHaveLength(1);
    expect(codeOf(() => parseIptablesArgv(argv(MAX_ARGS + 1), { family: 4, mode: 'strict' }))).toBe('LIMIT_EXCEEDED');
    const flags = (n: number): string[] => Array<string>(n).fill('--ipv6=false');
    expect(parseProxyInitArgs(flags(MAX_ARGS)).ok).toBe(true);
    expect(codeOf(() => parseProxyInitArgs(flags(MAX_ARGS + 1)))).toBe('LIMIT_EXCEEDED');
  });

  it(`traces keep ${MAX_TRACE_RULE_EVENTS} rule events, and count the ones past it`, () => {
    const rules = (n: number): string => `*filter\n:C - [0:0]\n${'-A INPUT -j C\n'.repeat(n)}COMMIT\n`;
    const packet = 'tcp 10.0.0.5:1 > 10.0.0.2:80 in eth0';
    // each jump to an empty chain is a rule event and a return event
    const at = new Netns({ rules: rules(MAX_TRACE_RULE_EVENTS / 2) }).trace(packet);
    expect(at.traceOmitted).toBeUndefined();
    expect(at.trace!.filter((e) => e.type === 'rule' || e.type === 'return')).toHaveLength(MAX_TRACE_RULE_EVENTS);
    const past = new Netns({ rules: rules(MAX_TRACE_RULE_EVENTS / 2 + 1) }).trace(packet);
    expect(past.traceOmitted).toBe(2);
    expect(past.trace!.filter((e) => e.type === 'rule' || e.type === 'return')).toHaveLength(MAX_TRACE_RULE_EVENTS);
    expect(past.outcome).toBe(at.outcome);
  });

  it('enumeration: 4096 branches are followed silently, past them the CLI warns', async () => {
    // each rule draws and goes on (MARK continues): n rules, 2^n branches
    const stat = (n: number): string => `*mangle\n${'-A OUTPUT -p udp -m statistic --mode random --probability 0.5 -j MARK --set-xmark 0x1/0x1\n'.repeat(n)}COMMIT\n`;
    for (const [n, warned] of [[12, false], [13, true]] as const) {
      const io = memoryIO({ 'r.rules': stat(n) });
      const code = await run(['connect', '--rules', 'r.rules', '--uid', '0', '--dst', '10.0.0.9:80', '--proto', 'udp', '--enumerate', '--json'], io);
      expect(code).toBe(0);
      expect((JSON.parse(io.out) as unknown[]).length).toBe(4096);
      expect(io.err.includes('enumeration stopped at 4096 branches; they cover 50.00% of the probability')).toBe(warned);
    }
  });

  it(`workers: ${MAX_WORKERS} is the most a pool starts, one more is BAD_CONFIG`, async () => {
    // Starting 64 threads here would only measure the machine; 1 is started, 65 refused before any.
    const pool = new NetnsPool({}, { workers: 1 });
    await pool.close();
    expect(codeOf(() => new NetnsPool({}, { workers: MAX_WORKERS + 1 }))).toBe('BAD_CONFIG');
  });

  it(`nf_conntrack_max: ${DEFAULT_CONNTRACK_MAX} by default; at the limit the table holds, one more new connection is dropped`, () => {
    expect(DEFAULT_CONNTRACK_MAX).toBe(262_144);
    const ns = new Netns({ conntrack: true, conntrackMax: 4 });
    const udp = (i: number): ReturnType<Netns['connect']> => ns.connect({ from: 'local', uid: 0, proto: 'udp', dst: `10.0.0.${10 + i}:53` });
    for (let i = 0; i < 4; i++) expect(udp(i).outcome).toBe('remote');
    expect(ns.conntrack()).toHaveLength(4);
    const full = udp(4);
    expect(full.outcome).toBe('dropped');
    expect(full.reason).toBe('nf_conntrack: table full, dropping packet (nf_conntrack_max 4)');
    ns.flushConntrack();
    expect(udp(5).outcome).toBe('remote');
    expect(codeOf(() => new Netns({ conntrackMax: MAX_CONNTRACK_MAX }))).toBeUndefined();
    for (const bad of [0, MAX_CONNTRACK_MAX + 1, 1.5, -1]) expect(codeOf(() => new Netns({ conntrackMax: bad }))).toBe('BAD_CONFIG');
  });

  it('--conntrack-max on the CLI', async () => {
    const io = memoryIO();
    expect(await run(['connect', '--conntrack-max', '1', '--uid', '0', '--dst', '10.0.0.9:80'], io)).toBe(0);
    const bad = memoryIO();
    expect(await run(['trace', '--conntrack-max', '0', '--packet', 'tcp > 10.0.0.9:80 uid 0'], bad)).toBe(2);
    expect(bad.err).toContain('--conntrack-max is at least 1');
    const big = memoryIO();
    expect(await run(['trace', '--conntrack-max', String(MAX_CONNTRACK_MAX + 1), '--packet', 'tcp > 10.0.0.9:80 uid 0'], big)).toBe(2);
  });
});
