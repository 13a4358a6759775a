/**
 * The reference evaluator of Kubernetes NetworkPolicy (`networking.k8s.io/v1`), with the API
 * reference and the NetworkPolicy concepts page as its specification:
 *
 * - a pod is isolated for a direction when some policy selects it (`spec.podSelector`, in the
 *   policy's namespace) and has that direction in its (defaulted) `policyTypes`; an isolated pod
 *   allows in that direction only what some rule of those policies allows, and the policies add up;
 * - a connection is allowed when the source's egress and the destination's ingress both allow it,
 *   and then its replies are allowed too (the evaluator judges connections, not reply packets);
 * - a rule allows a connection when one of its peers matches the other end and one of its ports
 *   matches the destination port; an absent or empty peer list or port list matches everything;
 * - a peer is pods (`podSelector` in the policy's namespace; `namespaceSelector` for all pods of
 *   the namespaces it selects; both for those pods in those namespaces) or an `ipBlock` (the
 *   address is in `cidr` and in none of `except`), which applies to any address, pods' included;
 * - a named port is resolved against the destination pod's container ports (name and protocol);
 *   a destination that is not a pod has no named ports;
 * - "When a pod is isolated for ingress, the only allowed connections into the pod are those from
 *   the pod's node and those allowed by the ingress list" (the concepts page): ingress from the
 *   destination pod's own node is allowed, unless {@link NetpolOptions.fromOwnNode} says `policy`
 *   (kube-network-policies lets only the node's root sockets through, kube-router every local
 *   address); egress to the node is subject to the rules;
 * - "a pod cannot block access to itself": a pod's connection to itself is allowed;
 * - `hostNetwork` pods: the API leaves them undefined between two behaviours; the default here is
 *   the common one (their traffic is the node's: never selected, never matched by a pod peer),
 *   {@link NetpolOptions.hostNetwork} `pod` the other (treated as pods).
 *
 * Pods that finished (`status.phase` Succeeded or Failed) hold no address and are not selected.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { expectArgument, expectFields, expectOneOf } from '../model/guard.js';
import type { ContainerPort, K8sNamespace, K8sPod, K8sProtocol } from '../model/kubernetes.js';
import type { Family } from '../model/types.js';
import { cidrHolds, formatK8sAddress, parseK8sAddress, parseK8sCidr } from './cidr.js';
import type { NetpolAddress, NetpolCidr } from './cidr.js';
import { SELECT_ALL, compileSelector, selectorMatches } from './labels.js';
import type { CompiledSelector } from './labels.js';
import { defaultNetworkPolicy, fieldErrorDiagnostics, policyKey, validateNetworkPolicy } from './validate.js';
import { wellShaped } from './shape.js';
import type { NetpolSnapshot } from './shape.js';
import type { DefaultedPort, ValidateOptions } from './validate.js';

/** The label the API server sets on every namespace, to its name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Which way a connection crosses a policy. */
export type PolicyDirection = 'ingress' | 'egress';

/**
 * The policy that decided, as DESIGN's `policy` JSON: `rule` is the index in `spec.ingress` (or
 * `spec.egress`) of the rule that allowed, or null for "isolated, and nothing allows".
 */
export interface PolicyDecision {
  readonly namespace: string;
  readonly name: string;
  readonly direction: PolicyDirection;
  readonly rule: number | null;
}

/** Options of the evaluator. */
export interface NetpolOptions extends ValidateOptions {
  /**
   * Ingress from the destination pod's own node: `allow` (the API's words: the only allowed
   * connections into an isolated pod are those from the pod's node and those the rules allow) or
   * `policy` (the rules decide, as for any other source). Default `allow`.
   */
  readonly fromOwnNode?: 'allow' | 'policy';
  /**
   * `hostNetwork` pods: `node` (their traffic is the node's; they are never selected by a policy
   * nor matched by a pod peer: the most common implementation) or `pod` (policies apply to them as
   * to other pods, addressed by their node's address). Default `node`.
   */
  readonly hostNetwork?: 'node' | 'pod';
  /**
   * Addresses of each node beyond its `status.addresses` and its pods' `status.hostIP` (a CNI
   * bridge's address, from which the node reaches its pods): node name → addresses.
   */
  readonly nodeAddresses?: Readonly<Record<string, readonly string[]>>;
  /**
   * A policy the API server would refuse: `throw` (default; `INVALID_NETWORK_POLICY` naming each
   * field) or `skip` (left out, as if the API server had refused it, with a warning).
   */
  readonly invalid?: 'throw' | 'skip';
}

