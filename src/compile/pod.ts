/**
 * A small reader for the Kubernetes objects the mesh compilers look at: Pods (or the pod template
 * of a workload), Namespaces and Services, from YAML or JSON. Only the fields that decide iptables
 * rules or traffic are kept: metadata annotations and labels, containers and init containers
 * (names, args, ports, env, `securityContext.runAsUser/runAsGroup`, `restartPolicy`), and
 * `status.podIPs`.
 *
 * @module
 */
import { parseAllDocuments } from 'yaml';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { expectArgument } from '../model/guard.js';
import { MAX_MANIFEST_DEPTH, MAX_YAML_BYTES, pushAll, utf8Length } from '../model/limits.js';

/**
 * A container port (`containers[].ports[]`).
 *
 * @example
 * ```ts
 * readPod(yaml).containers[0]?.ports.map((p: ContainerPort) => p.containerPort);
 * ```
 */
export interface ContainerPort {
  readonly containerPort: number;
  readonly name?: string;
  readonly protocol: string;
}

/**
 * An environment variable with a literal value (`valueFrom` is kept as `undefined`).
 *
 * @example
 * ```ts
 * readPod(yaml).containers[0]?.env.find((e: EnvVar) => e.name === 'LINKERD2_PROXY_INBOUND_LISTEN_ADDR')?.value;
 * ```
 */
export interface EnvVar {
  readonly name: string;
  readonly value?: string;
}

/**
 * A container or init container, reduced to what the mesh compilers read.
 *
 * @example
 * ```ts
 * readPod(yaml).initContainers.filter((c: PodContainer) => c.restartPolicy === 'Always'); // native sidecars
 * ```
 */
export interface PodContainer {
  readonly name: string;
  readonly image?: string;
  readonly command: readonly string[];
  readonly args: readonly string[];
  readonly ports: readonly ContainerPort[];
  readonly env: readonly EnvVar[];
  /** `securityContext.runAsUser`, falling back on the pod's `securityContext.runAsUser`. */
  readonly runAsUser?: number;
  /** `securityContext.runAsGroup`, falling back on the pod's. */
  readonly runAsGroup?: number;
  /** `Always` makes an init container a native sidecar. */
  readonly restartPolicy?: string;
}

/**
 * A Pod (or a workload's pod template).
 *
 * @example
 * ```ts
 * const pod: Pod = readPod(readFileSync('web.yaml', 'utf8'));
 * pod.podIPs; // ['10.0.0.2', 'fd00::2']
 * ```
 */
export interface Pod {
  /** The manifest's `kind` (`Pod`, or the workload kind the template came from). */
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
  readonly initContainers: readonly PodContainer[];
  readonly containers: readonly PodContainer[];
  /** `status.podIPs[].ip` (or `status.podIP`), in order. */
  readonly podIPs: readonly string[];
  /** `spec.hostNetwork`: the pod shares the node's network namespace. Absent when false. */
  readonly hostNetwork?: boolean;
}

/**
 * A Namespace: its annotations are the fallback for pod annotations.
 *
 * @example
 * ```ts
 * const ns: Namespace = readNamespace(readFileSync('ns.yaml', 'utf8'));
 * ```
 */
export interface Namespace {
  readonly name: string;
  readonly annotations: Readonly<Record<string, string>>;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * A Service port (`spec.ports[]`). `targetPort` is a number or a port name.
 *
 * @example
 * ```ts
 * readService(yaml).ports.map((p: ServicePort) => p.targetPort);
 * ```
 */
export interface ServicePort {
  readonly port: number;
  readonly targetPort?: number | string;
  readonly name?: string;
  readonly protocol: string;
}

/**
 * A Service, reduced to its ports and cluster IPs.
 *
 * @example
 * ```ts
 * const svc: Service = readService(readFileSync('kubernetes-svc.yaml', 'utf8'));
 * ```
 */
export interface Service {
  readonly name: string;
  readonly namespace?: string;
  readonly clusterIPs: readonly string[];
  readonly ports: readonly ServicePort[];
}

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ReplicationController', 'Job']);

function bad(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_MANIFEST', message));
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringMap(v: unknown, where: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) bad(`${where} must be a map of strings`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    // Kubernetes rejects non-string values; YAML authors often forget the quotes around numbers.
    if (typeof val === 'string') out[k] = val;
    else if (typeof val === 'number' || typeof val === 'boolean') out[k] = String(val);
    else bad(`${where}.${k} must be a string`);
  }
  return out;
}

function optionalInt(v: unknown, where: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) bad(`${where} must be an integer`);
  return v;
}

