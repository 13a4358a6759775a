/**
 * The links between the cluster's namespaces and a packet's travel across them. A packet that
 * leaves a namespace through an interface is handed to the namespace at the other end of the
 * link, as a new packet there (what crosses a veth: addresses, ports, flags, TTL; not the mark,
 * not conntrack), until a socket takes it, a namespace drops it, or it leaves the cluster:
 *
 * - a pod's `eth0` ↔ its node: with `--cni bridge` a port of `cni0`, where bridge netfilter runs
 *   the node's PREROUTING and, for a frame bridged to another port, FORWARD and POSTROUTING with
 *   `physdev` seeing both ports (`Kernel.receiveBridged`); with `--cni ptp` the node's own
 *   interface to the pod;
 * - the nodes' `eth0`s and the outside router's on one segment, where the next hop's owner
 *   answers ARP;
 * - the router's `eth0` to the world, which answers every connection (its `lan0` is on the nodes'
 *   segment).
 *
 * @module
 */
import type { Netns } from '../engine/path/netns.js';
import type { NetnsExchange, WirePacket } from '../engine/path/exchange.js';
import type { BridgeDecision, PathResult } from '../engine/path/kernel.js';
import type { PacketState, SocketRecord } from '../engine/state/packet-state.js';
import type { Iface } from '../engine/state/routing.js';
import { TraceRecorder } from '../engine/trace/events.js';
import type { TraceEvent } from '../engine/trace/events.js';
import { addressText } from '../model/address.js';
import type { PlannedNode, PlannedPod } from './topology.js';
import type { PolicyDrop, PolicyEnforcer, PolicyVerdict } from './components.js';

/** A namespace of the cluster. */
export interface Place {
  /** `pod/ns/name`, `node/NAME`, `outside`. */
  readonly name: string;
  readonly kind: 'pod' | 'node' | 'outside';
  readonly netns: Netns;
  readonly ex: NetnsExchange;
  readonly node: PlannedNode | null;
  readonly pod: PlannedPod | null;
}

/** One packet's stay in one namespace. */
export interface Visit {
  readonly place: Place;
  readonly packet: number;
  readonly label: string;
  readonly in: string | null;
  out: string | null;
  readonly tr: TraceRecorder | null;
}

/** Where a packet's travel ended. */
export type End =
  | { readonly kind: 'socket'; readonly place: Place; readonly socket: SocketRecord; readonly p: PacketState }
  | { readonly kind: 'refused'; readonly place: Place; readonly p: PacketState }
  | { readonly kind: 'dropped'; readonly place: Place; readonly p: PacketState; readonly reason: string; readonly reject: string | null; readonly policy: PolicyVerdict | null }
  | { readonly kind: 'world'; readonly place: Place; readonly p: PacketState }
  | { readonly kind: 'lost'; readonly place: Place; readonly p: PacketState; readonly reason: string };

/** Where a packet that left a namespace arrives. */
type Arrival =
  | { readonly kind: 'iface'; readonly place: Place; readonly iface: string; readonly out: string }
  | { readonly kind: 'bridged'; readonly place: Place; readonly port: string; readonly to: PlannedPod | null; readonly out: string }
  | { readonly kind: 'world'; readonly out: string }
  | { readonly kind: 'lost'; readonly reason: string; readonly out: string };

/** Namespaces a packet may cross before the travel is called a loop (TTL 64 would end it too). */
const MAX_HOPS = 64;

