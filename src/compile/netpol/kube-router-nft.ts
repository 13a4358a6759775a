/**
 * kube-router's network-policy controller in its nftables mode (`--use-nftables-for-netpol`,
 * `pkg/controllers/netpol/npc_nftables.go`, without `--netpol-default-deny`), compiled from a
 * snapshot: the tables `ip kube-router-filter-ipv4` and `ip6 kube-router-filter-ipv6` a node holds
 * after a full sync, as `nft list ruleset` lists them (`nft -f` reads them back).
 *
 * The policies, their target pods, peers and ports are what the iptables mode computes
 * ({@link buildPolicies} in `kube-router.ts`); only how they are written differs:
 * - base chains `KUBE-ROUTER-INPUT/FORWARD/OUTPUT` at the input, forward and output hooks, type
 *   filter, priority `filter`: RETURNs for the Service cluster IP range and local NodePorts
 *   (input), a jump per local pod (`daddr` the pod in forward and output, `saddr` the pod in all
 *   three), then `KUBE-NWPLCY-TAIL` and an accept of mark 0x20000;
 * - named sets instead of ipsets: `KUBE-SRC-*` / `KUBE-DST-*` of type `ipv4_addr`/`ipv6_addr`,
 *   interval sets (`flags interval`) for ipBlocks; an ipBlock's `except` CIDRs go to a second
 *   interval set, and the rule's ipBlock matches move to a sub-chain that first returns for them;
 * - a policy chain's rule marks and returns in one statement
 *   (`meta mark set meta mark | 0x00010000 return`); a protocol without a port is `meta l4proto`;
 * - per local pod, `KUBE-POD-FW-<hash>`: the common chain, accept from a local address, the
 *   policy jumps, the default chain for an uncovered direction (egress before ingress), then log
 *   (group 100) and reject what carries no 0x10000, clear it and set 0x20000.
 *
 * Each policy's chain and sets are one transaction per family; nft refuses a transaction whose
 * interval set holds overlapping CIDRs (two ipBlocks of a rule where one contains the other).
 * kube-router then leaves that policy out and fails its pods closed: their chains count the
 * direction as covered but have no jump to the policy. The compiler does the same and says so in
 * a warning.
 *
 * Where the controller iterates a Go map (the top-level chains, local pods, families) the compiler
 * takes a fixed order: input, forward, output; the snapshot's pods; IPv4 then IPv6. Objects are
 * listed in the order the controller creates them.
 *
 * @module
 */
import type { Snapshot } from '../../model/kubernetes.js';
import type { Family } from '../../model/types.js';
import { cidrContains, parseCidr } from '../../model/address.js';
import { formatNftRuleset } from '../../nftables/index.js';
import { hash16 } from './hash.js';
import { COMMON, DEFAULT, FAMILY_NAME, FORWARD, INPUT, OUTPUT, TAIL, buildPolicies, clamp, idComment, kubeRouterSettings, ofFamily, podChainName, podIPs, policyChainName } from './kube-router.js';
import type { Endpoints, KubeRouterOptions, PolicyInfo, ProtocolAndPort } from './kube-router.js';
import { clusterView } from './view.js';
import type { ViewPod } from './view.js';

/** Options of the nftables-mode compiler: those of the iptables mode. Families default to IPv4, and IPv6 too when a pod has an IPv6 address. */
export type KubeRouterNftOptions = KubeRouterOptions;

/** What kube-router's nftables mode leaves on the node. */
export interface KubeRouterNftRules {
  /** The tables, as `nft list ruleset` lists them. */
  readonly nft: string;
  readonly warnings: readonly string[];
}

/** The table of each family. */
export const KUBE_ROUTER_NFT_TABLES: Readonly<Record<Family, string>> = { 4: 'kube-router-filter-ipv4', 6: 'kube-router-filter-ipv6' };

const LOCAL_PODS = 'kube-router-local-pods';
const TOP: readonly (readonly [string, string])[] = [[INPUT, 'input'], [FORWARD, 'forward'], [OUTPUT, 'output']];
const MARK_ACCEPT = 'meta mark and 0x20000 == 0x20000 counter accept';

/** `utils.CommonICMPRules`, as the nft mode writes them (protocol, type). */
const ICMP: Readonly<Record<Family, readonly (readonly [string, string])[]>> = {
  4: [['icmp', 'echo-request'], ['icmp', 'destination-unreachable'], ['icmp', 'time-exceeded']],
  6: [['icmpv6', 'echo-request'], ['icmpv6', 'destination-unreachable'], ['icmpv6', 'time-exceeded'], ['icmpv6', 'nd-neighbor-solicit'], ['icmpv6', 'nd-neighbor-advert'], ['icmpv6', 'echo-reply']],
};

