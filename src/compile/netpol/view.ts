/**
 * What a NetworkPolicy controller reads from the API server, built from a snapshot: the policies
 * with the API's defaults (a controller never sees a policy the API server refused, nor one
 * without its defaults), the namespaces with their `kubernetes.io/metadata.name` label, and the
 * pods the controllers act on.
 *
 * @module
 */
import { NetfilterSimError } from '../../model/errors.js';
import type { K8sPod, Snapshot } from '../../model/kubernetes.js';
import { NAMESPACE_NAME_LABEL, compileSelector, defaultNetworkPolicy, fieldErrorDiagnostics, selectorMatches, validateNetworkPolicy, wellShaped } from '../../netpol/index.js';
import type { DefaultedPolicy, ValidateOptions } from '../../netpol/index.js';
import type { LabelSelector } from '../../model/kubernetes.js';

/** A pod as the controllers see it. */
export interface ViewPod {
  readonly key: string;
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly node: string | null;
  /** `status.podIP` (kube-router keys its pods by it). */
  readonly ip: string;
  /** `status.podIPs`, or the one `podIP`. */
  readonly ips: readonly string[];
  readonly pod: K8sPod;
}

/** The cluster as a controller's informers hold it. */
export interface ClusterView {
  readonly policies: readonly DefaultedPolicy[];
  readonly namespaces: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Pods a controller acts on: not finished, with an address, not hostNetwork (kube-router's `isNetPolActionable`). */
  readonly pods: readonly ViewPod[];
  /** Every pod of the right shape, finished and hostNetwork ones included. */
  readonly allPods: readonly K8sPod[];
  readonly warnings: readonly string[];
}

const FINISHED = new Set(['Failed', 'Succeeded', 'Completed']);

/** Builds the view; a policy the API server would refuse throws `INVALID_NETWORK_POLICY`. */
export function clusterView(snapshot: Pick<Snapshot, 'namespaces' | 'pods' | 'networkPolicies'>, options: ValidateOptions = {}): ClusterView {
  const shaped = wellShaped(snapshot);
  const warnings: string[] = [...shaped.warnings];
  const policies: DefaultedPolicy[] = [];
  for (const p of snapshot.networkPolicies) {
    const errors = validateNetworkPolicy(p, options);
    if (errors.length > 0) throw new NetfilterSimError(fieldErrorDiagnostics(errors));
    policies.push(defaultNetworkPolicy(p));
  }
  const namespaces = new Map<string, Readonly<Record<string, string>>>();
  for (const ns of shaped.namespaces) namespaces.set(ns.metadata.name, { ...(ns.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: ns.metadata.name });
  const pods: ViewPod[] = [];
  for (const pod of shaped.pods) {
    const namespace = pod.metadata.namespace ?? 'default';
    const key = `${namespace}/${pod.metadata.name}`;
    if (!namespaces.has(namespace)) {
      warnings.push(`namespace ${namespace} (of pod ${key}) has no Namespace object in the snapshot: its only label is ${NAMESPACE_NAME_LABEL}=${namespace}`);
      namespaces.set(namespace, { [NAMESPACE_NAME_LABEL]: namespace });
    }
    const ip = pod.status?.podIP ?? pod.status?.podIPs?.[0]?.ip ?? '';
    if (FINISHED.has(pod.status?.phase ?? '') || ip === '' || pod.spec?.hostNetwork === true) continue;
    const ips = pod.status?.podIPs?.map((x) => x.ip) ?? [ip];
    pods.push({ key, name: pod.metadata.name, namespace, labels: pod.metadata.labels ?? {}, node: pod.spec?.nodeName ?? null, ip, ips, pod });
  }
  return { policies, namespaces, pods, allPods: shaped.pods, warnings };
}

/** The pods of a namespace that a selector selects (`podLister.Pods(ns).List(selector)`). */
export function podsIn(view: ClusterView, namespace: string, selector: LabelSelector | undefined): ViewPod[] {
  const sel = compileSelector(selector ?? {});
  return view.pods.filter((p) => p.namespace === namespace && selectorMatches(sel, p.labels));
}

/** The namespaces a selector selects, in snapshot order. */
export function namespacesSelected(view: ClusterView, selector: LabelSelector): string[] {
  const sel = compileSelector(selector);
  return [...view.namespaces].filter(([, labels]) => selectorMatches(sel, labels)).map(([name]) => name);
}
