// The contract every arbitrary of `netfilter-sim/arbitraries` keeps: the same seed gives the same
// values; every value is valid (rule sets pass `check`, probes and configurations are accepted
// by what reads them); printing then parsing gives the same text; bad constraints throw early.
import { fc, test } from '@fast-check/vitest';
import { beforeAll, describe, expect, it } from 'vitest';
import * as A from '../../src/arbitraries/index.js';
import { runConnect } from '../../src/cli/commands/connect.js';
import { memoryIO } from '../../src/cli/io.js';
import { Netns } from '../../src/engine/path/netns.js';
import { parsePacketSpec } from '../../src/engine/path/probe.js';
import type { Diagnostic } from '../../src/model/errors.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatIstioIptablesArgs, parseIstioIptablesArgs } from '../../src/compile/istio/args.js';
import { compileIstio } from '../../src/compile/istio/compile.js';
import { parseProxyInitArgs, formatProxyInitArgs } from '../../src/compile/linkerd/config.js';
import { compileProxyInit } from '../../src/compile/linkerd/proxy-init.js';
import { readPod } from '../../src/compile/pod.js';
import type { Family, Ruleset, TableName } from '../../src/model/types.js';
import { printIptablesSave } from '../../src/iptables/print/save.js';
import { applyIptablesCommands } from '../../src/iptables/syntax/apply.js';
import { formatCidr, parseCidr } from '../../src/model/address.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import { connectCommand } from '../../src/laws/counterexample.js';
import { printParseRoundTrip } from '../../src/laws/round-trip.js';
import { NetworkPolicyEvaluator, validateNetworkPolicy } from '../../src/netpol/index.js';
import { compileNetworkPolicy } from '../../src/compile/netpol/index.js';

type CheckFn = (ruleset: Ruleset) => Diagnostic[];
let check: CheckFn;

beforeAll(async () => {
  // The load-time checker is another layer's work; fail clearly if it is not there.
  const path = '../../src/iptables/check/index.js';
  try {
    const mod = (await import(path)) as { check?: CheckFn };
    if (typeof mod.check !== 'function') throw new Error('src/iptables/check/index.ts does not export check()');
    check = mod.check;
  } catch (e) {
    throw new Error(`the contract suite needs check(ruleset) from src/iptables/check/index.ts: ${(e as Error).message}`);
  }
});

const SEED = 20240611;

/** Rule sets must load: no error from check, and the printed text parses back to itself. */
function expectValid(rs: Ruleset): void {
  const errors = check(rs).filter((d) => d.severity === 'error');
  expect(errors.map((d) => d.message), printIptablesSave(rs)).toEqual([]);
  const cx = printParseRoundTrip(rs);
  expect(cx?.message, cx?.rules).toBeUndefined();
}

function commands(family: Family, argvs: readonly (readonly string[])[]): Ruleset {
  return applyIptablesCommands(undefined, argvs, { family, mode: 'strict' });
}

/** Every arbitrary, with what proves its values valid. */
interface Case {
  readonly name: string;
  readonly arb: () => fc.Arbitrary<unknown>;
  readonly valid: (value: never) => void;
  readonly bad: () => unknown;
}

function c<T>(name: string, arb: () => fc.Arbitrary<T>, valid: (value: T) => void, bad: () => unknown): Case {
  return { name, arb, valid: valid as (value: never) => void, bad };
}

