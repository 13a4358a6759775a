/**
 * The istio-iptables configuration, field for field as upstream's `config.Config`
 * (`tools/common/config/config.go`), with the flag and environment variable that set each field.
 * Values stay strings where upstream keeps strings: lists are split only when rules are built,
 * exactly as upstream does (so `"6000,7000,"` behaves as it does there).
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import {
  DEFAULT_PROXY_UID,
  ISTIO_IPTABLES_DEFAULTS,
  MAX_OWNER_GROUPS_INCLUDE,
} from './defaults.js';
import { isGo4, isGoLoopback, parseGoAddr, parseGoPrefix } from './netip.js';
import { expectArgument, expectStrings, expectFieldsLike } from '../../model/guard.js';

/**
 * Every `config.Config` field that changes what istio-iptables writes (and the few that only
 * change how it runs). Flag names are upstream's (`tools/istio-iptables/pkg/cmd/root.go`); each
 * flag except `-p` can also be set by the environment variable named in its doc.
 *
 * @example
 * ```ts
 * const cfg: IstioConfig = istioConfig({ inboundPortsInclude: '*', outboundIPRangesInclude: '*' });
 * ```
 */
export interface IstioConfig {
  /** `-p`, `--envoy-port` (no env var): target of ISTIO_REDIRECT. Default `15001`. */
  readonly proxyPort: string;
  /** `-z`, `--inbound-capture-port` (`INBOUND_CAPTURE_PORT`): target of ISTIO_IN_REDIRECT, TPROXY `--on-port`. Default `15006`. */
  readonly inboundCapturePort: string;
  /** `-e`, `--inbound-tunnel-port` (`INBOUND_TUNNEL_PORT`): HBONE port that is never captured. Default `15008`. */
  readonly inboundTunnelPort: string;
  /** `-u`, `--proxy-uid` (`PROXY_UID`): comma list; empty means the uid of `$ENVOY_USER`, else 1337. */
  readonly proxyUID: string;
  /** `-g`, `--proxy-gid` (`PROXY_GID`): comma list; empty means the same as `proxyUID`. */
  readonly proxyGID: string;
  /** `-m`, `--istio-inbound-interception-mode` (`ISTIO_INBOUND_INTERCEPTION_MODE`): `TPROXY`, or anything else for nat REDIRECT. */
  readonly inboundInterceptionMode: string;
  /** `-t`, `--istio-inbound-tproxy-mark` (`ISTIO_INBOUND_TPROXY_MARK`). Default `1337`. */
  readonly inboundTProxyMark: string;
  /** `-r`, `--istio-inbound-tproxy-route-table` (`ISTIO_INBOUND_TPROXY_ROUTE_TABLE`): policy-routing table. Default `133`. */
  readonly inboundTProxyRouteTable: string;
  /** `-b`, `--istio-inbound-ports` (`ISTIO_INBOUND_PORTS`): `""` no inbound capture, `*` all TCP, or a port list. */
  readonly inboundPortsInclude: string;
  /** `-d`, `--istio-local-exclude-ports` (`ISTIO_LOCAL_EXCLUDE_PORTS`): only honoured with `-b '*'`. */
  readonly inboundPortsExclude: string;
  /** Env `ISTIO_OUTBOUND_OWNER_GROUPS` (no flag): `*`, or the only groups whose traffic is captured. */
  readonly ownerGroupsInclude: string;
  /** Env `ISTIO_OUTBOUND_OWNER_GROUPS_EXCLUDE` (no flag): groups never captured (with include `*`). */
  readonly ownerGroupsExclude: string;
  /** `-q`, `--istio-outbound-ports` (`ISTIO_OUTBOUND_PORTS`): TCP ports always sent to Envoy. */
  readonly outboundPortsInclude: string;
  /** `-o`, `--istio-local-outbound-ports-exclude` (`ISTIO_LOCAL_OUTBOUND_PORTS_EXCLUDE`): ports never captured. */
  readonly outboundPortsExclude: string;
  /** `-i`, `--istio-service-cidr` (`ISTIO_SERVICE_CIDR`): `*`, a CIDR list, or `""` (no catch-all capture). */
  readonly outboundIPRangesInclude: string;
  /** `-x`, `--istio-service-exclude-cidr` (`ISTIO_SERVICE_EXCLUDE_CIDR`): CIDRs never captured (`*` is an error). */
  readonly outboundIPRangesExclude: string;
  /** `-k`, `--kube-virt-interfaces` (`KUBE_VIRT_INTERFACES`): interfaces whose inbound traffic counts as outbound. */
  readonly rerouteVirtualInterfaces: string;
  /** `-c`, `--istio-exclude-interfaces` (`ISTIO_EXCLUDE_INTERFACES`): interfaces never captured. */
  readonly excludeInterfaces: string;
  /** `--redirect-dns` (`REDIRECT_DNS`, also `ISTIO_META_DNS_CAPTURE`): DNS capture to 15053. */
  readonly redirectDNS: boolean;
  /** `--capture-all-dns` (`CAPTURE_ALL_DNS`): capture every port-53 packet, not only the resolv.conf servers. */
  readonly captureAllDNS: boolean;
  /** `--drop-invalid` (`DROP_INVALID`, also `INVALID_DROP`): drop conntrack-INVALID packets in mangle. */
  readonly dropInvalid: boolean;
  /** `--dual-stack` (`DUAL_STACK`, also `ISTIO_DUAL_STACK`): any IPv6 pod address enables IPv6. */
  readonly dualStack: boolean;
  /** Derived upstream from the pod's addresses (see {@link detectEnableIPv6}); here an explicit input. */
  readonly enableIPv6: boolean;
  /** Derived upstream from `/etc/resolv.conf` when DNS capture is on (see {@link parseResolvConf}). */
  readonly dnsServersV4: readonly string[];
  /** As {@link IstioConfig.dnsServersV4}, the IPv6 servers. */
  readonly dnsServersV6: readonly string[];
  /** Env `ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR` (no flag): the IPv4 "localhost" of the loopback rules. Default `127.0.0.1/32`. */
  readonly hostIPv4LoopbackCidr: string;
  /** `--network-namespace` (`NETWORK_NAMESPACE`): where the rules are applied; no effect on them. */
  readonly networkNamespace: string;
  /** `--cni-mode` (`CNI_MODE`): set by istio-cni (pod-scoped xtables lock); no effect on the rules. */
  readonly hostFilesystemPodNetwork: boolean;
  /** `-n`, `--dry-run` (`DRY_RUN`): upstream records instead of running; the commands are the same. */
  readonly dryRun: boolean;
  /** `--skip-rule-apply` (`SKIP_RULE_APPLY`): write nothing (used by `istio-validation`). */
  readonly skipRuleApply: boolean;
  /** `--run-validation` (`RUN_VALIDATION`): probe the rules afterwards; no effect on them. */
  readonly runValidation: boolean;
  /** `--iptables-probe-port` (`IPTABLES_PROBE_PORT`): validation probe port. Default 15002. */
  readonly iptablesProbePort: number;
  /** `--probe-timeout` (`PROBE_TIMEOUT`): validation timeout, a Go duration. Default `5s`. */
  readonly probeTimeout: string;
  /** `--reconcile` (`RECONCILE`): on drift, clean up and re-apply; no effect in a clean namespace. */
  readonly reconcile: boolean;
  /** `--cleanup-only` (`CLEANUP_ONLY`): only delete Istio's rules and chains. */
  readonly cleanupOnly: boolean;
  /** `--force-apply` (`FORCE_APPLY`): apply even if the rules look present; no effect in a clean namespace. */
  readonly forceApply: boolean;
  /** `--native-nftables` (`NATIVE_NFTABLES`): write nftables instead (not simulated). */
  readonly nativeNftables: boolean;
  /** `--force-iptables-binary` (`FORCE_IPTABLES_BINARY`): `legacy` or `nft`; no effect on the rules. */
  readonly forceIptablesBinary: string;
}

