/**
 * The `linkerd-init` arguments the proxy injector writes into a pod, from the chart values and
 * the pod's (then its namespace's) `config.linkerd.io/*` annotations: `linkerd/linkerd2`
 * `charts/partials/templates/_proxy-init.tpl` (argument order), `pkg/inject/inject.go`
 * (annotation overrides), `charts/patch/templates/patch.json` (where the containers go).
 *
 * @module
 */
import { namespaceFromObject, podFromObject, type Namespace, type Pod } from '../pod.js';
import { INJECTOR_DEFAULTS, LINKERD_ANNOTATIONS, LINKERD_CONTAINERS } from './defaults.js';
import { goParseBool, goParseDuration, goParseInt } from './go.js';
import { expectArgument } from '../../model/guard.js';
import { NetfilterSimError, diagnostic, fail } from '../../model/errors.js';

/**
 * The chart values that shape `linkerd-init`, by their upstream names
 * (`charts/linkerd-control-plane/values.yaml`).
 *
 * @example
 * ```ts
 * const values: InjectorValues = INJECTOR_DEFAULTS;
 * ```
 */
export interface InjectorValues {
  readonly disableIPv6: boolean;
  readonly cniEnabled: boolean;
  readonly proxy: {
    readonly ports: { readonly admin: number; readonly control: number; readonly inbound: number; readonly outbound: number };
    readonly uid: number;
    readonly gid: number;
    readonly nativeSidecar: boolean;
  };
  readonly proxyInit: {
    readonly iptablesMode: string;
    readonly ignoreInboundPorts: string | number;
    readonly ignoreOutboundPorts: string | number;
    readonly kubeAPIServerPorts: string | number;
    readonly skipSubnets: string;
    readonly closeWaitTimeoutSecs: number;
    readonly logFormat: string;
    readonly logLevel: string;
    readonly runAsRoot: boolean;
  };
}

/**
 * Values to override, nested as in values.yaml.
 *
 * @example
 * ```ts
 * injectProxyInitArgs({ values: { proxyInit: { iptablesMode: 'legacy' }, disableIPv6: false } });
 * ```
 */
export interface InjectorValuesInput {
  readonly disableIPv6?: boolean;
  readonly cniEnabled?: boolean;
  readonly proxy?: {
    readonly ports?: Partial<InjectorValues['proxy']['ports']>;
    readonly uid?: number;
    readonly gid?: number;
    readonly nativeSidecar?: boolean;
  };
  readonly proxyInit?: Partial<InjectorValues['proxyInit']>;
}

/**
 * What {@link injectProxyInitArgs} takes.
 *
 * @example
 * ```ts
 * injectProxyInitArgs({ pod: readPod(podYaml), namespace: readNamespace(nsYaml), origin: 'webhook' });
 * ```
 */
export interface InjectProxyInitInput {
  /** The pod (or a manifest object of it). Its annotations override the values. */
  readonly pod?: Pod | unknown;
  /** Its namespace: annotations the pod does not set are taken from here (webhook only). */
  readonly namespace?: Namespace | unknown;
  /** Chart values; the rest are {@link INJECTOR_DEFAULTS}. */
  readonly values?: InjectorValuesInput;
  /**
   * A control-plane pod (destination, identity, proxy-injector): rendered by the chart itself with
   * `ignoreOutboundPorts` replaced by `kubeAPIServerPorts`, without annotation overrides.
   * Default: the pod has the `linkerd.io/control-plane-component` label.
   */
  readonly controlPlane?: boolean;
  /** `webhook` (default): namespace annotations apply; `cli` (`linkerd inject`): pod annotations only. */
  readonly origin?: 'webhook' | 'cli';
  /**
   * The Linkerd release whose injector to reproduce: `2.18`, `2.19` or `2.20` (the default), as
   * `stable-2.19.x`, `version-2.19` or `2.19`. It decides which native-sidecar annotations count.
   */
  readonly linkerdVersion?: string;
}

