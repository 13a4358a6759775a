/**
 * A cluster snapshot read from what `kubectl get namespaces,nodes,pods,services,endpointslices,
 * networkpolicies -A -o yaml` (or `-o json`) prints: a `List`, several documents, several files.
 * Objects are read as the API server holds them (its defaults applied, only the fields
 * netfilter-sim reads kept); what cannot be used is a warning naming the object, what is malformed
 * a typed error naming the object and the field.
 *
 * @module
 */
import type {
  ContainerPort, Endpoint, EndpointPort, K8sContainer, K8sEndpointSlice, K8sNamespace, K8sNetworkPolicy, K8sNode, K8sPod, K8sProtocol,
  K8sService, LabelSelector, NodeAddress, ObjectMeta, ServicePort, Snapshot,
} from '../model/kubernetes.js';
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import type { ErrorCode } from '../model/errors.js';
import { expectArgument, expectFields } from '../model/guard.js';
import { MAX_INPUT_BYTES, utf8Length } from '../model/limits.js';
import { readManifests } from '../compile/pod.js';
import { cidrHolds, cidrsOverlap, parseIp, parseIpCidr } from './addresses.js';
import type { IpAddress, IpCidr } from './addresses.js';

/** Bytes of all the texts of one snapshot together (64 MiB, the CLI's bound on one input). */
export const MAX_SNAPSHOT_BYTES = MAX_INPUT_BYTES;
/** Texts (files) one snapshot is read from. */
export const MAX_SNAPSHOT_FILES = 4096;
/** Objects one snapshot holds, of every kind, read or skipped. */
export const MAX_SNAPSHOT_OBJECTS = 100_000;
/** Nodes one snapshot holds (Kubernetes' own scalability threshold is 5,000 nodes). */
export const MAX_SNAPSHOT_NODES = 5000;
/** Pods placed on one node (kubelet's default is 110; a /22 of pod addresses holds 1,022). */
export const MAX_PODS_PER_NODE = 1024;

/** One text of a snapshot and the name messages give it (a file name). */
export interface SnapshotSource {
  readonly name: string;
  readonly text: string;
}

/** The kinds a snapshot keeps. */
const KINDS = ['Namespace', 'Node', 'Pod', 'Service', 'EndpointSlice', 'NetworkPolicy'] as const;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function fail(code: ErrorCode, message: string): never {
  throw new NetfilterSimError(diagnostic(code, message));
}

/** Where an object came from, for messages: `FILE:LINE` or `FILE (items[3])`. */
interface Origin {
  readonly file: string;
  readonly line: number | null;
  readonly index: number | null;
}

function originText(o: Origin): string {
  if (o.line !== null) return `${o.file}:${o.line}`;
  if (o.index !== null) return `${o.file} (object ${o.index + 1})`;
  return o.file;
}

/** A raw object and where it was read. */
interface RawObject {
  readonly value: unknown;
  readonly origin: Origin;
}

// ---- splitting texts into objects -------------------------------------------------------------

/**
 * The top-level JSON values of a text that holds one or more (`kubectl get pods -o json;
 * kubectl get svc -o json` written to one file), each with the line it starts on; null when the
 * text is not a stream of JSON values.
 */
function splitJsonStream(text: string): { text: string; line: number }[] | null {
  const out: { text: string; line: number }[] = [];
  let depth = 0;
  let start = -1;
  let startLine = 1;
  let line = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) {
      if (depth === 0) return null;
      inString = true;
    } else if (c === 123 || c === 91) {
      if (depth === 0) {
        start = i;
        startLine = line;
      }
      depth++;
    } else if (c === 125 || c === 93) {
      depth--;
      if (depth < 0) return null;
      if (depth === 0) {
        out.push({ text: text.slice(start, i + 1), line: startLine });
        start = -1;
      }
    } else if (depth === 0 && c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 0xfeff) return null;
  }
  if (depth !== 0 || inString) return null;
  return out;
}

/** Lines of a document, each with its 1-based number. */
interface Line {
  readonly text: string;
  readonly number: number;
}

/**
 * YAML texts split into pieces read one at a time: documents at `---`, and the `items` of a
 * `kind: List` document (as kubectl prints it: `items:` and every `- ` entry at column 0) one
 * entry each, so that a snapshot of thousands of pods is not one document the yaml package must
 * hold at once. Each piece keeps the line it starts on.
 */
