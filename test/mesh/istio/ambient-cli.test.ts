import { describe, expect, it } from 'vitest';
import { runCompileIstio, runCompileIstioAmbient, runCompileIstioCni } from '../../../src/cli/commands/compile-istio.js';
import { memoryIO } from '../../../src/cli/io.js';
import { ambientEnrolment, ambientPodOverrides, compileIstioAmbient } from '../../../src/compile/istio/ambient.js';
import { compileIstioCni } from '../../../src/compile/istio/cni.js';
import { compileIstio } from '../../../src/compile/istio/compile.js';
import { istioInitArgsForPod } from '../../../src/compile/istio/inject.js';
import { parseIstioIptablesArgs } from '../../../src/compile/istio/args.js';
import { podFromObject, namespaceFromObject } from '../../../src/compile/pod.js';
import { ambientCases, ambientFixture } from './ambient-vectors.js';
import { manifestForCniCase } from './vectors.js';

async function run(f: typeof runCompileIstioAmbient, args: string[], files: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const io = memoryIO(files, '');
  const code = await f(args, io);
  return { code, out: io.out, err: io.err };
}

const pod = (meta: Record<string, unknown>, spec: Record<string, unknown> = {}, ips = ['10.0.0.2']): string =>
  JSON.stringify({ kind: 'Pod', metadata: { name: 'web', namespace: 'shop', ...meta }, spec: { containers: [{ name: 'app' }], ...spec }, status: { podIPs: ips.map((ip) => ({ ip })) } });

const byName = Object.fromEntries(ambientCases('iptables'));
const nftByName = Object.fromEntries(ambientCases('nftables'));

describe('netfilter-sim compile istio-ambient', () => {
  it('reproduces the upstream goldens from the command line (the tests use another IPv6 probe address)', async () => {
    const e9 = 'e9ac:1e77:90ca:399f:4d6d:ece2:2f9b:3164';
    expect((await run(runCompileIstioAmbient, ['--redirect-dns', '--format', 'commands'])).out).toBe(`${ambientFixture(byName['default']!.file)}\n`);
    expect((await run(runCompileIstioAmbient, ['--redirect-dns', '--ipv6', '--probe-snat6', e9, '--format', 'commands'])).out).toBe(`${ambientFixture(byName['default_ipv6']!.file)}\n`);
    expect((await run(runCompileIstioAmbient, ['--ingress', '--format', 'commands'])).out).toBe(`${ambientFixture(byName['ingress']!.file)}\n`);
    expect((await run(runCompileIstioAmbient, ['--pod-dns', 'disabled', '--redirect-dns', '--format', 'commands'])).out).toBe(`${ambientFixture(byName['dns_pod_disabled_and_on_globally']!.file)}\n`);
    expect((await run(runCompileIstioAmbient, ['--host', '--format', 'commands'])).out).toBe(`${ambientFixture(byName['hostprobe']!.file)}\n`);
    expect((await run(runCompileIstioAmbient, ['--host', '--nftables', '--kubelet-uid', '1000', '--format', 'commands'])).out).toBe(ambientFixture(nftByName['hostprobe']!.file));
    const vi = await run(runCompileIstioAmbient, ['--virtual-interfaces', 'fake1s0f0,fake1s0f1', '--nftables', '--ipv6', '--probe-snat6', e9, '--format', 'commands']);
    expect(vi.out).toBe(ambientFixture(nftByName['virtual_interfaces_ipv6']!.file));
  });

  it('prints the routing the agent adds in the pod on stderr', async () => {
    const r = await run(runCompileIstioAmbient, ['--ipv6']);
    expect(r.err).toContain('# also run in the pod: ip -4 rule add fwmark 0x111/0xfff pref 32764 lookup 100');
    expect(r.err).toContain('# also run in the pod: ip -6 route replace local ::/0 dev lo table 100');
    expect(r.out.startsWith('*mangle\n')).toBe(true);
  });

  it('reads the pod-level settings from the Pod annotations', async () => {
    const annotated = pod({
      labels: { 'istio.io/dataplane-mode': 'ambient' },
      annotations: { 'ambient.istio.io/bypass-inbound-capture': 'true', 'istio.io/reroute-virtual-interfaces': ' fake1s0f0, fake1s0f1 ', 'ambient.istio.io/dns-capture': 'false' },
    });
    const r = await run(runCompileIstioAmbient, ['--pod', 'p.json', '--redirect-dns', '--format', 'commands'], { 'p.json': annotated });
    expect(r.code).toBe(0);
    expect(r.out).toContain('-A ISTIO_PRERT -i fake1s0f0 -p tcp -j REDIRECT --to-ports 15001');
    expect(r.out).not.toContain('--to-ports 15006');
    expect(r.out).not.toContain('15053');
  });

  it('a pod the agent does not enrol exits 0, says why, prints nothing', async () => {
    const r = await run(runCompileIstioAmbient, ['--pod', 'p.json'], { 'p.json': pod({ labels: { app: 'web' } }) });
    expect(r).toEqual({ code: 0, out: '', err: expect.stringMatching(/does not enrol this pod in ambient: neither the pod nor its namespace has label istio.io\/dataplane-mode: ambient/) as unknown as string });
  });

  it('lists nft output as nft list ruleset; refuses unknown versions and the nftables backend before 1.28', async () => {
    const listed = await run(runCompileIstioAmbient, ['--nftables']);
    expect(listed.code).toBe(0);
    expect(listed.out.startsWith('table inet istio-ambient-nat {\n')).toBe(true);
    expect((await run(runCompileIstioAmbient, ['--upstream-version', '1.40'])).err).toMatch(/unknown Istio version "1.40"/);
    expect((await run(runCompileIstioAmbient, ['--nftables', '--format', 'commands', '--upstream-version', '1.27'])).err).toMatch(/from Istio 1.28/);
    expect((await run(runCompileIstioAmbient, ['--probe-snat', 'nonsense'])).err).toMatch(/not an IPv4 address/);
    expect((await run(runCompileIstioAmbient, ['--pod-dns', 'maybe'])).code).toBe(2);
  });
});

