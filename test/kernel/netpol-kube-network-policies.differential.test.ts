// kube-network-policies' nftables table against the kernel. This kernel has no nft `queue`
// expression (nf_tables refuses the rule with ENOENT), so:
// - the table as written is parsed by nft, and the kernel refuses exactly its queue statements
//   (if a kernel accepts them, the table must list back byte for byte instead);
// - the table with its queue statements replaced by the reference evaluator's verdicts (a jump to a
//   chain that accepts, setting the label as the controller's verdict does, or drops) loads and
//   lists back byte for byte, and on generated snapshots every probe through a real node reaches
//   its pod exactly when the reference evaluator allows it: the sets, the hooks, the root-socket
//   and established shortcuts around the queue are the table's, the decision is the reference's.
import * as fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { networkPolicyCase } from '../../src/arbitraries/index.js';
import { PROBE_PORTS } from '../../src/arbitraries/netpol.js';
import { compileKubeNetworkPolicies } from '../../src/compile/netpol/kube-network-policies.js';
import type { QueueVerdict } from '../../src/compile/netpol/kube-network-policies.js';
import type { Snapshot } from '../../src/model/kubernetes.js';
import { NetworkPolicyEvaluator } from '../../src/netpol/index.js';
import { policy, snapshot } from '../netpol/helpers.js';
import { nodeLayout, probeSource } from '../netpol/node.js';
import { describeNftKernel, kernelNftListMany } from './harness.js';
import { kernelNodeCases } from './netpol-harness.js';
import type { NodeReport } from './netpol-harness.js';

const CASES = Number(process.env['NETFILTER_SIM_NETPOL_CASES_NFT'] ?? 60);
const SEED = 77001;

/** `nft -f` of the text in an empty namespace, then `nft list ruleset` (nft's errors when it refuses). */
async function nftLoad(text: string): Promise<{ ok: boolean; list: string; stderr: string }> {
  const [k] = await kernelNftListMany([text]);
  return k!.ok ? { ok: true, list: k!.list, stderr: '' } : { ok: false, list: '', stderr: k!.stderr };
}

function showcase(): Snapshot {
  return snapshot(['x/a', 'x/b', 'y/a'], [policy('x', 'deny', { matchLabels: { pod: 'a' } }, { ingress: [] })]);
}

/** The reference's verdict on every probe of a case, as the queue's answers. */
function verdictsFor(s: Snapshot, probes: readonly { from: string; to: string; port: number }[]): QueueVerdict[] {
  const ev = new NetworkPolicyEvaluator(s);
  const ip = (key: string): string => s.pods.find((p) => `${p.metadata.namespace}/${p.metadata.name}` === key)!.status!.podIP!;
  return probes.filter((p) => !p.from.startsWith('node:')).map((p) => ({
    src: ip(p.from), dst: ip(p.to), protocol: 'TCP' as const, port: p.port,
    accept: ev.evaluate({ from: p.from, to: p.to, port: p.port, protocol: 'TCP' }).allowed,
  }));
}

describeNftKernel('kube-network-policies nftables table vs the kernel', () => {
  it('as written: nft reads it, and this kernel refuses exactly its queue statements (it lists back byte for byte where queue exists)', async () => {
    const { nft } = compileKubeNetworkPolicies(showcase(), 'node-1');
    const k = await nftLoad(nft);
    if (k.ok) {
      expect(k.list).toBe(nft);
      return;
    }
    const errors = k.stderr.split('\n').filter((l) => /: Error: /.test(l));
    expect(errors.length).toBeGreaterThan(0);
    for (const e of errors) expect(e).toMatch(/Error: Could not process rule: No such file or directory/);
    const lines = nft.split('\n');
    const refused = [...k.stderr.matchAll(/:(\d+):\d+-\d+: Error/g)].map((m) => lines[Number(m[1]) - 1]!.trim());
    expect(refused.length).toBe(lines.filter((l) => l.includes(' queue ')).length);
    for (const l of refused) expect(l).toMatch(/ queue flags bypass to 98$/);
  });

  it('with its queue rules replaced by the reference evaluator\'s verdicts: loads and lists back byte for byte', async () => {
    for (const { snapshot: s, probes } of [{ snapshot: showcase(), probes: [{ from: 'x/b', to: 'x/a', port: 80 }] }, ...fc.sample(networkPolicyCase(), { seed: SEED, numRuns: 10 })]) {
      const { nft } = compileKubeNetworkPolicies(s, 'node-1', { verdicts: verdictsFor(s, probes) });
      const k = await nftLoad(nft);
      expect(k.stderr).toBe('');
      expect(k.list).toBe(nft);
    }
  });

  const generated = fc.sample(networkPolicyCase({ maxPods: 5, maxPolicies: 4, maxProbes: 5 }), { seed: SEED, numRuns: CASES });
  let reports: NodeReport[] = [];
  beforeAll(async () => {
    reports = await kernelNodeCases(generated.map(({ snapshot: s, probes }) => ({
      layout: nodeLayout(s), ports: PROBE_PORTS,
      nft: compileKubeNetworkPolicies(s, 'node-1', { verdicts: verdictsFor(s, probes) }).nft,
      probes: probes.map((p) => ({ from: p.from.startsWith('node:') ? 'node' : p.from, to: p.to, port: p.port })),
    })));
  }, 900_000);

  it(`with its queue rules replaced by the reference evaluator's verdicts: ${CASES} generated snapshots through a real node, every probe reached exactly when the reference allows it`, () => {
    const mismatches: string[] = [];
    let probes = 0;
    let reached = 0;
    generated.forEach(({ snapshot: s, probes: ps }, i) => {
      const report = reports[i]!;
      if (!report.ok) {
        mismatches.push(`case ${i}: kernel setup failed at ${report.stage}: ${report.stderr}`);
        return;
      }
      const ev = new NetworkPolicyEvaluator(s);
      ps.forEach((p, j) => {
        probes++;
        const kernel = report.results[j]!.outcome;
        if (kernel === 'reached') reached++;
        const allowed = ev.evaluate({ from: probeSource(p), to: p.to, port: p.port, protocol: 'TCP' }).allowed;
        // A denied connection's packets are dropped: the kernel sees no answer.
        const expected = allowed ? 'reached' : 'dropped';
        if (kernel !== expected) mismatches.push(`case ${i} (seed ${SEED}) probe ${JSON.stringify(p)}: kernel ${kernel}, reference ${allowed ? 'allows' : 'denies'}`);
      });
    });
    expect(mismatches).toEqual([]);
    expect(reached).toBeGreaterThan(probes / 4);
    expect(probes - reached).toBeGreaterThan(probes / 20);
  });
});
