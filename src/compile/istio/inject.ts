/**
 * The `istio-init` arguments the sidecar injector renders for a pod
 * (`manifests/charts/istio-control/istio-discovery/files/injection-template.yaml`, reference §1),
 * so that a pod given "as written" gets the rules it would get once injected.
 *
 * @module
 */
import { INJECTED_ISTIO_INIT_ARGS, ISTIO_CNI_ANNOTATIONS } from './defaults.js';
import type { Pod } from '../pod.js';
import { expectArgument, expectFields } from '../../model/guard.js';
import { fail } from '../../model/errors.js';

/**
 * The mesh-wide values the template falls back to when a pod has no annotation
 * (`values.global.proxy.*`, `meshConfig`). All optional; the defaults are the chart's.
 *
 * @example
 * ```ts
 * const mesh: IstioInjectorValues = { includeIPRanges: '10.0.0.0/8', excludeInboundPorts: '9000' };
 * ```
 */
export interface IstioInjectorValues {
  /** `meshConfig.defaultConfig.proxyListenPort` (15001). */
  readonly proxyListenPort?: string;
  /** `meshConfig.defaultConfig.proxyInboundListenPort` (15006). */
  readonly proxyInboundListenPort?: string;
  /** `ProxyConfig.interceptionMode` (REDIRECT). */
  readonly interceptionMode?: string;
  /** `global.proxy.includeIPRanges` (`*`). */
  readonly includeIPRanges?: string;
  /** `global.proxy.excludeIPRanges` (`""`). */
  readonly excludeIPRanges?: string;
  /** `global.proxy.includeInboundPorts` (`*`). */
  readonly includeInboundPorts?: string;
  /** `global.proxy.excludeInboundPorts` (`""`). */
  readonly excludeInboundPorts?: string;
  /** `global.proxy.statusPort` (15020). */
  readonly statusPort?: string;
  /** `global.proxy.includeOutboundPorts` (`""`: no `-q`). */
  readonly includeOutboundPorts?: string;
  /** `global.proxy.excludeOutboundPorts` (`""`: no `-o`). */
  readonly excludeOutboundPorts?: string;
  /** `global.nativeNftables` (false): `--native-nftables` (Istio 1.27+). */
  readonly nativeNftables?: boolean;
  /** `pilot.cni.enabled` (false): istio-cni programs the pod; the init container only validates. */
  readonly cniEnabled?: boolean;
  /** `global.proxy_init.forceApplyIptables` (false): `--force-apply` (without CNI). */
  readonly forceApplyIptables?: boolean;
}

/**
 * The `istio-iptables` argv of the `istio-init` container the injector adds to the pod (without
 * the logging flag), or `null` when the interception mode is `NONE` (no init container).
 * `-u` is the `istio-proxy` container's non-zero `runAsUser` unless the mode is TPROXY.
 * With no annotations and the chart defaults this is {@link INJECTED_ISTIO_INIT_ARGS}.
 *
 * A pod the injector skips (`injectRequired`: host network, an ignored namespace such as
 * kube-system, `sidecar.istio.io/inject: "false"`) throws `NOT_INJECTED` naming why.
 *
 * @example
 * ```ts
 * const argv = istioInitArgsForPod(pod);
 * const rules = argv && compileIstio(parseIstioIptablesArgs(argv));
 * ```
 */
