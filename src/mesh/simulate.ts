/**
 * A connection between two meshed pods, end to end: each pod is its own network namespace with
 * its rules and its sockets; the proxies are actors that accept on their ports, read
 * `SO_ORIGINAL_DST` and connect onward as the proxy's UID; the pods reach each other over the
 * network, where the node's Service DNAT applies to connections no proxy resolved.
 *
 * @module
 */
import type { ConnectResult, ConnectSpec } from '../engine/path/netns.js';
import type { TraceEvent } from '../engine/trace/events.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { readNamespace, readPod, type Namespace, type Pod, type PodContainer } from '../compile/pod.js';
import { canonicalAddress, findService, formatAddr, parseAddr, parseServices, type Addr } from './address.js';
import { badPod, describeProcess } from './common.js';
import { acceptingListener, decidingRule, departure, formatHopRule, type EntryHook } from './decide.js';
import { diagnose, type Story } from './diagnose.js';
import { defaultPods } from './defaults.js';
import { ISTIO_SCENARIO_DEFAULTS, prepareIstioPod } from './istio.js';
import { prepareLinkerdPod } from './linkerd.js';
import { findListener, podRuntime, type End, type PodListener, type PodRuntime } from './runtime.js';
import type { HopRule, MeshHop, MeshName, MeshPod, MeshPolicyStop, MeshResult, MeshScenarioOptions, MeshService, MeshVerdict, ValidatorResult } from './types.js';
import { validateMeshPod } from './validate.js';
import { hostProbeRules, ZTUNNEL } from './ambient.js';
import { AMBIENT } from '../compile/istio/ambient.js';
import { parseIstioVersion } from '../compile/istio/version.js';
import { Netns } from '../engine/path/netns.js';
import { expectArgument, expectFields, expectOneOf } from '../model/guard.js';
import { expectMeshScenarioOptions } from './options-shape.js';

/**
 * Options of {@link prepareMeshPod}.
 *
 * @example
 * ```ts
 * const o: PrepareMeshPodOptions = { cni: true, nativeSidecars: false };
 * ```
 */
export interface PrepareMeshPodOptions {
  /** The pod's Namespace (its annotations are the fallback for the pod's; its labels may ask for injection). */
  readonly namespace?: Namespace;
  /** The mesh's CNI plugin writes the rules. */
  readonly cni?: boolean;
  /** Native sidecars for a pod injected here (default: the mesh's default, on). */
  readonly nativeSidecars?: boolean;
  /** The CNI plugin was not ready when the pod started. */
  readonly cniNotReady?: boolean;
  /** Istio: enrol the pod in ambient mode whatever its labels say (not a pod with a sidecar or the host network). */
  readonly ambient?: boolean;
  /** Istio ambient: istio-cni's nftables backend for the in-pod rules. */
  readonly nativeNftables?: boolean;
  /** Istio ambient: the node's DNS capture (default on). */
  readonly dnsCapture?: boolean;
}

/**
 * A pod as it runs in a mesh: injected with the mesh's defaults when written with the inject
 * annotation, its rules from its init container's arguments or from the CNI plugin, its start-up
 * order and its proxy.
 *
 * @example
 * ```ts
 * const p = prepareMeshPod('linkerd', readPod(text), { cni: true, nativeSidecars: false });
 * p.startup.map((s) => `${s.stage}:${s.name}`); // ['sandbox:linkerd-cni', 'init:fetch', 'init:linkerd-network-validator', …]
 * ```
 */
export function prepareMeshPod(mesh: MeshName, pod: Pod, options: PrepareMeshPodOptions = {}): MeshPod {
  expectArgument(mesh, 'string', 'mesh');
  expectArgument(pod, 'object', 'pod');
  expectArgument(options, 'object', 'options');
  expectOneOf(mesh, ['linkerd', 'istio'], 'mesh');
  expectFields(pod, { initContainers: 'array', containers: 'array', annotations: 'object' }, 'pod');
  return mesh === 'linkerd' ? prepareLinkerdPod(pod, options) : prepareIstioPod(pod, options);
}

/** The process that makes a connection. */
interface Actor {
  readonly container: string;
  readonly uid: number;
  readonly gid: number;
  readonly role: 'app' | 'init' | 'outbound' | 'inbound';
  /** Source address the socket binds. */
  readonly src?: string;
  /** `IP_TRANSPARENT` on its socket (ztunnel's), so that it may bind its client's address. */
  readonly transparent?: boolean;
  /** `SO_MARK` of its socket. */
  readonly mark?: number;
}

type Leg =
  | {
      readonly kind: 'local'; readonly rt: PodRuntime; readonly actor: Actor; readonly dst: Addr; readonly note: string | null; readonly header: number | null;
      /** A proxy's outbound side sends this connection in plain text (Envoy to an ambient pod without HBONE). */
      readonly plain?: boolean;
    }
  | {
      readonly kind: 'arrive'; readonly rt: PodRuntime; readonly src: string; readonly sport: number; readonly from: string; readonly dst: Addr; readonly header: number | null;
      /** Sent by a proxy's outbound side (mTLS or HBONE), not in plain text. */
      readonly secured: boolean;
    };

const MAX_LEGS = 16;

/** @internal */
export function asPod(p: Pod | string): Pod {
  return typeof p === 'string' ? readPod(p) : p;
}

/** @internal */
export function asNamespace(n: Namespace | string | undefined): Namespace | undefined {
  return n === undefined ? undefined : typeof n === 'string' ? readNamespace(n) : n;
}

/** @internal */
export function podAddresses(pod: MeshPod, fallback: string, warnings: string[]): string[] {
  const out = pod.pod.podIPs.map((ip) => {
    const c = canonicalAddress(ip);
    if (c === null) badPod(`pod ${pod.name}: status.podIPs has a bad address "${ip}"`);
    return c;
  });
  if (out.length > 0) return out;
  warnings.push(`pod ${pod.name} has no status.podIPs: assuming ${fallback}`);
  return [fallback];
}

