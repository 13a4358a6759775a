/**
 * The CNI's node rules compiled from a cluster snapshot: what the reference plugins
 * (containernetworking/plugins v1.9.1) leave in a node's netfilter tables once every pod on it
 * was set up — `bridge` with `ipMasq`, `portmap` for hostPorts — and, for flannel clusters,
 * flanneld's `FLANNEL-POSTRTG` / `FLANNEL-FWD`.
 *
 * @module
 */
import { diagnostic, NetfilterSimError } from '../../model/errors.js';
import { expectArgument, expectFields } from '../../model/guard.js';
import { checkSnapshotShape } from '../snapshot-shape.js';
import type { K8sNode, K8sPod, Snapshot } from '../../model/kubernetes.js';
import { formatIptablesSave } from '../../iptables/fmt.js';
import { formatNftRuleset } from '../../nftables/index.js';
import { hex, sha256 } from '../digest.js';
import { goCIDR, goIP, maskIP } from '../kube-proxy/services.js';
import { flannelNftTransaction, flannelRules } from './flannel.js';
import { iptablesMasq, nftMasqTransaction, type MasqAddress } from './ipmasq.js';
import { dnatChain, markMasqChain, portmapNftTransaction, setMarkChain, topLevelDnatChain, type PortmapChain, type PortmapConfig, type PortMapEntry } from './portmap.js';

/** portmap's settings (its CNI configuration keys). */
export interface PortmapOptions {
  /** `snat`: masquerade hairpin and localhost hostPort traffic; default true. */
  readonly snat?: boolean;
  /** `markMasqBit`; default 13 (the mark 0x2000). */
  readonly markMasqBit?: number;
  /** `masqAll` (iptables backend); default false. */
  readonly masqAll?: boolean;
  /** `externalSetMarkChain` (iptables backend). */
  readonly externalSetMarkChain?: string;
  /** `conditionsV4` / `conditionsV6`: extra matches on the entry rules, in the backend's syntax. */
  readonly conditionsV4?: readonly string[];
  readonly conditionsV6?: readonly string[];
}

/** Options of {@link compileCniNodeRules}. */
export interface CniNodeRulesOptions {
  /** The plugins' backend (`ipMasqBackend`, portmap's `backend`): `iptables` (default) or `nftables`. */
  readonly backend?: 'iptables' | 'nftables';
  /**
   * iptables backend: the family of the rule set, 4 or 6 (default: the family of the node's first
   * pod CIDR). The nftables backend writes every family of the pods' addresses in one ruleset.
   */
  readonly family?: 4 | 6;
  /** The network's `name` in the CNI configuration, hashed into chain names; default `cbr0`. */
  readonly network?: string;
  /** The pod-side interface the runtime names (`CNI_IFNAME`); default `eth0`. */
  readonly ifName?: string;
  /** `bridge`'s `ipMasq`; default false. */
  readonly ipMasq?: boolean;
  /** portmap in the plugin chain: true (its defaults, the default), its settings, or false. */
  readonly portmap?: boolean | PortmapOptions;
  /**
   * flanneld's rules: the flannel network (net-conf `Network`, and `IPv6Network`), with this
   * node's pod CIDR as its lease. With `backend: 'nftables'`, flanneld's nftables backend
   * (`EnableNFTables`): tables `ip flannel-ipv4` and `ip6 flannel-ipv6`. Absent: none.
   */
  readonly flannel?: { readonly network?: string; readonly ipv6Network?: string; readonly randomFully?: boolean };
  /**
   * The sandbox ID the runtime passes to the plugins (`CNI_CONTAINERID`) for a pod. A snapshot
   * does not record it; by default it is {@link podSandboxId}.
   */
  readonly containerId?: (pod: K8sPod) => string;
  /** Called with what the plugins would not set up (a pod without addresses, an address outside the node's pod CIDRs …). */
  readonly onWarning?: (message: string) => void;
}

/**
 * The sandbox ID assumed for a pod: the hex SHA-256 of `netfilter-sim/sandbox/` followed by the
 * pod's `metadata.uid`, or by `namespace/name` when it has none — 64 hex digits, the shape of a
 * containerd or CRI-O sandbox ID, stable for a given pod.
 *
 * @example
 * ```ts
 * import { podSandboxId } from 'netfilter-sim';
 * podSandboxId({ kind: 'Pod', metadata: { name: 'web-0', namespace: 'x', uid: '6f1c…' }, spec: { containers: [] } });
 * ```
 */
