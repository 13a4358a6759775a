/**
 * The packet path of one network namespace: hooks in priority order, conntrack, NAT once per
 * connection and per manip type, routing and re-routing, loopback re-entry and socket lookup.
 * Table traversal itself is delegated to a {@link TableEvaluator} (lowered or reference).
 *
 * Sources: net/netfilter/core.c `nf_hook_slow`; net/netfilter/nf_conntrack_core.c
 * `nf_conntrack_in`; net/netfilter/nf_nat_core.c `nf_nat_inet_fn`, `nf_nat_setup_info`,
 * `nf_nat_packet`; net/netfilter/nf_nat_proto.c (`nf_nat_ipv4_pre_routing`,
 * `nf_nat_ipv4_local_fn`); net/ipv4/netfilter/iptable_mangle.c `ipt_mangle_out`;
 * net/ipv4/ip_output.c `__ip_local_out` / `ip_output`; drivers/net/loopback.c.
 *
 * @module
 */
import { CT_STATE, CT_STATUS, TCP_FLAGS } from '../../model/packet.js';
import type { HookName } from '../../model/types.js';
import type { PortRange } from '../../iptables/extensions/target-options.js';
import { HOOK_BY_INDEX, HOOK_STEPS, NF_INET, PROTO, hasPorts } from '../state/constants.js';
import type { TableName } from '../../model/types.js';
import type { NftEngine, NftHookEntry, NftHost } from '../rules/nft-interpret.js';
import { IP_CT_DIR_ORIGINAL, IP_CT_DIR_REPLY, NF_NAT_MANIP_DST, TCP_STATE_NAMES as TCP_STATE_NAME, TCP_STEP, NF_NAT_MANIP_SRC, T_DPORT, T_DST, T_SPORT, T_SRC, sameAddr } from '../state/conntrack.js';
import { addressText, formatEndpoint } from '../../model/address.js';
import type { ConntrackTable } from '../state/conntrack.js';
import type { TableEvaluator } from '../rules/iptables-evaluate.js';
import { TABLE_INDEX } from '../rules/iptables-lower.js';
import type { PacketState, SocketRecord } from '../state/packet-state.js';
import type { Iface, NamespaceObserver, RouteResult, Routing } from '../state/routing.js';
import { isLoopback } from '../state/routing.js';
import { NF_ACCEPT, NF_DROP } from '../rules/targets.js';
import type { QueueReader, TargetHost } from '../rules/targets.js';
import type { RuntimeIpset, RuntimeRateEstimator } from '../../iptables/extensions/types.js';
import type { RouteEvent, TraceRecorder } from '../trace/events.js';

/** The nft nat chains of a hook when the namespace has none (no array is made per packet). */
const NO_NFT_NAT: readonly NftHookEntry[] = [];

/** Where a packet's journey ended. @internal */
export type PathResult =
  | { readonly kind: 'local'; readonly socket: SocketRecord; readonly p: PacketState }
  | { readonly kind: 'refused'; readonly p: PacketState }
  | { readonly kind: 'wire'; readonly dev: Iface; readonly p: PacketState }
  | { readonly kind: 'dropped'; readonly p: PacketState; readonly reason: string; readonly reject: string | null; readonly hook: HookName | null };

/**
 * What a bridge does with a frame after PREROUTING (see `Kernel.receiveBridged`): forward it to
 * a port, drop it, or pass it up to the IP stack to be routed. @internal
 */
export type BridgeDecision =
  | { readonly kind: 'bridge'; readonly port: string }
  | { readonly kind: 'drop'; readonly reason: string }
  | { readonly kind: 'route' };

/** `max_attempts` of `nf_nat_l4proto_unique_tuple`. */
const NAT_MAX_ATTEMPTS = 128;
/** A reproducible stand-in for `get_random_u16()`. */
function natOffset(a: number, b: number): number {
  let h = Math.imul(a ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b);
  h ^= h >>> 15;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 13)) & 0xffff;
}
const STEP_CONNTRACK = -1;
const STEP_CONFIRM = -2;
const NAT = TABLE_INDEX.nat;
const MANGLE = TABLE_INDEX.mangle;

/** Per hook: table indices in priority order, with conntrack's own steps as negative codes. */
const HOOK_PLAN: readonly Int32Array[] = HOOK_BY_INDEX.map(
  (h) => Int32Array.from(HOOK_STEPS[h].map((s) => (s.kind === 'table' ? TABLE_INDEX[s.table] : s.kind === 'conntrack' ? STEP_CONNTRACK : STEP_CONFIRM))),
);
const TABLE_NAME = ['raw', 'mangle', 'nat', 'filter', 'security'] as const;
const TABLE_INDEX_OF: Readonly<Record<string, number>> = { raw: 0, mangle: 1, nat: 2, filter: 3, security: 4 };

/** One function at a hook when nft chains run beside the iptables tables. */
type MixedStep =
  | { readonly kind: 'conntrack' | 'confirm'; readonly priority: number; readonly order: number }
  | { readonly kind: 'ipt'; readonly table: number; readonly priority: number; readonly order: number }
  | { readonly kind: 'nft'; readonly entry: NftHookEntry; readonly label: TableName; readonly priority: number; readonly order: number }
  | { readonly kind: 'natcore'; readonly natChains: readonly NftHookEntry[]; readonly priority: number; readonly order: number };

/** A 32-bit hash of a socket's 4-tuple (`inet_ehashfn`). */
function socketHash(family: number, proto: number, local: readonly number[], lport: number, remote: readonly number[], rport: number): number {
  let h = Math.imul(family ^ (proto << 8), 0x9e3779b1) ^ ((lport << 16) | rport);
  for (let i = 0; i < local.length; i++) h = Math.imul(h ^ local[i]!, 0x01000193) + 0x7feb352d;
  for (let i = 0; i < remote.length; i++) h = Math.imul(h ^ remote[i]!, 0x01000193) + 0x68e31da4;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h ^ (h >>> 16);
}

