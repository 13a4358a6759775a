/**
 * Renderers of a cluster connection and a reachability matrix: the single-namespace renderers
 * per visit of a namespace, with the namespace named above each; the matrix as the Kubernetes
 * NetworkPolicy e2e suite prints its truth tables.
 *
 * @module
 */
import { createColors } from 'picocolors';
import type { TraceEvent } from '../engine/trace/events.js';
import { renderTraceText, renderTraceTree } from '../trace/render.js';
import type { RenderOptions, TraceFormat } from '../trace/render.js';
import { expectArgument, expectFields, expectObjects, expectOneOf, expectStrings } from '../model/guard.js';
import type { AllPortsReachResult, ClusterConnectResult, ClusterTraceEvent, ReachResult, ReachWhy } from './cluster.js';

/** One namespace's share of the trace: a packet's stay there. */
interface Stay {
  readonly namespace: string;
  readonly in: string | null;
  readonly out: string | null;
  readonly events: TraceEvent[];
}

/** The trace cut where a packet enters a namespace (each stay starts with its `packet` event). */
function stays(trace: readonly ClusterTraceEvent[]): Stay[] {
  const out: Stay[] = [];
  let cur: { namespace: string; in: string | null; out: string | null; events: TraceEvent[] } | null = null;
  for (const e of trace) {
    if (e.type === 'packet' || cur === null || cur.namespace !== e.namespace) {
      cur = { namespace: e.namespace, in: e.type === 'packet' ? e.iface : null, out: null, events: [] };
      out.push(cur);
    }
    if (e.type === 'wire') cur.out = e.dev;
    const { namespace: _n, ...event } = e;
    cur.events.push(event as TraceEvent);
  }
  return out;
}

function header(s: Stay, c: ReturnType<typeof createColors>): string {
  const where = s.in === null && s.out === null ? '' : ` (${s.in ?? 'made here'} → ${s.out ?? 'ends here'})`;
  return c.bold(`── ${s.namespace}`) + c.dim(where);
}

/**
 * The last line: how the connection ended, and for an accepted one what the destination app
 * sees (its address, `getpeername()`, `SO_ORIGINAL_DST`).
 *
 * @example
 * ```ts
 * renderClusterOutcome(cluster.connect({ from: 'shop/client', to: 'shop/web-2', port: 80 }));
 * // accepted by the listener 0.0.0.0:80 in pod/shop/web-2 at 10.244.2.7:80; the app sees 10.244.1.6:…
 * ```
 */
export function renderClusterOutcome(r: ClusterConnectResult, options?: RenderOptions): string {
  expectArgument(r, 'object', 'result');
  expectFields(r, { outcome: 'string', reason: 'string' }, 'result');
  expectOneOf(r.outcome, ['local', 'remote', 'refused', 'dropped'], 'result.outcome');
  const c = createColors(options?.color ?? false);
  const at = typeof r.address !== 'string' ? '' : r.address.includes(':') ? `[${r.address}]:${r.port}` : `${r.address}:${r.port}`;
  const p = typeof r.policy === 'object' && r.policy !== null ? r.policy : null;
  const policy = p === null ? '' : `; NetworkPolicy ${p.namespace}/${p.name} (${p.direction}${p.rule === null ? ', nothing allows' : `, rule ${p.rule}`})`;
  switch (r.outcome) {
    case 'local':
      return c.green(`${r.reason} at ${at}`) + `; the app sees the connection from ${r.source ?? '?'}${r.originalDestination !== null ? `, SO_ORIGINAL_DST ${r.originalDestination}` : ''}\n`;
    case 'remote':
      return c.green(`left the cluster to ${at}`) + `, from ${r.source ?? '?'} (${r.reason})\n`;
    case 'refused':
    case 'dropped':
      return c.red(r.outcome) + `${errnoText(r.errno ?? r.error)} (${r.reason})${policy}\n`;
  }
}

/** `: ECONNREFUSED`, the errno the client reads, or nothing when the result has none. */
export function errnoText(errno: unknown): string {
  return typeof errno === 'string' ? `: ${errno}` : '';
}