describe('ambient enrolment (istio-cni enablement selectors)', () => {
  const ns = (labels: Record<string, string>): ReturnType<typeof namespaceFromObject> => namespaceFromObject({ kind: 'Namespace', metadata: { name: 'shop', labels } });
  const p = (meta: Record<string, unknown>, spec: Record<string, unknown> = {}): ReturnType<typeof podFromObject> => podFromObject(JSON.parse(pod(meta, spec)));
  it('pod label, namespace label, and the none opt-out', () => {
    expect(ambientEnrolment(p({ labels: { 'istio.io/dataplane-mode': 'ambient' } })).enrolled).toBe(true);
    expect(ambientEnrolment(p({}), { namespace: ns({ 'istio.io/dataplane-mode': 'ambient' }) }).enrolled).toBe(true);
    expect(ambientEnrolment(p({ labels: { 'istio.io/dataplane-mode': 'none' } }), { namespace: ns({ 'istio.io/dataplane-mode': 'ambient' }) }).reason).toMatch(/opts out/);
    expect(ambientEnrolment(p({})).enrolled).toBe(false);
  });
  it('never host-network pods, sidecar pods, ztunnel, or excluded namespaces', () => {
    const amb = { labels: { 'istio.io/dataplane-mode': 'ambient' } };
    expect(ambientEnrolment(p(amb, { hostNetwork: true })).reason).toMatch(/host network/);
    expect(ambientEnrolment(p({ ...amb, annotations: { 'sidecar.istio.io/status': '{}' } })).reason).toMatch(/sidecar/);
    expect(ambientEnrolment(p({ ...amb, namespace: 'kube-system' })).reason).toMatch(/excluded/);
    expect(ambientEnrolment(p({ ...amb, namespace: 'istio-system', labels: { ...amb.labels, app: 'ztunnel' } })).reason).toMatch(/ztunnel/);
  });
  it('boolean annotations that do not parse are ignored with a warning', () => {
    const w: string[] = [];
    expect(ambientPodOverrides(p({ annotations: { 'ambient.istio.io/bypass-inbound-capture': 'yes' } }), w).ingressMode).toBe(false);
    expect(w[0]).toMatch(/only boolean values are supported/);
  });
});

