// Where kube-router's rules depart from the API's semantics, as conditions on a snapshot and a
// probe. The agreement property checks that every disagreement between kube-router's rules and
// the reference evaluator falls under one of these; demonstrations (kube-router.test.ts) show
// each one happening. docs/network-policy.md lists them.
import type { ContainerPort, K8sPod, Snapshot } from '../../src/model/kubernetes.js';
import { NAMESPACE_NAME_LABEL, compileSelector, defaultNetworkPolicy, selectorMatches } from '../../src/netpol/index.js';
import type { DefaultedPolicy, DefaultedRule } from '../../src/netpol/index.js';
import type { NetworkPolicyProbe } from '../../src/arbitraries/index.js';

/** The departures, by name. */
export type Departure =
  | 'both-types-no-direction'
  | 'unresolved-named-ports-allow-all'
  | 'egress-named-port-any-destination'
  | 'egress-ipblock-named-port-ignored'
  | 'ipblocks-share-one-set'
  | 'named-port-address-lists-shared'
  /** nftables mode only: a rule's ipBlock CIDRs (or its excepts) overlap, nft refuses the policy's transaction, its pods fail closed. */
  | 'ipblock-intervals-conflict';

const key = (p: K8sPod): string => `${p.metadata.namespace}/${p.metadata.name}`;
const active = (p: K8sPod): boolean => !['Failed', 'Succeeded'].includes(p.status?.phase ?? '') && !!p.status?.podIP && p.spec.hostNetwork !== true;

