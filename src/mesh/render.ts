/**
 * Renderers of a scenario's result: a text tree, JSON (the `mesh --json` object), a Mermaid
 * sequence diagram and Graphviz DOT. Pure functions of the result; colour is an explicit option.
 *
 * @module
 */
import { createColors } from 'picocolors';
import type { MeshHop, MeshPolicyStop, MeshResult, MeshVerdict } from './types.js';
import { expectArgument, expectFields, expectOneOf, expectShape } from '../model/guard.js';

/**
 * Options of the renderers.
 *
 * @example
 * ```ts
 * renderMeshText(result, { color: true });
 * ```
 */
export interface MeshRenderOptions {
  /** ANSI colours (default false). */
  readonly color?: boolean;
}

/**
 * The output formats of `netfilter-sim mesh`.
 *
 * @example
 * ```ts
 * const f: MeshFormat = 'mermaid';
 * ```
 */
export type MeshFormat = 'text' | 'json' | 'mermaid' | 'dot';

/**
 * The formats, in the order `--help` lists them.
 *
 * @example
 * ```ts
 * MESH_FORMATS.includes('dot'); // true
 * ```
 */
export const MESH_FORMATS: readonly MeshFormat[] = ['text', 'json', 'mermaid', 'dot'];

const VERDICT_WORDS: Record<MeshVerdict, string> = {
  meshed: 'both proxies were traversed',
  plaintext: 'neither proxy was traversed',
  'client-bypass': "the client's proxy was skipped",
  'server-bypass': "the server's proxy was skipped",
  refused: 'the connection was refused',
  dropped: 'the connection was dropped',
  loop: "a proxy's own connection was captured again",
};

/**
 * The object `mesh --json` prints: verdict, hops (`pod`, `from`, `to`, `why`, and what received
 * the connection) and diagnosis; on a cluster, `cause` and `policy` when a NetworkPolicy decided
 * (also on the hop where it dropped).
 *
 * @example
 * ```ts
 * const o = meshJson(simulateMesh({ mesh: 'istio' }));
 * o.verdict; // 'meshed'
 * ```
 */
export function meshJson(result: MeshResult): {
  verdict: MeshVerdict;
  cause?: 'network-policy';
  policy?: MeshPolicyStop;
  hops: { pod: string; from: string; to: string; why: string; receiver: string; outcome: MeshHop['outcome']; policy?: MeshPolicyStop }[];
  diagnosis: string[];
} {
  expectArgument(result, 'object', 'result');
  expectFields(result, { hops: 'array', diagnosis: 'array', client: 'object', server: 'object' }, 'result');
  return {
    verdict: result.verdict,
    ...(result.cause !== undefined ? { cause: result.cause } : {}),
    ...(result.policy !== undefined ? { policy: result.policy } : {}),
    hops: result.hops.map((h) => ({ pod: h.pod, from: h.from, to: h.to, why: h.why, receiver: h.receiver, outcome: h.outcome, ...(h.policy !== undefined ? { policy: h.policy } : {}) })),
    diagnosis: [...result.diagnosis],
  };
}

/**
 * {@link meshJson} as text, one object, with a final newline.
 *
 * @example
 * ```ts
 * JSON.parse(renderMeshJson(result)).hops[0].why; // 'PROXY_INIT_OUTPUT rule 4 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"'
 * ```
 */
export function renderMeshJson(result: MeshResult): string {
  expectArgument(result, 'object', 'result');
  expectFields(result, { hops: 'array', diagnosis: 'array', client: 'object', server: 'object' }, 'result');
  return `${JSON.stringify(meshJson(result), null, 2)}\n`;
}

/**
 * The hops as an indented tree (each leg nested under the one that led to it), the verdict and
 * the diagnosis.
 *
 * @example
 * ```ts
 * console.log(renderMeshText(simulateMesh({ mesh: 'linkerd' })));
 * // linkerd: web (uid 1000) in pod client → 10.0.1.5:8080/tcp
 * // └─ client: web (uid 1000) → 127.0.0.1:4140  [linkerd-proxy outbound (SO_ORIGINAL_DST 10.0.1.5:8080)]
 * //    PROXY_INIT_OUTPUT rule 4 REDIRECT "proxy-init/redirect-all-outgoing-to-proxy-port"
 * // …
 * // verdict: meshed (both proxies were traversed)
 * ```
 */
export function renderMeshText(result: MeshResult, options: MeshRenderOptions = {}): string {
  expectArgument(result, 'object', 'result');
  expectFields(result, { hops: 'array', diagnosis: 'array', client: 'object', server: 'object' }, 'result');
  expectArgument(options, 'object', 'options');
  const c = createColors(options.color ?? false);
  const lines: string[] = [];
  const phase = result.phase === 'app' ? '' : ` at phase ${result.phase}`;
  lines.push(`${c.bold(result.mesh)}: ${result.origin}${result.origin.endsWith('on the node') ? '' : ` in pod ${result.client.name}`}${phase} → ${result.dst}/${result.proto}`);
  result.hops.forEach((h, i) => {
    const indent = '   '.repeat(i);
    const mark = h.outcome === 'refused' || h.outcome === 'dropped' ? c.red(h.receiver) : h.outcome === 'remote' ? c.dim(h.receiver) : c.cyan(h.receiver);
    lines.push(`${indent}└─ ${c.bold(h.pod)}: ${h.from} → ${h.to}  [${mark}]`);
    lines.push(`${indent}   ${c.dim(h.why)}`);
  });
  const colour = result.verdict === 'meshed' ? c.green : result.verdict === 'refused' || result.verdict === 'dropped' || result.verdict === 'loop' ? c.red : c.yellow;
  const words = result.policy ? `by NetworkPolicy ${result.policy.namespace}/${result.policy.name}, ${result.policy.direction} ${result.policy.direction === 'ingress' ? 'to' : 'from'} ${result.policy.pod} on node ${result.policy.node}` : VERDICT_WORDS[result.verdict];
  lines.push(`verdict: ${colour(c.bold(result.verdict))} (${words})`);
  if (result.diagnosis.length > 0) {
    lines.push(result.verdict === 'meshed' ? 'notes:' : 'diagnosis:');
    for (const d of result.diagnosis) lines.push(`  - ${d}`);
  }
  return `${lines.join('\n')}\n`;
}

