// `netfilter-sim cluster connect|reach|rules`, in-process: the DESIGN's JSON shape, the formats,
// directories of snapshot files, the e2e truth table, a node's rules, and the errors (usage: exit 2;
// input: exit 1, naming what and where).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/cluster');
const SNAPSHOT = readFileSync(join(FIXTURES, 'two-nodes.yaml'), 'utf8');
const KUBE_PROXY = readFileSync(join(FIXTURES, 'kube-proxy.rules'), 'utf8');
const FILES = { 'snap.yaml': SNAPSHOT, 'kp.rules': KUBE_PROXY };
const BASE = ['--snapshot', 'snap.yaml', '--kube-proxy', 'none', '--netpol', 'none', '--node-rules', 'worker-1=kp.rules', '--node-rules', 'worker-2=kp.rules'];

async function cli(args: string[], files: Record<string, string> = FILES): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files);
  const code = await run(args, io);
  return { code, out: io.out, err: io.err };
}

describe('cluster connect', () => {
  it('--json prints the connect object of the whole connection, with hops and policy', async () => {
    const r = await cli(['cluster', 'connect', ...BASE, '--from', 'shop/client', '--to', '10.96.5.9:6379', '--json']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const j = JSON.parse(r.out) as Record<string, unknown> & { hops: { namespace: string; in: string | null; out: string | null; steps: { namespace: string }[] }[] };
    expect(Object.keys(j)).toEqual(['outcome', 'address', 'port', 'originalDestination', 'source', 'errno', 'reason', 'policy', 'steps', 'hops']);
    expect(j).toMatchObject({ outcome: 'local', address: '10.244.2.9', port: 6379, originalDestination: null, policy: null });
    expect(j.hops.map((h) => h.namespace)).toEqual(['pod/shop/client', 'node/worker-1', 'node/worker-2', 'pod/db/redis-0']);
    expect(j.hops[1]!.in).toMatch(/^veth[0-9a-f]{8}$/);
    expect(j.hops[1]!.steps.every((s) => s.namespace === 'node/worker-1')).toBe(true);
    expect(j).not.toHaveProperty('trace');
  });

  it('the tree (default), text, json, mermaid and dot formats; -o is their alias', async () => {
    const args = ['cluster', 'connect', ...BASE, '--from', 'shop/client', '--to', 'shop/web-2', '--port', '80'];
    const tree = await cli(args);
    expect(tree.out).toMatch(/^── pod\/shop\/client \(made here → eth0\)\n/);
    expect(tree.out).toMatch(/\naccepted by the listener 0\.0\.0\.0:80 in pod\/shop\/web-2 at 10\.244\.2\.7:80; the app sees the connection from 10\.244\.1\.6:\d+\n$/);
    expect((await cli([...args, '--format', 'text'])).out).toContain('TRACE: filter:FORWARD:policy:5 SYN FORWARD ACCEPT');
    const events = JSON.parse((await cli([...args, '--format', 'json'])).out) as { namespace: string }[];
    expect(events.length).toBeGreaterThan(20);
    expect(events.every((e) => typeof e.namespace === 'string')).toBe(true);
    expect(JSON.parse((await cli([...args, '-o', 'json'])).out)).toMatchObject({ outcome: 'local' });
    expect((await cli([...args, '--format', 'mermaid'])).out).toMatch(/^flowchart LR\n/);
    expect((await cli([...args, '-o', 'dot'])).out).toMatch(/^digraph cluster \{/);
  });

  it('--pod-rules puts rules in a pod\'s own namespace', async () => {
    const files = { ...FILES, 'redis.rules': '*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp --dport 6379 -j REDIRECT --to-ports 6379\nCOMMIT\n' };
    const r = await cli(['cluster', 'connect', ...BASE, '--pod-rules', 'db/redis-0=redis.rules', '--from', 'shop/client', '--to', '10.96.5.9:6379', '--json'], files);
    expect(JSON.parse(r.out)).toMatchObject({ outcome: 'local', address: '10.244.2.9', port: 6379, originalDestination: '10.244.2.9:6379' });
    expect(await cli(['cluster', 'connect', ...BASE, '--pod-rules', 'redis.rules', '--from', 'a/b', '--to', 'x/y'], files)).toMatchObject({ code: 2, err: expect.stringContaining('--pod-rules needs NS/POD=FILE') });
  });

  it('reads a directory of snapshot files', async () => {
    const files = { 'dump/nodes.yaml': SNAPSHOT, 'dump/notes.txt': 'ignored', 'kp.rules': KUBE_PROXY };
    const r = await cli(['cluster', 'connect', '--snapshot', 'dump', '--kube-proxy', 'none', '--netpol', 'none', '--from', 'shop/client', '--to', 'shop/web-1', '--port', '80', '--json'], files);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ outcome: 'local', address: '10.244.1.5' });
  });

  it('prints the snapshot\'s warnings on standard error, naming each object', async () => {
    const r = await cli(['cluster', 'connect', '--snapshot', 'snap.yaml', '--kube-proxy', 'none', '--netpol', 'none', '--from', 'shop/client', '--to', 'shop/web-1', '--port', '80', '--json'], {
      'snap.yaml': `${SNAPSHOT}---\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop}\n`,
    });
    expect(r.code).toBe(0);
    expect(r.err).toBe('netfilter-sim cluster connect: warning: 1 object of kind ConfigMap skipped (shop/settings): the cluster path reads Namespace, Node, Pod, Service, EndpointSlice, NetworkPolicy\n');
  });

  it('usage errors exit 2; bad input exits 1 naming what and where', async () => {
    expect(await cli(['cluster'])).toMatchObject({ code: 2 });
    expect(await cli(['cluster', 'nope'])).toMatchObject({ code: 2, err: expect.stringContaining('unknown cluster command "nope" (connect, reach or rules)') });
    expect(await cli(['cluster', 'connect', ...BASE, '--to', 'x/y'])).toMatchObject({ code: 2, err: expect.stringContaining('--from NS/POD is required') });
    expect(await cli(['cluster', 'connect', ...BASE, '--from', 'a/b', '--to', 'x/y', '--kube-proxy', 'ipvs'])).toMatchObject({ code: 2, err: expect.stringContaining('--kube-proxy is iptables, nftables, none, not "ipvs"') });
    expect(await cli(['cluster', 'connect', ...BASE, '--from', 'a/b', '--to', 'x/y', '--json', '--format', 'dot'])).toMatchObject({ code: 2, err: expect.stringContaining('conflicting output flags') });
    expect(await cli(['cluster', 'connect', '--snapshot', 'missing.yaml', '--from', 'a/b', '--to', 'x/y'])).toMatchObject({ code: 1, err: 'netfilter-sim cluster connect: cannot read missing.yaml: no such file or directory\n' });
    const bad = await cli(['cluster', 'connect', '--snapshot', 'snap.yaml', '--netpol', 'none', '--kube-proxy', 'none', '--from', 'shop/client', '--to', 'x/y'], { 'snap.yaml': SNAPSHOT.replace('podIP: 10.244.2.9', 'podIP: 10.244.2.999') });
    expect(bad).toEqual({ code: 1, out: '', err: 'netfilter-sim cluster connect: snap.yaml:109: Pod db/redis-0: status.podIP: "10.244.2.999" is not an IP address\n' });
    const defaults = await cli(['cluster', 'connect', '--snapshot', 'snap.yaml', '--from', 'shop/client', '--to', 'shop/web-1', '--port', '80']);
    // The defaults (kube-proxy compiled in iptables mode, the reference NetworkPolicy evaluator) run.
    expect(defaults.err).not.toContain('is not available in this build');
    expect(defaults.code).toBe(0);
  });
});