/** One end of a connection: a pod (`NS/NAME`), or an address; objects name a node or fix the address. */
export type NetpolEndpointSpec =
  | string
  | { readonly pod: string; readonly address?: string }
  | { readonly node: string; readonly address?: string }
  | { readonly address: string };

/** A connection to judge. */
export interface NetpolConnection {
  readonly from: NetpolEndpointSpec;
  readonly to: NetpolEndpointSpec;
  /** The destination port (1–65535). */
  readonly port: number;
  /** Default TCP. */
  readonly protocol?: K8sProtocol | 'tcp' | 'udp' | 'sctp';
}

/** An end of the connection, resolved. */
export interface NetpolEndpoint {
  /** `pod`: a pod of the snapshot; `node`: a node (or a hostNetwork pod, by default); `external`: anything else. */
  readonly kind: 'pod' | 'node' | 'external';
  /** `NS/NAME` of the pod (also of a hostNetwork pod read as its node). */
  readonly pod: string | null;
  /** The node the pod runs on, or the node itself. */
  readonly node: string | null;
  readonly address: string;
}

/** Why a direction allowed or blocked. */
export type DirectionReason =
  /** The end whose policies would apply is not a pod: nothing is enforced for it. */
  | 'not-a-pod'
  /** No policy isolates the pod in this direction. */
  | 'not-isolated'
  /** A rule allows it ({@link DirectionVerdict.policy} names it). */
  | 'rule'
  /** Ingress from the pod's own node, allowed by the API's exception. */
  | 'own-node'
  /** A pod's connection to itself. */
  | 'self'
  /** Isolated, and no rule of the policies that apply allows it. */
  | 'isolated';

/** The verdict of one direction. */
export interface DirectionVerdict {
  readonly direction: PolicyDirection;
  /** The pod whose policies were consulted (the source for egress, the destination for ingress), or null. */
  readonly pod: string | null;
  readonly allowed: boolean;
  readonly reason: DirectionReason;
  /** `rule`: the policy and rule that allowed; `isolated`: the first policy that applies, rule null. */
  readonly policy: PolicyDecision | null;
  /** `NS/NAME` of every policy that applies to the pod in this direction, in snapshot order. */
  readonly policies: readonly string[];
}

/** The verdict on a connection. */
export interface NetpolVerdict {
  readonly allowed: boolean;
  readonly from: NetpolEndpoint;
  readonly to: NetpolEndpoint;
  readonly port: number;
  readonly protocol: K8sProtocol;
  readonly egress: DirectionVerdict;
  readonly ingress: DirectionVerdict;
  /**
   * The decision to report: when blocked, the direction that blocked (egress first, as the packet
   * leaves the source before it reaches the destination); when allowed, the ingress rule, else the
   * egress rule that allowed; null when no policy took part.
   */
  readonly policy: PolicyDecision | null;
}

interface PodEntry {
  readonly key: string;
  readonly pod: K8sPod;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly node: string | null;
  readonly addresses: readonly NetpolAddress[];
  readonly ports: readonly ContainerPort[];
  /** Read as its node (hostNetwork, default mode). */
  readonly asNode: boolean;
  readonly active: boolean;
}

interface CompiledPeer {
  readonly kind: 'pods' | 'ipBlock';
  readonly pods?: CompiledSelector;
  /** null: the policy's own namespace. */
  readonly namespaces?: CompiledSelector | null;
  readonly cidr?: NetpolCidr;
  readonly except?: readonly NetpolCidr[];
}

interface CompiledRule {
  readonly index: number;
  readonly peers: readonly CompiledPeer[] | null;
  readonly ports: readonly DefaultedPort[] | null;
}

interface CompiledPolicy {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly selector: CompiledSelector;
  readonly ingress: boolean;
  readonly egress: boolean;
  readonly ingressRules: readonly CompiledRule[];
  readonly egressRules: readonly CompiledRule[];
}

const FINISHED = new Set(['Succeeded', 'Failed']);
const PROTOCOLS: Readonly<Record<string, K8sProtocol>> = { TCP: 'TCP', UDP: 'UDP', SCTP: 'SCTP', tcp: 'TCP', udp: 'UDP', sctp: 'SCTP' };

function bad(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_PROBE', message));
}

