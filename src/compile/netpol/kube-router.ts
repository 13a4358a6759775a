/**
 * kube-router's network-policy controller (`pkg/controllers/netpol`, v2.11, iptables mode,
 * without `--netpol-default-deny`), compiled from a snapshot: the filter table a node holds after
 * a full sync, as `iptables-save` prints it, and the ipsets that table names (`ipset restore`
 * input: each set's `create` line as kube-router writes it, then one `add` per member).
 *
 * What the controller writes, in its own order:
 * - `INPUT`/`FORWARD`/`OUTPUT` jump first to `KUBE-ROUTER-INPUT/FORWARD/OUTPUT`;
 *   `KUBE-ROUTER-INPUT` starts with RETURNs for the Service cluster IP range and for local
 *   NodePorts (TCP, UDP, SCTP);
 * - per local pod, `KUBE-POD-FW-<hash>`: `KUBE-NWPLCY-COMMON` (INVALID dropped, RELATED and
 *   ESTABLISHED accepted, some ICMP accepted), ACCEPT from a local address (the node), then
 *   `KUBE-NWPLCY-DEFAULT` (mark 0x10000) for a direction no policy isolates, a jump to each
 *   policy that selects the pod (`-d` the pod for ingress-only policies, `-s` for egress-only,
 *   none for both), then NFLOG and REJECT what no policy marked, the mark 0x10000 reset and mark
 *   0x20000 set;
 * - per policy, `KUBE-NWPLCY-<hash>`: per rule, a MARK 0x10000 and a RETURN for each
 *   (peer set, port) pair, matching the ipsets `KUBE-SRC-*` / `KUBE-DST-*`;
 * - the top chains jump to each local pod's chain (`-d` the pod: inbound; `-s` the pod:
 *   outbound; again under `physdev --physdev-is-bridged`), then to `KUBE-NWPLCY-TAIL`, which
 *   ACCEPTs what carries 0x20000.
 *
 * kube-router names chains after a hash that includes the sync's time (nanoseconds, base 10):
 * the compiler takes it as {@link KubeRouterOptions.syncVersion}. Where the controller iterates
 * a Go map (pods, policies, named-port numbers), the compiler takes the snapshot's order (named
 * ports: ascending numbers). A pod is local when its `spec.nodeName` is the node (kube-router
 * compares `status.hostIP` with the node's addresses, which agree on a running pod). Its known
 * departures from the API's semantics are reproduced, not corrected (docs/network-policy.md lists them).
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';
import type { Snapshot } from '../../model/kubernetes.js';
import type { Family } from '../../model/types.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import { printIptablesSave } from '../../iptables/print/save.js';
import type { DefaultedPolicy, DefaultedPort, ValidateOptions } from '../../netpol/index.js';
import { hash16 } from './hash.js';
import { clusterView, namespacesSelected, podsIn } from './view.js';
import type { ClusterView, ViewPod } from './view.js';

/** Options of the kube-router compiler. */
export interface KubeRouterOptions extends ValidateOptions {
  /** The sync version hashed into chain names (kube-router: the sync's start time in ns). Default `"0"`. */
  readonly syncVersion?: string;
  /** `--service-cluster-ip-range` (default `10.96.0.0/12`). */
  readonly serviceClusterIpRange?: readonly string[];
  /** `--service-node-port-range` (default `30000-32767`). */
  readonly serviceNodePortRange?: string;
  /** The families kube-router runs (`--enable-ipv4`, `--enable-ipv6`); default IPv4 only. */
  readonly families?: readonly Family[];
}

/** What kube-router leaves on the node. */
export interface KubeRouterRules {
  /** `iptables-save -t filter` (empty when IPv4 is off). */
  readonly rules: string;
  /** `ip6tables-save -t filter` (empty when IPv6 is off). */
  readonly rules6: string;
  /** The sets the rules name: `create NAME TYPE timeout 0` as kube-router creates them, then one `add` per member (`ipset restore` reads it, so does `Netns`). */
  readonly ipsets: string;
  readonly warnings: readonly string[];
}

