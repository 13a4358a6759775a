// `Netns.connect` against the kernel with native nft rules: pods whose rules are nft only, and
// pods that mix iptables-nft tables with native nft tables at priorities around theirs. The same
// probes are made with real sockets and simulated ones; outcome, address, port and
// SO_ORIGINAL_DST must agree, probe by probe.
import { beforeAll, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { describeNftKernel, kernelConnectMany } from './harness.js';
import type { KernelConnectReport } from './harness.js';
import { generateNftConnectCase } from './nft-generate.js';

const NFT_PODS = 300;
const MIXED_PODS = 60;

interface View {
  readonly outcome: string;
  readonly address: string | null;
  readonly port: number | null;
  readonly originalDestination: string | null;
}
const view = (r: View): View => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination });

describeNftKernel('connect differential: native nft pods vs real sockets', () => {
  const cases = [
    ...Array.from({ length: NFT_PODS }, (_, i) => ({ ...generateNftConnectCase(i + 1, false), mixed: false })),
    ...Array.from({ length: MIXED_PODS }, (_, i) => ({ ...generateNftConnectCase(i + 1, true), mixed: true })),
  ];
  let reports: KernelConnectReport[] = [];
  beforeAll(async () => {
    reports = await kernelConnectMany(cases.map((c) => c.kernel));
  }, 900_000);

  it.for(cases.map((c, i) => ({ ...c, i, name: `${c.mixed ? 'mixed' : 'nft'} seed ${c.seed}` })))('$name', (c) => {
    const k = reports[c.i]!;
    if (!k.ok) expect.fail(`seed=${c.seed}: the kernel did not take the case (${k.stage}):\n${k.stderr}\n--- nft ---\n${c.nft}`);
    const ns = new Netns({ rules: c.sim.rules, ...(c.sim.rules6 ? { rules6: c.sim.rules6 } : {}), nft: c.nft, listen: c.sim.listen });
    const ours = c.probes.map((p) => view(ns.connect(p, { trace: false })));
    const kernel = k.results.map(view);
    const lines = [`seed=${c.seed} ${c.description}`, '--- nft ---', c.nft, '--- iptables ---', c.sim.rules, c.sim.rules6 ?? '', `--- listen ${c.sim.listen.join(',')} ---`];
    c.probes.forEach((p, i) => lines.push(`${JSON.stringify(ours[i]) === JSON.stringify(kernel[i]) ? ' ' : '✗'} ${JSON.stringify(p)}\n     kernel ${JSON.stringify(kernel[i])}\n     ours   ${JSON.stringify(ours[i])}`));
    expect(ours, lines.join('\n')).toEqual(kernel);
  });
});
