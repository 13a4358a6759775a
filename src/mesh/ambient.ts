/**
 * Istio ambient pods in the scenario: enrolment (labels, namespace labels, or the caller's
 * choice), the in-pod rules istio-cni's node agent writes (iptables or nftables backend), the
 * routing it adds, and ztunnel's in-pod sockets as the pod's proxy; and the node's side of a
 * kubelet probe (the host rule that SNATs it to the probe address).
 *
 * @module
 */
import { AMBIENT, AMBIENT_DEFAULT_CONFIG, ambientEnrolment, ambientPodOverrides, compileIstioAmbient, type AmbientCompileResult } from '../compile/istio/ambient.js';
import { istioRulesets } from '../compile/istio/format.js';
import type { Namespace, Pod } from '../compile/pod.js';
import type { Ruleset } from '../model/types.js';
import { hasRules, ruleNotes, startupSteps, type PrepareOptions, type RuleExplainer } from './common.js';
import type { MeshAmbient, MeshPod, MeshProxy } from './types.js';

/**
 * ztunnel as the scenario models it: the DaemonSet's identity and its in-pod ports.
 *
 * @example
 * ```ts
 * ZTUNNEL.mark; // 0x539
 * ```
 */
export const ZTUNNEL = {
  container: 'ztunnel',
  /** The ztunnel chart's securityContext: runAsUser 0, runAsGroup 1337. */
  uid: 0,
  gid: 1337,
  /** SO_MARK on every socket ztunnel opens in a pod (its config must equal istio-cni's `INPOD_MARK`). */
  mark: AMBIENT.INPOD_MARK,
  outboundPort: AMBIENT.ZTUNNEL_OUTBOUND_PORT,
  inboundPlaintextPort: AMBIENT.ZTUNNEL_INBOUND_PLAINTEXT_PORT,
  hbonePort: AMBIENT.ZTUNNEL_INBOUND_PORT,
  dnsPort: AMBIENT.DNS_CAPTURE_PORT,
  /** The node's address in the scenario (the kubelet's source before SNAT). */
  nodeAddress: '10.0.0.1',
} as const;

/** Whether an ambient pod's DNS is captured, and which setting decided it. */
function dnsDecision(pod: Pod, nodeDns: boolean, explicit: boolean): { on: boolean; setting: string } {
  const ann = pod.annotations[AMBIENT.DNS_CAPTURE_ANNOTATION];
  const node = `the node's ambient.dnsCapture (${nodeDns ? 'on' : 'off'}${explicit ? '' : ', the chart default'})`;
  const o = ambientPodOverrides(pod);
  if (o.dnsProxy === 'unset') return { on: nodeDns, setting: node };
  return { on: o.dnsProxy === 'enabled', setting: `${AMBIENT.DNS_CAPTURE_ANNOTATION}: "${ann}" on pod ${pod.name}, over ${node}` };
}

/**
 * Whether a pod (without a sidecar) runs in ambient mode, and why (or why not).
 * @internal
 */
export function ambientDecision(pod: Pod, namespace: Namespace | undefined, forced: boolean): { ambient: boolean; reason: string } {
  const e = ambientEnrolment(pod, namespace ? { namespace } : {});
  if (e.enrolled) return { ambient: true, reason: e.reason };
  if (forced) {
    if (pod.hostNetwork) return { ambient: false, reason: 'the pod uses the host network (spec.hostNetwork), which ztunnel cannot capture, --ambient notwithstanding' };
    if (pod.annotations[AMBIENT.SIDECAR_STATUS_ANNOTATION] !== undefined) return { ambient: false, reason: 'the pod has an Istio sidecar; a pod is either sidecar or ambient' };
    return { ambient: true, reason: `--ambient (as if the pod or its namespace had the label ${AMBIENT.DATAPLANE_MODE_LABEL}: ambient)` };
  }
  return { ambient: false, reason: e.reason };
}

/**
 * Prepares an ambient pod: its in-pod rules, routing, ztunnel's sockets and start-up.
 * @internal
 */