export function podSandboxId(pod: K8sPod): string {
  expectFields(pod, { metadata: 'object' }, 'pod');
  expectFields(pod.metadata, { name: 'string', namespace: ['string', 'undefined'], uid: ['string', 'undefined'] }, 'pod.metadata');
  const key = pod.metadata.uid !== undefined && pod.metadata.uid !== '' ? pod.metadata.uid : `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
  return hex(sha256(`netfilter-sim/sandbox/${key}`));
}

function bad(code: 'BAD_CONFIG' | 'BAD_MANIFEST', message: string): never {
  throw new NetfilterSimError(diagnostic(code, message));
}

function checkOptions(o: CniNodeRulesOptions): void {
  expectArgument(o, 'object', 'options');
  if (o.backend !== undefined && o.backend !== 'iptables' && o.backend !== 'nftables') bad('BAD_CONFIG', `options.backend must be "iptables" or "nftables", not ${JSON.stringify(o.backend)}`);
  if (o.family !== undefined && o.family !== 4 && o.family !== 6) bad('BAD_CONFIG', `options.family must be 4 or 6, not ${JSON.stringify(o.family)}`);
  if (o.network !== undefined && (typeof o.network !== 'string' || o.network === '')) bad('BAD_CONFIG', 'options.network must be a non-empty string');
  if (o.ifName !== undefined && (typeof o.ifName !== 'string' || o.ifName === '')) bad('BAD_CONFIG', 'options.ifName must be a non-empty string');
  const pm = typeof o.portmap === 'object' ? o.portmap : undefined;
  if (pm?.markMasqBit !== undefined && (!Number.isInteger(pm.markMasqBit) || pm.markMasqBit < 0 || pm.markMasqBit > 31)) bad('BAD_CONFIG', 'options.portmap.markMasqBit must be between 0 and 31');
  if (pm?.markMasqBit !== undefined && pm.externalSetMarkChain !== undefined) bad('BAD_CONFIG', 'options.portmap: cannot specify externalSetMarkChain and markMasqBit');
  if (o.flannel !== undefined) {
    for (const [k, fam] of [['network', 4], ['ipv6Network', 6]] as const) {
      const v = o.flannel[k];
      if (v !== undefined && goCIDR(v, fam) === null) bad('BAD_CONFIG', `options.flannel.${k}: "${v}" is not an IPv${fam} CIDR`);
    }
  }
}

/** A pod's addresses with the prefix of the node pod CIDR that holds each (host-local's subnet). */
function podAddresses(pod: K8sPod, node: K8sNode, warn: (m: string) => void): MasqAddress[] {
  const ips = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP !== undefined ? [pod.status.podIP] : []);
  const cidrs = node.spec?.podCIDRs ?? (node.spec?.podCIDR !== undefined ? [node.spec.podCIDR] : []);
  const out: MasqAddress[] = [];
  const ref = `${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}`;
  for (const raw of ips) {
    const family = raw.includes(':') ? 6 : 4;
    const ip = goIP(raw, family);
    if (ip === null) {
      warn(`Pod ${ref}: status.podIPs has "${raw}", not an address; the plugins were never given it`);
      continue;
    }
    let len: number | null = null;
    for (const c of cidrs) {
      const n = goCIDR(c, family);
      if (n === null) continue;
      const l = Number(n.split('/')[1]);
      if (`${maskIP(ip, l, family)}/${l}` === n) {
        len = l;
        break;
      }
    }
    if (len === null) {
      warn(`Pod ${ref}: ${ip} is in none of node ${node.metadata.name}'s pod CIDRs; its subnet is taken as /${family === 4 ? 32 : 128}`);
      len = family === 4 ? 32 : 128;
    }
    out.push({ ip, prefixLength: len, subnet: `${maskIP(ip, len, family)}/${len}` });
  }
  return out;
}

/** `runtimeConfig.portMappings` the runtime builds from a pod's containers' hostPorts. */
function portMappings(pod: K8sPod): PortMapEntry[] {
  const out: PortMapEntry[] = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      if (p.hostPort === undefined || p.hostPort === 0) continue;
      out.push({ hostPort: p.hostPort, containerPort: p.containerPort, protocol: (p.protocol ?? 'TCP').toLowerCase(), ...(p.hostIP !== undefined ? { hostIP: p.hostIP } : {}) });
    }
  }
  return out;
}

