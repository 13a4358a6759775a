/**
 * kube-network-policies (kubernetes-sigs, v1.1, `pkg/dataplane/controller.go`), compiled from a
 * snapshot: the nftables table `inet kube-network-policies` its controller writes on a node, as
 * `nft list ruleset` lists it. The controller decides nothing in the kernel: the first packet of
 * each connection that touches a local pod selected by some policy is queued (NFQUEUE) to the
 * controller, which evaluates the policies in userspace, accepts with the conntrack label 100
 * set (so the connection's later packets pass the `ct label` rule) or drops.
 *
 * - `set podips-v4` / `podips-v6`: the addresses of the node's pods that some policy selects;
 * - `chain postrouting` (filter, `srcnat - 5`): with `--netfilter-bug-1766-fix`, UDP to port 53
 *   is left to the `prerouting` chain; ICMPv6 router and neighbour discovery accepted; packets of
 *   the node's root sockets (`meta skuid 0`, the kubelet's probes) accepted; established or
 *   related packets of an accepted connection accepted; packets from or to a pod of the sets
 *   queued; the label-setting rule that makes conntrack allocate the label extension;
 * - `chain input` (filter, priority 101): loopback accepted; a new connection from a pod of the
 *   sets to the node queued;
 * - `chain prerouting` (filter, `dstnat + 5`, with the bug fix): DNS over UDP queued after DNAT.
 *
 * Defaults are the project's install manifest: `--fail-open` (the queue is bypassed when no
 * controller listens), `--nfqueue-id=98`, `--netfilter-bug-1766-fix`.
 *
 * This kernel has no nft `queue` expression; {@link KubeNetworkPoliciesOptions.verdicts} writes
 * the table with each queue statement replaced by a jump to a chain of fixed verdicts (what the
 * controller would answer), which any kernel loads.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';
import type { Snapshot } from '../../model/kubernetes.js';
import { parseNftRulesetOrThrow, printNftRuleset } from '../../nftables/index.js';
import { compileSelector, selectorMatches } from '../../netpol/index.js';
import type { ValidateOptions } from '../../netpol/index.js';
import { clusterView } from './view.js';

/** One connection's verdict, for the table with its queue statements replaced. */
export interface QueueVerdict {
  readonly src: string;
  readonly dst: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly port: number;
  readonly accept: boolean;
}

/** Options of the kube-network-policies compiler. */
export interface KubeNetworkPoliciesOptions extends ValidateOptions {
  /** `--nfqueue-id` (default 98, as the project's install manifest sets it; the flag's own default is 100). */
  readonly queueId?: number;
  /** `--fail-open` (default true): the queue statements carry `bypass`. */
  readonly failOpen?: boolean;
  /** `--netfilter-bug-1766-fix` (default true): DNS over UDP is queued in `prerouting`, after DNAT. */
  readonly netfilterBug1766Fix?: boolean;
  /** The conntrack label set on accepted connections (default 100). */
  readonly ctLabelAccept?: number;
  /** The table's name (default `kube-network-policies`). */
  readonly tableName?: string;
  /**
   * Write every `queue` statement as `jump nfqueue-verdicts`, a chain that accepts (setting the
   * label, as the controller's verdict does) or drops each listed connection and accepts what it
   * does not list (as a bypassed queue would).
   */
  readonly verdicts?: readonly QueueVerdict[];
}

/** The verdict chain's name in a table whose queue statements are replaced. */
export const VERDICT_CHAIN = 'nfqueue-verdicts';

const isV4 = (ip: string): boolean => !ip.includes(':');

/**
 * The nftables table kube-network-policies writes on `node`, as `nft list ruleset` lists it
 * (`nft -f` reads it back).
 *
 * @example
 * ```ts
 * const { nft } = compileKubeNetworkPolicies(snapshot, 'worker-1');
 * ```
 */