function stringList(v: unknown, where: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) bad(`${where} must be a list`);
  return v.map((x, i) => {
    if (typeof x === 'string') return x;
    if (typeof x === 'number' || typeof x === 'boolean') return String(x);
    return bad(`${where}[${i}] must be a string`);
  });
}

function readContainer(v: unknown, where: string, podSc: Obj | undefined): PodContainer {
  if (!isObj(v)) bad(`${where} must be an object`);
  if (typeof v['name'] !== 'string' || v['name'] === '') bad(`${where}.name must be a non-empty string`);
  const sc = isObj(v['securityContext']) ? v['securityContext'] : undefined;
  const ports = Array.isArray(v['ports']) ? v['ports'] : v['ports'] === undefined ? [] : bad(`${where}.ports must be a list`);
  const env = Array.isArray(v['env']) ? v['env'] : v['env'] === undefined ? [] : bad(`${where}.env must be a list`);
  const runAsUser = optionalInt(sc?.['runAsUser'], `${where}.securityContext.runAsUser`) ?? optionalInt(podSc?.['runAsUser'], 'spec.securityContext.runAsUser');
  const runAsGroup = optionalInt(sc?.['runAsGroup'], `${where}.securityContext.runAsGroup`) ?? optionalInt(podSc?.['runAsGroup'], 'spec.securityContext.runAsGroup');
  return {
    name: v['name'],
    ...(typeof v['image'] === 'string' ? { image: v['image'] } : {}),
    command: stringList(v['command'], `${where}.command`),
    args: stringList(v['args'], `${where}.args`),
    ports: ports.map((p: unknown, i: number): ContainerPort => {
      if (!isObj(p)) return bad(`${where}.ports[${i}] must be an object`);
      const containerPort = optionalInt(p['containerPort'], `${where}.ports[${i}].containerPort`);
      if (containerPort === undefined) return bad(`${where}.ports[${i}].containerPort is required`);
      return {
        containerPort,
        ...(typeof p['name'] === 'string' ? { name: p['name'] } : {}),
        protocol: typeof p['protocol'] === 'string' ? p['protocol'] : 'TCP',
      };
    }),
    env: env.map((e: unknown, i: number): EnvVar => {
      if (!isObj(e) || typeof e['name'] !== 'string') return bad(`${where}.env[${i}].name must be a string`);
      return typeof e['value'] === 'string' ? { name: e['name'], value: e['value'] } : { name: e['name'] };
    }),
    ...(runAsUser !== undefined ? { runAsUser } : {}),
    ...(runAsGroup !== undefined ? { runAsGroup } : {}),
    ...(typeof v['restartPolicy'] === 'string' ? { restartPolicy: v['restartPolicy'] } : {}),
  };
}

/**
 * Reads a Pod from a parsed manifest object: a `Pod`, or a workload (`Deployment`, `StatefulSet`,
 * `DaemonSet`, `ReplicaSet`, `ReplicationController`, `Job`, `CronJob`) whose pod template is used.
 * Throws {@link NetfilterSimError} (`BAD_MANIFEST`) naming the field at fault.
 *
 * @example
 * ```ts
 * const pod = podFromObject({ kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'app' }] } });
 * pod.containers[0].name; // 'app'
 * ```
 */
