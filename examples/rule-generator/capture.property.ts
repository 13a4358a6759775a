/**
 * The property that tests a rule generator: for any configuration and any connection, the
 * commands it writes obey the capture laws (the proxy's own traffic is never captured, app
 * traffic is, skipped ports are not, UDP is left alone).
 *
 * In your project the imports are `netfilter-sim` and `netfilter-sim/arbitraries`.
 *
 * @module
 */
import * as fc from 'fast-check';
import { connection, type ConnectionProbe } from '../../src/arbitraries/index.js';
import { checkCaptureLaws, explainCounterexample, type CaptureSetup } from '../../src/laws/index.js';
import { applyIptablesCommands } from '../../src/iptables/syntax/apply.js';
import type { CaptureConfig } from './generator.js';

/** Configurations: any proxy UID and port, up to 40 distinct ports to skip. */
export const captureConfig: fc.Arbitrary<CaptureConfig> = fc.record({
  proxyUid: fc.integer({ min: 1, max: 65535 }),
  outboundPort: fc.integer({ min: 1024, max: 65535 }),
  // size 'max': lists as long as 40, past the limits generators have (fast-check keeps them short by default).
  skipPorts: fc.uniqueArray(fc.integer({ min: 1, max: 65535 }), { maxLength: 40, size: 'max' }),
});

/**
 * The probe, sometimes aimed at one of the skipped ports (a random port rarely is one). `pick`
 * counts from the end of the list, so that it shrinks towards the last port, where lists break.
 */
function aim(probe: ConnectionProbe, config: CaptureConfig, pick: number | undefined): ConnectionProbe {
  if (pick === undefined || config.skipPorts.length === 0) return probe;
  const port = config.skipPorts[config.skipPorts.length - 1 - (pick % config.skipPorts.length)]!;
  return { ...probe, dst: probe.dst.replace(/:\d+$/, `:${port}`) };
}

/** What the laws need to know: the rules, the proxy, and what the configuration exempts. */
export function captureSetup(generate: (config: CaptureConfig) => string[][], config: CaptureConfig): CaptureSetup {
  return {
    rules: applyIptablesCommands(undefined, generate(config), { family: 4 }),
    proxy: { uids: [config.proxyUid], outboundPort: config.outboundPort },
    outbound: { excludedPorts: config.skipPorts.map((p) => ({ min: p, max: p })) },
    config,
  };
}

/**
 * The generator obeys the capture laws for every configuration and connection.
 *
 * @example
 * ```ts
 * fc.assert(captureLawsHold(outboundRules), { seed: 42 });
 * ```
 */
export function captureLawsHold(generate: (config: CaptureConfig) => string[][]): fc.IPropertyWithHooks<[CaptureConfig, ConnectionProbe, number | undefined]> {
  return fc.property(
    captureConfig,
    connection({ from: 'local', uids: [1000], protocols: ['tcp', 'udp'] }),
    fc.option(fc.nat(), { nil: undefined }),
    (config, probe, pick) => {
      const cx = checkCaptureLaws(captureSetup(generate, config), aim(probe, config, pick));
      if (cx) throw new Error(explainCounterexample(cx));
    },
  );
}
