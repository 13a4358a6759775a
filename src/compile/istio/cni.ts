/**
 * istio-cni in sidecar mode: from the pod (annotations, the `istio-proxy` container's env and
 * security context, its addresses), the same decision whether to touch the pod
 * (`cni/pkg/plugin/plugin.go`, `doAddRun`), the same `Redirect` (`sidecar_redirect.go`,
 * `NewRedirect`) and the same configuration handed to istio-iptables
 * (`sidecar_iptables_linux.go`, `Program`), hence the same rules.
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import { parseGoBool } from './args.js';
import { compileIstio, type IstioCompileResult } from './compile.js';
import { detectEnableIPv6, type IstioConfig, istioConfig } from './config.js';
import { ISTIO_CNI_ANNOTATIONS, ISTIO_CNI_DEFAULTS, ISTIO_ENV_DEFAULTS } from './defaults.js';
import { parseGoPrefix } from './netip.js';
import { type IstioReleaseFeatures, istioReleaseFeatures } from './version.js';
import type { Pod, PodContainer } from '../pod.js';
import { expectFields, expectShape } from '../../model/guard.js';

/**
 * What istio-cni reads besides the pod: its own environment on the node and its CNI config.
 *
 * @example
 * ```ts
 * const input: IstioCniInput = { pod, enableIPv6: false, env: { ISTIO_OUTBOUND_OWNER_GROUPS: '*' } };
 * ```
 */
export interface IstioCniInput {
  /** The pod as the API server returns it (read with `readPod` / `podFromObject`). */
  readonly pod: Pod;
  /**
   * Whether the pod network namespace has IPv6 (upstream looks at its interfaces). Default: from
   * `status.podIPs` as upstream decides (`ISTIO_DUAL_STACK` of the proxy: any IPv6 address),
   * `false` when the manifest has no addresses.
   */
  readonly enableIPv6?: boolean;
  /**
   * The plugin's environment on the node: `ISTIO_OUTBOUND_OWNER_GROUPS`,
   * `ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE`, `ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR`.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** CNI config `exclude_namespaces`. */
  readonly excludeNamespaces?: readonly string[];
  /** Reproduce an older release (`upstreamVersion` of `compileIstio`). */
  readonly upstreamVersion?: string;
  /** CNI config `native_nftables` (chart `global.nativeNftables`): the nftables rules instead. */
  readonly nativeNftables?: boolean;
}

/**
 * The plugin's `Redirect`: the per-pod settings read from annotations and the proxy container.
 *
 * @example
 * ```ts
 * compileIstioCni({ pod }).redirect?.excludeInboundPorts; // '15020,15021,15090'
 * ```
 */
export interface IstioRedirect {
  readonly targetPort: string;
  readonly redirectMode: string;
  readonly noRedirectUID: string;
  readonly noRedirectGID: string;
  readonly includeIPCidrs: string;
  readonly excludeIPCidrs: string;
  readonly excludeInboundPorts: string;
  readonly excludeOutboundPorts: string;
  readonly includeInboundPorts: string;
  readonly includeOutboundPorts: string;
  readonly rerouteVirtualInterfaces: string;
  readonly excludeInterfaces: string;
  readonly dnsRedirect: boolean;
  readonly dualStack: boolean;
  readonly invalidDrop: boolean;
}

/**
 * The outcome for one pod: either the plugin left it alone (`skipped` says why, nothing is
 * written), or the rules it wrote.
 *
 * @example
 * ```ts
 * const r: IstioCniResult = compileIstioCni({ pod });
 * if (r.skipped) console.error(r.skipped);
 * ```
 */
export interface IstioCniResult extends IstioCompileResult {
  /** Why istio-cni does not touch this pod, or `null` when it programs it. */
  readonly skipped: string | null;
  /** The pod's `Redirect`, or `null` when skipped. */
  readonly redirect: IstioRedirect | null;
}

/**
 * Compiles what istio-cni writes into a pod's network namespace. Annotation values are checked
 * as the plugin checks them; a bad one is an error (`BAD_MANIFEST`), as it fails the pod's CNI ADD.
 *
 * @example
 * ```ts
 * const r = compileIstioCni({ pod: readPod(text) });
 * process.stdout.write(r.restore.map((x) => x.text).join(''));
 * ```
 */
