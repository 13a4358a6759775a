/**
 * The shape of the snapshot objects the cluster compilers read, checked before they read them: a
 * snapshot built by hand or parsed from YAML may hold a string where the API has a number, or
 * miss `metadata`. Only the fields the compilers read are checked, and only their JSON kinds;
 * values (addresses, CIDRs, ranges) are the compilers' own business.
 *
 * @module
 */
import { diagnostic, NetfilterSimError } from '../model/errors.js';
import type { Snapshot } from '../model/kubernetes.js';

/** A JSON kind (`port`: an integer 0–65535), or a nested shape (an object's fields), or `[shape]` (an array of that shape). */
type Shape = 'string' | 'number' | 'port' | 'boolean' | 'strings' | 'record' | { readonly [field: string]: Shape } | readonly [Shape];

/** Fields marked `!` are required; every other one may be absent (undefined). */
const META: Shape = { 'name!': 'string', namespace: 'string', uid: 'string', labels: 'record', annotations: 'record' };
const SHAPES: Readonly<Record<'nodes' | 'services' | 'endpointSlices' | 'pods', Shape>> = {
  nodes: {
    'metadata!': META,
    spec: { podCIDR: 'string', podCIDRs: 'strings' },
    status: { addresses: [{ 'type!': 'string', 'address!': 'string' }] },
  },
  services: {
    'metadata!': META,
    'spec!': {
      type: 'string',
      clusterIP: 'string',
      clusterIPs: 'strings',
      ipFamilies: 'strings',
      externalIPs: 'strings',
      loadBalancerSourceRanges: 'strings',
      externalTrafficPolicy: 'string',
      internalTrafficPolicy: 'string',
      healthCheckNodePort: 'port',
      sessionAffinity: 'string',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 'number' } },
      ports: [{ name: 'string', protocol: 'string', 'port!': 'port', nodePort: 'port' }],
    },
    status: { loadBalancer: { ingress: [{ ip: 'string', ipMode: 'string' }] } },
  },
  endpointSlices: {
    'metadata!': META,
    'addressType!': 'string',
    endpoints: [{ 'addresses!': 'strings', nodeName: 'string', conditions: { ready: 'boolean', serving: 'boolean', terminating: 'boolean' } }],
    ports: [{ name: 'string', protocol: 'string', port: 'port' }],
  },
  pods: {
    'metadata!': META,
    'spec!': {
      nodeName: 'string',
      hostNetwork: 'boolean',
      'containers!': [{ ports: [{ 'containerPort!': 'port', hostPort: 'port', hostIP: 'string', protocol: 'string' }] }],
    },
    status: { podIP: 'string', podIPs: [{ 'ip!': 'string' }] },
  },
};

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return String(v);
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

function fail(path: string, want: string, v: unknown): never {
  throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `${path} must be ${want}, not ${kindOf(v)}${typeof v === 'string' ? ` (${JSON.stringify(v.slice(0, 40))})` : ''}`));
}

function check(v: unknown, shape: Shape, path: string): void {
  if (shape === 'string' || shape === 'boolean') {
    if (typeof v !== shape) fail(path, `a ${shape}`, v);
  } else if (shape === 'number') {
    if (typeof v !== 'number' || !Number.isFinite(v)) fail(path, 'a number', v);
  } else if (shape === 'port') {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 65535) fail(path, 'a port number (an integer 0–65535)', v);
  } else if (shape === 'strings') {
    if (!Array.isArray(v)) fail(path, 'an array of strings', v);
    v.forEach((x: unknown, i) => typeof x !== 'string' && fail(`${path}[${i}]`, 'a string', x));
  } else if (shape === 'record') {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'an object of strings', v);
    for (const [k, x] of Object.entries(v)) if (typeof x !== 'string') fail(`${path}.${k}`, 'a string', x);
  } else if (Array.isArray(shape)) {
    if (!Array.isArray(v)) fail(path, 'an array', v);
    const item = (shape as readonly [Shape])[0];
    v.forEach((x: unknown, i) => check(x, item, `${path}[${i}]`));
  } else {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(path, 'an object', v);
    const o = v as Record<string, unknown>;
    for (const [key, sub] of Object.entries(shape as Record<string, Shape>)) {
      const required = key.endsWith('!');
      const name = required ? key.slice(0, -1) : key;
      const x = o[name];
      if (x === undefined) {
        if (required) throw new NetfilterSimError(diagnostic('BAD_MANIFEST', `${path}.${name} is missing`));
        continue;
      }
      check(x, sub, `${path}.${name}`);
    }
  }
}

/**
 * Throws `BAD_MANIFEST`, naming the path (`snapshot.services[3].spec.ports[0].port`), unless the
 * listed lists of `snapshot` are arrays of objects with the fields the compilers read of the
 * kinds the API gives them.
 */
export function checkSnapshotShape(snapshot: Snapshot, lists: readonly (keyof typeof SHAPES)[]): void {
  for (const list of lists) {
    const items: unknown = snapshot[list];
    if (!Array.isArray(items)) fail(`snapshot.${list}`, 'an array', items);
    const shape = SHAPES[list];
    items.forEach((x: unknown, i) => check(x, shape, `snapshot.${list}[${i}]`));
  }
}
