/**
 * Load-time validation of rule sets.
 *
 * @module
 */
export { check, reachableHooks, NFT_JUMP_STACK_SIZE } from './check.js';
export { MAX_CHAIN_NAME_LENGTH } from '../../model/types.js';
export type { CheckOptions, IpsetDeclaration } from './check.js';
