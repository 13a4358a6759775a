// The snapshot reader: kubectl's List and multi-document YAML, JSON (one value or several), the
// API's defaults, typed errors naming the object and the field, named warnings for what cannot
// be used, and the explicit limits at the bound and one past it.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  MAX_PODS_PER_NODE, MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_FILES, MAX_SNAPSHOT_NODES, MAX_SNAPSHOT_OBJECTS, readSnapshot,
} from '../../src/cluster/snapshot.js';
import { thrown as error } from '../thrown.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/cluster');
const TWO_NODES = readFileSync(join(FIXTURES, 'two-nodes.yaml'), 'utf8');

const node = (name: string, ip: string, cidr: string | null): string =>
  `apiVersion: v1\nkind: Node\nmetadata:\n  name: ${name}\n${cidr !== null ? `spec:\n  podCIDR: ${cidr}\n  podCIDRs:\n  - ${cidr}\n` : ''}status:\n  addresses:\n  - address: ${ip}\n    type: InternalIP\n`;
const pod = (ns: string, name: string, nodeName: string | null, ip: string | null, extra = ''): string =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n  labels:\n    app: ${name}\nspec:\n${nodeName !== null ? `  nodeName: ${nodeName}\n` : ''}  containers:\n  - name: c\n    ports:\n    - containerPort: 80\n${extra}status:\n  phase: Running\n${ip !== null ? `  podIP: ${ip}\n  podIPs:\n  - ip: ${ip}\n` : ''}`;

describe('readSnapshot: the shapes kubectl prints', () => {
  it('reads a List, with the kinds in the order read and the defaults the API applies', () => {
    const s = readSnapshot([{ name: 'two-nodes.yaml', text: TWO_NODES }]);
    expect(s.namespaces.map((n) => n.metadata.name)).toEqual(['shop', 'db']);
    expect(s.nodes.map((n) => [n.metadata.name, n.spec?.podCIDRs])).toEqual([['worker-1', ['10.244.1.0/24']], ['worker-2', ['10.244.2.0/24']]]);
    expect(s.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)).toEqual(['shop/web-1', 'shop/client', 'shop/web-2', 'db/redis-0']);
    expect(s.services[0]!.spec.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 80, targetPort: 'http' }]);
    expect(s.services[0]!.spec.internalTrafficPolicy).toBe('Cluster');
    expect(s.endpointSlices[0]!.endpoints!.map((e) => e.addresses[0])).toEqual(['10.244.1.5', '10.244.2.7']);
    expect(s.warnings).toEqual([]);
  });

  it('reads multi-document YAML, JSON, and several JSON values in one file, to the same objects', () => {
    const yaml = [node('n1', '192.168.0.10', '10.244.1.0/24'), pod('default', 'a', 'n1', '10.244.1.5')].join('---\n');
    const fromYaml = readSnapshot(yaml);
    const objs = [
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, spec: { podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] }, status: { addresses: [{ address: '192.168.0.10', type: 'InternalIP' }] } },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', namespace: 'default', labels: { app: 'a' } }, spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] }, status: { phase: 'Running', podIP: '10.244.1.5', podIPs: [{ ip: '10.244.1.5' }] } },
    ];
    const fromJson = readSnapshot(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }, null, 2));
    const fromStream = readSnapshot(`${JSON.stringify({ kind: 'List', items: [objs[0]] })}\n${JSON.stringify({ kind: 'PodList', items: [objs[1]] })}\n`);
    expect(fromJson).toEqual(fromYaml);
    expect(fromStream).toEqual(fromYaml);
    expect(fromYaml.pods[0]!.spec.containers[0]!.ports).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
  });

  it('reads several texts as one snapshot (the files of a directory)', () => {
    const s = readSnapshot([{ name: 'nodes.yaml', text: node('n1', '192.168.0.10', '10.244.1.0/24') }, { name: 'pods.yaml', text: pod('x', 'a', 'n1', '10.244.1.5') }]);
    expect(s.pods.map((p) => p.metadata.name)).toEqual(['a']);
  });

  it('applies the API server\'s defaults: namespace default, Service type and targetPort, NetworkPolicy policyTypes, the namespace name label', () => {
    const s = readSnapshot([
      'kind: Namespace\nmetadata: {name: team}\n',
      'kind: Service\nmetadata: {name: s}\nspec:\n  clusterIP: 10.96.0.1\n  ports: [{port: 443}]\n',
      'kind: NetworkPolicy\nmetadata: {name: p, namespace: team}\nspec:\n  podSelector: {}\n  egress: [{}]\n',
      'kind: NetworkPolicy\nmetadata: {name: q, namespace: team}\nspec:\n  podSelector: {matchLabels: {app: a}}\n',
    ].join('---\n'));
    expect(s.namespaces[0]!.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': 'team' });
    expect(s.services[0]!.metadata.namespace).toBe('default');
    expect(s.services[0]!.spec).toMatchObject({ type: 'ClusterIP', sessionAffinity: 'None', ports: [{ port: 443, targetPort: 443, protocol: 'TCP' }] });
    expect(s.networkPolicies.map((p) => p.spec.policyTypes)).toEqual([['Ingress', 'Egress'], ['Ingress']]);
  });

  it('a List item that spans lines, comments and quoted keys is read whole', () => {
    const text = `apiVersion: v1\nkind: List\nitems:\n- kind: Node # a comment\n  metadata:\n    name: "n1"\n    annotations:\n      note: |\n        - not an item\n        kind: List\n  status:\n    addresses:\n    - {type: InternalIP, address: 192.168.0.10}\nmetadata: {}\n`;
    const s = readSnapshot(text);
    expect(s.nodes[0]!.metadata.annotations).toEqual({ note: '- not an item\nkind: List\n' });
  });
});

