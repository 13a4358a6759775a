/**
 * The extension registry: `-m NAME` and `-j NAME` to their modules.
 *
 * @module
 */
import type { MatchExtension, TargetExtension } from './types.js';

/** Every match module, by name. */
export const MATCHES: ReadonlyMap<string, MatchExtension> = new Map<string, MatchExtension>([]);

/** Every target module, by name (the standard verdicts and chains are not here). */
export const TARGETS: ReadonlyMap<string, TargetExtension> = new Map<string, TargetExtension>([]);
