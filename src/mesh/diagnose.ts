/**
 * Diagnoses: for a verdict other than `meshed`, the rule (or the missing rule) responsible, the
 * setting behind it (annotation, chart value, install mode, start-up order) and the usual fix.
 *
 * @module
 */
import { LINKERD_ANNOTATIONS } from '../compile/linkerd/defaults.js';
import { ISTIO_CNI_ANNOTATIONS } from '../compile/istio/defaults.js';
import { formatAddr, type Addr } from './address.js';
import { formatHopRule } from './decide.js';
import { AMBIENT, markMask } from '../compile/istio/ambient.js';
import { ZTUNNEL } from './ambient.js';
import type { End, PodRuntime } from './runtime.js';
import type { HopRule, MeshAmbient, MeshHop, MeshName, MeshPod, MeshPolicyStop, MeshService, MeshVerdict, ValidatorResult } from './types.js';

/** Everything the diagnosis looks at. @internal */
export interface Story {
  /** The connection is the kubelet's probe from the node (with or without istio-cni's host rule). */
  readonly kubelet: { readonly hostRules: boolean; readonly hop: MeshHop } | null;
  readonly mtls: 'permissive' | 'strict';
  /** `SO_MARK` the connecting process set, if any. */
  readonly actorMark: number | null;
  readonly mesh: MeshName;
  readonly verdict: MeshVerdict;
  readonly client: PodRuntime;
  /** The pod the connection ended in (null: it left for a host outside the scenario). */
  readonly dest: PodRuntime | null;
  /** The connecting process: `web (uid 1000)`. */
  readonly origin: string;
  readonly dst: Addr;
  readonly proto: 'tcp' | 'udp';
  readonly phase: string;
  readonly hops: readonly MeshHop[];
  readonly first: MeshHop;
  readonly arrival: MeshHop | null;
  readonly end: End;
  readonly services: readonly MeshService[];
  readonly validators: readonly ValidatorResult[];
  readonly notes: readonly string[];
  readonly warnings: readonly string[];
  /** The NetworkPolicy that dropped the connection on the cluster path. */
  readonly policy?: MeshPolicyStop | null;
}

interface MeshWords {
  readonly proxy: string;
  readonly init: string;
  readonly cni: string;
  readonly validator: string;
  readonly outputChain: string;
  readonly inboundChain: string;
  readonly uid: number;
  readonly inject: string;
  readonly nativeSidecar: string;
  readonly skipOutbound: string;
  readonly skipOutboundRanges: string | null;
  readonly skipInbound: string;
  readonly ipv6Fix: string;
  readonly cniRepair: string;
}

const WORDS: Record<MeshName, MeshWords> = {
  linkerd: {
    proxy: 'linkerd-proxy',
    init: 'linkerd-init',
    cni: 'linkerd-cni',
    validator: 'linkerd-network-validator',
    outputChain: 'PROXY_INIT_OUTPUT',
    inboundChain: 'PROXY_INIT_REDIRECT',
    uid: 2102,
    inject: `${LINKERD_ANNOTATIONS.inject}: enabled`,
    nativeSidecar: `${LINKERD_ANNOTATIONS.proxyEnableNativeSidecar}: "true" (or the chart value proxy.nativeSidecar: true, the default since Linkerd 2.20)`,
    skipOutbound: LINKERD_ANNOTATIONS.skipOutboundPorts,
    skipOutboundRanges: null,
    skipInbound: LINKERD_ANNOTATIONS.skipInboundPorts,
    ipv6Fix: 'install Linkerd with disableIPv6: false, so that linkerd-init (or linkerd-cni, "ipv6": true) writes the same rules with ip6tables and the proxy listens on [::1]:4140 as well',
    cniRepair: 'once linkerd-cni is running on the node, delete the pod (linkerd-cni-repair-controller does this for pods whose linkerd-network-validator exited with 95)',
  },
  istio: {
    proxy: 'istio-proxy',
    init: 'istio-init',
    cni: 'istio-cni',
    validator: 'istio-validation',
    outputChain: 'ISTIO_OUTPUT',
    inboundChain: 'ISTIO_INBOUND',
    uid: 1337,
    inject: `${ISTIO_CNI_ANNOTATIONS.inject}: "true"`,
    nativeSidecar: 'sidecar.istio.io/nativeSidecar: "true" (or ENABLE_NATIVE_SIDECARS=true on istiod; its default, "auto", turns them on only when the pod\'s node, or every node for an unscheduled pod, runs kubelet 1.33 or newer)',
    skipOutbound: ISTIO_CNI_ANNOTATIONS.excludeOutboundPorts,
    skipOutboundRanges: ISTIO_CNI_ANNOTATIONS.excludeIPCidrs,
    skipInbound: ISTIO_CNI_ANNOTATIONS.excludeInboundPorts,
    ipv6Fix: 'turn on dual stack for the pod (ISTIO_DUAL_STACK=true, e.g. through meshConfig.defaultConfig.proxyMetadata or values.pilot.env), so that istio-iptables also writes the ip6tables rules',
    cniRepair: 'once istio-cni is ready on the node, delete the pod (with cni.repair enabled, istio-cni deletes or labels pods whose istio-validation failed)',
  },
};