describe('readSnapshot: bad input', () => {
  it('names the file, the line, the object and the field of a malformed value', () => {
    const text = node('n1', '192.168.0.10', '10.244.1.0/24') + '---\n' + pod('x', 'a', 'n1', '10.244.1.300');
    const e = error(() => readSnapshot([{ name: 'snap.yaml', text }]));
    expect(e.code).toBe('BAD_MANIFEST');
    expect(e.message).toBe('snap.yaml:14: Pod x/a: status.podIPs[0].ip: "10.244.1.300" is not an IP address');
    const cidr = error(() => readSnapshot(node('n1', '192.168.0.10', '10.244.1.0/33')));
    expect(cidr.message).toContain('Node n1: spec.podCIDR: "10.244.1.0/33" is not a CIDR');
    const port = error(() => readSnapshot(pod('x', 'a', 'n1', '10.244.1.5').replace('containerPort: 80', 'containerPort: 70000')));
    expect(port.message).toContain('Pod x/a: spec.containers[0].ports[0].containerPort: must be an integer from 1 to 65535, not 70000');
    const proto = error(() => readSnapshot('kind: Service\nmetadata: {name: s, namespace: x}\nspec:\n  ports: [{port: 80, protocol: ICMP}]\n'));
    expect(proto.message).toContain('Service x/s: spec.ports[0].protocol: "ICMP" is not a protocol (TCP, UDP or SCTP)');
    const target = error(() => readSnapshot('kind: Service\nmetadata: {name: s, namespace: x}\nspec:\n  ports: [{port: 80, targetPort: "Not_A_Name"}]\n'));
    expect(target.message).toContain('spec.ports[0].targetPort: "Not_A_Name" is neither a port number nor a port name');
    const family = error(() => readSnapshot('kind: EndpointSlice\nmetadata: {name: e, namespace: x}\naddressType: IPv4\nendpoints: [{addresses: ["fd00::1"]}]\n'));
    expect(family.message).toContain('EndpointSlice x/e: endpoints[0].addresses[0]: fd00::1 is not an IPv4 address');
    const op = error(() => readSnapshot('kind: NetworkPolicy\nmetadata: {name: p, namespace: x}\nspec:\n  podSelector: {matchExpressions: [{key: a, operator: Equals}]}\n'));
    expect(op.message).toContain('NetworkPolicy x/p: spec.podSelector.matchExpressions[0].operator: "Equals" is not one of In, NotIn, Exists, DoesNotExist');
    expect(error(() => readSnapshot('kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n')).message).toContain('Pod default/a: spec.containers: is required');
    expect(error(() => readSnapshot('kind: Pod\nmetadata: {namespace: x}\nspec: {containers: [{name: c}]}\n')).message).toContain('metadata.name: is required');
  });

  it('a YAML syntax error keeps its line in the file', () => {
    const text = node('n1', '192.168.0.10', '10.244.1.0/24') + '---\nkind: Pod\nmetadata: {name: [a\n';
    const e = error(() => readSnapshot([{ name: 'snap.yaml', text }]));
    expect(e.code).toBe('BAD_MANIFEST');
    expect(e.message).toMatch(/^snap\.yaml:1[0-9]:\d+: /);
  });

  it('two nodes with one InternalIP, and overlapping pod CIDRs, are errors naming both', () => {
    expect(error(() => readSnapshot([node('n1', '192.168.0.10', '10.244.1.0/24'), node('n2', '192.168.0.10', '10.244.2.0/24')].join('---\n'))).message)
      .toBe("Node n2: InternalIP 192.168.0.10 is also node n1's");
    expect(error(() => readSnapshot([node('n1', '192.168.0.10', '10.244.0.0/16'), node('n2', '192.168.0.11', '10.244.2.0/24')].join('---\n'))).message)
      .toBe("Node n2: pod CIDR 10.244.2.0/24 overlaps node n1's 10.244.0.0/16");
  });

  it('says what it skipped and why, naming each object', () => {
    const text = [
      node('n1', '192.168.0.10', '10.244.1.0/24'),
      node('bare', '192.168.0.12', null),
      'kind: Node\nmetadata: {name: noip}\nstatus: {addresses: [{type: Hostname, address: noip}]}\n',
      pod('x', 'pending', null, null),
      pod('x', 'noaddr', 'n1', null),
      pod('x', 'lost', 'gone', '10.244.9.9'),
      pod('x', 'a', 'n1', '10.244.1.5'),
      pod('x', 'twin', 'n1', '10.244.1.5'),
      pod('x', 'outside', 'n1', '10.250.0.1'),
      pod('x', 'done', 'n1', '10.244.1.7').replace('phase: Running', 'phase: Succeeded'),
      pod('x', 'hostaddr', 'n1', '192.168.0.10'),
      'kind: Deployment\nmetadata: {name: web, namespace: x}\n',
      'kind: ConfigMap\nmetadata: {name: c1, namespace: x}\n',
      'kind: Endpoints\nmetadata: {name: s, namespace: x}\n',
      'kind: Service\nmetadata: {name: none, namespace: x}\nspec:\n  selector: {app: nobody}\n  ports: [{port: 80}]\n',
      'kind: EndpointSlice\nmetadata: {name: orphan-1, namespace: x, labels: {kubernetes.io/service-name: missing}}\naddressType: IPv4\n',
      'kind: EndpointSlice\nmetadata: {name: nolabel, namespace: x}\naddressType: IPv4\n',
      pod('x', 'a', 'n1', '10.244.1.9'),
      '42\n',
    ].join('---\n');
    const s = readSnapshot([{ name: 'snap.yaml', text }]);
    expect(s.pods.map((p) => p.metadata.name)).toEqual(['a']);
    expect(s.nodes.map((n) => n.metadata.name)).toEqual(['n1', 'bare']);
    const w = s.warnings.join('\n');
    for (const expected of [
      'Node bare: no spec.podCIDR(s)',
      'Node noip: no InternalIP in status.addresses: left out of the cluster, with its pods',
      'Pod x/pending: no spec.nodeName (not scheduled): left out of the cluster',
      'Pod x/noaddr: no status.podIPs (phase Running): left out of the cluster',
      'Pod x/lost: its node gone is not in the snapshot (or has no InternalIP): left out of the cluster',
      "Pod x/twin: its address 10.244.1.5 is also pod x/a's: left out of the cluster",
      "Pod x/outside: its address 10.250.0.1 is outside node n1's pod CIDR 10.244.1.0/24: left out of the cluster",
      'Pod x/done: phase Succeeded (its containers have exited): left out of the cluster',
      "Pod x/hostaddr: its address 192.168.0.10 is node n1's InternalIP (and the pod is not hostNetwork): left out of the cluster",
      '1 object of kind Deployment skipped (x/web)',
      '1 object of kind ConfigMap skipped (x/c1)',
      '1 object of kind Endpoints skipped (x/s): the cluster path reads Namespace, Node, Pod, Service, EndpointSlice, NetworkPolicy (kube-proxy reads EndpointSlices)',
      'Service x/none: its selector (app=nobody) selects no pod of the snapshot',
      'EndpointSlice x/orphan-1: its Service x/missing is not in the snapshot: skipped',
      'EndpointSlice x/nolabel: no kubernetes.io/service-name label: skipped',
      'Pod x/a: given twice (snap.yaml:',
      'a document that is not an object (number): skipped',
    ]) expect(w).toContain(expected);
  });

  it('refuses what is not a snapshot with BAD_ARGUMENT', () => {
    expect(error(() => readSnapshot(42 as never)).code).toBe('BAD_ARGUMENT');
    expect(error(() => readSnapshot([{ name: 'a' }] as never)).code).toBe('BAD_ARGUMENT');
  });
});