function mermaidText(s: string): string {
  return s.replace(/"/g, '#quot;');
}

function dotText(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** What a stay did, in a few words per step: the deciding rules, NAT, the socket, the drop. */
function stayNodes(s: Stay): string[] {
  const out: string[] = [];
  for (const e of s.events) {
    if (e.type === 'packet') out.push(`${e.label} ${e.src}:${e.sport} → ${e.dst}:${e.dport}`);
    else if (e.type === 'rule' && e.action !== 'jump' && e.action !== 'goto' && e.action !== 'none') out.push(`${e.hook} ${e.table} ${e.chain}:${e.rule} ${e.target}`);
    else if (e.type === 'nat' && e.action !== 'skipped' && e.action !== 'null-binding') out.push(`${e.action === 'apply' ? '' : `${e.action} `}${e.manip === 'DST' ? 'dst' : 'src'} ${e.from} → ${e.to}`);
    else if (e.type === 'socket') out.push(e.result === 'delivered' ? `delivered ${e.address}:${e.port}` : `no socket at ${e.address}:${e.port}`);
    else if (e.type === 'drop') out.push(`dropped: ${e.reason}`);
  }
  return out;
}

/** A flowchart of the stays: one subgraph per namespace, the steps of each stay in order. */
function renderFlow(trace: readonly ClusterTraceEvent[], dot: boolean): string {
  const all = stays(trace);
  const byNs = new Map<string, { id: string; label: string }[]>();
  const edges: [string, string][] = [];
  let prev: string | null = null;
  let n = 0;
  for (const s of all) {
    const list = byNs.get(s.namespace) ?? [];
    byNs.set(s.namespace, list);
    for (const label of stayNodes(s)) {
      const id = `n${n++}`;
      list.push({ id, label });
      // One chain through the exchange: each packet follows the one it answers.
      if (prev !== null) edges.push([prev, id]);
      prev = id;
    }
  }
  const lines: string[] = [];
  let k = 0;
  if (dot) {
    lines.push('digraph cluster {', '  rankdir=LR;', '  node [shape=box, fontname="monospace"];');
    for (const [ns, nodes] of byNs) {
      lines.push(`  subgraph cluster_${k++} {`, `    label=${dotText(ns)};`);
      for (const x of nodes) lines.push(`    ${x.id} [label=${dotText(x.label)}];`);
      lines.push('  }');
    }
    for (const [a, b] of edges) lines.push(`  ${a} -> ${b};`);
    lines.push('}');
  } else {
    lines.push('flowchart LR');
    for (const [ns, nodes] of byNs) {
      lines.push(`  subgraph s${k++}["${mermaidText(ns)}"]`);
      for (const x of nodes) lines.push(`    ${x.id}["${mermaidText(x.label)}"]`);
      lines.push('  end');
    }
    for (const [a, b] of edges) lines.push(`  ${a} --> ${b}`);
  }
  return lines.join('\n') + '\n';
}

/**
 * A cluster connection's trace in one of the trace formats: `tree` and `text` are the
 * single-namespace renderers per stay, each under its namespace's name; `json` the events, each
 * with its namespace; `mermaid` and `dot` a flowchart with one box per namespace.
 *
 * @example
 * ```ts
 * const r = cluster.connect({ from: 'shop/client', to: 'shop/svc/web' });
 * console.log(renderClusterTrace(r.trace!, 'tree'));
 * ```
 */
export function renderClusterTrace(trace: readonly ClusterTraceEvent[], format: TraceFormat, options?: RenderOptions): string {
  expectArgument(trace, 'array', 'trace');
  expectObjects(trace, 'trace');
  expectOneOf(format, ['text', 'tree', 'json', 'mermaid', 'dot'], 'format');
  expectArgument(options, ['object', 'undefined'], 'options');
  const c = createColors(options?.color ?? false);
  switch (format) {
    case 'json':
      return JSON.stringify(trace, null, 2) + '\n';
    case 'mermaid':
      return renderFlow(trace, false);
    case 'dot':
      return renderFlow(trace, true);
    case 'tree':
    case 'text':
      return stays(trace)
        .map((s) => `${header(s, c)}\n${(format === 'tree' ? renderTraceTree(s.events, options) : renderTraceText(s.events, options)).replace(/^(?=.)/gm, '  ')}`)
        .join('');
  }
}

/**
 * The matrix as the NetworkPolicy e2e suite prints its truth tables: a header row of the
 * destinations, one row per source, `.` reachable and `X` blocked, tab-separated; then why each
 * blocked cell is blocked.
 *
 * @example
 * ```ts
 * console.log(renderReach(cluster.reach({ port: 80 })));
 * // -	x/a	x/b
 * // x/a	.	X
 * ```
 */
export function renderReach(r: ReachResult): string {
  expectArgument(r, 'object', 'result');
  expectFields(r, { port: 'integer', protocol: 'string', to: 'string', pods: 'array', allowed: 'array', why: 'object' }, 'result');
  const lines = truthTable(r.pods, r.allowed, 'result');
  blocked(lines, r.why, `${r.protocol} ${r.port}, to the ${r.to === 'pod' ? "pod's address" : 'Service'}`);
  lines.push(...summary(r));
  return lines.join('\n') + '\n';
}

/**
 * The matrices over every port: for each range of ports with one answer in every cell, its
 * ports, its truth table and why each blocked cell is blocked (the reason as the range's first
 * port met it).
 *
 * @example
 * ```ts
 * console.log(renderReachAllPorts(cluster.reach({ allPorts: true })));
 * // TCP 1-79:
 * // -	x/a	x/b
 * // x/a	X	X
 * ```
 */
export function renderReachAllPorts(r: AllPortsReachResult): string {
  expectArgument(r, 'object', 'result');
  expectFields(r, { protocol: 'string', to: 'string', pods: 'array', ranges: 'array' }, 'result');
  const lines: string[] = [];
  r.ranges.forEach((range, k) => {
    expectFields(range, { first: 'integer', last: 'integer', allowed: 'array', why: 'object' }, `result.ranges[${k}]`);
    const ports = range.first === range.last ? `${range.first}` : `${range.first}-${range.last}`;
    if (k > 0) lines.push('');
    lines.push(`${r.protocol} ${ports}:`);
    lines.push(...truthTable(r.pods, range.allowed, `result.ranges[${k}]`));
    blocked(lines, range.why, `${r.protocol} ${ports}, to the ${r.to === 'pod' ? "pod's address" : 'Service'}`);
  });
  lines.push(...summary(r));
  return lines.join('\n') + '\n';
}

function truthTable(pods: readonly string[], allowed: readonly (readonly boolean[])[], what: string): string[] {
  expectStrings(pods, `${what}.pods`);
  pods.forEach((_, i) => {
    expectArgument(allowed[i], 'array', `${what}.allowed[${i}]`);
    if (allowed[i]!.length !== pods.length) expectArgument(undefined, 'array', `${what}.allowed[${i}] (one cell per pod)`);
  });
  const lines = [['-', ...pods].join('\t')];
  pods.forEach((from, i) => lines.push([from, ...pods.map((_, j) => (allowed[i]![j] ? '.' : 'X'))].join('\t')));
  return lines;
}

function blocked(lines: string[], whyMap: Readonly<Record<string, ReachWhy>>, what: string): void {
  const why = Object.entries(whyMap);
  if (why.length === 0) return;
  lines.push('', `blocked (${what}):`);
  for (const [cell, w] of why) expectFields(w, { outcome: 'string', reason: 'string' }, `result.why[${JSON.stringify(cell)}]`);
  for (const [cell, w] of why) lines.push(`  ${cell}: ${w.policy !== null ? `NetworkPolicy ${w.policy} (${w.direction}${w.rule === null ? ', nothing allows' : `, rule ${w.rule}`}): ` : ''}${w.outcome}: ${w.reason}`);
}

function summary(r: { readonly pods: readonly string[]; readonly classes?: readonly (readonly number[])[]; readonly probes?: number }): string[] {
  if (!Array.isArray(r.classes) || typeof r.probes !== 'number') return [];
  return ['', `${r.pods.length} pods in ${r.classes.length} classes; ${r.probes} connections`];
}
