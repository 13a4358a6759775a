/**
 * The trace as a nested outline, for views that fold and unfold it (the playground's tree): each
 * packet of the exchange, under it each hook with the tables visited there, under each table the
 * rules in the order they matched, jumps nested under the rule that jumped. The words of every
 * line are the tree renderer's (`describeEvent`), and the deciding rules are the ones it marks ★.
 *
 * @module
 */
import type { TraceEvent } from '../engine/trace/events.js';
import type { Span } from '../model/types.js';
import { expectArgument, expectObjects } from '../model/guard.js';
import { decidingEvents, describeEvent } from './render.js';

/** One line of the outline and what folds under it. */
export interface OutlineNode {
  /** `packet`, `hook`, `table`, or the type of the event the line shows. */
  readonly kind: 'packet' | 'hook' | 'table' | TraceEvent['type'];
  /** The line, as the tree renderer writes it (no colour). */
  readonly text: string;
  /** The rule or policy that decided its table's verdict (the tree's ★). */
  readonly deciding: boolean;
  /** For a rule: its rule text, and where it stands in the rule-set source. */
  readonly rule: string | null;
  readonly span: Span | null;
  /** The index of the event in the trace (-1 for the hook and table headings). */
  readonly event: number;
  readonly children: OutlineNode[];
}

function node(kind: OutlineNode['kind'], text: string, event: number, deciding = false, rule: string | null = null, span: Span | null = null): OutlineNode {
  return { kind, text, deciding, rule, span, event, children: [] };
}

/**
 * Builds the outline of a trace.
 *
 * @example
 * ```ts
 * const outline = traceOutline(ns.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }).trace!);
 * outline[0]!.text; // 'SYN 10.0.0.2:49142 → 10.96.0.10:80  tcp, uid 1000 gid 1000'
 * ```
 */
export function traceOutline(trace: readonly TraceEvent[]): OutlineNode[] {
  expectArgument(trace, 'array', 'trace');
  expectObjects(trace, 'trace');
  const deciding = decidingEvents(trace);
  const roots: OutlineNode[] = [];
  let packet: OutlineNode | null = null;
  let hook: OutlineNode | null = null;
  let table: OutlineNode | null = null;
  // The chains entered in the current table, each with the node its rules go under.
  let chains: { chain: string; under: OutlineNode }[] = [];
  const into = (): OutlineNode[] => (packet ? packet.children : roots);
  const hookNode = (name: string): OutlineNode => {
    if (hook === null || hook.text !== name) {
      hook = node('hook', name, -1);
      into().push(hook);
      table = null;
    }
    return hook;
  };
  for (let i = 0; i < trace.length; i++) {
    const e = trace[i]!;
    const text = describeEvent(e);
    switch (e.type) {
      case 'packet':
        packet = node('packet', text, i);
        roots.push(packet);
        hook = null;
        table = null;
        break;
      case 'table': {
        const h = hookNode(e.hook);
        table = node('table', e.table, i);
        h.children.push(table);
        chains = [{ chain: e.hook, under: table }];
        break;
      }
      case 'rule':
      case 'return':
      case 'policy':
      case 'assumed':
      case 'effect': {
        if (table === null) {
          const h = hookNode(e.hook);
          table = node('table', e.table, -1);
          h.children.push(table);
          chains = [{ chain: e.hook, under: table }];
        }
        let at = chains.length - 1;
        while (at >= 0 && chains[at]!.chain !== e.chain) at--;
        if (at >= 0) chains = chains.slice(0, at + 1);
        else chains.push({ chain: e.chain, under: chains[chains.length - 1]!.under });
        const n = e.type === 'rule' ? node('rule', text, i, deciding.has(i), e.text, e.span) : node(e.type, text, i, deciding.has(i));
        chains[chains.length - 1]!.under.children.push(n);
        if (e.type === 'rule' && e.action === 'jump') chains.push({ chain: e.target, under: n });
        if (e.type === 'rule' && e.action === 'goto') chains[chains.length - 1] = { chain: e.target, under: chains[chains.length - 1]!.under };
        if (e.type === 'return') chains.pop();
        break;
      }
      case 'verdict':
        if (e.verdict === 'DROP') (table ?? hookNode(e.hook)).children.push(node('verdict', `DROP${e.reason ? ` (${e.reason})` : ''}`, i));
        table = null;
        break;
      case 'nat':
      case 'conntrack':
        hookNode(e.hook).children.push(node(e.type, e.type === 'conntrack' ? `conntrack: ${text}` : text, i));
        break;
      case 'route':
      case 'reroute':
        into().push(node(e.type, `${e.type}: ${text}`, i));
        hook = null;
        table = null;
        break;
      default:
        into().push(node(e.type, text, i));
        hook = null;
        table = null;
    }
  }
  return roots;
}
