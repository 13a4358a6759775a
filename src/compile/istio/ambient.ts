/**
 * Istio ambient: what the istio-cni node agent writes for ztunnel. In a pod's network namespace
 * (`CreateInpodRules`) the in-pod capture rules, and on the node (`CreateHostRulesForHealthChecks`)
 * the kubelet health-probe SNAT. A port of `cni/pkg/iptables/iptables.go` (`AppendInpodRules`,
 * `AppendHostRules`), of the routing it adds (`iptables_linux.go`), of the pod-level overrides
 * (`cni/pkg/nodeagent/net.go`) and of the enrolment decision (`cni/pkg/util/enablement_selector.go`,
 * the node agent's excluded namespaces). The nftables backend is in `ambient-nft.ts`.
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import { expectArgument, expectFields, expectFieldsLike, expectShape } from '../../model/guard.js';
import type { Namespace, Pod } from '../pod.js';
import { parseGoBool } from './args.js';
import { type IstioRuleNote, IP_VERSION_SPECIFIC, IptablesRuleBuilder } from './builder.js';
import type { IstioRestore, IstioRule } from './rule.js';
import { compileAmbientNftables } from './ambient-nft.js';
import { AMBIENT, AMBIENT_DEFAULT_CONFIG, AMBIENT_NO_OVERRIDES, ambientRedirectDNS, markMask, type AmbientConfig, type AmbientPodOverrides } from './ambient-config.js';
export { AMBIENT, AMBIENT_DEFAULT_CONFIG, AMBIENT_NO_OVERRIDES, ambientRedirectDNS, markMask, type AmbientConfig, type AmbientPodOverrides } from './ambient-config.js';
import { type IstioReleaseFeatures, istioReleaseFeatures } from './version.js';

const V = IP_VERSION_SPECIFIC;

/**
 * What to compile: the in-pod rules for one pod (default) or the node's host rules.
 *
 * @example
 * ```ts
 * compileIstioAmbient({ config: { redirectDNS: false }, pod: { ingressMode: true } });
 * compileIstioAmbient({ host: true });
 * ```
 */
export interface AmbientInput {
  readonly config?: Partial<AmbientConfig>;
  readonly pod?: Partial<AmbientPodOverrides>;
  /** The node's rules (`CreateHostRulesForHealthChecks`) instead of a pod's. */
  readonly host?: boolean;
  /** Reproduce this Istio release (1.24 and later know ambient's rules). */
  readonly upstreamVersion?: string;
}

/**
 * What the node agent does for one pod (or the node).
 *
 * @example
 * ```ts
 * const r: AmbientCompileResult = compileIstioAmbient({});
 * r.commands[0]; // 'iptables-save'
 * ```
 */
export interface AmbientCompileResult {
  readonly backend: 'iptables' | 'nftables';
  readonly config: AmbientConfig;
  readonly overrides: AmbientPodOverrides;
  readonly host: boolean;
  /** iptables backend: the `iptables-restore --noflush` input, then the IPv6 one. Empty for nftables. */
  readonly restore: readonly IstioRestore[];
  /**
   * The recorded command lines as upstream's goldens lay them out: for iptables the state check
   * (`iptables-save`, `ip6tables-save`) and the restore lines; for nftables the transaction
   * handed to `nft -f`.
   */
  readonly commands: readonly string[];
  /** nftables backend: the transaction text (`nft -f` input); empty for iptables. */
  readonly nft: string;
  /** The routing the agent adds in the pod, as `ip` argv (`ip rule … lookup 100`, `ip route … table 100`). */
  readonly ipCommands: readonly (readonly string[])[];
  /** The ipsets (iptables) or nft sets the host rules read, which the agent creates and fills. */
  readonly sets: readonly { readonly name: string; readonly family: 4 | 6 }[];
  readonly rules: readonly IstioRule[];
  readonly warnings: readonly string[];
}

/**
 * Compiles what istio-cni's ambient node agent writes in a pod's namespace (or with `host`, on
 * the node), for the iptables or the nftables backend.
 *
 * @example
 * ```ts
 * const r = compileIstioAmbient({ config: { redirectDNS: true } });
 * process.stdout.write(r.restore.map((x) => x.text).join(''));
 * ```
 */
