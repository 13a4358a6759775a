/**
 * Renderers: pure functions from a trace to a string. None reads global state; colour is an
 * explicit option (off unless asked for).
 *
 * @module
 */
import { createColors } from 'picocolors';
import type { ConnectResult } from '../engine/path/netns.js';
import type { TraceEvent } from '../engine/trace/events.js';
import { expectArgument, expectObjects, expectOneOf, expectShape } from '../model/guard.js';

/** Options of every renderer. */
export interface RenderOptions {
  /** ANSI colours (default false). */
  readonly color?: boolean;
}

type Colors = ReturnType<typeof createColors>;

function colors(o: RenderOptions | undefined): Colors {
  return createColors(o?.color ?? false);
}

function quote(s: string | null): string {
  return s === null ? '' : `"${s}"`;
}

/** `addr:port` (`[addr]:port` for IPv6), the address alone for a protocol without ports. @internal */
export function endpoint(addr: string, port: number, proto: string): string {
  const a = addr.includes(':') ? `[${addr}]` : addr;
  return proto === 'tcp' || proto === 'udp' || proto === 'sctp' ? `${a}:${port}` : a;
}

/** One event in the words of the tree and text renderers. @internal */
export function describeEvent(e: TraceEvent, c: Colors = colors(undefined)): string {
  switch (e.type) {
    case 'packet': {
      const who = e.origin === 'local' ? (e.uid !== null ? `, uid ${e.uid} gid ${e.gid}` : ', kernel socket (no owner)') : `, in ${e.iface}`;
      const mark = e.mark !== 0 ? `, mark 0x${e.mark.toString(16)}` : '';
      return `${c.bold(e.label)} ${endpoint(e.src, e.sport, e.proto)} → ${endpoint(e.dst, e.dport, e.proto)}  ${e.proto}${who}${mark}`;
    }
    case 'route':
      if (e.result === 'local') return `${e.dst} is local${e.dev ? ` (dev ${e.dev})` : ''}`;
      if (e.result === 'unicast' || e.result === 'forward') return `${e.result === 'forward' ? 'forward: ' : ''}${e.dst}${e.via ? ` via ${e.via}` : ''} dev ${e.dev}${e.table !== null && e.table !== 254 ? ` table ${e.table}` : ''}${e.reason ? ` (${e.reason})` : ''}`;
      return c.red(`${e.dst}: ${e.reason ?? e.result}`);
    case 'reroute':
      return `${e.dst} ${e.result === 'local' ? 'dev lo (local)' : e.dev ? `${e.via ? `via ${e.via} ` : ''}dev ${e.dev}` : e.result}  (after ${e.table})`;
    case 'conntrack':
      switch (e.action) {
        case 'new':
          return `new connection #${e.id} (${e.state})${e.zone ? ` zone ${e.zone}` : ''}`;
        case 'found':
          return `connection #${e.id}, ${e.direction === 'REPLY' ? 'reply' : 'original'} direction (${e.state})${e.reason ? c.dim(`: ${e.reason}`) : ''}`;
        case 'attached':
          return `already tracked: connection #${e.id} (${e.state})`;
        case 'confirm':
          return `connection #${e.id} confirmed`;
        case 'reopen':
          return `connection #${e.id} ${e.reason ?? 'was closed'}: removed, the SYN starts a new one`;
        case 'invalid':
          return e.reason ? `INVALID: ${e.reason}${e.id !== null ? ` (connection #${e.id} kept)` : ''}` : 'INVALID';
        default:
          return e.state;
      }
    case 'nat':
      if (e.action === 'skipped') return c.dim(`nat skipped: ${e.reason}`);
      if (e.action === 'apply') return `${e.manip === 'DST' ? 'dst' : 'src'} ${e.from} → ${e.to} (binding)`;
      if (e.action === 'null-binding') return c.dim(`no ${e.manip} NAT (null binding)`);
      return `${e.action} ${e.manip === 'DST' ? 'dst' : 'src'} ${e.from} → ${c.bold(e.to)}`;
    case 'rule':
      return `${e.chain}:${e.rule} ${e.action === 'none' ? '(no target)' : e.action === 'jump' ? `→ ${e.target}` : e.action === 'goto' ? `goto ${e.target}` : e.target}${e.comment ? `  ${c.dim(quote(e.comment))}` : ''}`;
    case 'return':
      return c.dim(`${e.chain}:${e.rule} return`);
    case 'policy':
      return `${e.chain} policy ${e.policy}`;
    case 'assumed':
      return c.yellow(`${e.chain}:${e.rule} -m ${e.match} assumed ${e.result ? 'true' : 'false'}${e.assumption ? ` (${e.assumption})` : ''}`);
    case 'verdict':
      return `${e.verdict}${e.reason ? ` (${e.reason})` : ''}`;
    case 'effect':
      return `${e.chain}:${e.rule} ${e.target}: ${e.detail}`;
    case 'socket':
      return e.result === 'delivered'
        ? c.green(`delivered to ${endpoint(e.address, e.port, 'tcp')} (${e.socket})`)
        : c.red(`no socket at ${endpoint(e.address, e.port, 'tcp')}`);
    case 'wire':
      return `out ${e.dev}: ${endpoint(e.src, e.sport, 'tcp')} → ${endpoint(e.dst, e.dport, 'tcp')}`;
    case 'loopback':
      return '→ lo, back in through PREROUTING';
    case 'drop':
      return c.red(`dropped${e.hook ? ` in ${e.hook}` : ''}: ${e.reason}`);
    case 'table':
      return `${e.hook} ${e.table}`;
    default:
      return assertNever(e);
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected trace event ${JSON.stringify(x)}`);
}

/**
 * TRACE-style text: one line per event; rule steps in the kernel's `table:chain:type:N` words.
 *
 * @example
 * ```ts
 * renderTraceText(ns.connect(spec).trace!);
 * // TRACE: nat:PROXY_INIT_OUTPUT:rule:4 REDIRECT "-A PROXY_INIT_OUTPUT …"
 * ```
 */
export function renderTraceText(trace: readonly TraceEvent[], options?: RenderOptions): string {
  expectArgument(trace, 'array', 'trace');
  expectRenderOptions(options);
  expectObjects(trace, 'trace');
  const c = colors(options);
  const lines: string[] = [];
  for (const e of trace) {
    switch (e.type) {
      case 'rule':
        lines.push(`TRACE: ${e.table}:${e.chain}:rule:${e.rule} ${e.label} ${e.hook}${e.target ? ` -j ${e.target}` : ''}${e.text ? `  ${c.dim(`# ${e.text}`)}` : ''}`);
        break;
      case 'return':
        lines.push(`TRACE: ${e.table}:${e.chain}:return:${e.rule} ${e.label} ${e.hook}`);
        break;
      case 'policy':
        lines.push(`TRACE: ${e.table}:${e.chain}:policy:${e.rule} ${e.label} ${e.hook} ${e.policy}`);
        break;
      case 'packet':
        lines.push(describeEvent(e, c));
        break;
      case 'table':
        break;
      default:
        lines.push(`  ${e.type}${'hook' in e && e.hook ? ` ${e.hook}` : ''}: ${describeEvent(e, c)}`);
    }
  }
  return lines.join('\n') + (lines.length > 0 ? '\n' : '');
}

/**
 * The events verbatim, as JSON.
 *
 * @example
 * ```ts
 * JSON.parse(renderTraceJson(ns.trace('tcp > 10.96.0.10:80 uid 1000').trace!));
 * ```
 */
export function renderTraceJson(trace: readonly TraceEvent[], _options?: RenderOptions): string {
  expectArgument(trace, 'array', 'trace');
  return JSON.stringify(trace, null, 2) + '\n';
}

/** Indices of the rule/policy events that decided each table's verdict (the tree's ★). @internal */
export function decidingEvents(trace: readonly TraceEvent[]): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i < trace.length; i++) {
    const e = trace[i]!;
    if (e.type !== 'verdict') continue;
    for (let j = i - 1; j >= 0; j--) {
      const d = trace[j]!;
      if (d.type === 'table') break;
      if ((d.type === 'rule' && d.action !== 'jump' && d.action !== 'goto' && d.action !== 'none') || d.type === 'policy') {
        out.add(j);
        break;
      }
    }
  }
  return out;
}

