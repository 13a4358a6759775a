/**
 * The Kubernetes manifest reader of src/compile/pod.ts.
 */
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../../src/model/errors.js';
import { readManifests, readNamespace, readPod, readService } from '../../../src/compile/pod.js';

const podYaml = `
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: emojivoto
  annotations:
    config.linkerd.io/skip-outbound-ports: "3306"
    config.linkerd.io/proxy-uid: 2103
  labels:
    app: web
spec:
  securityContext:
    runAsUser: 1000
  initContainers:
  - name: linkerd-init
    image: cr.l5d.io/linkerd/proxy:edge
    args: ["--ipv6=false", "--incoming-proxy-port", "4143"]
  - name: linkerd-proxy
    restartPolicy: Always
    securityContext:
      runAsUser: 2102
    ports:
    - containerPort: 4143
      name: linkerd-proxy
    env:
    - name: LINKERD2_PROXY_INBOUND_LISTEN_ADDR
      value: 0.0.0.0:4143
    - name: FROM_FIELD
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
  containers:
  - name: web
    ports: [{containerPort: 8080, protocol: TCP}]
status:
  podIPs:
  - ip: 10.0.0.2
  - ip: fd00::2
`;

describe('readPod', () => {
  it('keeps what the mesh compilers read', () => {
    const pod = readPod(podYaml);
    expect(pod.name).toBe('web');
    expect(pod.namespace).toBe('emojivoto');
    expect(pod.annotations).toEqual({ 'config.linkerd.io/skip-outbound-ports': '3306', 'config.linkerd.io/proxy-uid': '2103' });
    expect(pod.labels).toEqual({ app: 'web' });
    expect(pod.initContainers.map((c) => c.name)).toEqual(['linkerd-init', 'linkerd-proxy']);
    expect(pod.initContainers[0]!.args).toEqual(['--ipv6=false', '--incoming-proxy-port', '4143']);
    expect(pod.initContainers[0]!.runAsUser).toBe(1000);
    expect(pod.initContainers[1]).toMatchObject({ restartPolicy: 'Always', runAsUser: 2102, ports: [{ containerPort: 4143, name: 'linkerd-proxy', protocol: 'TCP' }] });
    expect(pod.initContainers[1]!.env).toEqual([{ name: 'LINKERD2_PROXY_INBOUND_LISTEN_ADDR', value: '0.0.0.0:4143' }, { name: 'FROM_FIELD' }]);
    expect(pod.containers[0]!.ports).toEqual([{ containerPort: 8080, protocol: 'TCP' }]);
    expect(pod.podIPs).toEqual(['10.0.0.2', 'fd00::2']);
  });

  it('reads JSON and workload templates', () => {
    const deploy = JSON.stringify({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'n' },
      spec: { template: { metadata: { annotations: { 'linkerd.io/inject': 'enabled' } }, spec: { containers: [{ name: 'web' }] } } },
    });
    const pod = readPod(deploy);
    expect(pod).toMatchObject({ kind: 'Deployment', name: 'web', namespace: 'n', annotations: { 'linkerd.io/inject': 'enabled' } });
  });

  it('finds the pod among several documents and in a List', () => {
    const text = `kind: Namespace\nmetadata: {name: n, annotations: {a: b}}\n---\nkind: List\nitems:\n- kind: Service\n  metadata: {name: kubernetes}\n  spec: {ports: [{port: 443, targetPort: 6443}]}\n- kind: Pod\n  metadata: {name: p}\n  spec: {containers: [{name: c}]}\n`;
    expect(readManifests(text)).toHaveLength(3);
    expect(readPod(text).name).toBe('p');
    expect(readNamespace(text).annotations).toEqual({ a: 'b' });
    expect(readService(text).ports).toEqual([{ port: 443, targetPort: 6443, protocol: 'TCP' }]);
  });

  it('reports syntax errors with their position, and bad fields by name', () => {
    try {
      readPod('kind: Pod\nmetadata: {name: [\n');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(NetfilterSimError);
      expect((e as NetfilterSimError).code).toBe('BAD_MANIFEST');
      expect((e as NetfilterSimError).span?.line).toBeGreaterThan(0);
    }
    expect(() => readPod('kind: Pod\nspec: {containers: [{image: x}]}\n')).toThrow(/spec.containers\[0\].name/);
    expect(() => readPod('kind: Secret\n')).toThrow(/no Pod/);
  });
});