export function istioInitArgsForPod(pod: Pod, values: IstioInjectorValues = {}): string[] | null {
  expectFields(pod, { annotations: 'object', labels: 'object', containers: 'array', initContainers: 'array' }, 'pod');
  expectArgument(values, 'object', 'values');
  const skip = istioInjectorSkip(pod);
  if (skip !== null) fail('NOT_INJECTED', `the sidecar injector skips pod ${pod.name || '(unnamed)'}: ${skip}`, undefined, pod.name);
  const a = pod.annotations;
  const ann = (key: string, fallback: string): string => a[key] ?? fallback;
  const mode = ann(ISTIO_CNI_ANNOTATIONS.redirectMode, values.interceptionMode ?? 'REDIRECT');
  if (mode === 'NONE') return null;
  const proxy = [...pod.initContainers, ...pod.containers].find((c) => c.name === 'istio-proxy');
  const runAsUser = proxy?.runAsUser;
  const uid = mode !== 'TPROXY' && runAsUser !== undefined && runAsUser !== 0 ? String(runAsUser) : '1337';
  const statusPort = ann(ISTIO_CNI_ANNOTATIONS.ports, values.statusPort ?? '15020');
  const exclude = excludeInboundPort(statusPort, ann(ISTIO_CNI_ANNOTATIONS.excludeInboundPorts, values.excludeInboundPorts ?? ''));
  const argv = [
    '-p', values.proxyListenPort ?? INJECTED_ISTIO_INIT_ARGS[1]!,
    '-z', values.proxyInboundListenPort ?? INJECTED_ISTIO_INIT_ARGS[3]!,
    '-u', uid,
    '-m', mode,
    '-i', ann(ISTIO_CNI_ANNOTATIONS.includeIPCidrs, values.includeIPRanges ?? '*'),
    '-x', ann(ISTIO_CNI_ANNOTATIONS.excludeIPCidrs, values.excludeIPRanges ?? ''),
    '-b', ann(ISTIO_CNI_ANNOTATIONS.includeInboundPorts, values.includeInboundPorts ?? '*'),
    '-d', `15090,15021,${exclude}`,
  ];
  const optional = (flag: string, key: string, global: string | undefined): void => {
    if (a[key] !== undefined || (global ?? '') !== '') argv.push(flag, a[key] ?? global ?? '');
  };
  optional('-q', ISTIO_CNI_ANNOTATIONS.includeOutboundPorts, values.includeOutboundPorts);
  optional('-o', ISTIO_CNI_ANNOTATIONS.excludeOutboundPorts, values.excludeOutboundPorts);
  const reroute = a[ISTIO_CNI_ANNOTATIONS.rerouteVirtualInterfaces] ?? a[ISTIO_CNI_ANNOTATIONS.kubevirtInterfaces];
  if (reroute !== undefined) argv.push('-k', reroute);
  if (a[ISTIO_CNI_ANNOTATIONS.excludeInterfaces] !== undefined) argv.push('-c', a[ISTIO_CNI_ANNOTATIONS.excludeInterfaces]!);
  if (values.cniEnabled === true) argv.push('--run-validation', '--skip-rule-apply');
  else if (values.forceApplyIptables === true) argv.push('--force-apply');
  if (values.nativeNftables === true) argv.push('--native-nftables');
  return argv;
}

/**
 * The namespaces the sidecar injector never injects (`IgnoredNamespaces`,
 * `pkg/kube/inject/initializer.go`).
 * @internal
 */
export const ISTIO_INJECTOR_IGNORED_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease', 'local-path-storage'];

/**
 * Why the sidecar injector leaves a pod alone (`injectRequired`, `pkg/kube/inject/inject.go`), or
 * `null`: host network, an ignored namespace, or `sidecar.istio.io/inject: "false"` (the label
 * wins over the annotation; another value falls back to the namespace's policy). An ambient pod
 * or another mesh's pod is not skipped by this check.
 * @internal
 */
export function istioInjectorSkip(pod: Pod): string | null {
  if (pod.hostNetwork === true) return 'it uses the host network (spec.hostNetwork: true)';
  if (pod.namespace !== undefined && ISTIO_INJECTOR_IGNORED_NAMESPACES.includes(pod.namespace)) return `namespace ${pod.namespace} is one the injector ignores (${ISTIO_INJECTOR_IGNORED_NAMESPACES.join(', ')})`;
  const key = ISTIO_CNI_ANNOTATIONS.inject;
  const label = pod.labels[key];
  const value = label ?? pod.annotations[key];
  if (value === 'false') return `it has ${key}: "false" (${label !== undefined ? 'label' : 'annotation'})`;
  return null;
}

/**
 * What injecting a pod the injector does not skip means when the pod is ambient or has another
 * mesh's proxy: the injector checks neither (`injectRequired`).
 * @internal
 */
export function istioInjectorNotes(pod: Pod): string[] {
  const out: string[] = [];
  const mode = pod.labels['istio.io/dataplane-mode'];
  if (mode === 'ambient') {
    out.push(`pod ${pod.name || '(unnamed)'} is labelled istio.io/dataplane-mode: ambient, which the sidecar injector does not check: once injected it has a sidecar, and istio-cni's ambient agent then leaves it alone (a pod with sidecar.istio.io/status is not enrolled); these are its sidecar rules`);
  }
  const linkerd = [...pod.initContainers, ...pod.containers].find((c) => c.name === 'linkerd-proxy' || c.name === 'linkerd-init');
  if (linkerd) out.push(`pod ${pod.name || '(unnamed)'} has Linkerd's ${linkerd.name} container, which the sidecar injector does not check: it would add Istio's sidecar beside it, and both meshes' rules would capture the pod's traffic`);
  return out;
}

/** The template's `excludeInboundPort`: append the status port unless it is already listed or 0. */
function excludeInboundPort(port: string, excluded: string): string {
  const p = port.trim();
  if (p === '' || p === '0') return excluded;
  const out: string[] = [];
  for (const x of excluded.split(',')) {
    if (x === p) return excluded;
    const t = x.trim();
    if (t !== '') out.push(t);
  }
  out.push(p);
  return out.join(',');
}
