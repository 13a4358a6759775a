/**
 * `netfilter-sim mesh`: exit codes, formats, flags.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runMesh } from '../../../src/cli/commands/mesh.js';
import { memoryIO } from '../../../src/cli/io.js';

const fx = (name: string): string => fileURLToPath(new URL(`../../fixtures/pods/${name}`, import.meta.url));

async function mesh(args: string[], files: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files);
  const code = await runMesh(args, io);
  return { code, out: io.out, err: io.err };
}

describe('netfilter-sim mesh', () => {
  it('runs the built-in pair without any pod', async () => {
    const r = await mesh(['linkerd']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('verdict: meshed');
    expect(r.err).toBe('');
  });

  it('--json prints one object; exit 0 whatever the verdict', async () => {
    const r = await mesh(['linkerd', '--client', fx('linkerd-web.yaml'), '--server', fx('linkerd-api.yaml'), '--cni', '--native-sidecars', 'off', '--phase', 'init:fetch-config', '--json']);
    expect(r.code).toBe(0);
    const o = JSON.parse(r.out) as { verdict: string; hops: unknown[]; diagnosis: string[] };
    expect(o.verdict).toBe('refused');
    expect(o.diagnosis.join('\n')).toContain('linkerd-proxy is not running at phase init:fetch-config');
  });

  it('--uid, --service, --proto and --format', async () => {
    const asProxy = await mesh(['linkerd', '--client', fx('linkerd-web.yaml'), '--server', fx('linkerd-api.yaml'), '--cni', '--native-sidecars', 'off', '--phase', 'init:fetch-config', '--uid', '2102', '--format', 'json']);
    expect(JSON.parse(asProxy.out).verdict).toBe('client-bypass');
    const svc = await mesh(['istio', '--dst', '10.96.0.20:80', '--service', '10.96.0.20:80=10.0.0.2:8080', '--json']);
    expect(JSON.parse(svc.out).verdict).toBe('meshed');
    const udp = await mesh(['istio', '--client', fx('istio-web.yaml'), '--server', fx('istio-api.yaml'), '--dst', '10.0.1.5:5353', '--proto', 'udp', '--json']);
    expect(JSON.parse(udp.out).verdict).toBe('plaintext');
    expect((await mesh(['linkerd', '--format', 'mermaid'])).out.startsWith('sequenceDiagram\n')).toBe(true);
    expect((await mesh(['linkerd', '--format', 'dot'])).out.startsWith('digraph mesh {\n')).toBe(true);
  });

  it('--cni-not-ready and --namespace', async () => {
    const r = await mesh(['linkerd', '--client', fx('linkerd-web.yaml'), '--server', fx('linkerd-api.yaml'), '--cni', '--cni-not-ready', '--json']);
    const o = JSON.parse(r.out) as { verdict: string; diagnosis: string[] };
    expect(o.verdict).toBe('plaintext');
    expect(o.diagnosis.join('\n')).toContain('exits with 95');
    const ns = await mesh(['linkerd', '--client', fx('plain-web.yaml'), '--server', fx('linkerd-api.yaml'), '--namespace', fx('namespace-linkerd.yaml'), '--dst', '10.0.1.5:3306', '--json']);
    expect(JSON.parse(ns.out).verdict).toBe('client-bypass');
  });

  it('--help explains the flags with examples', async () => {
    const r = await mesh(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: netfilter-sim mesh linkerd|istio');
    expect(r.out).toContain('--native-sidecars on|off');
    expect(r.out).toContain('Examples:');
  });

  it.each([
    [[], 'which mesh?'],
    [['consul'], 'unknown mesh "consul"'],
    [['linkerd', '--native-sidecars', 'maybe'], '--native-sidecars is on or off'],
    [['linkerd', '--phase', 'later'], '--phase is app or init:NAME'],
    [['linkerd', '--format', 'svg'], '--format is text, json, mermaid, dot'],
    [['linkerd', '--proto', 'sctp'], '--proto is tcp or udp'],
    [['linkerd', '--uid', 'root'], '--uid needs a number'],
    [['linkerd', '--bogus'], 'Unknown option'],
  ])('usage error %j: exit 2', async (args, message) => {
    const r = await mesh(args as string[]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it('bad input: exit 1 with the file named', async () => {
    const bad = await mesh(['linkerd', '--client', 'bad.yaml'], { 'bad.yaml': 'kind: Pod\nspec: [\n' });
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^bad\.yaml:\d+:\d+: /);
    const missing = await mesh(['linkerd', '--client', '/nonexistent/pod.yaml']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('cannot read /nonexistent/pod.yaml');
    const phase = await mesh(['linkerd', '--phase', 'init:nope']);
    expect(phase.code).toBe(1);
    expect(phase.err).toContain('has no init container "nope"');
    const dst = await mesh(['linkerd', '--dst', '10.0.1.5']);
    expect(dst.code).toBe(1);
    const svc = await mesh(['linkerd', '--service', '10.96.0.10:80']);
    expect(svc.code).toBe(1);
    expect(svc.err).toContain('a service is VIP:PORT=ADDR:PORT');
  });
});

describe('netfilter-sim mesh istio: ambient flags', () => {
  it('labels make pods ambient; --ambient does it for unlabelled pods, or for one side', async () => {
    const labelled = await mesh(['istio', '--client', fx('ambient-web.yaml'), '--server', fx('ambient-api.yaml'), '--json']);
    expect(JSON.parse(labelled.out).verdict).toBe('meshed');
    const forced = await mesh(['istio', '--client', fx('plain-web.yaml'), '--server', fx('plain-api.yaml'), '--ambient', '--json']);
    const o = JSON.parse(forced.out) as { verdict: string; hops: { to: string }[] };
    expect(o.verdict).toBe('meshed');
    expect(o.hops.map((h) => h.to)).toEqual(['127.0.0.1:15001', '10.0.1.5:15008', '10.0.1.5:15008', '10.0.1.5:8080']);
    const serverOnly = await mesh(['istio', '--client', fx('plain-web.yaml'), '--ambient', 'server', '--server', fx('plain-api.yaml'), '--json']);
    expect(JSON.parse(serverOnly.out).verdict).toBe('client-bypass');
    const ns = await mesh(['istio', '--client', fx('plain-web.yaml'), '--server', fx('plain-api.yaml'), '--namespace', fx('namespace-ambient.yaml'), '--native-nftables', '--json']);
    expect(JSON.parse(ns.out).verdict).toBe('meshed');
  });

  it('--dns-capture, --kubelet, --host-rules, --mtls, --so-mark', async () => {
    const base = ['istio', '--client', fx('ambient-web.yaml'), '--server', fx('ambient-api.yaml')];
    const dnsOff = await mesh([...base, '--proto', 'udp', '--dst', '10.96.0.10:53', '--dns-capture', 'off', '--json']);
    expect(JSON.parse(dnsOff.out).verdict).toBe('plaintext');
    const dnsOn = await mesh([...base, '--proto', 'udp', '--dst', '10.96.0.10:53', '--json']);
    expect(JSON.parse(dnsOn.out).hops[0].to).toBe('127.0.0.1:15053');
    const probe = await mesh([...base, '--kubelet', '--json']);
    expect(JSON.parse(probe.out).verdict).toBe('plaintext');
    const noRule = await mesh([...base, '--kubelet', '--host-rules', 'off', '--mtls', 'strict', '--json']);
    expect(JSON.parse(noRule.out).verdict).toBe('refused');
    const marked = await mesh([...base, '--so-mark', '0x539', '--json']);
    expect(JSON.parse(marked.out).verdict).toBe('client-bypass');
  });

  it('--istio-version decides how a sidecar sends to an ambient Service endpoint', async () => {
    const base = ['istio', '--client', fx('istio-web.yaml'), '--server', fx('ambient-api.yaml'), '--dst', '10.96.0.20:80', '--service', '10.96.0.20:80=10.0.1.5:8080', '--mtls', 'strict', '--json'];
    const now = JSON.parse((await mesh(base)).out) as { verdict: string; hops: { to: string }[] };
    expect(now.verdict).toBe('meshed');
    expect(now.hops[1]!.to).toBe('10.0.1.5:15008');
    const before = JSON.parse((await mesh([...base, '--istio-version', '1.21'])).out) as { verdict: string; hops: { to: string }[] };
    expect(before.verdict).toBe('refused');
    expect(before.hops[2]!.to).toBe('10.0.1.5:15006');
    const bad = await mesh([...base, '--istio-version', '2.0']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('unknown Istio version "2.0"');
    const l = await mesh(['linkerd', '--istio-version', '1.22']);
    expect(l.code).toBe(2);
    expect(l.err).toContain('--istio-version is for Istio (mesh istio)');
  });

  it('bad values are usage errors (exit 2); the Istio flags are refused for Linkerd', async () => {
    for (const args of [['--dns-capture', 'yes'], ['--host-rules', '1'], ['--mtls', 'STRICT'], ['--so-mark', 'x']]) {
      const r = await mesh(['istio', ...args]);
      expect(r.code).toBe(2);
      expect(r.err).toContain(`--${args[0]!.slice(2)} is`);
    }
    const l = await mesh(['linkerd', '--ambient']);
    expect(l.code).toBe(2);
    expect(l.err).toContain('--ambient is for Istio (mesh istio)');
  });
});
