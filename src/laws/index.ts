/**
 * Laws for rule generators: plain functions that take a rule set (or a compiler and its
 * configuration) and a probe, and return a {@link Counterexample} when the law is broken or
 * `undefined` when it holds. Use them inside `fc.property` (or `test.prop`) with the arbitraries
 * of `netfilter-sim/arbitraries`; {@link explainCounterexample} turns a counterexample into the
 * failure message, with the rule set and a `netfilter-sim connect` command that replays it.
 *
 * @example
 * ```ts
 * import { test } from '@fast-check/vitest';
 * import { linkerdConfig, connection } from 'netfilter-sim/arbitraries';
 * import { linkerdCapture, checkCaptureLaws, explainCounterexample } from 'netfilter-sim';
 * test.prop([linkerdConfig(), connection({ protocols: ['tcp', 'udp'] })])('proxy-init obeys the capture laws', (config, probe) => {
 *   const cx = checkCaptureLaws(linkerdCapture(config), probe);
 *   if (cx) throw new Error(explainCounterexample(cx));
 * });
 * ```
 *
 * @module
 */
export { connectCommand, explainCounterexample, type Counterexample, type LawProbe } from './counterexample.js';
export {
  appTrafficReachesProxy, checkCaptureLaws, excludedNeverRedirected, inboundReachesProxy, nonTcpNeverRedirected,
  proxyNeverCapturesItself,
  APP_TRAFFIC_REACHES_PROXY, EXCLUDED_NEVER_REDIRECTED, INBOUND_REACHES_PROXY, NON_TCP_NEVER_REDIRECTED, PROXY_NEVER_CAPTURES_ITSELF,
  type CaptureSetup, type InboundPolicy, type LawPortRange, type OutboundPolicy,
} from './capture.js';
export { istioCapture, linkerdCapture, linkerdRerunIsIdempotent, rerunChangesNothing, RERUN_CHANGES_NOTHING } from './mesh.js';
export { printParseRoundTrip, PRINT_PARSE_ROUND_TRIP } from './round-trip.js';
export {
  proveAppTrafficReachesProxy, proveCaptureLaws, proveExcludedNeverRedirected, proveInboundReachesProxy, proveNonTcpNeverRedirected,
  proveProxyNeverCapturesItself, type LawProof,
} from './exhaustive.js';