/**
 * Simulates a connection from the client pod (its application, or an init container at its
 * point of the start-up) to `dst`, through the client's rules and proxy, the network, the
 * server's rules and proxy, to the server's application; returns the verdict, every hop with the
 * rule that moved it, and a diagnosis.
 *
 * @example
 * ```ts
 * const r = simulateMesh({ mesh: 'linkerd' }); // the built-in client/server pair
 * r.verdict; // 'meshed'
 * r.hops.map((h) => `${h.pod}: ${h.from} → ${h.to} (${h.why})`);
 * const refused = simulateMesh({ mesh: 'linkerd', client, server, cni: true, nativeSidecars: false, phase: 'init:fetch' });
 * refused.verdict; // 'refused'
 * ```
 */
export function simulateMesh(options: MeshScenarioOptions): MeshResult {
  return runMeshScenario(options, null);
}

/**
 * What joins the two pods when they are not joined by the abstract network: the cluster path
 * (`mesh --cluster`). @internal
 */
export interface MeshNetwork {
  /** A socket load balancer's translation of a Service address at connect(), before any rule (null: none). */
  readonly socketLb: ((dst: Addr, proto: 'tcp' | 'udp') => { readonly dst: Addr; readonly note: string } | null) | null;
  /** A connection that left the pod `from` (made by `owner`, to `dst` as connect() was asked) across the cluster. */
  cross(c: {
    readonly from: readonly string[]; readonly uid: number; readonly gid: number; readonly mark: number | null;
    readonly dst: Addr; readonly proto: 'tcp' | 'udp'; readonly transport: MeshTransport | null;
  }): MeshCrossing;
  /** The kubelet's probe, SNATed (or not) on the node, arriving at the server pod's veth. */
  probe(c: { readonly to: readonly string[]; readonly src: string | null; readonly sport: number; readonly dst: Addr; readonly proto: 'tcp' | 'udp' }): MeshCrossing;
}

/** Why a connection travels to another port than its application's (a tunnel or a transport header). @internal */
export interface MeshTransport {
  readonly why: 'opaque' | 'forced' | 'hbone';
  /** The application port it stands for. */
  readonly appPort: number;
  /** The port it travels to. */
  readonly port: number;
}

/** How a connection crossed the cluster. @internal */
export type MeshCrossing =
  | { readonly kind: 'arrive'; readonly hops: readonly MeshHop[]; readonly src: string; readonly sport: number; readonly dst: Addr; readonly notes: readonly string[] }
  | { readonly kind: 'external'; readonly hops: readonly MeshHop[]; readonly address: string; readonly port: number; readonly notes: readonly string[] }
  | { readonly kind: 'dropped' | 'refused'; readonly hops: readonly MeshHop[]; readonly reason: string; readonly policy: MeshPolicyStop | null; readonly notes: readonly string[] };

