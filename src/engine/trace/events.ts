/**
 * What the engine records while a packet crosses the namespace: an ordered list of events in the
 * kernel TRACE vocabulary (`table:chain:rule|return|policy:N`) plus the routing, conntrack, NAT and
 * socket decisions around it. Renderers live in `src/trace/`; this module only defines the data.
 *
 * @module
 */
import type { HookName, Span, TableName } from '../../model/types.js';
import { MAX_TRACE_RULE_EVENTS } from '../../model/limits.js';

/** Fields every event carries: which packet of the exchange it belongs to. */
export interface TraceEventBase {
  /** 0-based index of the packet within the exchange (SYN = 0, SYN-ACK = 1, ACK = 2). */
  readonly packet: number;
  /** What the packet is: `SYN`, `SYN-ACK`, `ACK`, `RST`, `UDP`, `PACKET`. */
  readonly label: string;
}

/** A packet starts its journey. */
export interface PacketEvent extends TraceEventBase {
  readonly type: 'packet';
  readonly family: 4 | 6;
  readonly proto: string;
  readonly src: string;
  readonly sport: number;
  readonly dst: string;
  readonly dport: number;
  readonly flags: string;
  /** `local` (sent by a socket of the namespace), `remote` (arrives on `iface`). */
  readonly origin: 'local' | 'remote';
  readonly iface: string | null;
  /** The sending socket's owner, for locally generated packets that have one. */
  readonly uid: number | null;
  readonly gid: number | null;
  readonly mark: number;
}

/** A routing decision (before OUTPUT, or after PREROUTING). */
export interface RouteEvent extends TraceEventBase {
  readonly type: 'route';
  readonly hook: HookName | null;
  readonly dst: string;
  /** `local`, `unicast`, `forward`, or why there is no usable route. */
  readonly result: 'local' | 'unicast' | 'forward' | 'unreachable' | 'blackhole' | 'prohibit' | 'martian';
  readonly dev: string | null;
  readonly via: string | null;
  readonly src: string | null;
  /** The routing table that answered (255 local, 254 main, or a policy table). */
  readonly table: number | null;
  readonly reason: string | null;
}

/** `ip_route_me_harder` after mangle or nat changed the packet in OUTPUT. */
export interface RerouteEvent extends TraceEventBase {
  readonly type: 'reroute';
  readonly hook: HookName;
  readonly table: TableName;
  readonly dst: string;
  readonly result: RouteEvent['result'];
  readonly dev: string | null;
  readonly via: string | null;
}

/** Entering a table at a hook. */
export interface TableEvent extends TraceEventBase {
  readonly type: 'table';
  readonly hook: HookName;
  readonly table: TableName;
}

/** Where in the rule set an event happened. */
export interface RulePosition {
  readonly hook: HookName;
  readonly table: TableName;
  readonly chain: string;
  /** 1-based, as `iptables -L --line-numbers`; for `return`/`policy`, the chain's length + 1. */
  readonly rule: number;
}

/** A rule matched (kernel TRACE `rule`). */
export interface RuleEvent extends TraceEventBase, RulePosition {
  readonly type: 'rule';
  /** The target as iptables names it (`ACCEPT`, `REDIRECT`, a chain name), or `''` for none. */
  readonly target: string;
  /** How the target acts: a verdict, `jump`, `goto`, an extension, or `none` (the rule only counts). */
  readonly action: 'verdict' | 'jump' | 'goto' | 'extension' | 'none';
  readonly text: string | null;
  readonly comment: string | null;
  readonly span: Span | null;
}

/** The end of a user chain was reached (kernel TRACE `return`). */
export interface ReturnEvent extends TraceEventBase, RulePosition {
  readonly type: 'return';
}

/** The policy of a built-in chain decided (kernel TRACE `policy`). */
export interface PolicyEvent extends TraceEventBase, RulePosition {
  readonly type: 'policy';
  readonly policy: 'ACCEPT' | 'DROP';
}

/** A match the engine cannot evaluate faithfully and assumed (`evaluates: 'assumed'`). */
export interface AssumedEvent extends TraceEventBase, RulePosition {
  readonly type: 'assumed';
  readonly match: string;
  readonly result: boolean;
  /** The rule the module followed instead of an exact evaluation (`assumption(options)`). */
  readonly assumption: string | null;
}

/** What a table decided for the packet at this hook. */
export interface VerdictEvent extends TraceEventBase {
  readonly type: 'verdict';
  readonly hook: HookName;
  readonly table: TableName;
  readonly verdict: 'ACCEPT' | 'DROP';
  /** Why, when not a plain rule or policy: `jump stack overflow`, `REJECT`, `TPROXY: no socket`… */
  readonly reason: string | null;
}