/** The chains kube-router writes in either mode (its top-level chains, and the shared policy chains). @internal */
export const INPUT = 'KUBE-ROUTER-INPUT';
/** @internal */
export const FORWARD = 'KUBE-ROUTER-FORWARD';
/** @internal */
export const OUTPUT = 'KUBE-ROUTER-OUTPUT';
/** @internal */
export const DEFAULT = 'KUBE-NWPLCY-DEFAULT';
/** @internal */
export const COMMON = 'KUBE-NWPLCY-COMMON';
/** @internal */
export const TAIL = 'KUBE-NWPLCY-TAIL';
const TOP: readonly (readonly [string, string])[] = [['INPUT', INPUT], ['FORWARD', FORWARD], ['OUTPUT', OUTPUT]];

/** `IPv4` / `IPv6`, as `v1core.IPFamily` spells it in hashes. */
/** @internal */
export const FAMILY_NAME: Readonly<Record<Family, string>> = { 4: 'IPv4', 6: 'IPv6' };

/** A comment quoted for `iptables-restore` (backslash and double quote escaped). */
function q(s: string): string {
  return `"${s.replace(/(["\\])/g, '\\$1')}"`;
}

/** `clampComment`: control characters removed, at most 120 bytes. @internal */
export function clamp(s: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  const bytes = new TextEncoder().encode(clean);
  if (bytes.length <= 120) return clean;
  return new TextDecoder().decode(bytes.slice(0, 120)).replace(/\uFFFD$/, '');
}

/** `idComment`: `<namespace>/<name> <kind>`, clamped. @internal */
export const idComment = (ns: string, name: string, kind: string): string => clamp(`${ns}/${name} ${kind}`);

/** `ipSetName`: IPv6 sets carry the `inet6:` prefix. */
const setName = (name: string, family: Family): string => (family === 6 && !name.startsWith('inet6:') ? `inet6:${name}` : name);

const isV4 = (ip: string): boolean => !ip.includes(':');
/** @internal */
export const ofFamily = (ip: string, family: Family): boolean => (family === 4 ? isV4(ip) : !isV4(ip));

interface IpsetState {
  readonly name: string;
  readonly type: 'hash:ip' | 'hash:net';
  entries: string[][];
}

/** @internal */
export interface Endpoints {
  ips: Record<Family, string[]>;
  readonly protocol: string;
  readonly port: string;
}

/** name → protocol → port → endpoints, with kube-router's aliasing of a pod's address lists. */
type NamedPorts = Map<string, Map<string, Map<string, Endpoints>>>;

/**
 * `grabNamedPortFromPod`. The first pod that declares a (name, protocol, port) lends its own
 * address lists to the entry; later pods append to those lists. All entries the first pod
 * created share its lists, so a later pod's address lands in all of them (kube-router's Go map
 * aliasing, reproduced).
 */
function grabNamedPorts(pod: ViewPod, into: NamedPorts): void {
  const ips: Record<Family, string[]> = { 4: [], 6: [] };
  for (const ip of pod.ips) (isV4(ip) ? ips[4] : ips[6]).push(ip);
  for (const c of pod.pod.spec?.containers ?? []) {
    for (const port of c.ports ?? []) {
      const name = port.name ?? '';
      const protocol = port.protocol ?? 'TCP';
      const num = String(port.containerPort);
      let byProto = into.get(name);
      if (!byProto) into.set(name, (byProto = new Map()));
      let byPort = byProto.get(protocol);
      if (!byPort) byProto.set(protocol, (byPort = new Map()));
      const eps = byPort.get(num);
      if (!eps) byPort.set(num, { ips, protocol, port: num });
      else {
        eps.ips[4] = [...eps.ips[4], ...ips[4]];
        eps.ips[6] = [...eps.ips[6], ...ips[6]];
      }
    }
  }
}

/** @internal */
export interface ProtocolAndPort {
  readonly protocol: string;
  readonly port: string;
  readonly endport: string;
}

/** `processNetworkPolicyPorts`: numeric ports, and named ports resolved to endpoints. */
function processPorts(ports: readonly DefaultedPort[], named: NamedPorts): { numeric: ProtocolAndPort[]; named: Endpoints[] } {
  const numeric: ProtocolAndPort[] = [];
  const namedOut: Endpoints[] = [];
  for (const p of ports) {
    const protocol = p.protocol;
    if (p.port === undefined) numeric.push({ protocol, port: '', endport: '' });
    else if (typeof p.port === 'number') {
      numeric.push({ protocol, port: String(p.port), endport: p.endPort !== undefined && p.endPort >= p.port ? String(p.endPort) : '' });
    } else {
      const byPort = named.get(p.port)?.get(protocol);
      // Go iterates this map in random order; ascending port numbers here.
      if (byPort) for (const k of [...byPort.keys()].sort((a, b) => Number(a) - Number(b))) namedOut.push(byPort.get(k)!);
    }
  }
  return { numeric, named: namedOut };
}