/**
 * The Linkerd releases whose injector differences are modelled (the native-sidecar annotation:
 * `config.alpha.linkerd.io/…` up to 2.18, `config.beta.linkerd.io/…` over it in 2.19,
 * `config.linkerd.io/…` over both since 2.20).
 *
 * @example
 * ```ts
 * LINKERD_INJECTOR_RELEASES.includes('2.19'); // true
 * ```
 */
export const LINKERD_INJECTOR_RELEASES: readonly string[] = ['2.18', '2.19', '2.20'];

/** `2.19`, `stable-2.19.3`, `version-2.19`, `enterprise-2.19.1` → `2.19`; unknown releases are refused. */
function injectorRelease(text: string | undefined): '2.18' | '2.19' | '2.20' {
  if (text === undefined) return '2.20';
  const m = /^(?:stable-|version-|enterprise-)?v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(text);
  const r = m ? `${Number(m[1])}.${Number(m[2])}` : null;
  if (r === null || !LINKERD_INJECTOR_RELEASES.includes(r)) {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `unknown Linkerd release "${text}" (known: ${LINKERD_INJECTOR_RELEASES.join(', ')})`, undefined, text));
  }
  return r as '2.18' | '2.19' | '2.20';
}

/**
 * The injected init container, as the patch writes it.
 *
 * @example
 * ```ts
 * const { args, placement } = injectProxyInitArgs({ pod });
 * const parsed = args ? parseProxyInitArgs(args) : undefined;
 * if (parsed?.ok) compileProxyInit(parsed.config);
 * ```
 */
