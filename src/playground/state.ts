/**
 * The playground's whole state: what the page shows is a function of it, and a link carries it
 * (compressed in the URL fragment). A state read from a link is input from anyone, so
 * {@link normalizeState} keeps only known fields of the right types and sizes.
 *
 * @module
 */

/** The views of the page. */
export const VIEWS = ['connect', 'packet', 'explore', 'mesh', 'compile'] as const;
/** One of {@link VIEWS}. */
export type PlaygroundView = (typeof VIEWS)[number];

/** The namespace, as the CLI's flags write it (one value a line where a flag repeats). */
export interface NamespaceForm {
  /** `--listen` values, one a line (`4140,4143,8080`, `127.0.0.1:15001`, `0.0.0.0:15006,transparent`). */
  readonly listen: string;
  /** `--iface NAME=ADDRS`, one a line; empty for the default eth0=10.0.0.2/24,fd00::2/64. */
  readonly ifaces: string;
  /** `--gateway` addresses, comma- or line-separated; empty for the defaults. */
  readonly gateway: string;
  /** `--route 'ARGS'`, one a line, as `ip route add` takes them. */
  readonly routes: string;
  /** `--rule 'ARGS'`, one a line, as `ip rule add` takes them. */
  readonly ipRules: string;
  readonly routeLocalnet: boolean;
  readonly ipForward: boolean;
}

/** A connection, as `connect`'s flags give it. */
export interface ConnectionForm {
  readonly from: 'local' | 'remote';
  readonly uid: string;
  readonly gid: string;
  readonly src: string;
  readonly dst: string;
  readonly proto: 'tcp' | 'udp';
  readonly sport: string;
  readonly iface: string;
  readonly mark: string;
}

/** `explore`'s space, and how the page shows its classes. */
export interface ExploreForm {
  readonly from: 'local' | 'remote';
  readonly proto: 'tcp' | 'udp';
  readonly family: 'both' | '4' | '6';
  /** The uid the picture is drawn for (local explorations). */
  readonly uid: string;
  /** Table filter text and sort column. */
  readonly filter: string;
  readonly sort: string;
}

/** `mesh`'s pods and options. */
export interface MeshForm {
  readonly mesh: 'linkerd' | 'istio';
  readonly client: string;
  readonly server: string;
  readonly dst: string;
  readonly cni: boolean;
  readonly nativeSidecars: 'default' | 'on' | 'off';
  readonly phase: string;
  readonly ambient: boolean;
}

/** `compile`'s input: the component's flags, or a Pod the injector writes them for. */
export interface CompileForm {
  readonly mesh: 'linkerd' | 'istio';
  readonly input: 'flags' | 'pod';
  readonly flags: string;
  readonly pod: string;
  readonly format: 'save' | 'restore' | 'commands' | 'json';
}

/** Everything the page shows follows from this. */
export interface PlaygroundState {
  readonly view: PlaygroundView;
  /** The rules editor's text: iptables-save, or nft. */
  readonly rules: string;
  readonly syntax: 'auto' | 'iptables' | 'nft';
  /** Read as iptables-restore does (`check`'s default, `connect --strict`), else leniently. */
  readonly strict: boolean;
  readonly ns: NamespaceForm;
  readonly conn: ConnectionForm;
  /** `trace --packet`'s PACKET. */
  readonly packet: string;
  /** How the trace is shown: the outline, the sequence, or a renderer's text. */
  readonly traceView: 'outline' | 'sequence' | 'tree' | 'text' | 'mermaid' | 'dot' | 'json';
  readonly explore: ExploreForm;
  readonly mesh: MeshForm;
  readonly compile: CompileForm;
}

/** The state of a fresh page: empty rules, a pod's defaults. */
export const DEFAULT_STATE: PlaygroundState = {
  view: 'connect',
  rules: '',
  syntax: 'auto',
  strict: true,
  ns: { listen: '', ifaces: '', gateway: '', routes: '', ipRules: '', routeLocalnet: false, ipForward: false },
  conn: { from: 'local', uid: '1000', gid: '', src: '', dst: '10.96.0.10:80', proto: 'tcp', sport: '', iface: '', mark: '' },
  packet: 'tcp > 10.96.0.10:80 uid 1000',
  traceView: 'outline',
  explore: { from: 'local', proto: 'tcp', family: '4', uid: '1000', filter: '', sort: '' },
  mesh: { mesh: 'linkerd', client: '', server: '', dst: '', cni: false, nativeSidecars: 'default', phase: 'app', ambient: false },
  compile: { mesh: 'linkerd', input: 'flags', flags: '-p 4143 -o 4140 -u 2102 --ipv6=false', pod: '', format: 'save' },
};

/** The most text one field of a state may hold (a large node dump fits; a link should not carry more). */
export const MAX_FIELD_CHARS = 8 * 1024 * 1024;

type Shape = { readonly [k: string]: unknown };

function pick<T>(value: unknown, fallback: T): T {
  if (typeof fallback === 'string') return (typeof value === 'string' && value.length <= MAX_FIELD_CHARS ? value : fallback) as T;
  if (typeof fallback === 'boolean') return (typeof value === 'boolean' ? value : fallback) as T;
  return fallback;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

function record<T extends object>(value: unknown, fallback: T, choices: { readonly [K in keyof T]?: readonly string[] } = {}): T {
  const v = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Shape;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(fallback)) {
    const allowed = choices[k as keyof T];
    const given = Object.hasOwn(v, k) ? v[k] : undefined;
    const def = (fallback as Shape)[k];
    out[k] = allowed ? oneOf(given, allowed, def as string) : pick(given, def);
  }
  return out as T;
}

/**
 * A well-formed state from anything (a decoded link, an old version's state): unknown fields are
 * dropped, a field of the wrong type or past {@link MAX_FIELD_CHARS} takes its default.
 *
 * @example
 * ```ts
 * normalizeState({ view: 'mesh', rules: 42 }).rules; // ''
 * ```
 */
export function normalizeState(value: unknown): PlaygroundState {
  const v = (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {}) as Shape;
  const get = (k: string): unknown => (Object.hasOwn(v, k) ? v[k] : undefined);
  const d = DEFAULT_STATE;
  return {
    view: oneOf(get('view'), VIEWS, d.view),
    rules: pick(get('rules'), d.rules),
    syntax: oneOf(get('syntax'), ['auto', 'iptables', 'nft'] as const, d.syntax),
    strict: pick(get('strict'), d.strict),
    ns: record(get('ns'), d.ns),
    conn: record(get('conn'), d.conn, { from: ['local', 'remote'], proto: ['tcp', 'udp'] }),
    packet: pick(get('packet'), d.packet),
    traceView: oneOf(get('traceView'), ['outline', 'sequence', 'tree', 'text', 'mermaid', 'dot', 'json'] as const, d.traceView),
    explore: record(get('explore'), d.explore, { from: ['local', 'remote'], proto: ['tcp', 'udp'], family: ['both', '4', '6'] }),
    mesh: record(get('mesh'), d.mesh, { mesh: ['linkerd', 'istio'], nativeSidecars: ['default', 'on', 'off'] }),
    compile: record(get('compile'), d.compile, { mesh: ['linkerd', 'istio'], input: ['flags', 'pod'], format: ['save', 'restore', 'commands', 'json'] }),
  };
}