/** One rule of a policy as the controller holds it (`ingressRule` / `egressRule`). @internal */
export interface Rule {
  readonly matchAllPorts: boolean;
  readonly ports: ProtocolAndPort[];
  readonly named: Endpoints[];
  readonly matchAllPeers: boolean;
  readonly peerPods: ViewPod[];
  readonly ipBlocks: Record<Family, string[][]>;
}

/** A policy as the controller holds it (`networkPolicyInfo`). @internal */
export interface PolicyInfo {
  readonly policy: DefaultedPolicy;
  readonly type: 'ingress' | 'egress' | 'both';
  /** Keyed by `status.podIP`, as kube-router keys them. */
  readonly targets: Map<string, ViewPod>;
  readonly ingress: Rule[];
  readonly egress: Rule[];
}

/** `evalPodPeer`. */
function peerPods(view: ClusterView, policy: DefaultedPolicy, peer: NonNullable<DefaultedPolicy['ingressRules'][number]['peers']>[number]): ViewPod[] {
  if (peer.namespaceSelector) return namespacesSelected(view, peer.namespaceSelector).flatMap((ns) => podsIn(view, ns, peer.podSelector));
  if (peer.podSelector) return podsIn(view, policy.namespace, peer.podSelector);
  return [];
}

/** `evalIPBlockPeer`: `/0` split in two halves (hash:net refuses /0), except entries `nomatch`. */
function ipBlockEntries(peer: NonNullable<DefaultedPolicy['ingressRules'][number]['peers']>[number]): Record<Family, string[][]> {
  const out: Record<Family, string[][]> = { 4: [], 6: [] };
  if (peer.podSelector || peer.namespaceSelector || !peer.ipBlock) return out;
  const { cidr, except } = peer.ipBlock;
  const family: Family = cidr.includes(':') ? 6 : 4;
  const zero = family === 4 ? ['0.0.0.0/1', '128.0.0.0/1'] : ['2000::/3', 'fd00::/8'];
  const add = (c: string, nomatch: boolean): void => {
    const extra = nomatch ? ['nomatch'] : [];
    if (c.endsWith('/0')) for (const z of zero) out[family].push([z, 'timeout', '0', ...extra]);
    else out[family].push([c, 'timeout', '0', ...extra]);
  };
  add(cidr, false);
  for (const e of except ?? []) add(e, true);
  return out;
}

/** `buildNetworkPoliciesInfo`: the policies, their target pods, peers and ports. @internal */
export function buildPolicies(view: ClusterView): PolicyInfo[] {
  return view.policies.map((policy): PolicyInfo => {
    const type = policy.ingress && policy.egress ? 'both' : policy.egress ? 'egress' : 'ingress';
    const targets = new Map<string, ViewPod>();
    const namedIngress: NamedPorts = new Map();
    for (const p of podsIn(view, policy.namespace, policy.podSelector)) {
      targets.set(p.ip, p);
      grabNamedPorts(p, namedIngress);
    }
    const ingress = policy.ingressRules.map((r): Rule => {
      const ipBlocks: Record<Family, string[][]> = { 4: [], 6: [] };
      const pods: ViewPod[] = [];
      for (const peer of r.peers ?? []) {
        pods.push(...peerPods(view, policy, peer));
        const b = ipBlockEntries(peer);
        ipBlocks[4].push(...b[4]);
        ipBlocks[6].push(...b[6]);
      }
      const ports = r.ports === null ? { numeric: [], named: [] } : processPorts(r.ports, namedIngress);
      return { matchAllPorts: r.ports === null, ports: ports.numeric, named: ports.named, matchAllPeers: r.peers === null, peerPods: pods, ipBlocks };
    });
    const egress = policy.egressRules.map((r): Rule => {
      const ipBlocks: Record<Family, string[][]> = { 4: [], 6: [] };
      const pods: ViewPod[] = [];
      const named: NamedPorts = new Map();
      if (r.peers === null) {
        // "match all dst but match some named dst-port": the names resolve on the policy's namespace.
        if ((r.ports ?? []).some((p) => typeof p.port === 'string')) for (const p of podsIn(view, policy.namespace, {})) grabNamedPorts(p, named);
      } else {
        for (const peer of r.peers) {
          for (const p of peerPods(view, policy, peer)) {
            pods.push(p);
            grabNamedPorts(p, named);
          }
          const b = ipBlockEntries(peer);
          ipBlocks[4].push(...b[4]);
          ipBlocks[6].push(...b[6]);
        }
      }
      const ports = r.ports === null ? { numeric: [], named: [] } : processPorts(r.ports, named);
      return { matchAllPorts: r.ports === null, ports: ports.numeric, named: ports.named, matchAllPeers: r.peers === null, peerPods: pods, ipBlocks };
    });
    return { policy, type, targets, ingress, egress };
  });
}