const quote = (s: string): string => `"${s}"`;

/** A comment as knftables passes it: nft reads a double-quoted string; a double quote cannot be in one, so it is dropped. */
const comment = (s: string): string => `comment ${quote(s.replace(/"/g, ''))}`;

interface NftSet {
  readonly name: string;
  readonly interval: boolean;
  readonly comment: string;
  elements: string[];
}

interface NftChain {
  readonly name: string;
  readonly header: string[];
  readonly rules: string[];
}

/** One family's table as the controller's transactions leave it: objects in creation order. */
class TableWriter {
  readonly sets = new Map<string, NftSet>();
  readonly chains = new Map<string, NftChain>();
  readonly family: Family;
  readonly addr: 'ip' | 'ip6';
  constructor(family: Family) {
    this.family = family;
    this.addr = family === 4 ? 'ip' : 'ip6';
  }

  chain(name: string, header: string[] = []): NftChain {
    let c = this.chains.get(name);
    if (c === undefined) this.chains.set(name, (c = { name, header, rules: [] }));
    return c;
  }

  rule(chain: string, text: string, note: string | null): void {
    this.chain(chain).rules.push(note === null ? text : `${text} ${comment(note)}`);
  }

  /** `nftAddOrReplaceIPSet` / `nftAddOrReplaceIPBlockSet`: declared (kept at its first place), flushed, refilled. */
  set(name: string, elements: readonly string[], interval: boolean, note: string): void {
    const s = this.sets.get(name);
    const unique = [...new Set(elements)];
    if (s !== undefined) s.elements = unique;
    else this.sets.set(name, { name, interval, comment: note, elements: unique });
  }

  text(): string {
    const type = this.family === 4 ? 'ipv4_addr' : 'ipv6_addr';
    const table = KUBE_ROUTER_NFT_TABLES[this.family];
    const out = [`table ${this.addr} ${table} {`, `\t${comment(`rules for ${table}`)}`];
    for (const s of this.sets.values()) {
      out.push(`\tset ${s.name} {`, `\t\ttype ${type}`);
      if (s.interval) out.push('\t\tflags interval');
      out.push(`\t\t${comment(s.comment)}`);
      if (s.elements.length > 0) out.push(`\t\telements = { ${s.elements.join(', ')} }`);
      out.push('\t}');
    }
    for (const c of this.chains.values()) {
      out.push(`\tchain ${c.name} {`, ...c.header.map((h) => `\t\t${h}`), ...c.rules.map((r) => `\t\t${r}`), '\t}');
    }
    out.push('}', '');
    return out.join('\n');
  }
}

/** Whether two CIDRs of an interval set overlap without being the same (nft: "conflicting intervals specified"). */
function conflicting(cidrs: readonly string[], family: Family): [string, string] | null {
  const parsed = [...new Set(cidrs)].map((t) => ({ t, c: parseCidr(t, family) }));
  for (let i = 0; i < parsed.length; i++) {
    for (let j = i + 1; j < parsed.length; j++) {
      const a = parsed[i]!;
      const b = parsed[j]!;
      if (a.c === null || b.c === null) continue;
      if (cidrContains(a.c, b.c.addr) || cidrContains(b.c, a.c.addr)) return [a.t, b.t];
    }
  }
  return null;
}

/** `appendRuleToPolicyChainNft`: the matches, then mark 0x10000 and return in one rule. */
function policyRule(w: TableWriter, chain: string, note: string, src: string, dst: string, protocol: string, port: string, endport: string): void {
  const parts: string[] = [];
  if (src !== '') parts.push(`${w.addr} saddr @${src}`);
  if (dst !== '') parts.push(`${w.addr} daddr @${dst}`);
  const proto = protocol.toLowerCase() || (port !== '' ? 'tcp' : '');
  if (proto !== '') parts.push(port !== '' ? proto : `meta l4proto ${proto}`);
  if (port !== '') parts.push(`dport ${endport !== '' ? `${port}-${endport}` : port}`);
  parts.push('counter meta mark set meta mark or 0x10000 return');
  w.rule(chain, parts.join(' '), note);
}

/** The name of a rule's set: `KUBE-SRC-`/`KUBE-DST-` and 16 characters of the hash of what identifies it. */
const setName = (prefix: 'KUBE-SRC-' | 'KUBE-DST-', text: string): string => `${prefix}${hash16(text)}`;

/**
 * One policy's chain and sets in one family, as its transaction writes them; null (and a reason)
 * when nft would refuse the transaction.
 */
