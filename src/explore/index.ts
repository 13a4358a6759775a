/**
 * Exhaustive exploration of a namespace: every probe, not samples.
 *
 * @module
 */
export { explore, classOf, expectedFor } from './explore.js';
export type { ExploreOptions, ExploreResult, ExploreClass, ExploreBox, ExploreOutcome, ExploreFrom } from './explore.js';
export { renderExplore, addressRangeText } from './render.js';
export { summarizeExplore, renderExploreSummary } from './summary.js';
export type { ExploreSummary, ExploreSummaryOutcome } from './summary.js';
export type { ExploreNarrowing } from './narrow.js';