class FamilyWriter {
  readonly lines: string[] = [];
  readonly sets = new Map<string, IpsetState>();
  readonly family: Family;
  constructor(family: Family) {
    this.family = family;
  }

  refreshSet(name: string, entries: string[][], type: 'hash:ip' | 'hash:net'): void {
    const full = setName(name, this.family);
    const s = this.sets.get(full);
    if (s) s.entries = entries;
    else this.sets.set(full, { name: full, type, entries });
  }

  hashIPEntries(ips: readonly string[]): string[][] {
    return ips.map((ip) => [ip, 'timeout', '0']);
  }

  /** `appendRuleToPolicyChain`: a MARK and a RETURN with the same matches. */
  policyRule(chain: string, comment: string, src: string, dst: string, protocol: string, port: string, endport: string): void {
    let args = `-A ${chain} -m comment --comment ${q(comment)}`;
    if (src) args += ` -m set --match-set ${setName(src, this.family)} src`;
    if (dst) args += ` -m set --match-set ${setName(dst, this.family)} dst`;
    if (protocol) args += ` -p ${protocol}`;
    if (port) args += ` --dport ${endport ? `${port}:${endport}` : port}`;
    this.lines.push(`${args} -j MARK --set-xmark 0x10000/0x10000`);
    this.lines.push(`${args} -m mark --mark 0x10000/0x10000 -j RETURN`);
  }
}

/** @internal */
export function podIPs(pods: readonly ViewPod[], family: Family): string[] {
  // getIPsFromPods: the pod's first address of the family.
  const out: string[] = [];
  for (const p of pods) {
    const ip = p.ips.find((x) => ofFamily(x, family));
    if (ip !== undefined) out.push(ip);
  }
  return out;
}

/** @internal */
export const policyChainName = (p: DefaultedPolicy, version: string, family: Family): string => `KUBE-NWPLCY-${hash16(p.namespace + p.name + version + FAMILY_NAME[family])}`;
/** @internal */
export const podChainName = (pod: ViewPod, version: string): string => `KUBE-POD-FW-${hash16(pod.namespace + pod.name + version)}`;

/**
 * The name of the chain kube-router writes for a pod (`KUBE-POD-FW-…`), for a sync version (see
 * {@link KubeRouterOptions.syncVersion}): what a trace of its rules names.
 */
export function kubeRouterPodChain(namespace: string, name: string, syncVersion = '0'): string {
  return `KUBE-POD-FW-${hash16(namespace + name + syncVersion)}`;
}

