/**
 * The engine: lowering, evaluation, the namespace model and the packet path. Browser-safe: the
 * worker-thread batches (`batch/`, which need `node:worker_threads`) are exported by the package
 * root from their own module, not from here.
 *
 * @module
 */
export { Netns, stepsOf } from './path/netns.js';
export type {
  NetnsOptions,
  ListenerSpec,
  ConnectSpec,
  LocalConnectSpec,
  RemoteConnectSpec,
  ConnectResult,
  ConnectStep,
  CallOptions,
} from './path/netns.js';
export { parsePacketSpec, parseEndpoint } from './path/probe.js';
export type { PacketSpec, Endpoint } from './path/probe.js';
export type { InterfaceSpec, RouteSpec, RuleSpec } from './state/routing.js';
export type { ConntrackSnapshot } from './state/conntrack.js';
export type { ExtensionRegistry } from './rules/registry.js';
export type { RuleCounter } from './rules/iptables-evaluate.js';
export type { QueueReader, QueuedPacket, QueueAnswer } from './rules/targets.js';
export type { TraceEvent } from './trace/events.js';
export { HOOK_STEPS, NF_IP_PRI } from './state/constants.js';
export { needsConntrack } from './path/netns.js';
