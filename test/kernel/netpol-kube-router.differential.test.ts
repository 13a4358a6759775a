// kube-router's compiled NetworkPolicy rules against the kernel:
// - they load (ipset restore, then iptables-restore) and iptables-save prints them back byte for
//   byte, the sets with the members we wrote;
// - on generated snapshots (networkPolicyCase, seeded), a node namespace with the pods on veths
//   gives, probe by probe, the same outcome as the engine running the same rules in a Netns, and
//   the reference evaluator's verdict unless a named kube-router departure explains it.
// NETFILTER_SIM_NETPOL_CASES=N runs fewer generated cases (default 240).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { networkPolicyCase } from '../../src/arbitraries/index.js';
import type { NetworkPolicyProbe } from '../../src/arbitraries/index.js';
import { PROBE_PORTS } from '../../src/arbitraries/netpol.js';
import { compileKubeRouter } from '../../src/compile/netpol/kube-router.js';
import { parseIpsetSave } from '../../src/iptables/syntax/ipset.js';
import type { Snapshot } from '../../src/model/kubernetes.js';
import { NetworkPolicyEvaluator } from '../../src/netpol/index.js';
import { kubeRouterDepartures } from '../netpol/departures.js';
import { pod, policy, snapshot } from '../netpol/helpers.js';
import { nodeLayout, nodeNetns, probeNode, probeSource } from '../netpol/node.js';
import { describeKernel, kernelTools, mapLimit, run, stripSaveComments } from './harness.js';
import { kernelNodeCases } from './netpol-harness.js';
import type { NodeReport } from './netpol-harness.js';

const CASES = Number(process.env['NETFILTER_SIM_NETPOL_CASES'] ?? 240);
const SEED = 291029;

/** ipset restore + iptables-restore + iptables-save + ipset save in a fresh namespace. */
async function kernelLoad(rules: string, ipsets: string, family: 4 | 6 = 4): Promise<{ ok: boolean; save: string; sets: string; stderr: string }> {
  const t = kernelTools();
  const [restoreBin, saveBin] = family === 6 ? [t.ip6tablesRestore, t.ip6tablesSave] : [t.iptablesRestore, t.iptablesSave];
  const dir = mkdtempSync(join(tmpdir(), 'nfsim-kr-'));
  try {
    writeFileSync(join(dir, 'sets'), ipsets);
    writeFileSync(join(dir, 'rules'), rules);
    const script = `ipset restore < "$1/sets" && "$2" < "$1/rules" && "$3" && echo '#SETS' && ipset save`;
    const r = await run([t.unshare, '--net', '--', 'sh', '-c', script, 'sh', dir, restoreBin, saveBin], '', 60_000);
    const [save = '', sets = ''] = r.stdout.split('#SETS\n');
    return { ok: r.status === 0, save: stripSaveComments(save), sets, stderr: r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The members of each set, as the kernel lists them and as we wrote them. */
function members(text: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of parseIpsetSave(text)) {
    out[s.name] = s.entries.map((e) => `${e.addr.join('.')}/${e.prefix}${e.nomatch ? ' nomatch' : ''}`).sort();
  }
  return out;
}

function showcase(): Snapshot {
  return snapshot(['x/a', 'x/b', 'y/a'], [
    policy('x', 'deny-all', {}, { policyTypes: ['Ingress', 'Egress'] }),
    policy('x', 'web', { matchLabels: { pod: 'a' } }, {
      ingress: [
        { from: [{ podSelector: { matchLabels: { pod: 'b' } } }], ports: [{ port: 80 }, { port: 'serve-81-tcp' }] },
        { from: [{ namespaceSelector: {} }], ports: [{ protocol: 'SCTP', port: 80, endPort: 90 }] },
        { from: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['172.17.1.0/24'] } }] },
      ],
    }),
    policy('y', 'dns', {}, { egress: [{ to: [{ namespaceSelector: {} }], ports: [{ protocol: 'UDP', port: 53 }, { port: 'serve-80-tcp' }] }] }),
  ]);
}

const tcpOnly = (p: NetworkPolicyProbe): NetworkPolicyProbe => ({ ...p, protocol: 'TCP' });

