/**
 * Istio ambient's settings: the node agent's constants, its configuration and a pod's overrides,
 * shared by the iptables and nftables backends (`ambient.ts`, `ambient-nft.ts`).
 *
 * @module
 */
import { expectArgument, expectOneOf } from '../../model/guard.js';

/**
 * istio-cni's ambient constants (`cni/pkg/config/config.go`).
 *
 * @example
 * ```ts
 * AMBIENT.INPOD_MARK; // 0x539 (1337): ztunnel's own packets carry it
 * ```
 */
export const AMBIENT = {
  /** ztunnel sets this mark (SO_MARK) on its own sockets; it must match ztunnel's inpod config. */
  INPOD_MARK: 0x539,
  INPOD_MASK: 0xfff,
  /** The connmark of connections ztunnel accepted, restored as packet mark on the way out. */
  INPOD_TPROXY_MARK: 0x111,
  INPOD_TPROXY_MASK: 0xfff,
  INPOD_RESTORE_MASK: 0xffffffff,
  /** `ip rule add fwmark 0x111/0xfff pref 32764 lookup 100`. */
  ROUTE_TABLE_INBOUND: 100,
  INPOD_RULE_PRIORITY: 32764,
  DNS_CAPTURE_PORT: 15053,
  /** HBONE: ztunnel's inbound tunnel port, never captured. */
  ZTUNNEL_INBOUND_PORT: 15008,
  ZTUNNEL_OUTBOUND_PORT: 15001,
  ZTUNNEL_INBOUND_PLAINTEXT_PORT: 15006,
  /** The ipset (hash:ip) of pod addresses on the node: `istio-inpod-probes-v4` / `-v6`. */
  PROBE_IPSET: 'istio-inpod-probes',
  /** `values.yaml` of the istio-cni chart: `ambient.probeSNAT` defaults. */
  HOST_PROBE_SNAT: '169.254.7.127',
  HOST_PROBE_SNAT6: 'fd16:9254:7127:1337:ffff:ffff:ffff:ffff',
  /** The chains (`ChainInpodOutput`, `ChainInpodPrerouting`, `ChainHostPostrouting`). */
  CHAIN_OUTPUT: 'ISTIO_OUTPUT',
  CHAIN_PREROUTING: 'ISTIO_PRERT',
  CHAIN_POSTROUTING: 'ISTIO_POSTRT',
  /** Annotations and labels istio-cni reads. */
  DATAPLANE_MODE_LABEL: 'istio.io/dataplane-mode',
  BYPASS_INBOUND_ANNOTATION: 'ambient.istio.io/bypass-inbound-capture',
  DNS_CAPTURE_ANNOTATION: 'ambient.istio.io/dns-capture',
  VIRTUAL_INTERFACES_ANNOTATION: 'istio.io/reroute-virtual-interfaces',
  SIDECAR_STATUS_ANNOTATION: 'sidecar.istio.io/status',
  /** The chart's `excludeNamespaces` default. */
  EXCLUDE_NAMESPACES: ['kube-system'] as readonly string[],
} as const;

/**
 * The node agent's `AmbientConfig` fields that shape the rules.
 *
 * @example
 * ```ts
 * const c: AmbientConfig = { ...AMBIENT_DEFAULT_CONFIG, enableIPv6: true };
 * ```
 */
export interface AmbientConfig {
  /** `ambient.ipv6` and the pod having IPv6: run the ip6tables pass too. */
  readonly enableIPv6: boolean;
  /**
   * `ambient.dnsCapture` (`AMBIENT_DNS_CAPTURE`): capture DNS to ztunnel's 15053. The chart's
   * default is true; `AmbientConfig`'s zero value (and this default) is false, as in upstream's tests.
   */
  readonly redirectDNS: boolean;
  readonly hostProbeSNATAddress: string;
  readonly hostProbeV6SNATAddress: string;
  /** The nftables backend (`ambient.enableNativeNftables`, Istio 1.28+). */
  readonly nativeNftables: boolean;
  /** The kubelet's uid, which the nftables host rule matches (`skuid`). */
  readonly kubeletUID: number;
}

/**
 * The defaults: IPv4 only, no DNS capture (set `redirectDNS` for the chart's `ambient.dnsCapture:
 * true`), the chart's probe SNAT addresses, the iptables backend, kubelet as root.
 *
 * @example
 * ```ts
 * AMBIENT_DEFAULT_CONFIG.redirectDNS; // false
 * ```
 */
export const AMBIENT_DEFAULT_CONFIG: AmbientConfig = {
  enableIPv6: false,
  redirectDNS: false,
  hostProbeSNATAddress: AMBIENT.HOST_PROBE_SNAT,
  hostProbeV6SNATAddress: AMBIENT.HOST_PROBE_SNAT6,
  nativeNftables: false,
  kubeletUID: 0,
};

/**
 * `PodLevelOverrides`: what a pod's annotations change.
 *
 * @example
 * ```ts
 * const o: AmbientPodOverrides = { ingressMode: true, virtualInterfaces: [], dnsProxy: 'unset' };
 * ```
 */
export interface AmbientPodOverrides {
  /** `ambient.istio.io/bypass-inbound-capture: "true"`: no inbound redirection. */
  readonly ingressMode: boolean;
  /** `istio.io/reroute-virtual-interfaces`: inbound TCP on these goes to ztunnel's outbound port. */
  readonly virtualInterfaces: readonly string[];
  /** `ambient.istio.io/dns-capture`: overrides the node's DNS capture either way. */
  readonly dnsProxy: 'unset' | 'enabled' | 'disabled';
}

/**
 * No overrides.
 *
 * @example
 * ```ts
 * compileIstioAmbient({ pod: AMBIENT_NO_OVERRIDES });
 * ```
 */
export const AMBIENT_NO_OVERRIDES: AmbientPodOverrides = { ingressMode: false, virtualInterfaces: [], dnsProxy: 'unset' };


/**
 * Whether DNS is captured for a pod: the pod's annotation wins over the node setting.
 *
 * @example
 * ```ts
 * ambientRedirectDNS(AMBIENT_DEFAULT_CONFIG, { ...AMBIENT_NO_OVERRIDES, dnsProxy: 'enabled' }); // true
 * ```
 */
export function ambientRedirectDNS(config: AmbientConfig, overrides: AmbientPodOverrides): boolean {
  expectArgument(config, 'object', 'config');
  expectOneOf(overrides?.dnsProxy, ['unset', 'enabled', 'disabled'], 'overrides.dnsProxy');
  switch (overrides.dnsProxy) {
    case 'unset':
      return config.redirectDNS;
    case 'enabled':
      return true;
    case 'disabled':
      return false;
  }
}

/** `0x539/0xfff` as upstream formats it. @internal */
export function markMask(mark: number, mask: number): string {
  return `0x${mark.toString(16)}/0x${mask.toString(16)}`;
}
