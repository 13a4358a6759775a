/**
 * Istio's defaults and constants, each copied from the upstream file that defines it
 * (`istio/istio`, paths relative to the repository root). Nothing here is computed.
 *
 * @module
 */

/**
 * The chains istio-iptables creates.
 * From `tools/istio-iptables/pkg/constants/constants.go` ("iptables chains").
 *
 * @example
 * ```ts
 * ISTIO_CHAINS.ISTIO_OUTPUT; // 'ISTIO_OUTPUT'
 * ```
 */
export const ISTIO_CHAINS = {
  ISTIO_OUTPUT: 'ISTIO_OUTPUT',
  ISTIO_OUTPUT_DNS: 'ISTIO_OUTPUT_DNS',
  ISTIO_INBOUND: 'ISTIO_INBOUND',
  ISTIO_DIVERT: 'ISTIO_DIVERT',
  ISTIO_TPROXY: 'ISTIO_TPROXY',
  ISTIO_REDIRECT: 'ISTIO_REDIRECT',
  ISTIO_IN_REDIRECT: 'ISTIO_IN_REDIRECT',
  ISTIO_DROP: 'ISTIO_DROP',
} as const;

/**
 * Names the rule builder never declares with `-N`: the built-in chains and the standard verdicts.
 * From `constants.go` (`BuiltInChainsAndTargetsMap`).
 *
 * @example
 * ```ts
 * BUILTIN_CHAINS_AND_TARGETS.includes('RETURN'); // true
 * ```
 */
export const BUILTIN_CHAINS_AND_TARGETS: readonly string[] = [
  'INPUT',
  'OUTPUT',
  'FORWARD',
  'PREROUTING',
  'POSTROUTING',
  'ACCEPT',
  'RETURN',
  'DROP',
];

/**
 * The tables the restore text always considers, even when empty (empty ones are skipped).
 * From `tools/istio-iptables/pkg/builder/iptables_builder_impl.go` (`buildRestore`).
 *
 * @example
 * ```ts
 * RESTORE_BASE_TABLES; // ['filter', 'nat', 'mangle']
 * ```
 */
export const RESTORE_BASE_TABLES: readonly string[] = ['filter', 'nat', 'mangle'];

/**
 * In TPROXY mode, the mark Envoy's outbound-to-own-pod-IP packets get so that ISTIO_INBOUND
 * does not skip them on re-entry. From `constants.go` (`OutboundMark`).
 *
 * @example
 * ```ts
 * OUTBOUND_MARK; // '1338'
 * ```
 */
export const OUTBOUND_MARK = '1338';

/**
 * The istio-agent DNS listener. From `constants.go` (`IstioAgentDNSListenerPort`).
 *
 * @example
 * ```ts
 * ISTIO_AGENT_DNS_LISTENER_PORT; // '15053'
 * ```
 */
export const ISTIO_AGENT_DNS_LISTENER_PORT = '15053';

/**
 * UID used when `-u` is empty and the `ENVOY_USER` (`istio-proxy`) lookup fails; the proxy
 * image's `istio-proxy` user has the same id. From `constants.go` (`DefaultProxyUID`) and
 * `tools/common/config/config.go` (`FillConfigFromEnvironment`).
 *
 * @example
 * ```ts
 * DEFAULT_PROXY_UID; // '1337'
 * ```
 */
export const DEFAULT_PROXY_UID = '1337';

/**
 * Most owner groups `ISTIO_OUTBOUND_OWNER_GROUPS` may list (they become one rule).
 * From `tools/common/config/validation.go` (`maxOwnerGroupsInclude`).
 *
 * @example
 * ```ts
 * MAX_OWNER_GROUPS_INCLUDE; // 64
 * ```
 */
export const MAX_OWNER_GROUPS_INCLUDE = 64;

/**
 * Source address of Envoy's inbound passthrough connections, per family (`run.go`:
 * "127.0.0.6/::7 is bind connect from inbound passthrough cluster"; the IPv6 value is `::6`).
 *
 * @example
 * ```ts
 * PASSTHROUGH_SOURCE[6]; // '::6/128'
 * ```
 */
export const PASSTHROUGH_SOURCE = { 4: '127.0.0.6/32', 6: '::6/128' } as const;

/**
 * The IPv6 loopback used where IPv4 uses `HostIPv4LoopbackCidr` (`run.go`, `AppendVersionedRule`).
 *
 * @example
 * ```ts
 * IPV6_LOOPBACK_CIDR; // '::1/128'
 * ```
 */
export const IPV6_LOOPBACK_CIDR = '::1/128';

/**
 * Environment variables istio-iptables reads that have no flag, with their defaults.
 * From `constants.go` (`HostIPv4LoopbackCidr`, `OwnerGroupsInclude`, `OwnerGroupsExclude`) and
 * `config.go` (`ENVOY_USER`).
 *
 * @example
 * ```ts
 * ISTIO_ENV_DEFAULTS.ISTIO_OUTBOUND_OWNER_GROUPS; // '*'
 * ```
 */
