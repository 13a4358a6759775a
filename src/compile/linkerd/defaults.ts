/**
 * Linkerd's own defaults, each with the upstream file it comes from.
 *
 * - proxy-init's flag defaults: `linkerd/linkerd2-proxy-init` `proxy-init/cmd/root.go`
 *   (`newRootOptions`), at `183e791` (2026-07-23); rule generation is identical in
 *   `proxy-init/v2.4.9`, the release bundled in the proxy image.
 * - The injector's values: `linkerd/linkerd2` `charts/linkerd-control-plane/values.yaml` and
 *   `charts/partials/templates/_proxy-init.tpl`, at `b24cd4059` (edge-26.8.3+).
 * - linkerd-cni's rendered configuration: `linkerd/linkerd2` `charts/linkerd2-cni/values.yaml` and
 *   `charts/linkerd2-cni/templates/cni-plugin.yaml` (golden
 *   `cli/cmd/testdata/install-cni-plugin_default.golden`).
 *
 * @module
 */

/**
 * proxy-init's flag defaults (`proxy-init/cmd/root.go`, `newRootOptions`). The two proxy ports
 * default to `-1`, which `BuildFirewallConfiguration` rejects: they are mandatory in practice.
 *
 * @example
 * ```ts
 * PROXY_INIT_DEFAULTS.ipv6; // true: the CLI writes an IPv6 pass unless told --ipv6=false
 * ```
 */
export const PROXY_INIT_DEFAULTS = {
  /** `--incoming-proxy-port` / `-p` */
  incomingProxyPort: -1,
  /** `--outgoing-proxy-port` / `-o` */
  outgoingProxyPort: -1,
  /** `--proxy-uid` / `-u` */
  proxyUid: -1,
  /** `--proxy-gid` / `-g` */
  proxyGid: -1,
  /** `--ports-to-redirect` / `-r` */
  portsToRedirect: [] as readonly number[],
  /** `--inbound-ports-to-ignore` */
  inboundPortsToIgnore: [] as readonly string[],
  /** `--outbound-ports-to-ignore` */
  outboundPortsToIgnore: [] as readonly string[],
  /** `--subnets-to-ignore` */
  subnetsToIgnore: [] as readonly string[],
  /** `--simulate` */
  simulate: false,
  /** `--netns` */
  netns: '',
  /** `--use-wait-flag` / `-w` */
  useWaitFlag: false,
  /** `--timeout-close-wait-secs` */
  timeoutCloseWaitSecs: 0,
  /** `--log-format` */
  logFormat: 'plain',
  /** `--log-level` */
  logLevel: 'info',
  /** `--iptables-mode` */
  iptablesMode: '',
  /** `--ipv6` */
  ipv6: true,
  /** `--firewall-bin-path` */
  firewallBinPath: '',
  /** `--firewall-save-bin-path` */
  firewallSaveBinPath: '',
} as const;

/**
 * Constants of `pkg/iptables/iptables.go`: chain names, the multiport limit and the redirect modes.
 *
 * @example
 * ```ts
 * PROXY_INIT_CONSTANTS.IptablesMultiportLimit; // 15
 * ```
 */
export const PROXY_INIT_CONSTANTS = {
  /** `redirectChainName` */
  redirectChainName: 'PROXY_INIT_REDIRECT',
  /** `outputChainName` */
  outputChainName: 'PROXY_INIT_OUTPUT',
  /** `IptablesPreroutingChainName` */
  IptablesPreroutingChainName: 'PREROUTING',
  /** `IptablesOutputChainName` */
  IptablesOutputChainName: 'OUTPUT',
  /** `IptablesMultiportLimit`: port slots per `-m multiport` rule; a range takes two (xt_multiport). */
  IptablesMultiportLimit: 15,
  /** `RedirectAllMode` */
  RedirectAllMode: 'redirect-all',
  /** `RedirectListedMode` */
  RedirectListedMode: 'redirect-listed',
  /** `formatComment`'s prefix. */
  commentPrefix: 'proxy-init/',
} as const;

/**
 * The binaries proxy-init runs, per `--iptables-mode` and address family (`getCommands` in
 * `proxy-init/cmd/root.go`).
 *
 * @example
 * ```ts
 * IPTABLES_BINARIES.nft[6]; // { bin: 'ip6tables-nft', saveBin: 'ip6tables-nft-save' }
 * ```
 */
export const IPTABLES_BINARIES = {
  legacy: {
    4: { bin: 'iptables-legacy', saveBin: 'iptables-legacy-save' },
    6: { bin: 'ip6tables-legacy', saveBin: 'ip6tables-legacy-save' },
  },
  nft: {
    4: { bin: 'iptables-nft', saveBin: 'iptables-nft-save' },
    6: { bin: 'ip6tables-nft', saveBin: 'ip6tables-nft-save' },
  },
  plain: {
    4: { bin: 'iptables', saveBin: 'iptables-save' },
    6: { bin: 'ip6tables', saveBin: 'ip6tables-save' },
  },
} as const;