function yamlPieces(text: string): { text: string; line: number; entry: boolean }[] {
  const lines = text.split('\n');
  const docs: Line[][] = [];
  let cur: Line[] = [];
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!;
    if (/^---(\s|$)/.test(t) || /^\.\.\.(\s|$)/.test(t)) {
      docs.push(cur);
      cur = [];
      // `--- kind: Pod` keeps what follows the marker on the same line.
      const rest = t.startsWith('---') ? t.slice(3).trim() : '';
      if (rest !== '' && !rest.startsWith('#')) cur.push({ text: rest, number: i + 1 });
      continue;
    }
    cur.push({ text: t, number: i + 1 });
  }
  docs.push(cur);
  const out: { text: string; line: number; entry: boolean }[] = [];
  for (const doc of docs) {
    const content = doc.filter((l) => l.text.trim() !== '' && !l.text.trimStart().startsWith('#'));
    if (content.length === 0) continue;
    const isList = doc.some((l) => /^kind:\s*["']?[A-Za-z]*List["']?\s*(#.*)?$/.test(l.text));
    const itemsAt = doc.findIndex((l) => /^items:\s*(#.*)?$/.test(l.text));
    if (!isList || itemsAt < 0) {
      out.push({ text: doc.map((l) => l.text).join('\n'), line: doc[0]!.number, entry: false });
      continue;
    }
    let entry: Line[] | null = null;
    const flush = (): void => {
      if (entry !== null && entry.length > 0) out.push({ text: entry.map((l) => l.text).join('\n'), line: entry[0]!.number, entry: true });
      entry = null;
    };
    for (let i = itemsAt + 1; i < doc.length; i++) {
      const l = doc[i]!;
      if (/^-(\s|$)/.test(l.text)) {
        flush();
        entry = [l];
      } else if (l.text === '' || /^[\s#]/.test(l.text)) {
        if (entry !== null) entry.push(l);
      } else {
        // Another top-level key: the items are over.
        flush();
        break;
      }
    }
    flush();
  }
  return out;
}

/** A thrown diagnostic with its line moved by the piece's first line and its file named. */
function shifted(e: unknown, file: string, line: number): never {
  if (e instanceof NetfilterSimError) {
    const d = e.diagnostics[0]!;
    const at = d.span ? `${file}:${d.span.line + line - 1}:${d.span.column}: ` : `${file}:${line}: `;
    throw new NetfilterSimError(diagnostic(d.code, at + d.message));
  }
  throw e;
}

function readSource(src: SnapshotSource, out: RawObject[], count: { n: number }): void {
  const text = src.text.startsWith('\ufeff') ? src.text.slice(1) : src.text;
  const push = (value: unknown, origin: Origin): void => {
    // A typed list (`PodList`, as the API serves it) holds its objects like a `List`.
    if (isObj(value) && typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(value['items'])) {
      value['items'].forEach((v: unknown, i: number) => push(v, { file: origin.file, line: null, index: origin.index ?? i }));
      return;
    }
    if (++count.n > MAX_SNAPSHOT_OBJECTS) {
      fail('LIMIT_EXCEEDED', `the snapshot holds more than ${MAX_SNAPSHOT_OBJECTS} objects, the most netfilter-sim reads in one snapshot (at ${originText(origin)})`);
    }
    out.push({ value, origin });
  };
  if (/^\s*[[{]/.test(text)) {
    const pieces = splitJsonStream(text);
    if (pieces !== null) {
      for (const piece of pieces) {
        let values: unknown[];
        try {
          values = readManifests(piece.text);
        } catch (e) {
          shifted(e, src.name, piece.line);
        }
        values.forEach((v, i) => push(v, { file: src.name, line: values.length === 1 ? piece.line : null, index: values.length === 1 ? null : i }));
      }
      return;
    }
  }
  for (const piece of yamlPieces(text)) {
    let values: unknown[];
    try {
      values = readManifests(piece.text);
    } catch (e) {
      shifted(e, src.name, piece.line);
    }
    if (piece.entry) {
      // A `- …` entry reads as a list of one object.
      const list = values[0];
      const items = Array.isArray(list) ? list : [list];
      for (const v of items) push(v, { file: src.name, line: piece.line, index: null });
    } else values.forEach((v, i) => push(v, { file: src.name, line: values.length === 1 ? piece.line : null, index: values.length === 1 ? null : i }));
  }
}

// ---- reading fields -------------------------------------------------------------------------

/** Reads the fields of one object, with its name for messages. */
class Fields {
  readonly who: string;
  readonly origin: Origin;

  constructor(who: string, origin: Origin) {
    this.who = who;
    this.origin = origin;
  }

  bad(path: string, why: string): never {
    return fail('BAD_MANIFEST', `${originText(this.origin)}: ${this.who}: ${path}: ${why}`);
  }

  str(v: unknown, path: string): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') this.bad(path, `must be a string, not ${JSON.stringify(v)}`);
    return v;
  }

  int(v: unknown, path: string, min: number, max: number): number | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) this.bad(path, `must be an integer from ${min} to ${max}, not ${JSON.stringify(v)}`);
    return v;
  }

  bool(v: unknown, path: string): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') this.bad(path, `must be true or false, not ${JSON.stringify(v)}`);
    return v;
  }

  list(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) this.bad(path, 'must be a list');
    return v;
  }

  obj(v: unknown, path: string): Obj | undefined {
    if (v === undefined || v === null) return undefined;
    if (!isObj(v)) this.bad(path, 'must be an object');
    return v;
  }

  stringMap(v: unknown, path: string): Record<string, string> | undefined {
    const o = this.obj(v, path);
    if (o === undefined) return undefined;
    const out: Record<string, string> = {};
    for (const [k, x] of Object.entries(o)) {
      if (typeof x === 'string') out[k] = x;
      else if (typeof x === 'number' || typeof x === 'boolean') out[k] = String(x);
      else this.bad(`${path}.${k}`, 'must be a string');
    }
    return out;
  }

  ip(v: unknown, path: string): IpAddress {
    const s = this.str(v, path);
    const a = s === undefined ? null : parseIp(s);
    if (a === null) return this.bad(path, `${JSON.stringify(v)} is not an IP address`);
    return a;
  }

  cidr(v: unknown, path: string): IpCidr {
    const s = this.str(v, path);
    const c = s === undefined ? null : parseIpCidr(s);
    if (c === null) return this.bad(path, `${JSON.stringify(v)} is not a CIDR (address/prefix length)`);
    return c;
  }

  protocol(v: unknown, path: string): K8sProtocol {
    if (v === undefined || v === null) return 'TCP';
    if (v !== 'TCP' && v !== 'UDP' && v !== 'SCTP') this.bad(path, `${JSON.stringify(v)} is not a protocol (TCP, UDP or SCTP)`);
    return v;
  }

  oneOf<T extends string>(v: unknown, path: string, allowed: readonly T[]): T | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) this.bad(path, `${JSON.stringify(v)} is not one of ${allowed.join(', ')}`);
    return v as T;
  }

  selector(v: unknown, path: string): LabelSelector | undefined {
    const o = this.obj(v, path);
    if (o === undefined) return undefined;
    const matchLabels = this.stringMap(o['matchLabels'], `${path}.matchLabels`);
    const exprs = this.list(o['matchExpressions'], `${path}.matchExpressions`).map((e, i) => {
      const p = `${path}.matchExpressions[${i}]`;
      const x = this.obj(e, p) ?? this.bad(p, 'must be an object');
      const key = this.str(x['key'], `${p}.key`) ?? this.bad(`${p}.key`, 'is required');
      const operator = this.oneOf(x['operator'], `${p}.operator`, ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const) ?? this.bad(`${p}.operator`, 'is required');
      const values = this.list(x['values'], `${p}.values`).map((s, j) => this.str(s, `${p}.values[${j}]`) ?? this.bad(`${p}.values[${j}]`, 'must be a string'));
      return x['values'] === undefined || x['values'] === null ? { key, operator } : { key, operator, values };
    });
    return {
      ...(matchLabels !== undefined ? { matchLabels } : {}),
      ...(o['matchExpressions'] !== undefined && o['matchExpressions'] !== null ? { matchExpressions: exprs } : {}),
    };
  }
}