export function compileIstioAmbient(input: AmbientInput = {}): AmbientCompileResult {
  expectArgument(input, 'object', 'input');
  expectArgument(input.config, ['object', 'undefined'], 'input.config');
  expectArgument(input.pod, ['object', 'undefined'], 'input.pod');
  if (input.config !== undefined) expectFieldsLike(input.config, AMBIENT_DEFAULT_CONFIG, 'input.config');
  if (input.pod !== undefined) expectFieldsLike(input.pod, AMBIENT_NO_OVERRIDES, 'input.pod');
  expectShape(input, { kind: 'object', fields: { host: ['boolean', 'undefined'], upstreamVersion: ['string', 'undefined'] } }, 'input');
  const config: AmbientConfig = { ...AMBIENT_DEFAULT_CONFIG, ...input.config };
  const overrides: AmbientPodOverrides = { ...AMBIENT_NO_OVERRIDES, ...input.pod };
  const host = input.host ?? false;
  const features = istioReleaseFeatures(input.upstreamVersion);
  if (!features.ambient) {
    fail('UNSUPPORTED', `the ambient rules of Istio ${features.name} are not reproduced (they lived in another file before 1.25); use 1.25 or later`);
  }
  checkAddress(config.hostProbeSNATAddress, 4, '--probe-snat');
  checkAddress(config.hostProbeV6SNATAddress, 6, '--probe-snat6');
  for (const ifc of overrides.virtualInterfaces) checkInterface(ifc);
  const ipCommands = host ? [] : inpodRouting(config);
  const sets = host ? hostSets(config) : [];
  if (config.nativeNftables) {
    if (!features.ambientNftables) {
      fail('UNSUPPORTED', `the nftables backend of istio-cni exists from Istio 1.28 on (asked for ${features.name})`);
    }
    const nft = compileAmbientNftables(config, overrides, host, features);
    return {
      backend: 'nftables', config, overrides, host, restore: [], commands: nft.lines, nft: nft.lines.join('\n') + '\n',
      ipCommands, sets, rules: nft.rules, warnings: [],
    };
  }
  const b = new IptablesRuleBuilder({ enableIPv6: config.enableIPv6 });
  if (host) appendHostRules(config, b, features);
  else appendInpodRules(config, overrides, b, features);
  const restore: IstioRestore[] = [{ family: 4, text: b.buildV4Restore() }];
  if (config.enableIPv6) restore.push({ family: 6, text: b.buildV6Restore() });
  // VerifyIptablesState always runs both saves, then the restores follow.
  const commands = ['iptables-save', 'ip6tables-save'];
  for (const r of restore) commands.push(...r.text.split('\n').filter((l) => l !== ''));
  const rules: IstioRule[] = [];
  for (const [family, list] of [[4, b.rulesV4], [6, b.rulesV6]] as const) {
    for (const r of list) {
      const n = r.note ?? { why: '' };
      const entry: IstioRule = { family, table: r.table, chain: r.chain, text: r.params.join(' '), why: n.why };
      rules.push(n.option === undefined ? entry : { ...entry, option: n.option });
    }
  }
  return { backend: 'iptables', config, overrides, host, restore, commands, nft: '', ipCommands, sets, rules, warnings: [] };
}


function note(why: string, option?: string): IstioRuleNote {
  return option === undefined ? { why } : { why, option };
}