function q(s: string): string {
  return `"${s}"`;
}

/** `PROXY_INIT_OUTPUT rule 3 RETURN "…" (why; setting)`. */
function describeRule(r: HopRule): string {
  const head = formatHopRule(r);
  if (r.event === 'policy') return head;
  const extra = [r.why?.replace(/\.$/, '') ?? null, r.setting].filter((x): x is string => x !== null && x !== '');
  return extra.length > 0 ? `${head} (${extra.join('; ')})` : head;
}

function roleOf(story: Story, rt: PodRuntime): string {
  return rt === story.client ? 'client' : 'server';
}

function isSelf(story: Story): boolean {
  return story.dest !== null && story.dest === story.client;
}

function familyWord(f: 4 | 6): string {
  return f === 4 ? 'IPv4' : 'IPv6';
}

/** The reasons a pod's rules were absent when the connection crossed it. */
function missingRules(story: Story, rt: PodRuntime, side: 'client' | 'server', family: 4 | 6): string[] {
  const w = WORDS[story.mesh];
  const pod = rt.mesh;
  const name = pod.name;
  if (pod.source === 'plain') {
    const reason = /not meshed \((.*)\)$/.exec(pod.settings[0] ?? '')?.[1] ?? 'it has no proxy';
    const ambientFix = story.mesh === 'istio' ? ` For ambient mode instead, label the pod (or its namespace) ${AMBIENT.DATAPLANE_MODE_LABEL}: ambient; istio-cni then enrols it with ztunnel, no restart needed.` : '';
    return [`${side}: pod ${name} is not meshed (${reason}), so nothing captures its connections. Fix: add ${w.inject} to the pod template (or its namespace) and recreate the pod.${ambientFix}`];
  }
  if (!rt.state.rules) {
    const step = rt.state.rulesStep;
    if (pod.cniNotReady) {
      return [`${side}: pod ${name} has no rules: ${w.cni} was not ready on the node when the pod's sandbox was created, so no iptables rules were written (the node-boot race). Fix: ${w.cniRepair}.`];
    }
    if (step && rt.state.init !== null) {
      const order = pod.startup.filter((s) => s.stage === 'init').map((s) => s.name).join(' → ');
      return [`${side}: at phase ${story.phase} the rules do not exist yet: ${step.name} writes them later in the start-up (init containers: ${order}). With native sidecars off the injector appends ${w.init} at the end of initContainers, so earlier init containers connect directly. Fix: ${w.nativeSidecar} puts ${w.init} and ${w.proxy} before the application's init containers (or use ${w.cni}, which writes the rules before any container).`];
    }
    if (pod.install === 'none' && pod.proxy) {
      return [`${side}: pod ${name} runs ${w.proxy} but nothing wrote rules for it: no ${w.init} init container, and the scenario was not told the ${w.cni} plugin is in use. Fix: pass --cni if the cluster runs ${w.cni}; otherwise the pod was not injected completely.`];
    }
    return [`${side}: pod ${name} has no rules at phase ${story.phase}.`];
  }
  const rules = family === 4 ? pod.rules4 : pod.rules6;
  if (!rules) {
    return [`${side}: pod ${name} has no ${familyWord(family)} rules (${family === 6 ? noIpv6Why(pod) : 'it has only IPv6 rules'}), so its ${familyWord(family)} connections are never captured. Fix: ${w.ipv6Fix}.`];
  }
  return [];
}

/** Why a pod got no IPv6 rules. */
function noIpv6Why(pod: MeshPod): string {
  if (pod.mesh === 'linkerd') {
    return pod.rulesBy === 'linkerd-cni'
      ? 'the linkerd-cni configuration has "ipv6": false, its default'
      : 'linkerd-init ran with --ipv6=false, which the injector passes while the chart value disableIPv6 is true, its default';
  }
  return `istio-iptables writes ip6tables rules only when the pod's first address is IPv6 (${pod.pod.podIPs.join(', ') || 'no addresses'}), or when any is and ISTIO_DUAL_STACK is set`;
}

function isProxyPort(pod: MeshPod, port: number): boolean {
  return pod.proxy?.otherPorts.some((o) => o.port === port) ?? false;
}