function sameWords(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The socket table: listeners, and connections in an open-addressing hash on their 4-tuple
 * (`inet_hashinfo.ehash`). @internal
 */
const NO_LISTENERS: readonly SocketRecord[] = Object.freeze([]);
const NO_SLOTS: (SocketRecord | null)[] = [null];

export class SocketTable {
  /** Set by `explore` only: told of the address and port each listener lookup reads. */
  observer: NamespaceObserver | null = null;
  /** The listening sockets, never changed (namespaces with the same listeners share them). */
  listeners: readonly SocketRecord[] = NO_LISTENERS;
  /** The hash of a table without connections yet: one empty slot, never written. */
  private slots: (SocketRecord | null)[] = NO_SLOTS;
  private mask = 0;
  private count = 0;

  /** Adds a connection, replacing one with the same 4-tuple. */
  addConnection(s: SocketRecord): void {
    if ((this.count + 1) * 2 > this.slots.length) this.resize(this.slots.length < 8 ? 8 : this.slots.length * 2);
    this.put(s);
  }

  private put(s: SocketRecord): void {
    const local = s.local!;
    const remote = s.remote!;
    let i = socketHash(s.family, s.proto, local, s.localPort, remote, s.remotePort) & this.mask;
    for (;;) {
      const o = this.slots[i]!;
      if (o === null) {
        this.slots[i] = s;
        this.count++;
        return;
      }
      if (o.family === s.family && o.proto === s.proto && o.localPort === s.localPort && o.remotePort === s.remotePort && sameWords(o.local!, local) && sameWords(o.remote!, remote)) {
        this.slots[i] = s;
        return;
      }
      i = (i + 1) & this.mask;
    }
  }

  private resize(size: number): void {
    const old = this.slots;
    this.slots = new Array<SocketRecord | null>(size).fill(null);
    this.mask = size - 1;
    this.count = 0;
    for (const s of old) if (s !== null) this.put(s);
  }

  /** Removes a connection (its close completed, or its timer fired). */
  removeConnection(s: SocketRecord): void {
    const slots = this.slots;
    const mask = this.mask;
    let i = socketHash(s.family, s.proto, s.local!, s.localPort, s.remote!, s.remotePort) & mask;
    for (;;) {
      const o = slots[i]!;
      if (o === null) return;
      if (o === s) break;
      i = (i + 1) & mask;
    }
    // Backward-shift deletion, as in the conntrack hash.
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const o = slots[j]!;
      if (o === null) break;
      const home = socketHash(o.family, o.proto, o.local!, o.localPort, o.remote!, o.remotePort) & mask;
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        slots[hole] = o;
        hole = j;
      }
    }
    slots[hole] = null;
    this.count--;
  }

  /** Connections in the table (established, closing or in TIME_WAIT). */
  get connections(): number {
    return this.count;
  }

  /** The connection with exactly this 4-tuple (`__inet_check_established`'s walk), or null. */
  find(family: number, proto: number, local: readonly number[], lport: number, remote: readonly number[], rport: number): SocketRecord | null {
    let i = socketHash(family, proto, local, lport, remote, rport) & this.mask;
    for (;;) {
      const o = this.slots[i]!;
      if (o === null) return null;
      if (o.localPort === lport && o.remotePort === rport && o.proto === proto && o.family === family && sameWords(o.local!, local) && sameWords(o.remote!, remote)) return o;
      i = (i + 1) & this.mask;
    }
  }

  /** Whether a listener of `proto` holds the port (its bind bucket refuses connect()'s autobind). */
  portBound(proto: number, port: number): boolean {
    for (const l of this.listeners) if (l.proto === proto && l.localPort === port) return true;
    return false;
  }

  /** `__inet_lookup_established`. */
  established(p: PacketState): SocketRecord | null {
    const local = p.dst;
    const remote = p.src;
    const lport = p.dport;
    const rport = p.sport;
    let i = socketHash(p.family, p.proto, local, lport, remote, rport) & this.mask;
    for (;;) {
      const o = this.slots[i]!;
      if (o === null) return null;
      if (o.localPort === lport && o.remotePort === rport && o.proto === p.proto && o.family === p.family && sameWords(o.local!, local) && sameWords(o.remote!, remote)) return o;
      i = (i + 1) & this.mask;
    }
  }

  /** `__inet_lookup_listener`: a socket bound to the address beats one bound to the wildcard. */
  listener(family: number, proto: number, addr: readonly number[], port: number): SocketRecord | null {
    if (this.observer !== null) {
      this.observer.addr(addr);
      this.observer.port(port);
    }
    let wild: SocketRecord | null = null;
    for (const l of this.listeners) {
      if (l.family !== family || l.proto !== proto || l.localPort !== port) continue;
      if (l.local === null) wild ??= l;
      else if (sameAddr(l.local, addr)) return l;
    }
    return wild;
  }

  /** Forgets every connection, keeping the listeners. */
  clearConnections(): void {
    if (this.count !== 0) this.slots.fill(null);
    this.count = 0;
  }

  clone(): SocketTable {
    const t = new SocketTable();
    t.observer = this.observer;
    t.listeners = this.listeners;
    t.slots = this.slots === NO_SLOTS ? NO_SLOTS : this.slots.slice();
    t.mask = this.mask;
    t.count = this.count;
    return t;
  }
}

const NO_IPSETS: ReadonlyMap<string, RuntimeIpset> = new Map();
const NO_RATE_ESTIMATORS: ReadonlyMap<string, RuntimeRateEstimator> = new Map();

/** The per-namespace state and packet path. @internal */
export class Kernel implements TargetHost {
  forwarding: boolean;
  /** The namespace's ipsets (the `set` match reads them, `SET` changes them). */
  ipsets: ReadonlyMap<string, RuntimeIpset> = NO_IPSETS;
  /** The namespace's rate estimators (`RATEEST` feeds them, `rateest` reads them). */
  rateEstimators: ReadonlyMap<string, RuntimeRateEstimator> = NO_RATE_ESTIMATORS;
  /** The program reading the namespace's queues (`NFQUEUE`, nft `queue`); null: none is bound. */
  queueReader: QueueReader | null = null;
  private readonly scratchSrc = [0, 0, 0, 0];
  private readonly scratchDst = [0, 0, 0, 0];

  readonly routing: Routing;
  conntrack: ConntrackTable;
  sockets: SocketTable;
  readonly ev4: TableEvaluator;
  readonly ev6: TableEvaluator;
  /**
   * Whether conntrack runs for IPv4 / IPv6 in this namespace. Since Linux 4.10 conntrack hooks are
   * registered per namespace and family only when something needs them (`nf_ct_netns_get`: NAT
   * targets, conntrack/state/connmark matches, CT/CONNMARK targets…).
   */
  ctEnabled4 = true;
  ctEnabled6 = true;
  /** The namespace's clock (seconds): conntrack timers are armed from it. */
  now = 0;

  constructor(routing: Routing, conntrack: ConntrackTable, sockets: SocketTable, ev4: TableEvaluator, ev6: TableEvaluator, forwarding: boolean) {
    this.routing = routing;
    this.conntrack = conntrack;
    this.sockets = sockets;
    this.ev4 = ev4;
    this.ev6 = ev6;
    this.forwarding = forwarding;
  }

  // ---- hooks ---------------------------------------------------------------------------------