/**
 * `config.DefaultConfig()`: every field at the value istio-iptables starts from before flags,
 * environment and `FillConfigFromEnvironment` apply.
 *
 * @example
 * ```ts
 * ISTIO_DEFAULT_CONFIG.inboundPortsInclude; // '' (no inbound capture unless -b is given)
 * ```
 */
export const ISTIO_DEFAULT_CONFIG: IstioConfig = {
  proxyPort: ISTIO_IPTABLES_DEFAULTS.proxyPort,
  inboundCapturePort: ISTIO_IPTABLES_DEFAULTS.inboundCapturePort,
  inboundTunnelPort: ISTIO_IPTABLES_DEFAULTS.inboundTunnelPort,
  proxyUID: '',
  proxyGID: '',
  inboundInterceptionMode: '',
  inboundTProxyMark: ISTIO_IPTABLES_DEFAULTS.inboundTProxyMark,
  inboundTProxyRouteTable: ISTIO_IPTABLES_DEFAULTS.inboundTProxyRouteTable,
  inboundPortsInclude: '',
  inboundPortsExclude: '',
  ownerGroupsInclude: ISTIO_IPTABLES_DEFAULTS.ownerGroupsInclude,
  ownerGroupsExclude: ISTIO_IPTABLES_DEFAULTS.ownerGroupsExclude,
  outboundPortsInclude: '',
  outboundPortsExclude: '',
  outboundIPRangesInclude: '',
  outboundIPRangesExclude: '',
  rerouteVirtualInterfaces: '',
  excludeInterfaces: '',
  redirectDNS: false,
  captureAllDNS: false,
  dropInvalid: false,
  dualStack: false,
  enableIPv6: false,
  dnsServersV4: [],
  dnsServersV6: [],
  hostIPv4LoopbackCidr: ISTIO_IPTABLES_DEFAULTS.hostIPv4LoopbackCidr,
  networkNamespace: '',
  hostFilesystemPodNetwork: false,
  dryRun: false,
  skipRuleApply: false,
  runValidation: false,
  iptablesProbePort: ISTIO_IPTABLES_DEFAULTS.iptablesProbePort,
  probeTimeout: ISTIO_IPTABLES_DEFAULTS.probeTimeout,
  reconcile: false,
  cleanupOnly: false,
  forceApply: false,
  nativeNftables: false,
  forceIptablesBinary: '',
};