/** The fix for a rule that let a connection through uncaptured. */
function fixForRule(story: Story, r: HopRule, side: 'client' | 'server', pod: MeshPod): string {
  const w = WORDS[story.mesh];
  const c = r.comment ?? '';
  const text = r.text ?? '';
  const port = story.dst.port;
  if (story.mesh === 'linkerd') {
    if (c.includes('ignore-port') && side === 'client') {
      return `Fix: remove ${port} from ${w.skipOutbound} on pod ${pod.name} if this traffic should be meshed (the annotation replaces the chart's default list 4567,4568); skipping is meant for protocols the proxy cannot handle, which opaque ports now cover.`;
    }
    if (c.includes('ignore-port') && isProxyPort(pod, port)) {
      return `${port} is the proxy's own ${pod.proxy?.otherPorts.find((o) => o.port === port)?.role ?? 'port'} port: always skipped, by design (probes, metrics and tap reach it directly).`;
    }
    if (c.includes('ignore-port')) {
      return `Fix: remove ${port} from ${w.skipInbound} on pod ${pod.name} if it should be meshed (4190 and 4191, the proxy's own control and admin ports, are always skipped).`;
    }
    if (c.includes('ignore-subnet')) {
      return `Fix: narrow ${LINKERD_ANNOTATIONS.skipSubnets} on pod ${pod.name}: it matches the client's source address (it is an inbound, source-address skip).`;
    }
    if (c.includes('ignore-proxy-user-id') || c.includes('ignore-proxy-group-id')) {
      return `${story.origin} runs as the proxy's ${c.includes('group') ? 'GID' : 'UID'}, and every process with it bypasses the proxy — the documented workaround for init containers that need the network under ${w.cni} without native sidecars. Fix: if this traffic should be meshed, run it under another UID and use native sidecars (${w.nativeSidecar}).`;
    }
    if (c.includes('ignore-loopback')) {
      return `Connections to 127.0.0.0/8 and to the pod's own addresses leave on lo and are never redirected: traffic inside a pod is not meshed by design. Nothing to fix unless the call was meant for another pod.`;
    }
  } else {
    if (r.setting?.startsWith('-o') || r.setting?.startsWith('istio-init -o') || text.includes('--dport') && r.chain === 'ISTIO_OUTPUT' && r.target === 'RETURN' && !text.includes('owner')) {
      return `Fix: remove ${port} from ${w.skipOutbound} on pod ${pod.name} if this traffic should go through Envoy.`;
    }
    if (r.chain === 'ISTIO_OUTPUT' && r.target === 'RETURN' && /-d \S+ -j RETURN$/.test(text) && !text.includes('127.0.0.1')) {
      return `Fix: remove the destination's range from ${ISTIO_CNI_ANNOTATIONS.excludeIPCidrs} on pod ${pod.name} if this traffic should go through Envoy.`;
    }
    if (r.chain === 'ISTIO_INBOUND' && r.target === 'RETURN') {
      if (text.includes('15008')) return 'Port 15008 is the HBONE tunnel port Envoy itself listens on: never captured, by design.';
      if (isProxyPort(pod, port)) return `${port} is the proxy's own ${pod.proxy?.otherPorts.find((o) => o.port === port)?.role ?? 'port'} port: always excluded, by design.`;
      return `Fix: remove ${port} from ${w.skipInbound} on pod ${pod.name} if it should go through Envoy (15090, 15021 and 15020 are Envoy's and pilot-agent's own ports, always excluded).`;
    }
    if (text.includes('! --uid-owner') || text.includes('! --gid-owner')) {
      return "A process talking to its own pod (127.0.0.1 or the pod's own IP) over lo bypasses Envoy by design. Fix: call the pod through its Service to go through Envoy (Envoy's own connection to its pod is then sent to the inbound listener).";
    }
    if (text.includes('--uid-owner') || text.includes('--gid-owner')) {
      return `${story.origin} runs as the proxy's ${text.includes('gid') ? 'GID' : 'UID'} (${w.uid} by default): every process with it bypasses Envoy — the documented workaround for init containers under ${w.cni} without native sidecars. Fix: if this traffic should go through Envoy, run it under another UID and use native sidecars (${w.nativeSidecar}).`;
    }
    if (/ -d 127\.0\.0\.1\/32 -j RETURN$/.test(text)) return 'Connections that explicitly target localhost are never captured, by design.';
  }
  return '';
}

/** Why an ambient client's connection was not sent to ztunnel. */
function ambientClientSide(story: Story, a: MeshAmbient): string[] {
  const rt = story.client;
  const hop = story.first;
  const name = rt.mesh.name;
  const to = formatAddr(story.dst.address, story.dst.port);
  const last = hop.rule ? ` The last rule it met: ${describeRule(hop.rule)}.` : '';
  const mark = story.actorMark;
  if (mark !== null && (mark & AMBIENT.INPOD_MASK) === AMBIENT.INPOD_MARK) {
    return [`client: ${story.origin} sets SO_MARK 0x${mark.toString(16)} on its socket, and 0x${AMBIENT.INPOD_MARK.toString(16)} under mask 0x${AMBIENT.INPOD_MASK.toString(16)} is ztunnel's own mark: the in-pod rules (every ${AMBIENT.CHAIN_OUTPUT} REDIRECT has \`-m mark ! --mark ${markMask(AMBIENT.INPOD_MARK, AMBIENT.INPOD_MASK)}\`) take the connection for ztunnel's and leave it alone, so it bypasses ztunnel and leaves pod ${name} in plain text.${last} Fix: do not set mark bits 0x${AMBIENT.INPOD_MARK.toString(16)}/0x${AMBIENT.INPOD_MASK.toString(16)} in the application (they are reserved for ztunnel; the mark is istio-cni's and ztunnel's shared setting, not a pod setting).`];
  }
  if (story.proto === 'udp') {
    if (story.dst.port === 53 && !a.dnsCapture) {
      return [`client: DNS capture is off for pod ${name} (${a.dnsSetting}), so ${story.origin}'s query to ${to} is not redirected to ztunnel's DNS proxy (15053) and goes to the resolver as it is.${last} Fix: set ${AMBIENT.DNS_CAPTURE_ANNOTATION}: "true" on the pod (or ambient.dnsCapture: true on istio-cni) if ztunnel should resolve Services and ServiceEntries.`];
    }
    return [`client: UDP is not captured in ambient mode: the in-pod rules redirect TCP to ztunnel${a.dnsCapture ? ' and only UDP port 53 to its DNS proxy' : ''}, so ${story.origin}'s datagrams to ${to} go out as they are.${last} No setting changes this: ztunnel proxies TCP only.`];
  }
  if (hop.rule) return [`client: ${story.origin} → ${to} was not redirected to ztunnel: ${describeRule(hop.rule)}.`];
  return [`client: ${story.origin}'s connection was not redirected (${hop.why}).`];
}