/** @internal */
export function runMeshScenario(
  options: MeshScenarioOptions,
  network: MeshNetwork | null,
  namespaces: { readonly client?: Namespace | undefined; readonly server?: Namespace | undefined } = {},
): MeshResult {
  expectMeshScenarioOptions(options);
  const mesh = options.mesh;
  if (mesh !== 'linkerd' && mesh !== 'istio') throw new NetfilterSimError(diagnostic('BAD_CONFIG', `unknown mesh "${String(mesh)}" (linkerd or istio)`));
  const defaults = defaultPods(mesh);
  const namespace = asNamespace(options.namespace);
  const proto = options.proto ?? 'tcp';
  const phase = options.phase ?? 'app';
  const notReady = options.cniNotReady;
  const prep = (pod: Pod, role: 'client' | 'server'): MeshPod => {
    const ns = namespaces[role] ?? namespace;
    return prepareMeshPod(mesh, pod, {
      ...(ns ? { namespace: ns } : {}),
      ...(options.cni !== undefined ? { cni: options.cni } : {}),
      ...(options.nativeSidecars !== undefined ? { nativeSidecars: options.nativeSidecars } : {}),
      cniNotReady: notReady === true || notReady === role,
      ...(options.ambient === true || options.ambient === role ? { ambient: true } : {}),
      ...(options.nativeNftables !== undefined ? { nativeNftables: options.nativeNftables } : {}),
      ...(options.dnsCapture !== undefined ? { dnsCapture: options.dnsCapture } : {}),
    });
  };
  const client = prep(options.client === undefined ? defaults.client : asPod(options.client), 'client');
  const server = prep(options.server === undefined ? defaults.server : asPod(options.server), 'server');
  const warnings: string[] = [];
  const clientAddrs = podAddresses(client, '10.0.0.2', warnings);
  const serverAddrs = podAddresses(server, '10.0.1.5', warnings);
  const samePod = serverAddrs.some((a) => clientAddrs.includes(a));
  if (samePod && !serverAddrs.every((a) => clientAddrs.includes(a))) {
    badPod(`pods ${client.name} and ${server.name} share some addresses but not all (${clientAddrs.join(', ')} / ${serverAddrs.join(', ')})`);
  }
  if (notReady !== undefined && notReady !== false && client.install !== 'cni' && server.install !== 'cni') {
    warnings.push('the CNI plugin not being ready changes nothing here: neither pod gets its rules from the CNI plugin (add --cni)');
  }
  const services: readonly MeshService[] = typeof options.services === 'string' ? parseServices(options.services) : options.services ?? [];

  const clientRt = podRuntime(client, phase, clientAddrs);
  const serverRt = samePod ? clientRt : podRuntime(server, 'app', serverAddrs);
  const pods = samePod ? [clientRt] : [clientRt, serverRt];
  const byAddress = (a: string): PodRuntime | undefined => pods.find((p) => p.addresses.includes(a));

  const dst = options.dst !== undefined ? parseAddr(options.dst) : defaultDestination(server, serverAddrs, proto);
  const actor = originActor(client, phase, options);
  const originLabel = describeProcess(actor.container, actor.uid, actor.gid);

  const hops: MeshHop[] = [];
  const outboundSeen = new Set<PodRuntime>();
  const inboundSeen = new Set<PodRuntime>();
  let end: End | null = null;
  const legs: { rt: PodRuntime; kind: Leg['kind']; landed: PodListener['role'] | 'refused' | 'dropped' | 'remote' }[] = [];
  const notes: string[] = [];
  const strict = options.mtls === 'strict';
  const transportMode = linkerdTransport(options.linkerdVersion);
  const sidecarHbone = istioSidecarHbone(options.istioVersion);
  let transport: MeshTransport | null = null;
  let policyStop: MeshPolicyStop | null = null;
  let leg: Leg | null = { kind: 'local', rt: clientRt, actor, dst, note: null, header: null };
  let kubelet: KubeletStart | null = null;
  if (options.kubelet === true) {
    kubelet = kubeletProbe(serverRt, dst, proto, options.hostRules !== false, pods);
    hops.push(kubelet.hop);
    legs.push({ rt: serverRt, kind: 'local', landed: 'remote' });
    leg = kubelet.leg;
    if (network !== null && leg.kind === 'arrive') {
      const x = network.probe({ to: serverRt.addresses, src: kubelet.snat ? leg.src : null, sport: leg.sport, dst, proto });
      hops.push(...x.hops);
      x.hops.forEach(() => legs.push({ rt: serverRt, kind: 'local', landed: 'remote' }));
      notes.push(...x.notes);
      if (x.kind === 'arrive') {
        leg = { ...leg, src: x.src, from: `${formatAddr(x.src, x.sport)} (kubelet)` };
      } else if (x.kind === 'external') {
        leg = null;
        end = { kind: 'external', address: x.address, port: x.port };
      } else {
        leg = null;
        policyStop = x.policy;
        end = { kind: x.kind, rt: serverRt, reason: x.reason };
      }
    }
  }

  for (let n = 0; leg !== null; n++) {
    if (n >= MAX_LEGS) {
      const last = hops[hops.length - 1];
      end = { kind: 'loop', rt: leg.rt, actor: last?.from ?? 'a proxy', uid: -1, gid: -1 };
      break;
    }
    let current: Leg = leg;
    leg = null;
    if (network?.socketLb && current.kind === 'local') {
      const t = network.socketLb(current.dst, proto);
      if (t !== null) current = { ...current, dst: t.dst, note: [current.note, t.note].filter((x) => x !== null).join('; ') };
    }
    const rt: PodRuntime = current.rt;
    const family: 4 | 6 = current.dst.family;
    const spec: ConnectSpec = current.kind === 'local'
      ? {
          from: 'local' as const, uid: current.actor.uid, gid: current.actor.gid, dst: formatAddr(current.dst.address, current.dst.port), proto,
          ...(current.actor.src ? { src: current.actor.src } : {}), ...(current.actor.mark !== undefined ? { mark: current.actor.mark } : {}),
          ...(current.actor.transparent ? { transparent: true } : {}),
        }
      : { from: 'remote' as const, src: current.src, sport: current.sport, dst: formatAddr(current.dst.address, current.dst.port), proto };
    const r: ConnectResult = rt.ns.connect(spec, { trace: true });
    const hook: EntryHook = current.kind === 'local' ? 'OUTPUT' : 'PREROUTING';
    const rule = decidingRule(r.trace, hook, rt.mesh, family);
    const fromLabel = current.kind === 'local' ? describeProcess(current.actor.container, current.actor.uid, current.actor.gid) : current.from;
    const fromActor = current.kind === 'local' ? `${rt.mesh.name}/${current.actor.container}` : 'network';
    const why = [current.kind === 'local' ? current.note : null, ruleText(rule, rt, family)].filter((x): x is string => x !== null).join('; ');
    const base = { pod: rt.mesh.name, from: fromLabel, why, rule, steps: r.steps, fromActor, originalDestination: r.originalDestination };

    if (r.outcome === 'local') {
      const accepted = acceptingListener(r.trace);
      const l = accepted
        ? findListener(rt, accepted.address ?? r.address!, accepted.port, proto)
        : findListener(rt, r.address!, r.port!, proto);
      const to = formatAddr(r.address!, r.port!);
      if (!l) {
        hops.push({ ...base, to, receiver: 'a socket', outcome: 'local', toActor: `${rt.mesh.name}/?` });
        legs.push({ rt, kind: current.kind, landed: 'refused' });
        end = { kind: 'refused', rt, reason: `nothing modelled listens at ${to}` };
        break;
      }
      const byProxy = current.kind === 'local' ? current.actor.role : null;
      const toActor = `${rt.mesh.name}/${l.container}`;
      legs.push({ rt, kind: current.kind, landed: l.role });
      if (l.role === 'outbound') {
        if (current.kind === 'local' && (byProxy === 'outbound' || byProxy === 'inbound')) {
          // The proxy's own connection came back to it: its UID is not exempted.
          hops.push({ ...base, to, receiver: `${l.label} again`, outcome: 'local', toActor });
          end = { kind: 'loop', rt, actor: current.actor.container, uid: current.actor.uid, gid: current.actor.gid };
          break;
        }
        outboundSeen.add(rt);
        const orig: Addr = r.originalDestination !== null ? parseAddr(r.originalDestination) : current.dst;
        hops.push({ ...base, to, receiver: `${l.label} (SO_ORIGINAL_DST ${formatAddr(orig.address, orig.port)})`, outcome: 'local', toActor });
        const p = rt.mesh.proxy!;
        const target: OutboundTarget = p.kind === 'ztunnel' ? ztunnelTarget(orig, proto, services, byAddress) : outboundTarget(rt.mesh, orig, proto, services, byAddress, notes, transportMode, sidecarHbone);
        transport = target.header !== null ? { why: target.why ?? 'hbone', appPort: target.header, port: target.dst.port } : null;
        leg = {
          kind: 'local',
          rt,
          actor: { container: p.container, uid: p.uid, gid: p.gid, role: 'outbound', ...(p.mark !== undefined ? { mark: p.mark } : {}) },
          dst: target.dst,
          note: target.note,
          header: target.header,
          ...(target.plain ? { plain: true } : {}),
        };
      } else if (l.role === 'inbound') {
        if (current.kind === 'local' && byProxy === 'inbound') {
          hops.push({ ...base, to, receiver: `${l.label} again`, outcome: 'local', toActor });
          end = { kind: 'loop', rt, actor: current.actor.container, uid: current.actor.uid, gid: current.actor.gid };
          break;
        }
        const p = rt.mesh.proxy!;
        if (strict && !(current.kind === 'arrive' && current.secured)) {
          hops.push({ ...base, to, receiver: `${l.label} (plain text under STRICT mTLS: rejected)`, outcome: 'local', toActor });
          end = { kind: 'refused', rt, reason: `${p.kind === 'ztunnel' ? 'ztunnel' : 'Envoy'} rejects plain-text connections: the PeerAuthentication mode is STRICT` };
          break;
        }
        inboundSeen.add(rt);
        let orig: Addr = r.originalDestination !== null ? parseAddr(r.originalDestination) : { family: family, address: r.address!, port: r.port! };
        let how = `SO_ORIGINAL_DST ${formatAddr(orig.address, orig.port)}`;
        if (current.header !== null) {
          orig = { family: orig.family, address: orig.address, port: current.header };
          how = `opaque transport header: port ${current.header}`;
        }
        if (accepted?.transparent) how = `TPROXY, addresses preserved: ${how}`;
        hops.push({ ...base, to, receiver: `${l.label} (${how})`, outcome: 'local', toActor });
        if (p.kind === 'ztunnel') {
          // ztunnel's inbound keeps the client's address (IP_TRANSPARENT) and marks its socket 0x539.
          const src: string | undefined = current.kind === 'arrive' ? current.src : undefined;
          leg = {
            kind: 'local', rt,
            actor: { container: p.container, uid: p.uid, gid: p.gid, role: 'inbound', ...(src ? { src, transparent: true } : {}), ...(p.mark !== undefined ? { mark: p.mark } : {}) },
            dst: orig,
            note: `forwards to SO_ORIGINAL_DST ${formatAddr(orig.address, orig.port)}${src ? ` from the client's address ${src} (IP_TRANSPARENT)` : ''}, socket mark 0x${(p.mark ?? 0).toString(16)}`,
            header: null,
          };
          continue;
        }
        // Istio: Envoy's inbound passthrough binds 127.0.0.6 (::6) and connects to the original
        // destination. Linkerd (2.11+, linkerd2 #6495): the proxy connects to the original target
        // address, the pod IP, no longer to 127.0.0.1.
        const src: string | undefined = rt.mesh.mesh === 'istio' ? passthroughSource(rt, orig.family) : undefined;
        leg = {
          kind: 'local',
          rt,
          actor: { container: p.container, uid: p.uid, gid: p.gid, role: 'inbound', ...(src ? { src } : {}) },
          dst: { family: orig.family, address: orig.address, port: orig.port },
          note: rt.mesh.mesh === 'istio'
            ? `inbound passthrough from ${src ?? 'the pod address'} to ${formatAddr(orig.address, orig.port)}`
            : `forwards to the original destination ${formatAddr(orig.address, orig.port)}`,
          header: null,
        };
      } else if (l.role === 'tunnel' && current.kind === 'arrive' && current.header !== null) {
        // HBONE: the tunnel's CONNECT names the pod address and the port; the proxy delivers it.
        inboundSeen.add(rt);
        const p = rt.mesh.proxy!;
        const inner: Addr = { family, address: current.dst.address, port: current.header };
        hops.push({ ...base, to, receiver: `${l.label} (HBONE CONNECT ${formatAddr(inner.address, inner.port)})`, outcome: 'local', toActor });
        const ztunnel = p.kind === 'ztunnel';
        const src: string | undefined = ztunnel ? current.src : passthroughSource(rt, family);
        leg = {
          kind: 'local', rt,
          actor: { container: p.container, uid: p.uid, gid: p.gid, role: 'inbound', ...(src ? { src, ...(ztunnel ? { transparent: true } : {}) } : {}), ...(p.mark !== undefined ? { mark: p.mark } : {}) },
          dst: inner,
          note: ztunnel
            ? `delivers the tunnelled connection to ${formatAddr(inner.address, inner.port)} from the client's address ${current.src} (IP_TRANSPARENT), socket mark 0x${(p.mark ?? 0).toString(16)}`
            : `terminates HBONE and connects to ${formatAddr(inner.address, inner.port)} from ${src ?? 'the pod address'}`,
          header: null,
        };
      } else if (l.role === 'dns' && current.kind === 'local' && current.actor.role !== 'outbound') {
        // ztunnel's DNS proxy: answers what it knows, forwards the rest upstream with its mark.
        outboundSeen.add(rt);
        const p = rt.mesh.proxy!;
        const orig: Addr = r.originalDestination !== null ? parseAddr(r.originalDestination) : current.dst;
        hops.push({ ...base, to, receiver: `${l.label} (SO_ORIGINAL_DST ${formatAddr(orig.address, orig.port)})`, outcome: 'local', toActor });
        notes.push(`DNS: ztunnel's DNS proxy answers the names of Services and ServiceEntries itself; a name it does not know it forwards to the resolver ${formatAddr(orig.address, orig.port)} with its mark 0x539 (conntrack zone 1 keeps those answers apart), as the hops show. DNS is not tunnelled: the resolver's side has no proxy, as expected.`);
        leg = {
          kind: 'local', rt,
          actor: { container: p.container, uid: p.uid, gid: p.gid, role: 'outbound', ...(p.mark !== undefined ? { mark: p.mark } : {}) },
          dst: orig,
          note: `forwards the query upstream to ${formatAddr(orig.address, orig.port)} with socket mark 0x${(p.mark ?? 0).toString(16)}`,
          header: null,
        };
      } else {
        const receiver = l.role === 'app' ? describeProcess(l.container, l.uid, l.gid) : l.label;
        hops.push({ ...base, to, receiver, outcome: 'local', toActor });
        end = { kind: l.role === 'proxy' ? 'proxy-port' : 'app', rt, listener: l };
      }
    } else if (r.outcome === 'remote') {
      const dep = departure(r.trace);
      const leftTo = { family, address: r.address!, port: r.port! };
      hops.push({ ...base, to: formatAddr(leftTo.address, leftTo.port), receiver: `the network (left through ${dep?.dev ?? 'eth0'})`, outcome: 'remote', toActor: 'network' });
      legs.push({ rt, kind: current.kind, landed: 'remote' });
      const src = dep?.src ?? rt.addresses[0]!;
      const sport = dep?.sport ?? 40000;
      if (network !== null && current.kind === 'local') {
        const x = network.cross({
          from: rt.addresses, uid: current.actor.uid, gid: current.actor.gid, mark: current.actor.mark ?? null, dst: current.dst, proto,
          transport: current.actor.role === 'outbound' ? transport : null,
        });
        hops.push(...x.hops);
        notes.push(...x.notes);
        x.hops.forEach(() => legs.push({ rt, kind: 'local', landed: 'remote' }));
        if (x.kind === 'arrive') {
          const next = byAddress(x.dst.address);
          if (!next) {
            end = { kind: 'external', address: x.dst.address, port: x.dst.port };
            break;
          }
          leg = {
            kind: 'arrive', rt: next, src: x.src, sport: x.sport, from: `${formatAddr(x.src, x.sport)} (${rt.mesh.name})`, dst: x.dst, header: current.header,
            secured: current.actor.role === 'outbound' && current.plain !== true,
          };
        } else if (x.kind === 'external') {
          end = { kind: 'external', address: x.address, port: x.port };
        } else {
          policyStop = x.policy;
          const dest = byAddress(current.dst.address);
          end = { kind: x.kind, rt: x.policy?.direction === 'ingress' && dest ? dest : rt, reason: x.reason };
        }
        continue;
      }
      let target: Addr = leftTo;
      const svc = findService(services, leftTo.address, leftTo.port, proto);
      if (svc) {
        const ep = svc.endpoints[0]!;
        target = { family, address: canonicalAddress(ep.address) ?? ep.address, port: ep.port };
        hops.push({
          pod: 'network', from: formatAddr(src, sport), to: formatAddr(target.address, target.port),
          why: `the node's Service DNAT (kube-proxy): ${formatAddr(leftTo.address, leftTo.port)} → ${formatAddr(target.address, target.port)}${svc.endpoints.length > 1 ? ` (first of ${svc.endpoints.length} endpoints)` : ''}`,
          receiver: 'the network', outcome: 'remote', originalDestination: null, rule: null, steps: [], fromActor: 'network', toActor: 'network',
        });
        legs.push({ rt, kind: 'local', landed: 'remote' });
      }
      const next = byAddress(target.address);
      if (!next) {
        end = { kind: 'external', address: target.address, port: target.port };
        break;
      }
      leg = {
        kind: 'arrive', rt: next, src, sport, from: `${formatAddr(src, sport)} (${rt.mesh.name})`, dst: target, header: current.kind === 'local' ? current.header : null,
        secured: current.kind === 'local' && current.actor.role === 'outbound' && current.plain !== true,
      };
    } else {
      const at = refusedAt(r.trace) ?? formatAddr(current.dst.address, current.dst.port);
      hops.push({ ...base, to: at, receiver: r.outcome === 'refused' ? `nothing: connection refused (${r.reason})` : `nothing: dropped (${r.reason})`, outcome: r.outcome, toActor: guessActor(rt, at) });
      legs.push({ rt, kind: current.kind, landed: r.outcome });
      end = { kind: r.outcome, rt, reason: r.reason };
    }
  }

  const finalEnd: End = end ?? { kind: 'dropped', rt: clientRt, reason: 'the connection went nowhere' };
  const destRt = finalEnd.kind === 'external' ? null : finalEnd.rt;
  // The hop where the connection entered the destination pod: its arrival from the network, or
  // (a pod calling itself) the first leg that landed on an application or the inbound listener.
  let arrivalIndex = destRt === null ? -1 : legs.findIndex((l) => l.rt === destRt && l.kind === 'arrive');
  if (arrivalIndex < 0 && destRt === clientRt) {
    arrivalIndex = legs.findIndex((l) => l.rt === destRt && (l.landed === 'app' || l.landed === 'inbound' || l.landed === 'proxy'));
  }
  const verdict = verdictOf(finalEnd, outboundSeen.has(clientRt), destRt !== null && inboundSeen.has(destRt));
  const validators: ValidatorResult[] = [];
  for (const [p, addrs] of samePod ? [[client, clientAddrs] as const] : [[client, clientAddrs] as const, [server, serverAddrs] as const]) {
    const v = validateMeshPod(p, addrs);
    if (v) validators.push(v);
  }
  const story: Story = {
    kubelet: kubelet !== null ? { hostRules: options.hostRules !== false, hop: kubelet.hop } : null,
    mtls: strict ? 'strict' : 'permissive',
    actorMark: actor.mark ?? null,
    mesh,
    verdict,
    client: clientRt,
    dest: destRt,
    origin: kubelet ? kubelet.origin : originLabel,
    dst,
    proto,
    phase,
    hops,
    first: hops[0]!,
    arrival: arrivalIndex >= 0 ? hops[arrivalIndex] ?? null : null,
    end: finalEnd,
    services,
    validators,
    notes,
    policy: policyStop,
    warnings: [...warnings, ...client.warnings, ...(samePod ? [] : server.warnings)],
  };
  return {
    mesh,
    verdict,
    hops,
    diagnosis: diagnose(story),
    client,
    server: samePod ? client : server,
    origin: kubelet ? kubelet.origin : originLabel,
    dst: formatAddr(dst.address, dst.port),
    proto,
    phase,
    validators,
    ...(policyStop !== null ? { cause: 'network-policy' as const, policy: policyStop } : {}),
  };
}

