// The real-world nft corpus against the kernel: each file is loaded with `nft -f` into a
// throw-away namespace and listed back (our listing must be the same bytes), and loaded into a
// real pod where the file's probes are made with real sockets and with both evaluators
// (outcome, address, port and SO_ORIGINAL_DST must agree probe by probe).
import { beforeAll, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { describeNftKernel, kernelConnectMany, kernelNftListMany, type KernelConnectReport, type KernelNftResult } from './harness.js';
import { CORPUS, corpusText, type CorpusEntry } from './nft-corpus.js';

const view = (r: { outcome: string; address: string | null; port: number | null; originalDestination: string | null }) => ({ outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination });

/** The veth pairs a file's interfaces stand for: [name, peer] for each name, the peer listed first. */
function pairs(c: CorpusEntry): [string, string][] {
  const out: [string, string][] = [];
  const names = c.interfaces ?? [];
  for (let i = 1; i < names.length; i += 2) out.push([names[i]!, names[i - 1]!]);
  return out;
}

describeNftKernel('real-world nft rule sets: fmt vs nft list ruleset, connect vs real sockets', () => {
  const listed = new Map<CorpusEntry, KernelNftResult>();
  const connected = new Map<CorpusEntry, KernelConnectReport>();
  beforeAll(async () => {
    for (const c of CORPUS) listed.set(c, (await kernelNftListMany([corpusText(c.name)], { vethPairs: pairs(c) }))[0]!);
    const reports = await kernelConnectMany(CORPUS.map((c) => ({
      nft: corpusText(c.name),
      listeners: c.listen.map((port) => ({ port })),
      ipBatch: pairs(c).map(([a, b]) => `link add ${a} type veth peer name ${b}`),
      probes: c.probes.map((p) => (p.from === 'local' ? { from: 'local', uid: p.uid, gid: p.gid, dst: p.dst } : { from: 'remote', src: p.src, dst: p.dst })),
    })));
    CORPUS.forEach((c, i) => connected.set(c, reports[i]!));
    let probes = 0;
    let agree = 0;
    for (const c of CORPUS) {
      const k = connected.get(c)!;
      if (!k.ok) continue;
      const ns = new Netns({ nft: corpusText(c.name), listen: [...c.listen], clock: Date.now() / 1000, interfaces: { eth0: ['10.0.0.2/24', 'fd00::2/64'], ...Object.fromEntries((c.interfaces ?? []).map((n) => [n, []])) } });
      c.probes.forEach((p, i) => {
        probes++;
        if (JSON.stringify(view(ns.connect(p))) === JSON.stringify(view(k.results[i]!))) agree++;
      });
    }
    const same = CORPUS.filter((c) => { const k = listed.get(c)!; return k.ok && k.list === formatNftRuleset(corpusText(c.name), c.interfaces ? { interfaces: c.interfaces } : {}); }).length;
    console.log(`[kernel] nft corpus: ${same}/${CORPUS.length} files list identically; ${agree}/${probes} probes agree with real sockets`);
  }, 600_000);

  it.for(CORPUS)('$name: fmt is nft list ruleset', (c) => {
    const k = listed.get(c)!;
    if (!k.ok) expect.fail(`nft refused ${c.name}:\n${k.stderr}`);
    expect(formatNftRuleset(corpusText(c.name), c.interfaces ? { interfaces: c.interfaces } : {})).toBe(k.list);
  });

  it.for(CORPUS)('$name: connect agrees with real sockets', (c) => {
    const k = connected.get(c)!;
    if (!k.ok) expect.fail(`the kernel did not take ${c.name} (${k.stage}): ${k.stderr}`);
    for (const evaluator of ['lowered', 'reference'] as const) {
      const ns = new Netns({
        nft: corpusText(c.name), listen: [...c.listen], clock: Date.now() / 1000, evaluator,
        interfaces: { eth0: ['10.0.0.2/24', 'fd00::2/64'], ...Object.fromEntries((c.interfaces ?? []).map((n) => [n, []])) },
      });
      const ours = c.probes.map((p) => view(ns.connect(p)));
      const lines = c.probes.map((p, i) => `${JSON.stringify(ours[i]) === JSON.stringify(view(k.results[i]!)) ? ' ' : '✗'} ${JSON.stringify(p)}\n   kernel ${JSON.stringify(view(k.results[i]!))}\n   ours   ${JSON.stringify(ours[i])}`);
      expect(ours, `${evaluator} ${c.name}\n${lines.join('\n')}`).toEqual(k.results.map(view));
    }
  });
});
