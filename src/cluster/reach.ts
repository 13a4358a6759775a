/**
 * The reachability matrix of a cluster, by classes of pods: pods that the path cannot tell apart
 * (same namespace, labels, node, containers' ports and owner, address families, the same answer
 * from every `ipBlock` of every policy, the same Services' EndpointSlices, no rules of their own)
 * get the same answer to and from every other pod, so one connection between representatives
 * answers every pair of two classes. Over every port (`--all-ports`), the ports are cut where
 * anything on the path could tell two ports apart (the policies' ports and ranges, the containers'
 * ports, the Services' ports, every port number the nodes' and pods' rules hold), one port of each
 * piece is probed, and neighbouring pieces with the same answer in every cell are joined.
 *
 * `Cluster.reach` is the entry point; this module holds the classes, the port cuts and the
 * matrices, and asks its host for single connections.
 *
 * @module
 */
import type { K8sPod, K8sService, Snapshot } from '../model/kubernetes.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { parseK8sAddress, parseK8sCidr, cidrHolds } from '../netpol/index.js';
import type { NetpolCidr } from '../netpol/index.js';
import type { PlannedPod } from './topology.js';

/** Options of `Cluster.reach`. */
export interface ReachOptions {
  /** The destination port (or `allPorts`). */
  readonly port?: number;
  /** Every port at once: the ranges of ports that share one answer in every cell. */
  readonly allPorts?: boolean;
  /** Default `tcp`. */
  readonly proto?: 'tcp' | 'udp' | 'sctp';
  /** To each pod's address (default), or through a Service that selects it. */
  readonly to?: 'pod' | 'service';
  /** Only the pods of these namespaces (default all). */
  readonly namespaces?: readonly string[];
  /**
   * Probe one pair of pods per pair of classes (default true); false probes every pair, one
   * connection per cell (the same answer, slower: what the classes are checked against).
   */
  readonly classes?: boolean;
}

/** Why a cell of the matrix is blocked. */
export interface ReachWhy {
  readonly policy: string | null;
  readonly direction: 'ingress' | 'egress' | null;
  readonly rule: number | null;
  /** How the connection ended (`refused`, `dropped`, `local` elsewhere, `none` without a Service) and why, in words. */
  readonly outcome: string;
  readonly reason: string;
}

/** The result of `Cluster.reach` for one port: `allowed[i][j]` from `pods[i]` to `pods[j]`. */
export interface ReachResult {
  readonly port: number;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly to: 'pod' | 'service';
  readonly pods: readonly string[];
  readonly allowed: readonly (readonly boolean[])[];
  /** Why each blocked cell is blocked, by `from→to`. */
  readonly why: Readonly<Record<string, ReachWhy>>;
  /** The classes of pods (indices into `pods`), each answered by one representative. */
  readonly classes: readonly (readonly number[])[];
  /** Connections made to fill the matrix. */
  readonly probes: number;
}

/** A range of ports with one answer in every cell. */
export interface ReachRange {
  readonly first: number;
  readonly last: number;
  readonly allowed: readonly (readonly boolean[])[];
  /** Why each blocked cell is blocked, by `from→to` (the reason as the range's first port met it). */
  readonly why: Readonly<Record<string, ReachWhy>>;
}

/** The result of `Cluster.reach` over every port: ranges covering 1–65535 in order. */
export interface AllPortsReachResult {
  readonly ports: 'all';
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly to: 'pod' | 'service';
  readonly pods: readonly string[];
  readonly ranges: readonly ReachRange[];
  readonly classes: readonly (readonly number[])[];
  /** The ports probed: the first of each piece between two cuts (see {@link portCuts}). */
  readonly probedPorts: number;
  readonly probes: number;
}

/** The policy a refusal is told of. */
export type ReachAttribution = Pick<ReachWhy, 'policy' | 'direction' | 'rule'>;

/** One connection's answer, as the host reads it. */
export interface ReachProbe {
  readonly ok: boolean;
  readonly why: ReachWhy | null;
  /**
   * A refusal whose policy depends on which of the two pods' chains the node's rules reach first
   * (kube-router): the policy in either order (absent when both name the same).
   */
  readonly byOrder?: Readonly<Record<'src-first' | 'dst-first', ReachAttribution>>;
  /** `--to service`: the endpoint address the Service translated to (null: none, the answer holds for every endpoint). */
  readonly chosen?: string | null;
}