/** How a Linkerd release sends a meshed connection to the server's proxy. @internal */
export type LinkerdTransportMode = 'none' | 'opaque' | 'forced';

/**
 * Linkerd's transport to the inbound port by release: before 2.10 none (the proxy connects to the
 * application port); from 2.10 the opaque ports go to the inbound port with a transport header;
 * from edge-25.2.3 (stable 2.18) the destination controller tells the client proxy to do so for
 * every meshed pod (its `forceOpaqueTransport`, linkerd/linkerd2#13715). Default: 2.17's. @internal
 */
export function linkerdTransport(version: string | undefined): LinkerdTransportMode {
  if (version === undefined) return 'opaque';
  const stable = /^(?:stable-)?(\d+)\.(\d+)(?:\.\d+)?$/.exec(version);
  if (stable) {
    const [major, minor] = [Number(stable[1]), Number(stable[2])];
    if (major !== 2) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `Linkerd version "${version}": this scenario knows the 2.x releases`, undefined, version));
    return minor >= 18 ? 'forced' : minor >= 10 ? 'opaque' : 'none';
  }
  const edge = /^edge-(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (edge) {
    const n = Number(edge[1]) * 10000 + Number(edge[2]) * 100 + Number(edge[3]);
    return n >= 250203 ? 'forced' : 'opaque';
  }
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', `Linkerd version "${version}": write 2.MINOR (2.17, 2.19) or edge-YY.M.N`, undefined, version));
}

