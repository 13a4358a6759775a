/**
 * The effect of each extension target the engine knows (`struct xt_target`'s `target` function),
 * shared by the lowered evaluator and the reference interpreter so both apply exactly the same
 * semantics.
 *
 * @module
 */
import type { HookName, TableName } from '../../model/types.js';
import { CT_STATE } from '../../model/packet.js';
import type {
  ConnmarkOptions,
  CtOptions,
  DnatOptions,
  MarkOptions,
  MasqueradeOptions,
  PortRange,
  RedirectOptions,
  RejectOptions,
  SnatOptions,
  TproxyOptions,
} from '../../iptables/extensions/target-options.js';
import type { NetmapOptions } from '../../iptables/extensions/target/NETMAP.js';
import type { NfqueueOptions } from '../../iptables/extensions/target/NFQUEUE.js';
import type { TosTargetOptions } from '../../iptables/extensions/target/TOS.js';
import type { DscpTargetOptions } from '../../iptables/extensions/target/DSCP.js';
import type { TtlTargetOptions } from '../../iptables/extensions/target/TTL.js';
import { NF_NAT_MANIP_DST, NF_NAT_MANIP_SRC } from '../state/conntrack.js';
import type { PacketState, SocketRecord } from '../state/packet-state.js';
import type { RuntimeIpset, RuntimeRateEstimator } from '../../iptables/extensions/types.js';
import type { SetTargetOptions } from '../../iptables/extensions/target/SET.js';
import type { TraceRecorder } from '../trace/events.js';
import { hmarkHasPorts, hmarkValue } from '../../iptables/extensions/target/HMARK.js';
import type { HmarkOptions, HmarkTuple } from '../../iptables/extensions/target/HMARK.js';
import type { RateestTargetOptions } from '../../iptables/extensions/target/RATEEST.js';

/** `XT_CONTINUE`: the rule's target lets traversal go on. */
export const XT_CONTINUE = -1;
/** `NF_DROP`. */
export const NF_DROP = 0;
/** `NF_ACCEPT`. */
export const NF_ACCEPT = 1;

/** Extension targets with an engine effect, by opcode. */
export const EXT = {
  OTHER_CONTINUE: 0,
  OTHER_TERMINAL: 1,
  REJECT: 2,
  REDIRECT: 3,
  DNAT: 4,
  SNAT: 5,
  MASQUERADE: 6,
  MARK: 7,
  CONNMARK: 8,
  TPROXY: 9,
  CT: 10,
  NOTRACK: 11,
  LOG: 12,
  TRACE: 13,
  NFQUEUE: 14,
  NETMAP: 15,
  TTL: 16,
  TOS: 17,
  DSCP: 18,
  SET: 19,
  HMARK: 20,
  RATEEST: 21,
} as const;

const EXT_BY_NAME: Readonly<Record<string, number>> = {
  REJECT: EXT.REJECT,
  REDIRECT: EXT.REDIRECT,
  DNAT: EXT.DNAT,
  SNAT: EXT.SNAT,
  MASQUERADE: EXT.MASQUERADE,
  MARK: EXT.MARK,
  CONNMARK: EXT.CONNMARK,
  TPROXY: EXT.TPROXY,
  CT: EXT.CT,
  NOTRACK: EXT.NOTRACK,
  LOG: EXT.LOG,
  TRACE: EXT.TRACE,
  NFQUEUE: EXT.NFQUEUE,
  NETMAP: EXT.NETMAP,
  TTL: EXT.TTL,
  HL: EXT.TTL,
  TOS: EXT.TOS,
  DSCP: EXT.DSCP,
  SET: EXT.SET,
  HMARK: EXT.HMARK,
  RATEEST: EXT.RATEEST,
};

/** The opcode of a target name; targets the engine does not simulate continue or end the walk. */
export function extOpcode(name: string, terminal: boolean): number {
  const op = EXT_BY_NAME[name];
  if (op !== undefined) return op;
  return terminal ? EXT.OTHER_TERMINAL : EXT.OTHER_CONTINUE;
}

