/**
 * Which proxy-init release behaves how. Only the changes that the research notes document (with
 * the release that brought them, from the tags of `linkerd/linkerd2-proxy-init`) are modelled:
 *
 * | change | first release |
 * | --- | --- |
 * | skip the run when `-A PROXY_INIT_*` rules exist | v1.3.12 (oldest modelled) |
 * | `redirect-non-loopback-local-traffic` rule removed | v1.4.0 |
 * | `--subnets-to-ignore` | v1.5.2 |
 * | `--firewall-bin-path` / `--firewall-save-bin-path` | v1.6.0 |
 * | flush-and-reuse of existing chains; `-N` without comment | v2.2.0 |
 * | `--iptables-mode`, `--ipv6` | v2.3.0 |
 * | no `/<timestamp>` comment suffix; `--proxy-gid` | v2.4.0 |
 * | an ip6tables failure is fatal | v2.4.1 |
 *
 * @module
 */
import { expectArgument } from '../../model/guard.js';

/**
 * A proxy-init release, as numbers.
 *
 * @example
 * ```ts
 * const v: ProxyInitVersion | undefined = parseProxyInitVersion('v2.4.9');
 * ```
 */
export interface ProxyInitVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** As given (`'v2.4.9'`, `'main'`). */
  readonly text: string;
}

/**
 * What a release does, derived from {@link ProxyInitVersion}.
 *
 * @example
 * ```ts
 * proxyInitFeatures(parseProxyInitVersion('v2.1.0')!).skipIfRulesExist; // true
 * ```
 */
export interface ProxyInitFeatures {
  /** `formatComment` appends `/<unix seconds of process start>` (before v2.4.0). */
  readonly timestampedComments: boolean;
  /** Chains are created with `-N NAME -m comment --comment proxy-init/redirect-common-chain/<ts>`. */
  readonly chainCreationComment: boolean;
  /** v1.3.12–v2.1.x: any `-A PROXY_INIT_OUTPUT|PROXY_INIT_REDIRECT` rule in the save output skips the run. */
  readonly skipIfRulesExist: boolean;
  /** v2.2.0+: an existing chain is flushed and reused, an existing jump is not re-added. */
  readonly flushAndReuse: boolean;
  /** Before v1.4: `-m owner --uid-owner U -o lo ! -d 127.0.0.1/32 -j PROXY_INIT_REDIRECT`. */
  readonly redirectNonLoopbackLocalTraffic: boolean;
  readonly subnetsToIgnore: boolean;
  readonly firewallBinPath: boolean;
  /** `--iptables-mode` and the bin-path validation that maps names to modes. */
  readonly iptablesMode: boolean;
  readonly ipv6: boolean;
  readonly proxyGid: boolean;
  /** v2.4.1+: a failure in the IPv6 pass makes proxy-init exit 1. */
  readonly ipv6FailureFatal: boolean;
}

/**
 * The release whose rule generation the defaults reproduce (bundled in the proxy image).
 *
 * @example
 * ```ts
 * compileProxyInit(config, { upstreamVersion: CURRENT_PROXY_INIT_VERSION });
 * ```
 */
export const CURRENT_PROXY_INIT_VERSION = 'v2.4.9';

/**
 * The oldest release modelled.
 *
 * @example
 * ```ts
 * compileProxyInit(config, { upstreamVersion: OLDEST_PROXY_INIT_VERSION });
 * ```
 */
export const OLDEST_PROXY_INIT_VERSION = 'v1.3.12';

/**
 * Parses `v2.4.9`, `2.4`, `proxy-init/v2.3.0`, `main` or `latest`. Returns `undefined` for text
 * that is not a version.
 *
 * @example
 * ```ts
 * parseProxyInitVersion('proxy-init/v2.3.0'); // { major: 2, minor: 3, patch: 0, text: 'proxy-init/v2.3.0' }
 * ```
 */
export function parseProxyInitVersion(text: string): ProxyInitVersion | undefined {
  expectArgument(text, 'string', 'text');
  if (text === 'main' || text === 'latest' || text === 'current') {
    return { major: 2, minor: 4, patch: 9, text };
  }
  const m = /^(?:proxy-init\/)?v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(text);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2] ?? 0), patch: Number(m[3] ?? 0), text };
}

function atLeast(v: ProxyInitVersion, major: number, minor: number, patch: number): boolean {
  if (v.major !== major) return v.major > major;
  if (v.minor !== minor) return v.minor > minor;
  return v.patch >= patch;
}

/**
 * Whether `v` is at least as new as the oldest modelled release.
 *
 * @example
 * ```ts
 * isModelledVersion(parseProxyInitVersion('v1.2.0')!); // false
 * ```
 */
export function isModelledVersion(v: ProxyInitVersion): boolean {
  return atLeast(v, 1, 3, 12);
}

/**
 * Every proxy-init release (the tags of `linkerd/linkerd2-proxy-init`: `v1.0.0` … `v2.0.0`, then
 * `proxy-init/v2.1.0` … `proxy-init/v2.4.9`; `v1.4` is `v1.4.0`), newest last.
 *
 * @example
 * ```ts
 * PROXY_INIT_RELEASES.at(-1); // 'v2.4.9'
 * ```
 */