export interface InjectedProxyInit {
  /** `linkerd-init`'s args; `null` with linkerd-cni (no init container writes rules). */
  readonly args: readonly string[] | null;
  /** The init container the patch adds: `linkerd-init`, or `linkerd-network-validator` with CNI. */
  readonly container: 'linkerd-init' | 'linkerd-network-validator';
  /** The proxy runs as a native sidecar (`restartPolicy: Always` init container). */
  readonly nativeSidecar: boolean;
  /** `first`: inserted at `initContainers/0` (native sidecars); `last`: appended (`initContainers/-`). */
  readonly placement: 'first' | 'last';
  /** The values after annotation overrides. */
  readonly values: InjectorValues;
  /** Annotations that were ignored (unparsable values), as the injector logs them. */
  readonly warnings: readonly string[];
  /** The chart's template failure, if any (`args` is then `null`). */
  readonly error?: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function mergeValues(input: InjectorValuesInput | undefined): InjectorValues {
  const d = INJECTOR_DEFAULTS;
  return {
    disableIPv6: input?.disableIPv6 ?? d.disableIPv6,
    cniEnabled: input?.cniEnabled ?? d.cniEnabled,
    proxy: {
      ports: { ...d.proxy.ports, ...(input?.proxy?.ports ?? {}) },
      uid: input?.proxy?.uid ?? d.proxy.uid,
      gid: input?.proxy?.gid ?? d.proxy.gid,
      nativeSidecar: input?.proxy?.nativeSidecar ?? d.proxy.nativeSidecar,
    },
    proxyInit: { ...d.proxyInit, ...(input?.proxyInit ?? {}) },
  };
}

/**
 * The `linkerd-init` argument vector the injector writes for a pod, in `_proxy-init.tpl`'s order:
 * bin-path flags for `nft`, `--ipv6=false`, the proxy ports, uid (gid when >= 0), inbound ignores
 * (control and admin always first), outbound ignores, close-wait, log flags, subnets.
 *
 * A pod the injector skips (host network, a Linkerd or Istio sidecar already there,
 * `linkerd.io/inject: disabled`) throws `NOT_INJECTED` naming why.
 *
 * @example
 * ```ts
 * injectProxyInitArgs({}).args?.join(' ');
 * // '--firewall-bin-path iptables-nft --firewall-save-bin-path iptables-nft-save --ipv6=false
 * //  --incoming-proxy-port 4143 --outgoing-proxy-port 4140 --proxy-uid 2102
 * //  --inbound-ports-to-ignore 4190,4191,4567,4568 --outbound-ports-to-ignore 4567,4568'
 * ```
 */
export function injectProxyInitArgs(input: InjectProxyInitInput = {}): InjectedProxyInit {
  expectArgument(input, 'object', 'input');
  const pod = input.pod === undefined ? undefined
    : isObj(input.pod) && Array.isArray(input.pod['containers']) && !('spec' in input.pod) ? (input.pod as unknown as Pod) : podFromObject(input.pod);
  const ns = input.namespace === undefined ? undefined
    : isObj(input.namespace) && isObj(input.namespace['annotations']) && !('metadata' in input.namespace) ? (input.namespace as unknown as Namespace) : namespaceFromObject(input.namespace);
  const base = mergeValues(input.values);
  const release = injectorRelease(input.linkerdVersion);
  if (pod !== undefined) {
    const skip = linkerdInjectorSkip(pod, ns, input.origin ?? 'webhook');
    if (skip !== null) fail('NOT_INJECTED', `the proxy injector skips pod ${pod.name || '(unnamed)'}: ${skip}`, undefined, pod.name);
  }
  const warnings: string[] = [];
  const controlPlane = input.controlPlane ?? (pod?.labels[LINKERD_ANNOTATIONS.controlPlaneComponentLabel] !== undefined);

  // getAnnotationOverrides: pod annotations, then (webhook) namespace annotations not on the pod.
  const annotations: Record<string, string> = {};
  if (!controlPlane) {
    if ((input.origin ?? 'webhook') === 'webhook' && ns) Object.assign(annotations, ns.annotations);
    if (pod) Object.assign(annotations, pod.annotations);
  }
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(annotations, k);
  const intOverride = (k: string, bits: 32 | 64, fallback: number): number => {
    if (!has(k)) return fallback;
    const r = goParseInt(annotations[k]!, 10, 'ParseInt');
    const limit = bits === 32 ? 2 ** 31 : 2 ** 63;
    if ('error' in r || r.value >= limit || r.value < -limit) {
      warnings.push(`unrecognized value used for the ${k} annotation: ${annotations[k]}`);
      return fallback;
    }
    return r.value;
  };

  const ports = {
    inbound: intOverride(LINKERD_ANNOTATIONS.inboundPort, 32, base.proxy.ports.inbound),
    outbound: intOverride(LINKERD_ANNOTATIONS.outboundPort, 32, base.proxy.ports.outbound),
    admin: intOverride(LINKERD_ANNOTATIONS.adminPort, 32, base.proxy.ports.admin),
    control: intOverride(LINKERD_ANNOTATIONS.controlPort, 32, base.proxy.ports.control),
  };
  // The close-wait timeout is read from the pod's own annotations only (`conf.pod.meta.Annotations`,
  // every release): a Namespace's is not inherited, and an empty value is no value.
  let closeWaitTimeoutSecs = base.proxyInit.closeWaitTimeoutSecs;
  const closeWait = pod?.annotations[LINKERD_ANNOTATIONS.closeWaitTimeout];
  if (closeWait !== undefined && closeWait !== '') {
    const ns = goParseDuration(closeWait);
    if (ns === undefined) warnings.push(`invalid duration value used for the ${LINKERD_ANNOTATIONS.closeWaitTimeout} annotation: ${closeWait}`);
    else closeWaitTimeoutSecs = Math.trunc(ns / 1e9);
  } else if (ns?.annotations[LINKERD_ANNOTATIONS.closeWaitTimeout] !== undefined && pod?.annotations[LINKERD_ANNOTATIONS.closeWaitTimeout] === undefined) {
    warnings.push(`${LINKERD_ANNOTATIONS.closeWaitTimeout} on namespace ${ns.name || '(unnamed)'} is ignored: the injector reads it from the pod only`);
  }
  // The first native-sidecar annotation present in the release's order decides; an unparsable
  // value leaves the chart value (the injector does not fall back to the next annotation).
  let nativeSidecar = base.proxy.nativeSidecar;
  const nativeKeys = release === '2.18'
    ? [LINKERD_ANNOTATIONS.proxyEnableNativeSidecarAlpha]
    : release === '2.19'
      ? [LINKERD_ANNOTATIONS.proxyEnableNativeSidecarBeta, LINKERD_ANNOTATIONS.proxyEnableNativeSidecarAlpha]
      : [LINKERD_ANNOTATIONS.proxyEnableNativeSidecar, LINKERD_ANNOTATIONS.proxyEnableNativeSidecarBeta, LINKERD_ANNOTATIONS.proxyEnableNativeSidecarAlpha];
  const nativeKey = nativeKeys.find((k) => has(k));
  if (nativeKey !== undefined) {
    const b = goParseBool(annotations[nativeKey]!);
    if (b === undefined) warnings.push(`unrecognized value used for the ${nativeKey} annotation: ${annotations[nativeKey]}`);
    else nativeSidecar = b;
  }
  const values: InjectorValues = {
    ...base,
    proxy: {
      ...base.proxy,
      ports,
      uid: intOverride(LINKERD_ANNOTATIONS.proxyUid, 64, base.proxy.uid),
      gid: intOverride(LINKERD_ANNOTATIONS.proxyGid, 64, base.proxy.gid),
      nativeSidecar,
    },
    proxyInit: {
      ...base.proxyInit,
      ignoreInboundPorts: has(LINKERD_ANNOTATIONS.skipInboundPorts) ? annotations[LINKERD_ANNOTATIONS.skipInboundPorts]! : base.proxyInit.ignoreInboundPorts,
      ignoreOutboundPorts: controlPlane
        ? base.proxyInit.kubeAPIServerPorts
        : has(LINKERD_ANNOTATIONS.skipOutboundPorts) ? annotations[LINKERD_ANNOTATIONS.skipOutboundPorts]! : base.proxyInit.ignoreOutboundPorts,
      skipSubnets: has(LINKERD_ANNOTATIONS.skipSubnets) ? annotations[LINKERD_ANNOTATIONS.skipSubnets]! : base.proxyInit.skipSubnets,
      closeWaitTimeoutSecs,
    },
  };
  const placement = nativeSidecar ? 'first' : 'last';
  if (values.cniEnabled) {
    return { args: null, container: LINKERD_CONTAINERS.networkValidator, nativeSidecar, placement, values, warnings };
  }
  const templateFails = (error: string): InjectedProxyInit => ({ args: null, container: LINKERD_CONTAINERS.init, nativeSidecar, placement, values, warnings, error });

  const pi = values.proxyInit;
  const args: string[] = [];
  if (pi.iptablesMode === 'nft') {
    args.push('--firewall-bin-path', 'iptables-nft', '--firewall-save-bin-path', 'iptables-nft-save');
  } else if (pi.iptablesMode !== 'legacy') {
    return templateFails(`Unsupported value "${pi.iptablesMode}" for proxyInit.iptablesMode\nValid values: ["nft", "legacy"]`);
  }
  if (values.disableIPv6) args.push('--ipv6=false');
  args.push('--incoming-proxy-port', `${ports.inbound}`, '--outgoing-proxy-port', `${ports.outbound}`);
  args.push('--proxy-uid', `${values.proxy.uid}`);
  if (values.proxy.gid >= 0) args.push('--proxy-gid', `${values.proxy.gid}`);
  const inbound = `${pi.ignoreInboundPorts}`;
  args.push('--inbound-ports-to-ignore', `${ports.control},${ports.admin}${inbound !== '' ? `,${inbound}` : ''}`);
  if (`${pi.ignoreOutboundPorts}` !== '') args.push('--outbound-ports-to-ignore', `${pi.ignoreOutboundPorts}`);
  if (pi.closeWaitTimeoutSecs) {
    if (!pi.runAsRoot) return templateFails('proxyInit.closeWaitTimeoutSecs requires proxyInit.runAsRoot: true (setting the conntrack sysctl needs a privileged linkerd-init)');
    args.push('--timeout-close-wait-secs', `${pi.closeWaitTimeoutSecs}`);
  }
  if (pi.logFormat) args.push('--log-format', pi.logFormat);
  if (pi.logLevel) args.push('--log-level', pi.logLevel);
  if (pi.skipSubnets) args.push('--subnets-to-ignore', pi.skipSubnets);
  return { args, container: LINKERD_CONTAINERS.init, nativeSidecar, placement, values, warnings };
}

/** The images `HasExistingSidecars` recognises (`pkg/healthcheck/sidecar.go`): proxies, then init containers. */
const SIDECAR_IMAGES = ['cr.l5d.io/linkerd/proxy:', 'gcr.io/istio-release/proxyv2:'];
const SIDECAR_INIT_IMAGES = ['cr.l5d.io/linkerd/proxy-init:', 'gcr.io/istio-release/proxy_init:'];
const INJECT_VALUES = ['enabled', 'disabled', 'ingress'];

/**
 * Why the proxy injector leaves a pod alone (`Report.Injectable`, `pkg/inject/report.go`), or
 * `null`: host network; a sidecar already there, Linkerd's or Istio's (`HasExistingSidecars`:
 * a container named `linkerd-proxy` or `istio-proxy`, an init container `linkerd-init` or
 * `istio-init`, or their images); `linkerd.io/inject: disabled` on the pod, or a value the
 * injector does not know (on the pod, or with the webhook on its namespace). A pod without any
 * inject annotation is taken as one the injector was asked to inject.
 * @internal
 */
export function linkerdInjectorSkip(pod: Pod, ns: Namespace | undefined, origin: 'webhook' | 'cli'): string | null {
  if (pod.hostNetwork === true) return 'hostNetwork is enabled (spec.hostNetwork: true)';
  const all = [...pod.initContainers, ...pod.containers];
  const proxy = all.find((c) => c.name === LINKERD_CONTAINERS.proxy || c.name === 'istio-proxy' || SIDECAR_IMAGES.some((i) => c.image?.startsWith(i)));
  const init = pod.initContainers.find((c) => c.name === LINKERD_CONTAINERS.init || c.name === 'istio-init' || SIDECAR_INIT_IMAGES.some((i) => c.image?.startsWith(i)));
  const found = proxy ?? init;
  if (found !== undefined) {
    const by = found.name === LINKERD_CONTAINERS.proxy || found.name === LINKERD_CONTAINERS.init || found.image?.startsWith('cr.l5d.io/') ? "Linkerd's" : "Istio's";
    return `pod has a sidecar injected already (${by} ${found === init ? 'init container' : 'container'} ${found.name}${found.image !== undefined ? `, image ${found.image}` : ''})`;
  }
  const key = LINKERD_ANNOTATIONS.inject;
  const onPod = pod.annotations[key];
  if (onPod === 'disabled') return `pod has the annotation "${key}: disabled"`;
  if (origin === 'cli') return null;
  const onNs = ns?.annotations[key];
  const bad = (v: string | undefined): boolean => v !== undefined && v !== '' && !INJECT_VALUES.includes(v);
  if (bad(onNs)) return `invalid value "${onNs}" for annotation "${key}" at namespace ${ns!.name || '(unnamed)'} (${INJECT_VALUES.join(', ')})`;
  if (bad(onPod)) return `invalid value "${onPod}" for annotation "${key}" at workload (${INJECT_VALUES.join(', ')})`;
  if (onNs === 'disabled' && onPod !== 'enabled' && onPod !== 'ingress') return `namespace ${ns!.name || '(unnamed)'} has the annotation "${key}: disabled" and the pod does not enable injection`;
  return null;
}