describe('readSnapshot: limits, at the bound and one past it', () => {
  it(`${MAX_SNAPSHOT_FILES} texts are read; one more is LIMIT_EXCEEDED`, () => {
    const files = Array.from({ length: MAX_SNAPSHOT_FILES }, (_, i) => ({ name: `f${i}.yaml`, text: '' }));
    expect(readSnapshot(files).pods).toEqual([]);
    const e = error(() => readSnapshot([...files, { name: 'one-more.yaml', text: '' }]));
    expect(e.code).toBe('LIMIT_EXCEEDED');
    expect(e.message).toContain(`netfilter-sim reads at most ${MAX_SNAPSHOT_FILES}`);
  });

  it(`${MAX_SNAPSHOT_BYTES} bytes are read; one more is INPUT_TOO_LARGE`, () => {
    // A YAML comment fills the text: the bound is on bytes, before any parse.
    const at = '#'.repeat(MAX_SNAPSHOT_BYTES - 1) + '\n';
    expect(readSnapshot([{ name: 'big.yaml', text: at }]).warnings).toEqual([]);
    const e = error(() => readSnapshot([{ name: 'big.yaml', text: at }, { name: 'x.yaml', text: '#' }]));
    expect(e.code).toBe('INPUT_TOO_LARGE');
    expect(e.message).toContain('(at x.yaml)');
  });

  it(`${MAX_SNAPSHOT_OBJECTS} objects are read; one more is LIMIT_EXCEEDED`, () => {
    const items = (n: number): string => JSON.stringify({ kind: 'List', items: Array.from({ length: n }, (_, i) => ({ kind: 'ConfigMap', metadata: { name: `c${i}` } })) });
    const s = readSnapshot(items(MAX_SNAPSHOT_OBJECTS));
    expect(s.warnings[0]).toContain(`${MAX_SNAPSHOT_OBJECTS} objects of kind ConfigMap skipped`);
    const e = error(() => readSnapshot(items(MAX_SNAPSHOT_OBJECTS + 1)));
    expect(e.code).toBe('LIMIT_EXCEEDED');
    expect(e.message).toContain(`more than ${MAX_SNAPSHOT_OBJECTS} objects`);
  });

  it(`${MAX_SNAPSHOT_NODES} nodes are read; one more is LIMIT_EXCEEDED`, () => {
    const nodes = (n: number): string => JSON.stringify({
      kind: 'List',
      items: Array.from({ length: n }, (_, i) => ({ kind: 'Node', metadata: { name: `n${i}` }, spec: { podCIDR: `10.${i >> 8}.${i & 255}.0/24` }, status: { addresses: [{ type: 'InternalIP', address: `172.16.${i >> 8}.${i & 255}` }] } })),
    });
    expect(readSnapshot(nodes(MAX_SNAPSHOT_NODES)).nodes).toHaveLength(MAX_SNAPSHOT_NODES);
    const e = error(() => readSnapshot(nodes(MAX_SNAPSHOT_NODES + 1)));
    expect(e.code).toBe('LIMIT_EXCEEDED');
    expect(e.message).toContain(`at most ${MAX_SNAPSHOT_NODES}`);
  }, 60_000);

  it(`${MAX_PODS_PER_NODE} pods are placed on one node; one more is LIMIT_EXCEEDED naming the node and the pod`, () => {
    const pods = (n: number): string => JSON.stringify({
      kind: 'List',
      items: [
        { kind: 'Node', metadata: { name: 'big' }, spec: { podCIDR: '10.244.0.0/16' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.0.10' }] } },
        ...Array.from({ length: n }, (_, i) => ({ kind: 'Pod', metadata: { name: `p${i}`, namespace: 'x' }, spec: { nodeName: 'big', containers: [{ name: 'c' }] }, status: { podIPs: [{ ip: `10.244.${i >> 8}.${(i & 255) + 0}` }] } })),
      ],
    });
    expect(readSnapshot(pods(MAX_PODS_PER_NODE)).pods).toHaveLength(MAX_PODS_PER_NODE);
    const e = error(() => readSnapshot(pods(MAX_PODS_PER_NODE + 1)));
    expect(e.code).toBe('LIMIT_EXCEEDED');
    expect(e.message).toBe(`node big holds more than ${MAX_PODS_PER_NODE} pods, the most netfilter-sim places on one node (at Pod x/p${MAX_PODS_PER_NODE})`);
  });
});