/** Why a connection arriving at an ambient pod did not go through ztunnel. */
function ambientServerSide(story: Story, rt: PodRuntime, a: MeshAmbient): string[] {
  const hop = story.arrival;
  const name = rt.mesh.name;
  const last = hop?.rule ? ` The last rule it met: ${describeRule(hop.rule)}.` : '';
  if (story.proto === 'udp') {
    const redirect = a.backend === 'nftables'
      ? 'inet istio-ambient-nat istio-prerouting redirects only tcp to :15006'
      : `the ${AMBIENT.CHAIN_PREROUTING} REDIRECT to 15006 is -p tcp`;
    return [`server: UDP arriving at ambient pod ${name} is never redirected to ztunnel (${redirect}); it reaches the application directly.${last}`];
  }
  if (a.bypassInbound) {
    return [`server: pod ${name} has ${AMBIENT.BYPASS_INBOUND_ANNOTATION}: "${rt.mesh.annotations[AMBIENT.BYPASS_INBOUND_ANNOTATION]}", so istio-cni writes no inbound REDIRECT to ztunnel's 15006 in its namespace: a connection arriving in plain text reaches the application directly, without ztunnel (only HBONE, to 15008, still goes through it).${last} Fix: remove the annotation if this traffic should be captured (it is meant for pods that receive traffic from outside the mesh, such as ingress gateways); or make the client ambient or sidecar-injected so it arrives over HBONE or mTLS.`];
  }
  if (hop?.rule) return [`server: the arriving connection ${hop.from} → ${hop.to} was not redirected to ztunnel: ${describeRule(hop.rule)}.`];
  return [`server: the arriving connection was not redirected${hop ? ` (${hop.why})` : ''}.`];
}

/** The kubelet's probe: what the node's host rule did and what became of the probe in the pod. */
function kubeletStory(story: Story): string[] {
  const k = story.kubelet!;
  const dest = story.dest;
  const a = dest?.mesh.ambient;
  const snat = k.hop.rule;
  const probeAddr = AMBIENT.HOST_PROBE_SNAT;
  const out: string[] = [];
  if (!a) {
    out.push(`kubelet: pod ${dest?.mesh.name ?? 'the server'} is not ambient, so istio-cni's host rule does not apply to it (its address is not in ${AMBIENT.PROBE_IPSET}-v4)${dest?.mesh.proxy ? '; a sidecar pod has its probes rewritten to the pilot-agent port 15020 by the injector instead' : ''}.`);
    return out;
  }
  if (story.verdict === 'plaintext' && snat) {
    out.push(`kubelet: the node's ${describeRule(snat)} rewrote the probe's source to ${probeAddr}, and pod ${dest!.mesh.name}'s in-pod rule (${AMBIENT.CHAIN_PREROUTING}: -s ${probeAddr} -p tcp -j ACCEPT) lets that source reach the application directly, as it should: ztunnel's policies do not apply to health probes.`);
    return out;
  }
  if (story.verdict === 'plaintext') {
    out.push(`kubelet: the probe reached the application directly without the probe SNAT.`);
    return out;
  }
  const captured = story.hops.find((h) => h.receiver.startsWith('ztunnel inbound plaintext'));
  const missing = k.hostRules
    ? `no host rule matched the probe (${AMBIENT.PROBE_IPSET}-v4 must hold the pod's address)`
    : `the node has no ${AMBIENT.CHAIN_POSTROUTING} rule (istio-cni's host rules: -A ${AMBIENT.CHAIN_POSTROUTING} -m owner --socket-exists -p tcp -m set --match-set ${AMBIENT.PROBE_IPSET}-v4 dst -j SNAT --to-source ${probeAddr})`;
  out.push(`kubelet: ${missing}, so the probe arrives from the node's address ${ZTUNNEL.nodeAddress} and pod ${dest!.mesh.name}'s ${captured?.rule ? describeRule(captured.rule) : 'inbound capture'} sends it to ztunnel like any plain-text client.`
    + (story.verdict === 'refused'
      ? ` ztunnel rejects it: plain text is refused under STRICT mTLS, so the probe fails and kubelet restarts the container or marks it not ready.`
      : ` It gets through only because the PeerAuthentication mode is PERMISSIVE: under STRICT, or with an AuthorizationPolicy that does not allow the node, ztunnel rejects it and the probe fails.`)
    + ` Fix: let istio-cni write its host rules on the node (it does at start-up; check the istio-cni pod's logs and that ${AMBIENT.PROBE_IPSET}-v4 exists), and keep ambient.probeSNAT (${probeAddr}) equal on the node and in the pods.`);
  return out;
}