/**
 * An indented tree: the packets of the exchange at the top, each hook and table visited below
 * them, jumps indented, the deciding rule marked with `★`, and the NAT, routing and socket
 * consequences in between.
 *
 * @example
 * ```ts
 * console.log(renderTraceTree(ns.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }).trace!));
 * // SYN 10.0.0.2:49142 → 10.96.0.10:80  tcp, uid 1000 gid 1000
 * //   OUTPUT      nat      OUTPUT:1 → PROXY_INIT_OUTPUT  "proxy-init/install-proxy-init-output"
 * //                          ★ PROXY_INIT_OUTPUT:4 REDIRECT …
 * ```
 */
export function renderTraceTree(trace: readonly TraceEvent[], options?: RenderOptions): string {
  expectArgument(trace, 'array', 'trace');
  expectRenderOptions(options);
  expectObjects(trace, 'trace');
  const c = colors(options);
  const deciding = decidingEvents(trace);
  const lines: string[] = [];
  let stack: string[] = [];
  const col = (s: string, w: number) => (s.length >= w ? `${s} ` : s + ' '.repeat(w - s.length));
  let current = '';
  for (let i = 0; i < trace.length; i++) {
    const e = trace[i]!;
    const mark = deciding.has(i) ? c.yellow('★ ') : '';
    switch (e.type) {
      case 'packet':
        lines.push(describeEvent(e, c));
        break;
      case 'table':
        stack = [e.hook];
        current = `${col(e.hook, 12)}${col(e.table, 9)}`;
        break;
      case 'rule':
      case 'return':
      case 'policy':
      case 'assumed':
      case 'effect': {
        const at = stack.lastIndexOf(e.chain);
        if (at >= 0) stack = stack.slice(0, at + 1);
        else stack.push(e.chain);
        const depth = Math.max(0, stack.length - 1);
        const head = current !== '' ? current : ' '.repeat(21);
        current = '';
        lines.push(`  ${head}${'  '.repeat(depth)}${mark}${describeEvent(e, c)}${e.type === 'rule' && e.text && deciding.has(i) ? `\n  ${' '.repeat(21)}${'  '.repeat(depth)}  ${c.dim(e.text)}` : ''}`);
        if (e.type === 'rule' && e.action === 'jump') stack.push(e.target);
        if (e.type === 'rule' && e.action === 'goto') stack[stack.length - 1] = e.target;
        if (e.type === 'return') stack.pop();
        break;
      }
      case 'verdict':
        if (e.verdict === 'DROP') lines.push(`  ${' '.repeat(21)}${c.red(`DROP${e.reason ? ` (${e.reason})` : ''}`)}`);
        current = '';
        break;
      case 'nat':
        if (e.action === 'skipped') lines.push(`  ${col(e.hook, 12)}${col('nat', 9)}${describeEvent(e, c)}`);
        else lines.push(`  ${' '.repeat(21)}${describeEvent(e, c)}`);
        break;
      case 'conntrack':
        lines.push(`  ${col(e.hook, 12)}${col('conntrack', 9)}${describeEvent(e, c)}`);
        break;
      case 'route':
        lines.push(`  ${col('route', 21)}${describeEvent(e, c)}`);
        break;
      case 'reroute':
        lines.push(`  ${col('reroute', 21)}${describeEvent(e, c)}`);
        break;
      default:
        lines.push(`  ${describeEvent(e, c)}`);
    }
  }
  return lines.join('\n') + (lines.length > 0 ? '\n' : '');
}

