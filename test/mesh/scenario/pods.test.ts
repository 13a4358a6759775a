/**
 * Pods as the scenario runs them: injection, start-up order, rules, proxies.
 */
import { describe, expect, it } from 'vitest';
import { readPod } from '../../../src/compile/pod.js';
import { DEFAULT_POD_MANIFESTS, defaultPods, prepareMeshPod, simulateMesh } from '../../../src/mesh/index.js';
import { NetfilterSimError } from '../../../src/model/errors.js';
import { annotate, namespace, pod, podText } from './helpers.js';

const order = (p: ReturnType<typeof prepareMeshPod>): string[] => p.startup.map((s) => `${s.stage}:${s.name}:${s.effect}${s.active ? '' : '(inactive)'}`);

describe('Linkerd pods', () => {
  const web = pod('linkerd-web.yaml');

  it('injection places linkerd-init and the proxy per the native-sidecar setting', () => {
    expect(order(prepareMeshPod('linkerd', web))).toEqual([
      'init:linkerd-init:rules', 'init:linkerd-proxy:proxy', 'init:fetch-config:none', 'container:web:none',
    ]);
    expect(order(prepareMeshPod('linkerd', web, { nativeSidecars: false }))).toEqual([
      'init:fetch-config:none', 'init:linkerd-init:rules', 'container:linkerd-proxy:proxy', 'container:web:none',
    ]);
    expect(order(prepareMeshPod('linkerd', web, { cni: true, nativeSidecars: false }))).toEqual([
      'sandbox:linkerd-cni:rules', 'init:fetch-config:none', 'init:linkerd-network-validator:validator', 'container:linkerd-proxy:proxy', 'container:web:none',
    ]);
    expect(order(prepareMeshPod('linkerd', web, { cni: true, cniNotReady: true }))).toEqual([
      'sandbox:linkerd-cni:rules(inactive)', 'init:linkerd-network-validator:validator', 'init:linkerd-proxy:proxy', 'init:fetch-config:none', 'container:web:none',
    ]);
  });

  it('the per-pod native-sidecar annotation wins over the default', () => {
    const p = prepareMeshPod('linkerd', annotate(web, { 'config.linkerd.io/proxy-enable-native-sidecar': 'false' }));
    expect(p.proxy?.nativeSidecar).toBe(false);
  });

  it("injected rules are the injector's defaults, with where each setting came from", () => {
    const p = prepareMeshPod('linkerd', web);
    expect(p.rulesBy).toBe('linkerd-init');
    expect(p.rules6).toBeNull();
    expect(p.settings[1]).toBe('web: linkerd-init --firewall-bin-path iptables-nft --firewall-save-bin-path iptables-nft-save --ipv6=false --incoming-proxy-port 4143 --outgoing-proxy-port 4140 --proxy-uid 2102 --inbound-ports-to-ignore 4190,4191,4567,4568 --outbound-ports-to-ignore 4567,4568');
    const skip = p.ruleNotes.find((n) => n.chain === 'PROXY_INIT_OUTPUT' && n.rule === 3)!;
    expect(skip.text).toBe('-A PROXY_INIT_OUTPUT -p tcp -m multiport --dports 4567,4568 -m comment --comment "proxy-init/ignore-port-4567,4568" -j RETURN');
    expect(skip.setting).toBe('linkerd-init --outbound-ports-to-ignore 4567,4568, chart value proxyInit.ignoreOutboundPorts, or the config.linkerd.io/skip-outbound-ports annotation');
  });

  it('linkerd-cni reads skip-inbound-ports from the Namespace and appends it', () => {
    const ns = { ...namespace('namespace-linkerd.yaml'), annotations: { 'config.linkerd.io/skip-inbound-ports': '9001' } };
    const p = prepareMeshPod('linkerd', web, { cni: true, namespace: ns });
    expect(p.source).toBe('injected');
    expect(p.ruleNotes.find((n) => n.chain === 'PROXY_INIT_REDIRECT' && n.rule === 1)?.comment).toBe('proxy-init/ignore-port-4191,4190,9001');
  });

  it('with linkerd-cni, only the annotations the plugin reads are named as settings', () => {
    const p = prepareMeshPod('linkerd', web, { cni: true });
    const redirect = p.ruleNotes.find((n) => n.comment === 'proxy-init/redirect-all-outgoing-to-proxy-port')!;
    expect(redirect.setting).toBe('linkerd-cni "outgoing-proxy-port" 4140, the linkerd-cni configuration');
    const uid = p.ruleNotes.find((n) => n.comment === 'proxy-init/ignore-proxy-user-id')!;
    expect(uid.setting).toBe('linkerd-cni "proxy-uid" 2102, the linkerd-cni configuration, or the config.linkerd.io/proxy-uid annotation');
  });

  it('a running pod with linkerd-init is left alone by linkerd-cni', () => {
    const p = prepareMeshPod('linkerd', pod('linkerd-web-running.yaml'), { cni: true });
    expect(p.rulesBy).toBe('linkerd-init');
    expect(p.startup[0]).toMatchObject({ stage: 'sandbox', name: 'linkerd-cni', active: false, note: 'linkerd-cni leaves pods with a linkerd-init init container alone' });
  });

  it('a pod without the annotation is not meshed', () => {
    const p = prepareMeshPod('linkerd', pod('plain-web.yaml'));
    expect(p.source).toBe('plain');
    expect(p.proxy).toBeNull();
    expect(p.rules4).toBeNull();
    expect(prepareMeshPod('linkerd', annotate(pod('plain-web.yaml'), { 'linkerd.io/inject': 'disabled' })).source).toBe('plain');
  });

  it('linkerd-init arguments that proxy-init rejects are bad input', () => {
    const running = pod('linkerd-web-running.yaml');
    const broken = { ...running, initContainers: running.initContainers.map((c) => (c.name === 'linkerd-init' ? { ...c, args: ['--bogus'] } : c)) };
    expect(() => prepareMeshPod('linkerd', broken)).toThrow(/linkerd-init in pod web would fail: Error: unknown flag: --bogus/);
  });
});

