import { describe, expect, it } from 'vitest';
import { runCompileIstio, runCompileIstioCni } from '../../../src/cli/commands/compile-istio.js';
import { memoryIO } from '../../../src/cli/io.js';
import { INJECTED_ISTIO_INIT_ARGS } from '../../../src/compile/istio/defaults.js';
import { istioInitArgsForPod } from '../../../src/compile/istio/inject.js';
import { readPod } from '../../../src/compile/pod.js';
import { NetfilterSimError } from '../../../src/model/errors.js';
import { casesIn, type CniCase, fixture, manifestForCniCase, type SidecarCase } from './vectors.js';

async function istio(args: string[], files: Record<string, string> = {}, stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files, stdin);
  const code = await runCompileIstio(args, io);
  return { code, out: io.out, err: io.err };
}

async function cni(args: string[], files: Record<string, string> = {}, stdin = ''): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files, stdin);
  const code = await runCompileIstioCni(args, io);
  return { code, out: io.out, err: io.err };
}

describe('netfilter-sim compile istio', () => {
  it('--format restore prints the injected default', async () => {
    const r = await istio([...INJECTED_ISTIO_INIT_ARGS, '--format', 'restore']);
    expect(r).toEqual({ code: 0, out: fixture('derived/injected-sidecar-default.restore'), err: '' });
  });

  it('--format commands with DNS servers, IPv6 and the uid/gid lists reproduces dns-uid-gid', async () => {
    const c = Object.fromEntries(casesIn<SidecarCase>('sidecar-capture'))['dns-uid-gid']!;
    const r = await istio([...c.equivalent_cli, '--dns-servers', '127.0.0.53,::127.0.0.53', '--ipv6', '--format=commands']);
    expect(r.out).toBe(fixture(c.file));
    expect(r.code).toBe(0);
  });

  it('reads DNS servers from a resolv.conf, and environment-only settings from --env', async () => {
    const r = await istio(
      ['-u', '3,4', '-g', '1,2', '-i', '9.9.0.0/16', '-x', '1.1.0.0/16', '--redirect-dns', '--resolv-conf', 'resolv.conf', '--format', 'restore'],
      { 'resolv.conf': 'search default.svc.cluster.local\nnameserver 127.0.0.53\noptions ndots:5\n' },
    );
    expect(r.out).toBe(fixture('sidecar-capture/ip-range.golden').replace(/^(ip6?tables-save\n)+/, '').replace(/iptables-save\n$/, ''));
    const g = await istio(['--env', 'ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE=888,ftp', '--format', 'restore']);
    expect(g.out).toContain('-A ISTIO_OUTPUT -m owner --gid-owner ftp -j RETURN');
  });

  it('decides IPv6 from --pod-ips as upstream (first address, or any with --dual-stack)', async () => {
    expect((await istio(['--pod-ips', '10.0.0.2,fd00::2', '--format', 'restore'])).out).not.toContain('::1/128');
    expect((await istio(['--pod-ips', '10.0.0.2,fd00::2', '--dual-stack', '--format', 'restore'])).out).toContain('::1/128');
  });

  it('does not mistake a flag value for one of its own options', async () => {
    // -i takes "--format" as its value: a bad CIDR, fatal since 1.27, skipped with a warning before.
    const r = await istio(['-i', '--format', '--format', 'restore']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/--format/);
    const old = await istio(['-i', '--format', '--format', 'restore', '--upstream-version', '1.26']);
    expect(old.code).toBe(0);
    expect(old.err).toMatch(/Ignoring error.*--format/);
  });

  it('--upstream-version reproduces an older release', async () => {
    const r = await istio([...INJECTED_ISTIO_INIT_ARGS, '--upstream-version', '1.24', '--format', 'restore']);
    expect(r.out).toContain('-A OUTPUT -p tcp -j ISTIO_OUTPUT\n');
  });

  it('--format json prints the loaded rule sets', async () => {
    const r = await istio(['--ipv6', '--format', 'json']);
    // No warning; the routing istio-iptables adds (::6 on lo) is named on stderr.
    expect(r.err).toBe('# also run in the pod: ip -6 addr add ::6/128 dev lo\n');
    expect((JSON.parse(r.out) as { family: number }[]).map((x) => x.family)).toEqual([4, 6]);
  });

  it('--help shows usage and examples', async () => {
    const r = await istio(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Usage: netfilter-sim compile istio/);
    expect(r.out).toMatch(/Examples:/);
  });

  it.each([
    [['--format', 'yaml'], /unknown format "yaml"/],
    [['--bogus'], /unknown flag: --bogus/],
    [['-p'], /flag needs an argument/],
    [['--env', 'NOPE'], /NAME=VALUE/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const r = await istio(args);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err).toMatch(/--help/);
  });

  it.each([
    [['-x', '*'], /invalid value for OUTBOUND_IP_RANGES_EXCLUDE/],
    [['--env', 'ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR=10.0.0.1/32'], /IPv4 loopback/],
    [['--native-nftables', '--upstream-version', '1.26'], /native-nftables exists from Istio 1.27/],
    [['--drop-invalid', '--upstream-version', '1.12'], /unknown flag: --drop-invalid \(added in Istio 1.13/],
    [['--upstream-version', '1.11'], /oldest release known here is 1.12/],
    [['--resolv-conf', '/nonexistent/resolv.conf'], /cannot read/],
  ])('%j is an error (exit 1)', async (args, message) => {
    const r = await istio(args);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(message);
    expect(r.out).toBe('');
  });
});

describe('netfilter-sim compile istio-cni', () => {
  const tproxy = Object.fromEntries(casesIn<CniCase>('cni-plugin'))['custom-uid-tproxy']!;

  it('compiles a pod manifest from a file or standard input', async () => {
    const pod = JSON.stringify(manifestForCniCase(tproxy));
    expect((await cni(['--pod', 'pod.json', '--format', 'restore'], { 'pod.json': pod })).out).toBe(fixture(tproxy.file));
    expect((await cni(['--pod', '-', '--format', 'restore'], {}, pod)).out).toBe(fixture(tproxy.file));
  });

  it('exits 0 for a pod istio-cni leaves alone, saying why on stderr (as compile linkerd-cni)', async () => {
    const r = await cni(['--pod', 'pod.yaml'], { 'pod.yaml': 'kind: Pod\nspec:\n  containers:\n  - name: app\n' });
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/does not program this pod: the pod has no istio-proxy container/);
  });

  it('exits 1 for a bad annotation, 2 without --pod', async () => {
    const bad = 'kind: Pod\nmetadata:\n  annotations:\n    sidecar.istio.io/status: "{}"\n    sidecar.istio.io/interceptionMode: NONE\nspec:\n  containers:\n  - name: istio-proxy\n';
    const r = await cni(['--pod', 'p.yaml'], { 'p.yaml': bad });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/interceptionMode invalid: NONE/);
    expect((await cni([])).code).toBe(2);
    expect((await cni(['--help'])).out).toMatch(/Usage: netfilter-sim compile istio-cni --pod FILE/);
  });
});