/** A conntrack lookup (at CONNTRACK priority) or confirmation. */
export interface ConntrackEvent extends TraceEventBase {
  readonly type: 'conntrack';
  readonly hook: HookName;
  /**
   * `new` entry created, `found` in the table, `attached` (the packet already carries its entry:
   * loopback re-entry), `untracked` (NOTRACK), `invalid`, `confirm` (inserted into the table),
   * `reopen` (a SYN met the entry of a closed or aborted connection: that entry is removed and
   * a new one made; `id` is the removed entry's).
   */
  readonly action: 'new' | 'found' | 'attached' | 'untracked' | 'invalid' | 'confirm' | 'reopen';
  readonly state: 'NEW' | 'ESTABLISHED' | 'RELATED' | 'INVALID' | 'UNTRACKED';
  readonly direction: 'ORIGINAL' | 'REPLY' | null;
  readonly zone: number;
  readonly id: number | null;
  /**
   * Why TCP tracking judged the packet as it did: for `invalid`, the segment and the state it met
   * (an ACK while the entry is SYN_SENT); for `found`, present when the segment was ignored (the
   * entry's state and timer are kept); for `reopen`, the state of the entry removed.
   */
  readonly reason?: string;
}

/** A NAT binding decided by a rule, or a null binding, or a binding applied to the packet. */
export interface NatEvent extends TraceEventBase {
  readonly type: 'nat';
  readonly hook: HookName;
  readonly manip: 'DST' | 'SRC';
  /**
   * `REDIRECT`/`DNAT`/`SNAT`/`MASQUERADE`: a rule set the binding; `null-binding`: no rule did,
   * the decision is final; `skipped`: the binding of this manip type was made earlier (or the
   * packet is not the first of its connection), nat rules are not consulted; `apply`: the binding
   * rewrote this packet.
   */
  readonly action: 'REDIRECT' | 'DNAT' | 'SNAT' | 'MASQUERADE' | 'null-binding' | 'skipped' | 'apply';
  readonly from: string;
  readonly to: string;
  readonly reason: string | null;
}

/** A non-terminal target's effect (MARK, CONNMARK, CT, NOTRACK, LOG, TRACE, TPROXY…). */
export interface EffectEvent extends TraceEventBase, RulePosition {
  readonly type: 'effect';
  readonly target: string;
  readonly detail: string;
}

/** The socket lookup at local delivery. */
export interface SocketEvent extends TraceEventBase {
  readonly type: 'socket';
  /** `delivered` to a socket, or `refused` (no socket: TCP RST / ICMP port unreachable). */
  readonly result: 'delivered' | 'refused';
  readonly address: string;
  readonly port: number;
  /** What received it: `listener 0.0.0.0:4140 uid 2102`, `connection`, `tproxy`… */
  readonly socket: string | null;
}

/** The packet left through an interface other than `lo`. */
export interface WireEvent extends TraceEventBase {
  readonly type: 'wire';
  readonly dev: string;
  readonly src: string;
  readonly sport: number;
  readonly dst: string;
  readonly dport: number;
}

/** The packet left through `lo` and comes back in on it. */
export interface LoopbackEvent extends TraceEventBase {
  readonly type: 'loopback';
}

/** The packet's journey ended without delivery. */
export interface DropEvent extends TraceEventBase {
  readonly type: 'drop';
  readonly hook: HookName | null;
  readonly reason: string;
  /** A REJECT's answer (`tcp-reset`, `icmp-port-unreachable`…), when the drop was a REJECT. */
  readonly reject: string | null;
}

/** One step of a packet's journey. */
export type TraceEvent =
  | PacketEvent
  | RouteEvent
  | RerouteEvent
  | TableEvent
  | RuleEvent
  | ReturnEvent
  | PolicyEvent
  | AssumedEvent
  | VerdictEvent
  | ConntrackEvent
  | NatEvent
  | EffectEvent
  | SocketEvent
  | WireEvent
  | LoopbackEvent
  | DropEvent;

/** The kinds of {@link TraceEvent}. */
export type TraceEventType = TraceEvent['type'];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event as the engine builds it, before the recorder stamps the packet on it. */
export type TraceEventInput = DistributiveOmit<TraceEvent, 'packet' | 'label'>;

/** Where a recorder with a sink sends its events instead of keeping them. @internal */
export interface TraceSink {
  event(e: TraceEvent): void;
}

/**
 * Collects events. The engine holds `null` instead of a recorder when tracing is off, so the hot
 * path pays one comparison. A recorder with a sink hands each event on as it comes and keeps
 * none (a batch worker packs them so: see `trace-pack.ts`).
 * @internal
 */
export class TraceRecorder {
  readonly events: TraceEvent[] = [];
  private readonly sink: TraceSink | null;
  packet = 0;
  label = 'PACKET';
  /** `rule` and `return` events kept so far, against {@link MAX_TRACE_RULE_EVENTS}. */
  private ruleEvents = 0;
  /** `rule` and `return` events left out past {@link MAX_TRACE_RULE_EVENTS}. */
  omitted = 0;

  constructor(sink: TraceSink | null = null) {
    this.sink = sink;
  }

  /**
   * Appends an event. Callers stamp it with {@link packet} and {@link label} themselves, first,
   * as one object literal: copying it here cost more than the rest of a traced connection.
   * Past {@link MAX_TRACE_RULE_EVENTS} rule-level events, those are counted instead of kept (a
   * rule set of a million jumps would otherwise make a trace of gigabytes); hooks, verdicts,
   * conntrack, NAT and routing events are always kept.
   */
  push(event: TraceEvent): void {
    if (event.type === 'rule' || event.type === 'return') {
      if (this.ruleEvents >= MAX_TRACE_RULE_EVENTS) {
        this.omitted++;
        return;
      }
      this.ruleEvents++;
    }
    if (this.sink !== null) this.sink.event(event);
    else this.events.push(event);
  }
}