describe('Istio pods', () => {
  const web = pod('istio-web.yaml');

  it('injection order per install mode and native-sidecar setting', () => {
    expect(order(prepareMeshPod('istio', web))).toEqual([
      'init:istio-init:rules', 'init:istio-proxy:proxy', 'init:fetch-config:none', 'container:web:none',
    ]);
    expect(order(prepareMeshPod('istio', web, { nativeSidecars: false }))).toEqual([
      'init:fetch-config:none', 'init:istio-init:rules', 'container:istio-proxy:proxy', 'container:web:none',
    ]);
    expect(order(prepareMeshPod('istio', web, { cni: true, nativeSidecars: false }))).toEqual([
      'sandbox:istio-cni:rules', 'init:istio-validation:validator', 'init:fetch-config:none', 'container:istio-proxy:proxy', 'container:web:none',
    ]);
    expect(prepareMeshPod('istio', annotate(web, { 'sidecar.istio.io/nativeSidecar': 'false' })).proxy?.nativeSidecar).toBe(false);
  });

  it('the injected istio-init gets the injector arguments; istio-cni its own defaults', () => {
    const init = prepareMeshPod('istio', web);
    expect(init.settings[1]).toBe('web: istio-iptables -p 15001 -z 15006 -u 1337 -m REDIRECT -i * -x "" -b * -d 15090,15021,15020');
    const cni = prepareMeshPod('istio', web, { cni: true });
    expect(cni.rulesBy).toBe('istio-cni');
    // istio-cni excludes the status port outbound by default.
    expect(cni.ruleNotes.filter((n) => n.chain === 'ISTIO_OUTPUT' && n.text.includes('--dport 15020')).map((n) => n.rule)).toEqual([1, 2]);
  });

  it('injection from the namespace label, and the pod label opting out', () => {
    const ns = { name: 'shop', annotations: {}, labels: { 'istio-injection': 'enabled' } };
    const plain = pod('plain-web.yaml');
    expect(prepareMeshPod('istio', plain, { namespace: ns }).source).toBe('injected');
    expect(prepareMeshPod('istio', { ...plain, labels: { 'sidecar.istio.io/inject': 'false' } }, { namespace: ns }).source).toBe('plain');
  });

  it('TPROXY pods get their policy routing', () => {
    const p = prepareMeshPod('istio', annotate(web, { 'sidecar.istio.io/interceptionMode': 'TPROXY' }));
    expect(p.ipCommands).toEqual([
      ['ip', '-4', 'rule', 'add', 'fwmark', '1337', 'lookup', '133'],
      ['ip', '-4', 'route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '133'],
    ]);
  });
});

describe('pods the injector skips', () => {
  it('a host-network pod asking for injection is not injected, and the setting says why', () => {
    const i = prepareMeshPod('istio', { ...pod('istio-web.yaml'), hostNetwork: true });
    expect(i.source).toBe('plain');
    expect(i.proxy).toBeNull();
    expect(i.settings[0]).toContain('but the sidecar injector skips the pod: it uses the host network (spec.hostNetwork: true)');
    const l = prepareMeshPod('linkerd', { ...pod('linkerd-web.yaml'), hostNetwork: true });
    expect(l.source).toBe('plain');
    expect(l.settings[0]).toContain('but the proxy injector skips the pod: hostNetwork is enabled (spec.hostNetwork: true)');
  });
});

describe('the built-in pods', () => {
  it('are written with the inject annotation and live at 10.0.0.2 / 10.0.1.5', () => {
    for (const mesh of ['linkerd', 'istio'] as const) {
      const { client, server } = defaultPods(mesh);
      expect(client.podIPs).toEqual(['10.0.0.2']);
      expect(server.podIPs).toEqual(['10.0.1.5']);
      expect(prepareMeshPod(mesh, client).source).toBe('injected');
    }
    expect(DEFAULT_POD_MANIFESTS.linkerd.client.metadata.annotations).toEqual({ 'linkerd.io/inject': 'enabled' });
  });

  it('a Deployment works as a pod template; addresses default when the manifest has none', () => {
    const deployment = `apiVersion: apps/v1
kind: Deployment
metadata: { name: web }
spec:
  template:
    metadata:
      annotations: { linkerd.io/inject: enabled }
    spec:
      containers:
        - name: web
          ports: [{ containerPort: 8080 }]
          securityContext: { runAsUser: 1000 }
`;
    const r = simulateMesh({ mesh: 'linkerd', client: deployment, server: podText('linkerd-api.yaml') });
    expect(r.verdict).toBe('meshed');
    expect(r.diagnosis).toContain('note: pod web has no status.podIPs: assuming 10.0.0.2');
  });

  it('bad manifests are typed errors', () => {
    expect(() => simulateMesh({ mesh: 'linkerd', client: 'kind: Pod\nspec: [', server: podText('linkerd-api.yaml') })).toThrow(NetfilterSimError);
    expect(() => readPod('kind: Service\nmetadata: {name: x}\n')).toThrow(/no Pod in the manifest/);
  });
});
