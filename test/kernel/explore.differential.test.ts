// explore against the kernel: on the generated pods of the connect differential (iptables, native
// nft loaded with `nft -f`, and both together), every probe's kernel outcome (with address, port
// and SO_ORIGINAL_DST) is the one of the class that holds it.
import { beforeAll, expect, it } from 'vitest';
import { explore, classOf, expectedFor } from '../../src/explore/index.js';
import type { ExploreResult } from '../../src/explore/index.js';
import { generateConnectCase } from './generate.js';
import type { ConnectCase } from './generate.js';
import { describeKernel, describeNftKernel, kernelConnectMany } from './harness.js';
import { generateNftConnectCase } from './nft-generate.js';
import type { KernelConnectReport } from './harness.js';

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
    const spaces: Record<'local' | 'remote', ExploreResult> = {
      local: explore({ ...c.sim, from: 'local' }),
      remote: explore({ ...c.sim, from: 'remote' }),
    };
    c.probes.forEach((p, i) => {
      const got = k.results[i]!;
      const probe = p.from === 'local' ? { uid: p.uid, gid: p.gid, dst: p.dst } : { src: p.src, dst: p.dst, iface: 'eth0' };
      const cls = classOf(spaces[p.from], probe);
      expect(cls, `seed=${c.seed} probe ${JSON.stringify(p)}: no class`).toBeDefined();
      const want = expectedFor(cls!, probe);
      const seen = { outcome: got.outcome, address: got.address, port: got.port, originalDestination: got.originalDestination };
      expect(seen, `seed=${c.seed} (${c.description}) probe ${i + 1} ${JSON.stringify(p)}: class ${JSON.stringify(cls!.example)} ${JSON.stringify(cls!.rules)}\n--- rules4 ---\n${c.kernel.rules4}\n--- rules6 ---\n${c.kernel.rules6}`).toEqual(want);
    });
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
    const options = { ...c.sim, nft: c.nft };
    const spaces: Record<'local' | 'remote', ExploreResult> = {
      local: explore({ ...options, from: 'local' }),
      remote: explore({ ...options, from: 'remote' }),
    };
    c.probes.forEach((p, i) => {
      const got = k.results[i]!;
      const probe = p.from === 'local' ? { uid: p.uid, gid: p.gid, dst: p.dst } : { src: p.src, dst: p.dst, iface: 'eth0' };
      const cls = classOf(spaces[p.from], probe);
      expect(cls, `seed=${c.seed} probe ${JSON.stringify(p)}: no class`).toBeDefined();
      const want = expectedFor(cls!, probe);
      const seen = { outcome: got.outcome, address: got.address, port: got.port, originalDestination: got.originalDestination };
      expect(seen, `seed=${c.seed} (${c.description}) probe ${i + 1} ${JSON.stringify(p)}: class ${JSON.stringify(cls!.example)} ${JSON.stringify(cls!.rules)}\n--- nft ---\n${c.nft}\n--- rules4 ---\n${c.kernel.rules4 ?? ''}`).toEqual(want);
    });
  });
});