export function prepareAmbientPod(pod: Pod, options: PrepareOptions & { readonly reason: string }): MeshPod {
  const warnings: string[] = [];
  const overrides = ambientPodOverrides(pod, warnings);
  const nodeDns = options.dnsCapture ?? true;
  const dns = dnsDecision(pod, nodeDns, options.dnsCapture !== undefined);
  const ipv6 = pod.podIPs.some((ip) => ip.includes(':'));
  const nft = options.nativeNftables === true;
  const result: AmbientCompileResult = compileIstioAmbient({
    config: { ...AMBIENT_DEFAULT_CONFIG, enableIPv6: ipv6, redirectDNS: nodeDns, nativeNftables: nft },
    pod: overrides,
  });
  warnings.push(...result.warnings);
  let rules4: Ruleset | null = null;
  let rules6: Ruleset | null = null;
  if (!nft) {
    const sets = istioRulesets(result);
    result.restore.forEach((r, i) => {
      const rs = sets[i]!;
      if (!hasRules(rs)) return;
      if (r.family === 4) rules4 = rs;
      else rules6 = rs;
    });
  }
  const ambient: MeshAmbient = {
    reason: options.reason,
    backend: nft ? 'nftables' : 'iptables',
    dnsCapture: dns.on,
    dnsSetting: dns.setting,
    bypassInbound: overrides.ingressMode,
    virtualInterfaces: overrides.virtualInterfaces,
  };
  const proxy: MeshProxy = {
    container: ZTUNNEL.container,
    uid: ZTUNNEL.uid,
    gid: ZTUNNEL.gid,
    outboundPort: ZTUNNEL.outboundPort,
    inboundPort: ZTUNNEL.inboundPlaintextPort,
    otherPorts: [
      { port: ZTUNNEL.hbonePort, role: 'HBONE inbound', proto: 'tcp' },
      { port: ZTUNNEL.dnsPort, address: '127.0.0.1', role: 'DNS proxy', proto: 'udp' },
      { port: ZTUNNEL.dnsPort, address: '127.0.0.1', role: 'DNS proxy', proto: 'tcp' },
      ...(ipv6 ? [{ port: ZTUNNEL.dnsPort, address: '::1', role: 'DNS proxy', proto: 'udp' as const }, { port: ZTUNNEL.dnsPort, address: '::1', role: 'DNS proxy', proto: 'tcp' as const }] : []),
    ],
    ipv6,
    nativeSidecar: false,
    mark: ZTUNNEL.mark,
    kind: 'ztunnel',
  };
  const startup = startupSteps(
    pod,
    { stage: 'sandbox', name: 'istio-cni', effect: 'rules', active: true, note: `istio-cni's node agent writes the in-pod rules (${ambient.backend}) when the pod sandbox is created, before any container` },
    (_c, stage) => ({ effect: 'none', note: stage === 'init' ? 'an application init container' : 'an application container' }),
  );
  // ztunnel opens its sockets in the pod's namespace during the sandbox step (istio-cni waits for it).
  startup.splice(1, 0, { stage: 'sandbox', name: ZTUNNEL.container, effect: 'proxy', active: true, note: "the node's ztunnel opens its in-pod sockets (15001, 15006, 15008, 15053) before any container starts" });
  const settings = [
    `${pod.name}: ambient (${options.reason}): istio-cni's node agent writes the in-pod rules (${ambient.backend} backend), ztunnel serves the pod with sockets in its namespace`,
    `${pod.name}: DNS capture ${dns.on ? 'on' : 'off'} (${dns.setting})`,
  ];
  if (overrides.ingressMode) settings.push(`${pod.name}: ${AMBIENT.BYPASS_INBOUND_ANNOTATION}: "${pod.annotations[AMBIENT.BYPASS_INBOUND_ANNOTATION]}": no inbound capture`);
  const explain: RuleExplainer = ({ family, table, chain, source }) => {
    const r = result.rules.find((x) => x.family === family && x.table === table && x.chain === chain && source !== undefined && (source === x.text || source.endsWith(` ${x.text}`)));
    if (!r) return { why: 'not written by istio-cni', setting: null };
    let setting = r.option ?? null;
    if (setting !== null && setting.startsWith('ambient.dnsCapture')) setting = dns.setting;
    return { why: r.why, setting };
  };
  return {
    mesh: 'istio',
    name: pod.name,
    pod,
    source: 'running',
    install: 'cni',
    rulesBy: 'istio-cni',
    rules4,
    rules6,
    ruleNotes: ruleNotes([rules4, rules6], explain),
    proxy,
    startup,
    apps: [...pod.containers],
    settings,
    annotations: { ...pod.annotations },
    opaquePorts: [],
    ipCommands: result.ipCommands,
    cniNotReady: false,
    warnings,
    ambient,
    ...(nft ? { nft: result.nft } : {}),
  };
}

/**
 * The node's rules for kubelet probes (`CreateHostRulesForHealthChecks`), with the probe ipset
 * holding the ambient pods' addresses.
 * @internal
 */
export function hostProbeRules(ambientAddresses: readonly string[], nftables: boolean, snat: string = AMBIENT.HOST_PROBE_SNAT): { rules?: string; ipsets?: string; nft?: string } {
  const r = compileIstioAmbient({ host: true, config: { ...AMBIENT_DEFAULT_CONFIG, nativeNftables: nftables, hostProbeSNATAddress: snat } });
  const set = `${AMBIENT.PROBE_IPSET}-v4`;
  const v4 = ambientAddresses.filter((a) => !a.includes(':'));
  if (nftables) {
    // The node agent keeps the set beside the table and adds each ambient pod as it is enrolled.
    const table = 'inet istio-ambient-nat';
    const sets = `add table ${table}\nadd set ${table} ${set} { type ipv4_addr ; }\n`;
    return { nft: `${sets}${r.nft}${v4.length > 0 ? `add element ${table} ${set} { ${v4.join(', ')} }\n` : ''}` };
  }
  const members = v4.map((a) => `add ${set} ${a}`);
  return { rules: r.restore[0]!.text, ipsets: [`create ${set} hash:ip family inet hashsize 1024 maxelem 65536`, ...members].join('\n') + '\n' };
}