export function podFromObject(obj: unknown): Pod {
  if (!isObj(obj)) bad('a Pod manifest must be an object');
  const kind = typeof obj['kind'] === 'string' ? obj['kind'] : 'Pod';
  let meta: unknown = obj['metadata'];
  let spec: unknown = obj['spec'];
  if (WORKLOAD_KINDS.has(kind) || kind === 'CronJob') {
    let s = spec;
    if (kind === 'CronJob') s = isObj(s) && isObj(s['jobTemplate']) ? s['jobTemplate']['spec'] : undefined;
    const template = isObj(s) ? s['template'] : undefined;
    if (!isObj(template)) bad(`${kind} has no spec.template`);
    meta = template['metadata'];
    spec = template['spec'];
    if (!isObj(meta) || typeof meta['name'] !== 'string') {
      const outer = isObj(obj['metadata']) ? obj['metadata'] : {};
      meta = { ...(isObj(meta) ? meta : {}), name: outer['name'], namespace: outer['namespace'] };
    }
  } else if (kind !== 'Pod') {
    bad(`expected a Pod (or a workload with a pod template), got kind ${kind}`);
  }
  const m = isObj(meta) ? meta : {};
  if (!isObj(spec)) bad('spec is missing');
  const podSc = isObj(spec['securityContext']) ? spec['securityContext'] : undefined;
  const list = (key: string): PodContainer[] => {
    const v = spec[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) return bad(`spec.${key} must be a list`);
    return v.map((c, i) => readContainer(c, `spec.${key}[${i}]`, podSc));
  };
  const status = isObj(obj['status']) ? obj['status'] : {};
  const podIPs: string[] = [];
  if (Array.isArray(status['podIPs'])) {
    for (const p of status['podIPs']) if (isObj(p) && typeof p['ip'] === 'string') podIPs.push(p['ip']);
  }
  if (podIPs.length === 0 && typeof status['podIP'] === 'string') podIPs.push(status['podIP']);
  return {
    kind,
    name: typeof m['name'] === 'string' ? m['name'] : '',
    ...(typeof m['namespace'] === 'string' ? { namespace: m['namespace'] } : {}),
    annotations: stringMap(m['annotations'], 'metadata.annotations'),
    labels: stringMap(m['labels'], 'metadata.labels'),
    initContainers: list('initContainers'),
    containers: list('containers'),
    podIPs,
    ...(spec['hostNetwork'] === true ? { hostNetwork: true } : {}),
  };
}

/**
 * Reads a Namespace from a parsed manifest object.
 *
 * @example
 * ```ts
 * namespaceFromObject({ kind: 'Namespace', metadata: { name: 'emojivoto', annotations: { 'linkerd.io/inject': 'enabled' } } });
 * ```
 */
export function namespaceFromObject(obj: unknown): Namespace {
  if (!isObj(obj)) bad('a Namespace manifest must be an object');
  if (obj['kind'] !== undefined && obj['kind'] !== 'Namespace') bad(`expected a Namespace, got kind ${String(obj['kind'])}`);
  const m = isObj(obj['metadata']) ? obj['metadata'] : {};
  return {
    name: typeof m['name'] === 'string' ? m['name'] : '',
    annotations: stringMap(m['annotations'], 'metadata.annotations'),
    labels: stringMap(m['labels'], 'metadata.labels'),
  };
}

/**
 * Reads a Service from a parsed manifest object.
 *
 * @example
 * ```ts
 * serviceFromObject({ kind: 'Service', metadata: { name: 'kubernetes' }, spec: { ports: [{ port: 443, targetPort: 6443 }] } });
 * ```
 */