function policyObjects(info: PolicyInfo, version: string, family: Family): { apply: (w: TableWriter) => void } | { refused: string } {
  const p = info.policy;
  const F = FAMILY_NAME[family];
  const id = p.namespace + p.name;
  const chain = policyChainName(p, version, family);
  const c = (kind: string): string => idComment(p.namespace, p.name, kind);
  // The ipBlock sets first: a conflict refuses the whole transaction.
  for (const [dir, rules] of [['ingress', info.ingress], ['egress', info.egress]] as const) {
    if (dir === 'ingress' ? info.type === 'egress' : info.type === 'ingress') continue;
    for (const [i, r] of rules.entries()) {
      const entries = r.ipBlocks[family];
      for (const list of [entries.filter((e) => e[3] !== 'nomatch'), entries.filter((e) => e[3] === 'nomatch')]) {
        const bad = conflicting(list.map((e) => e[0]!), family);
        if (bad !== null) return { refused: `${dir} rule ${i}: its ipBlock set would hold ${bad[0]} and ${bad[1]}, which overlap (nft: conflicting intervals specified)` };
      }
    }
  }
  const targetIPs = [...info.targets.values()].flatMap((t) => t.ips.filter((ip) => ofFamily(ip, family)));
  return {
    apply(w: TableWriter): void {
      w.chain(chain, [comment(clamp(`netpol ${p.namespace}/${p.name}`))]);
      /** The ipBlock sets of a rule, and the chain its ipBlock matches go to (a sub-chain when there are excepts). */
      const ipBlockChain = (dir: 'ingress' | 'egress', i: number, entries: readonly string[][]): { set: string; chain: string } => {
        const prefix = dir === 'ingress' ? 'KUBE-SRC-' : 'KUBE-DST-';
        const set = setName(prefix, `${id}${dir}rule${i}${F}ipblock`);
        w.set(set, entries.filter((e) => e[3] !== 'nomatch').map((e) => e[0]!), true, 'netpol ipblock set');
        const excepts = entries.filter((e) => e[3] === 'nomatch').map((e) => e[0]!);
        if (excepts.length === 0) return { set, chain };
        const exceptSet = setName(prefix, `${id}${dir}rule${i}${F}ipblockexcept`);
        w.set(exceptSet, excepts, true, 'netpol ipblock except set');
        const sub = `KUBE-NWPLCY-${hash16(`${id}${dir}rule${i}${F}ipblockchain`)}`;
        w.chain(sub);
        w.rule(sub, `${w.addr} ${dir === 'ingress' ? 'saddr' : 'daddr'} @${exceptSet} counter return`, c(dir === 'ingress' ? 'except-src' : 'except-dst'));
        w.rule(chain, `counter jump ${sub}`, c('ipblock'));
        return { set, chain: sub };
      };
      const namedSet = (dir: 'ingress' | 'egress', i: number, k: number, ep: Endpoints): string => {
        const name = setName('KUBE-DST-', `${id}${dir}rule${i}${k}${F}namedport`);
        w.set(name, ep.ips[family], false, 'netpol set');
        return name;
      };
      const numbered = (target: string, note: string, src: string, dst: string, ports: readonly ProtocolAndPort[]): void => {
        for (const pp of ports) policyRule(w, target, note, src, dst, pp.protocol, pp.port, pp.endport);
      };
      if (info.type !== 'egress') {
        const dstSet = setName('KUBE-DST-', id + F);
        w.set(dstSet, targetIPs, false, 'netpol set');
        info.ingress.forEach((r, i) => {
          if (r.peerPods.length !== 0) {
            const srcSet = setName('KUBE-SRC-', `${id}ingressrule${i}${F}pod`);
            w.set(srcSet, podIPs(r.peerPods, family), false, 'netpol set');
            numbered(chain, c('ingress pods'), srcSet, dstSet, r.ports);
            r.named.forEach((ep, k) => policyRule(w, chain, c('ingress pods np'), srcSet, namedSet('ingress', i, k, ep), ep.protocol, ep.port, ''));
            if (r.ports.length === 0 && r.named.length === 0) policyRule(w, chain, c('ingress pods'), srcSet, dstSet, '', '', '');
          }
          if (r.matchAllPeers && !r.matchAllPorts) {
            numbered(chain, c('ingress any'), '', dstSet, r.ports);
            r.named.forEach((ep, k) => policyRule(w, chain, c('ingress any np'), '', namedSet('ingress', i, k, ep), ep.protocol, ep.port, ''));
          }
          if (r.matchAllPeers && r.matchAllPorts) policyRule(w, chain, c('ingress any'), '', dstSet, '', '', '');
          if (r.ipBlocks[family].length !== 0) {
            const b = ipBlockChain('ingress', i, r.ipBlocks[family]);
            if (!r.matchAllPorts) {
              numbered(b.chain, c('ingress cidr'), b.set, dstSet, r.ports);
              r.named.forEach((ep, k) => policyRule(w, b.chain, c('ingress cidr np'), b.set, namedSet('ingress', i, k, ep), ep.protocol, ep.port, ''));
            } else policyRule(w, b.chain, c('ingress cidr'), b.set, dstSet, '', '', '');
          }
        });
      }
      if (info.type !== 'ingress') {
        const srcSet = setName('KUBE-SRC-', id + F);
        w.set(srcSet, targetIPs, false, 'netpol set');
        info.egress.forEach((r, i) => {
          if (r.peerPods.length !== 0) {
            const dstSet = setName('KUBE-DST-', `${id}egressrule${i}${F}pod`);
            w.set(dstSet, podIPs(r.peerPods, family), false, 'netpol set');
            numbered(chain, c('egress pods'), srcSet, dstSet, r.ports);
            r.named.forEach((ep, k) => policyRule(w, chain, c('egress pods np'), srcSet, namedSet('egress', i, k, ep), ep.protocol, ep.port, ''));
            if (r.ports.length === 0 && r.named.length === 0) policyRule(w, chain, c('egress pods'), srcSet, dstSet, '', '', '');
          }
          if (r.matchAllPeers && !r.matchAllPorts) {
            numbered(chain, c('egress any'), srcSet, '', r.ports);
            for (const ep of r.named) policyRule(w, chain, c('egress any np'), srcSet, '', ep.protocol, ep.port, '');
          }
          if (r.matchAllPeers && r.matchAllPorts) policyRule(w, chain, c('egress any'), srcSet, '', '', '', '');
          if (r.ipBlocks[family].length !== 0) {
            const b = ipBlockChain('egress', i, r.ipBlocks[family]);
            if (!r.matchAllPorts) numbered(b.chain, c('egress cidr'), srcSet, b.set, r.ports);
            else policyRule(w, b.chain, c('egress cidr'), srcSet, b.set, '', '', '');
          }
        });
      }
    },
  };
}

