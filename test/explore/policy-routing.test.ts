// explore with policy routing: a TPROXY sidecar (istio-iptables -m TPROXY) and an ambient pod
// (istio-cni's in-pod rules), each with the `ip rule`/`ip route` its component adds. The classes
// partition the space and probes drawn from every class (corners and a middle point of each box)
// get from Netns.connect (both evaluators) what their class says.
import { describe, expect, it } from 'vitest';
import { explore, summarizeExplore } from '../../src/explore/index.js';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { mulberry32 } from '../kernel/generate.js';
import { cornerProbes, expectAgreement, expectPartition } from './helpers.js';
import { POLICY_PODS } from './policy-pods.js';

describe('explore with policy routing', () => {
  it('the compilers add policy rules (otherwise these cases test nothing)', () => {
    for (const pod of POLICY_PODS) {
      expect(pod.options.ipRules!.length, pod.name).toBeGreaterThan(0);
      expect(pod.options.routes!.length, pod.name).toBeGreaterThan(0);
    }
  });

  for (const pod of POLICY_PODS) {
    for (const from of ['local', 'remote'] as const) {
      it(`${pod.name}, ${from}: classes partition the space and agree with connect`, () => {
        const options = { ...pod.options, from, family: 4 as const };
        const r = explore(options);
        expectPartition(r, 4);
        const probes = cornerProbes(r, 4, mulberry32(7), 1000);
        expect(probes.length).toBeGreaterThanOrEqual(3 * r.classes.length);
        for (const p of probes) expectAgreement(r, options, p);
        for (const c of r.classes) expectAgreement(r, options, c.example);
      });
    }
  }

  it('the routing changes the answer: without its policy rule the TPROXY pod drops what it delivers', () => {
    const pod = POLICY_PODS[0]!;
    const withRouting = summarizeExplore(explore({ ...pod.options, from: 'remote', family: 4 }));
    const without = summarizeExplore(explore({ ...pod.options, ipRules: [], from: 'remote', family: 4 }));
    const local = (s: typeof withRouting): bigint => s.outcomes.filter((o) => o.outcome === 'local').reduce((n, o) => n + BigInt(o.probes), 0n);
    expect(local(withRouting)).toBeGreaterThan(local(without));
  });

  it('explore --rule/--route in the CLI explores what the library does with the same routing', async () => {
    const pod = POLICY_PODS[0]!;
    const io = memoryIO({ 'pod.rules': pod.options.rules as string });
    const flags = pod.ipCommands.map((c) => `--${c[2]}=${[c[1]!, ...c.slice(4)].join(' ')}`);
    const code = await run(['explore', '--rules', 'pod.rules', '--listen', '15001,uid=1337', '--listen', '15006,transparent,uid=1337', '--listen', '8080', ...flags, '--from', 'remote', '-4', '--json'], io);
    expect(io.err, io.err).toBe('');
    expect(code).toBe(0);
    const cli = JSON.parse(io.out) as { classes: unknown[] };
    const lib = explore({ ...pod.options, from: 'remote', family: 4 });
    expect(cli.classes).toEqual(JSON.parse(JSON.stringify(lib.classes)));
  });
});