function writePolicyChains(w: FamilyWriter, policies: readonly PolicyInfo[], version: string): void {
  const fam = w.family;
  const F = FAMILY_NAME[fam];
  for (const info of policies) {
    const { policy: p } = info;
    const chain = policyChainName(p, version, fam);
    w.lines.push(`:${chain} - [0:0]`);
    const targetIPs = [...info.targets.values()].flatMap((t) => t.ips.filter((ip) => ofFamily(ip, fam)));
    const c = (kind: string): string => idComment(p.namespace, p.name, kind);
    if (info.type === 'both' || info.type === 'ingress') {
      const dstSet = `KUBE-DST-${hash16(p.namespace + p.name + F)}`;
      w.refreshSet(dstSet, w.hashIPEntries(targetIPs), 'hash:ip');
      info.ingress.forEach((r, i) => {
        if (r.peerPods.length !== 0) {
          const srcSet = `KUBE-SRC-${hash16(`${p.namespace}${p.name}ingressrule${i}${F}pod`)}`;
          w.refreshSet(srcSet, w.hashIPEntries(podIPs(r.peerPods, fam)), 'hash:ip');
          for (const pp of r.ports) w.policyRule(chain, c('ingress pods'), srcSet, dstSet, pp.protocol, pp.port, pp.endport);
          r.named.forEach((ep, k) => {
            const npSet = `KUBE-DST-${hash16(`${p.namespace}${p.name}ingressrule${i}${k}${F}namedport`)}`;
            w.refreshSet(npSet, w.hashIPEntries(ep.ips[fam]), 'hash:ip');
            w.policyRule(chain, c('ingress pods np'), srcSet, npSet, ep.protocol, ep.port, '');
          });
          if (r.ports.length === 0 && r.named.length === 0) w.policyRule(chain, c('ingress pods'), srcSet, dstSet, '', '', '');
        }
        if (r.matchAllPeers && !r.matchAllPorts) {
          for (const pp of r.ports) w.policyRule(chain, c('ingress any'), '', dstSet, pp.protocol, pp.port, pp.endport);
          r.named.forEach((ep, k) => {
            const npSet = `KUBE-DST-${hash16(`${p.namespace}${p.name}ingressrule${i}${k}${F}namedport`)}`;
            w.refreshSet(npSet, w.hashIPEntries(ep.ips[fam]), 'hash:ip');
            w.policyRule(chain, c('ingress any np'), '', npSet, ep.protocol, ep.port, '');
          });
        }
        if (r.matchAllPeers && r.matchAllPorts) w.policyRule(chain, c('ingress any'), '', dstSet, '', '', '');
        if (r.ipBlocks[fam].length !== 0) {
          const blockSet = `KUBE-SRC-${hash16(`${p.namespace}${p.name}ingressrule${i}${F}ipblock`)}`;
          w.refreshSet(blockSet, r.ipBlocks[fam], 'hash:net');
          if (!r.matchAllPorts) {
            for (const pp of r.ports) w.policyRule(chain, c('ingress cidr'), blockSet, dstSet, pp.protocol, pp.port, pp.endport);
            r.named.forEach((ep, k) => {
              const npSet = `KUBE-DST-${hash16(`${p.namespace}${p.name}ingressrule${i}${k}${F}namedport`)}`;
              w.refreshSet(npSet, w.hashIPEntries(ep.ips[fam]), 'hash:net');
              w.policyRule(chain, c('ingress cidr np'), blockSet, npSet, ep.protocol, ep.port, '');
            });
          } else w.policyRule(chain, c('ingress cidr'), blockSet, dstSet, '', '', '');
        }
      });
    }
    if (info.type === 'both' || info.type === 'egress') {
      const srcSet = `KUBE-SRC-${hash16(p.namespace + p.name + F)}`;
      w.refreshSet(srcSet, w.hashIPEntries(targetIPs), 'hash:ip');
      info.egress.forEach((r, i) => {
        if (r.peerPods.length !== 0) {
          const dstSet = `KUBE-DST-${hash16(`${p.namespace}${p.name}egressrule${i}${F}pod`)}`;
          w.refreshSet(dstSet, w.hashIPEntries(podIPs(r.peerPods, fam)), 'hash:ip');
          for (const pp of r.ports) w.policyRule(chain, c('egress pods'), srcSet, dstSet, pp.protocol, pp.port, pp.endport);
          r.named.forEach((ep, k) => {
            const npSet = `KUBE-DST-${hash16(`${p.namespace}${p.name}egressrule${i}${k}${F}namedport`)}`;
            w.refreshSet(npSet, w.hashIPEntries(ep.ips[fam]), 'hash:ip');
            w.policyRule(chain, c('egress pods np'), srcSet, npSet, ep.protocol, ep.port, '');
          });
          if (r.ports.length === 0 && r.named.length === 0) w.policyRule(chain, c('egress pods'), srcSet, dstSet, '', '', '');
        }
        if (r.matchAllPeers && !r.matchAllPorts) {
          for (const pp of r.ports) w.policyRule(chain, c('egress any'), srcSet, '', pp.protocol, pp.port, pp.endport);
          for (const ep of r.named) w.policyRule(chain, c('egress any np'), srcSet, '', ep.protocol, ep.port, '');
        }
        if (r.matchAllPeers && r.matchAllPorts) w.policyRule(chain, c('egress any'), srcSet, '', '', '', '');
        if (r.ipBlocks[fam].length !== 0) {
          const blockSet = `KUBE-DST-${hash16(`${p.namespace}${p.name}egressrule${i}${F}ipblock`)}`;
          w.refreshSet(blockSet, r.ipBlocks[fam], 'hash:net');
          if (!r.matchAllPorts) for (const pp of r.ports) w.policyRule(chain, c('egress cidr'), srcSet, blockSet, pp.protocol, pp.port, pp.endport);
          else w.policyRule(chain, c('egress cidr'), srcSet, blockSet, '', '', '');
        }
      });
    }
  }
}

