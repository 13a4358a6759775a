// explore against the kernel: on the generated pods of the connect differential (iptables, native
// nft loaded with `nft -f`, and both together), every probe's kernel outcome (with address, port
// and SO_ORIGINAL_DST) is the one of the class that holds it.
import { beforeAll, expect, it } from 'vitest';
import { explore, classOf, expectedFor } from '../../src/explore/index.js';
import type { ExploreResult } from '../../src/explore/index.js';
import { generateConnectCase } from './generate.js';
import type { ConnectCase, SimProbe } from './generate.js';
import type { NetnsOptions } from '../../src/engine/path/netns.js';
import { exploreProbe } from '../explore/helpers.js';
import { describeKernel, describeNftKernel, kernelConnectMany } from './harness.js';
import { generateNftConnectCase } from './nft-generate.js';
import type { KernelConnectReport } from './harness.js';

/** Each kernel probe's outcome is the one of the class that holds it, in both explored spaces. */
function expectKernelInClasses(options: NetnsOptions, c: { seed: number; description: string; probes: readonly SimProbe[] }, k: KernelConnectReport & { ok: true }, rules: string): void {
  const spaces: Record<'local' | 'remote', ExploreResult> = {
    local: explore({ ...options, from: 'local' }),
    remote: explore({ ...options, from: 'remote' }),
  };
  c.probes.forEach((p, i) => {
    const got = k.results[i]!;
    const probe = exploreProbe(p);
    const cls = classOf(spaces[p.from], probe as { dst: string });
    expect(cls, `seed=${c.seed} probe ${JSON.stringify(p)}: no class`).toBeDefined();
    const want = expectedFor(cls!, probe as { dst: string });
    const seen = { outcome: got.outcome, address: got.address, port: got.port, originalDestination: got.originalDestination };
    expect(seen, `seed=${c.seed} (${c.description}) probe ${i + 1} ${JSON.stringify(p)}: class ${JSON.stringify(cls!.example)} ${JSON.stringify(cls!.rules)}\n${rules}`).toEqual(want);
  });
}

const CASES = 60;
// Seeds apart from the connect differential's (1-300): more pods for the same cost.
const FIRST_SEED = 5001;

describeKernel('explore differential: each kernel probe lands in a class with its outcome', () => {
  const cases = Array.from({ length: CASES }, (_, i) => generateConnectCase(FIRST_SEED + i));
  const kernel = new Map<ConnectCase, KernelConnectReport>();

  beforeAll(async () => {
    const reports = await kernelConnectMany(cases.map((c) => c.kernel));
    cases.forEach((c, i) => kernel.set(c, reports[i] as KernelConnectReport));
  });

  it.for(cases)('seed $seed', (c) => {
    const k = kernel.get(c) as KernelConnectReport;
    if (!k.ok) expect.fail(`seed=${c.seed}: the kernel did not take the generated case (${k.stage}, status ${k.status}):\n${k.stderr}`);
    expectKernelInClasses(c.sim, c, k, `--- rules4 ---\n${c.kernel.rules4}\n--- rules6 ---\n${c.kernel.rules6}`);
  });
});

const NFT_PODS = 40;
const MIXED_PODS = 20;

describeNftKernel('explore differential: native nft and mixed pods, each kernel probe lands in a class with its outcome', () => {
  const cases = [
    ...Array.from({ length: NFT_PODS }, (_, i) => ({ ...generateNftConnectCase(FIRST_SEED + i, false), mixed: false })),
    ...Array.from({ length: MIXED_PODS }, (_, i) => ({ ...generateNftConnectCase(FIRST_SEED + i, true), mixed: true })),
  ];
  let reports: KernelConnectReport[] = [];

  beforeAll(async () => {
    reports = await kernelConnectMany(cases.map((c) => c.kernel));
  }, 600_000);

  it.for(cases.map((c, i) => ({ ...c, i, name: `${c.mixed ? 'mixed' : 'nft'} seed ${c.seed}` })))('$name', (c) => {
    const k = reports[c.i]!;
    if (!k.ok) expect.fail(`seed=${c.seed}: the kernel did not take the case (${k.stage}, status ${k.status}):\n${k.stderr}\n--- nft ---\n${c.nft}`);
    expectKernelInClasses({ ...c.sim, nft: c.nft }, c, k, `--- nft ---\n${c.nft}\n--- rules4 ---\n${c.kernel.rules4 ?? ''}`);
  });
});
