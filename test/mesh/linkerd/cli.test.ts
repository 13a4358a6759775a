/**
 * `netfilter-sim compile linkerd` and `compile linkerd-cni`, run in-process.
 */
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../../src/cli/io.js';
import { runCompileLinkerd, runCompileLinkerdCni } from '../../../src/cli/commands/compile-linkerd.js';
import { cniCases, cniInput, expectedCommands, expectedSave, proxyInitCases } from './fixtures.js';

describe('compile linkerd --format commands', () => {
  it.each(proxyInitCases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const files: Record<string, string> = c.existing !== undefined ? { 'existing.txt': c.existing } : {};
    const io = memoryIO(files);
    const extra = c.existing !== undefined ? ['--existing', 'existing.txt'] : [];
    const code = await runCompileLinkerd([...c.args!, '--format', 'commands', ...extra], io);
    const e = c.expectedError;
    // proxy-init's own log lines (dropped port entries) come first, prefixed.
    const err = io.err.replace(/^proxy-init: invalid port configuration of .*\n/gm, '');
    if (!e) {
      expect([code, io.out, err]).toEqual([0, expectedCommands(c), '']);
    } else if (e.stage === 'config') {
      expect([code, io.out, err]).toEqual([1, '', `${e.proxyInitStderrFirstLine}\n`]);
    } else {
      expect([code, io.out]).toEqual([1, expectedCommands(c)]);
      expect(err).toBe(`${e.stderr}${e.proxyInitStderrFirstLine}\n`);
    }
  });
});

describe('compile linkerd --format save', () => {
  it.each(proxyInitCases.filter((c) => c.expectedError?.stage !== 'config').map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const io = memoryIO(c.existing !== undefined ? { 'existing.txt': c.existing } : {});
    const code = await runCompileLinkerd([...c.args!, ...(c.existing !== undefined ? ['--existing=existing.txt'] : [])], io);
    expect(code).toBe(c.expectedError ? 1 : 0);
    expect(io.out).toBe(expectedSave(c));
  });
});

describe('compile linkerd: usage', () => {
  it('prints help', async () => {
    const io = memoryIO();
    expect(await runCompileLinkerd(['--help'], io)).toBe(0);
    expect(io.out).toMatch(/^Usage: netfilter-sim compile linkerd/);
    expect(io.out).toMatch(/Examples:/);
  });

  it.each([
    [['--nope'], /unknown flag: --nope/],
    [['-p', '1', '-o', '2', '--format', 'yaml'], /unknown --format "yaml"/],
    [['-p'], /flag needs an argument: 'p' in -p/],
    [['-p', '1', '--existing'], /flag needs an argument: --existing/],
    [['-p', '1', '--timestamp', 'x'], /--timestamp must be unix seconds/],
  ])('%j is a usage error', async (args, message) => {
    const io = memoryIO();
    expect(await runCompileLinkerd(args, io)).toBe(2);
    expect(io.err).toMatch(message);
    expect(io.out).toBe('');
  });

  it('passes values that look like our own flags through to proxy-init flags', async () => {
    const io = memoryIO();
    expect(await runCompileLinkerd(['-p', '4143', '-o', '4140', '--ipv6=false', '--log-level', '--format', '--format', 'commands'], io)).toBe(1);
    expect(io.err).toBe('Error: not a valid logrus Level: "--format"\n');
  });

  it('warns about arguments proxy-init ignores', async () => {
    const io = memoryIO();
    expect(await runCompileLinkerd(['-p', '4143', '-o', '4140', '--ipv6', 'false', '--format', 'commands'], io)).toBe(0);
    expect(io.err).toMatch(/ignoring argument "false"/);
    expect(io.out).toMatch(/^ip6tables-legacy-save -t nat$/m);
  });

  it('reproduces an older release', async () => {
    const io = memoryIO();
    await runCompileLinkerd(['-p', '4143', '-o', '4140', '--upstream-version', 'v2.3.0', '--timestamp', '1681263857', '--ipv6=false', '--format', 'commands'], io);
    expect(io.out.split('\n')[2]).toBe('iptables-legacy -t nat -A PROXY_INIT_REDIRECT -p tcp -j REDIRECT --to-port 4143 -m comment --comment proxy-init/redirect-all-incoming-to-proxy-port/1681263857');
  });

  it('reports an unreadable --existing file', async () => {
    const io = memoryIO();
    expect(await runCompileLinkerd(['-p', '1', '-o', '2', '--existing', '/nonexistent/nat.txt'], io)).toBe(1);
    expect(io.err).toMatch(/cannot read \/nonexistent\/nat.txt/);
  });
});

