/**
 * Reading a connection's trace for the rule that decided where it went: the last rule of the
 * first packet at the hook where the mesh's rules live, with the jumps that led to it.
 *
 * @module
 */
import type { TraceEvent } from '../engine/trace/events.js';
import type { HopRule, MeshPod } from './types.js';

/** The hook whose nat rules decide a connection: OUTPUT for a local process, PREROUTING for an arrival. @internal */
export type EntryHook = 'OUTPUT' | 'PREROUTING';

const BUILTIN = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);
/** Targets after which the chain goes on (`XT_CONTINUE`). */
const NON_TERMINAL = new Set(['MARK', 'CONNMARK', 'LOG', 'NFLOG', 'TRACE', 'CT', 'NOTRACK']);

/**
 * The deciding rule of the first packet at `hook`: a DROP/REJECT anywhere wins; otherwise the last
 * rule with a verdict or target (not a jump) in the nat table (mangle when TPROXY decided), or
 * the end of a user chain, or the policy. `null` when the packet never reached the hook's nat table
 * (no nat rules at all).
 * @internal
 */
export function decidingRule(trace: readonly TraceEvent[] | undefined, hook: EntryHook, pod: MeshPod, family: 4 | 6): HopRule | null {
  if (!trace) return null;
  const first = trace.filter((e) => e.packet === 0);
  for (const e of first) {
    if (e.type === 'rule' && (e.target === 'DROP' || e.target === 'REJECT')) return toHopRule(e, [], pod, family);
  }
  const tproxy = first.some((e) => e.type === 'rule' && e.hook === hook && e.table === 'mangle' && e.target === 'TPROXY');
  const table = tproxy ? 'mangle' : 'nat';
  // nft tables are labelled `FAMILY NAME` (`inet istio-ambient-nat`): their nat chains count as nat.
  const inTable = (t: string): boolean => t === table || (table === 'nat' && / \S*nat$/.test(t));
  const events = first.filter((e) => (e.type === 'rule' || e.type === 'return' || e.type === 'policy') && e.hook === hook && inTable(e.table));
  if (events.length === 0) return null;
  const stack: { chain: string; rule: number; target: string }[] = [];
  let decided: HopRule | null = null;
  let fellOff: string | null = null;
  for (const e of events) {
    if (e.type === 'rule') {
      if (e.action === 'jump' || e.action === 'goto') {
        if (e.action === 'goto') stack.pop();
        stack.push({ chain: e.chain, rule: e.rule, target: e.target });
        continue;
      }
      if (e.action === 'none' || NON_TERMINAL.has(e.target)) continue;
      decided = toHopRule(e, stack.map((s) => `${s.chain} rule ${s.rule}`), pod, family);
      if (e.target === 'RETURN') stack.pop();
      else break;
    } else if (e.type === 'return') {
      if (decided === null) fellOff = e.chain;
      stack.pop();
    } else if (e.type === 'policy' && decided === null) {
      const via = fellOff ? [`end of ${fellOff}`] : [];
      decided = { hook: e.hook, table: e.table, chain: e.chain, rule: e.rule, event: 'policy', target: e.policy, comment: null, text: null, via, why: fellOff ? `no rule of ${fellOff} matched` : `no rule of ${table} ${e.chain} matched`, setting: null };
    }
  }
  return decided;
}

function toHopRule(e: Extract<TraceEvent, { type: 'rule' }>, via: string[], pod: MeshPod, family: 4 | 6): HopRule {
  const note = pod.ruleNotes.find((n) => n.family === family && n.table === e.table && n.chain === e.chain && n.rule === e.rule);
  return {
    hook: e.hook,
    table: e.table,
    chain: e.chain,
    rule: e.rule,
    event: 'rule',
    target: e.target,
    comment: e.comment,
    text: note?.text ?? e.text,
    via,
    // nft rules have no notes here: their text says what they do.
    why: note?.why ?? (e.table.includes(' ') && e.text ? e.text : null),
    setting: note?.setting ?? null,
  };
}

/** `PROXY_INIT_OUTPUT rule 4 REDIRECT "proxy-init/…"`, with the user-chain jumps that led there. @internal */
export function formatHopRule(r: HopRule): string {
  if (r.event === 'policy') {
    const chain = r.via[0]?.startsWith('end of ') ? r.via[0].slice('end of '.length) : null;
    return chain ? `no rule of ${chain} matched (${r.table} ${r.chain} policy ${r.target})` : `no rule matched (${r.table} ${r.chain} policy ${r.target})`;
  }
  const via = r.via.filter((v) => !BUILTIN.has(v.split(' ')[0]!));
  const head = `${r.chain} rule ${r.rule} ${r.target}${r.comment ? ` "${r.comment}"` : ''}`;
  return via.length > 0 ? `${via.join(' → ')} → ${head}` : head;
}

/** Where the first packet left the pod (`wire` event), if it did. @internal */
export function departure(trace: readonly TraceEvent[] | undefined): { src: string; sport: number; dst: string; dport: number; dev: string } | null {
  const e = trace?.find((x) => x.packet === 0 && x.type === 'wire');
  return e && e.type === 'wire' ? { src: e.src, sport: e.sport, dst: e.dst, dport: e.dport, dev: e.dev } : null;
}

/** The source the first packet was sent from. @internal */
export function origin(trace: readonly TraceEvent[] | undefined): { src: string; sport: number } | null {
  const e = trace?.find((x) => x.packet === 0 && x.type === 'packet');
  return e && e.type === 'packet' ? { src: e.src, sport: e.sport } : null;
}

/**
 * The listening socket that accepted the first packet, from the trace: with TPROXY the accepted
 * socket keeps the original addresses, so its local port is not the listener's.
 * @internal
 */
export function acceptingListener(trace: readonly TraceEvent[] | undefined): { address: string | null; port: number; transparent: boolean } | null {
  const e = trace?.find((x) => x.packet === 0 && x.type === 'socket' && x.result === 'delivered');
  if (!e || e.type !== 'socket' || e.socket === null) return null;
  const m = /listener \[?([0-9a-fA-F:.]+)\]?:(\d+)/.exec(e.socket);
  if (!m) return null;
  const wildcard = m[1] === '0.0.0.0' || m[1] === '::';
  return { address: wildcard ? null : m[1]!, port: Number(m[2]), transparent: e.socket.startsWith('transparent') };
}