/**
 * The linkerd-control-plane chart values that shape the injected `linkerd-init` arguments
 * (`charts/linkerd-control-plane/values.yaml`), by their upstream names.
 *
 * @example
 * ```ts
 * INJECTOR_DEFAULTS.proxyInit.iptablesMode; // 'nft' (since edge-25.8.2; 'legacy' before)
 * ```
 */
export const INJECTOR_DEFAULTS = {
  /** `disableIPv6`: the chart turns proxy-init's IPv6 pass off. */
  disableIPv6: true,
  /** `cniEnabled`: with linkerd-cni there is no `linkerd-init`, only `linkerd-network-validator`. */
  cniEnabled: false,
  proxy: {
    ports: { admin: 4191, control: 4190, inbound: 4143, outbound: 4140 },
    uid: 2102,
    gid: -1,
    /** `proxy.nativeSidecar` (default since edge-26.5.2 / Linkerd 2.20). */
    nativeSidecar: true,
  },
  proxyInit: {
    iptablesMode: 'nft',
    /** Galera's ports; replaced (not extended) by `config.linkerd.io/skip-inbound-ports`. */
    ignoreInboundPorts: '4567,4568',
    /** Replaced by `config.linkerd.io/skip-outbound-ports`. */
    ignoreOutboundPorts: '4567,4568',
    /** Used instead of `ignoreOutboundPorts` by control-plane pods. */
    kubeAPIServerPorts: '443,6443',
    skipSubnets: '',
    closeWaitTimeoutSecs: 0,
    logFormat: '',
    logLevel: '',
    runAsRoot: false,
  },
} as const;

/**
 * The `linkerd` block of the CNI configuration the linkerd2-cni chart renders by default
 * (`cli/cmd/testdata/install-cni-plugin_default.golden`). Keys are the plugin's JSON keys.
 *
 * @example
 * ```ts
 * CNI_DEFAULT_CONF['inbound-ports-to-ignore']; // ['4191', '4190']: admin first, then control
 * ```
 */
export const CNI_DEFAULT_CONF = {
  'incoming-proxy-port': 4143,
  'outgoing-proxy-port': 4140,
  'proxy-uid': 2102,
  'ports-to-redirect': [] as readonly number[],
  'inbound-ports-to-ignore': ['4191', '4190'] as readonly string[],
  simulate: false,
  'use-wait-flag': false,
  'iptables-mode': 'nft',
  ipv6: false,
} as const;

/**
 * Kubernetes names Linkerd reads (`linkerd/linkerd2` `pkg/k8s/labels.go`).
 *
 * @example
 * ```ts
 * pod.annotations[LINKERD_ANNOTATIONS.skipOutboundPorts];
 * ```
 */
export const LINKERD_ANNOTATIONS = {
  skipInboundPorts: 'config.linkerd.io/skip-inbound-ports',
  skipOutboundPorts: 'config.linkerd.io/skip-outbound-ports',
  skipSubnets: 'config.linkerd.io/skip-subnets',
  proxyUid: 'config.linkerd.io/proxy-uid',
  proxyGid: 'config.linkerd.io/proxy-gid',
  inboundPort: 'config.linkerd.io/inbound-port',
  outboundPort: 'config.linkerd.io/outbound-port',
  adminPort: 'config.linkerd.io/admin-port',
  controlPort: 'config.linkerd.io/control-port',
  closeWaitTimeout: 'config.linkerd.io/close-wait-timeout',
  opaquePorts: 'config.linkerd.io/opaque-ports',
  proxyEnableNativeSidecar: 'config.linkerd.io/proxy-enable-native-sidecar',
  proxyEnableNativeSidecarAlpha: 'config.alpha.linkerd.io/proxy-enable-native-sidecar',
  /** Linkerd 2.19's name (over the alpha one); 2.20 prefers `config.linkerd.io/…` over both. */
  proxyEnableNativeSidecarBeta: 'config.beta.linkerd.io/proxy-enable-native-sidecar',
  inject: 'linkerd.io/inject',
  /** A label: control-plane pods carry it (`destination`, `identity`, `proxy-injector`, ...). */
  controlPlaneComponentLabel: 'linkerd.io/control-plane-component',
} as const;

/**
 * Container names the injector writes and linkerd-cni looks for.
 *
 * @example
 * ```ts
 * pod.initContainers.some((c) => c.name === LINKERD_CONTAINERS.init);
 * ```
 */
export const LINKERD_CONTAINERS = {
  init: 'linkerd-init',
  proxy: 'linkerd-proxy',
  networkValidator: 'linkerd-network-validator',
} as const;