/** Why the client's own connection was not captured. */
function clientSide(story: Story): string[] {
  const w = WORDS[story.mesh];
  const rt = story.client;
  const hop = story.first;
  const family = story.dst.family;
  if (rt.mesh.ambient && rt.state.rules) return ambientClientSide(story, rt.mesh.ambient);
  if (story.proto === 'udp') {
    return [`client: UDP is never redirected: ${story.mesh === 'linkerd' ? 'proxy-init REDIRECTs only -p tcp' : 'istio-iptables REDIRECTs only TCP (UDP port 53 to 15053 with DNS capture is the one exception)'}, so ${story.origin}'s datagrams to ${formatAddr(story.dst.address, story.dst.port)} go out as they are. ${hop.rule ? `The last rule it met: ${describeRule(hop.rule)}. ` : ''}No setting changes this: ${story.mesh === 'linkerd' ? 'Linkerd' : 'the Istio sidecar'} proxies TCP only.`];
  }
  const missing = missingRules(story, rt, 'client', family);
  if (missing.length > 0) return missing;
  if (hop.rule) {
    const fix = fixForRule(story, hop.rule, 'client', rt.mesh);
    if (hop.rule.event === 'policy') {
      const inc = story.mesh === 'istio' ? rt.mesh.ruleNotes.filter((n) => n.chain === 'ISTIO_OUTPUT' && n.text.endsWith('-j ISTIO_REDIRECT') && n.family === family) : [];
      const ann = rt.mesh.annotations[ISTIO_CNI_ANNOTATIONS.includeIPCidrs];
      if (story.mesh === 'istio' && inc.length > 0) {
        return [`client: ${story.origin} → ${formatAddr(story.dst.address, story.dst.port)} was not redirected: ${formatHopRule(hop.rule)}. ISTIO_OUTPUT redirects only ${inc.map((n) => n.text.replace(/^-A ISTIO_OUTPUT /, '').replace(/ -j ISTIO_REDIRECT$/, '')).join(', ')}${ann !== undefined ? ` (${ISTIO_CNI_ANNOTATIONS.includeIPCidrs}: ${q(ann)} on pod ${rt.mesh.name})` : ''}. Fix: add the destination's range to ${ISTIO_CNI_ANNOTATIONS.includeIPCidrs} (or use "*").`];
      }
      if (story.mesh === 'istio' && !rt.mesh.ruleNotes.some((n) => n.chain === 'ISTIO_OUTPUT' && n.text.endsWith('-j ISTIO_REDIRECT'))) {
        return [`client: ${story.origin} → ${formatAddr(story.dst.address, story.dst.port)} was not redirected: ${formatHopRule(hop.rule)}; the pod's rules capture no outbound traffic (${ISTIO_CNI_ANNOTATIONS.includeIPCidrs} is empty). Fix: set it to "*" or to the ranges to capture.`];
      }
      return [`client: ${story.origin} → ${formatAddr(story.dst.address, story.dst.port)} was not redirected: ${formatHopRule(hop.rule)}.${fix ? ` ${fix}` : ''}`];
    }
    return [`client: ${story.origin} → ${formatAddr(story.dst.address, story.dst.port)} was not redirected to ${w.proxy}: ${describeRule(hop.rule)}.${fix ? ` ${fix}` : ''}`];
  }
  return [`client: ${story.origin}'s connection was not redirected (${hop.why}).`];
}