function writePodChains(w: FamilyWriter, localPods: readonly ViewPod[], policies: readonly PolicyInfo[], version: string): void {
  const fam = w.family;
  for (const pod of localPods) {
    const ip = pod.ips.find((x) => ofFamily(x, fam));
    if (ip === undefined) continue;
    const chain = podChainName(pod, version);
    w.lines.push(`:${chain} - [0:0]`);
    // setupPodNetpolRules: each rule inserted at the top, so the chain holds them in reverse.
    let hasIngress = false;
    let hasEgress = false;
    for (const info of policies) {
      if (!info.targets.has(pod.ip)) continue;
      const comment = q(idComment(info.policy.namespace, info.policy.name, 'policy'));
      const target = policyChainName(info.policy, version, fam);
      if (info.type === 'both') {
        hasIngress = hasEgress = true;
        w.lines.push(`-I ${chain} 1 -m comment --comment ${comment} -j ${target}`);
      } else if (info.type === 'ingress') {
        hasIngress = true;
        w.lines.push(`-I ${chain} 1 -d ${ip} -m comment --comment ${comment} -j ${target}`);
      } else {
        hasEgress = true;
        w.lines.push(`-I ${chain} 1 -s ${ip} -m comment --comment ${comment} -j ${target}`);
      }
    }
    if (!hasIngress) w.lines.push(`-I ${chain} 1 -d ${ip} -m comment --comment "default ingress" -j ${DEFAULT}`);
    if (!hasEgress) w.lines.push(`-I ${chain} 1 -s ${ip} -m comment --comment "default egress" -j ${DEFAULT}`);
    w.lines.push(`-I ${chain} 1 -m comment --comment "from local node" -m addrtype --src-type LOCAL -d ${ip} -j ACCEPT`);
    w.lines.push(`-I ${chain} 1 -m comment --comment "common netpol rules" -j ${COMMON}`);
    // interceptPodInboundTraffic, interceptPodOutboundTraffic
    const inC = q(idComment(pod.namespace, pod.name, 'in'));
    const outC = q(idComment(pod.namespace, pod.name, 'out'));
    w.lines.push(`-A ${FORWARD} -m comment --comment ${inC} -d ${ip} -j ${chain}`);
    w.lines.push(`-A ${OUTPUT} -m comment --comment ${inC} -d ${ip} -j ${chain}`);
    w.lines.push(`-A ${FORWARD} -m physdev --physdev-is-bridged -m comment --comment ${inC} -d ${ip} -j ${chain}`);
    for (const [, top] of TOP) w.lines.push(`-A ${top} -m comment --comment ${outC} -s ${ip} -j ${chain}`);
    w.lines.push(`-A ${FORWARD} -m physdev --physdev-is-bridged -m comment --comment ${outC} -s ${ip} -j ${chain}`);
    // dropUnmarkedTrafficRules
    w.lines.push(`-A ${chain} -m comment --comment ${q(idComment(pod.namespace, pod.name, 'log-drop'))} -m mark ! --mark 0x10000/0x10000 -j NFLOG --nflog-group 100 -m limit --limit 10/minute --limit-burst 10`);
    w.lines.push(`-A ${chain} -m comment --comment ${q(idComment(pod.namespace, pod.name, 'reject'))} -m mark ! --mark 0x10000/0x10000 -j REJECT`);
    w.lines.push(`-A ${chain} -j MARK --set-mark 0/0x10000`);
    w.lines.push(`-A ${chain} -m comment --comment "set netpol-ok mark" -j MARK --set-mark 0x20000/0x20000`);
  }
}