function addrKey(a: NetpolAddress): string {
  return `${a.family}:${a.words.join('.')}`;
}

function compileCidr(text: string): NetpolCidr {
  const r = parseK8sCidr(text);
  if (!r.ok) throw new Error(`validated CIDR did not parse: ${text}`);
  return r.cidr;
}

function compileRules(rules: ReturnType<typeof defaultNetworkPolicy>['ingressRules']): CompiledRule[] {
  return rules.map((r) => ({
    index: r.index,
    ports: r.ports,
    peers: r.peers === null ? null : r.peers.map((p): CompiledPeer => {
      if (p.ipBlock) return { kind: 'ipBlock', cidr: compileCidr(p.ipBlock.cidr), except: (p.ipBlock.except ?? []).map(compileCidr) };
      return {
        kind: 'pods',
        pods: p.podSelector ? compileSelector(p.podSelector) : SELECT_ALL,
        namespaces: p.namespaceSelector ? compileSelector(p.namespaceSelector) : null,
      };
    }),
  }));
}

function checkOptions(options: NetpolOptions): void {
  expectArgument(options, 'object', 'options');
  expectOneOf(options.fromOwnNode, ['allow', 'policy'], 'options.fromOwnNode', true);
  expectOneOf(options.hostNetwork, ['node', 'pod'], 'options.hostNetwork', true);
  expectOneOf(options.invalid, ['throw', 'skip'], 'options.invalid', true);
  expectArgument(options.strictCidr, ['boolean', 'undefined'], 'options.strictCidr');
  expectArgument(options.nodeAddresses, ['object', 'undefined'], 'options.nodeAddresses');
  for (const [node, list] of Object.entries(options.nodeAddresses ?? {})) {
    expectArgument(list, 'array', `options.nodeAddresses.${node}`);
    for (const [i, a] of (list as readonly unknown[]).entries()) expectArgument(a, 'string', `options.nodeAddresses.${node}[${i}]`);
  }
}

/**
 * The policies, pods and namespaces of a snapshot, prepared once for many connections.
 *
 * @example
 * ```ts
 * const evaluator = new NetworkPolicyEvaluator(snapshot);
 * const v = evaluator.evaluate({ from: 'shop/web', to: 'shop/db', port: 5432 });
 * v.allowed; // false when shop/db is isolated for ingress and no rule admits shop/web on 5432
 * v.policy;  // { namespace: 'shop', name: 'db-ingress', direction: 'ingress', rule: null }
 * ```
 */
export class NetworkPolicyEvaluator {
  /** What was read with a doubt or left out, each naming the object. */
  readonly warnings: readonly string[];
  private readonly options: NetpolOptions;
  private readonly pods = new Map<string, PodEntry>();
  private readonly podByAddress = new Map<string, PodEntry>();
  private readonly nodeByAddress = new Map<string, string>();
  private readonly nodeAddrs = new Map<string, NetpolAddress[]>();
  private readonly nsLabels = new Map<string, Readonly<Record<string, string>>>();
  private readonly policies: CompiledPolicy[] = [];
  private readonly selection = new Map<string, { ingress: CompiledPolicy[]; egress: CompiledPolicy[] }>();

