/**
 * Which Istio release's rule shapes to reproduce. The goldens describe 1.25 and later; older
 * releases wrote a few rules differently (reference §10, and `tools/istio-iptables/pkg/capture/run.go`
 * at each release tag, which exists from 1.12 on). Releases before 1.12 and after the newest known
 * one are refused with a `BAD_VALUE` error rather than guessed.
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';

/**
 * A parsed `MAJOR.MINOR` Istio release.
 *
 * @example
 * ```ts
 * const v: IstioVersion = parseIstioVersion('1.24.3'); // { major: 1, minor: 24 }
 * ```
 */
export interface IstioVersion {
  readonly major: number;
  readonly minor: number;
  /** The patch release when one was given (`1.27.4` → 4). */
  readonly patch?: number;
}

/**
 * The newest Istio release whose behaviour is reproduced (`release-1.31`); `latest` means it, and
 * a newer version is refused rather than treated as this one.
 *
 * @example
 * ```ts
 * ISTIO_LATEST_RELEASE; // { major: 1, minor: 31 }
 * ```
 */
export const ISTIO_LATEST_RELEASE: IstioVersion = { major: 1, minor: 31 };

/**
 * The oldest Istio release whose rules are reproduced (`tools/istio-iptables/pkg/capture/run.go`
 * as of 1.12); an older version is refused rather than treated as this one.
 *
 * @example
 * ```ts
 * ISTIO_OLDEST_RELEASE; // { major: 1, minor: 12 }
 * ```
 */
export const ISTIO_OLDEST_RELEASE: IstioVersion = { major: 1, minor: 12 };

/**
 * The newest rule shape: what every release from 1.25 on writes.
 *
 * @example
 * ```ts
 * ISTIO_CURRENT_SHAPE; // { major: 1, minor: 25 }
 * ```
 */
export const ISTIO_CURRENT_SHAPE: IstioVersion = { major: 1, minor: 25 };

/**
 * Parses an Istio release (`1.24`, `1.24.3`, `1.22.0-beta.1`, `v1.17`); `latest` or `current`
 * mean the current shape.
 *
 * @example
 * ```ts
 * parseIstioVersion('1.17.8'); // { major: 1, minor: 17 }
 * ```
 */
export function parseIstioVersion(text: string): IstioVersion {
  expectArgument(text, 'string', 'text');
  if (text === 'latest' || text === 'current' || text === 'master') return ISTIO_LATEST_RELEASE;
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(text);
  if (!m) fail('BAD_VALUE', `bad Istio version "${text}" (expected MAJOR.MINOR, e.g. 1.24)`, undefined, text);
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major !== 1) fail('BAD_VALUE', `unknown Istio version "${text}" (only 1.x releases exist)`, undefined, text);
  if (minor > ISTIO_LATEST_RELEASE.minor) {
    fail('BAD_VALUE', `unknown Istio version "${text}": the newest release known here is 1.${ISTIO_LATEST_RELEASE.minor}; its rules are not guessed`, undefined, text);
  }
  if (minor < ISTIO_OLDEST_RELEASE.minor) {
    fail('BAD_VALUE', `unknown Istio version "${text}": the oldest release known here is 1.${ISTIO_OLDEST_RELEASE.minor}; its rules are not guessed`, undefined, text);
  }
  const patch = /^v?\d+\.\d+\.(\d+)/.exec(text);
  return patch ? { major, minor, patch: Number(patch[1]) } : { major, minor };
}

/**
 * The rule-shape switches one release implies. Each names what changed and when.
 *
 * @example
 * ```ts
 * istioShape(parseIstioVersion('1.24')).outputJumpTcpOnly; // true
 * ```
 */
export interface IstioShape {
  readonly version: IstioVersion;
  /** ≤ 1.24: `-A OUTPUT -p tcp -j ISTIO_OUTPUT` (TCP only); 1.25+: `-A OUTPUT -j ISTIO_OUTPUT`. */
  readonly outputJumpTcpOnly: boolean;
  /** ≤ 1.24: `-o` excludes only TCP; 1.25+: a TCP and a UDP RETURN per port. */
  readonly outboundExcludeUdp: boolean;
  /** 1.18+: the loopback self-redirect rule carries `-p tcp ! --dport <tunnel port>`. */
  readonly loopbackRedirectSkipsTunnel: boolean;
  /** ≤ 1.12: `-A ISTIO_INBOUND -p tcp --dport 22 -j RETURN` first ("makes sure SSH is not redirected"). */
  readonly excludeSsh: boolean;
  /**
   * DNS rules: `chains` (1.25+: ISTIO_OUTPUT_DNS in nat and raw), `output` (1.23–1.24: UDP DNS
   * rules in ISTIO_OUTPUT, reached by `-A OUTPUT -p udp -j ISTIO_OUTPUT` in nat and in raw) or
   * `builtin` (≤ 1.22: UDP DNS rules directly in nat and raw OUTPUT).
   */
  readonly dns: 'chains' | 'output' | 'builtin';
  /** 1.25+: `--redirect-dns` without `--capture-all-dns` and without resolv.conf servers captures no DNS (with a warning); before, the rules that need no server were still written. */
  readonly dnsNeedsServers: boolean;
  /** 1.20+: the raw PREROUTING zone-1 rule for a resolver's answers matches `-s SERVER`; ≤ 1.19 it matched `-d SERVER`. */
  readonly dnsResponseSource: boolean;
  /**
   * `--drop-invalid`: `chain` (1.24+: `-j ISTIO_DROP`, and ISTIO_DROP drops), `direct` (1.13–1.23:
   * `-j DROP` in mangle PREROUTING) or `absent` (1.12: the flag does not exist).
   */
  readonly dropInvalid: 'chain' | 'direct' | 'absent';
  /** ≤ 1.22: with `-i CIDRS`, ISTIO_OUTPUT ends with `-j RETURN` after the CIDR redirects (per family with CIDRs). */
  readonly outboundIncludeReturn: boolean;
  /** 1.24+: `iptables-save`/`ip6tables-save` run first to check whether the rules are already there. */
  readonly stateCheck: boolean;
}