/** One table's chains and rules as the plugins' iptables calls leave them. */
class IptTable {
  readonly chains: string[] = [];
  readonly rules = new Map<string, string[][]>();
  ensureChain(name: string): void {
    if (!this.chains.includes(name)) this.chains.push(name);
    if (!this.rules.has(name)) this.rules.set(name, []);
  }
  /** `InsertUnique` / `AppendUnique`: nothing when the rule is there already. */
  add(chain: string, args: readonly string[], prepend = false): void {
    const list = this.rules.get(chain) ?? [];
    this.rules.set(chain, list);
    if (list.some((r) => r.length === args.length && r.every((x, i) => x === args[i]))) return;
    if (prepend) list.unshift([...args]);
    else list.push([...args]);
  }
  /** `chain.setup`: the chain, its rules, then its entry rules in each entry chain. */
  setup(c: PortmapChain): void {
    this.ensureChain(c.name);
    for (const r of c.rules) this.add(c.name, r);
    for (const e of c.entryChains) for (const r of c.entryRules) this.add(e, [...r, '-j', c.name], c.prependEntry);
  }
}

/** Quotes an argument for iptables-restore when it needs it. */
function arg(a: string): string {
  return /^[A-Za-z0-9_./:,!+=@-]+$/.test(a) ? a : `"${a.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

function restoreText(tables: ReadonlyMap<string, IptTable>): string {
  const out: string[] = [];
  for (const [name, t] of tables) {
    out.push(`*${name}`);
    for (const c of t.chains) if (!BUILTIN.has(c)) out.push(`:${c} - [0:0]`);
    for (const [chain, rules] of t.rules) for (const r of rules) out.push(`-A ${chain} ${r.map(arg).join(' ')}`);
    out.push('COMMIT');
  }
  return out.join('\n') + '\n';
}

/**
 * Compiles the CNI's node rules for one node of a snapshot: for every pod on the node (not
 * hostNetwork), in the snapshot's order, what `bridge` (`ipMasq`) and then `portmap` add when the
 * pod's sandbox is set up, and flanneld's rules when `flannel` is given (set up before any pod).
 * The text is what `iptables-save` (`ip6tables-save` for `family: 6`) or, with
 * `backend: 'nftables'`, `nft list ruleset` prints on a node where only these ran.
 *
 * The plugins hash the runtime's sandbox ID into chain names and comments; a snapshot does not
 * carry it, so it comes from `options.containerId`, by default {@link podSandboxId}.
 *
 * Throws {@link NetfilterSimError}: `BAD_CONFIG` for a bad option, `BAD_MANIFEST` for a node
 * missing from the snapshot.
 *
 * @example
 * ```ts
 * import { compileCniNodeRules } from 'netfilter-sim';
 * const snapshot = {
 *   namespaces: [], services: [], endpointSlices: [], networkPolicies: [], warnings: [],
 *   nodes: [{ kind: 'Node', metadata: { name: 'n1' }, spec: { podCIDR: '10.244.1.0/24' } }],
 *   pods: [{ kind: 'Pod', metadata: { name: 'web', namespace: 'x', uid: 'u1' },
 *     spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ containerPort: 80, hostPort: 8080 }] }] },
 *     status: { podIPs: [{ ip: '10.244.1.5' }] } }],
 * } as const;
 * compileCniNodeRules(snapshot, 'n1', { ipMasq: true });
 * // "*nat\n…-A CNI-HOSTPORT-DNAT -p tcp -m comment --comment \"dnat name: \\\"cbr0\\\" id: …\" -m multiport --dports 8080 -j CNI-DN-…"
 * ```
 */
export function compileCniNodeRules(snapshot: Snapshot, node: string, options: CniNodeRulesOptions = {}): string {
  expectArgument(snapshot, 'object', 'snapshot');
  expectArgument(node, 'string', 'node');
  checkOptions(options);
  if (!Array.isArray(snapshot.pods) || !Array.isArray(snapshot.nodes)) bad('BAD_MANIFEST', 'snapshot.pods and snapshot.nodes must be arrays');
  checkSnapshotShape(snapshot, ['nodes', 'pods']);
  const n = snapshot.nodes.find((x) => x.metadata.name === node);
  if (!n) bad('BAD_MANIFEST', `no Node named "${node}" in the snapshot`);
  const warn = options.onWarning ?? (() => undefined);
  const network = options.network ?? 'cbr0';
  const ifName = options.ifName ?? 'eth0';
  const idOf = options.containerId ?? podSandboxId;
  const pmOpts = options.portmap === false ? null : typeof options.portmap === 'object' ? options.portmap : {};
  const config: PortmapConfig | null = pmOpts === null ? null : {
    name: network,
    snat: pmOpts.snat ?? true,
    markMasqBit: pmOpts.markMasqBit ?? 13,
    masqAll: pmOpts.masqAll ?? false,
    ...(pmOpts.externalSetMarkChain !== undefined ? { externalSetMarkChain: pmOpts.externalSetMarkChain } : {}),
    ...(pmOpts.conditionsV4 !== undefined ? { conditionsV4: pmOpts.conditionsV4 } : {}),
    ...(pmOpts.conditionsV6 !== undefined ? { conditionsV6: pmOpts.conditionsV6 } : {}),
  };
  const pods: { pod: K8sPod; id: string; addrs: MasqAddress[]; maps: PortMapEntry[] }[] = [];
  for (const pod of snapshot.pods) {
    if (pod.spec.nodeName !== node || pod.spec.hostNetwork === true) continue;
    const addrs = podAddresses(pod, n, warn);
    if (addrs.length === 0) {
      warn(`Pod ${pod.metadata.namespace ?? 'default'}/${pod.metadata.name}: no status.podIPs; no rules for it`);
      continue;
    }
    pods.push({ pod, id: idOf(pod), addrs, maps: portMappings(pod) });
  }
  if ((options.backend ?? 'iptables') === 'nftables') {
    const ops: string[] = [];
    if (options.flannel !== undefined) {
      const nodeCidrs: readonly string[] = n.spec?.podCIDRs ?? (n.spec?.podCIDR !== undefined ? [n.spec.podCIDR] : []);
      const nets: { 4?: { network: string; lease: string | null }; 6?: { network: string; lease: string | null } } = {};
      for (const [k, fam] of [['network', 4], ['ipv6Network', 6]] as const) {
        const net = options.flannel[k];
        if (net === undefined) continue;
        const lease = nodeCidrs.map((c) => goCIDR(c, fam)).find((c): c is string => c !== null) ?? null;
        if (lease === null) warn(`Node ${node}: no IPv${fam} pod CIDR, which flannel takes as its lease; no flannel masquerade rules for IPv${fam}`);
        nets[fam] = { network: goCIDR(net, fam)!, lease };
      }
      ops.push(...flannelNftTransaction(nets, options.flannel.randomFully ?? true));
    }
    for (const p of pods) {
      if (options.ipMasq === true) ops.push(...nftMasqTransaction(network, ifName, p.id, p.addrs));
      if (config !== null && p.maps.length > 0) {
        for (const fam of [4, 6] as const) {
          const a = p.addrs.find((x) => x.ip.includes(':') === (fam === 6));
          if (a) ops.push(...portmapNftTransaction(config, p.id, p.maps, a.ip));
        }
      }
    }
    return formatNftRuleset(ops.length === 0 ? '' : ops.join('\n') + '\n');
  }
  const cidrs: readonly string[] = n.spec?.podCIDRs ?? (n.spec?.podCIDR !== undefined ? [n.spec.podCIDR] : []);
  const family: 4 | 6 = options.family ?? (cidrs[0]?.includes(':') ? 6 : 4);
  const tables = new Map<string, IptTable>();
  const table = (name: string): IptTable => {
    let t = tables.get(name);
    if (!t) {
      t = new IptTable();
      tables.set(name, t);
    }
    return t;
  };
  if (options.flannel !== undefined) {
    const net = family === 4 ? options.flannel.network : options.flannel.ipv6Network;
    const lease = cidrs.map((c) => goCIDR(c, family)).find((c): c is string => c !== null);
    if (net !== undefined) {
      if (lease === undefined) warn(`Node ${node}: no IPv${family} pod CIDR, which flannel takes as its lease; no flannel rules`);
      else {
        const fr = flannelRules(goCIDR(net, family)!, lease, family, options.flannel.randomFully ?? true);
        for (const [tname, lines] of [['nat', fr.nat], ['filter', fr.filter]] as const) {
          const t = table(tname);
          for (const l of lines) {
            const words = splitArgs(l);
            t.ensureChain(words[1]!);
            t.add(words[1]!, words.slice(2));
          }
        }
      }
    }
  }
  for (const p of pods) {
    const mine = p.addrs.filter((a) => a.ip.includes(':') === (family === 6));
    if (options.ipMasq === true && mine.length > 0) {
      const m = iptablesMasq(network, p.id, mine);
      const nat = table('nat');
      nat.ensureChain(m.chain);
      for (const r of m.rules) nat.add(m.chain, r.args);
      for (const r of m.postrouting) nat.add('POSTROUTING', r.args);
    }
    if (config !== null && p.maps.length > 0) {
      const a = mine[0];
      if (a === undefined) continue;
      const nat = table('nat');
      if (config.snat && config.externalSetMarkChain === undefined) {
        nat.setup(setMarkChain(config.markMasqBit));
        nat.setup(markMasqChain(config.markMasqBit));
      }
      nat.setup(topLevelDnatChain());
      nat.setup(dnatChain(config, p.id, p.maps, a.ip, a.prefixLength));
    }
  }
  return formatIptablesSave(restoreText(tables), { family });
}

/** Splits a rule line written with double-quoted arguments. */
function splitArgs(line: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const m of line.matchAll(re)) out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!);
  return out;
}
