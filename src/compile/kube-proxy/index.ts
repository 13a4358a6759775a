/**
 * kube-proxy compiled from a cluster snapshot: what its `syncProxyRules` writes on one node, in
 * iptables mode (`KUBE-SERVICES`, `KUBE-SVC-*`, `KUBE-SEP-*` …) or nftables mode (`table ip
 * kube-proxy`), as the node lists it afterwards.
 *
 * @module
 */
import { diagnostic, NetfilterSimError } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';
import { checkSnapshotShape } from '../snapshot-shape.js';
import type { Snapshot } from '../../model/kubernetes.js';
import { formatIptablesSave } from '../../iptables/fmt.js';
import { formatNftRuleset } from '../../nftables/index.js';
import { checkOptions, resolveOptions, type KubeProxyOptions, type ResolvedKubeProxyOptions } from './options.js';
import { findNode, nodeAddresses, proxyServices, type ProxyFamily } from './services.js';
import { iptablesEnsuredRules, iptablesRestorePayload, kubeProxyNfacctObjects } from './iptables.js';
import { nftablesTransaction } from './nftables.js';

export { KUBE_PROXY_VERSIONS, KUBE_PROXY_DEFAULT_VERSION } from './options.js';
export type { KubeProxyOptions, KubeProxyVersion, KubeProxyMode, DetectLocalMode } from './options.js';

/** The families a node has addresses in (status.addresses), IPv4 first. */
function nodeFamilies(snapshot: Snapshot, nodeName: string): ProxyFamily[] {
  const node = findNode(snapshot, nodeName)!;
  const out: ProxyFamily[] = [];
  for (const f of [4, 6] as const) if (nodeAddresses(node, f).length > 0) out.push(f);
  return out;
}

function checkSnapshot(snapshot: Snapshot, nodeName: string): void {
  expectArgument(snapshot, 'object', 'snapshot');
  expectArgument(nodeName, 'string', 'node');
  for (const k of ['nodes', 'services', 'endpointSlices'] as const) {
    if (!Array.isArray(snapshot[k])) throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `snapshot.${k} must be an array`));
  }
  checkSnapshotShape(snapshot, ['nodes', 'services', 'endpointSlices']);
  if (!findNode(snapshot, nodeName)) {
    const names = snapshot.nodes.map((n) => n.metadata.name);
    throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `no Node named "${nodeName}" in the snapshot${names.length > 0 ? ` (nodes: ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''})` : ''}`));
  }
}

/** The resolved options of each family compiled, in order. */
function familiesOf(snapshot: Snapshot, nodeName: string, options: KubeProxyOptions): ResolvedKubeProxyOptions[] {
  const node = findNode(snapshot, nodeName)!;
  const has = nodeFamilies(snapshot, nodeName);
  let families: ProxyFamily[];
  if (options.family === 4 || options.family === 6) families = [options.family];
  else if (options.family === 'dual') families = [4, 6];
  else if (options.mode === 'iptables') families = has.slice(0, 1);
  else families = has;
  if (families.length === 0) throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `Node ${nodeName} has no InternalIP or ExternalIP address in status.addresses`));
  return families.map((f) => resolveOptions(options, node, f));
}

