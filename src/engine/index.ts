/**
 * The engine: lowering, evaluation, the namespace model and the packet path.
 *
 * @module
 */
export { Netns, stepsOf } from './netns.js';
export type {
  NetnsOptions,
  ListenerSpec,
  ConnectSpec,
  LocalConnectSpec,
  RemoteConnectSpec,
  ConnectResult,
  ConnectStep,
  CallOptions,
} from './netns.js';
export { parsePacketSpec, parseEndpoint } from './probe.js';
export type { PacketSpec, Endpoint } from './probe.js';
export type { InterfaceSpec, RouteSpec, RuleSpec } from './routing.js';
export type { ConntrackSnapshot } from './conntrack.js';
export type { ExtensionRegistry } from './registry.js';
export type { RuleCounter } from './evaluate.js';
export type { TraceEvent } from './trace-events.js';
export { HOOK_STEPS, NF_IP_PRI } from './constants.js';
export { needsConntrack } from './netns.js';
export { NetnsPool, connectBatch } from './batch.js';
export type { BatchOptions, PoolOptions } from './batch.js';
