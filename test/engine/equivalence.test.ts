// The fast evaluator (lowered rules, port tests as data, dispatch indexes over runs of rules keyed
// on destination and port) against the reference interpreter over the model: for generated rule
// sets and probes, the same outcome, NAT result, trace, counters and conntrack table.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { check } from '../../src/iptables/check/check.js';
import { connection, rulesetText } from '../../src/arbitraries/index.js';
import { lowerRuleset } from '../../src/engine/rules/iptables-lower.js';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectSpec, NetnsOptions } from '../../src/engine/path/netns.js';
import { defaultRegistry } from '../../src/engine/rules/registry.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import type { Family } from '../../src/model/types.js';
import { kubeProxyNode, kubeProxyProbes, kubeProxyRules, kubeProxyServices } from '../../bench/kube-proxy.js';

// ---------------------------------------------------------------------------------------------
// A generator aimed at the fast path: long runs of `-d VIP -p P -m P --dport N` rules (the shape
// the dispatch index takes), broken by rules it does not take, with duplicate keys, rules that only
// count or mark (traversal continues inside a run), jumps and gotos into chains that return into
// the middle of a run, random draws and assumed matches after the port test, port ranges and
// negations that keep a rule out of the index.

interface Family6 {
  readonly family: Family;
  readonly vips: readonly string[];
  readonly host: number;
  readonly pod: string;
  readonly remote: readonly string[];
  readonly endpoint: (i: number) => string;
  readonly hostPort: (a: string, p: number) => string;
  readonly net: string;
}

const V4: Family6 = {
  family: 4,
  vips: ['10.96.0.1', '10.96.0.10', '10.96.3.7', '10.96.8.8', '172.30.0.41', '10.0.0.2'],
  host: 32,
  pod: '10.0.0.2',
  remote: ['10.0.0.5', '10.0.0.77', '10.0.0.9'],
  endpoint: (i) => `10.0.0.${50 + i}`,
  hostPort: (a, p) => `${a}:${p}`,
  net: '10.0.0.0/8',
};

const V6: Family6 = {
  family: 6,
  vips: ['fd00:96::1', 'fd00:96::10', 'fd00:96::3:7', 'fd00::2'],
  host: 128,
  pod: 'fd00::2',
  remote: ['fd00::5', 'fd00::77'],
  endpoint: (i) => `fd00::${(0x50 + i).toString(16)}`,
  hostPort: (a, p) => `[${a}]:${p}`,
  net: 'fd00::/16',
};

const PORTS = [53, 80, 443, 8080, 9090];
const USERS = ['SVC1', 'SVC2', 'SVC3'];

/** One rule of a run: keyed, or (sometimes) a rule that breaks the run. */
function runRule(f: Family6, chain: string, table: 'nat' | 'filter'): fc.Arbitrary<string> {
  const proto = fc.constantFrom('tcp', 'udp');
  const comment = fc.constantFrom('', '-m comment --comment "svc cluster IP" ');
  const extra = fc.constantFrom(
    '', '', '', '',
    '-m mark --mark 0x1/0x1 ',
    `! -s ${f.net} `,
    '-m statistic --mode random --probability 0.50000000000 ',
    '-m limit --limit 5/sec ',
  );
  const jumpTarget = fc.constantFrom(...USERS).chain((u) => fc.constantFrom(`-j ${u}`, `-g ${u}`));
  const targets: fc.Arbitrary<string>[] = [jumpTarget, fc.constantFrom('', '-j RETURN', '-j MARK --set-xmark 0x1/0x1', '-j ACCEPT')];
  if (table === 'nat') targets.push(fc.integer({ min: 0, max: 3 }).map((i) => `-j DNAT --to-destination ${f.hostPort(f.endpoint(i), 8080)}`));
  if (table === 'filter') targets.push(fc.constantFrom('-j DROP', '-j REJECT'));
  const keyed = fc
    .record({ vip: fc.constantFrom(...f.vips), proto, port: fc.constantFrom(...PORTS), comment, extra, target: fc.oneof(...targets), byPort: fc.integer({ min: 0, max: 9 }).map((x) => x === 0) })
    .map((r) => {
      // Matches go after the port test; a negated source is part of the base match.
      const extra = r.extra.startsWith('-m') ? r.extra : '';
      const base = r.extra.startsWith('!') ? r.extra : '';
      const dst = r.byPort ? '' : `-d ${r.vip}/${f.host} `;
      return `-A ${chain} ${base}${dst}-p ${r.proto} ${r.comment}-m ${r.proto} --dport ${r.port} ${extra}${r.target}`;
    });
  const breaker = fc
    .record({ vip: fc.constantFrom(...f.vips), port: fc.constantFrom(...PORTS), target: fc.oneof(...targets) })
    .chain(({ vip, port, target }) =>
      fc.constantFrom(
        `-A ${chain} -d ${vip}/${f.host} -p tcp -m tcp --dport ${port}:${port + 10} ${target}`,
        `-A ${chain} -d ${vip}/${f.host} -p tcp -m tcp ! --dport ${port} ${target}`,
        `-A ${chain} ! -d ${vip}/${f.host} -p tcp -m tcp --dport ${port} ${target}`,
        `-A ${chain} -p tcp -m statistic --mode random --probability 0.50000000000 -m tcp --dport ${port} ${target}`,
        `-A ${chain} -d ${vip}/${f.host} -p tcp -m tcp --dport ${port} --tcp-flags SYN,ACK SYN ${target}`,
        `-A ${chain} -m addrtype --dst-type LOCAL ${target}`,
        `-A ${chain} -p udp -m udp --sport ${port} ${target}`,
      ),
    );
  return fc.oneof({ weight: 12, arbitrary: keyed }, { weight: 1, arbitrary: breaker }).map((l) => l.replace(/\s+/g, ' ').trim());
}