/** What the matrix asks of the cluster. */
export interface ReachHost {
  readonly snapshot: Snapshot;
  /** The pods on the path, hostNetwork ones included (they are left out here). */
  readonly pods: readonly PlannedPod[];
  /** Whether a pod must be its own class (rules of its own, or rules given for its node that may name it). */
  readonly alone: (pod: PlannedPod) => boolean;
  /** Which of two pods' chains the enforcer's rules reach first (see {@link ReachProbe.byOrder}). */
  readonly chainOrder: (from: PlannedPod, to: PlannedPod) => 'src-first' | 'dst-first';
  /** Every rule text the nodes and pods hold, as the tools list them (`text`: the port cuts read their port numbers) and as given (`written`), and whose it is. */
  readonly ruleTexts: () => readonly { readonly text: string; readonly written: string; readonly where: string }[];
  /** A connection from a pod to another's address. */
  probePod(from: PlannedPod, dest: PlannedPod, port: number, proto: Proto): ReachProbe;
  /** A connection from a pod to a Service's ClusterIP, the k-th endpoint chosen wherever a Service picks one. */
  probeService(from: PlannedPod, service: K8sService, servicePort: number, proto: Proto, choice: number): ReachProbe;
  /** Forgets the connections made so far (every namespace's conntrack and sockets of connections). */
  forget(): void;
}

/** Connections between two flushes of the namespaces' connections (each probe's stays otherwise, as in a cluster). */
const FORGET_EVERY = 4096;

type Proto = 'tcp' | 'udp' | 'sctp';

/** Most endpoints a Service's enumeration visits for one client (past it, the cell says so). */
export const MAX_SERVICE_CHOICES = 4096;

// ---- classes --------------------------------------------------------------------------------

