/**
 * A trace as a sequence diagram: the two ends of the exchange (who sent the first packet, and
 * whoever answered or received it) and, between them, the namespace's hooks. Each packet is one
 * message from its sender through the hooks it crossed to where it ended, with what decided at
 * each hook (the tree's ★ rules and policies), the NAT it met, and how it ended.
 *
 * @module
 */
import type { TraceEvent } from '../engine/trace/events.js';
import type { Span } from '../model/types.js';
import { decidingEvents, describeEvent, endpoint } from '../trace/render.js';

/** Something that happened to a packet at one hook. */
export interface SequenceNote {
  /** The hook (`OUTPUT`), or `route`, `lo`, the device it left on. */
  readonly at: string;
  readonly text: string;
  /** A deciding rule or policy (★ in the tree). */
  readonly deciding: boolean;
  readonly span: Span | null;
  /** Index of the event in the trace. */
  readonly event: number;
}

/** One packet of the exchange. */
export interface SequenceMessage {
  readonly packet: number;
  /** `SYN 10.0.0.2:49142 → 10.96.0.10:80`. */
  readonly label: string;
  /** Which end sent it. */
  readonly from: 'initiator' | 'responder';
  /** The hooks it crossed, in order (a hook crossed twice, through lo, is listed twice). */
  readonly hooks: readonly string[];
  readonly notes: readonly SequenceNote[];
  /** How its journey ended. */
  readonly end: 'delivered' | 'refused' | 'dropped' | 'left' | 'none';
  readonly endText: string;
}

/** The whole diagram. */
export interface SequenceDiagram {
  /** The first packet's sender. */
  readonly initiator: string;
  /** Where the first packet ended: the socket it reached, the address it left for. */
  readonly responder: string;
  /** Every hook any packet crossed, in the order they were first crossed. */
  readonly hooks: readonly string[];
  readonly messages: readonly SequenceMessage[];
}

/**
 * Builds the sequence diagram of a trace.
 *
 * @example
 * ```ts
 * const d = traceSequence(ns.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }).trace!);
 * d.messages.map((m) => m.end); // ['delivered', 'delivered', 'delivered']
 * ```
 */
export function traceSequence(trace: readonly TraceEvent[]): SequenceDiagram {
  const deciding = decidingEvents(trace);
  const messages: { packet: number; label: string; from: 'initiator' | 'responder'; hooks: string[]; notes: SequenceNote[]; end: SequenceMessage['end']; endText: string }[] = [];
  let first: { src: string; sport: number } | null = null;
  let initiator = '';
  let responder = '';
  const seen: string[] = [];
  for (let i = 0; i < trace.length; i++) {
    const e = trace[i]!;
    if (e.type === 'packet') {
      const from = first === null || (e.src === first.src && e.sport === first.sport) ? 'initiator' : 'responder';
      if (first === null) {
        first = { src: e.src, sport: e.sport };
        initiator = `${endpoint(e.src, e.sport, e.proto)}${e.origin === 'local' ? (e.uid !== null ? ` (uid ${e.uid})` : ' (kernel)') : ` (via ${e.iface})`}`;
      }
      messages.push({ packet: e.packet, label: `${e.label} ${endpoint(e.src, e.sport, e.proto)} → ${endpoint(e.dst, e.dport, e.proto)}`, from, hooks: [], notes: [], end: 'none', endText: '' });
      continue;
    }
    const m = messages[messages.length - 1];
    if (!m) continue;
    const note = (at: string, text: string, isDeciding = false, span: Span | null = null): void => {
      m.notes.push({ at, text, deciding: isDeciding, span, event: i });
    };
    switch (e.type) {
      case 'table':
        if (m.hooks[m.hooks.length - 1] !== e.hook) m.hooks.push(e.hook);
        if (!seen.includes(e.hook)) seen.push(e.hook);
        break;
      case 'conntrack':
        if (m.hooks[m.hooks.length - 1] !== e.hook) m.hooks.push(e.hook);
        if (!seen.includes(e.hook)) seen.push(e.hook);
        break;
      case 'rule':
      case 'policy':
        if (deciding.has(i)) note(e.hook, `${e.table} ${describeEvent(e)}`, true, e.type === 'rule' ? e.span : null);
        break;
      case 'nat':
        if (e.action !== 'skipped' && e.action !== 'null-binding') note(e.hook, describeEvent(e));
        break;
      case 'effect':
        note(e.hook, describeEvent(e));
        break;
      case 'loopback':
        note('lo', describeEvent(e));
        break;
      case 'socket':
        m.end = e.result === 'delivered' ? 'delivered' : 'refused';
        m.endText = describeEvent(e);
        if (m.packet === messages[0]!.packet && e.result === 'delivered') responder = `${endpoint(e.address, e.port, 'tcp')}${e.socket ? ` (${e.socket})` : ''}`;
        break;
      case 'wire':
        m.end = 'left';
        m.endText = describeEvent(e);
        if (m.packet === messages[0]!.packet) responder = `${endpoint(e.dst, e.dport, 'tcp')} (out ${e.dev})`;
        break;
      case 'drop':
        m.end = 'dropped';
        m.endText = describeEvent(e);
        break;
      default:
        break;
    }
  }
  if (responder === '' && messages.length > 0) responder = messages[0]!.label.replace(/^.* → /, '');
  return { initiator, responder, hooks: seen, messages };
}
