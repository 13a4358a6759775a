// nft statements whose answer depends on earlier packets (`limit rate`, `numgen inc`), against
// the kernel: each case loads an nft rule set into a real pod namespace and into a simulated one,
// makes the same connections in order, and outcome, address, port and SO_ORIGINAL_DST must agree
// probe by probe. The simulated clock starts at the wall clock and does not move, as the kernel's
// hardly does between probes a few milliseconds apart.
import { beforeAll, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { SimProbe } from './generate.js';
import { describeNftKernel, kernelConnectMany, type KernelCase, type KernelConnectReport } from './harness.js';

interface Case {
  readonly name: string;
  readonly nft: string;
  readonly listen: readonly number[];
  readonly probes: readonly SimProbe[];
}

const remote = (src: string, dst = '10.0.0.2:8080'): SimProbe => ({ from: 'remote', src, dst });
const local = (dst: string, uid = 1000): SimProbe => ({ from: 'local', uid, gid: uid, dst });
const chain = (hook: string, ...rules: string[]): string =>
  `table inet t {\n\tchain c {\n\t\ttype filter hook ${hook} priority 0; policy accept;\n${rules.map((r) => `\t\t${r}\n`).join('')}\t}\n}\n`;
const SYN = 'tcp flags syn / syn,ack';

const CASES: readonly Case[] = [
  { name: 'limit: a burst of 2 SYNs a minute, then drop', nft: chain('input', `tcp dport 8080 ${SYN} limit rate 1/minute burst 2 packets accept`, `tcp dport 8080 ${SYN} drop`), listen: [8080], probes: [remote('10.1.0.5'), remote('10.1.0.6'), remote('10.1.0.5'), remote('10.1.0.7')] },
  { name: 'limit over: the default burst of 5', nft: chain('output', `tcp dport 8080 ${SYN} limit rate over 1/hour drop`), listen: [8080], probes: Array.from({ length: 7 }, () => local('127.0.0.1:8080')) },
  { name: 'limit: one bucket per statement', nft: chain('input', `tcp dport 8080 ${SYN} limit rate over 2/minute burst 1 packets drop`, `tcp dport 8081 ${SYN} limit rate over 2/minute burst 1 packets drop`), listen: [8080, 8081], probes: [remote('10.1.0.5'), remote('10.1.0.5', '10.0.0.2:8081'), remote('10.1.0.5'), remote('10.1.0.5', '10.0.0.2:8081')] },
  { name: 'limit: a high rate is never reached', nft: chain('input', `tcp dport 8080 ${SYN} limit rate over 100000/second drop`), listen: [8080], probes: Array.from({ length: 4 }, (_, i) => remote(`10.1.0.${5 + i}`)) },
  {
    name: 'numgen inc: every other SYN marked and dropped',
    nft: chain('input', `tcp dport 8080 ${SYN} meta mark set numgen inc mod 2`, 'tcp dport 8080 meta mark 1 drop'),
    listen: [8080],
    probes: Array.from({ length: 5 }, (_, i) => remote(`10.1.0.${5 + i}`)),
  },
  {
    name: 'numgen inc with an offset, through a map',
    nft: chain('input', `tcp dport 8080 ${SYN} meta mark set numgen inc mod 3 offset 4 map { 4 : 0x0, 5 : 0x7, 6 : 0x0 }`, 'tcp dport 8080 meta mark 0x7 drop'),
    listen: [8080],
    probes: Array.from({ length: 6 }, (_, i) => remote(`10.1.0.${5 + i}`)),
  },
];

const view = (r: { outcome: string; address: string | null; port: number | null; originalDestination: string | null }) => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination });

describeNftKernel('nft limit and numgen across connections: Netns.connect vs real sockets', () => {
  const kernel = new Map<Case, KernelConnectReport>();
  beforeAll(async () => {
    const cases: KernelCase[] = CASES.map((c) => ({
      nft: c.nft,
      listeners: c.listen.map((port) => ({ port })),
      probes: c.probes.map((p) => (p.from === 'local' ? { from: 'local', uid: p.uid, gid: p.gid, dst: p.dst } : { from: 'remote', src: p.src, dst: p.dst })),
    }));
    const reports = await kernelConnectMany(cases);
    CASES.forEach((c, i) => kernel.set(c, reports[i]!));
  }, 300_000);

  it.for(CASES)('$name', (c) => {
    const k = kernel.get(c)!;
    if (!k.ok) expect.fail(`the kernel did not take the case (${k.stage}): ${k.stderr}`);
    // Every case but the unreachable rate lets some connections through and stops others.
    const outcomes = new Set(k.results.map((r) => r.outcome));
    expect(outcomes.size, JSON.stringify(k.results)).toBe(c.name.includes('never reached') ? 1 : 2);
    for (const evaluator of ['lowered', 'reference'] as const) {
      const ns = new Netns({ nft: c.nft, listen: [...c.listen], clock: Date.now() / 1000, evaluator });
      const ours = c.probes.map((p) => view(ns.connect(p)));
      expect(ours, `${evaluator}\n${c.nft}`).toEqual(k.results.map(view));
    }
  });
});