function metadata(f: Fields, v: unknown, namespaced: boolean): ObjectMeta {
  const m = f.obj(v, 'metadata') ?? f.bad('metadata', 'is required');
  const name = f.str(m['name'], 'metadata.name');
  if (name === undefined || name === '') f.bad('metadata.name', 'is required');
  const namespace = namespaced ? (f.str(m['namespace'], 'metadata.namespace') || 'default') : undefined;
  const labels = f.stringMap(m['labels'], 'metadata.labels');
  const annotations = f.stringMap(m['annotations'], 'metadata.annotations');
  const uid = f.str(m['uid'], 'metadata.uid');
  return {
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(labels !== undefined ? { labels } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
    ...(uid !== undefined ? { uid } : {}),
  };
}

function container(f: Fields, v: unknown, path: string): K8sContainer {
  const c = f.obj(v, path) ?? f.bad(path, 'must be an object');
  const name = f.str(c['name'], `${path}.name`);
  if (name === undefined || name === '') f.bad(`${path}.name`, 'is required');
  const ports = f.list(c['ports'], `${path}.ports`).map((p, i): ContainerPort => {
    const pp = `${path}.ports[${i}]`;
    const o = f.obj(p, pp) ?? f.bad(pp, 'must be an object');
    const containerPort = f.int(o['containerPort'], `${pp}.containerPort`, 1, 65535) ?? f.bad(`${pp}.containerPort`, 'is required');
    const portName = f.str(o['name'], `${pp}.name`);
    const hostPort = f.int(o['hostPort'], `${pp}.hostPort`, 0, 65535);
    const hostIP = o['hostIP'] === undefined || o['hostIP'] === null || o['hostIP'] === '' ? undefined : f.ip(o['hostIP'], `${pp}.hostIP`).text;
    return {
      containerPort,
      protocol: f.protocol(o['protocol'], `${pp}.protocol`),
      ...(portName !== undefined ? { name: portName } : {}),
      ...(hostPort !== undefined && hostPort !== 0 ? { hostPort } : {}),
      ...(hostIP !== undefined ? { hostIP } : {}),
    };
  });
  const args = f.list(c['args'], `${path}.args`).map((a, i) => (typeof a === 'string' ? a : typeof a === 'number' ? String(a) : f.bad(`${path}.args[${i}]`, 'must be a string')));
  const env = f.list(c['env'], `${path}.env`).flatMap((e, i) => {
    const o = f.obj(e, `${path}.env[${i}]`) ?? f.bad(`${path}.env[${i}]`, 'must be an object');
    const n = f.str(o['name'], `${path}.env[${i}].name`) ?? f.bad(`${path}.env[${i}].name`, 'is required');
    const value = typeof o['value'] === 'string' ? o['value'] : undefined;
    return [value !== undefined ? { name: n, value } : { name: n }];
  });
  const sc = f.obj(c['securityContext'], `${path}.securityContext`);
  const runAsUser = f.int(sc?.['runAsUser'], `${path}.securityContext.runAsUser`, 0, 0xffffffff);
  const runAsGroup = f.int(sc?.['runAsGroup'], `${path}.securityContext.runAsGroup`, 0, 0xffffffff);
  const image = f.str(c['image'], `${path}.image`);
  const restartPolicy = f.str(c['restartPolicy'], `${path}.restartPolicy`);
  return {
    name,
    ...(image !== undefined ? { image } : {}),
    ...(ports.length > 0 ? { ports } : {}),
    ...(args.length > 0 ? { args } : {}),
    ...(env.length > 0 ? { env } : {}),
    ...(runAsUser !== undefined || runAsGroup !== undefined
      ? { securityContext: { ...(runAsUser !== undefined ? { runAsUser } : {}), ...(runAsGroup !== undefined ? { runAsGroup } : {}) } }
      : {}),
    ...(restartPolicy !== undefined ? { restartPolicy } : {}),
  };
}

function readPod(f: Fields, o: Obj): K8sPod {
  const meta = metadata(f, o['metadata'], true);
  const spec = f.obj(o['spec'], 'spec') ?? f.bad('spec', 'is required');
  const containers = f.list(spec['containers'], 'spec.containers').map((c, i) => container(f, c, `spec.containers[${i}]`));
  if (containers.length === 0) f.bad('spec.containers', 'is required (a pod has at least one container)');
  const inits = f.list(spec['initContainers'], 'spec.initContainers').map((c, i) => container(f, c, `spec.initContainers[${i}]`));
  const nodeName = f.str(spec['nodeName'], 'spec.nodeName');
  const hostNetwork = f.bool(spec['hostNetwork'], 'spec.hostNetwork');
  const psc = f.obj(spec['securityContext'], 'spec.securityContext');
  const runAsUser = f.int(psc?.['runAsUser'], 'spec.securityContext.runAsUser', 0, 0xffffffff);
  const runAsGroup = f.int(psc?.['runAsGroup'], 'spec.securityContext.runAsGroup', 0, 0xffffffff);
  const status = f.obj(o['status'], 'status');
  const ips = f.list(status?.['podIPs'], 'status.podIPs').map((p, i) => {
    const x = f.obj(p, `status.podIPs[${i}]`) ?? f.bad(`status.podIPs[${i}]`, 'must be an object');
    return { ip: f.ip(x['ip'], `status.podIPs[${i}].ip`).text };
  });
  const podIP = status?.['podIP'] === undefined || status['podIP'] === null || status['podIP'] === '' ? undefined : f.ip(status['podIP'], 'status.podIP').text;
  if (ips.length === 0 && podIP !== undefined) ips.push({ ip: podIP });
  if (ips.length > 2) f.bad('status.podIPs', 'holds more than two addresses (one per family)');
  if (ips.length === 2 && parseIp(ips[0]!.ip)!.family === parseIp(ips[1]!.ip)!.family) f.bad('status.podIPs', 'holds two addresses of one family');
  const hostIP = status?.['hostIP'] === undefined || status['hostIP'] === null || status['hostIP'] === '' ? undefined : f.ip(status['hostIP'], 'status.hostIP').text;
  const phase = f.str(status?.['phase'], 'status.phase');
  return {
    kind: 'Pod',
    metadata: meta,
    spec: {
      ...(nodeName !== undefined && nodeName !== '' ? { nodeName } : {}),
      ...(hostNetwork === true ? { hostNetwork } : {}),
      containers,
      ...(inits.length > 0 ? { initContainers: inits } : {}),
      ...(runAsUser !== undefined || runAsGroup !== undefined
        ? { securityContext: { ...(runAsUser !== undefined ? { runAsUser } : {}), ...(runAsGroup !== undefined ? { runAsGroup } : {}) } }
        : {}),
    },
    status: {
      ...(ips.length > 0 ? { podIP: ips[0]!.ip, podIPs: ips } : {}),
      ...(hostIP !== undefined ? { hostIP } : {}),
      ...(phase !== undefined ? { phase } : {}),
    },
  };
}

const ADDRESS_TYPES = ['InternalIP', 'ExternalIP', 'Hostname', 'InternalDNS', 'ExternalDNS'] as const;

function readNode(f: Fields, o: Obj): K8sNode {
  const meta = metadata(f, o['metadata'], false);
  const spec = f.obj(o['spec'], 'spec');
  const podCIDR = spec?.['podCIDR'] === undefined || spec['podCIDR'] === null || spec['podCIDR'] === '' ? undefined : f.cidr(spec['podCIDR'], 'spec.podCIDR').text;
  const podCIDRs = f.list(spec?.['podCIDRs'], 'spec.podCIDRs').map((c, i) => f.cidr(c, `spec.podCIDRs[${i}]`).text);
  if (podCIDRs.length > 2) f.bad('spec.podCIDRs', 'holds more than two CIDRs (one per family)');
  if (podCIDRs.length === 2 && parseIpCidr(podCIDRs[0]!)!.family === parseIpCidr(podCIDRs[1]!)!.family) f.bad('spec.podCIDRs', 'holds two CIDRs of one family');
  if (podCIDR !== undefined && podCIDRs.length > 0 && podCIDRs[0] !== podCIDR) f.bad('spec.podCIDR', `${podCIDR} is not spec.podCIDRs[0] (${podCIDRs[0]})`);
  const cidrs = podCIDRs.length > 0 ? podCIDRs : podCIDR !== undefined ? [podCIDR] : [];
  const status = f.obj(o['status'], 'status');
  const addresses: NodeAddress[] = [];
  f.list(status?.['addresses'], 'status.addresses').forEach((a, i) => {
    const x = f.obj(a, `status.addresses[${i}]`) ?? f.bad(`status.addresses[${i}]`, 'must be an object');
    const type = f.str(x['type'], `status.addresses[${i}].type`);
    if (type === undefined || !(ADDRESS_TYPES as readonly string[]).includes(type)) return;
    const address = type === 'InternalIP' || type === 'ExternalIP' ? f.ip(x['address'], `status.addresses[${i}].address`).text : (f.str(x['address'], `status.addresses[${i}].address`) ?? '');
    addresses.push({ type: type as NodeAddress['type'], address });
  });
  return {
    kind: 'Node',
    metadata: meta,
    spec: cidrs.length > 0 ? { podCIDR: cidrs[0]!, podCIDRs: cidrs } : {},
    status: { addresses },
  };
}

const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] as const;