/** What targets need from the namespace. @internal */
export interface TargetHost {
  /** `nf_nat_setup_info` for the packet's connection; returns NF_ACCEPT or NF_DROP. */
  natSetup(p: PacketState, manip: number, addr: readonly number[] | null, ports: PortRange | null, by: string, tr: TraceRecorder | null): number;
  /** `nf_nat_redirect_ipv4/6`: 127.0.0.1/::1 in OUTPUT, else the in-device's first address. */
  redirectAddress(p: PacketState): readonly number[] | null;
  /** `nf_nat_masquerade_ipv4/6`: the source address for the out device. */
  masqueradeAddress(p: PacketState): readonly number[] | null;
  /** `tproxy_tg4/6`: the socket TPROXY would assign. */
  tproxyLookup(p: PacketState, onIp: readonly number[] | undefined, onPort: number): SocketRecord | null;
  /** The namespace's ipsets, which `SET` changes. */
  readonly ipsets?: ReadonlyMap<string, RuntimeIpset>;
  /** The namespace's rate estimators, which `RATEEST` feeds, by name. */
  readonly rateEstimators?: ReadonlyMap<string, RuntimeRateEstimator>;
  /** The program bound to the namespace's queues (`NFQUEUE`, nft `queue`), if any. */
  readonly queueReader?: QueueReader | null;
}

/** A packet handed to a userspace program through a queue, as the program reads it. */
export interface QueuedPacket {
  /** The queue it was sent to (the first of a range). */
  readonly queue: number;
  readonly hook: HookName;
  readonly family: 4 | 6;
  /** IP protocol number. */
  readonly proto: number;
  readonly src: readonly number[];
  readonly sport: number;
  readonly dst: readonly number[];
  readonly dport: number;
  readonly inIface: string | null;
  readonly outIface: string | null;
  /** Whether the packet opens its connection (conntrack state NEW). */
  readonly isNew: boolean;
}

/** A queue program's answer: its verdict, who answered and why, and a conntrack label it sets on accept. */
export interface QueueAnswer {
  readonly verdict: 'accept' | 'drop';
  /** Who answered (`kube-network-policies (the reference evaluator)`). */
  readonly by: string;
  readonly why?: string;
  /** A conntrack label the verdict sets on the packet's connection (accept only). */
  readonly label?: number;
}

/**
 * A userspace program reading a namespace's queues: its answer for a packet, or null when it does
 * not read that queue (the packet then meets an unbound queue: dropped, or accepted with bypass).
 */
export type QueueReader = (packet: QueuedPacket) => QueueAnswer | null;

/** ICMP types whose body carries the packet they answer (`get_inner_hdr` in xt_HMARK.c). */
const ICMP_ERRORS: ReadonlySet<number> = new Set([3, 4, 5, 11, 12]);

/** Where the target fired, for trace events. */
export interface TargetSite {
  readonly hook: HookName;
  readonly table: TableName;
  readonly chain: string;
  readonly rule: number;
  readonly name: string;
}

function hex(n: number): string {
  return `0x${(n >>> 0).toString(16)}`;
}

function effect(tr: TraceRecorder | null, site: TargetSite, detail: string): void {
  if (tr !== null) {
    tr.push({ packet: tr.packet, label: tr.label, type: 'effect', hook: site.hook, table: site.table, chain: site.chain, rule: site.rule, target: site.name, detail });
  }
}

function notrack(p: PacketState, tr: TraceRecorder | null, site: TargetSite): void {
  // xt_ct_target / notrack_tg: "Previously seen (loopback)? Ignore." (any skb->_nfct: an entry,
  // untracked, or a template an earlier CT rule attached).
  if (p.ctEntry >= 0 || p.untracked || p.ctTemplate || p.ctAttachedNone) {
    effect(tr, site, p.ctTemplate ? 'ignored: an earlier CT rule attached its template' : p.ctAttachedNone ? 'ignored: the answer to an untracked packet carries its RELATED mark' : 'ignored: the packet already has a conntrack entry');
    return;
  }
  p.untracked = true;
  effect(tr, site, 'untracked');
}