  constructor(snapshot: NetpolSnapshot, options: NetpolOptions = {}) {
    checkOptions(options);
    this.options = options;
    const shaped = wellShaped(snapshot);
    const warnings: string[] = [...shaped.warnings];
    const hostNetworkAsNode = (options.hostNetwork ?? 'node') === 'node';

    for (const ns of shaped.namespaces) this.addNamespace(ns);

    const addNodeAddress = (node: string, text: string, what: string): void => {
      const a = parseK8sAddress(text);
      if (a === null) {
        warnings.push(`${what}: "${text}" is not an address; left out`);
        return;
      }
      const list = this.nodeAddrs.get(node) ?? [];
      if (!list.some((x) => addrKey(x) === addrKey(a.address))) list.push(a.address);
      this.nodeAddrs.set(node, list);
      if (!this.nodeByAddress.has(addrKey(a.address))) this.nodeByAddress.set(addrKey(a.address), node);
    };
    for (const node of shaped.nodes) {
      const order = ['InternalIP', 'ExternalIP'];
      const addrs = [...(node.status?.addresses ?? [])].filter((a) => order.includes(a.type)).sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
      for (const a of addrs) addNodeAddress(node.metadata.name, a.address, `node ${node.metadata.name} status.addresses`);
    }

    for (const pod of shaped.pods) {
      const namespace = pod.metadata.namespace ?? 'default';
      const key = `${namespace}/${pod.metadata.name}`;
      const node = pod.spec?.nodeName ?? null;
      const hostIP = pod.status?.hostIP;
      if (node !== null && typeof hostIP === 'string' && hostIP !== '') addNodeAddress(node, hostIP, `pod ${key} status.hostIP`);
      const ipTexts = pod.status?.podIPs?.map((p) => p.ip) ?? (pod.status?.podIP ? [pod.status.podIP] : []);
      const addresses: NetpolAddress[] = [];
      for (const t of ipTexts) {
        const a = parseK8sAddress(t);
        if (a === null) warnings.push(`pod ${key}: status.podIPs has "${t}", not an address; left out`);
        else addresses.push(a.address);
      }
      const hostNetwork = pod.spec?.hostNetwork === true;
      const active = !FINISHED.has(pod.status?.phase ?? '');
      const ports: ContainerPort[] = [];
      for (const c of pod.spec?.containers ?? []) for (const p of c.ports ?? []) ports.push({ ...p, protocol: p.protocol ?? 'TCP' });
      const entry: PodEntry = { key, pod, namespace, labels: pod.metadata.labels ?? {}, node, addresses, ports, asNode: hostNetwork && hostNetworkAsNode, active };
      if (this.pods.has(key)) warnings.push(`pod ${key} appears twice; the first is kept`);
      else this.pods.set(key, entry);
      if (!this.nsLabels.has(namespace)) {
        warnings.push(`namespace ${namespace} (of pod ${key}) has no Namespace object in the snapshot: its only label is ${NAMESPACE_NAME_LABEL}=${namespace}`);
        this.nsLabels.set(namespace, { [NAMESPACE_NAME_LABEL]: namespace });
      }
      if (!active || hostNetwork) continue;
      if (addresses.length === 0) warnings.push(`pod ${key} has no address (status.podIPs): no connection can name it`);
      for (const a of addresses) {
        const k = addrKey(a);
        const other = this.podByAddress.get(k);
        if (other) warnings.push(`pods ${other.key} and ${key} both have ${formatK8sAddress(a)}; ${other.key} is kept for it`);
        else this.podByAddress.set(k, entry);
      }
    }
    for (const [node, addrs] of Object.entries(options.nodeAddresses ?? {})) for (const t of addrs) addNodeAddress(node, t, `options.nodeAddresses.${node}`);

    for (const policy of snapshot.networkPolicies) {
      const errors = validateNetworkPolicy(policy, options);
      if (errors.length > 0) {
        if ((options.invalid ?? 'throw') === 'throw') throw new NetfilterSimError(fieldErrorDiagnostics(errors));
        warnings.push(`NetworkPolicy ${policyKey(policy)} is left out: the API server would refuse it (${errors.map((e) => e.message).join('; ')})`);
        continue;
      }
      const d = defaultNetworkPolicy(policy);
      if (!d.source.spec.podSelector) warnings.push(`NetworkPolicy ${d.namespace}/${d.name}: spec.podSelector is absent, read as {} (every pod of ${d.namespace}), as the API server decodes it`);
      if (!this.nsLabels.has(d.namespace)) this.nsLabels.set(d.namespace, { [NAMESPACE_NAME_LABEL]: d.namespace });
      this.policies.push({
        key: `${d.namespace}/${d.name}`,
        namespace: d.namespace,
        name: d.name,
        selector: compileSelector(d.podSelector),
        ingress: d.ingress,
        egress: d.egress,
        ingressRules: compileRules(d.ingressRules),
        egressRules: compileRules(d.egressRules),
      });
    }
    this.warnings = warnings;
  }

