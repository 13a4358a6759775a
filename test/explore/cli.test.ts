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
    const nth = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m statistic --mode nth --every 2 --packet 0 -j DROP\nCOMMIT\n';
    const r = await cli(['explore', '--rules', 'r.rules', '--from', 'local'], { 'r.rules': nth });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^r\.rules:5:1: explore cannot evaluate "-m statistic --mode nth" \(a counter over earlier packets\) of filter OUTPUT rule 1/);
  });

  it('takes nft files (detected, or --syntax nft), alone or beside iptables-save rules', async () => {
    const NFT = readFileSync(join(ROOT, 'examples', 'nftables', 'pod.nft'), 'utf8');
    const r = await cli(['explore', '--rules', 'pod.nft', '--listen', '15001,8080', '--from', 'local', '-4', '--json'], { 'pod.nft': NFT });
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { classes: { outcome: string; port: number | string | null; boxes: { uid: number[]; dst: string[]; dport: number[] }[]; rules: string[] }[] };
    const captured = j.classes.find((c) => c.outcome === 'local' && c.port === 15001)!;
    expect(captured.rules).toEqual(['inet pod-nat redirect-out: meta l4proto tcp redirect to :15001']);
    expect(captured.boxes).toContainEqual({ uid: [0, 1336], gid: [0, 4294967295], dst: ['10.0.1.0', '127.0.0.0'], dport: [1, 65535] });
    // Beside the Linkerd rules: the nat OUTPUT chain at -100 (iptables) and the nft one at -100
    // (registered later) both run; the first REDIRECT wins.
    const both = await cli(['explore', '--rules', 'l.rules', '--rules', 'pod.nft', '--listen', '4140,4143,15001', '--from', 'local', '-4', '--json'], { 'l.rules': LINKERD, 'pod.nft': NFT });
    expect(both.code, both.err).toBe(0);
    const classes = (JSON.parse(both.out) as { classes: { outcome: string; port: number | string | null; rules: string[] }[] }).classes;
    expect(classes.find((c) => c.outcome === 'local' && c.port === 4140)!.rules[0]).toMatch(/^-A PROXY_INIT_OUTPUT .*REDIRECT --to-ports 4140$/);
    expect(classes.some((c) => c.rules.some((t) => t.startsWith('inet pod-nat ')))).toBe(true);
    const forced = await cli(['explore', '--syntax', 'nft', '--rules', 'x', '--listen', '15001', '--from', 'remote', '-4'], { x: NFT.replace(/^#.*\n/gm, '') });
    expect(forced.code, forced.err).toBe(0);
    expect(forced.out).toMatch(/^\d+ classes cover every tcp connection from a remote client/);
  });

  it('an nft rule explore cannot split exactly exits 1 with its FILE:LINE:COL', async () => {
    const nft = 'table ip t {\n\tchain out {\n\t\ttype nat hook output priority -100; policy accept;\n\t\ttcp dport 80 limit rate 10/second redirect to :15001\n\t}\n}\n';
    const r = await cli(['explore', '--rules', 'l.nft', '--from', 'local'], { 'l.nft': nft });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^l\.nft:4:3: explore cannot evaluate "limit" \(its bucket depends on earlier packets\) of table ip t chain out rule 1 \(tcp dport 80 limit rate 10\/second redirect to :15001\)/);
  });

  it('mesh --all-ports on ambient pods with native nftables rules: each range is what mesh says for its ports', async () => {
    const pods = ['--client', join(ROOT, 'examples/mesh/ambient-web.yaml'), '--server', join(ROOT, 'examples/mesh/ambient-api.yaml')];
    const r = await cli(['mesh', 'istio', ...pods, '--native-nftables', '--all-ports', '--json']);
    expect(r.code, r.err).toBe(0);
    const all = JSON.parse(r.out) as { address: string; ranges: { ports: [number, number]; verdict: string }[] };
    expect(all.ranges[0]!.ports[0]).toBe(1);
    expect(all.ranges[all.ranges.length - 1]!.ports[1]).toBe(65535);
    expect(all.ranges.find((x) => x.ports[0] <= 8080 && 8080 <= x.ports[1])!.verdict).toBe('meshed');
    for (const range of all.ranges.slice(0, 6)) {
      for (const port of new Set([range.ports[0], range.ports[1]])) {
        const one = await cli(['mesh', 'istio', ...pods, '--native-nftables', '--dst', `${all.address}:${port}`, '--json']);
        expect(JSON.parse(one.out).verdict, `port ${port}`).toBe(range.verdict);
      }
    }
  });

  it('narrowing flags: the classes cover exactly the narrowed space; --iface NAME narrows, NAME=ADDRS makes one', async () => {
    const files = { 'l.rules': LINKERD };
    const r = await cli(['explore', '--rules', 'l.rules', '--listen', '4140,4143,8080', '--from', 'local', '--uid', '1000-1001', '--gid', '5', '--dst', '10.96.0.0/12', '--dst', 'fd00::/64', '--dport', '80,443', '--dport', '8000-8009', '--json'], files);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { spaces: { family: number; probes: string }[]; narrowed: Record<string, string[]>; classes: { family: number; boxes: { uid: number[]; gid: number[]; dport: number[] }[] }[] };
    expect(j.spaces).toEqual([
      { family: 4, probes: (2n * 1n * (1n << 20n) * 12n).toString() },
      { family: 6, probes: (2n * 1n * (1n << 64n) * 12n).toString() },
    ]);
    expect(j.narrowed).toEqual({ uid: ['1000-1001'], gid: ['5'], dst: ['10.96.0.0/12', 'fd00::/64'], dport: ['80', '443', '8000-8009'] });
    for (const c of j.classes) for (const b of c.boxes) {
      expect(b.uid[0]).toBeGreaterThanOrEqual(1000);
      expect(b.uid[1]).toBeLessThanOrEqual(1001);
      expect(b.gid).toEqual([5, 5]);
    }
    const remote = await cli(['explore', '--rules', 'l.rules', '--iface', 'eth0=10.0.0.2/24', '--iface', 'eth1=10.1.0.2/24', '--iface', 'eth1', '--src', '10.1.0.0/24', '--from', 'remote', '-4', '--json'], files);
    expect(remote.code, remote.err).toBe(0);
    const rj = JSON.parse(remote.out) as { classes: { boxes: { iface: string; src: string[] }[] }[] };
    expect(new Set(rj.classes.flatMap((c) => c.boxes.map((b) => b.iface)))).toEqual(new Set(['eth1']));
    expect(rj.classes.flatMap((c) => c.boxes.map((b) => b.src[0]!.startsWith('10.1.0.') && b.src[1]!.startsWith('10.1.0.'))).every(Boolean)).toBe(true);
  });

  it('--summary: per outcome its exact probes and share, adding up to the space; --json', async () => {
    const files = { 'l.rules': LINKERD };
    const text = await cli(['explore', '--rules', 'l.rules', '--listen', '4140,4143,8080', '--from', 'local', '-4', '--summary'], files);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toMatch(/^4 outcomes of every tcp connection from a local process/);
    expect(text.out).toContain('IPv4: 5,192,217,630,372,313,364,192,902,785,269,760 probes');
    const r = await cli(['explore', '--rules', 'l.rules', '--listen', '4140,4143,8080', '--from', 'local', '-4', '--summary', '--json'], files);
    const j = JSON.parse(r.out) as { spaces: { probes: string }[]; outcomes: { outcome: string; probes: string; share: number; classes: number; rules: string[] }[] };
    expect(j.outcomes.reduce((n, o) => n + BigInt(o.probes), 0n).toString()).toBe(j.spaces[0]!.probes);
    expect(j.spaces[0]!.probes).toBe(((1n << 32n) ** 3n * 65535n).toString());
    expect(j.outcomes.map((o) => o.outcome)).toEqual(['local', 'refused', 'remote', 'local']);
    expect(j.outcomes.reduce((n, o) => n + o.classes, 0)).toBe(8);
    expect(j.outcomes[0]!.rules).toEqual([expect.stringMatching(/REDIRECT --to-ports 4140$/)]);
  });

  it('bad narrowing values are usage errors naming the flag', async () => {
    const files = { 'l.rules': LINKERD };
    const cases: [string[], RegExp][] = [
      [['--dport', '70000'], /--dport "70000" is outside the ports 1-65535/],
      [['--dst', '10.0.0.0/40'], /--dst "10.0.0.0\/40": the prefix length is 0-32 for IPv4/],
      [['--uid', '5-1'], /--uid "5-1" has its first value above its last/],
      [['--src', '10.0.0.0/8'], /--src narrows the remote space; local probes have uid, gid, dst and dport/],
      [['--iface', 'eth0'], /--iface narrows the remote space/],
    ];
    for (const [flags, message] of cases) {
      const r = await cli(['explore', '--rules', 'l.rules', '--from', 'local', ...flags], files);
      expect(r.code, flags.join(' ')).toBe(2);
      expect(r.err).toMatch(message);
    }
    const noIface = await cli(['explore', '--rules', 'l.rules', '--from', 'remote', '--iface', 'wlan0'], files);
    expect(noIface.code).toBe(1);
    expect(noIface.err).toMatch(/iface: the namespace has no interface "wlan0"/);
  });

  it('--help', async () => {
    const r = await cli(['explore', '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: netfilter-sim explore /);
  });
});
