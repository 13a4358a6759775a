/**
 * Port and port-range parsing and the multiport chunking of proxy-init
 * (`linkerd/linkerd2-proxy-init` `pkg/util/portrange.go`, `pkg/iptables/iptables.go`
 * `makeMultiportDestinations`, `asDestination`).
 *
 * @module
 */
import { PROXY_INIT_CONSTANTS } from './defaults.js';
import { goAtoi } from './go.js';
import { expectArgument } from '../../model/guard.js';

/**
 * An inclusive port range (`util.PortRange`).
 *
 * @example
 * ```ts
 * const r = parsePortRange('25-27'); if (r.ok) r.value.upperBound; // 27
 * ```
 */
export interface PortRange {
  readonly lowerBound: number;
  readonly upperBound: number;
}

/**
 * A parse result: the value, or proxy-init's error text.
 *
 * @example
 * ```ts
 * const r: PortParse<number> = parsePort('8080'); // { ok: true, value: 8080 }
 * ```
 */
export type PortParse<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/**
 * `util.IsValidPort`: `0 <= port <= 65535`.
 *
 * @example
 * ```ts
 * isValidPort(-1); // false: why --incoming-proxy-port's default -1 is an error
 * ```
 */
export function isValidPort(port: number): boolean {
  return Number.isInteger(port) && port >= 0 && port <= 65535;
}

/**
 * `util.ParsePort`: `strconv.Atoi` (a sign is accepted, nothing is trimmed), then `0..65535`.
 *
 * @example
 * ```ts
 * parsePort('+80');   // { ok: true, value: 80 }
 * parsePort('65536'); // { ok: false, error: '"65536" is not a valid TCP port' }
 * ```
 */
export function parsePort(port: string): PortParse<number> {
  expectArgument(port, 'string', 'port');
  const r = goAtoi(port);
  if ('error' in r || !isValidPort(r.value)) {
    return { ok: false, error: `"${port}" is not a valid TCP port` };
  }
  return { ok: true, value: r.value };
}

/**
 * `util.ParsePortRange`: `N` or `L-U` (inclusive, `U >= L`); more than one `-` is an error.
 *
 * @example
 * ```ts
 * parsePortRange('1000-2000'); // { ok: true, value: { lowerBound: 1000, upperBound: 2000 } }
 * parsePortRange('25-23');     // { ok: false, error: '"25-23": upper-bound must be greater than or equal to lower-bound' }
 * ```
 */
export function parsePortRange(portRange: string): PortParse<PortRange> {
  expectArgument(portRange, 'string', 'portRange');
  const bounds = portRange.split('-');
  if (bounds.length > 2) return { ok: false, error: 'ranges expected as <lower>-<upper>' };
  const lowerText = bounds[0]!;
  const upperText = bounds.length === 1 ? lowerText : bounds[1]!;
  const lower = parsePort(lowerText);
  if (!lower.ok) return { ok: false, error: `"${lowerText}" is not a valid lower-bound` };
  const upper = parsePort(upperText);
  if (!upper.ok) return { ok: false, error: `"${upperText}" is not a valid upper-bound` };
  if (upper.value < lower.value) {
    return { ok: false, error: `"${portRange}": upper-bound must be greater than or equal to lower-bound` };
  }
  return { ok: true, value: { lowerBound: lower.value, upperBound: upper.value } };
}

/**
 * `asDestination`: a single port (or `N-N`) as `N`, a range as `L:U` (multiport's syntax).
 *
 * @example
 * ```ts
 * asDestination({ lowerBound: 1000, upperBound: 2000 }); // '1000:2000'
 * ```
 */
export function asDestination(range: PortRange): string {
  expectArgument(range, 'object', 'range');
  return range.lowerBound === range.upperBound ? `${range.lowerBound}` : `${range.lowerBound}:${range.upperBound}`;
}

/**
 * The chunks of {@link makeMultiportDestinations} and the entries it dropped.
 *
 * @example
 * ```ts
 * makeMultiportDestinations(['1-2', 'x']); // { chunks: [['1:2']], invalid: ['invalid port configuration of "x": …'] }
 * ```
 */
export interface MultiportDestinations {
  /** One `--dports` list per RETURN rule. */
  readonly chunks: readonly (readonly string[])[];
  /** proxy-init's log line for each dropped entry: `invalid port configuration of "x": …`. */
  readonly invalid: readonly string[];
}

/**
 * `makeMultiportDestinations`: walks the entries in order, dropping invalid ones (logged, not
 * fatal); a single port weighs 1 and a range 2 of the {@link PROXY_INIT_CONSTANTS}
 * `IptablesMultiportLimit` (15) slots of one multiport match; a chunk closes when the next entry
 * would overflow it. No sorting, no de-duplication. `null`/empty input gives no chunk; input
 * whose entries are all invalid gives one empty chunk (upstream then runs `--dports ''`, which
 * iptables rejects).
 *
 * @example
 * ```ts
 * makeMultiportDestinations(['22', '25-27', 'nope', '33']).chunks; // [['22', '25:27', '33']]
 * makeMultiportDestinations(['notanumber', '70000']).chunks;       // [[]]
 * ```
 */
export function makeMultiportDestinations(portsToIgnore: readonly string[] | null | undefined): MultiportDestinations {
  expectArgument(portsToIgnore, ['array', 'undefined', 'null'], 'portsToIgnore');
  const chunks: string[][] = [];
  const invalid: string[] = [];
  if (!portsToIgnore || portsToIgnore.length < 1) return { chunks, invalid };
  let count = 0;
  let destinations: string[] = [];
  for (const portOrRange of portsToIgnore) {
    const r = parsePortRange(portOrRange);
    if (!r.ok) {
      invalid.push(`invalid port configuration of "${portOrRange}": ${r.error}`);
      continue;
    }
    const weight = r.value.lowerBound === r.value.upperBound ? 1 : 2;
    if (count + weight > PROXY_INIT_CONSTANTS.IptablesMultiportLimit) {
      chunks.push(destinations);
      count = 0;
      destinations = [];
    }
    destinations.push(asDestination(r.value));
    count += weight;
  }
  chunks.push(destinations);
  return { chunks, invalid };
}