function verdictOf(end: End, clientProxy: boolean, serverProxy: boolean): MeshVerdict {
  switch (end.kind) {
    case 'loop':
      return 'loop';
    case 'refused':
      return 'refused';
    case 'dropped':
      return 'dropped';
    default:
      if (clientProxy && serverProxy) return 'meshed';
      if (!clientProxy && !serverProxy) return 'plaintext';
      return clientProxy ? 'server-bypass' : 'client-bypass';
  }
}

function ruleText(rule: HopRule | null, rt: PodRuntime, family: 4 | 6): string {
  if (rule) return rule.comment === null && rule.event === 'rule' && rule.why ? `${formatHopRule(rule)} (${rule.why})` : formatHopRule(rule);
  const rules = family === 4 ? rt.mesh.rules4 : rt.mesh.rules6;
  if (!rt.state.rules || !rules) return family === 6 && rt.state.rules && rt.mesh.rules4 ? 'no IPv6 rules in the pod' : 'no mesh rules in the pod';
  return 'no nat rule consulted';
}

/** Where the proxy's outbound side connects: a Service's endpoint, or the original destination. */
function outboundTarget(
  pod: MeshPod,
  orig: Addr,
  proto: 'tcp' | 'udp',
  services: readonly MeshService[],
  byAddress: (a: string) => PodRuntime | undefined,
  notes: string[],
  mode: LinkerdTransportMode = 'opaque',
  sidecarHbone = true,
): OutboundTarget {
  const svc = findService(services, orig.address, orig.port, proto);
  let dst: Addr = orig;
  let note = `SO_ORIGINAL_DST ${formatAddr(orig.address, orig.port)}, no Service there: connects to it as is`;
  if (svc) {
    const ep = svc.endpoints[0]!;
    dst = { family: orig.family, address: canonicalAddress(ep.address) ?? ep.address, port: ep.port };
    note = `resolves Service ${formatAddr(orig.address, orig.port)} to endpoint ${formatAddr(dst.address, dst.port)}${svc.endpoints.length > 1 ? ` (first of ${svc.endpoints.length})` : ''}`;
  }
  if (pod.mesh === 'linkerd') {
    const target = byAddress(dst.address);
    const tp = target?.mesh;
    const meshedTarget = tp?.proxy && tp.mesh === 'linkerd' && target !== undefined && target.state.rules && target.state.proxy;
    if (meshedTarget && mode === 'forced' && !tp.opaquePorts.includes(dst.port) && dst.port !== tp.proxy.inboundPort) {
      notes.push(`Linkerd 2.18 and later (edge-25.2.3 on): the destination controller tells the client proxy to send every connection to a meshed pod to its inbound port ${tp.proxy.inboundPort} with the target port ${dst.port} in a transport header (forceOpaqueTransport, linkerd/linkerd2#13715), so the network sees ${tp.proxy.inboundPort}, not ${dst.port}`);
      return {
        dst: { family: dst.family, address: dst.address, port: tp.proxy.inboundPort },
        note: `${note}; transport header (Linkerd 2.18+): to the server proxy's inbound port ${tp.proxy.inboundPort}`,
        header: dst.port,
        why: 'forced',
      };
    }
    if (mode !== 'none' && tp?.proxy && tp.mesh === 'linkerd' && tp.opaquePorts.includes(dst.port) && target !== undefined && target.state.rules) {
      // Opaque transport: a meshed server's opaque port is reached on its inbound port, the
      // original port carried in a transport header (no protocol detection on either side).
      notes.push(`port ${dst.port} is opaque on pod ${tp.name} (${tp.annotations['config.linkerd.io/opaque-ports'] !== undefined ? `config.linkerd.io/opaque-ports: "${tp.annotations['config.linkerd.io/opaque-ports']}"` : 'the default proxy.opaquePorts'}): the proxies do no protocol detection; the client proxy uses the opaque transport to ${formatAddr(dst.address, tp.proxy.inboundPort)} with the port in a header, and the connection is still mTLS through both proxies`);
      return {
        dst: { family: dst.family, address: dst.address, port: tp.proxy.inboundPort },
        note: `${note}; port ${dst.port} is opaque: opaque transport to the server proxy's inbound port ${tp.proxy.inboundPort}`,
        header: dst.port,
        why: 'opaque',
      };
    }
  }
  if (pod.mesh === 'istio') {
    const target = byAddress(dst.address);
    const tp = target?.mesh;
    if (target !== undefined && tp?.ambient && tp.proxy && target.state.rules && target.state.proxy) {
      if (svc && sidecarHbone) {
        notes.push(`pod ${tp.name} is ambient: from Istio 1.22 on (PILOT_ENABLE_SENDING_HBONE, on when istiod runs with ambient) Envoy sends to an ambient endpoint of a Service over HBONE, to ${formatAddr(dst.address, ZTUNNEL.hbonePort)} with ${formatAddr(dst.address, dst.port)} in the CONNECT, and the pod's ztunnel delivers it`);
        return {
          dst: { family: dst.family, address: dst.address, port: ZTUNNEL.hbonePort },
          note: `${note}; pod ${tp.name} is ambient: HBONE (mTLS) to ${formatAddr(dst.address, ZTUNNEL.hbonePort)}, CONNECT ${formatAddr(dst.address, dst.port)}`,
          header: dst.port,
        };
      }
      const why = !sidecarHbone
        ? 'Envoy before Istio 1.22 cannot send HBONE'
        : `${formatAddr(dst.address, dst.port)} is no Service's endpoint here, so Envoy's PassthroughCluster (ORIGINAL_DST, no TLS) carries it; HBONE (Istio 1.22+) is only for a Service's endpoints`;
      notes.push(`pod ${tp.name} is ambient and has no sidecar (no security.istio.io/tlsMode: istio label), so Envoy's auto mTLS does not apply: ${why}. The connection crosses the network in plain text and the pod's ztunnel takes it on its plaintext port ${ZTUNNEL.inboundPlaintextPort}, which STRICT mTLS refuses.${sidecarHbone ? ' Call the pod through its Service (--service) to get HBONE.' : ' Istio 1.22 and later send HBONE to a Service\'s ambient endpoints.'}`);
      return { dst, note: `${note}; pod ${tp.name} is ambient: plain text (${why})`, header: null, plain: true };
    }
  }
  return { dst, note, header: null };
}

