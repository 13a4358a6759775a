// `netfilter-sim connect` and `netfilter-sim trace`, run in-process.
import { describe, expect, it } from 'vitest';
import { runConnect } from '../../src/cli/commands/connect.js';
import { runTrace } from '../../src/cli/commands/trace.js';
import { memoryIO } from '../../src/cli/io.js';
import { fixture } from '../engine/helpers.js';

const LINKERD = fixture('linkerd/injected-default.save');
const files = { 'linkerd.rules': LINKERD, 'bad.rules': '*nat\n-A OUTPUT -j NOWHERE\nCOMMIT\n' };

describe('connect', () => {
  it('--json prints exactly the connect object', async () => {
    const io = memoryIO(files);
    const code = await runConnect(['--rules', 'linkerd.rules', '--listen', '4140,4143,8080', '--uid', '1000', '--dst', '10.96.0.10:80', '--json'], io);
    expect(code).toBe(0);
    const r = JSON.parse(io.out);
    expect(r).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140, originalDestination: '10.96.0.10:80' });
    expect(r.steps[1]).toMatchObject({ hook: 'OUTPUT', table: 'nat', chain: 'PROXY_INIT_OUTPUT', rule: 4, event: 'rule', target: 'REDIRECT' });
    expect(r.trace).toBeUndefined();
  });

  it('prints a readable trace by default', async () => {
    const io = memoryIO(files);
    expect(await runConnect(['--rules', 'linkerd.rules', '--listen', '4140,4143,8080', '--uid', '1000', '--dst', '10.96.0.10:80'], io)).toBe(0);
    expect(io.out).toMatch(/^SYN 10\.0\.0\.2:49142 → 10\.96\.0\.10:80/);
    expect(io.out).toMatch(/PROXY_INIT_OUTPUT:4 REDIRECT/);
    expect(io.out).toMatch(/delivered to 127\.0\.0\.1:4140 .*SO_ORIGINAL_DST = 10\.96\.0\.10:80/);
  });

  it('reads the rules from standard input', async () => {
    const io = memoryIO({}, LINKERD);
    expect(await runConnect(['--rules', '-', '--from', 'remote', '--src', '10.1.0.5', '--dst', '10.0.0.2:8080', '--listen', '4143', '--json'], io)).toBe(0);
    expect(JSON.parse(io.out)).toMatchObject({ outcome: 'local', port: 4143 });
  });

  it('every format renders', async () => {
    for (const format of ['text', 'tree', 'json', 'mermaid', 'dot']) {
      const io = memoryIO(files);
      expect(await runConnect(['--rules', 'linkerd.rules', '--uid', '1000', '--dst', '10.96.0.10:80', '--format', format], io)).toBe(0);
      expect(io.out.length).toBeGreaterThan(0);
    }
  });

  it('exit 1 on bad rules, with the position', async () => {
    const io = memoryIO(files);
    expect(await runConnect(['--rules', 'bad.rules', '--uid', '1000', '--dst', '10.96.0.10:80'], io)).toBe(1);
    expect(io.err).toMatch(/^bad\.rules:2:/);
  });

  it('exit 1 on a bad address, 2 on usage errors', async () => {
    let io = memoryIO(files);
    expect(await runConnect(['--rules', 'linkerd.rules', '--uid', '1000', '--dst', '10.96.0.300:80'], io)).toBe(1);
    io = memoryIO(files);
    expect(await runConnect(['--rules', 'linkerd.rules', '--uid', '1000'], io)).toBe(2);
    io = memoryIO(files);
    expect(await runConnect(['--bogus'], io)).toBe(2);
  });

  it('--help shows examples', async () => {
    const io = memoryIO();
    expect(await runConnect(['--help'], io)).toBe(0);
    expect(io.out).toMatch(/Examples:/);
  });

  it('--enumerate follows every statistic branch', async () => {
    const rules = '*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A OUTPUT -p tcp -m statistic --mode random --probability 0.50000000000 -j DNAT --to-destination 10.1.0.1:80\n-A OUTPUT -p tcp -j DNAT --to-destination 10.1.0.2:80\nCOMMIT\n';
    const io = memoryIO({ 'lb.rules': rules });
    expect(await runConnect(['--rules', 'lb.rules', '--uid', '1000', '--dst', '10.96.0.10:80', '--enumerate', '--json'], io)).toBe(0);
    expect(JSON.parse(io.out).map((r: { address: string }) => r.address)).toEqual(['10.1.0.1', '10.1.0.2']);
  });
});

describe('trace', () => {
  it('traces one arriving packet, in kernel TRACE words', async () => {
    const io = memoryIO(files);
    expect(await runTrace(['--rules', 'linkerd.rules', '--listen', '4143', '--packet', 'tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0', '--format', 'text'], io)).toBe(0);
    expect(io.out).toMatch(/TRACE: nat:PREROUTING:rule:1 /);
    expect(io.out).toMatch(/TRACE: nat:PROXY_INIT_REDIRECT:rule:2 /);
  });

  it('--json has the result and the events', async () => {
    const io = memoryIO(files);
    expect(await runTrace(['--rules', 'linkerd.rules', '--packet', 'tcp > 10.96.0.10:80 uid 2102', '--json'], io)).toBe(0);
    const r = JSON.parse(io.out);
    expect(r).toMatchObject({ outcome: 'remote', address: '10.96.0.10', port: 80 });
    expect(r.trace.length).toBeGreaterThan(3);
  });

  it('exit 2 without --packet, 1 on a bad packet', async () => {
    expect(await runTrace(['--rules', 'linkerd.rules'], memoryIO(files))).toBe(2);
    expect(await runTrace(['--rules', 'linkerd.rules', '--packet', 'tcp nonsense'], memoryIO(files))).toBe(1);
  });
});
