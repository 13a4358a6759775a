// The laws catch mutations of the mesh compilers' rules: drop one rule the capture depends on,
// and a property over generated configurations and probes reports it.
import { fc } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { connection, istioConfig, linkerdConfig } from '../../src/arbitraries/index.js';
import type { ConnectionProbe } from '../../src/arbitraries/index.js';
import type { Rule, Ruleset } from '../../src/model/types.js';
import { printRule } from '../../src/iptables/print/save.js';
import { checkCaptureLaws, istioCapture, linkerdCapture, type CaptureSetup } from '../../src/laws/index.js';

/** A change to one rule: a new rule, `null` to drop it, the rule itself to keep it. */
type Mutation = (rule: Rule, text: string) => Rule | null;

/** Drops every rule whose printed text matches. */
const drop = (re: RegExp): Mutation => (r, text) => (re.test(text) ? null : r);

/** Removes `-p tcp` from the REDIRECT rules, as a generator that forgot it would write them. */
const anyProtocolRedirect: Mutation = (r) => {
  if (r.target?.kind !== 'extension' || r.target.name !== 'REDIRECT') return r;
  const { protocol: _p, ...rest } = r;
  void _p;
  return { ...rest, matches: r.matches.filter((m) => m.name !== 'tcp') };
};

/** The setup with its IPv4 rules mutated. */
function mutate(setup: CaptureSetup, mutation: Mutation): CaptureSetup {
  const rs = setup.rules as Ruleset;
  const rules: Ruleset = {
    ...rs,
    tables: rs.tables.map((t) => ({
      ...t,
      chains: t.chains.map((c) => ({ ...c, rules: c.rules.map((r) => mutation(r, printRule(r, c.name, 4))).filter((r): r is Rule => r !== null) })),
    })),
  };
  return { ...setup, rules };
}

function lawBroken(configs: fc.Arbitrary<CaptureSetup>, probes: fc.Arbitrary<ConnectionProbe>, mutation: Mutation, seed: number): string | undefined {
  const out = fc.check(fc.property(configs, probes, (setup, probe) => checkCaptureLaws(mutate(setup, mutation), probe) === undefined), { seed, numRuns: 300 });
  if (!out.failed) return undefined;
  const [setup, probe] = out.counterexample!;
  return checkCaptureLaws(mutate(setup, mutation), probe)?.law;
}

const linkerd = linkerdConfig().map((c) => linkerdCapture(c));
const istio = istioConfig({ ipv6: false }).map((c) => istioCapture(c));

describe('mutations of proxy-init rules are caught', () => {
  const ignoring = linkerdConfig().map((c) => linkerdCapture({ ...c, outboundPortsToIgnore: ['4567-4568'] }));
  it.each([
    ['the UID exemption', linkerd, drop(/--uid-owner/), connection({ from: 'local' }), 'the proxy never captures its own traffic'],
    ['the OUTPUT jump', linkerd, drop(/^-A OUTPUT .*-j PROXY_INIT_OUTPUT/), connection({ from: 'local', uids: [1000] }),
      'every TCP connection from an app reaches the outbound proxy unless its port or destination is excluded'],
    ['the ignored outbound ports', ignoring, drop(/ignore-port/), connection({ from: 'local', uids: [1000], ports: [{ min: 4567, max: 4568 }] }),
      'excluded ports and ranges are never redirected'],
    ['the PREROUTING jump', linkerd, drop(/^-A PREROUTING .*-j PROXY_INIT_REDIRECT/), connection({ from: 'remote' }), 'inbound connections reach the inbound proxy unless skipped'],
    ['-p tcp on the redirects', linkerd, anyProtocolRedirect, connection({ protocols: ['udp'] }), 'non-TCP traffic is never redirected'],
  ] as const)('without %s', (_, configs, mutation, probes, law) => {
    expect(lawBroken(configs, probes, mutation, 11)).toBe(law);
  });
});

describe('mutations of istio-iptables rules are caught', () => {
  it.each([
    ['the UID and GID exemptions', /-m owner --(uid|gid)-owner \d+ -j RETURN/, connection({ from: 'local' }), 'the proxy never captures its own traffic'],
    ['the OUTPUT jump', /^-A OUTPUT -j ISTIO_OUTPUT/, connection({ from: 'local', uids: [1000], gids: [1000] }), 'every TCP connection from an app reaches the outbound proxy unless its port or destination is excluded'],
    ['the PREROUTING jump', /^-A PREROUTING -p tcp -j ISTIO_INBOUND/, connection({ from: 'remote' }), 'inbound connections reach the inbound proxy unless skipped'],
  ] as const)('without %s', (_, re, probes, law) => {
    expect(lawBroken(istio, probes, drop(re), 12)).toBe(law);
  });
});