/** `syncPodFirewallChains` for one pod and family. */
function podChain(w: TableWriter, pod: ViewPod, ip: string, policies: readonly PolicyInfo[], refused: ReadonlySet<PolicyInfo>, version: string, family: Family): void {
  const chain = podChainName(pod, version);
  const a = w.addr;
  w.chain(chain, [comment(clamp(`podfw ${pod.namespace}/${pod.name}`))]);
  w.rule(chain, `counter jump ${COMMON}`, 'common netpol rules');
  w.rule(chain, `fib saddr type local ${a} daddr ${ip} counter accept`, 'from local node');
  let ingress = false;
  let egress = false;
  for (const info of policies) {
    if (!info.targets.has(pod.ip)) continue;
    const target = policyChainName(info.policy, version, family);
    const note = idComment(info.policy.namespace, info.policy.name, 'policy');
    if (info.type !== 'egress') ingress = true;
    if (info.type !== 'ingress') egress = true;
    // A policy whose transaction failed: the direction counts as covered, the jump is left out (fail closed).
    if (refused.has(info)) continue;
    const match = info.type === 'both' ? '' : `${a} ${info.type === 'ingress' ? 'daddr' : 'saddr'} ${ip} `;
    w.rule(chain, `${match}counter jump ${target}`, note);
  }
  if (!egress) w.rule(chain, `${a} saddr ${ip} counter jump ${DEFAULT}`, 'default egress');
  if (!ingress) w.rule(chain, `${a} daddr ${ip} counter jump ${DEFAULT}`, 'default ingress');
  w.rule(chain, 'meta mark and 0x10000 == 0x0 limit rate 10/minute burst 10 packets log group 100', idComment(pod.namespace, pod.name, 'log-drop'));
  w.rule(chain, 'meta mark and 0x10000 == 0x0 counter reject', idComment(pod.namespace, pod.name, 'reject'));
  w.rule(chain, 'meta mark set meta mark and 0xfffeffff', 'clear netpol mark');
  w.rule(chain, 'meta mark set meta mark or 0x20000', 'set netpol-ok mark');
}

/**
 * The nftables tables kube-router's network-policy controller (nftables mode) leaves on `node`
 * after a full sync, compiled from the snapshot, as `nft list ruleset` lists them.
 *
 * @example
 * ```ts
 * const { nft } = compileKubeRouterNft(snapshot, 'worker-1');
 * const node = new Netns({ nft, ipForward: true });
 * ```
 */
