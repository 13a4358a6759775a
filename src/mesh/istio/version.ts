/**
 * Which Istio release's rule shapes to reproduce. The goldens describe 1.25 and later; older
 * releases wrote a few rules differently (reference §10, and the upstream `run.go` of those
 * releases). Only differences that are documented are modelled; a combination whose old shape is
 * not known is refused with an `UNSUPPORTED` error rather than guessed.
 *
 * @module
 */
import { fail } from '../../errors.js';
import { expectArgument } from '../../guard.js';

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
}

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
  if (text === 'latest' || text === 'current' || text === 'master') return ISTIO_CURRENT_SHAPE;
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(text);
  if (!m) fail('BAD_VALUE', `bad Istio version "${text}" (expected MAJOR.MINOR, e.g. 1.24)`, undefined, text);
  const major = Number(m[1]);
  const minor = Number(m[2]);
  if (major !== 1) fail('BAD_VALUE', `unknown Istio version "${text}" (only 1.x releases exist)`, undefined, text);
  return { major, minor };
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
  /** DNS rules: `chains` (1.25+ ISTIO_OUTPUT_DNS), `builtin` (≤ 1.22, UDP rules in nat/raw OUTPUT and PREROUTING), or unknown. */
  readonly dns: 'chains' | 'builtin' | 'unknown';
  /** `--drop-invalid`: `chain` (1.25+ ISTIO_DROP), `direct` (≤ 1.17, `-j DROP` in mangle PREROUTING), or unknown. */
  readonly dropInvalid: 'chain' | 'direct' | 'unknown';
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
    dns: at(25) ? 'chains' : at(23) ? 'unknown' : 'builtin',
    dropInvalid: at(25) ? 'chain' : at(18) ? 'unknown' : 'direct',
    stateCheck: at(24),
  };
}

/** Refuses a feature whose rules in the given release are not documented. @internal */
export function unsupportedShape(v: IstioVersion, feature: string): never {
  fail(
    'UNSUPPORTED',
    `the rules Istio ${v.major}.${v.minor} writes for ${feature} are not documented, so they are not reproduced; use 1.25 or later, or drop ${feature}`,
  );
}
