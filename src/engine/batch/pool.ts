/**
 * Many connection probes in one call, spread over worker threads: each worker builds its own
 * {@link Netns} from the same options and runs its share of the probes in order.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import type { Diagnostic } from '../../model/errors.js';
import { Netns, stepsOf } from '../path/netns.js';
import type { ConnectResult, ConnectSpec, ConnectStep, NetnsOptions } from '../path/netns.js';
import type { TraceEvent } from '../trace/events.js';
import { unpackTrace } from '../trace/pack.js';
import type { PackedTraces } from '../trace/pack.js';
import { MAX_WORKERS } from '../../model/limits.js';
import { expectArgument, expectShape } from '../../model/guard.js';
import { expectCallOptions, expectConnectSpec, expectNetnsOptions } from '../path/shapes.js';

import { OUTCOMES, type PackedResults, type WorkerReply } from './protocol.js';

/** Throws `BAD_ARGUMENT` naming the probe and field unless every probe is a connection spec. */
function expectProbes(probes: unknown): void {
  expectArgument(probes, 'array', 'probes');
  const list = probes as readonly unknown[];
  for (let i = 0; i < list.length; i++) expectConnectSpec(list[i], `probes[${i}]`);
}

/** Options of a batch. */
export interface BatchOptions {
  /**
   * Record steps and events, as {@link Netns.connect}. Default false: a batch is for many
   * probes, and a trace makes each connection several times dearer and its result larger.
   */
  readonly trace?: boolean;
  /**
   * Close each established connection after its handshake, as {@link Netns.connect} does with
   * `close: true` (default false): in a long batch the namespace's sockets and conntrack entries
   * then go to TIME_WAIT instead of staying established.
   */
  readonly close?: boolean;
}

/** Options of {@link NetnsPool} and {@link connectBatch}. */
export interface PoolOptions {
  /** Worker threads (default 1). {@link connectBatch} runs in this thread when it is 1. */
  readonly workers?: number;
}

/** What a traced result of a batch keeps, to rebuild its events the first time they are read. */
class PackedTrace {
  private readonly traces: PackedTraces;
  private readonly strings: readonly string[];
  private readonly from: number;
  private readonly to: number;
  private events: TraceEvent[] | null = null;
  private stepList: ConnectStep[] | null = null;

  constructor(traces: PackedTraces, strings: readonly string[], from: number, to: number) {
    this.traces = traces;
    this.strings = strings;
    this.from = from;
    this.to = to;
  }

  trace(): TraceEvent[] {
    return (this.events ??= unpackTrace(this.traces.values, this.from, this.to, this.strings, this.traces.objects));
  }

  steps(): ConnectStep[] {
    return (this.stepList ??= stepsOf(this.trace()));
  }
}

/** The own, non-enumerable property of a lazy traced result that holds its {@link PackedTrace}. */
const PACKED = Symbol('packed trace');
type Lazy = { readonly [PACKED]: PackedTrace };
// One getter of each kind for every result: the result holds its state, not closures.
const STEPS: PropertyDescriptor = {
  get(this: Lazy): readonly ConnectStep[] {
    return this[PACKED].steps();
  },
  enumerable: true,
  configurable: true,
};
const TRACE: PropertyDescriptor = {
  get(this: Lazy): readonly TraceEvent[] {
    return this[PACKED].trace();
  },
  enumerable: true,
  configurable: true,
};

/**
 * A traced result whose `steps` and `trace` are rebuilt from its packed events the first time
 * either is asked for: a batch's caller often looks at a few traces only. Its fields are own,
 * enumerable and in the order Netns.connect gives them, so it prints and compares as that result
 * does.
 */
function lazyTraced(base: Omit<ConnectResult, 'steps' | 'trace' | 'reason'>, reason: string, error: string | null, packed: PackedTrace, omitted: number): ConnectResult {
  const r = base as Record<string, unknown>;
  Object.defineProperty(r, 'steps', STEPS);
  r.reason = reason;
  Object.defineProperty(r, 'trace', TRACE);
  Object.defineProperty(r, PACKED, { value: packed });
  if (omitted > 0) r.traceOmitted = omitted;
  if (error !== null) r.error = error;
  return r as unknown as ConnectResult;
}