function cniFiles(c: (typeof cniCases)[number]): Record<string, string> {
  const input = cniInput(c);
  const files: Record<string, string> = {
    'conf.json': JSON.stringify(input.conf),
    'pod.json': JSON.stringify(input.pod),
    'ns.json': JSON.stringify(input.namespace),
  };
  if (input.kubernetesService) files['svc.json'] = JSON.stringify(input.kubernetesService);
  return files;
}

function cniArgs(c: (typeof cniCases)[number]): string[] {
  return ['--conf', 'conf.json', '--pod', 'pod.json', '--namespace', 'ns.json', ...(c.kubernetesService ? ['--kubernetes-service', 'svc.json'] : [])];
}

describe('compile linkerd-cni', () => {
  it.each(cniCases.map((c) => [c.name, c] as const))('%s: commands', async (_name, c) => {
    const io = memoryIO(cniFiles(c));
    const code = await runCompileLinkerdCni([...cniArgs(c), '--format', 'commands'], io);
    expect(code).toBe(c.expectedError ? 1 : 0);
    expect(io.out).toBe(c.cniSkipped ? '' : expectedCommands(c));
    // The shape of compile istio-cni's skipped pod: "netfilter-sim compile X: X does not program this pod: REASON".
    if (c.cniSkipped) expect(io.err).toBe(`netfilter-sim compile linkerd-cni: linkerd-cni does not program this pod: ${c.cniSkipped.replace(/^linkerd-cni: /, '').replace(/, skipping\.$/, '')}\n`);
    if (c.expectedError) expect(io.err).toBe(`linkerd-cni: ${c.expectedError.message}\n`);
  });

  it.each(cniCases.filter((c) => !c.expectedError).map((c) => [c.name, c] as const))('%s: save', async (_name, c) => {
    const io = memoryIO(cniFiles(c));
    expect(await runCompileLinkerdCni(cniArgs(c), io)).toBe(0);
    // A pod the plugin leaves alone prints nothing (the reason goes to stderr), as compile istio-cni.
    expect(io.out).toBe(c.cniSkipped ? '' : expectedSave(c));
  });

  it('needs --conf and --pod', async () => {
    const io = memoryIO();
    expect(await runCompileLinkerdCni(['--pod', 'x'], io)).toBe(2);
    expect(io.err).toMatch(/--conf FILE is required/);
  });

  it('reports a broken configuration', async () => {
    const io = memoryIO({ 'conf.json': '{"linkerd": {"proxy-uid": "2102"}}', 'pod.yaml': 'kind: Pod\nspec: {containers: [{name: linkerd-proxy}]}\n' });
    expect(await runCompileLinkerdCni(['--conf', 'conf.json', '--pod', 'pod.yaml'], io)).toBe(1);
    expect(io.err).toMatch(/cannot unmarshal string into Go struct field ProxyInit.linkerd.proxy-uid of type int/);
  });

  it('prints help', async () => {
    const io = memoryIO();
    expect(await runCompileLinkerdCni(['-h'], io)).toBe(0);
    expect(io.out).toMatch(/^Usage: netfilter-sim compile linkerd-cni/);
  });
});