/**
 * Compiles kube-proxy's rules for one node of a cluster snapshot.
 *
 * With `format: 'save'` (the default) the text is what `iptables-save` (or `ip6tables-save`,
 * `family: 6`) prints on a node where kube-proxy ran alone — its canary chains, the jump rules it
 * inserts into the built-in chains, and the payload of a full sync — or what `nft list ruleset`
 * prints (nftables mode). With `format: 'restore'` it is what kube-proxy writes itself: the
 * `iptables-restore` payload, or the nftables transaction. kube-proxy walks its services in Go's
 * map order, which differs from run to run; the compiler walks them sorted by
 * `namespace/name:port`, so rules of different services appear in that order.
 *
 * Throws {@link NetfilterSimError}: `BAD_CONFIG` for an option out of range, `BAD_MANIFEST` for a
 * node missing from the snapshot or without an address of the family.
 *
 * @example
 * ```ts
 * import { compileKubeProxy } from 'netfilter-sim';
 * const snapshot = {
 *   namespaces: [], pods: [], networkPolicies: [], warnings: [],
 *   nodes: [{ kind: 'Node', metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '192.168.0.2' }] } }],
 *   services: [{ kind: 'Service', metadata: { name: 'web', namespace: 'x' }, spec: { clusterIP: '10.96.0.10', ports: [{ name: 'http', port: 80 }] } }],
 *   endpointSlices: [{ kind: 'EndpointSlice', metadata: { name: 'web-1', namespace: 'x', labels: { 'kubernetes.io/service-name': 'web' } },
 *     addressType: 'IPv4', endpoints: [{ addresses: ['10.244.1.5'] }], ports: [{ name: 'http', port: 8080 }] }],
 * } as const;
 * const save = compileKubeProxy(snapshot, 'n1', { mode: 'iptables', clusterCIDR: '10.244.0.0/16' });
 * // "*mangle\n…-A KUBE-SERVICES -d 10.96.0.10/32 -p tcp -m comment --comment \"x/web:http cluster IP\" -m tcp --dport 80 -j KUBE-SVC-…"
 * ```
 */
export function compileKubeProxy(snapshot: Snapshot, node: string, options: KubeProxyOptions): string {
  checkSnapshot(snapshot, node);
  checkOptions(options);
  const resolved = familiesOf(snapshot, node, options);
  const format = options.format ?? 'save';
  if (options.mode === 'iptables') {
    const o = resolved[0]!;
    const payload = iptablesRestorePayload(proxyServices(snapshot, o.family, o.nodeName, o.warn), o);
    if (format === 'restore') return payload;
    return formatIptablesSave(iptablesNodeView(payload), { family: o.family });
  }
  const tx = resolved.map((o) => nftablesTransaction(proxyServices(snapshot, o.family, o.nodeName, o.warn), o)).join('');
  return format === 'restore' ? tx : formatNftRuleset(tx);
}

/**
 * The nfacct accounting objects kube-proxy creates and its iptables rules name
 * (`-m nfacct --nfacct-name …`): they must exist before the rules load. Empty for nftables mode
 * and with `nfacct: false`.
 */
export function kubeProxyNfacctNames(snapshot: Snapshot, node: string, options: KubeProxyOptions): string[] {
  checkSnapshot(snapshot, node);
  checkOptions(options);
  if (options.mode !== 'iptables') return [];
  return kubeProxyNfacctObjects(familiesOf(snapshot, node, options)[0]!);
}

/** The payload with what kube-proxy ensures before it, as one restore text (chains declared once). */
function iptablesNodeView(payload: string): string {
  const ensured = iptablesEnsuredRules();
  const tables = new Map<string, { chains: Set<string>; rules: string[] }>();
  const get = (t: string): { chains: Set<string>; rules: string[] } => {
    let v = tables.get(t);
    if (!v) {
      v = { chains: new Set(), rules: [] };
      tables.set(t, v);
    }
    return v;
  };
  const add = (t: string, lines: readonly string[]): void => {
    const v = get(t);
    for (const l of lines) {
      if (l.startsWith(':')) v.chains.add(l);
      else v.rules.push(l);
    }
  };
  add('mangle', ensured.mangle);
  add('filter', ensured.filter);
  add('nat', ensured.nat);
  let table = '';
  for (const l of payload.split('\n')) {
    if (l.startsWith('*')) {
      table = l.slice(1);
      continue;
    }
    if (l === 'COMMIT' || l === '') continue;
    add(table, [l]);
  }
  const out: string[] = [];
  for (const [t, v] of tables) out.push(`*${t}`, ...v.chains, ...v.rules, 'COMMIT');
  return out.join('\n') + '\n';
}
