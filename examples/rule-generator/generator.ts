/**
 * A sidecar's outbound capture rules, written the way rule generators usually are: a function
 * from a small configuration to the `iptables` commands it runs.
 *
 * `outboundRules` has a bug that reviews tend to miss: `-m multiport` takes at most 15 ports, so
 * the skip list is cut to 15, and ports after the 15th are silently captured.
 * `outboundRulesFixed` splits the list into rules of at most 15 ports each.
 *
 * @module
 */

/** What the generator is told. */
export interface CaptureConfig {
  /** The UID the proxy runs as: its own connections must not be captured. */
  readonly proxyUid: number;
  /** Where captured connections go. */
  readonly outboundPort: number;
  /** Destination ports that must never be captured. */
  readonly skipPorts: readonly number[];
}

const CHAIN = 'SIDECAR_OUTPUT';

function head(config: CaptureConfig): string[][] {
  return [
    ['-t', 'nat', '-N', CHAIN],
    ['-t', 'nat', '-A', 'OUTPUT', '-j', CHAIN],
    ['-t', 'nat', '-A', CHAIN, '-m', 'owner', '--uid-owner', `${config.proxyUid}`, '-j', 'RETURN'],
    ['-t', 'nat', '-A', CHAIN, '-o', 'lo', '-j', 'RETURN'],
  ];
}

function redirect(config: CaptureConfig): string[] {
  return ['-t', 'nat', '-A', CHAIN, '-p', 'tcp', '-j', 'REDIRECT', '--to-ports', `${config.outboundPort}`];
}

/**
 * The buggy generator: multiport refuses more than 15 ports, so the list is cut to fit.
 *
 * @example
 * ```ts
 * outboundRules({ proxyUid: 2102, outboundPort: 4140, skipPorts: [22, 3306] });
 * ```
 */
export function outboundRules(config: CaptureConfig): string[][] {
  const rules = head(config);
  if (config.skipPorts.length > 0) {
    // -m multiport allows 15 ports.
    const ports = config.skipPorts.slice(0, 15).join(',');
    rules.push(['-t', 'nat', '-A', CHAIN, '-p', 'tcp', '-m', 'multiport', '--dports', ports, '-j', 'RETURN']);
  }
  rules.push(redirect(config));
  return rules;
}

/**
 * The fixed generator: one multiport rule per 15 ports.
 *
 * @example
 * ```ts
 * outboundRulesFixed({ proxyUid: 2102, outboundPort: 4140, skipPorts: Array.from({ length: 20 }, (_, i) => 9000 + i) });
 * ```
 */
export function outboundRulesFixed(config: CaptureConfig): string[][] {
  const rules = head(config);
  for (let i = 0; i < config.skipPorts.length; i += 15) {
    const ports = config.skipPorts.slice(i, i + 15).join(',');
    rules.push(['-t', 'nat', '-A', CHAIN, '-p', 'tcp', '-m', 'multiport', '--dports', ports, '-j', 'RETURN']);
  }
  rules.push(redirect(config));
  return rules;
}