export function compileKubeNetworkPolicies(snapshot: Pick<Snapshot, 'namespaces' | 'pods' | 'networkPolicies'>, node: string, options: KubeNetworkPoliciesOptions = {}): { readonly nft: string; readonly warnings: readonly string[] } {
  expectArgument(node, 'string', 'node');
  expectArgument(options, 'object', 'options');
  const bad = (what: string, why: string): never => {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `options.${what} ${why}`));
  };
  if (options.queueId !== undefined && (!Number.isInteger(options.queueId) || options.queueId < 0 || options.queueId > 65535)) bad('queueId', 'must be a queue number (0-65535)');
  if (options.ctLabelAccept !== undefined && (!Number.isInteger(options.ctLabelAccept) || options.ctLabelAccept < 1 || options.ctLabelAccept > 127)) bad('ctLabelAccept', 'must be a conntrack label (1-127)');
  if (options.tableName !== undefined && (typeof options.tableName !== 'string' || !/^[A-Za-z][A-Za-z0-9_-]{0,62}$/.test(options.tableName))) bad('tableName', 'must be an nft table name');
  expectArgument(options.failOpen, ['boolean', 'undefined'], 'options.failOpen');
  expectArgument(options.netfilterBug1766Fix, ['boolean', 'undefined'], 'options.netfilterBug1766Fix');
  expectArgument(options.verdicts, ['array', 'undefined'], 'options.verdicts');
  for (const [i, v] of (options.verdicts ?? []).entries()) {
    const ok = typeof v === 'object' && v !== null && typeof v.src === 'string' && typeof v.dst === 'string' && /^[0-9a-fA-F:.]+$/.test(v.src) && /^[0-9a-fA-F:.]+$/.test(v.dst)
      && ['TCP', 'UDP', 'SCTP'].includes(v.protocol) && Number.isInteger(v.port) && v.port >= 1 && v.port <= 65535 && typeof v.accept === 'boolean';
    if (!ok) bad(`verdicts[${i}]`, 'must be { src, dst (addresses), protocol (TCP, UDP, SCTP), port, accept }');
  }
  const view = clusterView(snapshot, options);
  const queueId = options.queueId ?? 98;
  const failOpen = options.failOpen ?? true;
  const bugFix = options.netfilterBug1766Fix ?? true;
  const label = options.ctLabelAccept ?? 100;
  const table = options.tableName ?? 'kube-network-policies';
  // ManagedIPs: the addresses of local, non-hostNetwork pods some policy selects.
  const managed: string[] = [];
  for (const p of view.policies) {
    const sel = compileSelector(p.podSelector);
    for (const pod of view.allPods) {
      if (pod.spec.nodeName !== node || pod.spec.hostNetwork === true || (pod.metadata.namespace ?? 'default') !== p.namespace) continue;
      if (!selectorMatches(sel, pod.metadata.labels ?? {})) continue;
      for (const ip of pod.status?.podIPs?.map((x) => x.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : [])) if (!managed.includes(ip)) managed.push(ip);
    }
  }
  const v4 = managed.filter(isV4);
  const v6 = managed.filter((ip) => !isV4(ip));
  const queue = options.verdicts ? `jump ${VERDICT_CHAIN}` : `queue ${failOpen ? 'flags bypass ' : ''}to ${queueId}`;
  // The sets as nft lists them (elements sorted, a few to a line): through the nft printer.
  const sets = [['podips-v4', 'ipv4_addr', v4], ['podips-v6', 'ipv6_addr', v6]] as const;
  const setsText = printNftRuleset(parseNftRulesetOrThrow(`table inet ${table} {\n${sets.map(([n, t, e]) => `set ${n} { type ${t};${e.length > 0 ? ` elements = { ${e.join(', ')} };` : ''} }\n`).join('')}}\n`));
  const lines: string[] = [...setsText.trimEnd().split('\n').slice(0, -1), ''];
  lines.push('\tchain postrouting {', '\t\ttype filter hook postrouting priority srcnat - 5; policy accept;');
  if (bugFix) lines.push('\t\tudp dport 53 accept');
  for (const t of ['nd-router-solicit', 'nd-router-advert', 'nd-neighbor-solicit', 'nd-neighbor-advert', 'nd-redirect']) lines.push(`\t\ticmpv6 type ${t} accept`);
  lines.push(
    '\t\tmeta skuid 0 counter packets 0 bytes 0 accept',
    `\t\tct label ${label} ct state established,related counter packets 0 bytes 0 accept`,
    `\t\tip saddr @podips-v4 ${queue}`, `\t\tip daddr @podips-v4 ${queue}`, `\t\tip6 saddr @podips-v6 ${queue}`, `\t\tip6 daddr @podips-v6 ${queue}`,
    `\t\tct label set ${label}`,
    '\t}', '',
    '\tchain input {', '\t\ttype filter hook input priority 101; policy accept;',
    '\t\tiifname "lo" accept',
    `\t\tip saddr @podips-v4 ct state new ${queue}`, `\t\tip6 saddr @podips-v6 ct state new ${queue}`,
    '\t}',
  );
  if (bugFix) {
    lines.push('', '\tchain prerouting {', '\t\ttype filter hook prerouting priority dstnat + 5; policy accept;',
      '\t\tmeta l4proto != udp accept', '\t\tudp dport != 53 accept',
      `\t\tip saddr @podips-v4 ${queue}`, `\t\tip daddr @podips-v4 ${queue}`, `\t\tip6 saddr @podips-v6 ${queue}`, `\t\tip6 daddr @podips-v6 ${queue}`,
      '\t}');
  }
  if (options.verdicts) {
    lines.push('', `\tchain ${VERDICT_CHAIN} {`);
    for (const v of options.verdicts) {
      const fam = isV4(v.src) ? 'ip' : 'ip6';
      const l4 = v.protocol.toLowerCase();
      lines.push(`\t\t${fam} saddr ${v.src} ${fam} daddr ${v.dst} ${l4} dport ${v.port} ${v.accept ? `ct label set ${label} accept` : 'drop'}`);
    }
    lines.push('\t}');
  }
  lines.push('}', '');
  return { nft: lines.join('\n'), warnings: view.warnings };
}