export function compileIstioCni(input: IstioCniInput): IstioCniResult {
  expectShape(input, {
    kind: 'object',
    fields: {
      enableIPv6: ['boolean', 'undefined'],
      env: { kind: ['object', 'undefined'], values: ['string', 'undefined'] },
      excludeNamespaces: { kind: ['array', 'undefined'], items: 'string' },
      upstreamVersion: ['string', 'undefined'],
      nativeNftables: ['boolean', 'undefined'],
    },
  }, 'input');
  expectFields(input.pod, { annotations: 'object', labels: 'object', containers: 'array', initContainers: 'array' }, 'input.pod');
  const { pod } = input;
  const skip = skipReason(pod, input.excludeNamespaces ?? []);
  if (skip !== null) {
    return { config: istioConfig(), restore: [], commands: [], ipCommands: [], rules: [], warnings: [], skipped: skip, redirect: null };
  }
  const warnings: string[] = [];
  const redirect = newRedirect(pod, warnings, istioReleaseFeatures(input.upstreamVersion));
  const env = input.env ?? {};
  const enableIPv6 = input.enableIPv6 ?? detectEnableIPv6(pod.podIPs, redirect.dualStack);
  const config: IstioConfig = istioConfig({
    hostFilesystemPodNetwork: true,
    proxyPort: redirect.targetPort,
    proxyUID: redirect.noRedirectUID,
    proxyGID: redirect.noRedirectGID,
    inboundInterceptionMode: redirect.redirectMode,
    outboundIPRangesInclude: redirect.includeIPCidrs,
    inboundPortsExclude: redirect.excludeInboundPorts,
    inboundPortsInclude: redirect.includeInboundPorts,
    excludeInterfaces: redirect.excludeInterfaces,
    outboundPortsExclude: redirect.excludeOutboundPorts,
    outboundPortsInclude: redirect.includeOutboundPorts,
    outboundIPRangesExclude: redirect.excludeIPCidrs,
    rerouteVirtualInterfaces: redirect.rerouteVirtualInterfaces,
    redirectDNS: redirect.dnsRedirect,
    // The pod's resolv.conf is not known on the node: CNI always captures all DNS.
    captureAllDNS: redirect.dnsRedirect,
    dropInvalid: redirect.invalidDrop,
    dualStack: redirect.dualStack,
    nativeNftables: input.nativeNftables === true,
    // FillConfigFromEnvironment, run by the plugin inside the pod netns.
    ownerGroupsInclude: env['ISTIO_OUTBOUND_OWNER_GROUPS'] ?? ISTIO_ENV_DEFAULTS.ISTIO_OUTBOUND_OWNER_GROUPS,
    ownerGroupsExclude: env['ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE'] ?? ISTIO_ENV_DEFAULTS.ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE,
    hostIPv4LoopbackCidr: env['ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR'] ?? ISTIO_ENV_DEFAULTS.ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR,
    enableIPv6,
  });
  const result = compileIstio(config, input.upstreamVersion === undefined ? {} : { upstreamVersion: input.upstreamVersion });
  return { ...result, warnings: [...warnings, ...result.warnings], skipped: null, redirect };
}

/** The checks of `doAddRun`, in order. */
function skipReason(pod: Pod, excludeNamespaces: readonly string[]): string | null {
  const ns = pod.namespace;
  if (ns !== undefined && excludeNamespaces.includes(ns)) return `namespace ${ns} is excluded in the CNI config`;
  const containers = allContainers(pod);
  const names = new Set(containers.map((c) => c.name));
  if (names.has(ISTIO_CNI_DEFAULTS.initContainer)) {
    return 'the pod already has an istio-init container, which programs its rules itself';
  }
  const proxy = containers.find((c) => c.name === ISTIO_CNI_DEFAULTS.proxyContainer);
  const disable = proxyEnv(pod)['DISABLE_ENVOY'];
  if (disable !== undefined && parseGoBool(disable) === true) return 'DISABLE_ENVOY is set on istio-proxy';
  if (!proxy) return `the pod has no istio-proxy container (has ${[...names].sort().join(', ') || 'none'})`;
  const args = proxy.args;
  if (args.length >= 2 && args[0] === 'proxy' && args[1] !== '' && args[1] !== 'sidecar') {
    return `istio-proxy runs as proxy type ${args[1]}, not sidecar`;
  }
  let inject = pod.annotations[ISTIO_CNI_ANNOTATIONS.inject] ?? '';
  const label = pod.labels[ISTIO_CNI_ANNOTATIONS.inject];
  if (label !== undefined) inject = label;
  if (inject !== '' && parseGoBool(inject) === false) return `injection is disabled (${ISTIO_CNI_ANNOTATIONS.inject}: ${inject})`;
  if (pod.annotations[ISTIO_CNI_ANNOTATIONS.status] === undefined) {
    return `the pod has no ${ISTIO_CNI_ANNOTATIONS.status} annotation (it was not injected)`;
  }
  return null;
}

