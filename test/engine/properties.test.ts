// Laws of the engine, over generated rule sets and probes.
import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { check } from '../../src/iptables/check/check.js';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectSpec } from '../../src/engine/path/netns.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';

const ADDRS = ['10.0.0.2', '10.0.0.5', '10.96.0.10', '127.0.0.1', '10.1.0.7', '192.168.3.4'];
const CIDRS = ['10.0.0.0/8', '10.0.0.2/32', '127.0.0.0/8', '10.96.0.0/12', '192.168.0.0/16', '0.0.0.0/0', '10.0.12.0/255.0.255.0'];
const PORTS = [80, 443, 8080, 4140, 4143, 15001];
const UIDS = [0, 1000, 1337, 2102];

/** A common rule body: addresses, interfaces, protocol and ports, mark. */
function body(hook: string | null, allowNat: boolean): fc.Arbitrary<string> {
  const neg = fc.boolean().map((b) => (b ? '! ' : ''));
  const canIn = hook === null || hook === 'PREROUTING' || hook === 'INPUT' || hook === 'FORWARD';
  const canOut = hook === null || hook === 'OUTPUT' || hook === 'POSTROUTING' || hook === 'FORWARD';
  const ifaces = ['lo', 'eth0', 'eth+', '+'];
  return fc
    .record({
      src: fc.option(fc.tuple(neg, fc.constantFrom(...CIDRS)), { nil: undefined }),
      dst: fc.option(fc.tuple(neg, fc.constantFrom(...CIDRS)), { nil: undefined }),
      inIf: canIn && hook !== null ? fc.option(fc.tuple(neg, fc.constantFrom(...ifaces)), { nil: undefined }) : fc.constant(undefined),
      outIf: canOut && hook !== null ? fc.option(fc.tuple(neg, fc.constantFrom(...ifaces)), { nil: undefined }) : fc.constant(undefined),
      proto: fc.constantFrom(undefined, 'tcp', 'udp', 'icmp'),
      dport: fc.option(fc.tuple(neg, fc.constantFrom(...PORTS)), { nil: undefined }),
      owner: hook === 'OUTPUT' || hook === 'POSTROUTING' ? fc.option(fc.tuple(neg, fc.constantFrom(...UIDS)), { nil: undefined }) : fc.constant(undefined),
      mark: fc.option(fc.tuple(neg, fc.constantFrom(1, 0x539)), { nil: undefined }),
      nat: allowNat ? fc.boolean() : fc.constant(false),
    })
    .map((r) => {
      const parts: string[] = [];
      if (r.src) parts.push(`${r.src[0]}-s ${r.src[1]}`);
      if (r.dst) parts.push(`${r.dst[0]}-d ${r.dst[1]}`);
      if (r.inIf) parts.push(`${r.inIf[0]}-i ${r.inIf[1]}`);
      if (r.outIf) parts.push(`${r.outIf[0]}-o ${r.outIf[1]}`);
      const proto = r.proto ?? (r.dport || r.nat ? 'tcp' : undefined);
      if (proto) parts.push(`-p ${proto}`);
      if (r.dport && (proto === 'tcp' || proto === 'udp')) parts.push(`-m ${proto} ${r.dport[0]}--dport ${r.dport[1]}`);
      if (r.owner) parts.push(`-m owner ${r.owner[0]}--uid-owner ${r.owner[1]}`);
      if (r.mark) parts.push(`-m mark ${r.mark[0]}--mark ${r.mark[1]}`);
      return parts.join(' ');
    });
}