export function serviceFromObject(obj: unknown): Service {
  if (!isObj(obj)) bad('a Service manifest must be an object');
  if (obj['kind'] !== undefined && obj['kind'] !== 'Service') bad(`expected a Service, got kind ${String(obj['kind'])}`);
  const m = isObj(obj['metadata']) ? obj['metadata'] : {};
  const spec = isObj(obj['spec']) ? obj['spec'] : {};
  const ports = Array.isArray(spec['ports']) ? spec['ports'] : [];
  const clusterIPs = Array.isArray(spec['clusterIPs'])
    ? spec['clusterIPs'].filter((x): x is string => typeof x === 'string')
    : typeof spec['clusterIP'] === 'string' ? [spec['clusterIP']] : [];
  return {
    name: typeof m['name'] === 'string' ? m['name'] : '',
    ...(typeof m['namespace'] === 'string' ? { namespace: m['namespace'] } : {}),
    clusterIPs,
    ports: ports.map((p: unknown, i: number): ServicePort => {
      if (!isObj(p)) return bad(`spec.ports[${i}] must be an object`);
      const port = optionalInt(p['port'], `spec.ports[${i}].port`);
      if (port === undefined) return bad(`spec.ports[${i}].port is required`);
      const tp = p['targetPort'];
      return {
        port,
        ...(typeof tp === 'number' || typeof tp === 'string' ? { targetPort: tp } : {}),
        ...(typeof p['name'] === 'string' ? { name: p['name'] } : {}),
        protocol: typeof p['protocol'] === 'string' ? p['protocol'] : 'TCP',
      };
    }),
  };
}

/**
 * Parses YAML (one or more `---`-separated documents) or JSON into plain objects; a `List`'s
 * `items` are expanded. Throws {@link NetfilterSimError} (`BAD_MANIFEST`) with the line and column
 * of a syntax error.
 *
 * @example
 * ```ts
 * readManifests('kind: Pod\nmetadata: {name: a}\n---\nkind: Namespace\nmetadata: {name: b}\n').length; // 2
 * ```
 */
export function readManifests(text: string): unknown[] {
  expectArgument(text, 'string', 'manifest text');
  flowDepthWithin(text);
  // JSON (what kubectl get -o json prints) is read by JSON.parse: the yaml package needs tens of
  // bytes of memory per byte of input, JSON.parse a few.
  if (/^\s*[[{]/.test(text)) {
    let json: unknown;
    let parsed = false;
    try {
      json = JSON.parse(text);
      parsed = true;
    } catch {
      // not JSON after all (flow-style YAML): the yaml package reads it below
    }
    if (parsed) {
      const v = checkedDepth(json);
      if (v === null || v === undefined) return [];
      const out: unknown[] = [];
      if (isObj(v) && v['kind'] === 'List' && Array.isArray(v['items'])) pushAll(out, v['items']);
      else out.push(v);
      return out;
    }
  }
  if (text.length > MAX_YAML_BYTES && utf8Length(text) > MAX_YAML_BYTES) {
    bad(`the YAML manifest is ${utf8Length(text)} bytes; netfilter-sim reads YAML up to ${MAX_YAML_BYTES} bytes (2 MiB; JSON up to the input limit)`);
  }
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(text);
  } catch (e) {
    if (e instanceof RangeError) tooDeep();
    throw e;
  }
  const out: unknown[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    const err = doc.errors[0];
    if (err) {
      if (doc.errors.some((x) => x.message.startsWith('Maximum call stack size exceeded'))) tooDeep();
      const pos = err.linePos?.[0];
      throw new NetfilterSimError(
        diagnostic('BAD_MANIFEST', err.message.split('\n')[0] ?? 'invalid YAML', pos ? { line: pos.line, column: pos.col, offset: err.pos[0], length: Math.max(1, err.pos[1] - err.pos[0]) } : undefined),
      );
    }
    const v = manifestValue(doc);
    if (v === null || v === undefined) continue;
    if (isObj(v) && v['kind'] === 'List' && Array.isArray(v['items'])) pushAll(out, v['items']);
    else out.push(v);
  }
  return out;
}

/**
 * A document's plain value. Aliases that expand past yaml's budget (an alias bomb), nesting past
 * {@link MAX_MANIFEST_DEPTH} and a stack exhausted by nesting are `BAD_MANIFEST`, not the yaml
 * package's own exceptions.
 */
function manifestValue(doc: { toJS(): unknown }): unknown {
  let v: unknown;
  try {
    v = doc.toJS();
  } catch (e) {
    if (e instanceof ReferenceError && /alias/i.test(e.message)) {
      bad('the manifest\'s aliases expand past the limit yaml allows (100 aliases per node, as against a "billion laughs" document)');
    }
    if (e instanceof RangeError) tooDeep();
    throw e;
  }
  return checkedDepth(v);
}

function checkedDepth(v: unknown): unknown {
  // Iterative depth check: a manifest nested deeper than Kubernetes objects ever are is refused.
  const todo: [unknown, number][] = [[v, 0]];
  while (todo.length > 0) {
    const [x, depth] = todo.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (depth >= MAX_MANIFEST_DEPTH) tooDeep();
    for (const c of Object.values(x)) if (c !== null && typeof c === 'object') todo.push([c, depth + 1]);
  }
  return v;
}

/**
 * Refuses flow collections (`[[[…]]]`, `{a: {b: …}}`) nested past {@link MAX_MANIFEST_DEPTH} before
 * the yaml package sees them: its parser recurses per level and, tens of thousands deep, exhausts
 * memory rather than failing. Quoted scalars and comments are skipped; a quote counts only where a
 * scalar may start.
 */
function flowDepthWithin(text: string): void {
  let depth = 0;
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      line++;
      lineStart = i + 1;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_MANIFEST_DEPTH) {
        throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `the manifest is nested more than ${MAX_MANIFEST_DEPTH} levels deep`, { line, column: i - lineStart + 1, offset: i, length: 1 }, text[i]));
      }
    } else if (c === 0x5d || c === 0x7d) {
      if (depth > 0) depth--;
    } else if (c === 0x23 && (i === lineStart || text.charCodeAt(i - 1) === 32 || text.charCodeAt(i - 1) === 9)) {
      const nl = text.indexOf('\n', i);
      i = (nl < 0 ? text.length : nl) - 1;
    } else if ((c === 0x22 || c === 0x27) && (i === lineStart || ' \t[{,:'.includes(text[i - 1]!))) {
      let j = i + 1;
      while (j < text.length) {
        const d = text.charCodeAt(j);
        if (c === 0x22 && d === 0x5c) j += 2;
        else if (d === c) {
          if (c === 0x27 && text.charCodeAt(j + 1) === 0x27) j += 2;
          else break;
        } else {
          if (d === 10) {
            line++;
            lineStart = j + 1;
          }
          j++;
        }
      }
      i = j;
    }
  }
}