function sameWords(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The cluster's namespaces, their links, and travels across them. */
export class Fabric {
  readonly places = new Map<string, Place>();
  /** Pod places and hostNetwork pods by address text. */
  private readonly podByAddress = new Map<string, PlannedPod>();
  /** Per node: pods by the name of their veth. */
  private readonly portOwner = new Map<string, Map<string, PlannedPod>>();
  /** Owners of addresses on the nodes' segment (nodes' and the router's local addresses). */
  private readonly lanOwner = new Map<string, Place>();
  readonly hairpin: boolean;
  readonly bridgeMode: boolean;
  enforcer: PolicyEnforcer | null = null;
  /** The visits of the current connection. */
  visits: Visit[] = [];
  tracing = false;
  /** The last drop the enforcer was asked to explain (untraced), for asking again in another order; the connection's driver clears it. */
  lastExplained: PolicyDrop | null = null;

  constructor(bridgeMode: boolean, hairpin: boolean) {
    this.bridgeMode = bridgeMode;
    this.hairpin = hairpin;
  }

  /** Adds a namespace; nodes and the router claim their segment addresses, pods their addresses. */
  add(place: Place, lanAddresses: readonly string[]): void {
    this.places.set(place.name, place);
    for (const a of lanAddresses) this.lanOwner.set(a, place);
    const pod = place.pod;
    if (pod !== null) {
      for (const a of pod.addresses) this.podByAddress.set(a.text, pod);
      let ports = this.portOwner.get(pod.node);
      if (ports === undefined) this.portOwner.set(pod.node, (ports = new Map()));
      ports.set(pod.veth, pod);
    }
  }

  /** A new visit of `place` by the packet `index` (`label`), arriving on `inName` (null: made there). */
  visit(place: Place, index: number, label: string, inName: string | null): Visit {
    const v: Visit = { place, packet: index, label, in: inName, out: null, tr: this.tracing ? new TraceRecorder() : null };
    this.visits.push(v);
    return v;
  }

  /** The next hop of a packet that left through an interface: the route's gateway or the destination. */
  private nextHop(p: PacketState): string {
    const via = p.route?.via ?? null;
    return addressText(via ?? p.dst, p.family);
  }

  /** Where a packet that left `place` through `dev` arrives. */
  private arrival(place: Place, dev: Iface, p: PacketState): Arrival {
    if (place.kind === 'pod') {
      const pod = place.pod!;
      const node = this.places.get(`node/${pod.node}`)!;
      if (!this.bridgeMode) return { kind: 'iface', place: node, iface: pod.veth, out: dev.name };
      const hop = this.nextHop(p);
      const target = this.podByAddress.get(hop);
      if (target !== undefined && !target.hostNetwork && target.node === pod.node) return { kind: 'bridged', place: node, port: pod.veth, to: target, out: dev.name };
      if (node.node!.bridge.some((b) => b.text === hop)) return { kind: 'bridged', place: node, port: pod.veth, to: null, out: dev.name };
      return { kind: 'lost', reason: `no neighbour on ${node.name}'s cni0 answers ARP for ${hop}`, out: dev.name };
    }
    if (place.kind === 'node' && (dev.name === 'cni0' || dev.name.startsWith('veth'))) {
      const ports = this.portOwner.get(place.node!.name);
      let pod: PlannedPod | undefined;
      if (dev.name !== 'cni0') pod = ports?.get(dev.name);
      else if (p.physOut !== null) pod = ports?.get(p.physOut);
      else {
        const hop = this.nextHop(p);
        const t = this.podByAddress.get(hop);
        if (t !== undefined && !t.hostNetwork && t.node === place.node!.name) pod = t;
        if (pod === undefined) return { kind: 'lost', reason: `no neighbour on cni0 answers ARP for ${hop}`, out: dev.name };
      }
      if (pod === undefined) return { kind: 'lost', reason: `nothing at the other end of ${dev.name}`, out: dev.name };
      return { kind: 'iface', place: this.places.get(pod.place)!, iface: 'eth0', out: pod.veth };
    }
    if (place.kind === 'outside' && dev.name === 'eth0') return { kind: 'world', out: 'eth0' };
    if (dev.name === 'eth0' || (place.kind === 'outside' && dev.name === 'lan0')) {
      const hop = this.nextHop(p);
      const owner = this.lanOwner.get(hop);
      if (owner === undefined || owner === place) return { kind: 'lost', reason: `no neighbour on the nodes' segment answers ARP for ${hop}`, out: dev.name };
      return { kind: 'iface', place: owner, iface: owner.kind === 'outside' ? 'lan0' : 'eth0', out: dev.name };
    }
    return { kind: 'lost', reason: `${place.name}: nothing is linked to ${dev.name}`, out: dev.name };
  }

  /**
   * What the bridge does after the node's PREROUTING (`br_nf_pre_routing_finish`): a frame for
   * another port goes there unless NAT changed its destination; one whose destination NAT changed
   * is routed, and bridged to the new neighbour when that route is the bridge again; a frame
   * for the bridge itself goes up to the IP stack. The bridge never sends a frame back out of the
   * port it came in by unless that port is in hairpin mode (`should_deliver`).
   */
  private bridgeDecision(place: Place, port: string, to: PlannedPod | null, dstBefore: readonly number[]): (p: PacketState) => BridgeDecision {
    return (p) => {
      const changed = !sameWords(p.dst, dstBefore);
      let target: PlannedPod | null = to;
      if (changed) {
        const bridge = place.ex.iface('cni0')!;
        const k = place.ex.kernel;
        const r = k.routing.routeInput(p.family, p.src, p.dst, p.mark, bridge, k.forwarding);
        if (r.type !== 'unicast' || r.dev !== bridge) return { kind: 'route' };
        const hop = addressText(r.via ?? p.dst, p.family);
        const t = this.podByAddress.get(hop);
        if (t === undefined || t.hostNetwork || t.node !== place.node!.name) return { kind: 'drop', reason: `no neighbour on cni0 answers ARP for ${hop}` };
        target = t;
      }
      if (target === null) return { kind: 'route' };
      if (target.veth === port && !this.hairpin) {
        return { kind: 'drop', reason: `the bridge does not send a frame back out of the port it came in by (${port}: hairpin mode off)` };
      }
      return { kind: 'bridge', port: target.veth };
    };
  }

  /**
   * The travel of a packet from the result of its first namespace (`visit`) until it ends.
   * `first` says whether it is a connection's first packet, which policy enforcers judge.
   */
  travel(visit: Visit, first: PathResult, isFirst: boolean): End {
    let r = first;
    let v = visit;
    for (let hops = 0; ; hops++) {
      const place = v.place;
      const fromPod = place.kind === 'node' && v.in !== null ? this.portOwner.get(place.node!.name)?.get(v.in) ?? null : null;
      if (isFirst && fromPod !== null && this.enforcer?.decide && (r.kind === 'wire' || r.kind === 'local')) {
        const verdict = this.check('egress', fromPod, r.p);
        if (verdict !== null) return this.policyDrop(v, r.p, verdict);
      }
      if (r.kind === 'local') return { kind: 'socket', place, socket: r.socket, p: r.p };
      if (r.kind === 'refused') return { kind: 'refused', place, p: r.p };
      if (r.kind === 'dropped') {
        // ip_forward: a packet whose TTL runs out is answered with ICMP time exceeded.
        const expired = r.reject === null && /^(TTL|hop limit) exceeded in transit/.test(r.reason);
        const policy = isFirst && place.kind === 'node' && this.enforcer?.explainDrop ? this.explain(place, r.p, r.reason, v) : null;
        return { kind: 'dropped', place, p: r.p, reason: r.reason, reject: expired ? 'time-exceeded' : r.reject, policy };
      }
      const a = this.arrival(place, r.dev, r.p);
      v.out = a.out;
      if (a.kind === 'world') return { kind: 'world', place, p: r.p };
      if (a.kind === 'lost') return { kind: 'lost', place, p: r.p, reason: a.reason };
      if (hops >= MAX_HOPS) return { kind: 'lost', place, p: r.p, reason: `the packet crossed ${MAX_HOPS} namespaces without arriving (a routing loop)` };
      if (isFirst && a.place.kind === 'pod' && this.enforcer?.decide) {
        const verdict = this.check('ingress', a.place.pod!, r.p);
        if (verdict !== null) return this.policyDrop(v, r.p, verdict);
      }
      const w = place.ex.wire(r.p);
      const next = a.place;
      const inName = a.kind === 'bridged' ? a.port : a.iface;
      v = this.visit(next, v.packet, v.label, inName);
      const p = next.ex.arriving(w);
      next.ex.startPacket(v.tr, v.packet, v.label, p, 'remote', inName);
      if (a.kind === 'bridged') {
        const bridge = next.ex.iface('cni0')!;
        r = next.ex.receiveBridged(p, bridge, a.port, this.bridgeDecision(next, a.port, a.to, p.dst.slice()), v.tr);
      } else {
        r = next.ex.receive(p, next.ex.iface(a.iface)!, v.tr);
      }
    }
  }

  /** A packet from the world (the peer behind the router's `eth0`) into the cluster. */
  fromWorld(w: WirePacket, index: number, label: string, isFirst: boolean): End {
    const router = this.places.get('outside')!;
    const v = this.visit(router, index, label, 'eth0');
    const p = router.ex.arriving(w);
    router.ex.startPacket(v.tr, index, label, p, 'remote', 'eth0');
    return this.travel(v, router.ex.receive(p, router.ex.iface('eth0')!, v.tr), isFirst);
  }

  /** A packet made in `place` (by a socket or the kernel) sent and followed. */
  sendFrom(place: Place, p: PacketState, index: number, label: string, isFirst: boolean): End {
    const v = this.visit(place, index, label, null);
    place.ex.startPacket(v.tr, index, label, p, 'local', null);
    return this.travel(v, place.ex.send(p, v.tr), isFirst);
  }

  private check(direction: 'ingress' | 'egress', pod: PlannedPod, p: PacketState): PolicyVerdict | null {
    const protocol = p.proto === 6 ? 'TCP' : p.proto === 17 ? 'UDP' : p.proto === 132 ? 'SCTP' : null;
    if (protocol === null) return null;
    return this.enforcer!.decide!({
      direction, pod: pod.pod, node: pod.node, protocol,
      src: addressText(p.src, p.family), sport: p.sport, dst: addressText(p.dst, p.family), dport: p.dport,
    });
  }

  /** The policy behind a first packet the enforcer's rules dropped in a node, as the enforcer explains it. */
  private explain(place: Place, p: PacketState, reason: string, v: Visit): PolicyVerdict | null {
    const protocol = p.proto === 6 ? 'TCP' : p.proto === 17 ? 'UDP' : p.proto === 132 ? 'SCTP' : null;
    if (protocol === null) return null;
    const drop = {
      node: place.node!.name, src: addressText(p.src, p.family), dst: addressText(p.dst, p.family), dport: p.dport, protocol, reason,
      events: v.tr !== null ? v.tr.events.filter((e) => e.packet === v.packet) : null,
    } as const;
    this.lastExplained = { ...drop, events: null };
    return this.enforcer!.explainDrop!(drop);
  }

  private policyDrop(v: Visit, p: PacketState, verdict: PolicyVerdict): End {
    const rule = verdict.rule === null ? 'isolated, and no rule allows it' : `rule ${verdict.rule}`;
    const reason = `NetworkPolicy ${verdict.namespace}/${verdict.name} (${verdict.direction}, ${rule})`;
    if (v.tr !== null) v.tr.push({ packet: v.packet, label: v.label, type: 'drop', hook: null, reason: `dropped by ${reason}`, reject: null });
    return { kind: 'dropped', place: v.place, p, reason: `dropped by ${reason}`, reject: null, policy: verdict };
  }

  /** Every namespace's trace events of the current connection, each with its namespace. */
  events(): (TraceEvent & { readonly namespace: string })[] {
    const out: (TraceEvent & { readonly namespace: string })[] = [];
    for (const v of this.visits) for (const e of v.tr?.events ?? []) out.push({ ...e, namespace: v.place.name });
    return out;
  }
}
