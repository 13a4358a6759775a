/**
 * The fast evaluator: `ipt_do_table` over a {@link LoweredRuleset}, step for step with the kernel
 * (net/ipv4/netfilter/ip_tables.c). Per chain, rules in order; a rule matches when the base IP
 * match and every extension match hold; `-j` pushes a return point, `-g` does not; RETURN pops,
 * and an empty stack means the built-in chain's policy (`underflow`).
 *
 * @module
 */
import { HOOK_BY_INDEX } from '../state/constants.js';
import type { DispatchRun, LoweredChain, LoweredRule, LoweredRuleset, LoweredTable } from './iptables-lower.js';
import { VERDICT, dispatchHash } from './iptables-lower.js';
import type { PacketState } from '../state/packet-state.js';
import { NF_DROP, XT_CONTINUE, applyTarget } from './targets.js';
import type { TargetHost, TargetSite } from './targets.js';
import type { TraceRecorder } from '../trace/events.js';

/** Something that runs one table at one hook. @internal */
export interface TableEvaluator {
  /** Whether the rule set has this table (by index in `TABLE_NAMES`). */
  hasTable(table: number): boolean;
  /** Packet counters of the rules and policies that counted something, in rule-set order. */
  counters(): RuleCounter[];
  /** Runs the table's chain for the hook; returns NF_ACCEPT or NF_DROP. */
  doTable(table: number, hook: number, p: PacketState, host: TargetHost, tr: TraceRecorder | null): number;
}

/** `(addr ^ base) & mask == 0`: one word for IPv4 (kept in plain fields), four for IPv6. */
function addressHit(addr: ArrayLike<number>, base: ArrayLike<number>, mask: ArrayLike<number>, base0: number, mask0: number, v4: boolean): boolean {
  if (v4) return ((addr[0]! ^ base0) & mask0) === 0;
  for (let i = 0; i < 4; i++) if (((addr[i]! ^ base[i]!) & mask[i]!) !== 0) return false;
  return true;
}

/**
 * `ip_packet_match` / `ip6_packet_match`: addresses with masks, interfaces, protocol, fragment.
 * @internal
 */
export function ipPacketMatch(r: LoweredRule, p: PacketState, v4: boolean): boolean {
  if (r.hasSrc && addressHit(p.src, r.src, r.smsk, r.src0, r.smsk0, v4) === r.invSrc) return false;
  if (r.hasDst && addressHit(p.dst, r.dst, r.dmsk, r.dst0, r.dmsk0, v4) === r.invDst) return false;
  if (r.inIf !== null && (r.inIf[p.inIndex] === 1) === r.invIn) return false;
  if (r.outIf !== null && (r.outIf[p.outIndex] === 1) === r.invOut) return false;
  if (r.proto !== 0 && (p.proto === r.proto) === r.invProto) return false;
  if (r.frag !== 0 && p.fragment !== (r.frag === 1)) return false;
  if (r.l4 !== 0) {
    // xt_tcpudp.c: tcp_mt / udp_mt (a fragment never matches), port_match: (min <= port <= max) ^ invert
    if (p.proto !== r.l4 || p.fragment) return false;
    if ((p.sport >= r.spMin && p.sport <= r.spMax) === r.spInv) return false;
    if ((p.dport >= r.dpMin && p.dport <= r.dpMax) === r.dpInv) return false;
  }
  return true;
}

/**
 * The first rule at or after `i` in a dispatch run that the packet can match (its key's bucket,
 * in rule order), or the run's end.
 * @internal
 */
export function nextCandidate(run: DispatchRun, i: number, p: PacketState): number {
  const n = p.family === 4 ? 1 : 4;
  const b = dispatchHash(p.proto, p.dport, run.byDst ? p.dst : null, n) & run.mask;
  const rules = run.bucketRules;
  const last = run.bucketStart[b + 1]!;
  for (let k = run.bucketStart[b]!; k < last; k++) {
    const r = rules[k]!;
    if (r >= i) return r;
  }
  return run.end;
}