function readService(f: Fields, o: Obj): K8sService {
  const meta = metadata(f, o['metadata'], true);
  const spec = f.obj(o['spec'], 'spec') ?? f.bad('spec', 'is required');
  const type = f.oneOf(spec['type'], 'spec.type', SERVICE_TYPES) ?? 'ClusterIP';
  const clusterIPText = f.str(spec['clusterIP'], 'spec.clusterIP');
  const ipOf = (v: unknown, path: string): string => (v === 'None' ? 'None' : f.ip(v, path).text);
  const clusterIPs = f.list(spec['clusterIPs'], 'spec.clusterIPs').map((c, i) => ipOf(c, `spec.clusterIPs[${i}]`));
  const clusterIP = clusterIPText === undefined || clusterIPText === '' ? clusterIPs[0] : ipOf(clusterIPText, 'spec.clusterIP');
  if (clusterIP !== undefined && clusterIPs.length === 0) clusterIPs.push(clusterIP);
  if (clusterIP !== undefined && clusterIPs[0] !== clusterIP) f.bad('spec.clusterIP', `${clusterIP} is not spec.clusterIPs[0] (${clusterIPs[0]})`);
  const ports = f.list(spec['ports'], 'spec.ports').map((p, i): ServicePort => {
    const pp = `spec.ports[${i}]`;
    const x = f.obj(p, pp) ?? f.bad(pp, 'must be an object');
    const port = f.int(x['port'], `${pp}.port`, 1, 65535) ?? f.bad(`${pp}.port`, 'is required');
    const tp = x['targetPort'];
    let targetPort: number | string;
    if (tp === undefined || tp === null || tp === 0 || tp === '') targetPort = port;
    else if (typeof tp === 'number') targetPort = f.int(tp, `${pp}.targetPort`, 1, 65535)!;
    else if (typeof tp === 'string' && /^\d+$/.test(tp)) targetPort = f.int(Number(tp), `${pp}.targetPort`, 1, 65535)!;
    else if (typeof tp === 'string' && /^[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?$/.test(tp) && /[a-z]/.test(tp) && !tp.includes('--')) targetPort = tp;
    else return f.bad(`${pp}.targetPort`, `${JSON.stringify(tp)} is neither a port number nor a port name (IANA_SVC_NAME: at most 15 lower-case letters, digits and single hyphens)`);
    const name = f.str(x['name'], `${pp}.name`);
    const nodePort = f.int(x['nodePort'], `${pp}.nodePort`, 1, 65535);
    return {
      ...(name !== undefined ? { name } : {}),
      protocol: f.protocol(x['protocol'], `${pp}.protocol`),
      port,
      targetPort,
      ...(nodePort !== undefined && nodePort !== 0 ? { nodePort } : {}),
    };
  });
  const selector = f.stringMap(spec['selector'], 'spec.selector');
  const externalIPs = f.list(spec['externalIPs'], 'spec.externalIPs').map((a, i) => f.ip(a, `spec.externalIPs[${i}]`).text);
  const ipFamilies = f.list(spec['ipFamilies'], 'spec.ipFamilies').map((x, i) => f.oneOf(x, `spec.ipFamilies[${i}]`, ['IPv4', 'IPv6'] as const)!);
  const external = type === 'NodePort' || type === 'LoadBalancer';
  const etp = f.oneOf(spec['externalTrafficPolicy'], 'spec.externalTrafficPolicy', ['Cluster', 'Local'] as const);
  const itp = f.oneOf(spec['internalTrafficPolicy'], 'spec.internalTrafficPolicy', ['Cluster', 'Local'] as const) ?? 'Cluster';
  const affinity = f.oneOf(spec['sessionAffinity'], 'spec.sessionAffinity', ['None', 'ClientIP'] as const) ?? 'None';
  const sac = f.obj(spec['sessionAffinityConfig'], 'spec.sessionAffinityConfig');
  const timeout = f.int(f.obj(sac?.['clientIP'], 'spec.sessionAffinityConfig.clientIP')?.['timeoutSeconds'], 'spec.sessionAffinityConfig.clientIP.timeoutSeconds', 1, 86400);
  const hcnp = f.int(spec['healthCheckNodePort'], 'spec.healthCheckNodePort', 1, 65535);
  const lbsr = f.list(spec['loadBalancerSourceRanges'], 'spec.loadBalancerSourceRanges').map((c, i) => f.cidr(c, `spec.loadBalancerSourceRanges[${i}]`).text);
  const status = f.obj(o['status'], 'status');
  const lb = f.obj(status?.['loadBalancer'], 'status.loadBalancer');
  const ingress = f.list(lb?.['ingress'], 'status.loadBalancer.ingress').map((x, i) => {
    const e = f.obj(x, `status.loadBalancer.ingress[${i}]`) ?? {};
    const ip = e['ip'] === undefined || e['ip'] === null || e['ip'] === '' ? undefined : f.ip(e['ip'], `status.loadBalancer.ingress[${i}].ip`).text;
    const hostname = f.str(e['hostname'], `status.loadBalancer.ingress[${i}].hostname`);
    return { ...(ip !== undefined ? { ip } : {}), ...(hostname !== undefined ? { hostname } : {}) };
  });
  return {
    kind: 'Service',
    metadata: meta,
    spec: {
      type,
      ...(selector !== undefined ? { selector } : {}),
      ...(clusterIP !== undefined ? { clusterIP, clusterIPs } : {}),
      ...(ipFamilies.length > 0 ? { ipFamilies } : {}),
      ports,
      ...(externalIPs.length > 0 ? { externalIPs } : {}),
      ...(external ? { externalTrafficPolicy: etp ?? 'Cluster' } : {}),
      internalTrafficPolicy: itp,
      sessionAffinity: affinity,
      ...(affinity === 'ClientIP' ? { sessionAffinityConfig: { clientIP: { timeoutSeconds: timeout ?? 10800 } } } : {}),
      ...(hcnp !== undefined ? { healthCheckNodePort: hcnp } : {}),
      ...(lbsr.length > 0 ? { loadBalancerSourceRanges: lbsr } : {}),
    },
    ...(ingress.length > 0 ? { status: { loadBalancer: { ingress } } } : {}),
  };
}

function readEndpointSlice(f: Fields, o: Obj): K8sEndpointSlice {
  const meta = metadata(f, o['metadata'], true);
  const addressType = f.oneOf(o['addressType'], 'addressType', ['IPv4', 'IPv6', 'FQDN'] as const) ?? f.bad('addressType', 'is required');
  const endpoints = f.list(o['endpoints'], 'endpoints').map((e, i): Endpoint => {
    const p = `endpoints[${i}]`;
    const x = f.obj(e, p) ?? f.bad(p, 'must be an object');
    const addresses = f.list(x['addresses'], `${p}.addresses`).map((a, j) => {
      if (addressType === 'FQDN') return f.str(a, `${p}.addresses[${j}]`) ?? '';
      const ip = f.ip(a, `${p}.addresses[${j}]`);
      if ((ip.family === 4) !== (addressType === 'IPv4')) f.bad(`${p}.addresses[${j}]`, `${ip.text} is not an ${addressType} address`);
      return ip.text;
    });
    if (addresses.length === 0) f.bad(`${p}.addresses`, 'is required (at least one address)');
    const c = f.obj(x['conditions'], `${p}.conditions`);
    const ready = f.bool(c?.['ready'], `${p}.conditions.ready`);
    const serving = f.bool(c?.['serving'], `${p}.conditions.serving`);
    const terminating = f.bool(c?.['terminating'], `${p}.conditions.terminating`);
    const nodeName = f.str(x['nodeName'], `${p}.nodeName`);
    const t = f.obj(x['targetRef'], `${p}.targetRef`);
    return {
      addresses,
      conditions: {
        ...(ready !== undefined ? { ready } : {}),
        ...(serving !== undefined ? { serving } : {}),
        ...(terminating !== undefined ? { terminating } : {}),
      },
      ...(nodeName !== undefined ? { nodeName } : {}),
      ...(t !== undefined
        ? {
            targetRef: {
              ...(typeof t['kind'] === 'string' ? { kind: t['kind'] } : {}),
              ...(typeof t['namespace'] === 'string' ? { namespace: t['namespace'] } : {}),
              ...(typeof t['name'] === 'string' ? { name: t['name'] } : {}),
            },
          }
        : {}),
    };
  });
  const ports = f.list(o['ports'], 'ports').map((p, i): EndpointPort => {
    const x = f.obj(p, `ports[${i}]`) ?? f.bad(`ports[${i}]`, 'must be an object');
    const name = f.str(x['name'], `ports[${i}].name`);
    const port = f.int(x['port'], `ports[${i}].port`, 1, 65535);
    return { ...(name !== undefined ? { name } : {}), protocol: f.protocol(x['protocol'], `ports[${i}].protocol`), ...(port !== undefined ? { port } : {}) };
  });
  return { kind: 'EndpointSlice', metadata: meta, addressType, endpoints, ports };
}

/**
 * A NetworkPolicy: its shape is checked (objects and lists where the API has them, selectors'
 * operators) and `policyTypes` defaulted as the API server defaults it; the rules' own
 * semantics are the policy evaluator's.
 */
function readNetworkPolicy(f: Fields, o: Obj): K8sNetworkPolicy {
  const meta = metadata(f, o['metadata'], true);
  const spec = f.obj(o['spec'], 'spec') ?? f.bad('spec', 'is required');
  const podSelector = f.selector(spec['podSelector'], 'spec.podSelector') ?? f.bad('spec.podSelector', 'is required');
  const types = f.list(spec['policyTypes'], 'spec.policyTypes').map((t, i) => f.oneOf(t, `spec.policyTypes[${i}]`, ['Ingress', 'Egress'] as const)!);
  const peers = (list: unknown, path: string): unknown[] =>
    f.list(list, path).map((p, i) => {
      const x = f.obj(p, `${path}[${i}]`) ?? f.bad(`${path}[${i}]`, 'must be an object');
      const ps = f.selector(x['podSelector'], `${path}[${i}].podSelector`);
      const ns = f.selector(x['namespaceSelector'], `${path}[${i}].namespaceSelector`);
      const ib = f.obj(x['ipBlock'], `${path}[${i}].ipBlock`);
      const ipBlock = ib === undefined
        ? undefined
        : {
            cidr: f.str(ib['cidr'], `${path}[${i}].ipBlock.cidr`) ?? f.bad(`${path}[${i}].ipBlock.cidr`, 'is required'),
            ...(ib['except'] !== undefined && ib['except'] !== null ? { except: f.list(ib['except'], `${path}[${i}].ipBlock.except`).map((e, j) => f.str(e, `${path}[${i}].ipBlock.except[${j}]`) ?? '') } : {}),
          };
      return { ...(ps !== undefined ? { podSelector: ps } : {}), ...(ns !== undefined ? { namespaceSelector: ns } : {}), ...(ipBlock !== undefined ? { ipBlock } : {}) };
    });
  const ports = (list: unknown, path: string): unknown[] =>
    f.list(list, path).map((p, i) => {
      const x = f.obj(p, `${path}[${i}]`) ?? f.bad(`${path}[${i}]`, 'must be an object');
      const port = x['port'];
      if (port !== undefined && port !== null && typeof port !== 'number' && typeof port !== 'string') f.bad(`${path}[${i}].port`, 'must be a number or a name');
      const endPort = f.int(x['endPort'], `${path}[${i}].endPort`, 1, 65535);
      return {
        protocol: f.protocol(x['protocol'], `${path}[${i}].protocol`),
        ...(port !== undefined && port !== null ? { port } : {}),
        ...(endPort !== undefined ? { endPort } : {}),
      };
    });
  const rules = (key: 'ingress' | 'egress', peerKey: 'from' | 'to'): unknown[] | undefined => {
    if (spec[key] === undefined || spec[key] === null) return undefined;
    return f.list(spec[key], `spec.${key}`).map((r, i) => {
      const x = f.obj(r, `spec.${key}[${i}]`) ?? f.bad(`spec.${key}[${i}]`, 'must be an object');
      return {
        ...(x[peerKey] !== undefined && x[peerKey] !== null ? { [peerKey]: peers(x[peerKey], `spec.${key}[${i}].${peerKey}`) } : {}),
        ...(x['ports'] !== undefined && x['ports'] !== null ? { ports: ports(x['ports'], `spec.${key}[${i}].ports`) } : {}),
      };
    });
  };
  const ingress = rules('ingress', 'from');
  const egress = rules('egress', 'to');
  // The API server's default: Ingress always, Egress when the policy has egress rules.
  const policyTypes = types.length > 0 ? types : egress !== undefined ? (['Ingress', 'Egress'] as const) : (['Ingress'] as const);
  return {
    kind: 'NetworkPolicy',
    metadata: meta,
    spec: {
      podSelector,
      policyTypes: [...policyTypes],
      ...(ingress !== undefined ? { ingress: ingress as K8sNetworkPolicy['spec']['ingress'] } : {}),
      ...(egress !== undefined ? { egress: egress as K8sNetworkPolicy['spec']['egress'] } : {}),
    },
  };
}

function readNamespace(f: Fields, o: Obj): K8sNamespace {
  const meta = metadata(f, o['metadata'], false);
  // The API server labels every namespace with its name (since Kubernetes 1.21).
  return { kind: 'Namespace', metadata: { ...meta, labels: { ...meta.labels, 'kubernetes.io/metadata.name': meta.name } } };
}

// ---- the snapshot ---------------------------------------------------------------------------

/** `ns/name` of a namespaced object, `name` of a cluster-scoped one. */
export function objectName(o: { readonly metadata: ObjectMeta }): string {
  expectArgument(o, 'object', 'object');
  expectFields(o, { metadata: 'object' }, 'object');
  return o.metadata.namespace !== undefined ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

function nameOf(value: unknown): string {
  if (!isObj(value) || !isObj(value['metadata'])) return '(no metadata)';
  const m = value['metadata'];
  const name = typeof m['name'] === 'string' && m['name'] !== '' ? m['name'] : '(no name)';
  // Namespaced kinds without a namespace are in `default`, as the API puts them.
  const namespaced = value['kind'] !== 'Node' && value['kind'] !== 'Namespace';
  const ns = typeof m['namespace'] === 'string' && m['namespace'] !== '' ? m['namespace'] : namespaced && (KINDS as readonly unknown[]).includes(value['kind']) ? 'default' : null;
  return ns !== null ? `${ns}/${name}` : name;
}

/**
 * Reads a snapshot: one text, or several (files of a directory), each YAML (one or more
 * documents, `List`s expanded) or JSON (one or more values). Objects of other kinds are skipped
 * with a warning naming them; pods that cannot be placed on the cluster path (no node, no
 * address, finished, an address another pod holds) are left out with a warning naming them.
 * Malformed objects are a `BAD_MANIFEST` error naming the file, the object and the field; past
 * the limits ({@link MAX_SNAPSHOT_BYTES}, {@link MAX_SNAPSHOT_FILES}, {@link MAX_SNAPSHOT_OBJECTS},
 * {@link MAX_SNAPSHOT_NODES}, {@link MAX_PODS_PER_NODE}) a `LIMIT_EXCEEDED` or
 * `INPUT_TOO_LARGE` error.
 *
 * @example
 * ```ts
 * import { readSnapshot } from 'netfilter-sim';
 * const snapshot = readSnapshot([{ name: 'cluster.yaml', text: yamlText }]);
 * snapshot.pods.map((p) => p.metadata.name);
 * ```
 */
export function readSnapshot(input: string | SnapshotSource | readonly SnapshotSource[]): Snapshot {
  expectArgument(input, ['string', 'object', 'array'], 'snapshot');
  const sources: SnapshotSource[] = typeof input === 'string' ? [{ name: '<snapshot>', text: input }] : Array.isArray(input) ? [...(input as readonly SnapshotSource[])] : [input as SnapshotSource];
  if (sources.length > MAX_SNAPSHOT_FILES) fail('LIMIT_EXCEEDED', `the snapshot is ${sources.length} files; netfilter-sim reads at most ${MAX_SNAPSHOT_FILES}`);
  let bytes = 0;
  for (const s of sources) {
    expectArgument(s, 'object', 'snapshot source');
    expectArgument(s.name, 'string', 'snapshot source name');
    expectArgument(s.text, 'string', `snapshot source ${s.name}`);
    bytes += s.text.length * 3 <= MAX_SNAPSHOT_BYTES ? s.text.length : utf8Length(s.text);
    if (bytes > MAX_SNAPSHOT_BYTES) fail('INPUT_TOO_LARGE', `the snapshot is larger than ${MAX_SNAPSHOT_BYTES} bytes (${MAX_SNAPSHOT_BYTES / (1024 * 1024)} MiB), the most netfilter-sim reads in one snapshot (at ${s.name})`);
  }
  const raw: RawObject[] = [];
  const count = { n: 0 };
  for (const s of sources) readSource(s, raw, count);

  const warnings: string[] = [];
  const namespaces: K8sNamespace[] = [];
  const nodes: K8sNode[] = [];
  const pods: K8sPod[] = [];
  const services: K8sService[] = [];
  const slices: K8sEndpointSlice[] = [];
  const policies: K8sNetworkPolicy[] = [];
  const seen = new Map<string, Origin>();
  const skipped = new Map<string, string[]>();
  for (const { value, origin } of raw) {
    if (!isObj(value)) {
      warnings.push(`${originText(origin)}: a document that is not an object (${value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value}): skipped`);
      continue;
    }
    const kind = typeof value['kind'] === 'string' ? value['kind'] : '';
    if (!(KINDS as readonly string[]).includes(kind)) {
      const k = kind === '' ? '(no kind)' : kind;
      const list = skipped.get(k) ?? [];
      list.push(nameOf(value));
      skipped.set(k, list);
      continue;
    }
    const f = new Fields(`${kind} ${nameOf(value)}`, origin);
    let obj: K8sNamespace | K8sNode | K8sPod | K8sService | K8sEndpointSlice | K8sNetworkPolicy;
    switch (kind) {
      case 'Namespace': obj = readNamespace(f, value); break;
      case 'Node': obj = readNode(f, value); break;
      case 'Pod': obj = readPod(f, value); break;
      case 'Service': obj = readService(f, value); break;
      case 'EndpointSlice': obj = readEndpointSlice(f, value); break;
      default: obj = readNetworkPolicy(f, value);
    }
    const key = `${kind} ${objectName(obj)}`;
    const before = seen.get(key);
    if (before !== undefined) {
      warnings.push(`${key}: given twice (${originText(before)} and ${originText(origin)}): the second is skipped`);
      continue;
    }
    seen.set(key, origin);
    switch (obj.kind) {
      case 'Namespace': namespaces.push(obj); break;
      case 'Node': nodes.push(obj); break;
      case 'Pod': pods.push(obj); break;
      case 'Service': services.push(obj); break;
      case 'EndpointSlice': slices.push(obj); break;
      case 'NetworkPolicy': policies.push(obj); break;
    }
  }
  for (const [kind, names] of skipped) {
    const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? `, and ${names.length - 3} more` : '');
    warnings.push(`${names.length} object${names.length === 1 ? '' : 's'} of kind ${kind} skipped (${shown}): the cluster path reads ${KINDS.join(', ')}${kind === 'Endpoints' ? ' (kube-proxy reads EndpointSlices)' : ''}`);
  }
  if (nodes.length > MAX_SNAPSHOT_NODES) fail('LIMIT_EXCEEDED', `the snapshot holds ${nodes.length} nodes; netfilter-sim reads at most ${MAX_SNAPSHOT_NODES}`);
  const keptNodes = checkNodes(nodes, warnings);
  const keptPods = placePods(pods, keptNodes, warnings);
  for (const s of services) {
    const sel = s.spec.selector;
    if (sel === undefined || Object.keys(sel).length === 0) continue;
    const ns = s.metadata.namespace;
    const hit = keptPods.some((p) => p.metadata.namespace === ns && Object.entries(sel).every(([k, v]) => p.metadata.labels?.[k] === v));
    if (!hit) warnings.push(`Service ${objectName(s)}: its selector (${Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(',')}) selects no pod of the snapshot`);
  }
  const keptSlices: K8sEndpointSlice[] = [];
  for (const e of slices) {
    const svc = e.metadata.labels?.['kubernetes.io/service-name'];
    if (svc === undefined) {
      warnings.push(`EndpointSlice ${objectName(e)}: no kubernetes.io/service-name label: skipped`);
      continue;
    }
    if (!services.some((s) => s.metadata.namespace === e.metadata.namespace && s.metadata.name === svc)) {
      warnings.push(`EndpointSlice ${objectName(e)}: its Service ${e.metadata.namespace}/${svc} is not in the snapshot: skipped`);
      continue;
    }
    keptSlices.push(e);
  }
  return { namespaces, nodes: keptNodes, pods: keptPods, services, endpointSlices: keptSlices, networkPolicies: policies, warnings };
}

/** The InternalIPs and pod CIDRs of a node, parsed. */
export function nodeAddresses(n: K8sNode): { readonly internal: readonly IpAddress[]; readonly cidrs: readonly IpCidr[] } {
  const internal = (n.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => parseIp(a.address)!);
  const cidrs = (n.spec?.podCIDRs ?? (n.spec?.podCIDR !== undefined ? [n.spec.podCIDR] : [])).map((c) => parseIpCidr(c)!);
  return { internal, cidrs };
}

/** Nodes without an InternalIP are left out; shared InternalIPs and overlapping pod CIDRs are errors. */
function checkNodes(nodes: readonly K8sNode[], warnings: string[]): K8sNode[] {
  const kept: K8sNode[] = [];
  const byAddress = new Map<string, string>();
  const cidrs: { cidr: IpCidr; node: string }[] = [];
  for (const n of nodes) {
    const a = nodeAddresses(n);
    const name = n.metadata.name;
    if (a.internal.length === 0) {
      warnings.push(`Node ${name}: no InternalIP in status.addresses: left out of the cluster, with its pods`);
      continue;
    }
    const fams = new Set<number>();
    for (const ip of a.internal) {
      if (fams.has(ip.family)) continue;
      fams.add(ip.family);
      const other = byAddress.get(ip.text);
      if (other !== undefined) fail('BAD_MANIFEST', `Node ${name}: InternalIP ${ip.text} is also node ${other}'s`);
      byAddress.set(ip.text, name);
    }
    if (a.cidrs.length === 0) warnings.push(`Node ${name}: no spec.podCIDR(s): its pods' addresses are routed one by one`);
    for (const c of a.cidrs) {
      const clash = cidrs.find((x) => cidrsOverlap(x.cidr, c));
      if (clash !== undefined) fail('BAD_MANIFEST', `Node ${name}: pod CIDR ${c.text} overlaps node ${clash.node}'s ${clash.cidr.text}`);
      cidrs.push({ cidr: c, node: name });
    }
    kept.push(n);
  }
  return kept;
}

/**
 * The pods the cluster path can place: running on a node of the snapshot, with addresses no
 * other pod or node holds, inside their node's pod CIDRs. The rest are left out, each with a
 * warning that says why.
 */
function placePods(pods: readonly K8sPod[], nodes: readonly K8sNode[], warnings: string[]): K8sPod[] {
  const byName = new Map(nodes.map((n) => [n.metadata.name, n]));
  const nodeAddrs = new Map<string, string>();
  for (const n of nodes) for (const ip of nodeAddresses(n).internal) nodeAddrs.set(ip.text, n.metadata.name);
  const holders = new Map<string, string>();
  const perNode = new Map<string, number>();
  const kept: K8sPod[] = [];
  for (const p of pods) {
    const who = `Pod ${objectName(p)}`;
    const phase = p.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') {
      warnings.push(`${who}: phase ${phase} (its containers have exited): left out of the cluster`);
      continue;
    }
    const nodeName = p.spec.nodeName;
    if (nodeName === undefined) {
      warnings.push(`${who}: no spec.nodeName (not scheduled): left out of the cluster`);
      continue;
    }
    const node = byName.get(nodeName);
    if (node === undefined) {
      warnings.push(`${who}: its node ${nodeName} is not in the snapshot (or has no InternalIP): left out of the cluster`);
      continue;
    }
    const n = (perNode.get(nodeName) ?? 0) + 1;
    if (n > MAX_PODS_PER_NODE) fail('LIMIT_EXCEEDED', `node ${nodeName} holds more than ${MAX_PODS_PER_NODE} pods, the most netfilter-sim places on one node (at ${who})`);
    if (p.spec.hostNetwork === true) {
      perNode.set(nodeName, n);
      kept.push(p);
      continue;
    }
    const ips = (p.status?.podIPs ?? []).map((x) => parseIp(x.ip)!);
    if (ips.length === 0) {
      warnings.push(`${who}: no status.podIPs${phase !== undefined ? ` (phase ${phase})` : ''}: left out of the cluster`);
      continue;
    }
    const { cidrs } = nodeAddresses(node);
    let why: string | null = null;
    for (const ip of ips) {
      const holder = holders.get(ip.text);
      if (holder !== undefined) why = `its address ${ip.text} is also pod ${holder}'s`;
      else if (nodeAddrs.has(ip.text)) why = `its address ${ip.text} is node ${nodeAddrs.get(ip.text)}'s InternalIP (and the pod is not hostNetwork)`;
      else {
        const fam = cidrs.filter((c) => c.family === ip.family);
        if (fam.length > 0 && !fam.some((c) => cidrHolds(c, ip))) why = `its address ${ip.text} is outside node ${nodeName}'s pod CIDR ${fam.map((c) => c.text).join(', ')}`;
      }
      if (why !== null) break;
    }
    if (why !== null) {
      warnings.push(`${who}: ${why}: left out of the cluster`);
      continue;
    }
    for (const ip of ips) holders.set(ip.text, objectName(p));
    perNode.set(nodeName, n);
    kept.push(p);
  }
  return kept;
}
