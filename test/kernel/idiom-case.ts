// One nft rule set with the connections that exercise it, for the suites that compare
// `Netns.connect` with real sockets idiom by idiom (nft-idioms, nft-bindings), and that comparison.
import { expect } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { SimProbe } from './generate.js';
import type { KernelCase, KernelConnectReport } from './harness.js';

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

/** Each case as the kernel harness runs it: the rule set, its listeners, the probes in order. */
export function kernelCasesOf(cases: readonly IdiomCase[]): KernelCase[] {
  return cases.map((c) => ({
    nft: c.nft,
    listeners: c.listen.map((port) => ({ port })),
    probes: c.probes.map((p) => (p.from === 'local' ? { from: 'local', uid: p.uid, gid: p.gid, dst: p.dst } : { from: 'remote', src: p.src, dst: p.dst })),
  }));
}

const view = (r: { outcome: string; address: string | null; port: number | null; originalDestination: string | null }) => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination });

/**
 * The kernel ended the case's probes as the case says, and `Netns.connect` with each evaluator
 * ends them as the kernel did: outcome, address, port and SO_ORIGINAL_DST.
 */
export function expectAsKernel(c: IdiomCase, k: KernelConnectReport): void {
  if (!k.ok) expect.fail(`the kernel did not take the case (${k.stage}): ${k.stderr}`);
  expect(k.results.map((r) => r.outcome), 'the kernel').toEqual(c.expect);
  for (const evaluator of ['lowered', 'reference'] as const) {
    const ns = new Netns({ nft: c.nft, listen: [...c.listen], clock: Date.now() / 1000, evaluator });
    const ours = c.probes.map((p) => view(ns.connect(p)));
    expect(ours, `${evaluator}\n${c.nft}`).toEqual(k.results.map(view));
  }
}