function extensionMatch(r: LoweredRule, p: PacketState, tr: TraceRecorder | null, t: LoweredTable, chain: string): boolean {
  const ms = r.matches;
  if (tr === null || !r.anyAssumed) {
    for (let i = 0; i < ms.length; i++) if (!ms[i]!(p)) return false;
    return true;
  }
  for (let i = 0; i < ms.length; i++) {
    const ok = ms[i]!(p);
    const name = r.assumed[i];
    if (name !== null && name !== undefined) {
      tr.push({ packet: tr.packet, label: tr.label, type: 'assumed', hook: p.hook, table: t.name, chain, rule: r.number, match: name, result: ok, assumption: r.assumptions[i] ?? null });
    }
    if (!ok) return false;
  }
  return true;
}

/**
 * The counters the fast evaluator bumped while a log was set, one item per bump: the counters'
 * array and the slot in it (a rule's or a policy's). @internal
 */
export interface CounterLog {
  readonly counts: Float64Array[];
  readonly slots: number[];
}

/** While not null, every counter {@link doLoweredTable} bumps is also listed here (the outcome cache's capture). */
let counterLog: CounterLog | null = null;

/** Starts (a log) or stops (null) listing the counters the fast evaluator bumps. @internal */
export function logCounters(log: CounterLog | null): void {
  counterLog = log;
}

/** A rule matched, or (a chain's slot) a built-in chain's policy decided: its counter, and the log's. */
function count(counts: Float64Array, slot: number): void {
  counts[slot]!++;
  if (counterLog !== null) {
    counterLog.counts.push(counts);
    counterLog.slots.push(slot);
  }
}

/** Where a target fires; one reused instance per evaluator. @internal */
export class Site implements TargetSite {
  hook = HOOK_BY_INDEX[0]!;
  table: TargetSite['table'] = 'raw';
  chain = '';
  rule = 0;
  name = '';
}