/** Where a proxy's outbound side sends a connection, and how. */
interface OutboundTarget {
  readonly dst: Addr;
  readonly note: string;
  /** The target port carried inside (HBONE CONNECT, Linkerd's transport header). */
  readonly header: number | null;
  readonly why?: MeshTransport['why'];
  /** Sent in plain text although a proxy sends it. */
  readonly plain?: boolean;
}

/**
 * Whether an Istio sidecar sends HBONE to an ambient pod: from 1.22 (`PILOT_ENABLE_SENDING_HBONE`,
 * `pilot/pkg/features/ambient.go`, on by default when istiod runs with `PILOT_ENABLE_AMBIENT`);
 * before, Envoy had no HBONE towards other pods. Default: the newest release's behaviour. @internal
 */
export function istioSidecarHbone(version: string | undefined): boolean {
  if (version === undefined) return true;
  return parseIstioVersion(version).minor >= 22;
}

/**
 * Where ztunnel's outbound side connects: a Service's endpoint (or the original destination); to a
 * pod with a ztunnel or a sidecar over HBONE (the peer's 15008, the target in the CONNECT), to
 * anything else in plain text.
 */
function ztunnelTarget(
  orig: Addr,
  proto: 'tcp' | 'udp',
  services: readonly MeshService[],
  byAddress: (a: string) => PodRuntime | undefined,
): { dst: Addr; note: string; header: number | null } {
  const svc = findService(services, orig.address, orig.port, proto);
  let dst: Addr = orig;
  let note = `SO_ORIGINAL_DST ${formatAddr(orig.address, orig.port)}`;
  if (svc) {
    const ep = svc.endpoints[0]!;
    dst = { family: orig.family, address: canonicalAddress(ep.address) ?? ep.address, port: ep.port };
    note = `resolves Service ${formatAddr(orig.address, orig.port)} to endpoint ${formatAddr(dst.address, dst.port)}${svc.endpoints.length > 1 ? ` (first of ${svc.endpoints.length})` : ''}`;
  }
  const peer = byAddress(dst.address);
  const p = peer?.mesh.proxy;
  if (peer && p && peer.state.proxy && (p.kind === 'ztunnel' || p.otherPorts.some((o) => o.port === ZTUNNEL.hbonePort))) {
    const what = p.kind === 'ztunnel' ? `pod ${peer.mesh.name} is ambient` : `pod ${peer.mesh.name} has a sidecar, which accepts HBONE`;
    return {
      dst: { family: dst.family, address: dst.address, port: ZTUNNEL.hbonePort },
      note: `${note}; ${what}: HBONE (mTLS) to ${formatAddr(dst.address, ZTUNNEL.hbonePort)}, CONNECT ${formatAddr(dst.address, dst.port)}, socket mark 0x${ZTUNNEL.mark.toString(16)}`,
      header: dst.port,
    };
  }
  return { dst, note: `${note}; ${formatAddr(dst.address, dst.port)} is not in the mesh: connects to it in plain text, socket mark 0x${ZTUNNEL.mark.toString(16)}`, header: null };
}

