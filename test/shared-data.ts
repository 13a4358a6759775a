/**
 * Optional shared data: files the tests may read but the repository may not redistribute (the
 * rule-set dumps of `../shared/corpus`, several under non-commercial or GPL licences). They are
 * read in place from the `shared/` folder beside the repository and are never copied into it.
 * Everything the licences allow us to ship (the Apache-2.0 Linkerd, Istio and kube-proxy vectors
 * and the kernel listings recorded from them) is under `test/fixtures` instead.
 *
 * The rule, as for the kernel suites ({@link describeKernel} in test/kernel/harness.ts):
 * - the data is there: the suite runs;
 * - it is not, under `CI=true`: the suite fails with the missing path, so CI cannot go green by
 *   skipping what it was meant to check;
 * - it is not, elsewhere (a fresh clone): the suite is skipped with a visible warning.
 *
 * A CI pass that runs on purpose without the shared folder (the clean-clone pass of `.ci/run`)
 * says so with `NETFILTER_SIM_SHARED=absent`: missing shared data is then skipped visibly even
 * under `CI=true`, while the kernel suites keep their rule.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'vitest';

/** The shared folder beside the repository (`../shared`). */
export const SHARED_ROOT = resolve(import.meta.dirname, '..', '..', 'shared');

/** The absolute path of `rel` under the shared folder (which may not exist). */
export function sharedPath(rel: string): string {
  return join(SHARED_ROOT, rel);
}

/** Whether `rel` exists under the shared folder. */
export function hasShared(rel: string): boolean {
  return existsSync(sharedPath(rel));
}

/** Why the suite cannot run (the first missing path), or null when everything is there. */
export function sharedMissing(rels: readonly string[]): string | null {
  const missing = rels.find((r) => !hasShared(r));
  return missing === undefined ? null : `${sharedPath(missing)} is absent (the shared data is not beside this clone)`;
}

/** Whether missing shared data must fail the run: under CI=true, unless its absence is declared. */
export function sharedRequired(): boolean {
  return process.env['CI'] === 'true' && process.env['NETFILTER_SIM_SHARED'] !== 'absent';
}

/**
 * For a suite that reads `rels` only in part (it also has data of its own): call at collection,
 * inside the suite. Returns true when they all exist; otherwise registers a failing test (see
 * {@link sharedRequired}) or warns that `what` is left out, and returns false.
 */
export function optionalShared(what: string, rels: readonly string[]): boolean {
  const missing = sharedMissing(rels);
  if (missing === null) return true;
  if (sharedRequired()) {
    it(`needs the shared data: ${what}`, () => {
      throw new Error(`shared data unavailable under CI=true: ${missing} (set NETFILTER_SIM_SHARED=absent to skip on purpose)`);
    });
  } else {
    console.warn(`[shared] leaving out ${what}: ${missing}`);
  }
  return false;
}

/**
 * `describe` for a suite that reads `rels` (paths relative to the shared folder). Runs it when
 * they all exist; otherwise fails (see {@link sharedRequired}) or skips with a warning. The suite
 * body is not collected when the data is missing, so it may read the files at collection.
 */
export function describeShared(name: string, rels: readonly string[], fn: () => void): void {
  const missing = sharedMissing(rels);
  if (missing === null) {
    describe(name, fn);
    return;
  }
  if (sharedRequired()) {
    describe(name, () => {
      it('needs the shared data', () => {
        throw new Error(`shared data unavailable under CI=true: ${missing} (set NETFILTER_SIM_SHARED=absent to skip on purpose)`);
      });
    });
    return;
  }
  console.warn(`[shared] skipping "${name}": ${missing}`);
  describe.skip(name, () => {
    it('needs the shared data', () => undefined);
  });
}
