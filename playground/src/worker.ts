// The library runs here, off the page's thread: a 24,000-rule dump parses and traces while the
// page keeps answering. One request at a time, in order; each answer carries its request's id.
import { checkRules, normalizeState, runCompile, runConnect, runExplore, runMesh, runPacket } from '../../src/browser.js';

export type Job = 'check' | 'connect' | 'packet' | 'explore' | 'mesh' | 'compile';

export interface Request {
  readonly id: number;
  readonly job: Job;
  readonly state: unknown;
}

export interface Answer {
  readonly id: number;
  readonly job: Job;
  readonly ms: number;
  readonly value: unknown;
}

const RUN: Record<Job, (s: ReturnType<typeof normalizeState>) => unknown> = {
  check: checkRules,
  connect: runConnect,
  packet: runPacket,
  explore: runExplore,
  mesh: runMesh,
  compile: runCompile,
};

const scope = self as unknown as { onmessage: ((e: MessageEvent<Request>) => void) | null; postMessage: (a: Answer) => void };

scope.onmessage = (e: MessageEvent<Request>): void => {
  const { id, job, state } = e.data;
  const t0 = performance.now();
  let value: unknown;
  try {
    value = Object.hasOwn(RUN, job) ? RUN[job](normalizeState(state)) : { ok: false, source: 'page', diagnostics: [{ severity: 'error', code: 'BAD_CONFIG', message: `unknown job ${String(job)}`, line: null, column: null, length: 0, text: `unknown job ${String(job)}` }] };
  } catch (err) {
    // The views return their errors as values; anything thrown here is a bug, shown as one.
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    value = { ok: false, source: 'internal', diagnostics: [{ severity: 'error', code: 'INTERNAL', message, line: null, column: null, length: 0, text: `internal error: ${message}` }] };
  }
  scope.postMessage({ id, job, ms: performance.now() - t0, value });
};