/** The kubelet's probe from the node, up to its arrival at the server pod. */
interface KubeletStart {
  /** istio-cni's host rule SNATed the probe. */
  readonly snat: boolean;
  readonly hop: MeshHop;
  readonly leg: Leg;
  readonly origin: string;
}

/**
 * The kubelet (uid 0 on the node) connects to the server pod: the node's nat POSTROUTING, with
 * istio-cni's host rule (`ISTIO_POSTRT`, the probe ipset holding the ambient pods) or without it.
 */
function kubeletProbe(server: PodRuntime, dst: Addr, proto: 'tcp' | 'udp', hostRules: boolean, pods: readonly PodRuntime[]): KubeletStart {
  const ambientAddrs = pods.filter((p) => p.mesh.ambient !== undefined).flatMap((p) => p.addresses);
  const host = hostProbeRules(ambientAddrs, server.mesh.ambient?.backend === 'nftables');
  const node = ZTUNNEL.nodeAddress;
  const ns = new Netns({
    ...(hostRules ? host : {}),
    interfaces: { eth0: [`${node}/24`] },
    gateway: node.replace(/\.\d+$/, '.254'),
    listen: [],
  });
  const r = ns.connect({ from: 'local', uid: 0, dst: formatAddr(dst.address, dst.port), proto }, { trace: true });
  const dep = departure(r.trace);
  const src = dep?.src ?? node;
  const sport = dep?.sport ?? 40000;
  const snat = r.trace?.find((e) => e.packet === 0 && e.type === 'rule' && (e.target === 'SNAT' || (e.chain === 'postrouting' && e.table.endsWith('istio-ambient-nat'))));
  let rule: HopRule | null = null;
  let why: string;
  if (snat && snat.type === 'rule') {
    rule = {
      hook: snat.hook, table: snat.table, chain: snat.chain, rule: snat.rule, event: 'rule', target: 'SNAT', comment: null,
      text: snat.text, via: snat.table === 'nat' ? ['POSTROUTING rule 1'] : [],
      why: 'node: TCP from a local socket (kubelet) to an ambient pod (in the probe ipset) is SNATed to the probe address, which the pod lets through',
      setting: `istio-cni's host rules (ambient.probeSNAT ${AMBIENT.HOST_PROBE_SNAT})`,
    };
    why = `${snat.table === 'nat' ? '' : `${snat.table} `}${snat.chain} rule ${snat.rule} SNAT to ${src} (istio-cni's host rule for kubelet probes; ${AMBIENT.PROBE_IPSET}-v4 holds the ambient pods)`;
  } else {
    why = hostRules ? `no host rule matched: ${formatAddr(dst.address, dst.port)} is not in ${AMBIENT.PROBE_IPSET}-v4 (not an ambient pod)` : "no ISTIO_POSTRT rule on the node: the probe keeps the node's address";
  }
  const origin = describeProcess('kubelet', 0) + ' on the node';
  const hop: MeshHop = {
    pod: 'node', from: origin, to: formatAddr(dst.address, dst.port), why, receiver: `the network (from ${formatAddr(src, sport)})`, outcome: 'remote',
    originalDestination: null, rule, steps: r.steps, fromActor: 'node/kubelet', toActor: 'network',
  };
  return {
    snat: rule !== null,
    hop,
    origin,
    leg: { kind: 'arrive', rt: server, src, sport, from: `${formatAddr(src, sport)} (kubelet)`, dst, header: null, secured: false },
  };
}