export const PROXY_INIT_RELEASES: readonly string[] = [
  'v1.0.0', 'v1.1.0', 'v1.2.0',
  ...Array.from({ length: 14 }, (_, i) => `v1.3.${i}`),
  'v1.4.0', 'v1.4.1', 'v1.5.0', 'v1.5.1', 'v1.5.2', 'v1.5.3', 'v1.6.0', 'v1.6.1', 'v1.6.2',
  'v2.0.0', 'v2.1.0', 'v2.2.0', 'v2.2.1', 'v2.2.2', 'v2.2.3', 'v2.2.4', 'v2.3.0',
  ...Array.from({ length: 10 }, (_, i) => `v2.4.${i}`),
];

/**
 * Whether `v` names a proxy-init release (or `main`/`latest`/`current`): a tag that does not exist,
 * such as `v2.4.10` or `v3.0.0`, is not taken for the newest.
 *
 * @example
 * ```ts
 * isKnownProxyInitRelease(parseProxyInitVersion('v2.5.0')!); // false
 * ```
 */
export function isKnownProxyInitRelease(v: ProxyInitVersion): boolean {
  expectArgument(v, 'object', 'version');
  if (v.text === 'main' || v.text === 'latest' || v.text === 'current') return true;
  return PROXY_INIT_RELEASES.includes(`v${v.major}.${v.minor}.${v.patch}`);
}

/**
 * The behaviour of a release.
 *
 * @example
 * ```ts
 * proxyInitFeatures(parseProxyInitVersion('v2.3.0')!).timestampedComments; // true
 * ```
 */
export function proxyInitFeatures(v: ProxyInitVersion): ProxyInitFeatures {
  expectArgument(v, 'object', 'version');
  return {
    timestampedComments: !atLeast(v, 2, 4, 0),
    chainCreationComment: !atLeast(v, 2, 2, 0),
    skipIfRulesExist: !atLeast(v, 2, 2, 0),
    flushAndReuse: atLeast(v, 2, 2, 0),
    redirectNonLoopbackLocalTraffic: !atLeast(v, 1, 4, 0),
    subnetsToIgnore: atLeast(v, 1, 5, 2),
    firewallBinPath: atLeast(v, 1, 6, 0),
    iptablesMode: atLeast(v, 2, 3, 0),
    ipv6: atLeast(v, 2, 3, 0),
    proxyGid: atLeast(v, 2, 4, 0),
    ipv6FailureFatal: atLeast(v, 2, 4, 1),
  };
}

/**
 * linkerd-cni releases and the proxy-init code they build rules with (the cni-plugin and
 * proxy-init tags of the same repository). `nativeSidecarDetection`: a `linkerd-proxy` init
 * container counts as the proxy (cni-plugin v1.5.0, PR #362).
 *
 * @example
 * ```ts
 * cniPluginFeatures('cni-plugin/v1.4.0'); // { proxyInit: 'v2.3.0', nativeSidecarDetection: false, iptablesBinFallback: false }
 * ```
 */
export function cniPluginFeatures(text: string): CniPluginFeatures | undefined {
  expectArgument(text, 'string', 'text');
  if (text === 'main' || text === 'latest' || text === 'current') {
    return { proxyInit: CURRENT_PROXY_INIT_VERSION, nativeSidecarDetection: true, iptablesBinFallback: true };
  }
  const m = /^(?:cni-plugin\/)?v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-alpha\.\d+)?$/.exec(text);
  if (!m) return undefined;
  const v: ProxyInitVersion = { major: Number(m[1]), minor: Number(m[2] ?? 0), patch: Number(m[3] ?? 0), text };
  // Only tags that exist: a version past the newest release is not taken for it.
  if (!CNI_PLUGIN_RELEASES.includes(`v${v.major}.${v.minor}.${v.patch}${m[4] ?? ''}`)) return undefined;
  if (!atLeast(v, 1, 4, 0)) return undefined;
  if (!atLeast(v, 1, 5, 0)) return { proxyInit: 'v2.3.0', nativeSidecarDetection: false, iptablesBinFallback: false };
  if (!atLeast(v, 1, 5, 1)) return { proxyInit: 'v2.4.0', nativeSidecarDetection: true, iptablesBinFallback: false };
  return { proxyInit: CURRENT_PROXY_INIT_VERSION, nativeSidecarDetection: true, iptablesBinFallback: atLeast(v, 1, 7, 0) };
}

/**
 * What a cni-plugin release does differently. `iptablesBinFallback`: when the configured
 * iptables binaries are not on the node's PATH, the plugin uses the first pair there of
 * `iptables-nft`, `iptables`, `iptables-legacy` (ip6tables likewise) (v1.7.0-alpha.1, PR #587).
 *
 * @example
 * ```ts
 * cniPluginFeatures('v1.7.0-alpha.1')?.iptablesBinFallback; // true
 * ```
 */
export interface CniPluginFeatures {
  readonly proxyInit: string;
  readonly nativeSidecarDetection: boolean;
  readonly iptablesBinFallback: boolean;
}

/**
 * Every cni-plugin release (`cni-plugin/v1.0.0` … `cni-plugin/v1.7.0-alpha.1`), newest last.
 *
 * @example
 * ```ts
 * CNI_PLUGIN_RELEASES.includes('v1.6.8'); // true
 * ```
 */
export const CNI_PLUGIN_RELEASES: readonly string[] = [
  'v1.0.0', 'v1.1.0', 'v1.1.1', 'v1.1.2', 'v1.1.3', 'v1.2.0', 'v1.2.1', 'v1.2.2', 'v1.3.0', 'v1.4.0', 'v1.5.0', 'v1.5.1', 'v1.5.2',
  ...Array.from({ length: 9 }, (_, i) => `v1.6.${i}`),
  'v1.7.0-alpha.1',
];