/** Runs one lowered table (the fast path), counting into `counts` (indexed by the rules' and chains' slots). @internal */
export function doLoweredTable(t: LoweredTable, hook: number, p: PacketState, host: TargetHost, tr: TraceRecorder | null, site: Site, counts: Float64Array): number {
  const entry = t.hookEntry[hook]!;
  if (entry < 0) return 1;
  const chains = t.chains;
  const jumpStack = t.jumpStack;
  const v4 = p.family === 4;
  let chainIdx = entry;
  let chain = chains[entry]!;
  let i = 0;
  let stackidx = 0;
  for (;;) {
    const rules = chain.rules;
    if (chain.runAt !== null) {
      // Skip, through the dispatch index, the rules of a run that cannot match.
      while (i < rules.length) {
        const run = chain.runAt[i]!;
        if (run < 0) break;
        const dr = chain.runs[run]!;
        const next = nextCandidate(dr, i, p);
        if (next === i) break;
        if (dr.skipped !== undefined) dr.skipped(i, next, p);
        i = next;
      }
    }
    if (i >= rules.length) {
      if (chain.builtin) {
        count(counts, chain.id);
        if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook: p.hook, table: t.name, chain: chain.name, rule: rules.length + 1, policy: chain.policyName });
        return chain.policy;
      }
      // The end of a user chain is an unconditional RETURN (TRACE says `return`).
      if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'return', hook: p.hook, table: t.name, chain: chain.name, rule: rules.length + 1 });
      if (stackidx === 0) {
        // underflow: the hook's built-in chain policy
        const b = chains[entry]!;
        count(counts, b.id);
        if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook: p.hook, table: t.name, chain: b.name, rule: b.rules.length + 1, policy: b.policyName });
        return b.policy;
      }
      stackidx--;
      chainIdx = jumpStack[stackidx * 2]!;
      i = jumpStack[stackidx * 2 + 1]!;
      chain = chains[chainIdx]!;
      continue;
    }
    const r = rules[i]!;
    if (!ipPacketMatch(r, p, v4) || !extensionMatch(r, p, tr, t, chain.name)) {
      i++;
      continue;
    }
    count(counts, r.id);
    if (tr !== null) {
      tr.push({
        packet: tr.packet, label: tr.label, type: 'rule', hook: p.hook, table: t.name, chain: chain.name, rule: r.number,
        target: r.targetName, action: r.action, text: r.text, comment: r.comment, span: r.span,
      });
    }
    switch (r.verdict) {
      case VERDICT.CONTINUE:
        i++;
        continue;
      case VERDICT.ACCEPT:
        return 1;
      case VERDICT.DROP:
        return NF_DROP;
      case VERDICT.RETURN:
        if (stackidx === 0) {
          const b = chains[entry]!;
          count(counts, b.id);
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook: p.hook, table: t.name, chain: b.name, rule: b.rules.length + 1, policy: b.policyName });
          return b.policy;
        }
        stackidx--;
        chainIdx = jumpStack[stackidx * 2]!;
        i = jumpStack[stackidx * 2 + 1]!;
        chain = chains[chainIdx]!;
        continue;
      case VERDICT.JUMP:
        if (stackidx >= t.stackSize) {
          // ip_tables.c: jump stack overflow is a DROP
          p.dropReason = 'jump stack overflow';
          return NF_DROP;
        }
        jumpStack[stackidx * 2] = chainIdx;
        jumpStack[stackidx * 2 + 1] = i + 1;
        stackidx++;
        chainIdx = r.jumpTo;
        chain = chains[chainIdx]!;
        i = 0;
        continue;
      case VERDICT.GOTO:
        // ip_tables.c: IPT_F_GOTO does not push a return point
        chainIdx = r.jumpTo;
        chain = chains[chainIdx]!;
        i = 0;
        continue;
      default: {
        site.hook = p.hook;
        site.table = t.name;
        site.chain = chain.name;
        site.rule = r.number;
        site.name = r.targetName;
        const v = applyTarget(r.ext, r.extOptions, p, host, tr, site);
        if (v === XT_CONTINUE) {
          i++;
          continue;
        }
        return v;
      }
    }
  }
}

/** A rule's (or, with `rule` = length + 1, a policy's) packet counter. */
export interface RuleCounter {
  readonly table: string;
  readonly chain: string;
  /** 1-based; the chain's length + 1 for its policy. */
  readonly rule: number;
  readonly packets: number;
}

/**
 * The lowered rule set as a {@link TableEvaluator}, with the namespace's counters: the program
 * itself may be shared by every namespace built from the same rules. @internal
 */
export class LoweredEvaluator implements TableEvaluator {
  private readonly site = new Site();
  readonly program: LoweredRuleset;
  /** Packets per counter slot (see {@link LoweredRule.id}, {@link LoweredChain.id}). */
  readonly counts: Float64Array;
  constructor(program: LoweredRuleset) {
    this.program = program;
    this.counts = new Float64Array(program.slots);
  }

  hasTable(table: number): boolean {
    return this.program.tables[table] !== null;
  }

  counters(): RuleCounter[] {
    const out: RuleCounter[] = [];
    // In rule-set order, as the reference interpreter (and iptables -L) lists them.
    for (const i of this.program.order) {
      const t = this.program.tables[i];
      if (t === undefined || t === null) continue;
      for (const c of t.chains) {
        for (const r of c.rules) if (this.counts[r.id]! > 0) out.push({ table: t.name, chain: c.name, rule: r.number, packets: this.counts[r.id]! });
        if (c.builtin && this.counts[c.id]! > 0) out.push({ table: t.name, chain: c.name, rule: c.rules.length + 1, packets: this.counts[c.id]! });
      }
    }
    return out;
  }

  doTable(table: number, hook: number, p: PacketState, host: TargetHost, tr: TraceRecorder | null): number {
    const t = this.program.tables[table];
    if (t === undefined || t === null) return 1;
    return doLoweredTable(t, hook, p, host, tr, this.site, this.counts);
  }
}