/** A user chain a run jumps to: DNAT with random draws, marks, returns. */
function userChain(f: Family6, name: string, table: 'nat' | 'filter'): fc.Arbitrary<string[]> {
  const lines: fc.Arbitrary<string>[] = [
    fc.constant(`-A ${name} -m statistic --mode random --probability 0.50000000000 -j MARK --set-xmark 0x2/0x2`),
    fc.constant(`-A ${name} -j MARK --set-xmark 0x4/0x4`),
    fc.constant(`-A ${name} -m mark --mark 0x1/0x1 -j RETURN`),
    fc.constant(`-A ${name} -s ${f.pod}/${f.host} -j RETURN`),
  ];
  if (table === 'nat') {
    lines.push(fc.integer({ min: 0, max: 3 }).map((i) => `-A ${name} -p tcp -m statistic --mode random --probability 0.50000000000 -j DNAT --to-destination ${f.hostPort(f.endpoint(i), 80)}`));
    lines.push(fc.integer({ min: 0, max: 3 }).map((i) => `-A ${name} -p tcp -j DNAT --to-destination ${f.hostPort(f.endpoint(i), 8080)}`));
  } else {
    lines.push(fc.constantFrom(`-A ${name} -p tcp -j REJECT --reject-with tcp-reset`, `-A ${name} -j DROP`, `-A ${name} -j ACCEPT`));
  }
  return fc.array(fc.oneof(...lines), { maxLength: 4 });
}

function tableText(f: Family6, table: 'nat' | 'filter'): fc.Arbitrary<string> {
  const hooks = table === 'nat' ? ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'] : ['INPUT', 'FORWARD', 'OUTPUT'];
  const entry = table === 'nat' ? 'SERVICES' : 'FIREWALL';
  return fc
    .tuple(
      fc.array(runRule(f, entry, table), { maxLength: 40, size: 'medium' }),
      fc.tuple(...USERS.map((u) => userChain(f, u, table))),
      fc.array(runRule(f, 'PORTS', table), { maxLength: 12 }),
      fc.constantFrom('ACCEPT', 'ACCEPT', 'DROP'),
    )
    .map(([rules, users, ports, policy]) => {
      const lines = [`*${table}`];
      for (const h of hooks) lines.push(`:${h} ${table === 'nat' || h === 'OUTPUT' ? 'ACCEPT' : policy} [0:0]`);
      lines.push(`:${entry} - [0:0]`, ':PORTS - [0:0]', ...USERS.map((u) => `:${u} - [0:0]`));
      if (table === 'nat') lines.push(`-A PREROUTING -j ${entry}`, `-A OUTPUT -j ${entry}`, '-A POSTROUTING -m mark --mark 0x4/0x4 -j MASQUERADE');
      else lines.push(`-A INPUT -j ${entry}`, `-A FORWARD -j ${entry}`, `-A OUTPUT -j ${entry}`, `-A FORWARD -j PORTS`);
      lines.push(...rules, `-A ${entry} -j PORTS`, ...ports.map((l) => l.replace(/(! )?-d \S+ /, '')));
      users.forEach((u) => lines.push(...u));
      lines.push('COMMIT');
      return lines.join('\n');
    });
}

function rulesFor(f: Family6): fc.Arbitrary<string> {
  return fc.tuple(tableText(f, 'nat'), fc.option(tableText(f, 'filter'), { nil: undefined })).map(([n, t]) => `${n}\n${t ?? ''}\n`);
}

function probesFor(f: Family6): fc.Arbitrary<ConnectSpec[]> {
  const port = fc.constantFrom(...PORTS, 8080, 22);
  const proto = fc.constantFrom('tcp' as const, 'tcp' as const, 'udp' as const);
  const local = fc.record({
    from: fc.constant('local' as const),
    uid: fc.constantFrom(0, 1000),
    dst: fc.tuple(fc.constantFrom(...f.vips, f.endpoint(1)), port).map(([a, p]) => f.hostPort(a, p)),
    proto,
  });
  const remote = fc.record({
    from: fc.constant('remote' as const),
    src: fc.constantFrom(...f.remote),
    dst: fc.tuple(fc.constantFrom(...f.vips), port).map(([a, p]) => f.hostPort(a, p)),
    proto,
  });
  return fc.array(fc.oneof(local, remote), { minLength: 1, maxLength: 8 });
}