describe('cluster reach', () => {
  it('prints the e2e truth table, and the matrix as JSON', async () => {
    const text = await cli(['cluster', 'reach', ...BASE, '--port', '6379']);
    expect(text.code).toBe(0);
    expect(text.out.split('\n').slice(0, 5)).toEqual([
      '-\tdb/redis-0\tshop/client\tshop/web-1\tshop/web-2',
      'db/redis-0\t.\tX\tX\tX',
      'shop/client\t.\tX\tX\tX',
      'shop/web-1\t.\tX\tX\tX',
      'shop/web-2\t.\tX\tX\tX',
    ]);
    const j = JSON.parse((await cli(['cluster', 'reach', ...BASE, '--port', '6379', '--json'])).out) as { port: number; protocol: string; to: string; pods: string[]; allowed: boolean[][]; why: Record<string, unknown>; classes: number[][]; probes: number };
    expect([j.port, j.protocol, j.to]).toEqual([6379, 'TCP', 'pod']);
    expect(j.allowed[1]).toEqual([true, false, false, false]);
    expect(Object.keys(j.why)).toHaveLength(12);
    expect([j.classes.length, j.probes]).toEqual([4, 16]);
    expect(await cli(['cluster', 'reach', ...BASE])).toMatchObject({ code: 2, err: expect.stringContaining('--port N or --all-ports is required') });
    expect(await cli(['cluster', 'reach', ...BASE, '--port', '80', '--all-ports'])).toMatchObject({ code: 2, err: expect.stringContaining('--port and --all-ports exclude each other') });
  });

  it('--all-ports prints a truth table per range of ports with one answer, and the ranges as JSON', async () => {
    const text = await cli(['cluster', 'reach', ...BASE, '--all-ports', '--namespaces', 'shop']);
    expect(text.code).toBe(0);
    const heads = text.out.split('\n').filter((l) => /^TCP \d/.test(l));
    expect(heads).toEqual(['TCP 1-79:', 'TCP 80:', 'TCP 81-65535:']);
    expect(text.out).toContain('TCP 80:\n-\tshop/client\tshop/web-1\tshop/web-2\nshop/client\tX\t.\t.\n');
    const j = JSON.parse((await cli(['cluster', 'reach', ...BASE, '--all-ports', '--json'])).out) as { ports: string; ranges: { first: number; last: number; allowed: boolean[][] }[]; pods: string[] };
    expect(j.ports).toBe('all');
    expect(j.ranges.map((r) => [r.first, r.last])).toEqual([[1, 79], [80, 80], [81, 6378], [6379, 6379], [6380, 65535]]);
    // 6379: every pod reaches db/redis-0 and nothing else.
    expect(j.ranges[3]!.allowed.map((row) => row.join())).toEqual(j.pods.map(() => j.pods.map((p) => p === 'db/redis-0').join()));
  });
});