/**
 * The shape switches for a release (see {@link IstioShape}).
 *
 * @example
 * ```ts
 * istioShape(ISTIO_CURRENT_SHAPE).dns; // 'chains'
 * ```
 */
export function istioShape(v: IstioVersion): IstioShape {
  expectArgument(v, 'object', 'version');
  const at = (minor: number): boolean => v.minor >= minor;
  return {
    version: v,
    outputJumpTcpOnly: !at(25),
    outboundExcludeUdp: at(25),
    loopbackRedirectSkipsTunnel: at(18),
    excludeSsh: !at(13),
    dns: at(25) ? 'chains' : at(23) ? 'output' : 'builtin',
    dnsNeedsServers: at(25),
    dnsResponseSource: at(20),
    dropInvalid: at(24) ? 'chain' : at(13) ? 'direct' : 'absent',
    outboundIncludeReturn: !at(23),
    stateCheck: at(24),
  };
}

/**
 * What one release does differently outside the sidecar rule shapes (reference: the upstream
 * release tags; each field names the change and the release that made it).
 *
 * @example
 * ```ts
 * istioReleaseFeatures('1.26').badCidrFatal; // false: 1.26 skipped a bad -i/-x CIDR with a warning
 * ```
 */
export interface IstioReleaseFeatures {
  /** `1.27` or `1.27.4`, as given (or the latest release). */
  readonly name: string;
  readonly version: IstioVersion;
  /** 1.27+: a `-i`/`-x` entry that is not a CIDR is fatal (`config.SeparateV4V6`); before, skipped with a warning. */
  readonly badCidrFatal: boolean;
  /** 1.28+: `--force-iptables-binary` exists and must be `legacy` or `nft`; before, the flag is unknown. */
  readonly forceIptablesBinary: boolean;
  /** ≤ 1.25: `--iptables-trace-logging` is accepted (and writes nothing); 1.26 removed the flag. */
  readonly iptablesTraceLogging: boolean;
  /** 1.27+: istio-iptables `--native-nftables` (tools/istio-nftables). */
  readonly nativeNftables: boolean;
  /** 1.25+: the ambient node agent's rules as reproduced here (`cni/pkg/iptables/iptables.go`). */
  readonly ambient: boolean;
  /** 1.28+: istio-cni's nftables backend for ambient (`cni/pkg/nftables`). */
  readonly ambientNftables: boolean;
  /** 1.29+: ingress-mode pods still get the mangle CONNMARK rule; ≤ 1.28 it was skipped with the inbound rules. */
  readonly ambientIngressConnmark: boolean;
  /** 1.26+: the host rule is `-I POSTROUTING 1 -j ISTIO_POSTRT`; 1.25 appended it (`-A`). */
  readonly ambientHostInsert: boolean;
  /**
   * istio-cni (sidecar mode) reads `traffic.sidecar.istio.io/kubevirtInterfaces`. From 1.25.0 to
   * 1.27.1 the value was read and then overwritten by the (empty) default of
   * `istio.io/reroute-virtual-interfaces`, so it had no effect; 1.27.2 (#57690) reads it again as
   * the fallback when the new annotation is absent.
   */
  readonly cniKubevirtAnnotation: boolean;
  /** 1.25+: istio-cni (sidecar mode) reads `istio.io/reroute-virtual-interfaces`. */
  readonly cniRerouteAnnotation: boolean;
  /**
   * 1.28.0 only: the nftables backend wrote its IPv6 rules on IPv4-only pods too (1.28.1 fixed
   * it). A version without a patch number (`1.28`) means the release line's latest patch.
   */
  readonly ambientNftV6Always: boolean;
  /** 1.29+: `ambient.reconcileIptablesOnStartup` defaults to true. */
  readonly ambientReconcileDefault: boolean;
}

/**
 * The {@link IstioReleaseFeatures} of a release (`undefined`: the latest).
 *
 * @example
 * ```ts
 * istioReleaseFeatures('1.28').ambientNftables; // true
 * ```
 */
export function istioReleaseFeatures(version?: string): IstioReleaseFeatures {
  const v = parseIstioVersion(version ?? 'latest');
  const at = (minor: number, patch = 0): boolean => v.minor > minor || (v.minor === minor && (v.patch ?? Number.POSITIVE_INFINITY) >= patch);
  return {
    name: version ?? `1.${ISTIO_LATEST_RELEASE.minor}`,
    version: v,
    badCidrFatal: at(27),
    forceIptablesBinary: at(28),
    iptablesTraceLogging: !at(26),
    nativeNftables: at(27),
    ambient: at(25),
    ambientNftables: at(28),
    ambientIngressConnmark: at(29),
    ambientHostInsert: at(26),
    cniKubevirtAnnotation: !at(25) || at(27, 2),
    cniRerouteAnnotation: at(25),
    ambientNftV6Always: v.minor === 28 && v.patch === 0,
    ambientReconcileDefault: at(29),
  };
}