/** `addUUIDForRuleSpec`: the comment gets ` - ` and 16 characters of the hash of chain and rule. */
function withUuid(chain: string, spec: readonly string[]): string[] {
  const uuid = hash16(chain + spec.join(''));
  return spec.map((s, i) => (spec[i - 1] === '--comment' ? `${s} - ${uuid}` : s));
}

function argv(spec: readonly string[]): string {
  return spec.map((s) => (/[\s"\\]/.test(s) || s === '' ? q(s) : s)).join(' ');
}

const ICMP: Readonly<Record<Family, readonly (readonly [string, string])[]>> = {
  4: [['echo-request', 'allow icmp echo requests'], ['destination-unreachable', 'allow icmp destination unreachable messages'], ['time-exceeded', 'allow icmp time exceeded messages']],
  6: [
    ['echo-request', 'allow icmp echo requests'], ['destination-unreachable', 'allow icmp destination unreachable messages'], ['time-exceeded', 'allow icmp time exceeded messages'],
    ['neighbor-solicitation', 'allow icmp neighbor solicitation messages'], ['neighbor-advertisement', 'allow icmp neighbor advertisement messages'], ['echo-reply', 'allow icmp echo reply messages'],
  ],
};

function validateNodePortRange(text: string): string {
  const m = /^([0-9]+)[:-]([0-9]+)$/.exec(text);
  const a = m ? Number(m[1]) : NaN;
  const b = m ? Number(m[2]) : NaN;
  if (!m || a > 65535 || b > 65535 || a >= b) {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `serviceNodePortRange "${text}" is not a range like 30000-32767 (kube-router's --service-node-port-range)`));
  }
  return `${a}:${b}`;
}

/** kube-router's flags, checked, with their defaults. @internal */
export function kubeRouterSettings(node: unknown, options: KubeRouterOptions, defaultFamilies: readonly Family[]): { version: string; families: readonly Family[]; ranges: readonly string[]; nodePorts: string } {
  expectArgument(node, 'string', 'node');
  expectArgument(options, 'object', 'options');
  expectArgument(options.syncVersion, ['string', 'undefined'], 'options.syncVersion');
  expectArgument(options.serviceNodePortRange, ['string', 'undefined'], 'options.serviceNodePortRange');
  expectArgument(options.serviceClusterIpRange, ['array', 'undefined'], 'options.serviceClusterIpRange');
  for (const [i, r] of (options.serviceClusterIpRange ?? []).entries()) {
    if (typeof r !== 'string' || !/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(r)) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `options.serviceClusterIpRange[${i}] must be a CIDR (e.g. 10.96.0.0/12), not ${JSON.stringify(String(r))}`));
  }
  expectArgument(options.families, ['array', 'undefined'], 'options.families');
  for (const f of options.families ?? []) if (f !== 4 && f !== 6) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `options.families may hold 4 and 6, not ${JSON.stringify(String(f))}`));
  const version = options.syncVersion ?? '0';
  const families = options.families ?? defaultFamilies;
  const ranges = options.serviceClusterIpRange ?? ['10.96.0.0/12'];
  const nodePorts = validateNodePortRange(options.serviceNodePortRange ?? '30000-32767');
  return { version, families, ranges, nodePorts };
}

/**
 * The filter table and ipsets kube-router's network-policy controller leaves on `node` after a
 * full sync, compiled from the snapshot.
 *
 * @example
 * ```ts
 * const { rules, ipsets } = compileKubeRouter(snapshot, 'worker-1');
 * const node = new Netns({ rules, ipsets, ipForward: true });
 * ```
 */