function tooDeep(): never {
  return bad(`the manifest is nested more than ${MAX_MANIFEST_DEPTH} levels deep`);
}

function first<T>(text: string, kinds: readonly string[], what: string, read: (o: unknown) => T): T {
  const objs = readManifests(text);
  const hit = objs.find((o) => isObj(o) && (o['kind'] === undefined || kinds.includes(String(o['kind']))));
  if (hit === undefined) bad(`no ${what} in the manifest`);
  return read(hit);
}

/**
 * Reads the first Pod (or workload pod template) of a YAML/JSON manifest.
 *
 * @example
 * ```ts
 * const pod = readPod(readFileSync('web.yaml', 'utf8'));
 * pod.annotations['config.linkerd.io/skip-outbound-ports'];
 * ```
 */
export function readPod(text: string): Pod {
  expectArgument(text, 'string', 'text');
  return first(text, ['Pod', ...WORKLOAD_KINDS, 'CronJob'], 'Pod', podFromObject);
}

/**
 * Reads the first Namespace of a YAML/JSON manifest.
 *
 * @example
 * ```ts
 * readNamespace('kind: Namespace\nmetadata:\n  name: emojivoto\n').name; // 'emojivoto'
 * ```
 */
export function readNamespace(text: string): Namespace {
  expectArgument(text, 'string', 'text');
  return first(text, ['Namespace'], 'Namespace', namespaceFromObject);
}

/**
 * Reads the first Service of a YAML/JSON manifest.
 *
 * @example
 * ```ts
 * readService('kind: Service\nmetadata: {name: kubernetes}\nspec: {ports: [{port: 443, targetPort: 6443}]}\n').ports[0].port; // 443
 * ```
 */
export function readService(text: string): Service {
  expectArgument(text, 'string', 'text');
  return first(text, ['Service'], 'Service', serviceFromObject);
}