describeKernel('kube-router NetworkPolicy rules vs the kernel', () => {
  it('the showcase loads; iptables-save prints our text back; the sets hold our members', async () => {
    for (const s of [showcase(), ...fc.sample(networkPolicyCase(), { seed: SEED, numRuns: 20 }).map((c) => c.snapshot)]) {
      const r = compileKubeRouter(s, 'node-1');
      const k = await kernelLoad(r.rules, r.ipsets);
      expect(k.stderr).toBe('');
      expect(k.ok).toBe(true);
      expect(k.save).toBe(r.rules);
      expect(members(k.sets)).toEqual(members(r.ipsets));
    }
  }, 120_000);

  it('IPv6 (families [4, 6]): ip6tables-save prints our rules6 back; the inet6: sets hold our members', async () => {
    const dual = (id: string, i: number) => ({ ...pod(id, i), status: { phase: 'Running', podIP: `10.244.1.${i + 2}`, podIPs: [{ ip: `10.244.1.${i + 2}` }, { ip: `fd00:10:244:1::${i + 2}` }] } });
    const s = snapshot([dual('x/a', 0), dual('x/b', 1), dual('y/a', 2)], [
      policy('x', 'p', {}, { policyTypes: ['Ingress', 'Egress'], ingress: [{ from: [{ ipBlock: { cidr: 'fd00:10:244::/48', except: ['fd00:10:244:1::4/128'] } }, { podSelector: {} }], ports: [{ port: 'serve-80-tcp' }, { port: 81 }] }], egress: [{ to: [{ ipBlock: { cidr: '::/0' } }] }] }),
    ]);
    const r = compileKubeRouter(s, 'node-1', { families: [4, 6] });
    const k = await kernelLoad(r.rules6, r.ipsets, 6);
    expect(k.stderr).toBe('');
    expect(k.save).toBe(r.rules6);
    expect(members(k.sets)).toEqual(members(r.ipsets));
  }, 60_000);

  const generated = fc.sample(networkPolicyCase({ maxPods: 5, maxPolicies: 4, maxProbes: 6 }), { seed: SEED, numRuns: CASES });
  let reports: NodeReport[] = [];
  beforeAll(async () => {
    reports = await kernelNodeCases(generated.map(({ snapshot: s, probes }) => {
      const r = compileKubeRouter(s, 'node-1');
      return {
        layout: nodeLayout(s), ports: PROBE_PORTS, rules4: r.rules, ipsets: r.ipsets,
        probes: probes.map((p) => ({ from: p.from.startsWith('node:') ? 'node' : p.from, to: p.to, port: p.port })),
      };
    }));
  }, 900_000);

  it(`${CASES} generated snapshots: every probe as the engine says, and as the reference says or a named departure explains`, async () => {
    let probes = 0;
    let reached = 0;
    let departures = 0;
    const mismatches: string[] = [];
    await mapLimit(generated, 1, async ({ snapshot: s, probes: ps }, i) => {
      const report = reports[i]!;
      if (!report.ok) {
        mismatches.push(`case ${i}: kernel setup failed at ${report.stage}: ${report.stderr}`);
        return;
      }
      const compiled = compileKubeRouter(s, 'node-1');
      const layout = nodeLayout(s);
      const ns = nodeNetns(layout, compiled);
      const ev = new NetworkPolicyEvaluator(s);
      ps.map(tcpOnly).forEach((p, j) => {
        probes++;
        const kernel = report.results[j]!.outcome;
        const ours = probeNode(ns, layout, p).outcome;
        const engine = ours === 'remote' ? 'reached' : ours;
        if (kernel === 'reached') reached++;
        if (engine !== kernel) mismatches.push(`case ${i} (seed ${SEED}) probe ${JSON.stringify(p)}: kernel ${kernel}, engine ${engine}`);
        const reference = ev.evaluate({ from: probeSource(p), to: p.to, port: p.port, protocol: 'TCP' }).allowed;
        if (reference !== (kernel === 'reached')) {
          if (kubeRouterDepartures(s, p).length === 0) mismatches.push(`case ${i} probe ${JSON.stringify(p)}: kernel ${kernel}, reference ${reference ? 'allows' : 'blocks'}, no departure explains it`);
          else departures++;
        }
      });
    });
    expect(mismatches).toEqual([]);
    expect(probes).toBeGreaterThan(CASES * 2);
    expect(reached).toBeGreaterThan(probes / 4);
    expect(probes - reached).toBeGreaterThan(probes / 20);
    expect(departures).toBeLessThan(probes / 10);
  }, 600_000);
});