  /** `nf_hook_slow`: every function registered at the hook, in priority order. */
  runHook(hook: number, p: PacketState, tr: TraceRecorder | null): number {
    if (this.nft !== null) return this.runHookMixed(hook, p, tr);
    const name = HOOK_BY_INDEX[hook]!;
    p.hook = name;
    const ev = p.family === 4 ? this.ev4 : this.ev6;
    const plan = HOOK_PLAN[hook]!;
    for (let i = 0; i < plan.length; i++) {
      const step = plan[i]!;
      if (step === STEP_CONNTRACK) {
        if ((p.family === 4 ? this.ctEnabled4 : this.ctEnabled6) && !this.conntrackIn(p, tr)) return NF_DROP;
        continue;
      }
      if (step === STEP_CONFIRM) {
        if (!this.confirm(p, tr)) return NF_DROP;
        continue;
      }
      if (!ev.hasTable(step)) continue;
      p.table = TABLE_NAME[step]!;
      let v: number;
      if (step === NAT) v = this.natHook(ev, hook, p, tr);
      else {
        if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'table', hook: name, table: p.table });
        if (step === MANGLE && hook === NF_INET.LOCAL_OUT) v = this.mangleOut(ev, p, tr);
        else v = ev.doTable(step, hook, p, this, tr);
        if (tr !== null) this.traceVerdict(tr, p, v);
      }
      if (v !== NF_ACCEPT) return NF_DROP;
    }
    return NF_ACCEPT;
  }

  /** Native nft base chains, when the namespace has any (they run beside the iptables tables). */
  nft: NftEngine | null = null;
  /** Hook plans by `family * 8 + hook`, built on first use. */
  private readonly mixedPlans: (readonly MixedStep[] | undefined)[] = [];
  /** The packet the nft engine is deciding (its host's `random` draws from it). */
  private nftPacket: PacketState | null = null;
  private nftHostObject: NftHost | null = null;

  /**
   * The functions at a hook when native nft chains are registered too: iptables tables at their
   * fixed priorities, nft filter/route chains at theirs, and the NAT core in its slot, which runs
   * every nat chain of the hook (iptables' and native ones) by priority until one binds.
   */
  private mixedPlan(family: 4 | 6, hook: number, ev: TableEvaluator): readonly MixedStep[] {
    const key = family * 8 + hook;
    const cached = this.mixedPlans[key];
    if (cached !== undefined) return cached;
    const steps: MixedStep[] = [];
    const name = HOOK_BY_INDEX[hook]!;
    const natPriority = hook === NF_INET.PRE_ROUTING || hook === NF_INET.LOCAL_OUT ? -100 : 100;
    const entries = this.nft!.hookEntries(family, hook);
    let hasNat = false;
    for (const s of HOOK_STEPS[name]) {
      if (s.kind === 'conntrack') steps.push({ kind: 'conntrack', priority: s.priority, order: steps.length });
      else if (s.kind === 'confirm') steps.push({ kind: 'confirm', priority: s.priority, order: steps.length });
      else if (s.table === 'nat') hasNat = ev.hasTable(NAT);
      else if (ev.hasTable(TABLE_INDEX_OF[s.table]!)) steps.push({ kind: 'ipt', table: TABLE_INDEX_OF[s.table]!, priority: s.priority, order: steps.length });
    }
    const natChains: NftHookEntry[] = [];
    for (const e of entries) {
      if (e.base.type === 'nat') natChains.push(e);
      else steps.push({ kind: 'nft', entry: e, label: `${e.table.family} ${e.table.name}` as TableName, priority: e.priority, order: 1000 + steps.length });
    }
    // The NAT core hooks every nat hook of the family once any nat chain exists (nf_nat_register_fn).
    const anyNat = hasNat || [NF_INET.PRE_ROUTING, NF_INET.LOCAL_IN, NF_INET.LOCAL_OUT, NF_INET.POST_ROUTING].some((h) => this.nft!.hookEntries(family, h).some((e) => e.base.type === 'nat'));
    if (hook !== NF_INET.FORWARD && (anyNat || natChains.length > 0)) steps.push({ kind: 'natcore', priority: natPriority, natChains, order: 500 });
    steps.sort((a, b) => a.priority - b.priority || a.order - b.order);
    this.mixedPlans[key] = steps;
    return steps;
  }

  /** The nft engine's host, made once; `random` draws for the packet being decided. */
  private nftHost(p: PacketState): NftHost {
    this.nftPacket = p;
    return (this.nftHostObject ??= {
      natSetup: (q, manip, addr, ports, by, tr) => this.natSetup(q, manip, addr, ports, by, tr),
      redirectAddress: (q) => this.redirectAddress(q),
      masqueradeAddress: (q) => this.masqueradeAddress(q),
      tproxyLookup: (q, onIp, onPort) => this.tproxyLookup(q, onIp, onPort),
      queueReader: this.queueReader,
      // statisticRandom takes xt_statistic's scale (a probability times 2^31); numgen gives a fraction.
      random: (probability) => this.nftPacket!.statisticRandom(Math.round(probability * 0x80000000)),
    });
  }

  private runHookMixed(hook: number, p: PacketState, tr: TraceRecorder | null): number {
    const name = HOOK_BY_INDEX[hook]!;
    p.hook = name;
    const ev = p.family === 4 ? this.ev4 : this.ev6;
    for (const step of this.mixedPlan(p.family, hook, ev)) {
      let v: number;
      switch (step.kind) {
        case 'conntrack':
          if (p.family === 4 ? this.ctEnabled4 : this.ctEnabled6) this.conntrackIn(p, tr);
          continue;
        case 'confirm':
          if (!this.confirm(p, tr)) return NF_DROP;
          continue;
        case 'ipt':
          p.table = TABLE_NAME[step.table]!;
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'table', hook: name, table: p.table });
          if (step.table === MANGLE && hook === NF_INET.LOCAL_OUT) v = this.mangleOut(ev, p, tr);
          else v = ev.doTable(step.table, hook, p, this, tr);
          if (tr !== null) this.traceVerdict(tr, p, v);
          break;
        case 'natcore':
          v = this.natHook(ev, hook, p, tr, step.natChains);
          break;
        case 'nft': {
          const label = step.label;
          p.table = label;
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'table', hook: name, table: label });
          const route = step.entry.base.type === 'route' && hook === NF_INET.LOCAL_OUT;
          const mark = p.mark;
          const src = route ? p.src.slice() : p.src;
          const dst = route ? p.dst.slice() : p.dst;
          v = this.nft!.runBaseChain(step.entry, hook, p, this.nftHost(p), tr);
          if (tr !== null) this.traceVerdict(tr, p, v);
          // nf_route_table_hook: a route chain re-routes when the mark or an address changed.
          if (v === NF_ACCEPT && route) {
            let changed = mark !== p.mark;
            for (let i = 0; i < src.length && !changed; i++) changed = src[i] !== p.src[i] || dst[i] !== p.dst[i];
            if (changed) v = this.rerouteOutput(p, tr);
          }
          break;
        }
      }
      if (v !== NF_ACCEPT) return NF_DROP;
    }
    return NF_ACCEPT;
  }

  private traceVerdict(tr: TraceRecorder, p: PacketState, v: number): void {
    tr.push({ packet: tr.packet, label: tr.label, type: 'verdict', hook: p.hook, table: p.table, verdict: v === NF_ACCEPT ? 'ACCEPT' : 'DROP', reason: v === NF_ACCEPT ? null : p.dropReason });
  }

  /** `ipt_mangle_out`: re-route when mangle OUTPUT changed the mark or the addresses. */
  private mangleOut(ev: TableEvaluator, p: PacketState, tr: TraceRecorder | null): number {
    const mark = p.mark;
    const n = p.family === 4 ? 1 : 4;
    for (let i = 0; i < n; i++) {
      this.scratchSrc[i] = p.src[i]!;
      this.scratchDst[i] = p.dst[i]!;
    }
    const v = ev.doTable(MANGLE, NF_INET.LOCAL_OUT, p, this, tr);
    if (v !== NF_ACCEPT) return v;
    let changed = mark !== p.mark;
    for (let i = 0; i < n && !changed; i++) changed = this.scratchSrc[i] !== p.src[i] || this.scratchDst[i] !== p.dst[i];
    if (changed) return this.rerouteOutput(p, tr);
    return v;
  }

  /** `ip_route_me_harder`: a new route for a locally generated packet. */
  rerouteOutput(p: PacketState, tr: TraceRecorder | null): number {
    const src = this.routing.isLocalAddress(p.family, p.src) ? p.src : null;
    const r = this.routing.routeOutput(p.family, p.dst, p.mark, src);
    if (tr !== null) {
      tr.push({
        packet: tr.packet, label: tr.label, type: 'reroute', hook: p.hook, table: p.table, dst: addressText(p.dst, p.family), result: routeResultName(r.type, null),
        dev: r.dev?.name ?? null, via: r.via ? addressText(r.via, p.family) : null,
      });
    }
    if (r.type !== 'local' && r.type !== 'unicast') {
      p.dropReason = `re-route failed: ${r.type}`;
      return NF_DROP;
    }
    p.route = r;
    return NF_ACCEPT;
  }

  // ---- conntrack -----------------------------------------------------------------------------

  /** Entries created since the last {@link releaseUnconfirmed}. */
  private readonly created: number[] = [];

  /**
   * Frees the entries created by the packets of the last call that were never confirmed (the
   * kernel frees an unconfirmed entry with its skb).
   */
  releaseUnconfirmed(): void {
    const c = this.created;
    if (c.length === 0) return;
    for (let i = 0; i < c.length; i++) this.conntrack.release(c[i]!);
    c.length = 0;
  }

  /**
   * `nf_conntrack_in` at CONNTRACK priority (PREROUTING, OUTPUT). False when the packet is dropped:
   * a new connection with the table at `nf_conntrack_max`.
   */
  conntrackIn(p: PacketState, tr: TraceRecorder | null): boolean {
    const table = this.conntrack;
    if (p.untracked) {
      p.setConntrack(table, -1, IP_CT_DIR_ORIGINAL, CT_STATE.UNTRACKED);
      if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'untracked', state: 'UNTRACKED', direction: null, zone: p.zone, id: null });
      return true;
    }
    if (p.ctEntry >= 0) {
      // "Previously seen (loopback or untracked)?  Ignore."
      if (tr !== null) {
        const t = p.ctTable!;
        tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'attached', state: stateName(p.ctState), direction: p.ctDir === 0 ? 'ORIGINAL' : 'REPLY', zone: t.zone[p.ctEntry]!, id: t.id[p.ctEntry]! });
      }
      return true;
    }
    const icmpError = (p.proto === PROTO.ICMP && (p.icmpType === 3 || p.icmpType === 4 || p.icmpType === 5 || p.icmpType === 11 || p.icmpType === 12)) || (p.proto === PROTO.ICMPV6 && p.icmpType >= 0 && p.icmpType < 128);
    // nf_conntrack_in replaces the RELATED mark of an answer to an untracked packet (with an entry,
    // or with nothing when it is INVALID), except for an ICMP error, which keeps it (its handler
    // returns before): a RST coming back in on lo can be untracked by raw, an ICMP error cannot.
    if (!icmpError) p.ctAttachedNone = false;
    let ref = table.lookup(p.zone, p.proto, p.src, p.sport, p.dst, p.dport);
    if (ref >= 0) {
      const e = ref >> 1;
      const dir = ref & 1;
      const status = table.status;
      // resolve_normal_ct: the packet's ctinfo.
      const state = dir === IP_CT_DIR_REPLY || status[e]! & CT_STATUS.SEEN_REPLY ? CT_STATE.ESTABLISHED : CT_STATE.NEW;
      let step: number = TCP_STEP.VALID;
      if (p.proto === PROTO.TCP) {
        const before = table.tcpState[e]!;
        step = table.tcpStep(e, dir, p.tcpFlags, this.now);
        if (step === TCP_STEP.REOPEN) {
          // nf_conntrack_tcp_packet: a SYN after a close (or after this side's RST) re-opens the
          // connection: the old entry is killed and the packet looked up again (-NF_REPEAT),
          // which makes a new one.
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'reopen', state: 'NEW', direction: dir === 0 ? 'ORIGINAL' : 'REPLY', zone: table.zone[e]!, id: table.id[e]!, reason: `the entry was ${TCP_STATE_NAME[before]}` });
          table.remove(e);
          ref = -1;
        } else if (step === TCP_STEP.INVALID) {
          // tcp_packet returns -NF_ACCEPT: the packet goes on without its entry, INVALID.
          p.setConntrack(table, -1, IP_CT_DIR_ORIGINAL, CT_STATE.INVALID);
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'invalid', state: 'INVALID', direction: dir === 0 ? 'ORIGINAL' : 'REPLY', zone: table.zone[e]!, id: table.id[e]!, reason: `${flagText(p.tcpFlags)} in state ${TCP_STATE_NAME[before]}` });
          return true;
        }
      }
      if (ref >= 0) {
        if (dir === IP_CT_DIR_REPLY) status[e] = status[e]! | CT_STATUS.SEEN_REPLY;
        else if (state === CT_STATE.ESTABLISHED && (p.proto !== PROTO.TCP || p.tcpFlags & TCP_FLAGS.ACK)) status[e] = status[e]! | CT_STATUS.ASSURED;
        if (p.proto !== PROTO.TCP) table.refresh(e, dir, p.tcpFlags, this.now);
        p.setConntrack(table, e, dir, state);
        if (tr !== null) {
          tr.push({
            packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'found', state: stateName(state), direction: dir === 0 ? 'ORIGINAL' : 'REPLY', zone: table.zone[e]!, id: table.id[e]!,
            ...(step === TCP_STEP.IGNORED ? { reason: `${flagText(p.tcpFlags)} ignored in state ${TCP_STATE_NAME[table.tcpState[e]!]}: the entry is kept as it was` } : {}),
          });
        }
        return true;
      }
    }
    if (icmpError) {
      // icmp_error_message / icmpv6_error_message: the error is about one of the table's
      // connections when the inverse of the packet it carries is one of its tuples: RELATED, in
      // that tuple's direction.
      const inner = p.inner;
      if (inner !== null) {
        const r = table.lookup(p.zone, inner.proto, inner.dst, inner.dport, inner.src, inner.sport);
        if (r >= 0) {
          const e = r >> 1;
          p.setConntrack(table, e, r & 1, CT_STATE.RELATED);
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'found', state: 'RELATED', direction: (r & 1) === 0 ? 'ORIGINAL' : 'REPLY', zone: table.zone[e]!, id: table.id[e]!, reason: 'an ICMP error about this connection' });
          return true;
        }
      }
      // An error about no connection of the table is INVALID; it never starts one.
      p.setConntrack(table, -1, IP_CT_DIR_ORIGINAL, CT_STATE.INVALID);
      if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'invalid', state: 'INVALID', direction: null, zone: p.zone, id: null });
      return true;
    }
    if (p.proto === PROTO.TCP) {
      // tcp_new(): only a SYN (or, with nf_conntrack_tcp_loose, a bare ACK) starts a connection.
      const f = p.tcpFlags & (TCP_FLAGS.SYN | TCP_FLAGS.ACK | TCP_FLAGS.RST | TCP_FLAGS.FIN);
      if (f !== TCP_FLAGS.SYN && f !== TCP_FLAGS.ACK) {
        p.setConntrack(table, -1, IP_CT_DIR_ORIGINAL, CT_STATE.INVALID);
        if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'invalid', state: 'INVALID', direction: null, zone: p.zone, id: null });
        return true;
      }
    }
    if (table.count >= table.max) {
      // __nf_conntrack_alloc: early_drop() of an unassured entry is not modelled; the packet drops.
      p.dropReason = `nf_conntrack: table full, dropping packet (nf_conntrack_max ${table.max})`;
      return false;
    }
    const e = table.create(p.family, p.proto, p.zone, p.src, p.sport, p.dst, p.dport);
    table.refresh(e, IP_CT_DIR_ORIGINAL, p.tcpFlags, this.now);
    this.created.push(e);
    p.setConntrack(table, e, IP_CT_DIR_ORIGINAL, CT_STATE.NEW);
    if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'new', state: 'NEW', direction: 'ORIGINAL', zone: table.zone[e]!, id: table.id[e]! });
    return true;
  }

  /**
   * `nf_conntrack_confirm` at the last priority of INPUT and POSTROUTING. False when the entry
   * cannot be inserted because another connection holds one of its tuples (a NAT binding that
   * found no free port): the packet is dropped (`insert_failed`).
   */
  confirm(p: PacketState, tr: TraceRecorder | null): boolean {
    const e = p.ctEntry;
    // __nf_conntrack_confirm: only a packet of the original direction confirms.
    if (e < 0 || p.ctDir !== IP_CT_DIR_ORIGINAL) return true;
    const t = p.ctTable!;
    if (t.status[e]! & CT_STATUS.CONFIRMED) return true;
    if (t.clashes(e)) {
      p.dropReason = `nf_conntrack: insert failed: another connection holds the tuple ${t.describeReply(e)} (no free NAT port)`;
      return false;
    }
    t.confirm(e);
    if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'conntrack', hook: p.hook, action: 'confirm', state: stateName(p.ctState), direction: 'ORIGINAL', zone: t.zone[e]!, id: t.id[e]! });
    return true;
  }

  // ---- NAT -----------------------------------------------------------------------------------

  /**
   * `nf_nat_inet_fn` with the per-hook wrappers: nat rules run only for a connection's first
   * packet and only while its binding of this manip type is not initialised; then the binding
   * rewrites the packet (`nf_nat_packet`).
   */
  private natHook(ev: TableEvaluator, hook: number, p: PacketState, tr: TraceRecorder | null, nftNat: readonly NftHookEntry[] = NO_NFT_NAT): number {
    const manip = hook === NF_INET.PRE_ROUTING || hook === NF_INET.LOCAL_OUT ? NF_NAT_MANIP_DST : NF_NAT_MANIP_SRC;
    const manipName = manip === NF_NAT_MANIP_DST ? 'DST' : 'SRC';
    const ct = p.ctEntry;
    if (ct < 0) {
      // "Can't track?  It's not due to stress, or conntrack would have dropped it."
      if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'nat', hook: p.hook, manip: manipName, action: 'skipped', from: '', to: '', reason: p.ctState === CT_STATE.UNTRACKED ? 'untracked: no NAT' : 'no conntrack entry: no NAT' });
      return NF_ACCEPT;
    }
    const table = p.ctTable!;
    if (p.ctState === CT_STATE.RELATED && (p.proto === PROTO.ICMP || p.proto === PROTO.ICMPV6)) {
      // nf_nat_ipv4_fn: an ICMP error is only translated as a reply (nf_nat_icmp_reply_translation).
      this.natPacket(table, ct, manip, p, tr);
      return NF_ACCEPT;
    }
    // IP_CT_NEW, and IP_CT_RELATED(_REPLY) which falls through to it (nf_nat_inet_fn).
    if ((p.ctDir === IP_CT_DIR_ORIGINAL && p.ctState === CT_STATE.NEW) || p.ctState === CT_STATE.RELATED) {
      if (!(table.natDone[ct]! & manip)) {
        // The NAT core: every nat chain of the hook, by priority, until one made a binding.
        const natPriority = manip === NF_NAT_MANIP_DST ? -100 : 100;
        let iptDone = !ev.hasTable(NAT);
        let k = 0;
        while (!(table.natDone[ct]! & manip)) {
          const next = nftNat[k];
          let v: number;
          if (!iptDone && (next === undefined || natPriority <= next.priority)) {
            iptDone = true;
            p.table = 'nat';
            if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'table', hook: p.hook, table: 'nat' });
            v = ev.doTable(NAT, hook, p, this, tr);
          } else if (next !== undefined) {
            k++;
            const label = `${next.table.family} ${next.table.name}` as TableName;
            p.table = label;
            if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'table', hook: p.hook, table: label });
            v = this.nft!.runBaseChain(next, hook, p, this.nftHost(p), tr);
          } else break;
          if (tr !== null) this.traceVerdict(tr, p, v);
          if (v !== NF_ACCEPT) return v;
        }
        if (!(table.natDone[ct]! & manip)) this.natSetup(p, manip, null, null, 'null-binding', tr);
      } else if (tr !== null) {
        tr.push({ packet: tr.packet, label: tr.label, type: 'nat', hook: p.hook, manip: manipName, action: 'skipped', from: '', to: '', reason: manip === NF_NAT_MANIP_DST ? DST_BOUND : SRC_BOUND });
      }
    } else if (tr !== null) {
      tr.push({ packet: tr.packet, label: tr.label, type: 'nat', hook: p.hook, manip: manipName, action: 'skipped', from: '', to: '', reason: p.ctDir === IP_CT_DIR_REPLY ? 'reply direction: the binding applies' : 'not the first packet: the binding applies' });
    }
    const dstChanged = this.natPacket(table, ct, manip, p, tr);
    if (hook === NF_INET.LOCAL_OUT) {
      // nf_nat_ipv4_local_fn: re-route while DNAT is in effect for this direction.
      const dir = p.ctDir;
      if (!table.sameAddrs(ct, dir, T_DST, 1 - dir, T_SRC)) return this.rerouteOutput(p, tr);
    } else if (hook === NF_INET.PRE_ROUTING && dstChanged) {
      // nf_nat_ipv4_pre_routing: a rewritten destination drops the route (skb_dst_drop).
      p.route = null;
    }
    return NF_ACCEPT;
  }

  /** `nf_nat_packet`: rewrites the packet from the binding; returns whether the destination changed. */
  private natPacket(table: ConntrackTable, ct: number, manip: number, p: PacketState, tr: TraceRecorder | null): boolean {
    let statusbit = manip === NF_NAT_MANIP_SRC ? CT_STATUS.SNAT : CT_STATUS.DNAT;
    if (p.ctDir === IP_CT_DIR_REPLY) statusbit ^= CT_STATUS.SNAT | CT_STATUS.DNAT;
    if (!(table.status[ct]! & statusbit)) return false;
    // nf_nat_manip_pkt: the target is the inverse of the other direction's tuple.
    const other = 1 - p.ctDir;
    const ports = hasPorts(p.proto);
    if (manip === NF_NAT_MANIP_SRC) {
      const from = tr !== null ? formatEndpoint(p.src, p.sport, p.family) : '';
      const port = table.port(ct, other, T_DPORT);
      const changed = !table.addrIs(ct, other, T_DST, p.src) || (ports && p.sport !== port);
      table.readAddr(ct, other, T_DST, p.src);
      if (ports) p.sport = port;
      if (tr !== null && changed) tr.push({ packet: tr.packet, label: tr.label, type: 'nat', hook: p.hook, manip: 'SRC', action: 'apply', from, to: formatEndpoint(p.src, p.sport, p.family), reason: null });
      return false;
    }
    const from = tr !== null ? formatEndpoint(p.dst, p.dport, p.family) : '';
    const port = table.port(ct, other, T_SPORT);
    const changed = !table.addrIs(ct, other, T_SRC, p.dst) || (ports && p.dport !== port);
    table.readAddr(ct, other, T_SRC, p.dst);
    if (ports) p.dport = port;
    if (tr !== null && changed) tr.push({ packet: tr.packet, label: tr.label, type: 'nat', hook: p.hook, manip: 'DST', action: 'apply', from, to: formatEndpoint(p.dst, p.dport, p.family), reason: null });
    return changed;
  }

  /** The tuple `natSetup` builds: the original direction as it will look after NAT. */
  private readonly nextSrc: number[] = [0, 0, 0, 0];
  private readonly nextDst: number[] = [0, 0, 0, 0];
  private nextSport = 0;
  private nextDport = 0;

  /** `nf_nat_setup_info` with `get_unique_tuple`. */
  natSetup(p: PacketState, manip: number, addr: readonly number[] | null, ports: PortRange | null, by: string, tr: TraceRecorder | null): number {
    const ct = p.ctEntry;
    if (ct < 0) return NF_ACCEPT;
    const table = p.ctTable!;
    // curr = the inverse of the reply tuple; next starts as a copy of it.
    const nSrc = table.readAddr(ct, IP_CT_DIR_REPLY, T_DST, this.nextSrc);
    const nDst = table.readAddr(ct, IP_CT_DIR_REPLY, T_SRC, this.nextDst);
    const currSport = table.port(ct, IP_CT_DIR_REPLY, T_DPORT);
    const currDport = table.port(ct, IP_CT_DIR_REPLY, T_SPORT);
    this.nextSport = currSport;
    this.nextDport = currDport;
    const src = manip === NF_NAT_MANIP_SRC;
    const from = tr === null ? '' : src ? formatEndpoint(nSrc, currSport, p.family) : formatEndpoint(nDst, currDport, p.family);
    if (addr !== null) {
      const w = src ? nSrc : nDst;
      for (let i = 0; i < addr.length; i++) w[i] = addr[i]!;
    }
    if (hasPorts(p.proto)) this.uniquePort(table, ct, src, ports);
    const same =
      this.nextSport === currSport && this.nextDport === currDport &&
      table.addrIs(ct, IP_CT_DIR_REPLY, T_DST, nSrc) && table.addrIs(ct, IP_CT_DIR_REPLY, T_SRC, nDst);
    if (!same) {
      table.setReplyInverse(ct, nSrc, this.nextSport, nDst, this.nextDport);
      table.status[ct] = table.status[ct]! | (src ? CT_STATUS.SNAT : CT_STATUS.DNAT);
    }
    table.natDone[ct] = table.natDone[ct]! | manip;
    if (tr !== null) {
      tr.push({
        packet: tr.packet, label: tr.label, type: 'nat', hook: p.hook, manip: src ? 'SRC' : 'DST', action: by as 'DNAT',
        from,
        to: src ? formatEndpoint(nSrc, this.nextSport, p.family) : formatEndpoint(nDst, this.nextDport, p.family),
        reason: null,
      });
    }
    return NF_ACCEPT;
  }

  /** Whether another connection already answers to the reply tuple of {@link nextSrc}… */
  private taken(table: ConntrackTable, ct: number): boolean {
    return table.replyTupleTaken(ct, this.nextDst, this.nextDport, this.nextSrc, this.nextSport);
  }

  private setPort(src: boolean, v: number): void {
    if (src) this.nextSport = v;
    else this.nextDport = v;
  }

  /**
   * The port part of `get_unique_tuple`: keep the port when it is in range and unique, else
   * `nf_nat_l4proto_unique_tuple`: at most 128 ports from an offset, then rounds of half as many
   * from new offsets while the window is 16 or more (the kernel bounds the search so that a full
   * range cannot stall it). When every try is taken the last one stays; the clash then fails the
   * entry's insertion at confirm and the packet is dropped, as in the kernel.
   */
  private uniquePort(table: ConntrackTable, ct: number, src: boolean, ports: PortRange | null): void {
    const cur = src ? this.nextSport : this.nextDport;
    let min: number;
    let size: number;
    if (ports !== null) {
      if (cur >= ports.min && cur <= ports.max && (ports.min === ports.max || !this.taken(table, ct))) return;
      min = ports.min;
      size = ports.max - ports.min + 1;
    } else {
      if (!this.taken(table, ct)) return;
      // A destination port is never changed without a range.
      if (!src) return;
      min = cur < 512 ? 1 : cur < 1024 ? 600 : 1024;
      size = (cur < 512 ? 511 : cur < 1024 ? 1023 : 65535) - min + 1;
    }
    // A source manip starts at a random offset (get_random_u16), a destination one at 0. Ours is
    // a hash of the connection's id and port: spread as the kernel's, and reproducible.
    let off = src ? natOffset(table.id[ct]!, cur) : 0;
    let attempts = Math.min(size, NAT_MAX_ATTEMPTS);
    for (;;) {
      for (let i = 0; i < attempts; i++, off++) {
        this.setPort(src, min + (off % size));
        if (!this.taken(table, ct)) return;
      }
      if (attempts >= size || attempts < 16) return;
      attempts >>= 1;
      off = natOffset(off, attempts);
    }
  }

  redirectAddress(p: PacketState): readonly number[] | null {
    if (p.hook === 'OUTPUT') return p.family === 4 ? [0x7f000001] : [0, 0, 0, 1];
    const dev = p.inIndex > 0 ? this.routing.ifaceByIndex(p.inIndex) : null;
    const list = dev ? (p.family === 4 ? dev.addrs4 : dev.addrs6) : [];
    return list[0]?.addr ?? null;
  }

  masqueradeAddress(p: PacketState): readonly number[] | null {
    const dev = p.outIndex > 0 ? this.routing.ifaceByIndex(p.outIndex) : null;
    if (!dev) return null;
    // nf_nat_masquerade_ipv4: inet_select_addr(out, the route's next hop, RT_SCOPE_UNIVERSE), so
    // never a host-scope address (127.0.0.1 out of lo gives way to 10.0.0.2); IPv6:
    // ipv6_dev_get_saddr(out, daddr), which prefers the destination itself.
    if (p.family === 4) return this.routing.selectSource4(dev, p.route?.via ?? p.dst, 0);
    return this.routing.selectSource6(dev, p.dst);
  }

  tproxyLookup(p: PacketState, onIp: readonly number[] | undefined, onPort: number): SocketRecord | null {
    // An established connection on the packet's own addresses first (the redirect happened before).
    const est = this.sockets.established(p);
    if (est !== null) return est.transparent ? est : null;
    let laddr: readonly number[] | null = onIp && onIp.some((w) => w !== 0) ? onIp : null;
    if (laddr === null) {
      // nf_tproxy_laddr4/6: the first address of the incoming device, else the destination.
      const dev = p.inIndex > 0 ? this.routing.ifaceByIndex(p.inIndex) : null;
      const list = dev ? (p.family === 4 ? dev.addrs4 : dev.addrs6) : [];
      laddr = list[0]?.addr ?? p.dst;
    }
    const lport = onPort === 0 ? p.dport : onPort;
    const l = this.sockets.listener(p.family, p.proto, laddr, lport);
    return l !== null && l.transparent ? l : null;
  }

  // ---- paths ---------------------------------------------------------------------------------

  /** A locally generated packet: route, OUTPUT, POSTROUTING, then `lo` or the wire. */
  sendLocal(p: PacketState, tr: TraceRecorder | null): PathResult {
    let r: RouteResult | null = p.route;
    if (r === null) {
      r = this.routing.routeOutput(p.family, p.dst, p.mark, p.src);
      p.route = r;
    }
    if (tr !== null) traceRoute(tr, p, null, r, null);
    if (r.type !== 'local' && r.type !== 'unicast' && r.type !== 'broadcast') return dropped(p, tr, null, `no route to ${addressText(p.dst, p.family)} (${r.type})`);
    // __ip_route_output_key: a source the host does not own (a policy `local` route made the
    // connection local) is refused unless the socket is IP_TRANSPARENT.
    if (p.checkSource && p.family === 4 && !this.routing.isLocalAddress(4, p.src)) {
      return dropped(p, tr, null, `output routing refuses the source ${addressText(p.src, 4)}, which the host does not own (the socket is not IP_TRANSPARENT)`);
    }
    // __ip_local_out: the OUTPUT hook gets the device of the route found before it.
    const out = r.dev!;
    p.inIface = null;
    p.inIndex = 0;
    p.outIface = out.name;
    p.outIndex = out.index;
    if (this.runHook(NF_INET.LOCAL_OUT, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'OUTPUT', null);
    // ip_output: POSTROUTING gets the device of the current route.
    const now = p.route!;
    const dev = now.dev!;
    p.outIface = dev.name;
    p.outIndex = dev.index;
    if (this.runHook(NF_INET.POST_ROUTING, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'POSTROUTING', null);
    if (dev.loopback) {
      if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'loopback' });
      return this.receive(p, dev, true, tr);
    }
    // A segment to a subnet's broadcast address (a SYN-ACK or RST to a broadcast source) goes out
    // as a link-layer broadcast, and no host's TCP takes one (tcp_v4_rcv: pkt_type != PACKET_HOST).
    if (now.type === 'broadcast' && p.proto === PROTO.TCP) return dropped(p, tr, null, `a TCP segment to the broadcast address ${addressText(p.dst, p.family)}: no host takes it`);
    if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'wire', dev: dev.name, src: addressText(p.src, p.family), sport: p.sport, dst: addressText(p.dst, p.family), dport: p.dport });
    return { kind: 'wire', dev, p };
  }

  /** An arriving packet: PREROUTING, routing, then INPUT and a socket, or FORWARD and POSTROUTING. */
  receive(p: PacketState, dev: Iface, loopback: boolean, tr: TraceRecorder | null): PathResult {
    p.inIface = dev.name;
    p.inIndex = dev.index;
    p.outIface = null;
    p.outIndex = 0;
    // loopback_xmit: skb_orphan; the conntrack entry, the mark and the route stay with the skb.
    p.socket = null;
    if (!loopback) {
      p.route = null;
      if (p.family === 6 && this.routing.observer !== null) {
        this.routing.observer.addr(p.src);
        this.routing.observer.addr(p.dst);
      }
      if (p.family === 6 && (isLoopback(p.src, 6) || isLoopback(p.dst, 6))) {
        // ip6_rcv_core drops ::1 on a device other than lo before any hook.
        return dropped(p, tr, null, '::1 on a non-loopback device');
      }
    }
    if (this.runHook(NF_INET.PRE_ROUTING, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'PREROUTING', null);
    return this.routeReceived(p, dev, loopback, tr);
  }

  /**
   * A frame entering the bridge `bridge` by its port `port`, with bridge netfilter on
   * (`bridge-nf-call-iptables=1`, br_netfilter's `br_nf_pre_routing`): PREROUTING runs once with
   * the bridge as the in-device and `physdev` seeing the port. Then `decide` says what the bridge
   * does with it (`br_nf_pre_routing_finish`, from the frame's destination and whether NAT changed
   * its address): forward it to another port (`bridgeForward`: FORWARD and POSTROUTING with the
   * bridge as in- and out-device, no IP routing), drop it, or hand it up to the node's IP stack,
   * where it is routed as if it had arrived on the bridge device (PREROUTING is not run again:
   * `ip_sabotage_in`). @internal
   */
  receiveBridged(p: PacketState, bridge: Iface, port: string, decide: (p: PacketState) => BridgeDecision, tr: TraceRecorder | null): PathResult {
    p.inIface = bridge.name;
    p.inIndex = bridge.index;
    p.outIface = null;
    p.outIndex = 0;
    p.socket = null;
    p.route = null;
    p.physIn = port;
    p.physOut = null;
    if (p.family === 6 && (isLoopback(p.src, 6) || isLoopback(p.dst, 6))) return dropped(p, tr, null, '::1 on a non-loopback device');
    if (this.runHook(NF_INET.PRE_ROUTING, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'PREROUTING', null);
    const d = decide(p);
    if (d.kind === 'drop') return dropped(p, tr, null, d.reason);
    if (d.kind === 'bridge') return this.bridgeForward(p, bridge, d.port, tr);
    return this.routeReceived(p, bridge, false, tr);
  }

  /**
   * A bridged frame leaving by `port` (`br_nf_forward_ip`, `br_nf_post_routing`): FORWARD and
   * POSTROUTING with the bridge as both devices and `physdev` seeing both ports. The TTL is not
   * touched and `ip_forward` is not asked: the bridge forwards, not IP. @internal
   */
  bridgeForward(p: PacketState, bridge: Iface, port: string, tr: TraceRecorder | null): PathResult {
    p.outIface = bridge.name;
    p.outIndex = bridge.index;
    p.physOut = port;
    if (tr !== null) {
      tr.push({ packet: tr.packet, label: tr.label, type: 'route', hook: 'PREROUTING', dst: addressText(p.dst, p.family), result: 'forward', dev: bridge.name, via: null, src: null, table: null, reason: `bridged from port ${p.physIn ?? '?'} to port ${port}` });
    }
    if (this.runHook(NF_INET.FORWARD, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'FORWARD', null);
    if (this.runHook(NF_INET.POST_ROUTING, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'POSTROUTING', null);
    if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'wire', dev: port, src: addressText(p.src, p.family), sport: p.sport, dst: addressText(p.dst, p.family), dport: p.dport });
    return { kind: 'wire', dev: bridge, p };
  }

  /** After PREROUTING: the input route, then INPUT and a socket, or FORWARD and POSTROUTING. */
  private routeReceived(p: PacketState, dev: Iface, loopback: boolean, tr: TraceRecorder | null): PathResult {
    let r = p.route;
    if (r === null || !loopback) {
      const ri = this.routing.routeInput(p.family, p.src, p.dst, p.mark, dev, this.forwarding);
      if (tr !== null) traceRoute(tr, p, 'PREROUTING', ri, ri.reason);
      if (ri.type !== 'local' && ri.type !== 'unicast') return dropped(p, tr, null, ri.reason ?? ri.type);
      r = ri;
      p.route = ri;
    }
    if (r.type === 'local' || r.type === 'broadcast') {
      if (this.runHook(NF_INET.LOCAL_IN, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'INPUT', null);
      return this.socketLookup(p, tr);
    }
    const out = r.dev!;
    p.outIface = out.name;
    p.outIndex = out.index;
    // ip_forward / ip6_forward: a packet with TTL 1 (or less) is not forwarded (ICMP time
    // exceeded); the TTL is decremented before the FORWARD hook sees it.
    if (p.ttl <= 1) return dropped(p, tr, null, p.family === 4 ? 'TTL exceeded in transit' : 'hop limit exceeded in transit');
    p.ttl -= 1;
    if (this.runHook(NF_INET.FORWARD, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'FORWARD', null);
    if (this.runHook(NF_INET.POST_ROUTING, p, tr) !== NF_ACCEPT) return dropped(p, tr, 'POSTROUTING', null);
    if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'wire', dev: out.name, src: addressText(p.src, p.family), sport: p.sport, dst: addressText(p.dst, p.family), dport: p.dport });
    return { kind: 'wire', dev: out, p };
  }

  /** Local delivery: the socket TPROXY assigned, an established connection, or a listener. */
  socketLookup(p: PacketState, tr: TraceRecorder | null): PathResult {
    let s: SocketRecord | null = p.assignedSocket;
    let how = 'tproxy';
    if (s === null || s.remote === null) {
      const est = this.sockets.established(p);
      if (est !== null) {
        s = est;
        how = 'connection';
      }
    }
    if (s === null) {
      const syn = p.proto !== PROTO.TCP || (p.tcpFlags & (TCP_FLAGS.SYN | TCP_FLAGS.ACK | TCP_FLAGS.RST)) === TCP_FLAGS.SYN;
      if (syn) {
        s = this.sockets.listener(p.family, p.proto, p.dst, p.dport);
        how = 'listener';
      }
    }
    if (s === null) {
      if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'socket', result: 'refused', address: addressText(p.dst, p.family), port: p.dport, socket: null });
      return { kind: 'refused', p };
    }
    if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'socket', result: 'delivered', address: addressText(p.dst, p.family), port: p.dport, socket: describeSocket(s, how) });
    return { kind: 'local', socket: s, p };
  }
}

