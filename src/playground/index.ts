/**
 * What the browser playground runs, without the DOM.
 *
 * @module
 */
export { DEFAULT_STATE, MAX_FIELD_CHARS, VIEWS, normalizeState } from './state.js';
export type { PlaygroundState, PlaygroundView, NamespaceForm, ConnectionForm, ExploreForm, MeshForm, CompileForm } from './state.js';
export { checkRules, runCompile, runConnect, runExplore, runMesh, runPacket } from './run.js';
export type { CheckView, CompileView, ExploreView, MeshView, PlaygroundDiagnostic, PlaygroundFailure, TraceView } from './run.js';
export { traceSequence } from './sequence.js';
export type { SequenceDiagram, SequenceMessage, SequenceNote } from './sequence.js';
export { shellWords } from './words.js';