/**
 * Builds a configuration from {@link ISTIO_DEFAULT_CONFIG} and the fields given.
 *
 * @example
 * ```ts
 * const cfg = istioConfig({ inboundPortsInclude: '*', inboundPortsExclude: '15090,15021,15020',
 *                           outboundIPRangesInclude: '*', proxyUID: '1337' });
 * ```
 */
export function istioConfig(fields: Partial<IstioConfig> = {}): IstioConfig {
  expectFieldsLike(fields, ISTIO_DEFAULT_CONFIG, 'config');
  return { ...ISTIO_DEFAULT_CONFIG, ...fields };
}

/**
 * Upstream's `config.Split`: split on `,` and drop empty items (`"6000,7000,"` is two ports).
 *
 * @example
 * ```ts
 * splitIstioList('6000,7000,'); // ['6000', '7000']
 * ```
 */
export function splitIstioList(s: string): string[] {
  expectArgument(s, 'string', 'list');
  if (s === '') return [];
  return s.split(',').filter((x) => x !== '');
}

/**
 * The part of `FillConfigFromEnvironment` that does not touch the machine: an empty `proxyUID`
 * becomes the uid of `$ENVOY_USER` (1337 in the proxy image), an empty `proxyGID` the uid.
 * Then `Config.Validate()`: at most 64 include owner groups, and a valid IPv4 loopback CIDR with
 * a mask of 8 to 32 bits. Throws a `BAD_CONFIG` error otherwise.
 *
 * @example
 * ```ts
 * resolveIstioConfig(istioConfig()).proxyGID; // '1337'
 * ```
 */
export function resolveIstioConfig(config: IstioConfig, envoyUserUID: string = DEFAULT_PROXY_UID): IstioConfig {
  expectArgument(config, 'object', 'config');
  expectArgument(envoyUserUID, 'string', 'envoyUserUID');
  const proxyUID = config.proxyUID === '' ? envoyUserUID : config.proxyUID;
  const proxyGID = config.proxyGID === '' ? proxyUID : config.proxyGID;
  const resolved = { ...config, proxyUID, proxyGID };
  validateIstioConfig(resolved);
  return resolved;
}