interface Actor {
  readonly id: string;
  readonly label: string;
  readonly pod: string;
}

/** The actors in order of appearance: `pod/container` ids and `network`. */
function actors(result: MeshResult): Actor[] {
  const out: Actor[] = [];
  const add = (id: string): void => {
    if (out.some((a) => a.id === id)) return;
    const slash = id.indexOf('/');
    out.push(slash < 0 ? { id, label: id, pod: '' } : { id, label: `${id.slice(slash + 1)} @ ${id.slice(0, slash)}`, pod: id.slice(0, slash) });
  };
  for (const h of result.hops) {
    add(h.fromActor);
    add(h.toActor);
  }
  return out;
}

function mermaidText(s: string): string {
  // Mermaid sequence messages end at a newline; `;` and `#` have meanings of their own.
  return s.replace(/[;#]/g, ',').replace(/"/g, "'").replace(/\s+/g, ' ').trim();
}

/**
 * A Mermaid sequence diagram: one participant per process (or the network), one message per hop
 * (`-x` for a refused or dropped one), the verdict as a note.
 *
 * @example
 * ```ts
 * renderMeshMermaid(simulateMesh({ mesh: 'linkerd' })).split('\n')[0]; // 'sequenceDiagram'
 * ```
 */
export function renderMeshMermaid(result: MeshResult): string {
  expectArgument(result, 'object', 'result');
  expectFields(result, { hops: 'array', diagnosis: 'array', client: 'object', server: 'object' }, 'result');
  const list = actors(result);
  const ids = new Map(list.map((a, i) => [a.id, `P${i}`]));
  const lines = ['sequenceDiagram'];
  for (const a of list) lines.push(`  participant ${ids.get(a.id)} as ${mermaidText(a.label)}`);
  for (const h of result.hops) {
    const arrow = h.outcome === 'refused' || h.outcome === 'dropped' ? '-x' : '->>';
    lines.push(`  ${ids.get(h.fromActor)}${arrow}${ids.get(h.toActor)}: ${mermaidText(`${h.to}: ${h.why}`)}`);
  }
  const first = ids.get(list[0]?.id ?? '') ?? 'P0';
  const last = ids.get(list[list.length - 1]?.id ?? '') ?? first;
  lines.push(`  Note over ${first},${last}: ${mermaidText(`verdict: ${result.verdict}`)}`);
  return `${lines.join('\n')}\n`;
}

function dotString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * Graphviz DOT: processes grouped by pod, edges numbered in hop order and labelled with the
 * destination and the rule; refused or dropped hops in red.
 *
 * @example
 * ```ts
 * renderMeshDot(result).startsWith('digraph mesh {'); // true
 * ```
 */
export function renderMeshDot(result: MeshResult): string {
  expectArgument(result, 'object', 'result');
  expectFields(result, { hops: 'array', diagnosis: 'array', client: 'object', server: 'object' }, 'result');
  const list = actors(result);
  const ids = new Map(list.map((a, i) => [a.id, `n${i}`]));
  const lines = ['digraph mesh {', '  rankdir=LR;', '  node [shape=box, fontname="monospace"];', '  edge [fontname="monospace", fontsize=10];'];
  lines.push(`  label=${dotString(`${result.mesh}: ${result.origin} → ${result.dst}/${result.proto} — verdict: ${result.verdict}`)};`);
  const pods = [...new Set(list.map((a) => a.pod))];
  pods.forEach((pod, i) => {
    const members = list.filter((a) => a.pod === pod);
    if (pod === '') {
      for (const a of members) lines.push(`  ${ids.get(a.id)} [label=${dotString(a.label)}, shape=ellipse];`);
      return;
    }
    lines.push(`  subgraph cluster_${i} {`, `    label=${dotString(pod === 'node' && members.some((a) => a.id === 'node/kubelet') ? 'the node' : `pod ${pod}`)};`);
    for (const a of members) lines.push(`    ${ids.get(a.id)} [label=${dotString(a.id.slice(a.id.indexOf('/') + 1))}];`);
    lines.push('  }');
  });
  result.hops.forEach((h, i) => {
    const bad = h.outcome === 'refused' || h.outcome === 'dropped';
    lines.push(`  ${ids.get(h.fromActor)} -> ${ids.get(h.toActor)} [label=${dotString(`${i + 1}: ${h.to}\n${h.why}`)}${bad ? ', color=red, fontcolor=red' : ''}];`);
  });
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/**
 * Renders a result in one of the {@link MeshFormat}s.
 *
 * @example
 * ```ts
 * process.stdout.write(renderMesh(simulateMesh({ mesh: 'linkerd' }), 'text'));
 * ```
 */
export function renderMesh(result: MeshResult, format: MeshFormat, options: MeshRenderOptions = {}): string {
  expectArgument(result, 'object', 'result');
  expectOneOf(format, MESH_FORMATS, 'format');
  expectShape(options, { kind: 'object', fields: { color: ['boolean', 'undefined'] } }, 'options');
  switch (format) {
    case 'text':
      return renderMeshText(result, options);
    case 'json':
      return renderMeshJson(result);
    case 'mermaid':
      return renderMeshMermaid(result);
    case 'dot':
      return renderMeshDot(result);
  }
}