function nsLabels(s: Snapshot, ns: string): Record<string, string> {
  const o = s.namespaces.find((n) => n.metadata.name === ns);
  return { ...(o?.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: ns };
}

function selected(s: Snapshot, p: DefaultedPolicy): K8sPod[] {
  const sel = compileSelector(p.podSelector);
  return s.pods.filter((x) => active(x) && x.metadata.namespace === p.namespace && selectorMatches(sel, x.metadata.labels ?? {}));
}

function peerPods(s: Snapshot, p: DefaultedPolicy, r: DefaultedRule): K8sPod[] {
  const out: K8sPod[] = [];
  for (const peer of r.peers ?? []) {
    if (peer.ipBlock) continue;
    const ps = compileSelector(peer.podSelector ?? {});
    const ns = peer.namespaceSelector ? compileSelector(peer.namespaceSelector) : null;
    for (const x of s.pods) {
      if (!active(x)) continue;
      const inNs = ns === null ? x.metadata.namespace === p.namespace : selectorMatches(ns, nsLabels(s, x.metadata.namespace!));
      if (inNs && selectorMatches(ps, x.metadata.labels ?? {})) out.push(x);
    }
  }
  return out;
}

const portsOf = (p: K8sPod): ContainerPort[] => p.spec.containers.flatMap((c) => c.ports ?? []).map((c) => ({ ...c, protocol: c.protocol ?? 'TCP' }));

/** Whether some pod of the list declares the name with the protocol. */
function resolves(pods: readonly K8sPod[], name: string, protocol: string): boolean {
  return pods.some((p) => portsOf(p).some((c) => c.name === name && c.protocol === protocol));
}

/** kube-router's shared address lists: does a pod land in an entry for a name it does not declare? */
function aliasingBites(pods: readonly K8sPod[]): boolean {
  const owner = new Map<string, number>();
  const lists = new Map<number, Set<string>>();
  const entries: { name: string; protocol: string; port: number; list: number }[] = [];
  pods.forEach((p, i) => {
    for (const c of portsOf(p)) {
      const k = `${c.name ?? ''}/${c.protocol}/${c.containerPort}`;
      const o = owner.get(k);
      if (o === undefined) {
        owner.set(k, i);
        if (!lists.has(i)) lists.set(i, new Set([key(p)]));
        entries.push({ name: c.name ?? '', protocol: c.protocol!, port: c.containerPort, list: i });
      } else lists.get(o)!.add(key(p));
    }
  });
  return entries.some((e) => [...lists.get(e.list)!].some((k) => {
    const p = pods.find((x) => key(x) === k)!;
    return !portsOf(p).some((c) => (c.name ?? '') === e.name && c.protocol === e.protocol && c.containerPort === e.port);
  }));
}

/** The departures that could make kube-router's verdict on this probe differ from the API's. */
export function kubeRouterDepartures(s: Snapshot, probe: NetworkPolicyProbe): Departure[] {
  const out = new Set<Departure>();
  const policies = s.networkPolicies.map(defaultNetworkPolicy);
  const src = probe.from.startsWith('node:') ? null : s.pods.find((p) => key(p) === probe.from) ?? null;
  const dst = s.pods.find((p) => key(p) === probe.to) ?? null;
  for (const p of policies) {
    const sel = selected(s, p).map(key);
    const selectsSrc = src !== null && sel.includes(key(src));
    const selectsDst = dst !== null && sel.includes(key(dst));
    if (p.ingress && p.egress && selectsSrc && selectsDst) out.add('both-types-no-direction');
    const check = (rules: readonly DefaultedRule[], dir: 'ingress' | 'egress'): void => {
      for (const r of rules) {
        const named = (r.ports ?? []).filter((x) => typeof x.port === 'string');
        const ipBlocks = (r.peers ?? []).filter((x) => x.ipBlock);
        if (ipBlocks.length >= 2 && ipBlocks.some((x) => (x.ipBlock!.except ?? []).length > 0)) out.add('ipblocks-share-one-set');
        if (named.length === 0) continue;
        const pool = dir === 'ingress' ? selected(s, p) : r.peers === null ? s.pods.filter((x) => active(x) && x.metadata.namespace === p.namespace) : peerPods(s, p, r);
        if (aliasingBites(pool)) out.add('named-port-address-lists-shared');
        if (dir === 'egress' && r.peers === null) out.add('egress-named-port-any-destination');
        if (dir === 'egress' && ipBlocks.length > 0) out.add('egress-ipblock-named-port-ignored');
        const numeric = (r.ports ?? []).filter((x) => typeof x.port !== 'string');
        if (r.peers !== null && numeric.length === 0 && peerPods(s, p, r).length > 0 && !named.some((x) => resolves(pool, x.port as string, x.protocol))) {
          out.add('unresolved-named-ports-allow-all');
        }
      }
    };
    if (p.ingress && selectsDst) check(p.ingressRules, 'ingress');
    if (p.egress && selectsSrc) check(p.egressRules, 'egress');
    // A both-types policy's chain is entered for either end: its rules of the other direction count too.
    if (p.ingress && p.egress && (selectsSrc || selectsDst)) {
      check(p.ingressRules, 'ingress');
      check(p.egressRules, 'egress');
    }
  }
  return [...out];
}

/** The CIDRs an ipBlock peer puts in kube-router's interval sets (`/0` split in two halves, as for the ipsets). */
function blockCidrs(r: DefaultedRule, family: 4 | 6): { include: string[]; except: string[] } {
  const include: string[] = [];
  const except: string[] = [];
  const zero = family === 4 ? ['0.0.0.0/1', '128.0.0.0/1'] : ['2000::/3', 'fd00::/8'];
  const add = (list: string[], c: string): void => { if (c.endsWith('/0')) list.push(...zero); else list.push(c); };
  for (const peer of r.peers ?? []) {
    if (!peer.ipBlock || peer.podSelector || peer.namespaceSelector || peer.ipBlock.cidr.includes(':') !== (family === 6)) continue;
    add(include, peer.ipBlock.cidr);
    for (const e of peer.ipBlock.except ?? []) add(except, e);
  }
  return { include, except };
}

/** Two different CIDRs of the list where one holds the other (IPv4 only: what the generators write). */
function overlap(cidrs: readonly string[]): boolean {
  const parsed = [...new Set(cidrs)].filter((c) => !c.includes(':')).map((c) => {
    const [a, l] = c.split('/') as [string, string];
    const n = a.split('.').reduce((x, o) => x * 256 + Number(o), 0);
    const len = Number(l ?? 32);
    return { lo: n - (n % 2 ** (32 - len)), hi: n - (n % 2 ** (32 - len)) + 2 ** (32 - len) - 1 };
  });
  return parsed.some((a, i) => parsed.some((b, j) => i !== j && a.lo <= b.lo && b.hi <= a.hi));
}

/**
 * kube-router's nftables mode: its departures are the iptables mode's (the same policy model), and
 * a policy whose interval sets nft refuses fails its pods closed.
 */
export function kubeRouterNftDepartures(s: Snapshot, probe: NetworkPolicyProbe): Departure[] {
  const out = new Set<Departure>(kubeRouterDepartures(s, probe));
  const src = probe.from.startsWith('node:') ? null : s.pods.find((p) => key(p) === probe.from) ?? null;
  const dst = s.pods.find((p) => key(p) === probe.to) ?? null;
  for (const p of s.networkPolicies.map(defaultNetworkPolicy)) {
    const sel = selected(s, p).map(key);
    if (!((src !== null && sel.includes(key(src))) || (dst !== null && sel.includes(key(dst))))) continue;
    const rules = [...(p.ingress ? p.ingressRules : []), ...(p.egress ? p.egressRules : [])];
    if (rules.some((r) => { const b = blockCidrs(r, 4); return overlap(b.include) || overlap(b.except); })) out.add('ipblock-intervals-conflict');
  }
  return [...out];
}
