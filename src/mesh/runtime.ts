/**
 * A pod at one point of its start-up, as a network namespace: its addresses, the rules written so
 * far, and the sockets of whatever runs at that point (the proxy, the applications).
 *
 * @module
 */
import { Netns, type ListenerSpec, type NetnsOptions } from '../engine/path/netns.js';
import type { RouteSpec, RuleSpec } from '../engine/state/routing.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { canonicalAddress, familyOf } from './address.js';
import { uidOf } from './common.js';
import type { MeshPod, StartupStep } from './types.js';

/** What runs in the pod at a phase. @internal */
export interface PodState {
  /** `app`, or `init:NAME`. */
  readonly phase: string;
  /** The rules have been written. */
  readonly rules: boolean;
  /** The step that writes the rules, and whether it comes later than the phase. */
  readonly rulesStep: StartupStep | null;
  /** The proxy is running (serving). */
  readonly proxy: boolean;
  /** The application containers are running. */
  readonly apps: boolean;
  /** The init container the phase names. */
  readonly init: string | null;
}

/** A socket listening in the pod, and who owns it. @internal */
export interface PodListener {
  /** Bound address, or null for the wildcard of both families. */
  readonly address: string | null;
  readonly port: number;
  readonly proto: 'tcp' | 'udp' | null;
  readonly role: 'outbound' | 'inbound' | 'proxy' | 'app' | 'probe' | 'tunnel' | 'dns';
  /** The container that owns it. */
  readonly container: string;
  /** What it is, for people: `linkerd-proxy outbound`, `web`, `Envoy admin`. */
  readonly label: string;
  readonly uid: number;
  readonly gid: number;
}

/** A pod as a namespace at a phase. @internal */
export interface PodRuntime {
  readonly mesh: MeshPod;
  readonly state: PodState;
  readonly ns: Netns;
  /** What {@link ns} was built from (`explore` takes the same). */
  readonly options: NetnsOptions;
  readonly listeners: readonly PodListener[];
  /** The pod's addresses, canonical. */
  readonly addresses: readonly string[];
}

/** The state of a pod at `app` or `init:NAME`. Throws `BAD_CONFIG` for an unknown init container. @internal */
export function podState(pod: MeshPod, phase: string): PodState {
  const rulesStep = pod.startup.find((s) => s.effect === 'rules' && s.active) ?? null;
  if (phase === 'app') {
    return { phase, rules: rulesStep !== null, rulesStep, proxy: pod.proxy !== null && pod.startup.some((s) => s.effect === 'proxy'), apps: true, init: null };
  }
  // Istio ambient: ztunnel serves the pod from the sandbox step on.
  const sandboxProxy = pod.proxy !== null && pod.startup.some((s) => s.stage === 'sandbox' && s.effect === 'proxy' && s.active);
  const m = /^init:(.+)$/.exec(phase);
  if (!m) throw new NetfilterSimError(diagnostic('BAD_CONFIG', `a phase is "app" or "init:NAME", not "${phase}"`, undefined, phase));
  const name = m[1]!;
  const index = pod.startup.findIndex((s) => s.stage === 'init' && s.name === name);
  if (index < 0) {
    const names = pod.startup.filter((s) => s.stage === 'init').map((s) => s.name);
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `pod ${pod.name} has no init container "${name}" (its init containers, as it runs: ${names.join(', ') || 'none'})`, undefined, name));
  }
  const before = pod.startup.slice(0, index);
  const rules = before.some((s) => s.effect === 'rules' && s.active);
  const proxy = sandboxProxy || (pod.proxy !== null && pod.proxy.nativeSidecar && before.some((s) => s.effect === 'proxy' && s.stage === 'init'));
  return { phase, rules, rulesStep, proxy, apps: false, init: name };
}

const PREFIX = { 4: 24, 6: 64 } as const;

/** The sockets of the pod at a phase. @internal */
export function podListeners(pod: MeshPod, state: PodState): PodListener[] {
  const out: PodListener[] = [];
  const p = pod.proxy;
  if (p && state.proxy) {
    const own = { container: p.container, uid: p.uid, gid: p.gid };
    const name = p.container;
    if (p.kind === 'ztunnel') {
      out.push({ ...own, address: null, port: p.outboundPort, proto: 'tcp', role: 'outbound', label: `${name} outbound` });
      out.push({ ...own, address: null, port: p.inboundPort, proto: 'tcp', role: 'inbound', label: `${name} inbound plaintext` });
      for (const o of p.otherPorts) {
        out.push({ ...own, address: o.address ?? null, port: o.port, proto: o.proto ?? null, role: o.port === p.otherPorts[0]!.port ? 'tunnel' : 'dns', label: `${name} ${o.role}` });
      }
    } else if (pod.mesh === 'linkerd') {
      // LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR(S): loopback only; the rest on the wildcard.
      out.push({ ...own, address: '127.0.0.1', port: p.outboundPort, proto: 'tcp', role: 'outbound', label: `${name} outbound` });
      if (p.ipv6) out.push({ ...own, address: '::1', port: p.outboundPort, proto: 'tcp', role: 'outbound', label: `${name} outbound` });
    } else {
      out.push({ ...own, address: null, port: p.outboundPort, proto: 'tcp', role: 'outbound', label: `${name} outbound (Envoy virtualOutbound)` });
    }
    if (p.kind !== 'ztunnel') {
      out.push({ ...own, address: null, port: p.inboundPort, proto: 'tcp', role: 'inbound', label: `${name} inbound${pod.mesh === 'istio' ? ' (Envoy virtualInbound)' : ''}` });
      for (const o of p.otherPorts) {
        out.push({ ...own, address: o.address ?? null, port: o.port, proto: o.proto ?? null, role: pod.mesh === 'istio' && o.role === 'HBONE tunnel' ? 'tunnel' : 'proxy', label: `${name} ${o.role}` });
      }
    }
  }
  if (state.apps) {
    for (const c of pod.apps) {
      for (const port of c.ports) {
        const proto = port.protocol.toUpperCase() === 'UDP' ? 'udp' : port.protocol.toUpperCase() === 'TCP' ? 'tcp' : null;
        if (proto === null) continue;
        if (out.some((l) => l.port === port.containerPort && (l.proto === null || l.proto === proto) && l.address === null)) continue;
        out.push({ address: null, port: port.containerPort, proto, role: 'app', container: c.name, label: c.name, uid: uidOf(c), gid: c.runAsGroup ?? uidOf(c) });
      }
    }
  }
  return out;
}