describe('compile linkerd --pod (the proxy injector), --set and --linkerd-version', () => {
  const manifest = (annotations: Record<string, string> = {}): string =>
    JSON.stringify({
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'default', annotations: { 'linkerd.io/inject': 'enabled', ...annotations } },
      spec: { containers: [{ name: 'web' }] },
    });
  const run = async (args: string[], files: Record<string, string>): Promise<{ code: number; out: string; err: string }> => {
    const io = memoryIO(files);
    const code = await runCompileLinkerd(args, io);
    return { code, out: io.out, err: io.err };
  };

  it('compiles the linkerd-init args the injector writes for the pod', async () => {
    const fromPod = await run(['--pod', 'pod.json', '--format', 'commands'], { 'pod.json': manifest() });
    const fromFlags = await run(['--firewall-bin-path', 'iptables-nft', '--firewall-save-bin-path', 'iptables-nft-save', '--ipv6=false',
      '--incoming-proxy-port', '4143', '--outgoing-proxy-port', '4140', '--proxy-uid', '2102',
      '--inbound-ports-to-ignore', '4190,4191,4567,4568', '--outbound-ports-to-ignore', '4567,4568', '--format', 'commands'], {});
    expect(fromPod.code).toBe(0);
    expect(fromPod.out).toBe(fromFlags.out);
    expect(fromPod.err).toMatch(/^# injector: linkerd-proxy runs as a native sidecar; linkerd-init --firewall-bin-path iptables-nft /);
  });

  it('--set changes the chart values; the pod annotations still win', async () => {
    const r = await run(['--pod', 'pod.json', '--set', 'proxyInit.ignoreOutboundPorts=3306', '--set', 'proxy.uid=2103', '--format', 'restore'], { 'pod.json': manifest() });
    expect(r.code).toBe(0);
    expect(r.out).toContain('--dports 3306 ');
    expect(r.out).toContain('--uid-owner 2103');
    const ann = await run(['--pod', 'pod.json', '--set', 'proxyInit.ignoreOutboundPorts=3306', '--format', 'restore'], { 'pod.json': manifest({ 'config.linkerd.io/skip-outbound-ports': '5432' }) });
    expect(ann.out).toContain('--dports 5432 ');
    expect(ann.out).not.toContain('3306');
  });

  it('--set cniEnabled=true: no linkerd-init, exits 0 with the reason on stderr', async () => {
    const r = await run(['--pod', 'pod.json', '--set', 'cniEnabled=true'], { 'pod.json': manifest() });
    expect(r).toMatchObject({ code: 0, out: '' });
    expect(r.err).toMatch(/adds no linkerd-init to this pod/);
  });

  it('a pod the injector skips (another mesh\'s sidecar, host network, inject disabled): exit 0, nothing on stdout, the reason on stderr', async () => {
    const istioPod = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', annotations: { 'linkerd.io/inject': 'enabled' } }, spec: { initContainers: [{ name: 'istio-init' }], containers: [{ name: 'web' }, { name: 'istio-proxy' }] } });
    const r = await run(['--pod', 'pod.json'], { 'pod.json': istioPod });
    expect(r).toMatchObject({ code: 0, out: '' });
    expect(r.err).toBe("netfilter-sim compile linkerd: the proxy injector skips pod web: pod has a sidecar injected already (Istio's container istio-proxy)\n");
    const disabled = await run(['--pod', 'pod.json'], { 'pod.json': manifest({ 'linkerd.io/inject': 'disabled' }) });
    expect(disabled).toMatchObject({ code: 0, out: '' });
    expect(disabled.err).toContain('pod has the annotation "linkerd.io/inject: disabled"');
  });

  it('--linkerd-version: the beta native-sidecar annotation counts from 2.19; unknown releases are refused', async () => {
    const files = { 'pod.json': manifest({ 'config.beta.linkerd.io/proxy-enable-native-sidecar': 'false' }) };
    expect((await run(['--pod', 'pod.json', '--linkerd-version', '2.19'], files)).err).toMatch(/\(Linkerd 2.19\): linkerd-proxy runs as a regular container/);
    expect((await run(['--pod', 'pod.json', '--linkerd-version', 'stable-2.18.1'], files)).err).toMatch(/linkerd-proxy runs as a native sidecar/);
    const bad = await run(['--pod', 'pod.json', '--linkerd-version', '2.17'], files);
    expect(bad).toMatchObject({ code: 1, out: '' });
    expect(bad.err).toMatch(/unknown Linkerd release "2.17" \(known: 2.18, 2.19, 2.20\)/);
  });

  it.each([
    [['--pod', 'pod.json', '--set', 'proxy.nope=1'], /unknown linkerd-control-plane chart value "proxy.nope"/],
    [['--pod', 'pod.json', '--set', 'proxy.uid=abc'], /expected an integer/],
    [['--set', 'proxy.uid=1', '-p', '4143', '-o', '4140'], /go with --pod/],
    [['--pod', 'pod.json', '-p', '4143'], /cannot be used together/],
  ])('%j is a usage error (exit 2)', async (args, message) => {
    const r = await run(args, { 'pod.json': manifest() });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});

describe('a skipped pod exits as in compile istio-cni', () => {
  it('exit 0, nothing on stdout, "netfilter-sim compile linkerd-cni: linkerd-cni does not program this pod: REASON" on stderr', async () => {
    const c = cniCases.find((x) => x.cniSkipped?.includes('linkerd-init'))!;
    const io = memoryIO(cniFiles(c));
    const code = await runCompileLinkerdCni(cniArgs(c), io);
    expect([code, io.out, io.err]).toEqual([0, '', 'netfilter-sim compile linkerd-cni: linkerd-cni does not program this pod: linkerd-init initContainer is present\n']);
  });
});