function unpackResults(p: PackedResults): ConnectResult[] {
  const out: ConnectResult[] = new Array<ConnectResult>(p.outcome.length);
  const s = p.strings;
  let from = 0;
  for (let i = 0; i < out.length; i++) {
    const a = p.address[i]!;
    const o = p.original[i]!;
    const so = p.source[i]!;
    const port = p.port[i]!;
    const e = p.error[i]!;
    const en = p.errno[i]!;
    const errno = en < 0 ? null : s[en]!;
    const outcome = OUTCOMES[p.outcome[i]!]!;
    const address = a < 0 ? null : s[a]!;
    const originalDestination = o < 0 ? null : s[o]!;
    const source = so < 0 ? null : s[so]!;
    const reason = s[p.reason[i]!]!;
    // The same fields, in the same order, as Netns.connect gives.
    const t = p.traces;
    if (t !== null) {
      const start = from;
      from = t.end[i]!;
      // Its steps and reason come next, in lazyTraced.
      const base = { outcome, address, port: port < 0 ? null : port, originalDestination, source, errno };
      out[i] = lazyTraced(base, reason, e < 0 ? null : s[e]!, new PackedTrace(t, s, start, from), t.omitted[i]!);
      continue;
    }
    const r: ConnectResult = { outcome, address, port: port < 0 ? null : port, originalDestination, source, errno, steps: [], reason };
    out[i] = e < 0 ? r : { ...r, error: s[e]! };
  }
  return out;
}

interface Pending {
  readonly resolve: (r: ConnectResult[]) => void;
  readonly reject: (e: unknown) => void;
}

function bad(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', message));
}

function toError(e: { readonly message: string; readonly diagnostics: readonly Diagnostic[] | null }): Error {
  return e.diagnostics !== null && e.diagnostics.length > 0 ? new NetfilterSimError(e.diagnostics) : new Error(e.message);
}

/** Probes per message to a worker. */
const MESSAGE_PROBES = 1024;

/** Splits `n` items into `k` contiguous chunks of near-equal size: the chunk boundaries. */
function bounds(n: number, k: number): number[] {
  const out = [0];
  for (let i = 1; i <= k; i++) out.push(Math.round((n * i) / k));
  return out;
}

/**
 * A namespace replicated over worker threads. Each worker builds its own {@link Netns} from the
 * same options when the pool starts and keeps it, with its own conntrack table, for the pool's
 * life. A batch is cut into one contiguous share per worker, in probe order; each worker runs its
 * share in order, so a probe sees the connections made before it in its own share (and in the
 * worker's earlier batches), not those of other workers. `statistic --mode random` draws come from
 * each worker's own generator (seeded from the options). Results come back in probe order.
 *
 * Options must be plain data (rules as text or a parsed rule set): a custom `registry` cannot
 * cross to a worker.
 *
 * @example
 * ```ts
 * const pool = new NetnsPool({ rules: saveText, listen: [4140, 4143] }, { workers: 2 });
 * const results = await pool.connectBatch(probes, { trace: false });
 * await pool.close();
 * ```
 */
export class NetnsPool {
  /** Number of worker threads. */
  readonly workers: number;
  private readonly threads: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private failure: Error | null = null;
  private nextId = 1;
  private busy = 0;