export const ISTIO_ENV_DEFAULTS = {
  ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR: '127.0.0.1/32',
  ISTIO_OUTBOUND_OWNER_GROUPS: '*',
  ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE: '',
  ENVOY_USER: 'istio-proxy',
} as const;

/**
 * `config.DefaultConfig()` and the flag defaults of `istio-iptables`
 * (`tools/common/config/config.go`, `tools/istio-iptables/pkg/cmd/root.go`). Fields not listed
 * default to `""`, `false` or empty.
 *
 * @example
 * ```ts
 * ISTIO_IPTABLES_DEFAULTS.proxyPort; // '15001'
 * ```
 */
export const ISTIO_IPTABLES_DEFAULTS = {
  proxyPort: '15001',
  inboundCapturePort: '15006',
  inboundTunnelPort: '15008',
  inboundTProxyMark: '1337',
  inboundTProxyRouteTable: '133',
  iptablesProbePort: 15002,
  probeTimeout: '5s',
  ownerGroupsInclude: ISTIO_ENV_DEFAULTS.ISTIO_OUTBOUND_OWNER_GROUPS,
  ownerGroupsExclude: ISTIO_ENV_DEFAULTS.ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE,
  hostIPv4LoopbackCidr: ISTIO_ENV_DEFAULTS.ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR,
} as const;

/**
 * What the sidecar injector passes to `istio-init` with chart defaults
 * (`manifests/charts/istio-control/istio-discovery/files/injection-template.yaml`):
 * `-p 15001 -z 15006 -u 1337 -m REDIRECT -i '*' -x "" -b '*' -d 15090,15021,15020`.
 *
 * @example
 * ```ts
 * INJECTED_ISTIO_INIT_ARGS.join(' ');
 * // '-p 15001 -z 15006 -u 1337 -m REDIRECT -i * -x  -b * -d 15090,15021,15020'
 * ```
 */
export const INJECTED_ISTIO_INIT_ARGS: readonly string[] = [
  '-p',
  '15001',
  '-z',
  '15006',
  '-u',
  '1337',
  '-m',
  'REDIRECT',
  '-i',
  '*',
  '-x',
  '',
  '-b',
  '*',
  '-d',
  '15090,15021,15020',
];

/**
 * The istio-cni plugin's own defaults, used when a pod annotation is absent.
 * From `cni/pkg/plugin/sidecar_redirect.go` (the `default*` constants) and `plugin.go`.
 *
 * @example
 * ```ts
 * ISTIO_CNI_DEFAULTS.excludeOutboundPorts; // '15020' (the status port)
 * ```
 */
export const ISTIO_CNI_DEFAULTS = {
  proxyStatusPort: '15020',
  redirectToPort: '15001',
  noRedirectUID: '1337',
  noRedirectGID: '1337',
  redirectMode: 'REDIRECT',
  includeIPCidrs: '*',
  excludeIPCidrs: '',
  excludeInboundPorts: '15020',
  excludeOutboundPorts: '15020',
  includeInboundPorts: '*',
  includeOutboundPorts: '',
  kubevirtInterfaces: '',
  excludeInterfaces: '',
  /** Always appended to the inbound exclusions ("Add 15090 to sync with non-cni injection template"). */
  alwaysExcludedInboundPorts: '15020,15021,15090',
  /** The container that carries the proxy's env and security context. */
  proxyContainer: 'istio-proxy',
  /** A pod with this container is left to istio-init. */
  initContainer: 'istio-init',
} as const;

/**
 * Pod annotations the istio-cni plugin reads, by its internal name
 * (`sidecar_redirect.go`, `annotationRegistry`; names from `istio.io/api/annotation`).
 *
 * @example
 * ```ts
 * ISTIO_CNI_ANNOTATIONS.redirectMode; // 'sidecar.istio.io/interceptionMode'
 * ```
 */
export const ISTIO_CNI_ANNOTATIONS = {
  inject: 'sidecar.istio.io/inject',
  status: 'sidecar.istio.io/status',
  redirectMode: 'sidecar.istio.io/interceptionMode',
  ports: 'status.sidecar.istio.io/port',
  includeIPCidrs: 'traffic.sidecar.istio.io/includeOutboundIPRanges',
  excludeIPCidrs: 'traffic.sidecar.istio.io/excludeOutboundIPRanges',
  excludeInboundPorts: 'traffic.sidecar.istio.io/excludeInboundPorts',
  includeInboundPorts: 'traffic.sidecar.istio.io/includeInboundPorts',
  excludeOutboundPorts: 'traffic.sidecar.istio.io/excludeOutboundPorts',
  includeOutboundPorts: 'traffic.sidecar.istio.io/includeOutboundPorts',
  kubevirtInterfaces: 'traffic.sidecar.istio.io/kubevirtInterfaces',
  rerouteVirtualInterfaces: 'istio.io/reroute-virtual-interfaces',
  excludeInterfaces: 'traffic.sidecar.istio.io/excludeInterfaces',
} as const;