/** `AppendInpodRules`. */
function appendInpodRules(config: AmbientConfig, o: AmbientPodOverrides, b: IptablesRuleBuilder, features: IstioReleaseFeatures): void {
  const redirectDNS = ambientRedirectDNS(config, o);
  const inpodMark = markMask(AMBIENT.INPOD_MARK, AMBIENT.INPOD_MASK);
  const inpodTproxyMark = markMask(AMBIENT.INPOD_TPROXY_MARK, AMBIENT.INPOD_TPROXY_MASK);
  const PRERT = AMBIENT.CHAIN_PREROUTING;
  const OUT = AMBIENT.CHAIN_OUTPUT;
  const dnsOpt = o.dnsProxy === 'unset' ? 'ambient.dnsCapture (AMBIENT_DNS_CAPTURE)' : `${AMBIENT.DNS_CAPTURE_ANNOTATION} annotation`;

  b.appendRule('PREROUTING', 'mangle', ['-j', PRERT], note('arriving packets of ztunnel-marked connections get their connmark here'));
  b.appendRule('OUTPUT', 'mangle', ['-j', OUT], note('leaving packets get the connmark restored as packet mark'));
  b.appendRule('OUTPUT', 'nat', ['-j', OUT], note('outbound capture: every locally generated connection is checked by ISTIO_OUTPUT'));
  if (redirectDNS) {
    b.appendRule('PREROUTING', 'raw', ['-j', PRERT], note('DNS: conntrack zone for answers from upstream resolvers', dnsOpt));
    b.appendRule('OUTPUT', 'raw', ['-j', OUT], note("DNS: conntrack zone for ztunnel's queries to upstream resolvers", dnsOpt));
  }
  b.appendRule('PREROUTING', 'nat', ['-j', PRERT], note('inbound capture: every arriving connection is checked by ISTIO_PRERT'));

  for (const ifc of o.virtualInterfaces) {
    const opt = `${AMBIENT.VIRTUAL_INTERFACES_ANNOTATION} annotation`;
    b.appendRule(PRERT, 'nat', ['-i', ifc, '-p', 'tcp', '-j', 'REDIRECT', '--to-ports', String(AMBIENT.ZTUNNEL_OUTBOUND_PORT)],
      note(`TCP arriving on virtual interface ${ifc} is treated as outbound: to ztunnel's outbound port 15001`, opt));
    b.appendRule(PRERT, 'nat', ['-i', ifc, '-p', 'tcp', '-j', 'RETURN'], note(`and leaves ISTIO_PRERT (virtual interface ${ifc})`, opt));
  }

  // ≤ 1.28 this rule sat with the inbound rules and ingress-mode pods did not get it.
  if (!o.ingressMode || features.ambientIngressConnmark) {
    b.appendRule(PRERT, 'mangle', ['-m', 'mark', '--mark', inpodMark, '-j', 'CONNMARK', '--set-xmark', inpodTproxyMark],
      note("a packet with ztunnel's mark 0x539 marks its connection 0x111, so replies are recognised"));
  }

  if (!o.ingressMode) {
    b.appendVersionedRule(config.hostProbeSNATAddress, config.hostProbeV6SNATAddress, PRERT, 'nat', ['-s', V, '-p', 'tcp', '-m', 'tcp', '-j', 'ACCEPT'],
      note("kubelet health probes (SNATed on the node to the probe address) reach the app directly, not through ztunnel", '--probe-snat'));
  }
  b.appendVersionedRule(config.hostProbeSNATAddress, config.hostProbeV6SNATAddress, OUT, 'nat', ['-d', V, '-p', 'tcp', '-m', 'tcp', '-j', 'ACCEPT'],
    note('answers to kubelet health probes are not captured', '--probe-snat'));
  if (!o.ingressMode) {
    b.appendVersionedRule('127.0.0.1/32', '::1/128', PRERT, 'nat',
      ['!', '-d', V, '-p', 'tcp', '!', '--dport', String(AMBIENT.ZTUNNEL_INBOUND_PORT), '-m', 'mark', '!', '--mark', inpodMark,
        '-j', 'REDIRECT', '--to-ports', String(AMBIENT.ZTUNNEL_INBOUND_PLAINTEXT_PORT)],
      note("inbound plaintext TCP (not HBONE 15008, not ztunnel's own) goes to ztunnel's inbound plaintext port 15006",
        `${AMBIENT.BYPASS_INBOUND_ANNOTATION} annotation (absent)`));
  }
  b.appendRule(OUT, 'mangle', ['-m', 'connmark', '--mark', inpodTproxyMark, '-j', 'CONNMARK', '--restore-mark', '--nfmask',
    `0x${AMBIENT.INPOD_RESTORE_MASK.toString(16)}`, '--ctmask', `0x${AMBIENT.INPOD_RESTORE_MASK.toString(16)}`],
    note('packets of a connection ztunnel accepted carry its connmark as packet mark (0x111)'));
  if (redirectDNS) {
    b.appendRule(OUT, 'nat', ['!', '-o', 'lo', '-p', 'udp', '-m', 'mark', '!', '--mark', inpodMark, '-m', 'udp', '--dport', '53',
      '-j', 'REDIRECT', '--to-port', String(AMBIENT.DNS_CAPTURE_PORT)], note("DNS over UDP to a resolver goes to ztunnel's DNS proxy on 15053", dnsOpt));
    b.appendVersionedRule('127.0.0.1/32', '::1/128', OUT, 'nat', ['!', '-d', V, '-p', 'tcp', '--dport', '53', '-m', 'mark', '!', '--mark', inpodMark,
      '-j', 'REDIRECT', '--to-ports', String(AMBIENT.DNS_CAPTURE_PORT)], note("DNS over TCP goes to ztunnel's DNS proxy on 15053", dnsOpt));
    b.appendRule(OUT, 'raw', ['-p', 'udp', '-m', 'mark', '--mark', inpodMark, '-m', 'udp', '--dport', '53', '-j', 'CT', '--zone', '1'],
      note("DNS: ztunnel's queries to upstream resolvers use conntrack zone 1", dnsOpt));
    b.appendRule(PRERT, 'raw', ['-p', 'udp', '-m', 'mark', '!', '--mark', inpodMark, '-m', 'udp', '--sport', '53', '-j', 'CT', '--zone', '1'],
      note('DNS: answers from resolvers use conntrack zone 1', dnsOpt));
  }
  b.appendRule(OUT, 'nat', ['-p', 'tcp', '-m', 'mark', '--mark', inpodTproxyMark, '-j', 'ACCEPT'],
    note('replies on connections ztunnel accepted (connmark 0x111) are not captured'));
  b.appendVersionedRule('127.0.0.1/32', '::1/128', OUT, 'nat', ['!', '-d', V, '-o', 'lo', '-j', 'ACCEPT'],
    note('the app calling its own pod address over lo is not captured'));
  b.appendVersionedRule('127.0.0.1/32', '::1/128', OUT, 'nat', ['!', '-d', V, '-p', 'tcp', '-m', 'mark', '!', '--mark', inpodMark,
    '-j', 'REDIRECT', '--to-ports', String(AMBIENT.ZTUNNEL_OUTBOUND_PORT)],
    note("outbound TCP not from ztunnel (no mark 0x539) goes to ztunnel's outbound port 15001"));
}