function proxyEnv(pod: Pod): Record<string, string> {
  const env: Record<string, string> = {};
  const proxy = allContainers(pod).find((c) => c.name === ISTIO_CNI_DEFAULTS.proxyContainer);
  for (const e of proxy?.env ?? []) env[e.name] = e.value ?? '';
  return env;
}

type Validator = (value: string) => string | null;

const validPortList: Validator = (ports) => {
  const s = ports.trim();
  if (s === '') return null;
  for (const p of s.split(',')) {
    const t = p.trim();
    if (!/^[0-9]+$/.test(t) || Number(t) > 65535) {
      return `portList ${JSON.stringify(ports)} invalid: failed parsing port ${JSON.stringify(p)}: strconv.ParseUint: parsing ${JSON.stringify(t)}: invalid syntax`;
    }
  }
  return null;
};
const validPortListWithWildcard: Validator = (ports) => (ports === '*' ? null : validPortList(ports));
const validCidrList: Validator = (cidrs) => {
  if (cidrs.length === 0) return null;
  for (const c of cidrs.split(',')) {
    const p = parseGoPrefix(c);
    if (typeof p === 'string') return `failed parsing cidr '${c}': ${p}`;
  }
  return null;
};
const validCidrListWithWildcard: Validator = (r) => {
  if (r === '*') return null;
  const e = validCidrList(r);
  return e === null ? null : `IPRanges invalid: ${e}`;
};
const validMode: Validator = (m) => (m === 'REDIRECT' || m === 'TPROXY' ? null : `interceptionMode invalid: ${m}`);
const validInterfaceNames: Validator = (names) => {
  for (const n of names.split(',')) {
    if (n === '') continue;
    if (n.length > 15 || n === '.' || n === '..' || /[/:\s]/.test(n)) return `invalid interface name ${JSON.stringify(n)}`;
  }
  return null;
};
const always: Validator = () => null;

/** `annotationRegistry` of `sidecar_redirect.go`: annotation, default, validator. */
const REGISTRY = {
  redirectMode: [ISTIO_CNI_ANNOTATIONS.redirectMode, ISTIO_CNI_DEFAULTS.redirectMode, validMode],
  includeIPCidrs: [ISTIO_CNI_ANNOTATIONS.includeIPCidrs, ISTIO_CNI_DEFAULTS.includeIPCidrs, validCidrListWithWildcard],
  excludeIPCidrs: [ISTIO_CNI_ANNOTATIONS.excludeIPCidrs, ISTIO_CNI_DEFAULTS.excludeIPCidrs, validCidrList],
  excludeInboundPorts: [ISTIO_CNI_ANNOTATIONS.excludeInboundPorts, ISTIO_CNI_DEFAULTS.excludeInboundPorts, validPortListWithWildcard],
  includeInboundPorts: [ISTIO_CNI_ANNOTATIONS.includeInboundPorts, ISTIO_CNI_DEFAULTS.includeInboundPorts, validPortListWithWildcard],
  excludeOutboundPorts: [ISTIO_CNI_ANNOTATIONS.excludeOutboundPorts, ISTIO_CNI_DEFAULTS.excludeOutboundPorts, validPortListWithWildcard],
  includeOutboundPorts: [ISTIO_CNI_ANNOTATIONS.includeOutboundPorts, ISTIO_CNI_DEFAULTS.includeOutboundPorts, validPortListWithWildcard],
  kubevirtInterfaces: [ISTIO_CNI_ANNOTATIONS.kubevirtInterfaces, ISTIO_CNI_DEFAULTS.kubevirtInterfaces, always],
  rerouteVirtualInterfaces: [ISTIO_CNI_ANNOTATIONS.rerouteVirtualInterfaces, ISTIO_CNI_DEFAULTS.kubevirtInterfaces, always],
  excludeInterfaces: [ISTIO_CNI_ANNOTATIONS.excludeInterfaces, ISTIO_CNI_DEFAULTS.excludeInterfaces, validInterfaceNames],
} as const satisfies Record<string, readonly [string, string, Validator]>;

/** `getAnnotationOrDefault`: the annotation (checked) or the default. */
function annotationOrDefault(pod: Pod, name: keyof typeof REGISTRY): { found: boolean; value: string } {
  const [key, def, validate] = REGISTRY[name];
  const v = pod.annotations[key];
  if (v === undefined) return { found: false, value: def };
  const err = validate(v);
  if (err !== null) {
    fail('BAD_MANIFEST', `annotation value error for value ${name}; annotationFound = true: ${err}`, undefined, `${key}: ${v}`);
  }
  return { found: true, value: v };
}