/**
 * Applies an extension target. Returns {@link XT_CONTINUE}, {@link NF_ACCEPT} or {@link NF_DROP}.
 */
export function applyTarget(op: number, options: unknown, p: PacketState, host: TargetHost, tr: TraceRecorder | null, site: TargetSite): number {
  switch (op) {
    case EXT.MARK: {
      const o = options as MarkOptions;
      const before = p.mark;
      p.mark = ((p.mark & ~o.mask) ^ o.value) >>> 0;
      effect(tr, site, `mark ${hex(before)} → ${hex(p.mark)}`);
      return XT_CONTINUE;
    }
    case EXT.CONNMARK: {
      const o = options as ConnmarkOptions;
      const ct = p.ctEntry;
      if (ct < 0) {
        effect(tr, site, 'no conntrack entry: nothing to do');
        return XT_CONTINUE;
      }
      const ctmark = p.ctTable!.mark;
      switch (o.mode) {
        case 'set':
          ctmark[ct] = ((ctmark[ct]! & ~o.mask) ^ o.value) >>> 0;
          effect(tr, site, `ctmark → ${hex(ctmark[ct]!)}`);
          break;
        case 'save':
          ctmark[ct] = ((ctmark[ct]! & ~o.ctmask) ^ (p.mark & o.nfmask)) >>> 0;
          effect(tr, site, `ctmark ← mark: ${hex(ctmark[ct]!)}`);
          break;
        case 'restore':
          p.mark = ((p.mark & ~o.nfmask) ^ (ctmark[ct]! & o.ctmask)) >>> 0;
          effect(tr, site, `mark ← ctmark: ${hex(p.mark)}`);
          break;
      }
      return XT_CONTINUE;
    }
    case EXT.CT: {
      const o = options as CtOptions;
      if (o.notrack) notrack(p, tr, site);
      else if (p.ctEntry >= 0 || p.untracked) effect(tr, site, 'ignored: the packet already has a conntrack entry');
      else if (p.ctTemplate) effect(tr, site, 'ignored: an earlier CT rule attached its template');
      else if (p.ctAttachedNone) effect(tr, site, 'ignored: the answer to an untracked packet carries its RELATED mark');
      else {
        p.ctTemplate = true;
        if (o.zone !== undefined) p.zone = o.zone;
        effect(tr, site, o.zone !== undefined ? `zone ${o.zone}` : o.helper !== undefined ? `helper ${o.helper} (not simulated)` : 'template');
      }
      return XT_CONTINUE;
    }
    case EXT.NOTRACK:
      notrack(p, tr, site);
      return XT_CONTINUE;
    case EXT.LOG:
      effect(tr, site, 'logged');
      return XT_CONTINUE;
    case EXT.TRACE:
      effect(tr, site, 'trace on');
      return XT_CONTINUE;
    case EXT.SET: {
      // set_target_v3: add, then delete; the walk continues.
      const o = options as SetTargetOptions;
      for (const [op, operand] of [['add', o.add], ['del', o.del]] as const) {
        if (operand === null) continue;
        const set = host.ipsets?.get(operand.name);
        if (set === undefined || set.family !== p.family || operand.flags.length < set.dimension) continue;
        const src = operand.flags[0] === 'src';
        const sport = operand.flags[1] === 'src';
        const addr = src ? p.src : p.dst;
        if (op === 'add') set.add(addr, p.proto, sport ? p.sport : p.dport);
        else set.del(addr, p.proto, sport ? p.sport : p.dport);
        effect(tr, site, `${op === 'add' ? 'added to' : 'deleted from'} set ${operand.name}`);
      }
      return XT_CONTINUE;
    }
    case EXT.HMARK: {
      // hmark_tg_v4/v6: the packet's header, or with --hmark-tuple ct its entry's tuples
      // (original source and port, reply source and port); no entry: the mark stays.
      const o = options as HmarkOptions;
      let t: HmarkTuple;
      let note = '';
      if (o.ct) {
        const ct = p.ct;
        if (p.ctEntry < 0 || ct === null) {
          effect(tr, site, 'no conntrack entry: mark unchanged');
          return XT_CONTINUE;
        }
        t = { family: p.family, src: ct.origSrc, dst: ct.replySrc, proto: ct.proto, ports: ct.proto === 1 ? null : { sport: ct.origSport, dport: ct.replySport } };
      } else {
        t = { family: p.family, src: p.src, dst: p.dst, proto: p.proto, ports: hmarkHasPorts(p.proto) && !p.fragment ? { sport: p.sport, dport: p.dport } : null };
        if (p.family === 4 && p.proto === 1 && ICMP_ERRORS.has(p.icmpType)) note = ' (assumed: hashed on the ICMP error\'s own header; the kernel hashes the packet it carries)';
      }
      const before = p.mark;
      p.mark = hmarkValue(o, t);
      effect(tr, site, `mark ${hex(before)} → ${hex(p.mark)}${note}`);
      return XT_CONTINUE;
    }
    case EXT.RATEEST: {
      // xt_rateest_tg: the estimator counts the packet's bytes (skb->len) and the packet.
      const o = options as RateestTargetOptions;
      const est = host.rateEstimators?.get(o.name);
      if (est !== undefined) est.add(p.length, p.now ?? 0);
      effect(tr, site, `counted by rate estimator ${o.name}`);
      return XT_CONTINUE;
    }
    case EXT.OTHER_CONTINUE:
      effect(tr, site, 'not simulated; traversal continues');
      return XT_CONTINUE;
    case EXT.OTHER_TERMINAL:
      p.dropReason = `${site.name} (not simulated)`;
      effect(tr, site, 'not simulated; the packet is dropped');
      return NF_DROP;
    case EXT.REJECT: {
      const o = options as RejectOptions;
      p.rejectWith = o.rejectWith ?? 'icmp-port-unreachable';
      p.dropReason = `REJECT --reject-with ${p.rejectWith}`;
      return NF_DROP;
    }
    case EXT.REDIRECT: {
      const o = options as RedirectOptions;
      const addr = host.redirectAddress(p);
      if (addr === null) {
        p.dropReason = 'REDIRECT: the incoming interface has no address';
        return NF_DROP;
      }
      return host.natSetup(p, NF_NAT_MANIP_DST, addr, o.toPorts ?? null, 'REDIRECT', tr);
    }
    case EXT.DNAT: {
      const o = options as DnatOptions;
      return host.natSetup(p, NF_NAT_MANIP_DST, o.to.addrMin ?? null, o.to.ports ?? null, 'DNAT', tr);
    }
    case EXT.SNAT: {
      const o = options as SnatOptions;
      return host.natSetup(p, NF_NAT_MANIP_SRC, o.to.addrMin ?? null, o.to.ports ?? null, 'SNAT', tr);
    }
    case EXT.MASQUERADE: {
      const o = options as MasqueradeOptions;
      const addr = host.masqueradeAddress(p);
      if (addr === null) {
        p.dropReason = 'MASQUERADE: the outgoing interface has no address';
        return NF_DROP;
      }
      return host.natSetup(p, NF_NAT_MANIP_SRC, addr, o.toPorts ?? null, 'MASQUERADE', tr);
    }
    case EXT.TPROXY: {
      const o = options as TproxyOptions;
      const sock = host.tproxyLookup(p, o.onIp, o.onPort);
      if (sock === null) {
        p.dropReason = 'TPROXY: no transparent socket';
        effect(tr, site, 'no transparent socket: drop');
        return NF_DROP;
      }
      p.mark = ((p.mark & ~o.markMask) ^ o.markValue) >>> 0;
      p.assignedSocket = sock;
      effect(tr, site, `socket ${sock.local === null ? '*' : 'bound'}:${sock.localPort} assigned, mark ${hex(p.mark)}`);
      return NF_ACCEPT;
    }
    case EXT.NFQUEUE: {
      // nf_queue with no program bound to the queue: NF_DROP, or with --queue-bypass the
      // packet goes on as if the rule had accepted it.
      const o = options as NfqueueOptions;
      const q = o.total > 1 ? `queues ${o.queue}-${o.queue + o.total - 1}` : `queue ${o.queue}`;
      const answer = host.queueReader?.({
        queue: o.queue, hook: site.hook, family: p.family, proto: p.proto, src: p.src, sport: p.sport, dst: p.dst, dport: p.dport,
        inIface: p.inIface, outIface: p.outIface, isNew: p.ctState === CT_STATE.NEW,
      }) ?? null;
      if (answer !== null) {
        const why = answer.why !== undefined ? ` (${answer.why})` : '';
        if (answer.verdict === 'accept') {
          if (answer.label !== undefined && p.ct !== null && p.ctEntry >= 0) p.ct.addLabels(1n << BigInt(answer.label));
          effect(tr, site, `queued to ${q}; ${answer.by} answered accept${why}${answer.label !== undefined ? `, ct label ${answer.label} set` : ''}`);
          return NF_ACCEPT;
        }
        p.dropReason = `NFQUEUE: queued to ${q}; ${answer.by} answered drop${why}`;
        effect(tr, site, `queued to ${q}; ${answer.by} answered drop${why}`);
        return NF_DROP;
      }
      if (o.bypass) {
        effect(tr, site, `no program reads ${q}: bypassed (accepted)`);
        return NF_ACCEPT;
      }
      p.dropReason = `NFQUEUE: no program reads ${q}`;
      effect(tr, site, `no program reads ${q}: dropped`);
      return NF_DROP;
    }
    case EXT.NETMAP: {
      // netmap_tg4/6: keep the host part, take the network part from --to; the destination
      // where the packet enters (PREROUTING, OUTPUT), the source where it leaves (POSTROUTING, INPUT).
      const o = options as NetmapOptions;
      const dst = site.hook === 'PREROUTING' || site.hook === 'OUTPUT';
      const from = dst ? p.dst : p.src;
      const addr = from.map((w, i) => (((w & ~o.mask[i]!) | o.addr[i]!) >>> 0));
      return host.natSetup(p, dst ? NF_NAT_MANIP_DST : NF_NAT_MANIP_SRC, addr, null, 'NETMAP', tr);
    }
    case EXT.TTL: {
      const o = options as TtlTargetOptions;
      const before = p.ttl;
      p.ttl = o.mode === 'set' ? o.value : o.mode === 'inc' ? Math.min(255, p.ttl + o.value) : Math.max(0, p.ttl - o.value);
      effect(tr, site, `${p.family === 4 ? 'TTL' : 'hop limit'} ${before} → ${p.ttl}`);
      return XT_CONTINUE;
    }
    case EXT.TOS: {
      const o = options as TosTargetOptions;
      const before = p.tos;
      p.tos = ((p.tos & ~o.mask) ^ o.value) & 0xff;
      effect(tr, site, `TOS ${hex(before)} → ${hex(p.tos)}`);
      return XT_CONTINUE;
    }
    case EXT.DSCP: {
      const o = options as DscpTargetOptions;
      p.tos = ((p.tos & 0x03) | (o.dscp << 2)) & 0xff;
      effect(tr, site, `DSCP → ${hex(o.dscp)}`);
      return XT_CONTINUE;
    }
    default:
      return XT_CONTINUE;
  }
}