  private addNamespace(ns: K8sNamespace): void {
    const name = ns.metadata.name;
    // The API server keeps this label equal to the name, whatever the object says.
    this.nsLabels.set(name, { ...(ns.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: name });
  }

  /** The policies that select the pod for each direction, in snapshot order (empty for a pod read as its node). */
  policiesFor(pod: string): { readonly ingress: readonly string[]; readonly egress: readonly string[] } {
    const e = this.pods.get(pod);
    if (!e) bad(`no pod ${pod} in the snapshot`);
    const s = this.selected(e);
    return { ingress: s.ingress.map((p) => p.key), egress: s.egress.map((p) => p.key) };
  }

  /** The pods (`NS/NAME`) a policy selects, in snapshot order. */
  podsSelectedBy(policy: string): string[] {
    const p = this.policies.find((x) => x.key === policy);
    if (!p) bad(`no NetworkPolicy ${policy} in the snapshot`);
    const out: string[] = [];
    for (const e of this.pods.values()) if (this.selects(p, e)) out.push(e.key);
    return out;
  }

  private selects(p: CompiledPolicy, e: PodEntry): boolean {
    return e.active && !e.asNode && e.namespace === p.namespace && selectorMatches(p.selector, e.labels);
  }

  private selected(e: PodEntry): { ingress: CompiledPolicy[]; egress: CompiledPolicy[] } {
    let s = this.selection.get(e.key);
    if (!s) {
      s = { ingress: [], egress: [] };
      for (const p of this.policies) {
        if (!this.selects(p, e)) continue;
        if (p.ingress) s.ingress.push(p);
        if (p.egress) s.egress.push(p);
      }
      this.selection.set(e.key, s);
    }
    return s;
  }

  /** The candidates of an endpoint before the family is chosen. */
  private candidates(spec: NetpolEndpointSpec, what: string): { endpoint: Omit<NetpolEndpoint, 'address'>; addresses: readonly NetpolAddress[]; entry: PodEntry | null; fixed: NetpolAddress | null } {
    let s: { pod?: string; node?: string; address?: string };
    if (typeof spec === 'string') {
      s = parseK8sAddress(spec) !== null ? { address: spec } : { pod: spec };
    } else if (typeof spec === 'object' && spec !== null) s = spec as typeof s;
    else bad(`${what} must be "NS/POD", an address, or { pod | node | address }`);
    let fixed: NetpolAddress | null = null;
    if (s.address !== undefined) {
      const a = typeof s.address === 'string' ? parseK8sAddress(s.address) : null;
      if (a === null) bad(`${what}: "${String(s.address)}" is not an address`);
      fixed = a.address;
    }
    if (s.pod !== undefined) {
      const e = this.pods.get(s.pod);
      if (!e) bad(`${what}: no pod ${s.pod} in the snapshot (pods are named NAMESPACE/NAME)`);
      if (!e.active) bad(`${what}: pod ${s.pod} has finished (phase ${e.pod.status?.phase}): it holds no address`);
      if (e.asNode) {
        if (e.node === null) bad(`${what}: hostNetwork pod ${s.pod} has no spec.nodeName: its node is unknown`);
        const addrs = this.nodeAddrs.get(e.node) ?? [];
        return { endpoint: { kind: 'node', pod: e.key, node: e.node }, addresses: addrs, entry: null, fixed };
      }
      const addrs = e.pod.spec?.hostNetwork === true && e.node !== null ? (this.nodeAddrs.get(e.node) ?? []) : e.addresses;
      if (addrs.length === 0) bad(`${what}: pod ${s.pod} has no address (status.podIPs)`);
      if (fixed && !addrs.some((a) => addrKey(a) === addrKey(fixed!))) bad(`${what}: ${formatK8sAddress(fixed)} is not an address of pod ${s.pod}`);
      return { endpoint: { kind: 'pod', pod: e.key, node: e.node }, addresses: addrs, entry: e, fixed };
    }
    if (s.node !== undefined) {
      const addrs = this.nodeAddrs.get(s.node);
      if (!addrs && !fixed) bad(`${what}: node ${s.node} has no known address (status.addresses, its pods' hostIP, or options.nodeAddresses)`);
      return { endpoint: { kind: 'node', pod: null, node: s.node }, addresses: addrs ?? [], entry: null, fixed };
    }
    if (fixed === null) bad(`${what} must name a pod, a node or an address`);
    const k = addrKey(fixed);
    const pod = this.podByAddress.get(k);
    if (pod) return { endpoint: { kind: 'pod', pod: pod.key, node: pod.node }, addresses: [fixed], entry: pod, fixed };
    const node = this.nodeByAddress.get(k);
    if (node !== undefined) return { endpoint: { kind: 'node', pod: null, node }, addresses: [fixed], entry: null, fixed };
    return { endpoint: { kind: 'external', pod: null, node: null }, addresses: [fixed], entry: null, fixed };
  }

  /**
   * Judges a connection: egress of the source, ingress of the destination, each with the policy
   * and rule that decided.
   */
  evaluate(connection: NetpolConnection): NetpolVerdict {
    if (typeof connection !== 'object' || connection === null) bad('the connection must be an object { from, to, port, protocol }');
    const protocol = PROTOCOLS[connection.protocol ?? 'TCP'];
    if (protocol === undefined) bad(`protocol "${String(connection.protocol)}" is not TCP, UDP or SCTP`);
    const port = connection.port;
    if (!Number.isInteger(port) || port < 1 || port > 65535) bad(`port ${String(port)} is not a port number (1-65535)`);
    const src = this.candidates(connection.from, 'from');
    const dst = this.candidates(connection.to, 'to');
    // One family for both ends: the fixed address's, else IPv4 when both have one, else IPv6.
    let family: Family | null = src.fixed?.family ?? dst.fixed?.family ?? null;
    if (src.fixed && dst.fixed && src.fixed.family !== dst.fixed.family) bad('from and to are addresses of different families');
    const has = (c: typeof src, f: Family): boolean => c.fixed ? c.fixed.family === f : c.addresses.some((a) => a.family === f);
    if (family === null) family = has(src, 4) && has(dst, 4) ? 4 : has(src, 6) && has(dst, 6) ? 6 : null;
    if (family === null || !has(src, family) || !has(dst, family)) bad('from and to have no address family in common');
    const pick = (c: typeof src): NetpolAddress => c.fixed ?? c.addresses.find((a) => a.family === family)!;
    const srcAddr = pick(src);
    const dstAddr = pick(dst);
    const from: NetpolEndpoint = { ...src.endpoint, address: formatK8sAddress(srcAddr) };
    const to: NetpolEndpoint = { ...dst.endpoint, address: formatK8sAddress(dstAddr) };

    const self = src.entry !== null && src.entry === dst.entry;
    const egress = this.direction('egress', src.entry, { endpoint: from, entry: src.entry }, { endpoint: to, entry: dst.entry, address: dstAddr }, port, protocol, self);
    const ingress = this.direction('ingress', dst.entry, { endpoint: to, entry: dst.entry }, { endpoint: from, entry: src.entry, address: srcAddr }, port, protocol, self);
    const allowed = egress.allowed && ingress.allowed;
    const policy = !egress.allowed ? egress.policy : !ingress.allowed ? ingress.policy : ingress.reason === 'rule' ? ingress.policy : egress.reason === 'rule' ? egress.policy : null;
    return { allowed, from, to, port, protocol, egress, ingress, policy };
  }

  private direction(
    direction: PolicyDirection,
    subject: PodEntry | null,
    own: { endpoint: NetpolEndpoint; entry: PodEntry | null },
    peer: { endpoint: NetpolEndpoint; entry: PodEntry | null; address: NetpolAddress },
    port: number,
    protocol: K8sProtocol,
    self: boolean,
  ): DirectionVerdict {
    const verdict = (allowed: boolean, reason: DirectionReason, policy: PolicyDecision | null, policies: readonly string[]): DirectionVerdict =>
      ({ direction, pod: subject?.key ?? null, allowed, reason, policy, policies });
    if (subject === null || own.endpoint.kind !== 'pod') return verdict(true, 'not-a-pod', null, []);
    const applying = this.selected(subject)[direction];
    const keys = applying.map((p) => p.key);
    if (self) return verdict(true, 'self', null, keys);
    if (applying.length === 0) return verdict(true, 'not-isolated', null, keys);
    if (direction === 'ingress' && (this.options.fromOwnNode ?? 'allow') === 'allow' && peer.endpoint.kind === 'node' && peer.endpoint.node !== null && peer.endpoint.node === subject.node) {
      return verdict(true, 'own-node', null, keys);
    }
    // Named ports resolve against the destination pod: the subject for ingress, the peer for egress.
    const destination = direction === 'ingress' ? subject : peer.entry;
    for (const p of applying) {
      const rules = direction === 'ingress' ? p.ingressRules : p.egressRules;
      for (const r of rules) {
        if (this.portsMatch(r.ports, port, protocol, destination) && this.peersMatch(r.peers, p, peer)) {
          return verdict(true, 'rule', { namespace: p.namespace, name: p.name, direction, rule: r.index }, keys);
        }
      }
    }
    const first = applying[0]!;
    return verdict(false, 'isolated', { namespace: first.namespace, name: first.name, direction, rule: null }, keys);
  }

  private portsMatch(ports: readonly DefaultedPort[] | null, port: number, protocol: K8sProtocol, destination: PodEntry | null): boolean {
    if (ports === null) return true;
    for (const p of ports) {
      if (p.protocol !== protocol) continue;
      if (p.port === undefined) return true;
      if (typeof p.port === 'number') {
        if (p.endPort === undefined ? port === p.port : port >= p.port && port <= p.endPort) return true;
        continue;
      }
      if (destination !== null && !destination.asNode && destination.ports.some((c) => c.name === p.port && c.protocol === protocol && c.containerPort === port)) return true;
    }
    return false;
  }

  private peersMatch(peers: readonly CompiledPeer[] | null, policy: CompiledPolicy, peer: { endpoint: NetpolEndpoint; entry: PodEntry | null; address: NetpolAddress }): boolean {
    if (peers === null) return true;
    for (const x of peers) {
      if (x.kind === 'ipBlock') {
        if (cidrHolds(x.cidr!, peer.address) && !x.except!.some((e) => cidrHolds(e, peer.address))) return true;
        continue;
      }
      const e = peer.entry;
      if (e === null || peer.endpoint.kind !== 'pod' || e.asNode) continue;
      if (x.namespaces === null) {
        if (e.namespace !== policy.namespace) continue;
      } else if (!selectorMatches(x.namespaces!, this.nsLabels.get(e.namespace) ?? { [NAMESPACE_NAME_LABEL]: e.namespace })) continue;
      if (selectorMatches(x.pods!, e.labels)) return true;
    }
    return false;
  }
}

/**
 * Judges one connection against a snapshot's policies. For many connections, build one
 * {@link NetworkPolicyEvaluator} and call its `evaluate`.
 *
 * @example
 * ```ts
 * const v = evaluateNetworkPolicy(snapshot, { from: 'shop/web', to: 'shop/db', port: 5432 });
 * console.log(v.allowed, v.policy);
 * ```
 */
export function evaluateNetworkPolicy(snapshot: NetpolSnapshot, connection: NetpolConnection, options: NetpolOptions = {}): NetpolVerdict {
  return new NetworkPolicyEvaluator(snapshot, options).evaluate(connection);
}

/**
 * The verdict in one sentence: what was allowed or blocked, and which policy and rule decided.
 *
 * @example
 * ```ts
 * describeVerdict(evaluateNetworkPolicy(snapshot, { from: 'shop/web', to: 'shop/db', port: 5432 }));
 * // 'blocked: ingress to shop/db is isolated by shop/db-ingress and no rule allows shop/web (10.244.1.5) on TCP 5432'
 * ```
 */
export function describeVerdict(v: NetpolVerdict): string {
  expectFields(v, { allowed: 'boolean', egress: 'object', ingress: 'object', from: 'object', to: 'object', port: 'integer', protocol: 'string' }, 'verdict');
  const who = (e: NetpolEndpoint): string => (e.pod !== null ? `${e.pod} (${e.address})` : e.kind === 'node' ? `node ${e.node} (${e.address})` : e.address);
  const on = `${v.protocol} ${v.port}`;
  const block = (d: DirectionVerdict): string => {
    const others = d.policies.length > 1 ? ` (and ${d.policies.length - 1} more polic${d.policies.length === 2 ? 'y' : 'ies'})` : '';
    return d.direction === 'egress'
      ? `blocked: egress from ${d.pod} is isolated by ${d.policy!.namespace}/${d.policy!.name}${others} and no rule allows ${who(v.to)} on ${on}`
      : `blocked: ingress to ${d.pod} is isolated by ${d.policy!.namespace}/${d.policy!.name}${others} and no rule allows ${who(v.from)} on ${on}`;
  };
  if (!v.egress.allowed) return block(v.egress);
  if (!v.ingress.allowed) return block(v.ingress);
  const part = (d: DirectionVerdict): string => {
    switch (d.reason) {
      case 'rule':
        return `${d.direction} by ${d.policy!.namespace}/${d.policy!.name} ${d.direction}[${d.policy!.rule}]`;
      case 'own-node':
        return 'ingress from the pod\'s own node';
      case 'self':
        return `${d.direction} to itself`;
      case 'not-isolated':
        return `${d.direction} not isolated`;
      default:
        return `${d.direction}: not a pod`;
    }
  };
  return `allowed: ${who(v.from)} → ${who(v.to)} on ${on} (${part(v.egress)}; ${part(v.ingress)})`;
}