export function compileKubeRouter(snapshot: Pick<Snapshot, 'namespaces' | 'pods' | 'networkPolicies'>, node: string, options: KubeRouterOptions = {}): KubeRouterRules {
  const { version, families, ranges, nodePorts } = kubeRouterSettings(node, options, [4]);
  const view = clusterView(snapshot, options);
  const policies = buildPolicies(view);
  const localPods = view.pods.filter((p) => p.node === node);
  const out: Record<Family, string> = { 4: '', 6: '' };
  const sets: IpsetState[] = [];
  for (const fam of families) {
    const w = new FamilyWriter(fam);
    w.lines.push('*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]');
    for (const c of [INPUT, FORWARD, OUTPUT, DEFAULT, COMMON, TAIL]) w.lines.push(`:${c} - [0:0]`);
    // ensureTopLevelChains (iptables commands, each at its position).
    for (const [builtin, custom] of TOP) w.lines.push(`-A ${builtin} ${argv(withUuid(builtin, ['-m', 'comment', '--comment', 'kube-router netpol', '-j', custom]))}`);
    for (const r of ranges.filter((x) => ofFamily(x, fam))) {
      w.lines.push(`-A ${INPUT} ${argv(withUuid(INPUT, ['-m', 'comment', '--comment', 'allow traffic to primary/secondary cluster IP range', '-d', r, '-j', 'RETURN']))}`);
    }
    for (const proto of ['tcp', 'udp', 'sctp']) {
      w.lines.push(`-A ${INPUT} ${argv(withUuid(INPUT, ['-p', proto, '-m', 'comment', '--comment', `allow LOCAL ${proto.toUpperCase()} traffic to node ports`, '-m', 'addrtype', '--dst-type', 'LOCAL', '-m', 'multiport', '--dports', nodePorts, '-j', 'RETURN']))}`);
    }
    // ensureDefaultNetworkPolicyChain, ensureCommonPolicyChain (comments with literal quotes), the tail.
    w.lines.push(`-A ${DEFAULT} -j MARK -m comment --comment "rule to mark traffic matching a network policy" --set-xmark 0x10000/0x10000`);
    w.lines.push(`-A ${COMMON} -m comment --comment ${q('"rule to drop invalid state for pod"')} -m conntrack --ctstate INVALID -j DROP`);
    w.lines.push(`-A ${COMMON} -m comment --comment ${q('"rule for stateful firewall for pod"')} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`);
    for (const [type, comment] of ICMP[fam]) {
      w.lines.push(fam === 4 ? `-A ${COMMON} -m comment --comment ${q(comment)} -p icmp --icmp-type ${type} -j ACCEPT` : `-A ${COMMON} -m comment --comment ${q(comment)} -p ipv6-icmp --icmpv6-type ${type} -j ACCEPT`);
    }
    w.lines.push(`-A ${TAIL} -m comment --comment "accept netpol-ok" -m mark --mark 0x20000/0x20000 -j ACCEPT`);
    // The sync's restore: policy chains, pod chains, then the tail jump and the explicit ACCEPT last.
    writePolicyChains(w, policies, version);
    writePodChains(w, localPods, policies, version);
    for (const [, top] of TOP) w.lines.push(`-A ${top} -m comment --comment "rule to explicitly handle traffic for network policies ACCEPT/REJECT decision" -j ${TAIL}`);
    for (const [, top] of TOP) w.lines.push(`-A ${top} -m comment --comment "rule to explicitly ACCEPT traffic that comply to network policies" -m mark --mark 0x20000/0x20000 -j ACCEPT`);
    w.lines.push('COMMIT', '');
    const parsed = parseIptablesSave(w.lines.join('\n'), { family: fam });
    const errors = parsed.diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) throw new NetfilterSimError(errors);
    out[fam] = printIptablesSave(parsed.ruleset);
    sets.push(...w.sets.values());
  }
  sets.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const ipsets = sets.map((s) => {
    const family = s.name.startsWith('inet6:') ? ' family inet6' : '';
    // `ipset restore -exist`: adding a member twice keeps one, with the last add's nomatch flag
    // (the kernel's mtype_add overwrites an existing element's flags under IPSET_FLAG_EXIST).
    const byMember = new Map<string, string[]>();
    for (const e of s.entries) byMember.set(e[0]!, e);
    return [`create ${s.name} ${s.type} timeout 0${family}`, ...[...byMember.values()].map((e) => `add ${s.name} ${e.join(' ')}`)].join('\n') + '\n';
  }).join('');
  return { rules: out[4], rules6: out[6], ipsets, warnings: view.warnings };
}
