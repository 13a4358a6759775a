/**
 * The browser-safe entry: the root entry's parse, print, check, simulate, render, compile, mesh
 * and explore paths, and the playground's views, without what needs Node's built-ins (the
 * worker-thread batches) or fast-check (the laws). The playground page is built from it; a test
 * builds it for the browser and checks that no `node:` module is in its graph.
 *
 * @module
 */
export type * from './model/types.js';
export { BUILTIN_CHAINS, HOOK_NAMES, TABLE_NAMES } from './model/types.js';
export { NetfilterSimError, type Diagnostic, type ErrorCode } from './model/errors.js';
export { formatDiagnostic } from './model/diagnostic-text.js';
export { parseIptablesSave, parseIptablesSaveOrThrow } from './iptables/syntax/save.js';
export { printIptablesSave, printRule } from './iptables/print/save.js';
export { formatIptablesSave } from './iptables/fmt.js';
export { check } from './iptables/check/index.js';
export { Netns, parsePacketSpec, parseEndpoint } from './engine/index.js';
export type { NetnsOptions, ConnectSpec, ConnectResult, TraceEvent } from './engine/index.js';
export { renderTrace, renderOutcome, traceOutline, type OutlineNode, type TraceFormat } from './trace/index.js';
export { explore, renderExplore, type ExploreResult, type ExploreClass, type ExploreBox } from './explore/index.js';
export { simulateMesh, renderMesh, meshJson } from './mesh/index.js';
export { readPod } from './compile/pod.js';
export { parseNftRuleset, formatNftRuleset, nftLoadErrors, detectRulesSyntax } from './nftables/index.js';
export * from './playground/index.js';