/** A table with built-in chains and up to three user chains; jumps only go forward (no loops). */
function tableArb(name: 'filter' | 'nat' | 'mangle'): fc.Arbitrary<string> {
  const hooks: Record<string, readonly string[]> = {
    filter: ['INPUT', 'FORWARD', 'OUTPUT'],
    nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
    mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  };
  const users = ['U1', 'U2', 'U3'];
  const target = (hook: string | null, from: number): fc.Arbitrary<string> => {
    const opts: fc.Arbitrary<string>[] = [fc.constantFrom('-j ACCEPT', '-j RETURN', '')];
    const later = users.slice(from);
    if (later.length > 0) opts.push(fc.constantFrom(...later).chain((u) => fc.constantFrom(`-j ${u}`, `-g ${u}`)));
    if (name !== 'nat') opts.push(fc.constantFrom('-j DROP', '-j ACCEPT'), fc.constantFrom('-j MARK --set-xmark 0x539/0xffffffff', '-j MARK --set-xmark 0x1/0x1'));
    if (name === 'filter') opts.push(fc.constant('-j REJECT'));
    if (name === 'nat' && hook === 'OUTPUT') opts.push(fc.constantFrom('-j REDIRECT --to-ports 4140', '-j DNAT --to-destination 10.1.0.9:8080', '-j DNAT --to-destination 127.0.0.1:15001'));
    if (name === 'nat' && hook === 'PREROUTING') opts.push(fc.constantFrom('-j REDIRECT --to-ports 4143', '-j DNAT --to-destination 10.0.0.2:8080'));
    if (name === 'nat' && hook === 'POSTROUTING') opts.push(fc.constantFrom('-j MASQUERADE', '-j SNAT --to-source 10.0.0.2'));
    return fc.oneof(...opts);
  };
  const natTarget = (t: string) => t.includes('REDIRECT') || t.includes('DNAT') || t.includes('MASQUERADE') || t.includes('SNAT');
  const rulesFor = (chain: string, hook: string | null, from: number) =>
    fc.array(
      fc.tuple(body(hook, name === 'nat'), target(hook, from)).map(([b, t]) => {
        const needsTcp = t.includes('--to-ports') || t.includes('DNAT');
        const bb = needsTcp && !/-p tcp/.test(b) ? `${b.replace(/-p (udp|icmp)/, '').replace(/-m udp [!\s]*--dport \d+/, '')} -p tcp` : b;
        return `-A ${chain} ${bb} ${natTarget(t) || t !== '' ? t : ''}`.replace(/\s+/g, ' ').trim();
      }),
      { maxLength: 4 },
    );
  return fc
    .tuple(
      fc.tuple(...hooks[name]!.map((h) => rulesFor(h, h, 0))),
      fc.tuple(...users.map((u, i) => rulesFor(u, null, i + 1))),
      fc.tuple(...hooks[name]!.map(() => fc.constantFrom('ACCEPT', 'ACCEPT', 'ACCEPT', 'ACCEPT', 'ACCEPT', 'DROP'))),
    )
    .map(([builtin, user, policies]) => {
      const lines = [`*${name}`];
      hooks[name]!.forEach((h, i) => lines.push(`:${h} ${name === 'nat' ? 'ACCEPT' : policies[i]} [0:0]`));
      for (const u of users) lines.push(`:${u} - [0:0]`);
      for (const rs of builtin) lines.push(...rs);
      for (const rs of user) lines.push(...rs);
      lines.push('COMMIT');
      return lines.join('\n');
    });
}

const rulesetArb: fc.Arbitrary<string> = fc
  .tuple(fc.option(tableArb('mangle'), { nil: undefined }), fc.option(tableArb('nat'), { nil: undefined }), fc.option(tableArb('filter'), { nil: undefined }))
  .map((ts) => ts.filter((t): t is string => t !== undefined).join('\n') + '\n');

const probeArb: fc.Arbitrary<ConnectSpec> = fc.oneof(
  fc.record({
    from: fc.constant('local' as const),
    uid: fc.constantFrom(...UIDS),
    dst: fc.tuple(fc.constantFrom(...ADDRS), fc.constantFrom(...PORTS)).map(([a, p]) => `${a}:${p}`),
    proto: fc.constantFrom('tcp' as const, 'udp' as const),
  }),
  fc.record({
    from: fc.constant('remote' as const),
    src: fc.constantFrom('10.0.0.5', '10.0.0.77', '192.168.3.4'),
    dst: fc.tuple(fc.constantFrom('10.0.0.2', '10.96.0.10'), fc.constantFrom(...PORTS)).map(([a, p]) => `${a}:${p}`),
    proto: fc.constantFrom('tcp' as const, 'udp' as const),
  }),
);