/** The source Envoy's inbound passthrough binds (127.0.0.6, or ::6 when the pod has it on lo). */
function passthroughSource(rt: PodRuntime, family: 4 | 6): string | undefined {
  if (family === 4) return ISTIO_SCENARIO_DEFAULTS.passthroughSource[4];
  const has = rt.state.rules && rt.mesh.ipCommands.some((c) => c.includes('::6/128'));
  return has ? ISTIO_SCENARIO_DEFAULTS.passthroughSource[6] : undefined;
}

function refusedAt(trace: readonly TraceEvent[] | undefined): string | null {
  const e = trace?.find((x) => x.packet === 0 && x.type === 'socket' && x.result === 'refused');
  return e && e.type === 'socket' ? formatAddr(e.address, e.port) : null;
}

function guessActor(rt: PodRuntime, at: string): string {
  const port = Number(at.slice(at.lastIndexOf(':') + 1));
  const p = rt.mesh.proxy;
  if (p && (port === p.outboundPort || port === p.inboundPort)) return `${rt.mesh.name}/${p.container}`;
  const app = rt.mesh.apps.find((c) => c.ports.some((x) => x.containerPort === port));
  return `${rt.mesh.name}/${app?.name ?? '?'}`;
}

/** @internal */
export function defaultDestination(server: MeshPod, addrs: readonly string[], proto: 'tcp' | 'udp'): Addr {
  const want = proto.toUpperCase();
  const port = server.apps.flatMap((c) => c.ports).find((p) => p.protocol.toUpperCase() === want)?.containerPort;
  if (port === undefined) {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `no --dst given and pod ${server.name} declares no ${want} containerPort to connect to`));
  }
  const address = addrs[0]!;
  return { family: address.includes(':') ? 6 : 4, address, port };
}

function originActor(client: MeshPod, phase: string, options: MeshScenarioOptions): Actor {
  let c: PodContainer | undefined;
  let role: Actor['role'] = 'app';
  if (phase === 'app') {
    // Once the pod runs: its containers and its native sidecars (init containers that stay up).
    const running = [...client.pod.containers, ...client.pod.initContainers.filter((x) => x.restartPolicy === 'Always')];
    c = options.container !== undefined ? running.find((x) => x.name === options.container) : client.apps[0];
    if (!c) {
      const names = running.map((x) => x.name).join(', ') || 'none';
      const isInit = options.container !== undefined && client.pod.initContainers.some((x) => x.name === options.container);
      badPod(options.container !== undefined
        ? `pod ${client.name} has no running container "${options.container}" (running: ${names})${isInit ? `; for an init container use --phase init:${options.container}` : ''}`
        : `pod ${client.name} has no application container`);
    }
  } else {
    const name = phase.slice('init:'.length);
    c = client.pod.initContainers.find((x) => x.name === name);
    role = 'init';
    if (!c) badPod(`pod ${client.name} has no init container "${name}"`);
  }
  const uid = options.uid ?? c.runAsUser ?? 0;
  const gid = options.gid ?? (options.uid !== undefined ? options.uid : c.runAsGroup ?? uid);
  return { container: c.name, uid, gid, role, ...(options.mark !== undefined ? { mark: options.mark } : {}) };
}