/** Why the connection was not captured where it entered the destination pod. */
function serverSide(story: Story): string[] {
  const w = WORDS[story.mesh];
  if (story.dest === null) {
    const end = story.end;
    const at = end.kind === 'external' ? formatAddr(end.address, end.port) : '?';
    if (story.proto === 'udp' && story.dst.port === 53 && story.client.mesh.ambient) {
      return [`server: the query went on to ${at}, outside this scenario: a resolver has no proxy, and DNS is not tunnelled. Expected.`];
    }
    return [`server: the connection left for ${at}, which is not a pod of this scenario${story.services.length > 0 ? ' nor a listed Service' : ''}: there is no server-side proxy. Check the destination (and --service for a ClusterIP).`];
  }
  const rt = story.dest;
  const hop = story.arrival;
  const family = story.dst.family;
  if (story.proto === 'udp') {
    if (rt.mesh.ambient) return ambientServerSide(story, rt, rt.mesh.ambient);
    return [`server: UDP arriving at pod ${rt.mesh.name} is never redirected to the inbound proxy (${story.mesh === 'linkerd' ? 'PROXY_INIT_REDIRECT REDIRECTs -p tcp only' : 'the PREROUTING jump to ISTIO_INBOUND is -p tcp'}); it reaches the application directly.`];
  }
  if (isSelf(story)) {
    return [`server: the destination is pod ${rt.mesh.name} itself: the connection went over lo and never met PREROUTING's nat rules (its nat decision was made at OUTPUT), so the inbound proxy is not involved.${story.mesh === 'istio' ? ' To go through Envoy, call the pod through its Service: Envoy then connects to its own pod and the loopback rule sends that to 15006.' : ''}`];
  }
  const missing = missingRules(story, rt, 'server', family);
  if (missing.length > 0) return missing;
  if (rt.mesh.ambient) return ambientServerSide(story, rt, rt.mesh.ambient);
  if (hop?.rule) {
    const fix = fixForRule(story, hop.rule, 'server', rt.mesh);
    if (hop.rule.event === 'policy') {
      const inc = story.mesh === 'istio' ? rt.mesh.ruleNotes.filter((n) => n.chain === 'ISTIO_INBOUND' && n.text.endsWith('-j ISTIO_IN_REDIRECT') && n.family === family) : [];
      if (story.mesh === 'istio' && inc.length > 0) {
        return [`server: the arriving connection to ${hop.to} was not redirected: ${formatHopRule(hop.rule)}; ISTIO_INBOUND captures only ${inc.map((n) => n.text.replace(/^-A ISTIO_INBOUND /, '').replace(/ -j ISTIO_IN_REDIRECT$/, '')).join(', ')} (${ISTIO_CNI_ANNOTATIONS.includeInboundPorts}). Fix: add ${story.dst.port} to it, or use "*".`];
      }
      if (story.mesh === 'istio') {
        return [`server: the arriving connection to ${hop.to} was not redirected: ${formatHopRule(hop.rule)}; pod ${rt.mesh.name} captures no inbound traffic (${ISTIO_CNI_ANNOTATIONS.includeInboundPorts} is empty). Fix: set it to "*".`];
      }
      return [`server: the arriving connection to ${hop.to} was not redirected: ${formatHopRule(hop.rule)}.${fix ? ` ${fix}` : ''}`];
    }
    const skipped = hop.rule.target === 'RETURN' || hop.rule.target === 'ACCEPT';
    return [`server: the arriving connection ${hop.from} → ${hop.to} ${skipped ? `skipped ${w.proxy}` : 'was not redirected'}: ${describeRule(hop.rule)}.${fix ? ` ${fix}` : ''}`];
  }
  return [`server: the arriving connection was not redirected${hop ? ` (${hop.why})` : ''}.`];
}

function refused(story: Story): string[] {
  const w = WORDS[story.mesh];
  const end = story.end;
  if (end.kind !== 'refused') return [];
  const hop = story.hops[story.hops.length - 1]!;
  const rt = end.rt;
  const p = rt.mesh.proxy;
  const port = Number(hop.to.slice(hop.to.lastIndexOf(':') + 1));
  if (p && port === p.outboundPort && hop.rule && hop.rule.target === 'REDIRECT' && !rt.state.proxy) {
    const when = rt.state.init !== null ? `at phase ${story.phase}` : 'now';
    const reasons: string[] = [];
    if (rt.mesh.install === 'cni') reasons.push(`with ${w.cni} the rules exist from sandbox creation, before any container`);
    if (!p.nativeSidecar) reasons.push(`with native sidecars off, ${w.proxy} starts only with the containers, after every init container`);
    return [
      `${roleOf(story, rt)}: ${describeRule(hop.rule)} sent ${hop.from}'s connection to ${hop.to}, but ${w.proxy} is not running ${when}${reasons.length > 0 ? `: ${reasons.join('; ')}` : ''}. Nothing listens there, so the connection is refused.`,
      `Fix: use native sidecars (${w.nativeSidecar}), so the proxy runs before the application's init containers; or run the init container as the proxy's UID (securityContext.runAsUser: ${p.uid}) so its traffic bypasses the proxy; or skip its destination (${w.skipOutbound}: "${story.dst.port}"${w.skipOutboundRanges ? `, or ${w.skipOutboundRanges}` : ''}).`,
    ];
  }
  if (p && port === p.inboundPort && !rt.state.proxy) {
    return [`${roleOf(story, rt)}: the arriving connection was redirected to ${hop.to}${hop.rule ? ` by ${describeRule(hop.rule)}` : ''}, but ${w.proxy} is not running in pod ${rt.mesh.name}.`];
  }
  if (end.reason.includes('STRICT')) {
    const cp = story.client.mesh.proxy;
    const bySidecar = cp !== null && cp.kind !== 'ztunnel' && story.hops.some((h) => h.fromActor === `${story.client.mesh.name}/${cp.container}`);
    if (bySidecar && rt.mesh.ambient) {
      const target = hop.originalDestination ?? hop.to;
      const targetPort = target.slice(target.lastIndexOf(':') + 1);
      return [`${roleOf(story, rt)}: ${story.client.mesh.name}'s Envoy sent the connection to ambient pod ${rt.mesh.name} in plain text (it uses HBONE only towards a Service's ambient endpoints, from Istio 1.22), ztunnel took it on its plaintext port ${hop.to.slice(hop.to.lastIndexOf(':') + 1)}, and ${end.reason}. Fix: call the pod through its Service, with Istio 1.22 or later (istiod with ambient enabled, PILOT_ENABLE_SENDING_HBONE on, as it is by default), so that Envoy sends HBONE to its 15008; or relax the server's PeerAuthentication to PERMISSIVE (or a portLevelMtls exception for port ${targetPort}).`];
    }
    return [`${roleOf(story, rt)}: the connection reached ${hop.receiver.replace(/ \(.*$/, '')} in plain text, and ${end.reason}. Fix: make the client meshed (ambient, or a sidecar) so it arrives over HBONE or mTLS; or relax the server's PeerAuthentication to PERMISSIVE (or a portLevelMtls exception for port ${story.dst.port}).`];
  }
  if (hop.rule && (hop.rule.target === 'REJECT')) {
    return [`${roleOf(story, rt)}: ${describeRule(hop.rule)} rejected the connection.`];
  }
  const listeners = rt.listeners.filter((l) => l.role === 'app').map((l) => `${l.label}:${l.port}/${l.proto ?? 'tcp+udp'}`);
  return [
    `${roleOf(story, rt)}: nothing listens at ${hop.to} (${story.proto}) in pod ${rt.mesh.name}: ${rt.state.apps ? `its applications listen on ${listeners.join(', ') || 'no declared port'}` : 'its applications are not running yet'}${hop.rule ? `; the last rule: ${describeRule(hop.rule)}` : ''}. Fix: connect to a port a container declares (containerPort, with the right protocol), or check the Service's targetPort.`,
  ];
}

