import { describe, expect, it } from 'vitest';
import { compileIstioCni } from '../../../src/compile/istio/cni.js';
import { INJECTED_ISTIO_INIT_ARGS } from '../../../src/compile/istio/defaults.js';
import { istioInitArgsForPod } from '../../../src/compile/istio/inject.js';
import { formatIstioRestore } from '../../../src/compile/istio/format.js';
import { podFromObject, readPod } from '../../../src/compile/pod.js';
import { casesIn, type CniCase, fixture, podForCniCase, tableBlocks, toIstioConfig } from './vectors.js';

const current = casesIn<CniCase>('cni-plugin').filter(([name]) => name !== 'status-ports');

describe('istio-cni reproduces the cni-plugin goldens', () => {
  it('covers the 9 current cases', () => {
    expect(current).toHaveLength(9);
  });

  it.each(current)('%s: same table blocks as the golden', (_name, c) => {
    const result = compileIstioCni({ pod: podForCniCase(c) });
    expect(result.skipped).toBeNull();
    // The upstream test compares per-table blocks; ours are also byte-identical as a whole.
    expect(tableBlocks(formatIstioRestore(result))).toEqual(tableBlocks(fixture(c.file)));
    expect(formatIstioRestore(result)).toBe(fixture(c.file));
  });

  it.each(current)('%s: the configuration handed to istio-iptables', (_name, c) => {
    const result = compileIstioCni({ pod: podForCniCase(c) });
    expect(result.config).toMatchObject(toIstioConfig(c.derived_config!));
  });

  it('the stale status-ports golden is what a ≤ 1.12 release wrote for the basic pod', () => {
    const c = current.find(([n]) => n === 'basic')![1];
    const result = compileIstioCni({ pod: podForCniCase(c), upstreamVersion: '1.12' });
    expect(formatIstioRestore(result)).toBe(fixture('cni-plugin/status-ports.golden'));
  });
});