/** Rule sets that parse and pass check (the generator almost always gives those). */
function loadable(text: string): boolean {
  const r = parseIptablesSave(text, { family: 4, mode: 'lenient' });
  if (r.diagnostics.some((d) => d.severity === 'error')) return false;
  return !check(r.ruleset).some((d) => d.severity === 'error');
}

const LISTEN = [8080, 4140, 4143, '127.0.0.1:15001'];

describe('engine laws', () => {
  test.prop([rulesetArb, fc.array(probeArb, { minLength: 1, maxLength: 4 })], { numRuns: 150 })(
    'the lowered evaluator and the reference interpreter agree: verdict, NAT and trace',
    (text, probes) => {
      fc.pre(loadable(text));
      const fast = new Netns({ rules: text, listen: LISTEN, ipForward: true });
      const ref = new Netns({ rules: text, listen: LISTEN, ipForward: true, evaluator: 'reference' });
      for (const p of probes) expect(fast.connect(p)).toEqual(ref.connect(p));
      expect(fast.conntrack()).toEqual(ref.conntrack());
      expect(fast.counters()).toEqual(ref.counters());
    },
  );

  test.prop([rulesetArb, probeArb], { numRuns: 150 })('evaluation never throws on a rule set that passed check', (text, probe) => {
    fc.pre(loadable(text));
    const ns = new Netns({ rules: text, listen: LISTEN, ipForward: true });
    expect(() => ns.connect(probe)).not.toThrow();
    expect(() => ns.connect(probe, { trace: false })).not.toThrow();
    expect(() => ns.trace(probe.from === 'local' ? `${probe.proto ?? 'tcp'} > ${probe.dst} uid ${probe.uid}` : `${probe.proto ?? 'tcp'} ${probe.src}:40000 > ${probe.dst}`)).not.toThrow();
  });

  test.prop([fc.array(fc.integer({ min: 1, max: 0x7fffffff }), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 1000 })], { numRuns: 60 })(
    'conntrack keeps later packets on the first packet\'s NAT decision',
    (probabilities, seed) => {
      const rules = ['*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]'];
      probabilities.forEach((p, i) => rules.push(`-A OUTPUT -p tcp -m statistic --mode random --probability ${(p / 0x80000000).toFixed(11)} -j DNAT --to-destination 10.1.0.${i + 1}:80`));
      rules.push('-A OUTPUT -p tcp -j DNAT --to-destination 10.1.0.99:80', 'COMMIT', '');
      const ns = new Netns({ rules: rules.join('\n'), seed });
      const first = ns.connect({ from: 'local', uid: 1000, sport: 45000, dst: '10.96.0.10:80' });
      expect(first.outcome).toBe('remote');
      for (let i = 0; i < 5; i++) {
        const later = ns.trace('tcp 10.0.0.2:45000 > 10.96.0.10:80 uid 1000 flags A');
        expect([later.address, later.port]).toEqual([first.address, first.port]);
        const again = ns.connect({ from: 'local', uid: 1000, sport: 45000, dst: '10.96.0.10:80' });
        expect([again.address, again.port]).toEqual([first.address, first.port]);
      }
    },
  );

  test.prop([rulesetArb.map((t) => t.replace(/-j (DROP|REJECT)/g, '-j ACCEPT').replace(/ DROP \[/g, ' ACCEPT [')), probeArb.filter((p) => p.from === 'local')], { numRuns: 150 })(
    'a reply always reaches the connecting socket when no rule drops',
    (text, probe) => {
      fc.pre(loadable(text));
      const r = new Netns({ rules: text, listen: LISTEN }).connect(probe);
      // The first packet may still fail (a re-route to nowhere, a loopback source off lo); an
      // answer that was sent never does.
      expect(r.reason).not.toMatch(/^the (SYN-ACK|RST|ACK)/);
    },
  );
});
