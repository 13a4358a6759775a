// The three NetworkPolicy enforcers on the cluster path reach the same verdict for the same probe
// on generated snapshots (the NetworkPolicy generators the kernel suites use, pods over two nodes):
// the reference evaluator at the veth, kube-network-policies' nft table with the reference answering
// its queue, kube-router's compiled iptables rules and ipsets, and kube-router's nftables tables —
// except where a named departure of kube-router's (test/netpol/departures.ts) applies to the probe.
// A blocked probe names a policy.
import * as fc from 'fast-check';
import { expect, it } from 'vitest';
import { networkPolicyCase } from '../../src/arbitraries/index.js';
import { Cluster } from '../../src/cluster/cluster.js';
import type { ClusterConnectResult } from '../../src/cluster/cluster.js';
import { kubeRouterDepartures, kubeRouterNftDepartures } from '../netpol/departures.js';

const RUNS = Number(process.env['NETFILTER_SIM_ENFORCER_RUNS'] ?? 60);

/** Allowed by policy: delivered, or refused by the destination's stack (no listener), not by a policy. */
function verdict(r: ClusterConnectResult): 'allowed' | 'blocked' {
  return r.outcome === 'local' || (r.outcome === 'refused' && r.policy === null) ? 'allowed' : 'blocked';
}

it('reference, kube-network-policies, kube-router and kube-router-nftables agree on the cluster path (kube-router: but for its named departures)', () => {
  let probes = 0;
  let blocked = 0;
  let departures = 0;
  let nftDepartures = 0;
  fc.assert(
    fc.property(networkPolicyCase({ nodes: 2, maxProbes: 8 }), ({ snapshot, probes: ps }) => {
      const clusters = (['reference', 'kube-network-policies', 'kube-router', 'kube-router-nftables'] as const).map((netpol) => new Cluster({ snapshot, kubeProxy: 'none', netpol }));
      for (const p of ps) {
        if (p.from.startsWith('node:')) continue;
        const spec = { from: p.from, to: p.to, port: p.port, proto: p.protocol === 'UDP' ? 'udp' as const : 'tcp' as const };
        const [ref, knp, kr, krn] = clusters.map((c) => c.connect(spec, { trace: false }));
        probes++;
        const v = verdict(ref!);
        if (v === 'blocked') {
          blocked++;
          expect(ref!.policy, `${JSON.stringify(p)}: the reference names the policy`).not.toBeNull();
        }
        expect(verdict(knp!), `kube-network-policies on ${JSON.stringify(p)}: ${knp!.reason}`).toBe(v);
        if (verdict(knp!) === 'blocked') expect(knp!.policy).toEqual(ref!.policy);
        if (verdict(kr!) !== v) {
          expect(kubeRouterDepartures(snapshot, p), `kube-router on ${JSON.stringify(p)}: ${kr!.reason}; reference ${v}`).not.toEqual([]);
          departures++;
        } else if (v === 'blocked') {
          expect(kr!.policy, `kube-router names the policy for ${JSON.stringify(p)}`).not.toBeNull();
        }
        // kube-router's nftables mode: the verdict of its iptables mode, but where nft refuses a policy's sets.
        if (verdict(krn!) !== verdict(kr!)) expect(kubeRouterNftDepartures(snapshot, p), `kube-router-nftables on ${JSON.stringify(p)}: ${krn!.reason}`).toContain('ipblock-intervals-conflict');
        if (verdict(krn!) !== v) {
          expect(kubeRouterNftDepartures(snapshot, p), `kube-router-nftables on ${JSON.stringify(p)}: ${krn!.reason}; reference ${v}`).not.toEqual([]);
          nftDepartures++;
        } else if (v === 'blocked') {
          expect(krn!.policy, `kube-router-nftables names the policy for ${JSON.stringify(p)}`).not.toBeNull();
        }
      }
    }),
    { seed: 29005, numRuns: RUNS },
  );
  // The generated probes exercise both verdicts, and departures stay the exception.
  expect(probes).toBeGreaterThan(RUNS * 2);
  expect(blocked).toBeGreaterThan(probes / 10);
  expect(blocked).toBeLessThan(probes);
  expect(departures).toBeLessThan(probes / 10);
  expect(nftDepartures).toBeLessThan(probes / 10);
  console.log(`enforcer agreement: ${probes} probes, ${blocked} blocked by the reference, ${departures} kube-router departures, ${nftDepartures} kube-router-nftables departures`);
});