/** `AppendHostRules`. */
function appendHostRules(config: AmbientConfig, b: IptablesRuleBuilder, features: IstioReleaseFeatures): void {
  const POST = AMBIENT.CHAIN_POSTROUTING;
  const jump = note('node: kubelet probe SNAT happens in ISTIO_POSTRT');
  // 1.26+ inserts the jump first in POSTROUTING; 1.25 appended it.
  if (features.ambientHostInsert) b.insertRule('POSTROUTING', 'nat', 1, ['-j', POST], jump);
  else b.appendRule('POSTROUTING', 'nat', ['-j', POST], jump);
  b.appendRuleV4(POST, 'nat', ['-m', 'owner', '--socket-exists', '-p', 'tcp', '-m', 'set', '--match-set', `${AMBIENT.PROBE_IPSET}-v4`, 'dst',
    '-j', 'SNAT', '--to-source', config.hostProbeSNATAddress],
    note('node: TCP from a local socket (kubelet) to an ambient pod (in the probe ipset) is SNATed to the probe address, which the pod lets through', '--probe-snat'));
  if (config.enableIPv6) {
    b.appendRuleV6(POST, 'nat', ['-m', 'owner', '--socket-exists', '-p', 'tcp', '-m', 'set', '--match-set', `${AMBIENT.PROBE_IPSET}-v6`, 'dst',
      '-j', 'SNAT', '--to-source', config.hostProbeV6SNATAddress],
      note('node: the same for IPv6 pods', '--probe-snat6'));
  }
}

function hostSets(config: AmbientConfig): { name: string; family: 4 | 6 }[] {
  const out: { name: string; family: 4 | 6 }[] = [{ name: `${AMBIENT.PROBE_IPSET}-v4`, family: 4 }];
  if (config.enableIPv6) out.push({ name: `${AMBIENT.PROBE_IPSET}-v6`, family: 6 });
  return out;
}

/** `AddLoopbackRoutes` and `AddInpodMarkIPRule` (`iptables_linux.go`), as the `ip` commands they equal. */
function inpodRouting(config: AmbientConfig): string[][] {
  const families = config.enableIPv6 ? (['-4', '-6'] as const) : (['-4'] as const);
  const table = String(AMBIENT.ROUTE_TABLE_INBOUND);
  const out: string[][] = [];
  for (const f of families) {
    out.push(['ip', f, 'route', 'replace', 'local', f === '-4' ? '0.0.0.0/0' : '::/0', 'dev', 'lo', 'table', table]);
  }
  for (const f of families) {
    out.push(['ip', f, 'rule', 'add', 'fwmark', markMask(AMBIENT.INPOD_TPROXY_MARK, AMBIENT.INPOD_TPROXY_MASK), 'pref',
      String(AMBIENT.INPOD_RULE_PRIORITY), 'lookup', table]);
  }
  return out;
}

function checkAddress(addr: string, family: 4 | 6, flag: string): void {
  const ok = family === 4 ? /^(\d{1,3})(\.\d{1,3}){3}$/.test(addr) && addr.split('.').every((x) => Number(x) <= 255) : /^[0-9a-fA-F:.]+$/.test(addr) && addr.includes(':');
  if (!ok) fail('BAD_CONFIG', `${flag}: "${addr}" is not an IPv${family} address`, undefined, addr);
}