/** A manifest as `kubectl get pod -o json` would give it (before reading). */
interface Manifest {
  kind?: string;
  metadata?: { namespace?: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { containers?: unknown[]; initContainers?: unknown[] };
  status?: { podIP?: string; podIPs?: { ip: string }[] };
}
const injectedManifest: Manifest = {
  kind: 'Pod',
  metadata: { namespace: 'shop', annotations: { 'sidecar.istio.io/status': '{"containers":["istio-proxy"]}' } },
  spec: { containers: [{ name: 'app' }, { name: 'istio-proxy', args: ['proxy', 'sidecar'] }] },
};
const injected = podFromObject(injectedManifest);
const pod = (m: Manifest) => podFromObject(m);

describe('which pods istio-cni programs', () => {
  it.each([
    ['an istio-init container', { ...injectedManifest, spec: { ...injectedManifest.spec, initContainers: [{ name: 'istio-init' }] } }, /istio-init/],
    ['no istio-proxy', { ...injectedManifest, spec: { containers: [{ name: 'app' }] } }, /no istio-proxy/],
    ['a gateway proxy', { ...injectedManifest, spec: { containers: [{ name: 'istio-proxy', args: ['proxy', 'router'] }] } }, /router/],
    ['injection disabled', { ...injectedManifest, metadata: { ...injectedManifest.metadata, labels: { 'sidecar.istio.io/inject': 'false' } } }, /disabled/],
    ['no status annotation', { ...injectedManifest, metadata: { annotations: {} } }, /sidecar\.istio\.io\/status/],
    [
      'DISABLE_ENVOY',
      { ...injectedManifest, spec: { containers: [{ name: 'istio-proxy', env: [{ name: 'DISABLE_ENVOY', value: 'true' }] }] } },
      /DISABLE_ENVOY/,
    ],
  ] as [string, Manifest, RegExp][])('skips a pod with %s', (_what, m, why) => {
    const r = compileIstioCni({ pod: pod(m) });
    expect(r.skipped).toMatch(why);
    expect(r.restore).toEqual([]);
  });

  it('skips excluded namespaces', () => {
    expect(compileIstioCni({ pod: injected, excludeNamespaces: ['shop'] }).skipped).toMatch(/excluded/);
  });

  it('programs a native sidecar (istio-proxy as an init container)', () => {
    const native = pod({ ...injectedManifest, spec: { initContainers: [{ name: 'istio-proxy', restartPolicy: 'Always' }], containers: [{ name: 'app' }] } });
    expect(compileIstioCni({ pod: native }).skipped).toBeNull();
  });
});

describe('annotations', () => {
  const withAnnotations = (a: Record<string, string>) =>
    pod({ ...injectedManifest, metadata: { ...injectedManifest.metadata, annotations: { ...injectedManifest.metadata!.annotations, ...a } } });

  it('rejects bad values as the plugin does', () => {
    expect(() => compileIstioCni({ pod: withAnnotations({ 'sidecar.istio.io/interceptionMode': 'NONE' }) })).toThrow(/interceptionMode invalid/);
    expect(() => compileIstioCni({ pod: withAnnotations({ 'traffic.sidecar.istio.io/includeInboundPorts': '80,http' }) })).toThrow(/portList/);
    expect(() => compileIstioCni({ pod: withAnnotations({ 'traffic.sidecar.istio.io/excludeOutboundIPRanges': '10.0.0.0' }) })).toThrow(/cidr/);
  });

  it('de-duplicates the inbound exclusions and prefers reroute-virtual-interfaces', () => {
    const r = compileIstioCni({
      pod: withAnnotations({
        'traffic.sidecar.istio.io/excludeInboundPorts': '15021,8080',
        'traffic.sidecar.istio.io/kubevirtInterfaces': 'old0',
        'istio.io/reroute-virtual-interfaces': 'net1',
      }),
    });
    expect(r.redirect?.excludeInboundPorts).toBe('15021,8080,15020,15090');
    expect(r.redirect?.rerouteVirtualInterfaces).toBe('net1');
    expect(formatIstioRestore(r)).toContain('-I PREROUTING 1 -i net1 -j ISTIO_REDIRECT');
  });

  it('detects IPv6 from status.podIPs (ISTIO_DUAL_STACK: any IPv6 address)', () => {
    const dual: Manifest = { ...injectedManifest, status: { podIPs: [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }] } };
    expect(compileIstioCni({ pod: pod(dual) }).restore.map((x) => x.family)).toEqual([4]);
    const dualStack: Manifest = { ...dual, spec: { containers: [{ name: 'istio-proxy', env: [{ name: 'ISTIO_DUAL_STACK', value: 'true' }] }] } };
    expect(compileIstioCni({ pod: pod(dualStack) }).restore.map((x) => x.family)).toEqual([4, 6]);
    expect(compileIstioCni({ pod: pod({ ...injectedManifest, status: { podIP: 'fd00::2' } }) }).restore.map((x) => x.family)).toEqual([4, 6]);
  });

  it('reads a pod manifest from YAML', () => {
    const web = readPod(`apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    sidecar.istio.io/status: '{}'
    sidecar.istio.io/interceptionMode: TPROXY
spec:
  containers:
  - name: web
  - name: istio-proxy
    securityContext: { runAsUser: 1000670000, runAsGroup: 1000670001 }
`);
    expect(formatIstioRestore(compileIstioCni({ pod: web }))).toBe(fixture('cni-plugin/custom-uid-tproxy.golden'));
  });

  it('reads a Deployment\'s pod template', () => {
    const dep = readPod(`kind: Deployment
metadata: {name: web}
spec:
  template:
    metadata:
      annotations: {sidecar.istio.io/status: '{}', traffic.sidecar.istio.io/includeInboundPorts: '8080'}
    spec:
      containers: [{name: web}, {name: istio-proxy}]
`);
    expect(formatIstioRestore(compileIstioCni({ pod: dep }))).toContain('-A ISTIO_INBOUND -p tcp --dport 8080 -j ISTIO_IN_REDIRECT');
  });
});

describe('istio-init as the injector renders it', () => {
  it('with no annotations, the chart default arguments', () => {
    expect(istioInitArgsForPod(injected)).toEqual([...INJECTED_ISTIO_INIT_ARGS]);
  });

  it('follows the traffic annotations, the status port and the proxy uid', () => {
    const custom = pod({
      metadata: {
        annotations: {
          'traffic.sidecar.istio.io/excludeInboundPorts': '8080',
          'traffic.sidecar.istio.io/excludeOutboundPorts': '3306',
          'traffic.sidecar.istio.io/kubevirtInterfaces': 'net1',
        },
      },
      spec: { containers: [{ name: 'istio-proxy', securityContext: { runAsUser: 1000 } }] },
    });
    expect(istioInitArgsForPod(custom)).toEqual([
      '-p', '15001', '-z', '15006', '-u', '1000', '-m', 'REDIRECT', '-i', '*', '-x', '', '-b', '*', '-d', '15090,15021,8080,15020',
      '-o', '3306', '-k', 'net1',
    ]);
    expect(istioInitArgsForPod(pod({ metadata: { annotations: { 'sidecar.istio.io/interceptionMode': 'NONE' } }, spec: { containers: [] } }))).toBeNull();
  });
});