export function compileKubeRouterNft(snapshot: Pick<Snapshot, 'namespaces' | 'pods' | 'networkPolicies'>, node: string, options: KubeRouterNftOptions = {}): KubeRouterNftRules {
  const dual = Array.isArray(snapshot?.pods) && snapshot.pods.some((p) => (p?.status?.podIPs ?? []).some((x: { ip?: unknown } | undefined) => typeof x?.ip === 'string' && x.ip.includes(':')));
  const { version, families, ranges, nodePorts } = kubeRouterSettings(node, options, dual ? [4, 6] : [4]);
  const view = clusterView(snapshot, options);
  const policies = buildPolicies(view);
  const localPods = view.pods.filter((p) => p.node === node);
  const warnings = [...view.warnings];
  const texts: string[] = [];
  for (const family of ([4, 6] as const).filter((f) => families.includes(f))) {
    const w = new TableWriter(family);
    // initTable, ensureTopLevelChains, ensureDefaultNetworkPolicyChain, ensureCommonPolicyChain.
    for (const [name, hook] of TOP) w.chain(name, [comment(`top level ${name} chain for kube-router`), `type filter hook ${hook} priority filter; policy accept;`]);
    w.chain(DEFAULT, [comment(`${DEFAULT} chain for kube-router`)]);
    w.rule(DEFAULT, 'counter meta mark set mark or 0x10000', 'mark netpol match');
    w.chain(COMMON, [comment(`${COMMON} chain for kube-router`)]);
    w.rule(COMMON, 'ct state invalid counter drop', 'drop invalid state');
    w.rule(COMMON, 'ct state established,related counter accept', 'accept established/related');
    for (const [proto, type] of ICMP[family]) w.rule(COMMON, `${proto} type ${type} counter accept`, `allow icmp ${type} messages`);
    // ensureDefaultTailChain (without --netpol-default-deny: the accept of 0x20000 only).
    w.chain(TAIL, [comment(`${TAIL} chain for kube-router`)]);
    w.set(LOCAL_PODS, [], false, 'programmed local pod IPs');
    w.rule(TAIL, MARK_ACCEPT, 'accept netpol-ok');
    // syncNetworkPolicyChains: one transaction per policy.
    const refused = new Set<PolicyInfo>();
    for (const info of policies) {
      const r = policyObjects(info, version, family);
      if ('refused' in r) {
        refused.add(info);
        warnings.push(`NetworkPolicy ${info.policy.namespace}/${info.policy.name}: nft refuses kube-router's IPv${family} transaction for it (${r.refused}); kube-router leaves the policy out and its pods fail closed in the directions it covers`);
      } else r.apply(w);
    }
    // syncPodFirewallChains, then syncTopLevelChainsAtomic.
    const jumps: [ViewPod, string][] = [];
    for (const pod of localPods) {
      const ip = pod.ips.find((x) => ofFamily(x, family));
      if (ip === undefined) continue;
      podChain(w, pod, ip, policies, refused, version, family);
      jumps.push([pod, ip]);
    }
    for (const r of ranges.filter((x) => ofFamily(x, family))) w.rule(INPUT, `${w.addr} daddr ${r} counter return`, 'allow cluster IP range');
    for (const proto of ['tcp', 'udp', 'sctp']) w.rule(INPUT, `meta l4proto ${proto} fib daddr type local ${proto} dport ${nodePorts.replace(':', '-')} counter return`, `allow ${proto} nodeport`);
    for (const [pod, ip] of jumps) {
      const chain = podChainName(pod, version);
      const inNote = idComment(pod.namespace, pod.name, 'in');
      w.rule(FORWARD, `${w.addr} daddr ${ip} counter jump ${chain}`, inNote);
      w.rule(OUTPUT, `${w.addr} daddr ${ip} counter jump ${chain}`, inNote);
      for (const [top] of TOP) w.rule(top, `${w.addr} saddr ${ip} counter jump ${chain}`, idComment(pod.namespace, pod.name, 'out'));
    }
    for (const [top] of TOP) w.rule(top, `counter jump ${TAIL}`, 'netpol accept/reject');
    for (const [top] of TOP) w.rule(top, MARK_ACCEPT, 'accept netpol-ok');
    texts.push(w.text());
  }
  // As nft lists what it loaded (counters, marks in hex, redundant protocol matches dropped).
  return { nft: texts.length === 0 ? '' : formatNftRuleset(texts.join('')), warnings };
}