function checkInterface(name: string): void {
  // Linux: IFNAMSIZ 16 (15 characters), no '/', no whitespace, not "." or "..".
  if (name.length === 0 || name.length > 15 || /[\s/:]/.test(name) || name === '.' || name === '..') {
    fail('BAD_CONFIG', `virtual interface "${name}" is not a valid Linux interface name`, undefined, name);
  }
}

/**
 * `getPodLevelTrafficOverrides` (`cni/pkg/nodeagent/net.go`): the ambient annotations of a pod.
 * A boolean annotation that does not parse is ignored, as upstream does (with a warning).
 *
 * @example
 * ```ts
 * ambientPodOverrides(pod).ingressMode; // true with ambient.istio.io/bypass-inbound-capture: "true"
 * ```
 */
export function ambientPodOverrides(pod: Pod, warnings: string[] = []): AmbientPodOverrides {
  expectFields(pod, { annotations: 'object' }, 'pod');
  expectArgument(warnings, 'array', 'warnings');
  const bool = (name: string): boolean | undefined => {
    const v = pod.annotations[name];
    if (v === undefined) return undefined;
    const b = parseGoBool(v);
    if (b === undefined) warnings.push(`annotation ${name}=${JSON.stringify(v)} found, but only boolean values are supported, ignoring`);
    return b;
  };
  const ingress = bool(AMBIENT.BYPASS_INBOUND_ANNOTATION);
  const dns = bool(AMBIENT.DNS_CAPTURE_ANNOTATION);
  const virt = pod.annotations[AMBIENT.VIRTUAL_INTERFACES_ANNOTATION];
  return {
    ingressMode: ingress ?? false,
    dnsProxy: dns === undefined ? 'unset' : dns ? 'enabled' : 'disabled',
    virtualInterfaces: virt === undefined ? [] : virt.split(',').map((s) => s.trim()).filter((s) => s !== ''),
  };
}

/**
 * Whether the ambient node agent enrols a pod, and why not: the chart's enablement selectors (pod
 * label `istio.io/dataplane-mode: ambient`, or the namespace's label with the pod not opting out
 * with `none`), never host-network pods, pods with a sidecar (`sidecar.istio.io/status`), the
 * ztunnel pods or pods of an excluded namespace.
 *
 * @example
 * ```ts
 * ambientEnrolment(readPod(yaml), { namespace: readNamespace(nsYaml) }).enrolled; // true in a namespace labelled ambient
 * ```
 */
export function ambientEnrolment(
  pod: Pod,
  options: { readonly namespace?: Namespace; readonly excludeNamespaces?: readonly string[]; readonly systemNamespace?: string } = {},
): { readonly enrolled: boolean; readonly reason: string } {
  expectFields(pod, { labels: 'object' }, 'pod');
  expectArgument(options, 'object', 'options');
  const label = AMBIENT.DATAPLANE_MODE_LABEL;
  const ns = pod.namespace ?? options.namespace?.name ?? 'default';
  const exclude = options.excludeNamespaces ?? AMBIENT.EXCLUDE_NAMESPACES;
  const podMode = pod.labels[label];
  const nsMode = options.namespace?.labels[label];
  const selected = podMode === 'ambient' || (nsMode === 'ambient' && podMode !== 'none');
  if (!selected) {
    if (podMode === 'none') return { enrolled: false, reason: `the pod opts out with label ${label}: none` };
    return { enrolled: false, reason: `neither the pod nor its namespace has label ${label}: ambient` };
  }
  if (pod.hostNetwork) return { enrolled: false, reason: 'the pod uses the host network (spec.hostNetwork), which ztunnel cannot capture' };
  if (pod.annotations[AMBIENT.SIDECAR_STATUS_ANNOTATION] !== undefined) {
    return { enrolled: false, reason: 'the pod has an Istio sidecar (sidecar.istio.io/status); a pod is either sidecar or ambient' };
  }
  if (ns === (options.systemNamespace ?? 'istio-system') && pod.labels['app'] === 'ztunnel') {
    return { enrolled: false, reason: 'the pod is ztunnel itself' };
  }
  if (exclude.includes(ns)) return { enrolled: false, reason: `namespace ${ns} is excluded (excludeNamespaces)` };
  return { enrolled: true, reason: podMode === 'ambient' ? `pod label ${label}: ambient` : `namespace label ${label}: ambient` };
}