function mermaidId(s: string): string {
  return s.replace(/[^A-Za-z0-9_]/g, '_');
}

function mermaidLabel(s: string): string {
  return s.replace(/"/g, '#quot;');
}

/** The path as a list of (node, label) visits: packets, hooks, chains, ends. */
function pathNodes(trace: readonly TraceEvent[]): { id: string; label: string; edge: string }[] {
  const out: { id: string; label: string; edge: string }[] = [];
  let pkt = '';
  for (const e of trace) {
    switch (e.type) {
      case 'packet':
        pkt = `p${e.packet}`;
        out.push({ id: `${pkt}_start`, label: `${e.label} ${endpoint(e.src, e.sport, e.proto)} → ${endpoint(e.dst, e.dport, e.proto)}`, edge: '' });
        break;
      case 'rule':
        out.push({ id: `${pkt}_${e.hook}_${e.table}_${e.chain}`, label: `${e.hook} ${e.table} ${e.chain}`, edge: `${e.chain}:${e.rule} ${e.target || '(count)'}` });
        break;
      case 'policy':
        out.push({ id: `${pkt}_${e.hook}_${e.table}_${e.chain}`, label: `${e.hook} ${e.table} ${e.chain}`, edge: `policy ${e.policy}` });
        break;
      case 'nat':
        if (e.action !== 'skipped' && e.action !== 'null-binding') out.push({ id: `${pkt}_nat_${out.length}`, label: `${e.action} ${e.from} → ${e.to}`, edge: e.manip });
        break;
      case 'socket':
        out.push({ id: `${pkt}_socket`, label: e.result === 'delivered' ? `delivered ${endpoint(e.address, e.port, 'tcp')}` : `refused ${endpoint(e.address, e.port, 'tcp')}`, edge: '' });
        break;
      case 'wire':
        out.push({ id: `${pkt}_wire`, label: `out ${e.dev} → ${endpoint(e.dst, e.dport, 'tcp')}`, edge: '' });
        break;
      case 'drop':
        out.push({ id: `${pkt}_drop`, label: `dropped: ${e.reason}`, edge: '' });
        break;
      default:
        break;
    }
  }
  return out;
}

/**
 * A Mermaid `flowchart LR` of the visited chains, with the taken edges labelled.
 *
 * @example
 * ```ts
 * renderTraceMermaid(trace).startsWith('flowchart LR'); // true
 * ```
 */
export function renderTraceMermaid(trace: readonly TraceEvent[], _options?: RenderOptions): string {
  expectArgument(trace, 'array', 'trace');
  expectObjects(trace, 'trace');
  const nodes = pathNodes(trace);
  const lines = ['flowchart LR'];
  const declared = new Set<string>();
  let prev: string | null = null;
  for (const n of nodes) {
    const id = mermaidId(n.id);
    if (!declared.has(id)) {
      lines.push(`  ${id}["${mermaidLabel(n.label)}"]`);
      declared.add(id);
    }
    if (n.id.endsWith('_start')) prev = null;
    if (prev !== null && prev !== id) lines.push(`  ${prev} -->${n.edge ? `|"${mermaidLabel(n.edge)}"|` : ''} ${id}`);
    prev = id;
  }
  return lines.join('\n') + '\n';
}

function dotString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * A Graphviz digraph of the same path.
 *
 * @example
 * ```ts
 * writeFileSync('trace.dot', renderTraceDot(trace)); // dot -Tsvg trace.dot
 * ```
 */
export function renderTraceDot(trace: readonly TraceEvent[], _options?: RenderOptions): string {
  expectArgument(trace, 'array', 'trace');
  expectObjects(trace, 'trace');
  const nodes = pathNodes(trace);
  const lines = ['digraph trace {', '  rankdir=LR;', '  node [shape=box, fontname="monospace"];'];
  const declared = new Set<string>();
  let prev: string | null = null;
  for (const n of nodes) {
    const id = dotString(n.id);
    if (!declared.has(id)) {
      lines.push(`  ${id} [label=${dotString(n.label)}];`);
      declared.add(id);
    }
    if (n.id.endsWith('_start')) prev = null;
    if (prev !== null && prev !== id) lines.push(`  ${prev} -> ${id}${n.edge ? ` [label=${dotString(n.edge)}]` : ''};`);
    prev = id;
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}

/**
 * The last line of a human report: how the attempt ended.
 *
 * @example
 * ```ts
 * renderOutcome(ns.connect(spec));
 * // delivered to 127.0.0.1:4140 (the listener 0.0.0.0:4140); SO_ORIGINAL_DST = 10.96.0.10:80
 * ```
 */
export function renderOutcome(r: ConnectResult, options?: RenderOptions): string {
  expectShape(r, {
    kind: 'object',
    fields: {
      outcome: { kind: 'string', oneOf: ['local', 'remote', 'refused', 'dropped'] },
      address: ['string', 'null'],
      port: ['integer', 'null'],
      originalDestination: ['string', 'null', 'undefined'],
      reason: 'string',
      errno: ['string', 'null', 'undefined'],
    },
  }, 'result');
  expectRenderOptions(options);
  const c = colors(options);
  const at = r.address !== null ? endpoint(r.address, r.port ?? 0, 'tcp') : '';
  switch (r.outcome) {
    case 'local':
      return c.green(`delivered to ${at} (${r.reason.replace(/^accepted by /, '')})`) + (r.originalDestination ? `; SO_ORIGINAL_DST = ${r.originalDestination}` : '') + '\n';
    case 'remote':
      return c.green(`left the namespace to ${at}`) + ` (${r.reason})\n`;
    case 'refused':
    case 'dropped':
      // What the client's connect() returns: `refused: EHOSTUNREACH (…)`.
      return c.red(r.outcome) + `${typeof r.errno === 'string' ? `: ${r.errno}` : ''} (${r.reason})\n`;
  }
}

/** The trace formats the CLI offers. */
export type TraceFormat = 'text' | 'tree' | 'json' | 'mermaid' | 'dot';

/**
 * Renders a trace in one of the {@link TraceFormat}s.
 *
 * @example
 * ```ts
 * renderTrace(result.trace!, 'text', { color: false });
 * ```
 */
export function renderTrace(trace: readonly TraceEvent[], format: TraceFormat, options?: RenderOptions): string {
  expectArgument(trace, 'array', 'trace');
  expectOneOf(format, ['text', 'tree', 'json', 'mermaid', 'dot'], 'format');
  expectRenderOptions(options);
  expectObjects(trace, 'trace');
  switch (format) {
    case 'text':
      return renderTraceText(trace, options);
    case 'tree':
      return renderTraceTree(trace, options);
    case 'json':
      return renderTraceJson(trace, options);
    case 'mermaid':
      return renderTraceMermaid(trace, options);
    case 'dot':
      return renderTraceDot(trace, options);
  }
}

/** Throws `BAD_ARGUMENT` naming the field unless `options` is a {@link RenderOptions} object (or nothing). */
function expectRenderOptions(options: unknown): void {
  expectShape(options, { kind: ['object', 'undefined'], fields: { color: ['boolean', 'undefined'] } }, 'options');
}