describe('netfilter-sim compile istio --pod (the injector) and --set (chart values)', () => {
  const pod = JSON.stringify({
    apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', annotations: { 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '10.9.0.0/16' } },
    spec: { containers: [{ name: 'web' }, { name: 'istio-proxy', securityContext: { runAsUser: 1337 } }] },
    status: { podIPs: [{ ip: '10.0.0.2' }] },
  });

  it('compiles the istio-init args the injector writes, the pod annotations over the chart values', async () => {
    const r = await istio(['--pod', 'pod.json', '--format', 'restore'], { 'pod.json': pod });
    expect(r.code).toBe(0);
    expect(r.out).toContain('-A ISTIO_OUTPUT -d 10.9.0.0/16 -j RETURN\n');
    const withSet = await istio(['--pod', 'pod.json', '--set', 'global.proxy.excludeOutboundPorts=3306', '--format', 'restore'], { 'pod.json': pod });
    expect(withSet.out).toContain('-A ISTIO_OUTPUT -p tcp --dport 3306 -j RETURN\n-A ISTIO_OUTPUT -p udp --dport 3306 -j RETURN\n');
  });

  it('--set global.nativeNftables=true gives the native nftables rules', async () => {
    const r = await istio(['--pod', 'pod.json', '--set', 'global.nativeNftables=true', '--format', 'commands'], { 'pod.json': pod });
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toBe('add table inet istio-proxy-nat');
    expect(r.out).toContain('ip daddr 10.9.0.0/16 counter return');
  });

  it('--set pilot.cni.enabled=true: the init container only validates, nothing is written', async () => {
    const r = await istio(['--pod', 'pod.json', '--set', 'pilot.cni.enabled=true', '--format', 'restore'], { 'pod.json': pod });
    expect(r.code).toBe(0);
    expect(r.out).toBe('');
  });

  it('interception mode NONE: no istio-init, exits 0 with the reason on stderr as a skipped pod', async () => {
    const none = JSON.parse(pod) as { metadata: { annotations: Record<string, string> } };
    none.metadata.annotations['sidecar.istio.io/interceptionMode'] = 'NONE';
    const r = await istio(['--pod', 'pod.json'], { 'pod.json': JSON.stringify(none) });
    expect(r).toMatchObject({ code: 0, out: '' });
    expect(r.err).toMatch(/adds no istio-init to this pod/);
  });

  it.each([
    ['spec.hostNetwork', (p: Record<string, any>) => { p.spec.hostNetwork = true; }, 'it uses the host network (spec.hostNetwork: true)'],
    ['the inject label', (p: Record<string, any>) => { p.metadata.labels = { 'sidecar.istio.io/inject': 'false' }; }, 'it has sidecar.istio.io/inject: "false" (label)'],
    ['the inject annotation', (p: Record<string, any>) => { p.metadata.annotations['sidecar.istio.io/inject'] = 'false'; }, 'it has sidecar.istio.io/inject: "false" (annotation)'],
    ['an ignored namespace', (p: Record<string, any>) => { p.metadata.namespace = 'kube-system'; }, 'namespace kube-system is one the injector ignores'],
  ])('a pod the injector skips (%s): exit 0, nothing on stdout, the reason on stderr', async (_what, change, why) => {
    const p = JSON.parse(pod) as Record<string, any>;
    change(p);
    const r = await istio(['--pod', 'pod.json'], { 'pod.json': JSON.stringify(p) });
    expect(r).toMatchObject({ code: 0, out: '' });
    expect(r.err).toContain(`netfilter-sim compile istio: the sidecar injector skips pod web: ${why}`);
  });

  it('the label wins over the annotation; the library refuses with NOT_INJECTED', async () => {
    const p = JSON.parse(pod) as Record<string, any>;
    p.metadata.labels = { 'sidecar.istio.io/inject': 'true' };
    p.metadata.annotations['sidecar.istio.io/inject'] = 'false';
    expect((await istio(['--pod', 'pod.json', '--format', 'restore'], { 'pod.json': JSON.stringify(p) })).out).toContain('-A ISTIO_OUTPUT');
    p.spec.hostNetwork = true;
    let code: string | undefined;
    try {
      istioInitArgsForPod(readPod(JSON.stringify(p)));
    } catch (e) {
      code = e instanceof NetfilterSimError ? e.diagnostics[0]!.code : undefined;
    }
    expect(code).toBe('NOT_INJECTED');
  });

  it('an ambient or Linkerd pod is injected (the injector checks neither), with a warning saying what follows', async () => {
    const p = JSON.parse(pod) as Record<string, any>;
    p.metadata.labels = { 'istio.io/dataplane-mode': 'ambient' };
    p.spec.containers.push({ name: 'linkerd-proxy' });
    const r = await istio(['--pod', 'pod.json', '--format', 'restore'], { 'pod.json': JSON.stringify(p) });
    expect(r.code).toBe(0);
    expect(r.out).toContain('-A ISTIO_OUTPUT');
    expect(r.err).toContain("istio-cni's ambient agent then leaves it alone");
    expect(r.err).toContain("has Linkerd's linkerd-proxy container, which the sidecar injector does not check");
  });

  it.each([
    [['--pod', 'pod.json', '--set', 'global.nope=1'], /unknown istiod chart value "global.nope" \(known: meshConfig/],
    [['--pod', 'pod.json', '--set', 'global.nativeNftables=yes'], /expected true or false/],
    [['--pod', 'pod.json', '--set', 'novalue'], /KEY=VALUE/],
    [['--set', 'global.nativeNftables=true'], /--set goes with --pod/],
    [['--pod', 'pod.json', '-b', '*'], /cannot be used together/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const r = await istio(args, { 'pod.json': pod });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});