const CASES: readonly Case[] = [
  c('cidr', () => A.cidr(), (v) => {
    const p = parseCidr(v, 4);
    expect(p).not.toBeNull();
    expect(formatCidr(p!)).toBe(v);
  }, () => A.cidr({ minPrefix: 40 })),
  c('cidr (IPv6)', () => A.cidr({ family: 6 }), (v) => {
    const p = parseCidr(v, 6);
    expect(p).not.toBeNull();
    expect(formatCidr(p!)).toBe(v);
  }, () => A.cidr({ family: 5 as 4 })),
  c('portRange', () => A.portRange(), (r) => {
    expect(r.min).toBeLessThanOrEqual(r.max);
    const p = r.min === r.max ? `${r.min}` : `${r.min}:${r.max}`;
    expectValid(commands(4, [['-A', 'INPUT', '-p', 'tcp', '--dport', p, '-j', 'ACCEPT']]));
  }, () => A.portRange({ min: 10, max: 5 })),
  c('connection', () => A.connection(), (p) => {
    expect(() => new Netns({ listen: [8080] }).connect(p, { trace: false })).not.toThrow();
  }, () => A.connection({ from: 'sideways' as 'local' })),
  c('connection (IPv6)', () => A.connection({ family: 6 }), (p) => {
    expect(() => new Netns({ listen: [8080] }).connect(p, { trace: false })).not.toThrow();
  }, () => A.connection({ uids: [] })),
  c('packet', () => A.packet(), (p) => {
    const spec = parsePacketSpec(A.formatPacket(p));
    expect(spec).toBeDefined();
    expect(() => new Netns({}).connect(p, { trace: false })).not.toThrow();
  }, () => A.packet({ ports: [{ min: 9, max: 1 }] })),
  c('match', () => A.match({ table: 'nat', hooks: ['OUTPUT'], protocol: 'tcp' }), (m) => {
    expectValid(commands(4, [['-t', 'nat', '-A', 'OUTPUT', '-p', 'tcp', ...m]]));
  }, () => A.match({ matches: ['nosuchmatch'] })),
  c('target', () => A.target({ table: 'nat', hooks: ['PREROUTING'], protocol: 'tcp', jumpTargets: ['X'] }), (t) => {
    expectValid(commands(4, [['-t', 'nat', '-N', 'X'], ['-t', 'nat', '-A', 'PREROUTING', '-p', 'tcp', ...t]]));
  }, () => A.target({ table: 'nat', hooks: ['POSTROUTING'], targets: [], verdicts: false })),
  c('ruleArgs', () => A.ruleArgs({ table: 'mangle', chain: 'PREROUTING' }), (argv) => {
    expectValid(commands(4, [argv]));
  }, () => A.ruleArgs({ table: 'nat', chain: 'FOO', hooks: ['FORWARD'] })),
  c('rule', () => A.rule({ family: 6, table: 'filter', chain: 'OUTPUT' }), (r) => {
    expectValid({ family: 6, tables: [{ name: 'filter', chains: [
      { name: 'INPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [] },
      { name: 'FORWARD', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [] },
      { name: 'OUTPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [r] },
    ] }] });
  }, () => A.rule({ maxMatches: -1 })),
  c('chain', () => A.chain({ table: 'nat', hooks: ['OUTPUT'] }), (ch) => {
    const rs = commands(4, [['-t', 'nat', '-N', 'KEEP']]);
    const nat = rs.tables[0]!;
    expectValid({ family: 4, tables: [{ name: 'nat', chains: [...nat.chains.filter((x) => x.builtin), ch] }] });
  }, () => A.chain({ table: 'nat', name: 'FORWARD' })),
  c('ruleset', () => A.ruleset(), (rs) => expectValid(rs), () => A.ruleset({ tables: ['nat', 'bogus' as TableName] })),
  c('ruleset (IPv6)', () => A.ruleset({ family: 6 }), (rs) => expectValid(rs), () => A.ruleset({ family: 6, maxRules: 1.5 })),
  c('rulesetCommands', () => A.rulesetCommands({ tables: ['nat', 'mangle'] }), (cmds) => expectValid(commands(4, cmds)), () => A.rulesetCommands({ maxChainNameLength: 29 })),
  c('rulesetText', () => A.rulesetText(), (text) => {
    const r = parseIptablesSave(text, { mode: 'strict' });
    expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(printIptablesSave(r.ruleset)).toBe(text);
    expectValid(r.ruleset);
  }, () => A.rulesetText({ format: 'xml' as 'save' })),
  c('rulesetText (restore)', () => A.rulesetText({ format: 'restore', family: 6 }), (text) => {
    const r = parseIptablesSave(text, { family: 6, mode: 'strict' });
    expect(r.diagnostics.filter((d) => d.severity === 'error'), text).toEqual([]);
    expectValid(r.ruleset);
  }, () => A.rulesetText({ typo: true } as A.RulesetTextConstraints)),
  c('linkerdConfig', () => A.linkerdConfig({ ipv6: 'either' }), (cfg) => {
    const r = compileProxyInit(cfg);
    expect(r.error, JSON.stringify(cfg)).toBeUndefined();
    const back = parseProxyInitArgs(formatProxyInitArgs(cfg));
    expect(back.ok && back.config).toEqual(cfg);
    for (const run of r.runs) expectValid(commands(run.family, run.argv));
  }, () => A.linkerdConfig({ iptablesModes: ['iptables-legacy' as 'legacy'] })),
  c('istioConfig', () => A.istioConfig(), (cfg) => {
    const r = compileIstio(cfg);
    for (const restore of r.restore) {
      const p = parseIptablesSave(restore.text, { family: restore.family, mode: 'strict' });
      expect(p.diagnostics.filter((d) => d.severity === 'error'), restore.text).toEqual([]);
      expectValid(p.ruleset);
    }
    const { argv, env } = formatIstioIptablesArgs(cfg);
    const back = parseIstioIptablesArgs(argv, env);
    expect({ ...back, enableIPv6: cfg.enableIPv6, dnsServersV4: cfg.dnsServersV4, dnsServersV6: cfg.dnsServersV6 }).toEqual(cfg);
  }, () => A.istioConfig({ maxListLength: 65 })),
  c('pod', () => A.pod(), (p) => {
    const read = readPod(JSON.stringify(p));
    expect(read.annotations).toEqual(p.metadata.annotations);
    expect(read.podIPs).toEqual(p.status?.podIPs?.map((x) => x.ip));
  }, () => A.pod({ mesh: 'consul' as 'istio' })),
  c('pod (injected)', () => A.pod({ form: 'injected', family: 'dual' }), (p) => {
    const read = readPod(JSON.stringify(p));
    const init = read.initContainers[0]!;
    if (init.name === 'linkerd-init') expect(parseProxyInitArgs(init.args).ok).toBe(true);
    else expect(() => parseIstioIptablesArgs(init.args.slice(1))).not.toThrow();
    expect(read.podIPs.length).toBe(2);
  }, () => A.pod({ form: 'running' as 'injected' })),
  c('networkPolicySnapshot', () => A.networkPolicySnapshot({ nodes: 2 }), (snap) => {
    // The API server would accept every policy, and the evaluator and both enforcers read the snapshot.
    for (const p of snap.networkPolicies) expect(validateNetworkPolicy(p).map((e) => e.message)).toEqual([]);
    const ev = new NetworkPolicyEvaluator(snap);
    expect(ev.warnings).toEqual([]);
    expect(() => compileNetworkPolicy(snap, 'node-1', { implementation: 'kube-router' })).not.toThrow();
    expect(() => compileNetworkPolicy(snap, 'node-2', { implementation: 'kube-network-policies' })).not.toThrow();
    // What it says it holds: pods in their node's pod CIDR, unique addresses.
    const ips = snap.pods.map((p) => p.status!.podIP!);
    expect(new Set(ips).size).toBe(ips.length);
    for (const p of snap.pods) expect(p.status!.podIP!.startsWith(`10.244.${p.spec.nodeName!.slice(5)}.`)).toBe(true);
  }, () => A.networkPolicySnapshot({ minPods: 5, maxPods: 2 })),
  c('networkPolicyCase', () => A.networkPolicyCase(), ({ snapshot: snap, probes }) => {
    const ev = new NetworkPolicyEvaluator(snap);
    for (const p of probes) {
      expect(p.from).not.toBe(p.to);
      const from = p.from.startsWith('node:') ? { node: p.from.slice(5) } : p.from;
      expect(typeof ev.evaluate({ from, to: p.to, port: p.port, protocol: p.protocol }).allowed).toBe('boolean');
    }
  }, () => A.networkPolicyCase({ maxProbes: 0 })),
];


describe.each(CASES)('$name', (kase) => {
  it('gives the same values for the same seed', () => {
    const a = fc.sample(kase.arb(), { seed: SEED, numRuns: 25 });
    const b = fc.sample(kase.arb(), { seed: SEED, numRuns: 25 });
    expect(b).toEqual(a);
  });

  it('generates valid values, whose printed form parses back to itself', () => {
    fc.assert(fc.property(kase.arb(), (v) => kase.valid(v as never)), { seed: SEED, numRuns: 60 });
  });

  it('rejects a bad constraint when it is built', () => {
    let error: unknown;
    try {
      kase.bad();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NetfilterSimError);
    expect((error as NetfilterSimError).code).toBe('BAD_CONFIG');
    expect((error as Error).message).toMatch(/^[a-zA-Z]+\(\): constraint "/);
  });
});

describe('shrinking', () => {
  it('shrinks a rule set to one short rule', () => {
    // Any rule set with a rule fails; what is left is one rule (and at most the chain it sits in).
    const out = fc.check(fc.property(A.rulesetCommands(), (cmds) => !cmds.some((x) => x.includes('-A'))), { seed: SEED });
    expect(out.failed).toBe(true);
    const cmds = out.counterexample![0];
    expect(cmds.filter((x) => x.includes('-A'))).toHaveLength(1);
    expect(cmds.filter((x) => x.includes('-N')).length).toBeLessThanOrEqual(1);
    expect(cmds.find((x) => x.includes('-A'))!.length).toBeLessThanOrEqual(6);
  });

  it('shrinks a rule to the option that matters', () => {
    const out = fc.check(fc.property(A.ruleArgs({ table: 'nat', chain: 'OUTPUT' }), (argv) => !argv.includes('--uid-owner')), { seed: SEED });
    expect(out.failed).toBe(true);
    const argv = out.counterexample![0];
    expect(argv.slice(0, 4)).toEqual(['-t', 'nat', '-A', 'OUTPUT']);
    expect(argv.slice(-4)).toEqual(['-m', 'owner', '--uid-owner', '0']);
    expect(argv.length).toBeLessThanOrEqual(10);
  });
});

describe('replay', () => {
  test.prop([A.connection()], { seed: SEED, numRuns: 15 })('the connect command of a probe gives what Netns.connect gives', async (probe) => {
    const rules = '*nat\n-A OUTPUT -p tcp -j REDIRECT --to-ports 4140\nCOMMIT\n';
    const expected = new Netns({ rules, listen: [4140] }).connect(probe, { trace: false });
    const args = connectCommand(probe, [4140], 4).split(' ').slice(2);
    const io = memoryIO({}, rules);
    expect(await runConnect([...args, '--json'], io)).toBe(0);
    const got = JSON.parse(io.out) as { outcome: string; address: string | null; port: number | null };
    expect({ outcome: got.outcome, address: got.address, port: got.port }).toEqual({ outcome: expected.outcome, address: expected.address, port: expected.port });
  });
});
