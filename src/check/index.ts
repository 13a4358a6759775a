/**
 * Load-time validation of rule sets.
 *
 * @module
 */
export { check, reachableHooks, MAX_CHAIN_NAME_LENGTH, NFT_JUMP_STACK_SIZE } from './check.js';
export type { CheckOptions } from './check.js';