/** The distinct ipBlocks of the snapshot's policies, parsed (an unreadable one is left out: validation reports it). */
function ipBlocks(s: Snapshot): { cidr: NetpolCidr; except: NetpolCidr[] }[] {
  const seen = new Set<string>();
  const out: { cidr: NetpolCidr; except: NetpolCidr[] }[] = [];
  for (const np of s.networkPolicies) {
    const peers = [...(np.spec.ingress ?? []).flatMap((r) => r.from ?? []), ...(np.spec.egress ?? []).flatMap((r) => r.to ?? [])];
    for (const p of peers) {
      const b = p.ipBlock;
      if (b === undefined || typeof b.cidr !== 'string') continue;
      const key = `${b.cidr}|${(b.except ?? []).join(',')}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const c = parseK8sCidr(b.cidr);
      if (!c.ok) continue;
      const except: NetpolCidr[] = [];
      for (const e of b.except ?? []) {
        const x = typeof e === 'string' ? parseK8sCidr(e) : null;
        if (x !== null && x.ok) except.push(x.cidr);
      }
      out.push({ cidr: c.cidr, except });
    }
  }
  return out;
}

function sortedJson(o: Readonly<Record<string, unknown>> | undefined): string {
  if (o === undefined) return '{}';
  return JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]));
}

/** What a pod's containers declare and who owns its sockets: every field the path reads from the spec. */
function specKey(pod: K8sPod): string {
  const containers = [...pod.spec.containers, ...(pod.spec.initContainers ?? [])].map((c) => ({
    ports: (c.ports ?? []).map((p) => [p.name ?? '', p.containerPort, p.protocol ?? 'TCP', p.hostPort ?? 0, p.hostIP ?? '']),
    sc: [c.securityContext?.runAsUser ?? null, c.securityContext?.runAsGroup ?? null],
    restart: (c as { restartPolicy?: string }).restartPolicy ?? null,
  }));
  // The first container owns the probes' sockets; the others' ports listen. Their order matters
  // only for that, so the rest are sorted.
  const [first, ...rest] = containers.map((c) => JSON.stringify(c));
  return JSON.stringify([first, rest.sort(), pod.spec.securityContext?.runAsUser ?? null, pod.spec.securityContext?.runAsGroup ?? null]);
}

/**
 * The pods' classes: pods with the same key are answered alike by every connection to and from
 * every other pod (see the module's comment for what the key holds and why).
 */
export function podClasses(host: ReachHost, pods: readonly PlannedPod[]): number[][] {
  const s = host.snapshot;
  const blocks = ipBlocks(s);
  const serviceIps = new Set<string>();
  for (const svc of s.services) {
    for (const ip of [...(svc.spec.clusterIPs ?? []), ...(svc.spec.externalIPs ?? []), ...(svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? '')]) if (ip !== '' && ip !== 'None') serviceIps.add(ip);
  }
  // Which EndpointSlices name each address, with the slice's Service and ports.
  const slicesOf = new Map<string, string[]>();
  for (const es of s.endpointSlices) {
    const tag = JSON.stringify([es.metadata.namespace, es.metadata.labels?.['kubernetes.io/service-name'] ?? es.metadata.name, es.ports ?? []]);
    for (const ep of es.endpoints ?? []) {
      for (const a of ep.addresses ?? []) {
        const list = slicesOf.get(a) ?? [];
        list.push(JSON.stringify([tag, ep.conditions ?? null, ep.nodeName ?? null]));
        slicesOf.set(a, list);
      }
    }
  }
  const byKey = new Map<string, number[]>();
  pods.forEach((p, i) => {
    let key: string;
    if (host.alone(p) || p.addresses.some((a) => serviceIps.has(a.text))) key = `alone:${p.key}`;
    else {
      const bits = p.addresses.map((a) => {
        const addr = parseK8sAddress(a.text)?.address;
        return addr === undefined ? '?' : blocks.map((b) => (cidrHolds(b.cidr, addr) && !b.except.some((e) => cidrHolds(e, addr)) ? '1' : '0')).join('');
      });
      const slices = p.addresses.flatMap((a) => slicesOf.get(a.text) ?? []).sort();
      key = JSON.stringify([p.pod.metadata.namespace, p.node, sortedJson(p.pod.metadata.labels), specKey(p.pod), p.addresses.map((a) => a.family), bits, slices]);
    }
    const list = byKey.get(key);
    if (list === undefined) byKey.set(key, [i]);
    else list.push(i);
  });
  return [...byKey.values()];
}

// ---- Services -------------------------------------------------------------------------------

/** A Service port's `targetPort` on a pod: a number, or the pod's container port of that name. */
export function resolveTarget(target: number | string, pod: K8sPod, proto: string): number | null {
  if (typeof target === 'number') return target;
  for (const c of [...pod.spec.containers, ...(pod.spec.initContainers ?? [])]) {
    for (const p of c.ports ?? []) if (p.name === target && (p.protocol ?? 'TCP') === proto) return p.containerPort;
  }
  return null;
}

/** The Service a `--to service` cell goes through: the first by name selecting the pod with a port to `port`. */
function serviceFor(s: Snapshot, dest: PlannedPod, port: number, proto: Proto): { svc: K8sService; port: number } | null {
  const k8s = proto.toUpperCase();
  const labels = dest.pod.metadata.labels ?? {};
  const found = s.services
    .filter((x) => x.metadata.namespace === dest.pod.metadata.namespace && x.spec.selector !== undefined && Object.keys(x.spec.selector).length > 0 && Object.entries(x.spec.selector).every(([k, v]) => labels[k] === v))
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
    .map((x) => ({ x, p: (x.spec.ports ?? []).find((p) => (p.protocol ?? 'TCP') === k8s && resolveTarget(p.targetPort ?? p.port, dest.pod, k8s) === port) }))
    .find((y) => y.p !== undefined && (y.x.spec.clusterIPs ?? []).some((ip) => ip !== 'None'));
  return found === undefined ? null : { svc: found.x, port: found.p!.port };
}

/** The endpoints a client met through one Service port, choice by choice. */
interface Enumeration {
  next: number;
  done: boolean;
  /** The answer for every endpoint when the connection never reached a translation. */
  all: ReachProbe | null;
  readonly byAddress: Map<string, ReachProbe>;
  readonly order: string[];
}

// ---- the matrix of one port -------------------------------------------------------------------

/** The answer of one cell, with the pair that was probed for it. */
interface Cell {
  readonly probe: ReachProbe;
  readonly from: PlannedPod;
  readonly to: PlannedPod;
}

/** One port's answers by class: `pair[a * n + b]` (a ≠ b, or a = b between two of its pods), `self[a]`. */
interface ClassMatrix {
  readonly pair: (Cell | null)[];
  readonly self: Cell[];
}

class Reacher {
  probes = 0;
  private readonly enumerations = new Map<string, Enumeration>();
  /** The Service of each destination and port (`--to service`). */
  private readonly services = new Map<string, { svc: K8sService; port: number } | null>();
  readonly classOf: number[];
  private readonly host: ReachHost;
  readonly pods: readonly PlannedPod[];
  readonly classes: readonly (readonly number[])[];
  private readonly proto: Proto;
  private readonly to: 'pod' | 'service';

  constructor(host: ReachHost, pods: readonly PlannedPod[], classes: readonly (readonly number[])[], proto: Proto, to: 'pod' | 'service') {
    this.host = host;
    this.pods = pods;
    this.classes = classes;
    this.proto = proto;
    this.to = to;
    this.classOf = new Array<number>(pods.length);
    classes.forEach((c, k) => c.forEach((i) => (this.classOf[i] = k)));
  }

  cell(from: PlannedPod, dest: PlannedPod, port: number): ReachProbe {
    if (this.to === 'pod') {
      if (++this.probes % FORGET_EVERY === 0) this.host.forget();
      return this.host.probePod(from, dest, port, this.proto);
    }
    const which = `${dest.key}\u0000${port}`;
    let target = this.services.get(which);
    if (target === undefined) this.services.set(which, (target = serviceFor(this.host.snapshot, dest, port, this.proto)));
    if (target === null) return { ok: false, why: { policy: null, direction: null, rule: null, outcome: 'none', reason: `no Service selects ${dest.place} with a port to ${port}/${this.proto.toUpperCase()}` } };
    const name = `${target.svc.metadata.namespace}/${target.svc.metadata.name}`;
    const key = `${from.key}\u0000${name}\u0000${target.port}`;
    let e = this.enumerations.get(key);
    if (e === undefined) this.enumerations.set(key, (e = { next: 0, done: false, all: null, byAddress: new Map(), order: [] }));
    const mine = dest.addresses.map((a) => a.text);
    const known = (): ReachProbe | undefined => e.all ?? mine.map((a) => e.byAddress.get(a)).find((x) => x !== undefined);
    // The k-th choice of every random draw on the path: choices 0, 1, … until one repeats.
    while (known() === undefined && !e.done) {
      if (++this.probes % FORGET_EVERY === 0) this.host.forget();
      const r = this.host.probeService(from, target.svc, target.port, this.proto, e.next++);
      if (r.chosen === null || r.chosen === undefined) {
        e.all = r;
        e.done = true;
      } else if (e.byAddress.has(r.chosen)) e.done = true;
      else {
        e.byAddress.set(r.chosen, r);
        e.order.push(r.chosen);
        if (e.next >= MAX_SERVICE_CHOICES) e.done = true;
      }
    }
    const hit = known();
    if (hit !== undefined) return hit;
    return { ok: false, why: { policy: null, direction: null, rule: null, outcome: 'other endpoint', reason: `Service ${name} sends the connections of ${from.place} to ${e.order.join(', ') || 'no endpoint'}, never to ${dest.place}` } };
  }

  /** Every class pair's answer for one port. */
  matrix(port: number): ClassMatrix {
    const n = this.classes.length;
    const pair: (Cell | null)[] = new Array<Cell | null>(n * n).fill(null);
    const self: Cell[] = [];
    for (let a = 0; a < n; a++) {
      const ca = this.classes[a]!;
      const from = this.pods[ca[0]!]!;
      for (let b = 0; b < n; b++) {
        const cb = this.classes[b]!;
        const to = a === b ? (cb.length > 1 ? this.pods[cb[1]!]! : null) : this.pods[cb[0]!]!;
        if (to !== null) pair[a * n + b] = { probe: this.cell(from, to, port), from, to };
      }
      self.push({ probe: this.cell(from, from, port), from, to: from });
    }
    return { pair, self };
  }

  /** The cell of pods i and j in a class matrix. */
  at(m: ClassMatrix, i: number, j: number): Cell {
    if (i === j) return m.self[this.classOf[i]!]!;
    return m.pair[this.classOf[i]! * this.classes.length + this.classOf[j]!]!;
  }

  allowed(m: ClassMatrix): boolean[][] {
    const n = this.pods.length;
    const out: boolean[][] = new Array<boolean[]>(n);
    for (let i = 0; i < n; i++) {
      const row = new Array<boolean>(n);
      for (let j = 0; j < n; j++) row[j] = this.at(m, i, j).probe.ok;
      out[i] = row;
    }
    return out;
  }

  why(m: ClassMatrix): Record<string, ReachWhy> {
    const out: Record<string, ReachWhy> = {};
    const n = this.pods.length;
    for (let i = 0; i < n; i++) {
      const from = this.pods[i]!;
      for (let j = 0; j < n; j++) {
        const c = this.at(m, i, j);
        if (c.probe.ok) continue;
        const to = this.pods[j]!;
        out[`${from.key}→${to.key}`] = retell(c, from, to, this.host.chainOrder);
      }
    }
    return out;
  }
}

/** Two class matrices give the same answer (allowed, policy, direction, rule, outcome) in every cell. */
function sameAnswers(a: ClassMatrix, b: ClassMatrix): boolean {
  const same = (x: Cell | null, y: Cell | null): boolean => {
    if (x === null || y === null) return x === y;
    const p = x.probe;
    const q = y.probe;
    if (p.ok !== q.ok) return false;
    if (p.ok) return true;
    const w = p.why!;
    const v = q.why!;
    const told = (a: ReachAttribution | undefined, b: ReachAttribution | undefined): boolean => a === b || (a !== undefined && b !== undefined && a.policy === b.policy && a.direction === b.direction && a.rule === b.rule);
    return w.policy === v.policy && w.direction === v.direction && w.rule === v.rule && w.outcome === v.outcome
      && told(p.byOrder?.['src-first'], q.byOrder?.['src-first']) && told(p.byOrder?.['dst-first'], q.byOrder?.['dst-first']);
  };
  for (let i = 0; i < a.pair.length; i++) if (!same(a.pair[i]!, b.pair[i]!)) return false;
  for (let i = 0; i < a.self.length; i++) if (!same(a.self[i]!, b.self[i]!)) return false;
  return true;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A piece of a reason: text, or a representative's name/address to put the pair's own in place of. */
type Piece = string | { readonly side: 'from' | 'to'; readonly what: 'place' | 'veth' | number };

/** Reasons cut at the representatives' names, addresses and veths, by cell (made once per cell). */
const templates = new WeakMap<Cell, readonly Piece[]>();

function template(c: Cell): readonly Piece[] {
  const hit = templates.get(c);
  if (hit !== undefined) return hit;
  const tokens = new Map<string, Piece>();
  const add = (p: PlannedPod, side: 'from' | 'to'): void => {
    tokens.set(p.place, { side, what: 'place' });
    if (p.veth !== '') tokens.set(p.veth, { side, what: 'veth' });
    p.addresses.forEach((a, i) => tokens.set(a.text, { side, what: i }));
  };
  add(c.from, 'from');
  if (c.to !== c.from) add(c.to, 'to');
  const re = new RegExp(`(?<![\\w.:/-])(${[...tokens.keys()].sort((x, y) => y.length - x.length).map(escapeRegExp).join('|')})(?![\\w-]|\\.\\d|/[\\w])`, 'g');
  const reason = c.probe.why!.reason;
  const out: Piece[] = [];
  let last = 0;
  for (const m of reason.matchAll(re)) {
    out.push(reason.slice(last, m.index), tokens.get(m[0])!);
    last = m.index + m[0].length;
  }
  out.push(reason.slice(last));
  templates.set(c, out);
  return out;
}

/**
 * A representative pair's reason told of another pair of the same classes: the representatives'
 * namespaces (`pod/ns/name`), addresses and veths replaced by the pair's own (reasons name pods
 * by their namespace, never by the bare `ns/name`, which a policy's name may equal).
 */
function retell(c: Cell, from: PlannedPod, to: PlannedPod, order: (from: PlannedPod, to: PlannedPod) => 'src-first' | 'dst-first'): ReachWhy {
  const told = c.probe.byOrder;
  const why = told === undefined ? c.probe.why! : { ...c.probe.why!, ...told[order(from, to)] };
  if (c.from === from && c.to === to) return why;
  const t = template(c);
  if (t.length === 1) return why;
  let reason = '';
  for (const piece of t) {
    if (typeof piece === 'string') reason += piece;
    else {
      const p = piece.side === 'from' ? from : to;
      reason += piece.what === 'place' ? p.place : piece.what === 'veth' ? p.veth : p.addresses[piece.what]?.text ?? '?';
    }
  }
  return { ...why, reason };
}

/** `why` computed on first reading (a matrix of many pods has millions of blocked cells), then kept. */
function withWhy<T extends object>(o: T, build: () => Record<string, ReachWhy>): T & { readonly why: Readonly<Record<string, ReachWhy>> } {
  let cached: Record<string, ReachWhy> | null = null;
  Object.defineProperty(o, 'why', { enumerable: true, configurable: false, get: () => (cached ??= build()) });
  return o as T & { readonly why: Readonly<Record<string, ReachWhy>> };
}

function selected(host: ReachHost, namespaces: readonly string[] | undefined): PlannedPod[] {
  return host.pods
    .filter((p) => !p.hostNetwork && (namespaces === undefined || namespaces.includes(p.pod.metadata.namespace!)))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function reacher(host: ReachHost, options: ReachOptions): Reacher {
  const pods = selected(host, options.namespaces);
  const classes = options.classes === false ? pods.map((_, i) => [i]) : podClasses(host, pods);
  return new Reacher(host, pods, classes, options.proto ?? 'tcp', options.to ?? 'pod');
}

/** The matrix for one port. */
export function reachPort(host: ReachHost, options: ReachOptions & { readonly port: number }): ReachResult {
  const r = reacher(host, options);
  const m = r.matrix(options.port);
  const base = {
    port: options.port,
    protocol: (options.proto ?? 'tcp').toUpperCase() as 'TCP' | 'UDP' | 'SCTP',
    to: options.to ?? 'pod',
    pods: r.pods.map((p) => p.key),
    allowed: r.allowed(m),
  };
  return Object.assign(withWhy(base, () => r.why(m)), { classes: r.classes, probes: r.probes }) as ReachResult;
}

// ---- every port -------------------------------------------------------------------------------

/**
 * Port numbers in rule text: decimal numbers not part of an IPv4 address, a hex mark, a name
 * (`app-1` in a comment, `KUBE-SEP-…`) or a prefix length. Both ends of a range (`--dport 8000:8100`, `dport 8000-8100`) are read; so are
 * numbers that are not ports (counters, IPv6 groups, DNAT's `:port`): a cut too many costs a probe,
 * never an answer.
 */
const PORT_NUMBER = /(?<![\w./])(?<![A-Za-z_]-)\d{1,5}(?![\w.])/g;

/**
 * Where the answer of a cell may change along the ports: the first port of each piece of 1–65535
 * in which nothing on the path tells two ports apart. A cut is made at every port number (and the
 * one after it) of the policies (`port`, `endPort`), the containers (named ports are among them),
 * the Services (`port`, `targetPort`, `nodePort`) and the rule texts the namespaces hold (kube-
 * proxy, the CNI's and the enforcers' rules, or the dumps given): more cuts than needed never
 * change an answer, only the number of probes.
 */
export function portCuts(host: ReachHost, to: 'pod' | 'service', proto: Proto): number[] {
  const cuts = new Set<number>([1]);
  const mark = (first: number, last = first): void => {
    if (Number.isInteger(first) && first >= 1 && first <= 65535) cuts.add(first);
    if (Number.isInteger(last) && last >= 1 && last < 65535) cuts.add(last + 1);
  };
  const s = host.snapshot;
  const k8s = proto.toUpperCase();
  if (to === 'service') {
    // Through a Service the port is the one its targetPort names on the pod: only those ports have
    // a Service at all; every other port is "no Service".
    for (const p of host.pods) {
      for (const svc of s.services) for (const sp of svc.spec.ports ?? []) {
        if ((sp.protocol ?? 'TCP') !== k8s) continue;
        const t = resolveTarget(sp.targetPort ?? sp.port, p.pod, k8s);
        if (t !== null) mark(t);
      }
    }
    return [...cuts].sort((a, b) => a - b);
  }
  for (const np of s.networkPolicies) {
    for (const rule of [...(np.spec.ingress ?? []), ...(np.spec.egress ?? [])]) {
      for (const p of rule.ports ?? []) if (typeof p.port === 'number') mark(p.port, typeof p.endPort === 'number' ? p.endPort : p.port);
    }
  }
  for (const p of host.pods) for (const c of [...p.pod.spec.containers, ...(p.pod.spec.initContainers ?? [])]) for (const cp of c.ports ?? []) mark(cp.containerPort);
  for (const svc of s.services) {
    for (const sp of svc.spec.ports ?? []) {
      mark(sp.port);
      if (typeof sp.targetPort === 'number') mark(sp.targetPort);
      if (typeof sp.nodePort === 'number') mark(sp.nodePort);
    }
  }
  for (const { text, written, where } of host.ruleTexts()) {
    const split = portSplitter(text) ?? portSplitter(written);
    if (split !== null) {
      throw new NetfilterSimError([diagnostic('UNSUPPORTED', `${where}: "${split.trim()}" tells ports apart by more than their values (a bit mask, a hash or raw bytes of the header), which the port cuts of --all-ports cannot follow; ask port by port (--port N)`)]);
    }
    for (const m of text.matchAll(PORT_NUMBER)) mark(Number(m[0]));
  }
  return [...cuts].sort((a, b) => a - b);
}

/**
 * Rule constructs that tell ports apart otherwise than by comparing their values with numbers:
 * a masked port (`th dport & 0xff00 == …`, `ct proto-dst & …`), raw bytes of the transport
 * header's first 32 bits other than a whole port (`@th,0,8 …`; `@th,16,16 0x1f90` is the
 * destination port, cut by its value), hashes over the ports (`jhash … dport`, `symhash`,
 * `HMARK`), and the matches that read arbitrary bytes (`u32`, `bpf`). The first such line, or null.
 */
function portSplitter(text: string): string | null {
  const m = /^.*(?:\b(?:th|tcp|udp|udplite|sctp|dccp)\s+[sd]port\s*&|proto-(?:src|dst)\s*&|\bjhash\b[^\n]*\b[sd]port\b|\bsymhash\b|-j\s+HMARK\b|-m\s+(?:u32|bpf)\b).*$/m.exec(text);
  if (m !== null) return m[0];
  for (const r of text.matchAll(/^.*@th,(\d+),(\d+).*$/gm)) {
    const offset = Number(r[1]);
    const length = Number(r[2]);
    if (offset < 32 && !((offset === 0 || offset === 16) && length === 16)) return r[0];
  }
  return null;
}

/** The matrices over every port: the cuts' pieces probed at their first port, equal neighbours joined. */
export function reachAllPorts(host: ReachHost, options: ReachOptions): AllPortsReachResult {
  const r = reacher(host, options);
  const to = options.to ?? 'pod';
  const cuts = portCuts(host, to, options.proto ?? 'tcp');
  const pieces: { first: number; last: number; m: ClassMatrix }[] = [];
  cuts.forEach((first, i) => {
    const last = i + 1 < cuts.length ? cuts[i + 1]! - 1 : 65535;
    const m = r.matrix(first);
    const prev = pieces[pieces.length - 1];
    if (prev !== undefined && sameAnswers(prev.m, m)) pieces[pieces.length - 1] = { ...prev, last };
    else pieces.push({ first, last, m });
  });
  const ranges = pieces.map((p) => withWhy({ first: p.first, last: p.last, allowed: r.allowed(p.m) }, () => r.why(p.m)) as ReachRange);
  return {
    ports: 'all',
    protocol: (options.proto ?? 'tcp').toUpperCase() as 'TCP' | 'UDP' | 'SCTP',
    to,
    pods: r.pods.map((p) => p.key),
    ranges,
    classes: r.classes,
    probedPorts: cuts.length,
    probes: r.probes,
  };
}
