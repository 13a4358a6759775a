/**
 * NetworkPolicy validation as the API server does it (`pkg/apis/networking/validation`:
 * `ValidateNetworkPolicy`, `ValidateNetworkPolicyPort`, `ValidateNetworkPolicyPeer`,
 * `ValidateIPBlock`; label selectors as `metav1/validation.ValidateLabelSelector`), and the defaults
 * it applies to what it accepts (`pkg/apis/networking/v1/defaults.go`): a port's protocol is TCP,
 * and `policyTypes`, when empty, is `Ingress` plus `Egress` when the policy has egress rules.
 *
 * A policy read from a file has not been through the API server; what it would refuse is
 * reported here, field by field, with the path `kubectl apply` prints
 * (`spec.ingress[0].ports[1].endPort: Invalid value: 80: must be greater than or equal to \`port\``).
 * Shapes the API's decoder refuses before validation (a port that is neither a number nor a
 * string, a list that is not a list) are reported the same way.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { expectArgument } from '../model/guard.js';
import type { Diagnostic } from '../model/errors.js';
import type {
  K8sNetworkPolicy, K8sProtocol, LabelSelector, NetworkPolicyEgressRule, NetworkPolicyIngressRule,
  NetworkPolicyPeer, NetworkPolicyPort,
} from '../model/kubernetes.js';
import { parseK8sCidr } from './cidr.js';
import { dns1123SubdomainErrors, labelValueErrors, qualifiedNameErrors } from './labels.js';

/** The kinds of `field.Error` the API server reports. */
export type FieldErrorType = 'Invalid' | 'Required' | 'Forbidden' | 'NotSupported';

/** One reason the API server would refuse a policy. */
export interface NetpolFieldError {
  /** `namespace/name` of the policy (`<unnamed>` when it has none). */
  readonly policy: string;
  /** The field path, as the API server writes it: `spec.ingress[0].ports[1].endPort`. */
  readonly field: string;
  readonly type: FieldErrorType;
  /** The offending value, where there is one. */
  readonly value?: unknown;
  readonly detail: string;
  /** `FIELD: Invalid value: VALUE: DETAIL`, as `kubectl apply` prints it. */
  readonly message: string;
}

/** Options of {@link validateNetworkPolicy}. */
export interface ValidateOptions {
  /**
   * Validate CIDRs with the strict reading (the `StrictIPCIDRValidation` gate: beta and on from
   * Kubernetes 1.36): no leading zeros, no IPv4-mapped IPv6, no host bits. `false` is the reading
   * of 1.35 and earlier, which accepts `10.0.0.1/24` (the network 10.0.0.0/24). Default true.
   */
  readonly strictCidr?: boolean;
}