function loop(story: Story): string[] {
  const w = WORDS[story.mesh];
  const end = story.end;
  if (end.kind !== 'loop') return [];
  const hop = story.hops[story.hops.length - 1]!;
  const pod = end.rt.mesh;
  const exempt = pod.ruleNotes.filter((n) => n.chain === w.outputChain && /--(uid|gid)-owner \d+/.test(n.text) && n.text.endsWith('-j RETURN') && !n.text.includes('! --'));
  if (end.uid < 0) {
    return [`${roleOf(story, end.rt)}: the connection went round ${story.hops.length} legs without reaching an application: the proxies keep sending it to each other.`];
  }
  const exemptText = exempt.length > 0 ? exempt.map((n) => `${n.chain} rule ${n.rule} (${/--(uid|gid)-owner (\d+)/.exec(n.text)?.[0] ?? ''})`).join(', ') : 'no UID';
  const fix = story.mesh === 'linkerd'
    ? `Fix: make the rules and the proxy agree: ${LINKERD_ANNOTATIONS.proxyUid} (linkerd-init --proxy-uid) must be the UID the ${w.proxy} container runs as (securityContext.runAsUser); proxy-init writes no UID exemption for uid 0 or less.`
    : `Fix: istio-init's -u (and -g, which defaults to -u) must be the ${w.proxy} container's runAsUser/runAsGroup; the injector copies a non-zero runAsUser into -u, and istio-cni reads the container's securityContext.`;
  return [
    `${roleOf(story, end.rt)}: ${end.actor} (uid ${end.uid}, gid ${end.gid}) in pod ${pod.name} connects onward, and ${hop.rule ? describeRule(hop.rule) : 'the rules'} sends its own connection back to its outbound listener ${hop.to}: a loop. The rules exempt ${exemptText}, not uid ${end.uid}.`,
    fix,
  ];
}

function dropped(story: Story): string[] {
  const end = story.end;
  if (end.kind !== 'dropped') return [];
  const hop = story.hops[story.hops.length - 1]!;
  return [`${roleOf(story, end.rt)}: the connection was dropped in pod ${end.rt.mesh.name}: ${end.reason}${hop.rule && hop.rule.event === 'rule' ? ` (${describeRule(hop.rule)})` : ''}.`];
}

/**
 * The diagnosis of a scenario. For `meshed`: notes only (opaque ports, failed start-up checks).
 * @internal
 */