describe('cluster rules', () => {
  it('prints what a node holds as iptables-save prints it', async () => {
    const r = await cli(['cluster', 'rules', ...BASE, '--node', 'worker-1']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('-A KUBE-SERVICES -d 10.96.5.9/32 -p tcp -m comment --comment "db/redis:redis cluster IP" -m tcp --dport 6379 -j KUBE-SVC-6QUKJN4S4BNKY3PB\n');
    expect(r.out.startsWith('*filter\n')).toBe(true);
    const none = await cli(['cluster', 'rules', '--snapshot', 'snap.yaml', '--kube-proxy', 'none', '--netpol', 'none', '--node', 'worker-1']);
    expect(none).toEqual({ code: 0, out: '', err: 'netfilter-sim cluster rules: node worker-1 holds no iptables rules\n' });
    expect(await cli(['cluster', 'rules', ...BASE, '--node', 'worker-9'])).toMatchObject({ code: 1, err: expect.stringContaining('no node "worker-9" in the cluster (nodes: worker-1, worker-2)') });
  });

  it('prints the ipsets kube-router keeps with --format ipsets, and says the rules name them', async () => {
    const files = { 'shop.json': readFileSync(resolve(import.meta.dirname, '../../examples/netpol/shop-list.json'), 'utf8') };
    const args = ['cluster', 'rules', '--snapshot', 'shop.json', '--kube-proxy', 'none', '--netpol', 'kube-router', '--node', 'worker-1'];
    const sets = await cli([...args, '--format', 'ipsets'], files);
    expect(sets.code).toBe(0);
    const created = [...sets.out.matchAll(/^create (\S+) /gm)].map((m) => m[1]!);
    expect(created.length).toBeGreaterThan(0);
    // Every set the rules name is created.
    const save = await cli(args, files);
    expect(save.err).toBe('netfilter-sim cluster rules: the rules name ipsets node worker-1 holds: --format ipsets prints them\n');
    const named = new Set([...save.out.matchAll(/--match-set (\S+) /g)].map((m) => m[1]!));
    expect(named.size).toBeGreaterThan(0);
    for (const n of named) expect(created).toContain(n);
    const none = await cli(['cluster', 'rules', '--snapshot', 'shop.json', '--kube-proxy', 'none', '--netpol', 'reference', '--node', 'worker-1', '--format', 'ipsets'], files);
    expect(none).toEqual({ code: 0, out: '', err: 'netfilter-sim cluster rules: node worker-1 holds no ipsets (kube-router\'s NetworkPolicy enforcer keeps them: --netpol kube-router)\n' });
  });
});