/** TCP flags as a trace names them: SYN, SYN-ACK, FIN-ACK, RST-ACK, ACK. */
function flagText(f: number): string {
  const names: string[] = [];
  if (f & TCP_FLAGS.SYN) names.push('SYN');
  if (f & TCP_FLAGS.FIN) names.push('FIN');
  if (f & TCP_FLAGS.RST) names.push('RST');
  if (f & TCP_FLAGS.ACK) names.push('ACK');
  return names.length === 0 ? 'a segment without flags' : names.join('-');
}

function stateName(bit: number): 'NEW' | 'ESTABLISHED' | 'RELATED' | 'INVALID' | 'UNTRACKED' {
  switch (bit) {
    case CT_STATE.NEW:
      return 'NEW';
    case CT_STATE.ESTABLISHED:
      return 'ESTABLISHED';
    case CT_STATE.RELATED:
      return 'RELATED';
    case CT_STATE.UNTRACKED:
      return 'UNTRACKED';
    default:
      return 'INVALID';
  }
}

function routeResultName(t: RouteResult['type'], hook: HookName | null): RouteEvent['result'] {
  if (t === 'local' || t === 'broadcast') return 'local';
  if (t === 'unicast') return hook === null || hook === 'OUTPUT' ? 'unicast' : 'forward';
  if (t === 'throw') return 'unreachable';
  return t;
}

