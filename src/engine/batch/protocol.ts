/**
 * What the pool and its workers say to each other: requests, replies, and results packed for the
 * trip between threads.
 *
 * @module
 */
import type { Diagnostic } from '../../model/errors.js';
import type { ConnectResult, ConnectSpec } from '../path/netns.js';
import type { PackedTraces } from '../trace/pack.js';

/** What a worker is asked. @internal */
export type WorkerRequest =
  | { readonly id: number; readonly probes: readonly ConnectSpec[]; readonly trace: boolean; readonly close: boolean }
  | { readonly id: number; readonly flush: true };

/**
 * Results packed for the trip back: each string once in `strings`, the rest in typed arrays that
 * are moved, not copied; traces, when asked for, packed the same way. Unpacking them costs this
 * thread much less than copying as many small objects would. @internal
 */
export interface PackedResults {
  readonly strings: readonly string[];
  /** Per result: an index in {@link OUTCOMES}. */
  readonly outcome: Uint8Array;
  /** Per result: an index in `strings`, or -1 for null (port: the number, or -1). */
  readonly address: Int32Array;
  readonly port: Int32Array;
  readonly original: Int32Array;
  readonly source: Int32Array;
  readonly reason: Int32Array;
  /** Per result: the `error` (errno) as an index in `strings`, or -1 when absent. */
  readonly error: Int32Array;
  /** Per result: the `errno` as an index in `strings`, or -1 for null. */
  readonly errno: Int32Array;
  /** Traced results only: their events (see {@link TracePacker}); null without traces. */
  readonly traces: PackedTraces | null;
}

export const OUTCOMES: readonly ConnectResult['outcome'][] = ['local', 'remote', 'refused', 'dropped'];

/** The strings of a message, each once: what packed results and traces index. @internal */
export class StringTable {
  readonly strings: string[] = [];
  private readonly index = new Map<string, number>();

  /** The index of `v`, added when new. */
  readonly intern = (v: string): number => {
    let i = this.index.get(v);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(v);
      this.index.set(v, i);
    }
    return i;
  };
}

/**
 * Packs results (see {@link PackedResults}); `traces`, when given, are their traces, packed as they
 * were recorded into a {@link TracePacker} on `table`.
 * @internal
 */
export function packResults(results: readonly ConnectResult[], table: StringTable, traces: PackedTraces | null = null): PackedResults {
  const n = results.length;
  const strings = table.strings;
  const intern = table.intern;
  const internOrNull = (v: string | null): number => (v === null ? -1 : intern(v));
  const packed = {
    strings,
    outcome: new Uint8Array(n),
    address: new Int32Array(n),
    port: new Int32Array(n),
    original: new Int32Array(n),
    source: new Int32Array(n),
    reason: new Int32Array(n),
    error: new Int32Array(n),
    errno: new Int32Array(n),
    traces,
  };
  for (let i = 0; i < n; i++) {
    const r = results[i]!;
    packed.outcome[i] = OUTCOMES.indexOf(r.outcome);
    packed.address[i] = internOrNull(r.address);
    packed.port[i] = r.port ?? -1;
    packed.original[i] = internOrNull(r.originalDestination);
    packed.source[i] = internOrNull(r.source);
    packed.reason[i] = intern(r.reason);
    packed.error[i] = internOrNull(r.error ?? null);
    packed.errno[i] = internOrNull(r.errno);
  }
  return packed;
}

/** What a worker answers. @internal */
export type WorkerReply =
  | { readonly id: number; readonly results: ConnectResult[] }
  | { readonly id: number; readonly packed: PackedResults }
  | { readonly id: number; readonly error: { readonly message: string; readonly diagnostics: readonly Diagnostic[] | null } };

