// netfilter-sim explore as a person uses it: the contract's JSON, the text form, errors.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

const ROOT = resolve(import.meta.dirname, '../..');
const LINKERD = readFileSync(join(ROOT, 'examples', 'linkerd-default.rules'), 'utf8');

async function cli(args: string[], files: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files, '');
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

describe('netfilter-sim explore', () => {
  it('--json prints the contract object: from, fields, classes with boxes, example, rules', async () => {
    const r = await cli(['explore', '--rules', 'l.rules', '--listen', '4140,4143,8080', '--from', 'local', '-4', '--json'], { 'l.rules': LINKERD });
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as { from: string; fields: string[]; classes: { outcome: string; address: string | null; port: number | string | null; originalDestination: string | null; boxes: Record<string, unknown>[]; example: Record<string, unknown>; rules: string[] }[] };
    expect(j.from).toBe('local');
    expect(j.fields).toEqual(['uid', 'gid', 'dst', 'dport']);
    const captured = j.classes.find((c) => c.outcome === 'local' && c.address === '127.0.0.1' && c.port === 4140)!;
    expect(captured.originalDestination).toBe('dst');
    expect(captured.rules).toEqual([expect.stringMatching(/^-A PROXY_INIT_OUTPUT -p tcp .*-j REDIRECT --to-ports 4140$/)]);
    expect(captured.boxes).toContainEqual({ uid: [0, 2101], gid: [0, 4294967295], dst: ['0.0.0.1', '10.0.0.1'], dport: [1, 4566] });
    expect(captured.example).toEqual({ uid: 1, gid: 1, dst: '0.0.0.1:1' });
    // 0.0.0.0 is the host itself: connect() sends to 127.0.0.1 through lo, which the rules exempt.
    const host = j.classes.find((c) => c.outcome === 'local' && c.address === 'dst' && c.boxes.some((b) => (b['uid'] as number[])[0] === 0))!;
    expect(host.boxes).toContainEqual({ uid: [0, 2101], gid: [0, 4294967295], dst: ['0.0.0.0', '0.0.0.0'], dport: [4140, 4140] });
    expect([host.port, host.originalDestination]).toEqual(['dport', 'dst']);
    // The proxy's own connections leave as they are, with the probe's own destination.
    const proxy = j.classes.find((c) => c.outcome === 'remote' && c.boxes.every((b) => (b['uid'] as number[])[0] === 2102))!;
    expect([proxy.address, proxy.port, proxy.originalDestination]).toEqual(['dst', 'dport', null]);
  });

  it('the text form: one block per class, ranges in their shortest form, the deciding rule', async () => {
    const r = await cli(['explore', '--rules', 'l.rules', '--listen', '4140,4143,8080', '--from', 'local', '-4'], { 'l.rules': LINKERD });
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^8 classes cover every tcp connection from a local process/);
    expect(r.out).toContain("class 3 (IPv4): local → 127.0.0.1:4140 (SO_ORIGINAL_DST: the probe's destination)");
    expect(r.out).toContain('  0-2101, 2103-4294967295  *    0.0.0.1-10.0.0.1, 10.0.0.3-10.0.0.254, 10.0.1.0-126.255.255.255, 128.0.0.0/2 192.0.0.0/3, 240.0.0.0-255.255.255.254  1-4566, 4569-65535');
    // Broadcast and multicast destinations: connect() fails before any rule sees a packet.
    expect(r.out).toContain('  *    *    10.0.0.255, 127.255.255.255, 224.0.0.0/4, 255.255.255.255  *');
    expect(r.out).toContain('  0-2101, 2103-4294967295  *    0.0.0.0, 10.0.0.2, 127.0.0.0-127.255.255.254  4140, 4143, 8080');
  });

  it('usage errors exit 2; a match explore cannot split exactly exits 1 naming its line', async () => {
    expect((await cli(['explore', '--rules', 'l.rules'], { 'l.rules': LINKERD })).code).toBe(2);
    expect((await cli(['explore', '--rules', 'l.rules', '--from', 'sideways'], { 'l.rules': LINKERD })).code).toBe(2);
    expect((await cli(['explore', '--from', 'local'])).code).toBe(2);
    const recent = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m recent --rcheck --name x -j DROP\nCOMMIT\n';
    const r = await cli(['explore', '--rules', 'r.rules', '--from', 'local'], { 'r.rules': recent });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^r\.rules:5:1: explore cannot evaluate "-m recent" \(its lists depend on earlier packets\) of filter OUTPUT rule 1/);
  });

  it('--help', async () => {
    const r = await cli(['explore', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: netfilter-sim explore /);
  });
});