const PROTOCOLS: readonly K8sProtocol[] = ['TCP', 'UDP', 'SCTP'];

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function body(type: FieldErrorType, value: unknown, detail: string, supported?: readonly string[]): string {
  switch (type) {
    case 'Invalid':
      return `Invalid value: ${show(value)}${detail ? `: ${detail}` : ''}`;
    case 'Required':
      return `Required value${detail ? `: ${detail}` : ''}`;
    case 'Forbidden':
      return `Forbidden${detail ? `: ${detail}` : ''}`;
    case 'NotSupported':
      return `Unsupported value: ${show(value)}${supported ? `: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` : ''}`;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `namespace/name` a policy is known by in messages. */
export function policyKey(policy: unknown): string {
  if (!isObject(policy)) return '<no namespace>/<unnamed>';
  const meta = isObject(policy) && isObject(policy['metadata']) ? policy['metadata'] : {};
  const ns = typeof meta['namespace'] === 'string' ? meta['namespace'] : '<no namespace>';
  const name = typeof meta['name'] === 'string' ? meta['name'] : '<unnamed>';
  return `${ns}/${name}`;
}

class Collector {
  readonly errors: NetpolFieldError[] = [];
  readonly policy: string;
  constructor(policy: string) {
    this.policy = policy;
  }
  add(field: string, type: FieldErrorType, value: unknown, detail: string, supported?: readonly string[]): void {
    const message = `${field}: ${body(type, value, detail, supported)}`;
    this.errors.push({ policy: this.policy, field, type, ...(value === undefined ? {} : { value }), detail, message });
  }
}

function validateStringMap(c: Collector, v: unknown, path: string, values: boolean): void {
  if (!isObject(v)) {
    c.add(path, 'Invalid', v, 'must be a map of strings');
    return;
  }
  for (const [k, val] of Object.entries(v)) {
    for (const m of qualifiedNameErrors(k)) c.add(`${path}`, 'Invalid', k, m);
    if (typeof val !== 'string') c.add(`${path}.${k}`, 'Invalid', val, 'must be a string');
    else if (values) for (const m of labelValueErrors(val)) c.add(`${path}`, 'Invalid', val, m);
  }
}

function validateSelector(c: Collector, sel: unknown, path: string): void {
  if (!isObject(sel)) {
    c.add(path, 'Invalid', sel, 'must be a label selector (matchLabels, matchExpressions)');
    return;
  }
  if (sel['matchLabels'] !== undefined && sel['matchLabels'] !== null) validateStringMap(c, sel['matchLabels'], `${path}.matchLabels`, true);
  const exprs = sel['matchExpressions'];
  if (exprs === undefined || exprs === null) return;
  if (!Array.isArray(exprs)) {
    c.add(`${path}.matchExpressions`, 'Invalid', exprs, 'must be a list');
    return;
  }
  exprs.forEach((e: unknown, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    if (!isObject(e)) {
      c.add(p, 'Invalid', e, 'must be a label selector requirement (key, operator, values)');
      return;
    }
    const values = e['values'];
    const list = Array.isArray(values) ? values : values === undefined || values === null ? [] : null;
    if (list === null) c.add(`${p}.values`, 'Invalid', values, 'must be a list of strings');
    const n = list?.length ?? 0;
    switch (e['operator']) {
      case 'In':
      case 'NotIn':
        if (n === 0) c.add(`${p}.values`, 'Required', undefined, "must be specified when `operator` is 'In' or 'NotIn'");
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (n > 0) c.add(`${p}.values`, 'Forbidden', undefined, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
        break;
      default:
        c.add(`${p}.operator`, 'Invalid', e['operator'], 'not a valid selector operator');
    }
    if (typeof e['key'] !== 'string') c.add(`${p}.key`, 'Invalid', e['key'], 'must be a string');
    else for (const m of qualifiedNameErrors(e['key'])) c.add(`${p}.key`, 'Invalid', e['key'], m);
    (list ?? []).forEach((v: unknown, j) => {
      if (typeof v !== 'string') c.add(`${p}.values[${j}]`, 'Invalid', v, 'must be a string');
      else for (const m of labelValueErrors(v)) c.add(`${p}.values[${j}]`, 'Invalid', v, m);
    });
  });
}

/** `IsValidPortName` (an IANA service name). */
function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.length > 0 && (name.startsWith('-') || name.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

const isPortNumber = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;

function validatePort(c: Collector, port: unknown, path: string): void {
  if (!isObject(port)) {
    c.add(path, 'Invalid', port, 'must be a port (protocol, port, endPort)');
    return;
  }
  const protocol = port['protocol'];
  if (protocol !== undefined && protocol !== null && !(PROTOCOLS as readonly unknown[]).includes(protocol)) {
    c.add(`${path}.protocol`, 'NotSupported', protocol, '', PROTOCOLS);
  }
  const p = port['port'];
  const end = port['endPort'];
  const hasEnd = end !== undefined && end !== null;
  if (hasEnd && !Number.isInteger(end)) {
    c.add(`${path}.endPort`, 'Invalid', end, 'must be an integer');
    return;
  }
  if (p === undefined || p === null) {
    if (hasEnd) c.add(`${path}.endPort`, 'Invalid', end, 'may not be specified when `port` is not specified');
    return;
  }
  if (typeof p === 'number') {
    if (!Number.isInteger(p)) {
      c.add(`${path}.port`, 'Invalid', p, 'must be an integer or a port name');
      return;
    }
    if (!isPortNumber(p)) c.add(`${path}.port`, 'Invalid', p, 'must be between 1 and 65535, inclusive');
    if (hasEnd) {
      if ((end as number) < p) c.add(`${path}.endPort`, 'Invalid', end, 'must be greater than or equal to `port`');
      if (!isPortNumber(end)) c.add(`${path}.endPort`, 'Invalid', end, 'must be between 1 and 65535, inclusive');
    }
    return;
  }
  if (typeof p === 'string') {
    if (hasEnd) c.add(`${path}.endPort`, 'Invalid', end, 'may not be specified when `port` is non-numeric');
    for (const m of portNameErrors(p)) c.add(`${path}.port`, 'Invalid', p, m);
    return;
  }
  c.add(`${path}.port`, 'Invalid', p, 'must be an integer or a port name');
}

function validateCidr(c: Collector, text: unknown, path: string, strict: boolean): ReturnType<typeof parseK8sCidr> {
  if (typeof text !== 'string') {
    c.add(path, 'Invalid', text, 'must be a string');
    return { ok: false };
  }
  const r = parseK8sCidr(text);
  if (!r.ok) {
    c.add(path, 'Invalid', text, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)');
    return r;
  }
  if (strict) {
    if (r.leadingZeros) c.add(path, 'Invalid', text, 'must not have leading 0s in IP or prefix length');
    else if (r.mapped) c.add(path, 'Invalid', text, 'must not have an IPv4-mapped IPv6 address');
    else if (r.hostBits) c.add(path, 'Invalid', text, 'must not have bits set beyond the prefix length');
  }
  return r;
}

function validatePeer(c: Collector, peer: unknown, path: string, strict: boolean): void {
  if (!isObject(peer)) {
    c.add(path, 'Invalid', peer, 'must be a peer (podSelector, namespaceSelector or ipBlock)');
    return;
  }
  let n = 0;
  const present = (k: string): boolean => peer[k] !== undefined && peer[k] !== null;
  if (present('podSelector')) {
    n++;
    validateSelector(c, peer['podSelector'], `${path}.podSelector`);
  }
  if (present('namespaceSelector')) {
    n++;
    validateSelector(c, peer['namespaceSelector'], `${path}.namespaceSelector`);
  }
  if (present('ipBlock')) {
    n++;
    const b = peer['ipBlock'];
    const bp = `${path}.ipBlock`;
    if (!isObject(b)) c.add(bp, 'Invalid', b, 'must be an ipBlock (cidr, except)');
    else if (b['cidr'] === undefined || b['cidr'] === null || b['cidr'] === '') c.add(`${bp}.cidr`, 'Required', undefined, '');
    else {
      const cidr = validateCidr(c, b['cidr'], `${bp}.cidr`, strict);
      const except = b['except'];
      if (except !== undefined && except !== null && !Array.isArray(except)) c.add(`${bp}.except`, 'Invalid', except, 'must be a list of CIDRs');
      else if (cidr.ok) {
        (except ?? []).forEach((x: unknown, i: number) => {
          const xp = `${bp}.except[${i}]`;
          const r = validateCidr(c, x, xp, strict);
          if (!r.ok) return;
          // ValidateIPBlock: the except must lie inside the cidr and be strictly longer.
          const inside = r.cidr.family === cidr.cidr.family && cidr.cidr.prefix < r.cidr.prefix &&
            r.cidr.words.every((w, k) => {
              const bits = Math.max(0, Math.min(32, cidr.cidr.prefix - 32 * k));
              const m = bits === 0 ? 0 : bits === 32 ? 0xffffffff : (~0 << (32 - bits)) >>> 0;
              return ((w & m) >>> 0) === cidr.cidr.words[k];
            });
          if (!inside) c.add(xp, 'Invalid', x, 'must be a strict subset of `cidr`');
        });
      }
    }
  }
  if (n === 0) c.add(path, 'Required', undefined, 'must specify a peer');
  else if (n > 1 && present('ipBlock')) c.add(path, 'Forbidden', undefined, 'may not specify both ipBlock and another peer');
}

function validateRules(c: Collector, rules: unknown, path: string, peersKey: 'from' | 'to', strict: boolean): void {
  if (rules === undefined || rules === null) return;
  if (!Array.isArray(rules)) {
    c.add(path, 'Invalid', rules, 'must be a list of rules');
    return;
  }
  rules.forEach((rule: unknown, i) => {
    const rp = `${path}[${i}]`;
    if (!isObject(rule)) {
      c.add(rp, 'Invalid', rule, `must be a rule (ports, ${peersKey})`);
      return;
    }
    const ports = rule['ports'];
    if (ports !== undefined && ports !== null) {
      if (!Array.isArray(ports)) c.add(`${rp}.ports`, 'Invalid', ports, 'must be a list of ports');
      else ports.forEach((p: unknown, j) => validatePort(c, p, `${rp}.ports[${j}]`));
    }
    const peers = rule[peersKey];
    if (peers !== undefined && peers !== null) {
      if (!Array.isArray(peers)) c.add(`${rp}.${peersKey}`, 'Invalid', peers, 'must be a list of peers');
      else peers.forEach((p: unknown, j) => validatePeer(c, p, `${rp}.${peersKey}[${j}]`, strict));
    }
  });
}

/**
 * Every reason the API server would refuse the policy (an empty list when it would accept it).
 * Takes any value, since a policy read from a file may have any shape.
 *
 * @example
 * ```ts
 * const errors = validateNetworkPolicy({
 *   kind: 'NetworkPolicy', metadata: { name: 'db', namespace: 'prod' },
 *   spec: { podSelector: {}, ingress: [{ ports: [{ port: 5432, endPort: 5400 }] }] },
 * });
 * errors[0]?.message; // 'spec.ingress[0].ports[0].endPort: Invalid value: 5400: must be greater than or equal to `port`'
 * ```
 */
export function validateNetworkPolicy(policy: unknown, options: ValidateOptions = {}): NetpolFieldError[] {
  expectArgument(options, 'object', 'options');
  expectArgument(options.strictCidr, ['boolean', 'undefined'], 'options.strictCidr');
  const c = new Collector(policyKey(policy));
  const strict = options.strictCidr ?? true;
  if (!isObject(policy)) {
    c.add('<root>', 'Invalid', policy, 'must be a NetworkPolicy object');
    return c.errors;
  }
  const meta = policy['metadata'];
  if (!isObject(meta)) c.add('metadata', 'Required', undefined, '');
  else {
    const name = meta['name'];
    if (typeof name !== 'string' || name === '') c.add('metadata.name', 'Required', undefined, 'name or generateName is required');
    else for (const m of dns1123SubdomainErrors(name)) c.add('metadata.name', 'Invalid', name, m);
    const ns = meta['namespace'];
    if (typeof ns !== 'string' || ns === '') c.add('metadata.namespace', 'Required', undefined, '');
    if (meta['labels'] !== undefined && meta['labels'] !== null) validateStringMap(c, meta['labels'], 'metadata.labels', true);
  }
  const spec = policy['spec'];
  if (!isObject(spec)) {
    c.add('spec', 'Required', undefined, '');
    return c.errors;
  }
  // An absent podSelector decodes as {} (the field is a struct, not a pointer, in the API's types).
  if (spec['podSelector'] !== undefined && spec['podSelector'] !== null) validateSelector(c, spec['podSelector'], 'spec.podSelector');
  validateRules(c, spec['ingress'], 'spec.ingress', 'from', strict);
  validateRules(c, spec['egress'], 'spec.egress', 'to', strict);
  const types = spec['policyTypes'];
  if (types !== undefined && types !== null) {
    if (!Array.isArray(types)) c.add('spec.policyTypes', 'Invalid', types, 'must be a list');
    else if (types.length > 2) c.add('spec.policyTypes', 'Invalid', types, 'may not specify more than two policyTypes');
    else types.forEach((t: unknown, i) => {
      if (t !== 'Ingress' && t !== 'Egress') c.add(`spec.policyTypes[${i}]`, 'NotSupported', t, '', ['Ingress', 'Egress']);
    });
  }
  return c.errors;
}

/** The field errors as diagnostics (`INVALID_NETWORK_POLICY`), each naming the policy and the field. */
export function fieldErrorDiagnostics(errors: readonly NetpolFieldError[]): Diagnostic[] {
  expectArgument(errors, 'array', 'errors');
  return errors.map((e) => diagnostic('INVALID_NETWORK_POLICY', `NetworkPolicy ${e.policy} is invalid: ${e.message}`));
}

/**
 * Throws a {@link NetfilterSimError} (`INVALID_NETWORK_POLICY`, one diagnostic per field error)
 * unless the API server would accept the policy.
 */
export function expectValidNetworkPolicy(policy: unknown, options: ValidateOptions = {}): void {
  const errors = validateNetworkPolicy(policy, options);
  if (errors.length > 0) throw new NetfilterSimError(fieldErrorDiagnostics(errors));
}

/** A port with the API's default applied (the protocol). */
export interface DefaultedPort {
  readonly protocol: K8sProtocol;
  readonly port?: number | string;
  readonly endPort?: number;
}

/** A rule with its defaults: `peers` null means every peer (absent or empty list), `ports` null every port. */
export interface DefaultedRule {
  readonly index: number;
  readonly peers: readonly NetworkPolicyPeer[] | null;
  readonly ports: readonly DefaultedPort[] | null;
}

/** A policy as the API server stores it, with its defaults applied. */
export interface DefaultedPolicy {
  readonly namespace: string;
  readonly name: string;
  readonly podSelector: LabelSelector;
  readonly ingress: boolean;
  readonly egress: boolean;
  readonly ingressRules: readonly DefaultedRule[];
  readonly egressRules: readonly DefaultedRule[];
  readonly source: K8sNetworkPolicy;
}

function defaultRules(rules: readonly (NetworkPolicyIngressRule | NetworkPolicyEgressRule)[] | undefined, key: 'from' | 'to'): DefaultedRule[] {
  return (rules ?? []).map((r, index) => {
    const peers = (r as Record<string, unknown>)[key] as readonly NetworkPolicyPeer[] | undefined;
    const ports = r.ports;
    return {
      index,
      peers: peers === undefined || peers === null || peers.length === 0 ? null : peers,
      ports: ports === undefined || ports === null || ports.length === 0 ? null : ports.map((p: NetworkPolicyPort): DefaultedPort => ({
        protocol: p.protocol ?? 'TCP',
        ...(p.port === undefined || p.port === null ? {} : { port: p.port }),
        ...(p.endPort === undefined || p.endPort === null ? {} : { endPort: p.endPort }),
      })),
    };
  });
}

/**
 * The policy with the API's defaults (`SetDefaults_NetworkPolicySpec`, `…Port`): `policyTypes`
 * empty or absent means `Ingress`, plus `Egress` when `egress` has at least one rule (so
 * `egress: []` alone does not isolate for egress); a port's protocol is TCP. Expects a policy
 * that passed {@link validateNetworkPolicy}.
 */
export function defaultNetworkPolicy(policy: K8sNetworkPolicy): DefaultedPolicy {
  // What the API server did not accept has no defaults: refuse it as it would (any CIDR reading).
  expectValidNetworkPolicy(policy, { strictCidr: false });
  const spec = policy.spec;
  const types = spec.policyTypes ?? [];
  const egressRules = spec.egress ?? [];
  const ingress = types.length === 0 ? true : types.includes('Ingress');
  const egress = types.length === 0 ? egressRules.length > 0 : types.includes('Egress');
  return {
    namespace: policy.metadata.namespace ?? '',
    name: policy.metadata.name,
    podSelector: spec.podSelector ?? {},
    ingress,
    egress,
    ingressRules: defaultRules(spec.ingress, 'from'),
    egressRules: defaultRules(spec.egress, 'to'),
    source: policy,
  };
}