  constructor(options: NetnsOptions, pool: PoolOptions = {}) {
    expectNetnsOptions(options);
    expectArgument(pool, 'object', 'pool');
    // A number out of range is BAD_CONFIG below; anything else is the wrong type.
    expectArgument(pool.workers, ['number', 'undefined'], 'pool.workers');
    const workers = pool.workers ?? 1;
    if (!Number.isInteger(workers) || workers < 1 || workers > MAX_WORKERS) bad(`bad worker count "${String(pool.workers)}" (from 1 to ${MAX_WORKERS})`);
    if (options.registry !== undefined) bad('a custom extension registry cannot be sent to worker threads');
    this.workers = workers;
    for (let i = 0; i < workers; i++) {
      const w = new Worker(new URL('./worker.js', import.meta.url), { workerData: { options } });
      w.unref();
      w.on('message', (m: WorkerReply) => this.settle(m));
      w.on('error', (e) => this.fail(e));
      w.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`a batch worker stopped (exit code ${code})`));
      });
      this.threads.push(w);
    }
  }

  private settle(m: WorkerReply): void {
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    this.pending.delete(m.id);
    if ('error' in m) p.reject(toError(m.error));
    else if ('packed' in m) p.resolve(unpackResults(m.packed));
    else p.resolve(m.results);
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  private send(w: Worker, message: { readonly probes: readonly ConnectSpec[]; readonly trace: boolean; readonly close: boolean } | { readonly flush: true }): Promise<ConnectResult[]> {
    const id = this.nextId++;
    return new Promise<ConnectResult[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.postMessage({ id, ...message });
    });
  }

  /** Runs `f` with the workers keeping the process alive. */
  private async busyWith<T>(f: () => Promise<T>): Promise<T> {
    if (this.failure !== null) throw this.failure;
    if (this.threads.length === 0) bad('the pool is closed');
    if (this.busy++ === 0) for (const w of this.threads) w.ref();
    try {
      return await f();
    } finally {
      if (--this.busy === 0) for (const w of this.threads) w.unref();
    }
  }

  /** Runs the probes (see the class for how they are shared out); results in probe order. */
  connectBatch(probes: readonly ConnectSpec[], options: BatchOptions = {}): Promise<ConnectResult[]> {
    return this.busyWith(async () => {
      expectProbes(probes);
      expectCallOptions(options);
      const trace = options.trace === true;
      const close = options.close === true;
      const cut = bounds(probes.length, this.threads.length);
      // Each share goes in messages of a few hundred probes, so a worker starts on the first
      // while the rest are still being copied, and this thread takes in answers while the
      // workers compute. A worker handles its messages in order: its share still runs in order.
      const parts: Promise<ConnectResult[]>[] = [];
      for (let i = 0; i < this.threads.length; i++) {
        const w = this.threads[i]!;
        for (let from = cut[i]!; from < cut[i + 1]!; from += MESSAGE_PROBES) {
          parts.push(this.send(w, { probes: probes.slice(from, Math.min(from + MESSAGE_PROBES, cut[i + 1]!)), trace, close }));
        }
      }
      return (await Promise.all(parts)).flat();
    });
  }

  /** Forgets every worker's connections ({@link Netns.flushConntrack}). */
  async flushConntrack(): Promise<void> {
    await this.busyWith(() => Promise.all(this.threads.map((w) => this.send(w, { flush: true }))));
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((w) => w.terminate()));
  }
}

/**
 * Runs many connection probes in one call. With `workers` = 1 (the default) they run in this
 * thread, in order, in one fresh {@link Netns} built from `options`: the same as
 * `probes.map((p) => new Netns(options).connect(p))` with a single namespace. With more workers
 * they are shared out as {@link NetnsPool} describes, each share in its own fresh namespace.
 *
 * @example
 * ```ts
 * const results = await connectBatch({ rules: saveText, listen: [4140, 4143] }, probes, { workers: 2, trace: false });
 * ```
 */
export async function connectBatch(options: NetnsOptions, probes: readonly ConnectSpec[], batch: BatchOptions & PoolOptions = {}): Promise<ConnectResult[]> {
  expectNetnsOptions(options);
  expectProbes(probes);
  expectShape(batch, { kind: 'object', fields: { workers: ['number', 'undefined'], trace: ['boolean', 'undefined'], close: ['boolean', 'undefined'] } }, 'batch');
  const workers = batch.workers ?? 1;
  const trace = batch.trace === true;
  const close = batch.close === true;
  if (workers === 1) {
    const ns = new Netns(options);
    return probes.map((p) => ns.connect(p, { trace, close }));
  }
  const pool = new NetnsPool(options, { workers });
  try {
    return await pool.connectBatch(probes, { trace, close });
  } finally {
    await pool.close();
  }
}