function traceRoute(tr: TraceRecorder, p: PacketState, hook: HookName | null, r: RouteResult, reason: string | null): void {
  const result = routeResultName(r.type, hook);
  tr.push({
    packet: tr.packet, label: tr.label, type: 'route', hook, dst: addressText(p.dst, p.family), result: reason?.startsWith('martian') ? 'martian' : result,
    dev: r.dev?.name ?? null, via: r.via ? addressText(r.via, p.family) : null,
    src: r.src ? addressText(r.src, p.family) : null, table: r.table || null, reason,
  });
}

function dropped(p: PacketState, tr: TraceRecorder | null, hook: HookName | null, reason: string | null): PathResult {
  const why = reason ?? p.dropReason ?? (hook ? `dropped in ${hook} (${p.table})` : 'dropped');
  if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'drop', hook, reason: why, reject: p.rejectWith });
  return { kind: 'dropped', p, reason: why, reject: p.rejectWith, hook };
}

/** Descriptions of listeners, as a TPROXY target or a socket lookup finds them. */
const LISTENER_TEXT = new WeakMap<SocketRecord, string>();
const LISTENER_TPROXY_TEXT = new WeakMap<SocketRecord, string>();
/** Why the nat rules did not run for a packet whose binding of the manip type exists. */
const DST_BOUND = 'the DST binding was made at OUTPUT or PREROUTING already';
const SRC_BOUND = 'the SRC binding was made at POSTROUTING or INPUT already';

/** `listener 0.0.0.0:4140 uid 2102`. */
export function describeSocket(s: SocketRecord, how: string): string {
  if (s.remote === null) {
    // A listener's record never changes: its two descriptions are made once.
    const cache = how === 'tproxy' ? LISTENER_TPROXY_TEXT : LISTENER_TEXT;
    let text = cache.get(s);
    if (text === undefined) {
      const a = s.local === null ? (s.family === 4 ? '0.0.0.0' : '::') : addressText(s.local, s.family);
      const addr = s.family === 6 ? `[${a}]:${s.localPort}` : `${a}:${s.localPort}`;
      text = `${how === 'tproxy' ? 'transparent ' : ''}listener ${addr}${s.transparent && how !== 'tproxy' ? ' (IP_TRANSPARENT)' : ''} uid ${s.owner.uid}`;
      cache.set(s, text);
    }
    return text;
  }
  return `connection ${formatEndpoint(s.local!, s.localPort, s.family)} ↔ ${formatEndpoint(s.remote!, s.remotePort, s.family)}`;
}