/** The pod's interfaces, routes and policy rules (the mesh's `ip` commands applied). @internal */
export function podNetwork(pod: MeshPod, addresses: readonly string[], withMeshRouting: boolean): Pick<NetnsOptions, 'interfaces' | 'routes' | 'ipRules'> {
  const lo: string[] = [];
  const routes: RouteSpec[] = [];
  const ipRules: RuleSpec[] = [];
  if (withMeshRouting) {
    for (const cmd of pod.ipCommands) {
      const [, fam, obj, verb, ...rest] = cmd;
      const family = fam === '-6' ? 6 : 4;
      if (obj === 'addr' && verb === 'add' && rest[1] === 'dev' && rest[2] === 'lo') lo.push(rest[0]!);
      else if (obj === 'rule' && verb === 'add' && rest[0] === 'fwmark') {
        // `fwmark M[/MASK] [pref N] lookup T`
        const [mark, mask] = rest[1]!.split('/');
        const pref = rest.indexOf('pref');
        ipRules.push({
          fwmark: Number(mark), ...(mask !== undefined ? { mask: Number(mask) } : {}), table: Number(rest[rest.length - 1]), family,
          ...(pref >= 0 ? { priority: Number(rest[pref + 1]) } : {}),
        });
      } else if (obj === 'route' && (verb === 'add' || verb === 'replace') && rest[0] === 'local') {
        const table = rest.indexOf('table');
        routes.push({ dst: rest[1]!, dev: rest[3] ?? 'lo', type: 'local', ...(table >= 0 ? { table: Number(rest[table + 1]) } : {}) });
      }
    }
  }
  const eth0 = addresses.map((a) => `${a}/${PREFIX[familyOf(a)]}`);
  return { interfaces: [{ name: 'lo', addresses: lo }, { name: 'eth0', addresses: eth0 }], routes, ipRules };
}

/** Builds the namespace of a pod at a phase. @internal */
export function podRuntime(pod: MeshPod, phase: string, addresses: readonly string[], extra: readonly PodListener[] = []): PodRuntime {
  const state = podState(pod, phase);
  const listeners = [...podListeners(pod, state), ...extra];
  const specs: ListenerSpec[] = listeners.flatMap((l): ListenerSpec[] => {
    const base = { port: l.port, uid: l.uid, gid: l.gid, ...(l.proto ? { proto: l.proto } : {}) };
    // TPROXY delivers to the inbound listener without NAT: Envoy sets IP_TRANSPARENT on it.
    const transparent = l.role === 'inbound' && pod.ipCommands.some((c) => c[2] === 'rule');
    return [{ ...base, ...(l.address !== null ? { address: l.address } : {}), ...(transparent ? { transparent } : {}) }];
  });
  const canon = addresses.map((a) => canonicalAddress(a) ?? a);
  const options: NetnsOptions = {
    ...(state.rules && pod.rules4 ? { rules: pod.rules4 } : {}),
    ...(state.rules && pod.rules6 ? { rules6: pod.rules6 } : {}),
    ...(state.rules && pod.nft ? { nft: pod.nft } : {}),
    listen: specs,
    ...podNetwork(pod, canon, state.rules),
  };
  const ns = new Netns(options);
  return { mesh: pod, state, ns, options, listeners, addresses: canon };
}

/** The listener that accepted a connection at `address:port`. @internal */
export function findListener(rt: PodRuntime, address: string, port: number, proto: 'tcp' | 'udp'): PodListener | undefined {
  const fam = familyOf(address);
  const fits = rt.listeners.filter((l) => l.port === port && (l.proto === null || l.proto === proto));
  return fits.find((l) => l.address !== null && canonicalAddress(l.address) === address)
    ?? fits.find((l) => l.address === null)
    ?? fits.find((l) => l.address !== null && familyOf(l.address) === fam);
}

/** How the connection ended. @internal */
export type End =
  | { readonly kind: 'app' | 'proxy-port'; readonly rt: PodRuntime; readonly listener: PodListener }
  | { readonly kind: 'refused' | 'dropped'; readonly rt: PodRuntime; readonly reason: string }
  | { readonly kind: 'loop'; readonly rt: PodRuntime; readonly actor: string; readonly uid: number; readonly gid: number }
  | { readonly kind: 'external'; readonly address: string; readonly port: number };