/** `NewRedirect` in `sidecar_redirect.go`. */
function newRedirect(pod: Pod, warnings: string[], release: IstioReleaseFeatures): IstioRedirect {
  const get = (name: keyof typeof REGISTRY): string => annotationOrDefault(pod, name).value;
  const proxy = allContainers(pod).find((c) => c.name === ISTIO_CNI_DEFAULTS.proxyContainer);
  const runAsUser = proxy?.runAsUser;
  const runAsGroup = proxy?.runAsGroup;

  const redirectMode = get('redirectMode');
  const includeIPCidrs = get('includeIPCidrs');
  const excludeIPCidrs = get('excludeIPCidrs');
  let excludeInboundPorts = get('excludeInboundPorts');
  const includeInboundPorts = get('includeInboundPorts');
  const excludeOutboundPorts = get('excludeOutboundPorts');
  const includeOutboundPorts = get('includeOutboundPorts');
  // "Add 15090 to sync with non-cni injection template"
  excludeInboundPorts = excludeInboundPorts.trim();
  if (excludeInboundPorts.length > 0 && !excludeInboundPorts.endsWith(',')) excludeInboundPorts += ',';
  excludeInboundPorts += ISTIO_CNI_DEFAULTS.alwaysExcludedInboundPorts;
  excludeInboundPorts = [...new Set(excludeInboundPorts.split(','))].join(',');
  const excludeInterfaces = get('excludeInterfaces');
  // kubevirtInterfaces is deprecated: istio.io/reroute-virtual-interfaces wins when present.
  // 1.24 read only kubevirtInterfaces; 1.25.0–1.27.1 only the new annotation (the old value was
  // overwritten by the new one's empty default); 1.27.2 on, the new one, else the old one.
  const reroute = annotationOrDefault(pod, 'rerouteVirtualInterfaces');
  let rerouteVirtualInterfaces: string;
  if (!release.cniRerouteAnnotation) rerouteVirtualInterfaces = get('kubevirtInterfaces');
  else if (reroute.found || !release.cniKubevirtAnnotation) {
    if (!reroute.found && !release.cniKubevirtAnnotation && pod.annotations[ISTIO_CNI_ANNOTATIONS.kubevirtInterfaces] !== undefined) {
      get('kubevirtInterfaces');
      warnings.push(`${ISTIO_CNI_ANNOTATIONS.kubevirtInterfaces} has no effect in Istio ${release.name} (istio-cni reads only ${ISTIO_CNI_ANNOTATIONS.rerouteVirtualInterfaces} from 1.25.0 to 1.27.1)`);
    }
    rerouteVirtualInterfaces = reroute.value;
  } else rerouteVirtualInterfaces = get('kubevirtInterfaces');

  const env = proxyEnv(pod);
  const boolEnv = (name: string, what: string): boolean => {
    const v = env[name];
    if (v === undefined) return false;
    const b = parseGoBool(v);
    if (b === undefined) warnings.push(`cannot parse ${what} environment variable strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
    return b ?? false;
  };

  return {
    targetPort: ISTIO_CNI_DEFAULTS.redirectToPort,
    redirectMode,
    noRedirectUID: runAsUser !== undefined && runAsUser !== 0 ? String(runAsUser) : ISTIO_CNI_DEFAULTS.noRedirectUID,
    noRedirectGID: runAsGroup !== undefined && runAsGroup !== 0 ? String(runAsGroup) : ISTIO_CNI_DEFAULTS.noRedirectGID,
    includeIPCidrs,
    excludeIPCidrs,
    excludeInboundPorts,
    excludeOutboundPorts,
    includeInboundPorts,
    includeOutboundPorts,
    rerouteVirtualInterfaces,
    excludeInterfaces,
    dnsRedirect: boolEnv('ISTIO_META_DNS_CAPTURE', 'DNS capture'),
    dualStack: boolEnv('ISTIO_DUAL_STACK', 'dual stack'),
    invalidDrop: boolEnv('INVALID_DROP', 'invalid drop'),
  };
}

/**
 * Every container, init containers first (`containers(pod)` in `kubernetes.go`: the sidecar may
 * be a native sidecar, i.e. an init container).
 */
function allContainers(pod: Pod): readonly PodContainer[] {
  return [...pod.initContainers, ...pod.containers];
}