/** `Config.Validate()` (`tools/common/config/validation.go`). */
function validateIstioConfig(c: IstioConfig): void {
  if (c.ownerGroupsInclude !== '*') {
    const groups = splitIstioList(c.ownerGroupsInclude);
    if (groups.length > MAX_OWNER_GROUPS_INCLUDE) {
      fail(
        'BAD_CONFIG',
        `number of owner groups whose outgoing traffic should be redirected to Envoy cannot exceed ${MAX_OWNER_GROUPS_INCLUDE}, got ${groups.length}: [${groups.join(' ')}]`,
        undefined,
        c.ownerGroupsInclude,
      );
    }
  }
  const cidr = c.hostIPv4LoopbackCidr;
  const p = parseGoPrefix(cidr);
  if (typeof p === 'string') fail('BAD_CONFIG', `failed to parse CIDR ${cidr}: ${p}`, undefined, cidr);
  if (!isGo4(p.addr) || !isGoLoopback(p.addr)) {
    fail('BAD_CONFIG', `expected valid IPv4 loopback address in CIDR ${cidr}`, undefined, cidr);
  }
  if (p.bits < 8 || p.bits > 32) {
    fail('BAD_CONFIG', `expected CIDR ${cidr} to have mask in range [8, 32]; found ${p.bits}`, undefined, cidr);
  }
}

/**
 * Upstream's IPv6 detection (`getLocalIP` in `tools/common/config/config.go`): walk the pod's
 * addresses in order, skipping loopback and link-local ones; without dual-stack the first one
 * decides, with dual-stack any IPv6 address enables IPv6.
 *
 * @example
 * ```ts
 * detectEnableIPv6(['10.0.0.2', 'fd00::2'], false); // false
 * detectEnableIPv6(['10.0.0.2', 'fd00::2'], true);  // true
 * ```
 */
export function detectEnableIPv6(addresses: readonly string[], dualStack: boolean): boolean {
  expectArgument(addresses, 'array', 'addresses');
  expectStrings(addresses, 'addresses');
  let isIPv6 = false;
  for (const text of addresses) {
    const a = parseGoAddr(text.replace(/\/\d+$/, ''));
    if (typeof a === 'string') continue;
    const b = a.bytes;
    const mapped = b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
    const v4 = b.length === 4 ? b : mapped ? b.slice(12) : null;
    if (v4) {
      if (v4[0] === 127 || (v4[0] === 169 && v4[1] === 254) || (v4[0] === 224 && v4[1] === 0 && v4[2] === 0)) continue;
      isIPv6 = false;
    } else {
      const loop = b.slice(0, 15).every((x) => x === 0) && b[15] === 1;
      const linkLocal = b[0] === 0xfe && (b[1]! & 0xc0) === 0x80;
      const llMulticast = b[0] === 0xff && (b[1]! & 0x0f) === 0x02;
      if (loop || linkLocal || llMulticast) continue;
      isIPv6 = true;
    }
    if (!dualStack) return isIPv6;
    if (isIPv6) break;
  }
  return isIPv6;
}

/**
 * Reads `nameserver` lines from resolv.conf text, split into IPv4 and IPv6 as upstream's
 * `netutil.IPsSplitV4V6` does (unparsable entries are dropped).
 *
 * @example
 * ```ts
 * parseResolvConf('search svc.cluster.local\nnameserver 10.96.0.10\n');
 * // { dnsServersV4: ['10.96.0.10'], dnsServersV6: [] }
 * ```
 */
export function parseResolvConf(text: string): { dnsServersV4: string[]; dnsServersV6: string[] } {
  expectArgument(text, 'string', 'text');
  const servers: string[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === 'nameserver' && f[1] !== undefined) servers.push(f[1]);
  }
  return splitDnsServers(servers);
}

/**
 * Splits DNS server addresses into IPv4 and IPv6 lists (`netutil.IPsSplitV4V6`): unparsable
 * entries are dropped, the others kept as written.
 *
 * @example
 * ```ts
 * splitDnsServers(['10.96.0.10', 'fd00::a']); // { dnsServersV4: ['10.96.0.10'], dnsServersV6: ['fd00::a'] }
 * ```
 */
export function splitDnsServers(servers: readonly string[]): { dnsServersV4: string[]; dnsServersV6: string[] } {
  expectArgument(servers, 'array', 'servers');
  expectStrings(servers, 'servers');
  const dnsServersV4: string[] = [];
  const dnsServersV6: string[] = [];
  for (const s of servers) {
    const a = parseGoAddr(s);
    if (typeof a === 'string') continue;
    const b = a.bytes;
    const mapped = b.length === 16 && b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
    (b.length === 4 || mapped ? dnsServersV4 : dnsServersV6).push(s);
  }
  return { dnsServersV4, dnsServersV6 };
}
