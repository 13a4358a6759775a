// One nft rule set with the connections that exercise it, for the suites that compare
// `Netns.connect` with real sockets idiom by idiom (nft-idioms, nft-bindings).
import type { SimProbe } from './generate.js';

export interface IdiomCase {
  readonly name: string;
  readonly nft: string;
  readonly listen: readonly number[];
  readonly probes: readonly SimProbe[];
  /** The outcomes the case is about, so a harness that drops everything cannot pass it. */
  readonly expect: readonly string[];
}

/** A connection arriving from 10.1.0.5 (or `src`) to the namespace's 10.0.0.2. */
export const remote = (port: number, src = '10.1.0.5'): SimProbe => ({ from: 'remote', src, dst: `10.0.0.2:${port}` });
/** A connection made by a local process of `uid` (its gid the same). */
export const local = (dst: string, uid = 1000): SimProbe => ({ from: 'local', uid, gid: uid, dst });