export function diagnose(story: Story): string[] {
  const out: string[] = [];
  if (story.policy) {
    out.push(policyStory(story.policy, story));
    out.push(...story.notes);
    out.push(...story.warnings.map((x) => `note: ${x}`));
    return out;
  }
  if (story.kubelet) {
    out.push(...kubeletStory(story));
    const end = story.end;
    if (end.kind === 'refused' && !end.reason.includes('STRICT')) out.push(...refused(story));
    if (end.kind === 'dropped') out.push(...dropped(story));
    out.push(...story.notes, ...story.warnings.map((x) => `note: ${x}`));
    return out;
  }
  switch (story.verdict) {
    case 'meshed':
      break;
    case 'plaintext':
      out.push(...clientSide(story), ...serverSide(story));
      break;
    case 'client-bypass':
      out.push(...clientSide(story));
      if (story.dest?.mesh.ambient) {
        out.push(`server: ${story.dest.mesh.name}'s ztunnel accepted the connection on its inbound plaintext port ${ZTUNNEL.inboundPlaintextPort}, so the server side is meshed, but the connection reached it in plain text, without a client identity (under STRICT mTLS, or with authorization policies that require a meshed client, ztunnel rejects it).`);
      } else {
        out.push(`server: ${story.dest?.mesh.name ?? 'the server'}'s ${WORDS[story.mesh].proxy} accepted the connection on its inbound port, so the server side is meshed, but the connection reached it in plain text, without the client proxy's mTLS identity (authorization policies that require a meshed client deny it).`);
      }
      break;
    case 'server-bypass':
      out.push(...serverSide(story));
      break;
    case 'refused':
      out.push(...refused(story));
      break;
    case 'loop':
      out.push(...loop(story));
      break;
    case 'dropped':
      out.push(...dropped(story));
      break;
  }
  out.push(...story.notes);
  for (const v of story.validators) if (!v.ok) out.push(`${v.pod}: ${v.message}.`);
  out.push(...story.warnings.map((x) => `note: ${x}`));
  return out;
}

/**
 * The diagnosis of a connection a NetworkPolicy dropped on the cluster path: the policy, where it
 * was enforced, the port and source the enforcer saw and why (the mesh changed them), the fix.
 */
function policyStory(p: MeshPolicyStop, story: Story): string {
  const where = `${p.direction === 'ingress' ? 'ingress to' : 'egress from'} ${p.pod} on node ${p.node}`;
  const rule = p.rule === null ? `the pod is isolated for ${p.direction} and no rule of ${p.namespace}/${p.name} allows it` : `rule ${p.rule} of ${p.namespace}/${p.name} decided`;
  const head = `dropped by NetworkPolicy ${p.namespace}/${p.name} (${where})`;
  const proto = p.protocol;
  const peer = p.direction === 'ingress' ? `from ${p.src}` : `to ${p.dst}`;
  const arrives = p.direction === 'ingress' ? 'arrives on' : 'leaves for';
  const open = p.direction === 'ingress' ? 'every port of the pod is open to them' : 'they reach every port of meshed pods';
  switch (p.why) {
    case 'opaque':
      return `${head}: the connection ${arrives} ${p.port}, the proxy's inbound port, because ${p.appPort} is opaque (Linkerd's opaque transport carries ${p.appPort} in a header); ${rule}. Allow ${p.port}/${proto} ${peer} in the policy's ${p.direction} rules (the port rules on ${p.appPort} do not see meshed clients: once ${p.port} is allowed, ${open}, and Linkerd's Server/AuthorizationPolicy is where to restrict them), or skip the proxy for ${p.appPort} (config.linkerd.io/skip-inbound-ports).`;
    case 'forced':
      return `${head}: the connection ${arrives} ${p.port}, the proxy's inbound port, not ${p.appPort}, because Linkerd 2.18 and later send every meshed pod-to-pod connection there with the target port in a transport header (linkerd/linkerd2#13715, #15246); ${rule}. Allow ${p.port}/${proto} ${peer} (then the policy's port rules no longer restrict meshed clients: restrict them with Linkerd's Server/AuthorizationPolicy).`;
    case 'hbone':
      return `${head}: the connection ${arrives} ${p.port}, ztunnel's HBONE port, because both ends are in the ambient mesh (the application port ${p.appPort} travels inside the tunnel's CONNECT); ${rule}. Allow ${p.port}/${proto} ${peer} (ambient's own advice: allow 15008 wherever an application port is allowed; the port rules then no longer restrict meshed clients, and AuthorizationPolicy is where to restrict them).`;
    case 'probe-snat':
      return `${head}: the kubelet's probe arrives from ${p.src}, istio-cni's probe SNAT address, not from the node's address, so the rule that always admits traffic from the pod's own node does not apply and the policy judges the probe; ${rule}. Allow ingress from ipBlock ${p.src.includes(':') ? `${p.src}/128` : `${p.src}/32`} to port ${p.port}/${proto} (Istio's ambient NetworkPolicy guide asks for this exception), or turn the probe SNAT off.`;
    default: {
      const sidecar = story.mesh === 'istio' && story.dest?.mesh.proxy?.kind !== 'ztunnel' && story.dest?.mesh.proxy && p.direction === 'ingress'
        ? ` The node sees the application's port ${p.port}: the sidecar's rules redirect it to Envoy's ${story.dest.mesh.proxy.inboundPort} only inside the pod, after the policy judged it.`
        : '';
      return `${head}: ${rule} for ${p.src} → ${p.dst}:${p.port}/${proto}.${sidecar} Allow it in the policy's ${p.direction} rules.`;
    }
  }
}
