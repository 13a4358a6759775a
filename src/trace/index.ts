/**
 * Trace events and their renderers.
 *
 * @module
 */
export type {
  TraceEvent,
  TraceEventType,
  PacketEvent,
  RouteEvent,
  RerouteEvent,
  TableEvent,
  RuleEvent,
  ReturnEvent,
  PolicyEvent,
  AssumedEvent,
  VerdictEvent,
  ConntrackEvent,
  NatEvent,
  EffectEvent,
  SocketEvent,
  WireEvent,
  LoopbackEvent,
  DropEvent,
} from '../engine/trace/events.js';
export {
  renderTrace,
  renderTraceText,
  renderTraceTree,
  renderTraceJson,
  renderTraceMermaid,
  renderTraceDot,
  renderOutcome,
} from './render.js';
export type { RenderOptions, TraceFormat } from './render.js';
export { traceOutline } from './outline.js';
export type { OutlineNode } from './outline.js';