/** Rule sets that parse and pass check (the generator nearly always gives those). */
function loadable(text: string, family: Family): boolean {
  const r = parseIptablesSave(text, { family, mode: 'lenient' });
  if (r.diagnostics.some((d) => d.severity === 'error')) return false;
  return !check(r.ruleset).some((d) => d.severity === 'error');
}

const LISTEN = [8080, 80, 53, 9090];

function options(f: Family6, text: string, seed: number): NetnsOptions {
  return f.family === 4 ? { rules: text, listen: LISTEN, ipForward: true, seed } : { rules6: text, listen: LISTEN, ipForward: true, seed };
}

/** Runs the probes in order through a fast and a reference namespace and compares everything. */
function agree(opts: NetnsOptions, probes: readonly ConnectSpec[], family: Family): void {
  const fast = new Netns(opts);
  const ref = new Netns({ ...opts, evaluator: 'reference' });
  const quiet = new Netns(opts);
  for (const p of probes) {
    const a = fast.connect(p);
    expect(a).toEqual(ref.connect(p));
    // Tracing changes nothing but the record.
    const q = quiet.connect(p, { trace: false });
    expect({ ...q, steps: a.steps, trace: a.trace }).toEqual(a);
  }
  expect(fast.counters(family)).toEqual(ref.counters(family));
  expect(fast.conntrack()).toEqual(ref.conntrack());
  expect(quiet.counters(family)).toEqual(fast.counters(family));
}

describe('fast evaluator ≡ reference interpreter', () => {
  test.prop([rulesFor(V4), probesFor(V4), fc.integer({ min: 1, max: 1000 })], { numRuns: 120 })(
    'IPv4 runs of keyed rules: same outcome, NAT, trace, counters and conntrack',
    (text, probes, seed) => {
      fc.pre(loadable(text, 4));
      agree(options(V4, text, seed), probes, 4);
    },
  );

  test.prop([rulesFor(V6), probesFor(V6), fc.integer({ min: 1, max: 1000 })], { numRuns: 60 })(
    'IPv6 runs of keyed rules: same outcome, NAT, trace, counters and conntrack',
    (text, probes, seed) => {
      fc.pre(loadable(text, 6));
      agree(options(V6, text, seed), probes, 6);
    },
  );

  test.prop([rulesetText({ tables: ['raw', 'mangle', 'nat', 'filter'], maxRules: 8 }), fc.array(connection(), { minLength: 1, maxLength: 4 })], { numRuns: 100 })(
    'rule sets from the exported arbitraries: same outcome, NAT and trace',
    (text, probes) => {
      fc.pre(loadable(text, 4));
      agree({ rules: text, listen: LISTEN, ipForward: true }, probes, 4);
    },
  );

  it('the generated runs are long enough to be indexed', () => {
    const samples = fc.sample(rulesFor(V4), { numRuns: 40, seed: 7 });
    const indexed = samples.filter((text) => {
      if (!loadable(text, 4)) return false;
      const program = lowerRuleset(parseIptablesSave(text, { family: 4, mode: 'lenient' }).ruleset, ['lo', 'eth0'], defaultRegistry());
      return program.tables.some((t) => t?.chains.some((c) => c.runs.length > 0));
    });
    expect(indexed.length).toBeGreaterThan(20);
  });
});

describe('kube-proxy rule sets', () => {
  const services = kubeProxyServices(1500, 3);
  const text = kubeProxyRules(services);

  it('KUBE-SERVICES and KUBE-NODEPORTS are indexed; the catch-all rule is not', () => {
    const program = lowerRuleset(parseIptablesSave(text, { family: 4, mode: 'lenient' }).ruleset, ['lo', 'eth0', 'cbr0'], defaultRegistry());
    const nat = program.tables.find((t) => t?.name === 'nat')!;
    const svc = nat.chains.find((c) => c.name === 'KUBE-SERVICES')!;
    expect(svc.runs).toHaveLength(1);
    expect(svc.runs[0]).toMatchObject({ start: 0, end: svc.rules.length - 1, byDst: true });
    expect(nat.chains.find((c) => c.name === 'KUBE-NODEPORTS')!.runs[0]).toMatchObject({ byDst: false });
  });

  it('1,500 services: both evaluators give the same connections, traces and counters', () => {
    const probes: ConnectSpec[] = kubeProxyProbes(services, 150, 11);
    // Include the local node, the no-endpoint services (REJECT in filter) and external IPs.
    for (const s of services.filter((x) => x.endpoints.length === 0).slice(0, 5)) probes.push({ from: 'remote', src: '10.1.0.9', dst: `${s.vip}:${s.port}` });
    for (const s of services.filter((x) => x.externalIP !== null).slice(0, 5)) probes.push({ from: 'remote', src: '203.0.113.9', dst: `${s.externalIP}:${s.port}` });
    for (const s of services.slice(0, 5)) probes.push({ from: 'local', uid: 0, dst: `${s.vip}:${s.port}` });
    agree(kubeProxyNode(text, { seed: 5 }), probes, 4);
  });
});
