/**
 * The linkerd-init arguments the injector writes (charts/partials/templates/_proxy-init.tpl,
 * pkg/inject/inject.go), and their explanation back from rule comments.
 */
import { describe, expect, it } from 'vitest';
import { explainProxyInitComment } from '../../../src/compile/linkerd/comments.js';
import { parseProxyInitArgs } from '../../../src/compile/linkerd/config.js';
import { injectProxyInitArgs } from '../../../src/compile/linkerd/injector.js';
import { compileProxyInit } from '../../../src/compile/linkerd/proxy-init.js';
import { NetfilterSimError } from '../../../src/model/errors.js';
import { expectedCommands, proxyInitCases } from './fixtures.js';

const pod = (annotations: Record<string, string>, labels: Record<string, string> = {}) => ({
  kind: 'Pod',
  metadata: { name: 'web', annotations, labels },
  spec: { containers: [{ name: 'web' }] },
});
const flag = (args: readonly string[] | null, name: string): string | undefined => {
  const i = args?.indexOf(name) ?? -1;
  return i >= 0 ? args![i + 1] : undefined;
};

describe('injectProxyInitArgs', () => {
  it('compiles to the injected-default commands', () => {
    const parsed = parseProxyInitArgs(injectProxyInitArgs({ pod: pod({}) }).args!);
    if (!parsed.ok) throw new Error(parsed.error);
    const c = proxyInitCases.find((x) => x.name === 'injected-default')!;
    expect(compileProxyInit(parsed.config).commands.map((l) => `${l}\n`).join('')).toBe(expectedCommands(c));
  });

  it('admin-port, skip-inbound-ports and skip-outbound-ports overrides (inject_emojivoto_deployment_config_overrides)', () => {
    const args = injectProxyInitArgs({
      pod: pod({ 'config.linkerd.io/admin-port': '9998', 'config.linkerd.io/skip-inbound-ports': '7777,8888', 'config.linkerd.io/skip-outbound-ports': '9999' }),
    }).args;
    expect(flag(args, '--inbound-ports-to-ignore')).toBe('4190,9998,7777,8888');
    expect(flag(args, '--outbound-ports-to-ignore')).toBe('9999');
  });

  it('passes ranges through raw (inject_emojivoto_deployment_proxyignores)', () => {
    const args = injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/skip-inbound-ports': '22,8100-8102' }) }).args;
    expect(flag(args, '--inbound-ports-to-ignore')).toBe('4190,4191,22,8100-8102');
  });

  it('an empty override removes the defaults (and the outbound flag)', () => {
    const args = injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/skip-inbound-ports': '', 'config.linkerd.io/skip-outbound-ports': '' }) }).args;
    expect(flag(args, '--inbound-ports-to-ignore')).toBe('4190,4191');
    expect(args).not.toContain('--outbound-ports-to-ignore');
  });

  it('reads namespace annotations the pod does not set (webhook), not with linkerd inject', () => {
    const namespace = { kind: 'Namespace', metadata: { name: 'n', annotations: { 'config.linkerd.io/skip-outbound-ports': '3306', 'config.linkerd.io/proxy-uid': '3000' } } };
    const webhook = injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/proxy-uid': '2500' }), namespace }).args;
    expect(flag(webhook, '--outbound-ports-to-ignore')).toBe('3306');
    expect(flag(webhook, '--proxy-uid')).toBe('2500');
    const cli = injectProxyInitArgs({ pod: pod({}), namespace, origin: 'cli' }).args;
    expect(flag(cli, '--outbound-ports-to-ignore')).toBe('4567,4568');
  });

  it('proxy-gid, skip-subnets, log flags, close-wait', () => {
    const r = injectProxyInitArgs({
      pod: pod({ 'config.linkerd.io/proxy-gid': '2102', 'config.linkerd.io/skip-subnets': '10.0.0.0/8', 'config.linkerd.io/close-wait-timeout': '1h0m30s' }),
      values: { proxyInit: { runAsRoot: true, logLevel: 'debug', logFormat: 'json' } },
    });
    expect(r.args!.slice(r.args!.indexOf('--proxy-gid'))).toEqual([
      '--proxy-gid', '2102', '--inbound-ports-to-ignore', '4190,4191,4567,4568', '--outbound-ports-to-ignore', '4567,4568',
      '--timeout-close-wait-secs', '3630', '--log-format', 'json', '--log-level', 'debug', '--subnets-to-ignore', '10.0.0.0/8',
    ]);
    expect(injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/close-wait-timeout': '10s' }) }).error).toMatch(/runAsRoot/);
  });

  it('ignores unparsable values with a warning', () => {
    const r = injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/proxy-uid': 'proxy', 'config.linkerd.io/inbound-port': '1e3' }) });
    expect(flag(r.args, '--proxy-uid')).toBe('2102');
    expect(flag(r.args, '--incoming-proxy-port')).toBe('4143');
    expect(r.warnings).toHaveLength(2);
  });

  it('control-plane pods skip the kube-apiserver ports and ignore annotations', () => {
    const r = injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/skip-outbound-ports': '1' }, { 'linkerd.io/control-plane-component': 'identity' }) });
    expect(flag(r.args, '--outbound-ports-to-ignore')).toBe('443,6443');
  });

  it('native sidecars go first, classic init containers last; CNI swaps in the network validator', () => {
    expect(injectProxyInitArgs({}).placement).toBe('first');
    const classic = injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/proxy-enable-native-sidecar': 'false' }) });
    expect([classic.nativeSidecar, classic.placement]).toEqual([false, 'last']);
    const cni = injectProxyInitArgs({ values: { cniEnabled: true } });
    expect([cni.args, cni.container]).toEqual([null, 'linkerd-network-validator']);
  });

  it('the native-sidecar annotations by release: alpha (2.18), beta over alpha (2.19), config.linkerd.io over both (2.20)', () => {
    const A = 'config.alpha.linkerd.io/proxy-enable-native-sidecar';
    const B = 'config.beta.linkerd.io/proxy-enable-native-sidecar';
    const S = 'config.linkerd.io/proxy-enable-native-sidecar';
    const native = (annotations: Record<string, string>, linkerdVersion?: string): boolean =>
      injectProxyInitArgs({ pod: pod(annotations), values: { proxy: { nativeSidecar: true } }, ...(linkerdVersion ? { linkerdVersion } : {}) }).nativeSidecar;
    // 2.18 knows only the alpha annotation.
    expect(native({ [B]: 'false' }, '2.18')).toBe(true);
    expect(native({ [A]: 'false' }, 'stable-2.18.2')).toBe(false);
    // 2.19: the beta annotation, and it wins over alpha; config.linkerd.io is not read yet.
    expect(native({ [B]: 'false' }, '2.19')).toBe(false);
    expect(native({ [B]: 'true', [A]: 'false' }, 'version-2.19')).toBe(true);
    expect(native({ [S]: 'false' }, '2.19')).toBe(true);
    // 2.20 (the default): config.linkerd.io over beta over alpha.
    expect(native({ [S]: 'true', [B]: 'false', [A]: 'false' })).toBe(true);
    expect(native({ [B]: 'false', [A]: 'true' })).toBe(false);
    // An unparsable value of the deciding annotation leaves the chart value: no fall-back to the next one.
    const bad = injectProxyInitArgs({ pod: pod({ [B]: 'maybe', [A]: 'false' }), values: { proxy: { nativeSidecar: true } }, linkerdVersion: '2.19' });
    expect(bad.nativeSidecar).toBe(true);
    expect(bad.warnings).toEqual([`unrecognized value used for the ${B} annotation: maybe`]);
  });

  it('refuses a Linkerd release it does not model', () => {
    for (const v of ['2.21', 'stable-3.0.0', 'edge-25.9.1', 'latest']) {
      expect(() => injectProxyInitArgs({ linkerdVersion: v }), v).toThrow(`unknown Linkerd release "${v}" (known: 2.18, 2.19, 2.20)`);
    }
  });

  it("a Namespace's close-wait-timeout is not inherited (the injector reads the pod's own annotation)", () => {
    const ns = { kind: 'Namespace', metadata: { name: 'shop', annotations: { 'config.linkerd.io/close-wait-timeout': '30s', 'config.linkerd.io/skip-subnets': '10.0.0.0/8' } } };
    const root = { proxyInit: { runAsRoot: true } };
    const r = injectProxyInitArgs({ pod: pod({}), namespace: ns, values: root });
    expect(flag(r.args, '--timeout-close-wait-secs')).toBeUndefined();
    // …while the other annotations are inherited.
    expect(flag(r.args, '--subnets-to-ignore')).toBe('10.0.0.0/8');
    expect(r.warnings).toEqual(['config.linkerd.io/close-wait-timeout on namespace shop is ignored: the injector reads it from the pod only']);
    const own = injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/close-wait-timeout': '45s' }), namespace: ns, values: root });
    expect(flag(own.args, '--timeout-close-wait-secs')).toBe('45');
    // An empty value is no value.
    expect(flag(injectProxyInitArgs({ pod: pod({ 'config.linkerd.io/close-wait-timeout': '' }), values: root }).args, '--timeout-close-wait-secs')).toBeUndefined();
  });

  it('fails the template for an iptablesMode it does not know', () => {
    expect(injectProxyInitArgs({ values: { proxyInit: { iptablesMode: 'plain' } } }).error).toBe('Unsupported value "plain" for proxyInit.iptablesMode\nValid values: ["nft", "legacy"]');
  });
});

describe('explainProxyInitComment', () => {
  it('maps comments to the setting behind them', () => {
    expect(explainProxyInitComment('proxy-init/ignore-port-4567,4568', 'PROXY_INIT_OUTPUT')).toMatchObject({
      kind: 'ignore-port', direction: 'outbound', option: '--outbound-ports-to-ignore', annotation: 'config.linkerd.io/skip-outbound-ports', value: '4567,4568',
    });
    expect(explainProxyInitComment('proxy-init/ignore-port-4190,4191', 'PROXY_INIT_REDIRECT')).toMatchObject({ direction: 'inbound', option: '--inbound-ports-to-ignore' });
    expect(explainProxyInitComment('proxy-init/ignore-subnet-10.0.0.0/8')).toMatchObject({ kind: 'ignore-subnet', value: '10.0.0.0/8' });
    expect(explainProxyInitComment('proxy-init/redirect-port-8080-to-proxy-port')).toMatchObject({ option: '--ports-to-redirect', value: '8080' });
    expect(explainProxyInitComment('proxy-init/ignore-proxy-user-id')).toMatchObject({ option: '--proxy-uid', chartValue: 'proxy.uid' });
    expect(explainProxyInitComment('proxy-init/install-proxy-init-output/1681263857')).toMatchObject({ kind: 'install-proxy-init-output', timestamp: 1681263857 });
    expect(explainProxyInitComment('proxy-init/ignore-subnet-10.0.0.0/8/1681263857')).toMatchObject({ value: '10.0.0.0/8', timestamp: 1681263857 });
    expect(explainProxyInitComment('istio/whatever')).toBeUndefined();
  });

  it('explains every comment the vectors contain', () => {
    for (const c of proxyInitCases) {
      for (const m of expectedCommands(c).matchAll(/-A (\S+) .*--comment (\S+)/g)) {
        expect(explainProxyInitComment(m[2]!, m[1]), m[2]).toBeDefined();
      }
    }
  });
});

describe('pods the proxy injector skips (Report.Injectable, pkg/inject/report.go)', () => {
  const code = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      return e instanceof NetfilterSimError ? e.diagnostics[0]!.code + ': ' + e.diagnostics[0]!.message : String(e);
    }
    return undefined;
  };
  const withSpec = (spec: Record<string, unknown>, annotations: Record<string, string> = {}) => ({ kind: 'Pod', metadata: { name: 'web', annotations }, spec });

  it.each([
    ['host network', withSpec({ hostNetwork: true, containers: [{ name: 'web' }] }), 'hostNetwork is enabled (spec.hostNetwork: true)'],
    ["Istio's proxy container", withSpec({ containers: [{ name: 'web' }, { name: 'istio-proxy' }] }), "pod has a sidecar injected already (Istio's container istio-proxy)"],
    ["Istio's init container", withSpec({ initContainers: [{ name: 'istio-init' }], containers: [{ name: 'web' }] }), "pod has a sidecar injected already (Istio's init container istio-init)"],
    ["Istio's proxy image under another name", withSpec({ containers: [{ name: 'web' }, { name: 'envoy', image: 'gcr.io/istio-release/proxyv2:1.20.0' }] }), "pod has a sidecar injected already (Istio's container envoy, image gcr.io/istio-release/proxyv2:1.20.0)"],
    ["Linkerd's own proxy", withSpec({ containers: [{ name: 'web' }, { name: 'linkerd-proxy' }] }), "pod has a sidecar injected already (Linkerd's container linkerd-proxy)"],
    ['linkerd.io/inject: disabled', withSpec({ containers: [{ name: 'web' }] }, { 'linkerd.io/inject': 'disabled' }), 'pod has the annotation "linkerd.io/inject: disabled"'],
    ['an unknown inject value', withSpec({ containers: [{ name: 'web' }] }, { 'linkerd.io/inject': 'yes' }), 'invalid value "yes" for annotation "linkerd.io/inject" at workload'],
  ])('%s: NOT_INJECTED naming why', (_what, p, why) => {
    expect(code(() => injectProxyInitArgs({ pod: p }))).toContain(`NOT_INJECTED: the proxy injector skips pod web: ${why}`);
  });

  it('a namespace that disables injection skips a pod that does not enable it (webhook only)', () => {
    const ns = { name: 'shop', annotations: { 'linkerd.io/inject': 'disabled' }, labels: {} };
    expect(code(() => injectProxyInitArgs({ pod: pod({}), namespace: ns }))).toContain('namespace shop has the annotation "linkerd.io/inject: disabled"');
    expect(injectProxyInitArgs({ pod: pod({ 'linkerd.io/inject': 'enabled' }), namespace: ns }).args).not.toBeNull();
    expect(injectProxyInitArgs({ pod: pod({}), namespace: ns, origin: 'cli' }).args).not.toBeNull();
  });

  it('an ambient-labelled pod is not skipped: the injector does not read istio.io/dataplane-mode', () => {
    expect(injectProxyInitArgs({ pod: pod({}, { 'istio.io/dataplane-mode': 'ambient' }) }).args).not.toBeNull();
  });
});