describe('Istio release differences (--upstream-version)', () => {
  it('a bad -i/-x CIDR: skipped with a warning up to 1.26, fatal from 1.27', () => {
    expect(compileIstio({ outboundIPRangesInclude: '10.0.0.0/8,bogus' }, { upstreamVersion: '1.26.3' }).warnings.join()).toMatch(/bug compatibility/);
    expect(() => compileIstio({ outboundIPRangesInclude: '10.0.0.0/8,bogus' }, { upstreamVersion: '1.27.0' })).toThrow(/bogus/);
    expect(() => compileIstio({ outboundIPRangesExclude: 'bogus' })).toThrow(/bogus/);
  });
  it('--force-iptables-binary: unknown before 1.28, validated from 1.28', () => {
    expect(() => compileIstio({ forceIptablesBinary: 'nft' }, { upstreamVersion: '1.27' })).toThrow(/unknown flag: --force-iptables-binary/);
    expect(compileIstio({ forceIptablesBinary: 'legacy' }, { upstreamVersion: '1.28' }).restore).toHaveLength(1);
    expect(() => compileIstio({ forceIptablesBinary: 'iptables' }, { upstreamVersion: '1.28' })).toThrow(/invalid FORCE_IPTABLES_BINARY value "iptables"/);
  });
  it('--iptables-trace-logging: accepted (and writing nothing) up to 1.25, an unknown flag from 1.26', async () => {
    const base = ['-b', '*', '-i', '*', '--format', 'restore'];
    const old = await run(runCompileIstio, [...base, '--iptables-trace-logging', '--upstream-version', '1.25']);
    const now = await run(runCompileIstio, [...base, '--upstream-version', '1.25']);
    expect(old.code).toBe(0);
    expect(old.out).toBe(now.out);
    const removed = await run(runCompileIstio, [...base, '--iptables-trace-logging', '--upstream-version', '1.26']);
    expect(removed.code).toBe(2);
    expect(removed.err).toMatch(/iptables-trace-logging/);
  });
  it('istio-cni and traffic.sidecar.istio.io/kubevirtInterfaces: read in 1.24, ignored 1.25.0–1.27.1, read again from 1.27.2', () => {
    const c = { file: '', pod_annotations: { 'sidecar.istio.io/status': '{}', 'traffic.sidecar.istio.io/kubevirtInterfaces': 'eth9' } };
    const podWith = podFromObject(manifestForCniCase(c));
    const has = (v: string): boolean => compileIstioCni({ pod: podWith, upstreamVersion: v }).restore[0]!.text.includes('-i eth9');
    expect(has('1.24')).toBe(true);
    expect(has('1.25.0')).toBe(false);
    expect(has('1.27.1')).toBe(false);
    expect(compileIstioCni({ pod: podWith, upstreamVersion: '1.26' }).warnings.join()).toMatch(/has no effect in Istio 1.26/);
    expect(has('1.27.2')).toBe(true);
    expect(has('1.31')).toBe(true);
  });
  it('ambient: ingress-mode pods get the mangle CONNMARK rule from 1.29 (not up to 1.28)', () => {
    const text = (v: string): string => compileIstioAmbient({ pod: { ingressMode: true }, upstreamVersion: v }).restore[0]!.text;
    expect(text('1.28')).not.toContain('CONNMARK --set-xmark');
    expect(text('1.29')).toContain('-A ISTIO_PRERT -m mark --mark 0x539/0xfff -j CONNMARK --set-xmark 0x111/0xfff');
  });
  it('ambient host rule: appended in 1.25, inserted first from 1.26', () => {
    expect(compileIstioAmbient({ host: true, upstreamVersion: '1.25' }).restore[0]!.text).toContain('-A POSTROUTING -j ISTIO_POSTRT');
    expect(compileIstioAmbient({ host: true, upstreamVersion: '1.26' }).restore[0]!.text).toContain('-I POSTROUTING 1 -j ISTIO_POSTRT');
    expect(() => compileIstioAmbient({ upstreamVersion: '1.24' })).toThrow(/1.25/);
  });
  it('ambient nftables: 1.28.0 wrote the IPv6 rules on IPv4 pods too, 1.28.1 on did not', () => {
    const nft = (v: string): string => compileIstioAmbient({ config: { nativeNftables: true }, upstreamVersion: v }).nft;
    expect(nft('1.28.0')).toContain('ip6 daddr != ::1/128');
    expect(nft('1.28.1')).not.toContain('ip6');
  });
  it('--native-nftables exists from 1.27; unknown releases are refused', () => {
    expect(() => compileIstio({ nativeNftables: true }, { upstreamVersion: '1.26' })).toThrow(/1.27/);
    expect(compileIstio({ nativeNftables: true }, { upstreamVersion: '1.27' }).nft).toContain('add table inet istio-proxy-nat');
    expect(() => compileIstio({}, { upstreamVersion: '1.32.0' })).toThrow(/unknown Istio version "1.32.0"/);
  });
});

describe('native nftables through istio-cni and the injector', () => {
  it("istio-cni's native_nftables writes the nft transaction for a sidecar pod", async () => {
    const manifest = JSON.stringify(manifestForCniCase({ file: '', pod_annotations: { 'sidecar.istio.io/status': '{}' } }));
    const r = await run(runCompileIstioCni, ['--pod', 'p.json', '--native-nftables', '--format', 'commands'], { 'p.json': manifest });
    expect(r.code).toBe(0);
    expect(r.out).toContain('add rule inet istio-proxy-nat istio-inbound meta l4proto tcp tcp dport 15020 counter return');
    expect(r.out).toContain('add rule inet istio-proxy-nat istio-output tcp dport 15020 counter return');
  });
  it('global.nativeNftables adds --native-nftables to istio-init; pilot.cni.enabled makes it validate only', () => {
    const p = podFromObject({ kind: 'Pod', metadata: { name: 'w' }, spec: { containers: [{ name: 'app' }] } });
    const argv = istioInitArgsForPod(p, { nativeNftables: true })!;
    expect(argv.slice(-1)).toEqual(['--native-nftables']);
    expect(compileIstio(parseIstioIptablesArgs(argv)).nft).toContain('add table inet istio-proxy-nat');
    expect(istioInitArgsForPod(p, { cniEnabled: true })!.slice(-2)).toEqual(['--run-validation', '--skip-rule-apply']);
    expect(istioInitArgsForPod(p, { forceApplyIptables: true })!.slice(-1)).toEqual(['--force-apply']);
  });
});
