// The law explore is tested by: its classes partition the space, and for every probe the class
// that holds it says what Netns.connect gives (with both evaluators).
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { rulesetText } from '../../src/arbitraries/index.js';
import { classOf, explore } from '../../src/explore/index.js';
import type { ExploreOptions } from '../../src/explore/index.js';
import { generateConnectCase, mulberry32 } from '../kernel/generate.js';
import { cornerProbes, expectAgreement, expectGeneratedCase, expectPartition, exploreOrRefuse } from './helpers.js';

const LISTEN = [8080, 4140, 4143, '127.0.0.1:15001'];
/** Every match the arbitraries have but the one explore refuses by design (statistic --mode nth). */
const MATCHES = ['tcp', 'udp', 'icmp', 'icmp6', 'multiport', 'comment', 'owner', 'conntrack', 'state', 'mark', 'connmark', 'addrtype', 'iprange', 'limit', 'sctp', 'rpfilter', 'socket', 'mac', 'recent'];

describe('explore: classes partition the space and agree with connect', () => {
  test.prop([rulesetText({ family: 4, maxChains: 2, maxRules: 4, maxMatches: 2, matches: MATCHES }), fc.constantFrom('local' as const, 'remote' as const), fc.integer()], { numRuns: 40 })(
    'generated IPv4 rule sets',
    (rules, from, seed) => {
      const options = { rules, listen: LISTEN, from, family: 4 as const };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      expectPartition(r, 4);
      for (const p of cornerProbes(r, 4, mulberry32(seed), 12)) expectAgreement(r, options, p);
    },
  );

  test.prop([rulesetText({ family: 6, maxChains: 2, maxRules: 4, maxMatches: 2, matches: MATCHES }), fc.constantFrom('local' as const, 'remote' as const), fc.integer()], { numRuns: 25 })(
    'generated IPv6 rule sets',
    (rules6, from, seed) => {
      const options = { rules6, listen: LISTEN, from, family: 6 as const };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      expectPartition(r, 6);
      for (const p of cornerProbes(r, 6, mulberry32(seed), 12)) expectAgreement(r, options, p);
    },
  );

  test.prop([fc.integer({ min: 1, max: 100000 }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 30 })(
    'the kernel suite\'s generated pods, with their own probes',
    (seed, from) => {
      const c = generateConnectCase(seed);
      const options = { ...c.sim, from };
      const r = exploreOrRefuse(options);
      if (r !== null) expectGeneratedCase(r, options, c.probes, seed);
    },
  );
});

/**
 * Long runs of `-p PROTO [-d ADDR/32] --dport PORT` rules, as kube-proxy writes them: the engine
 * indexes them and explore records what each skip established. Few addresses and ports, so keys
 * repeat, collide and interleave with udp rules and jumps.
 */
const dispatchRuleset = fc
  .record({
    byDst: fc.boolean(),
    rules: fc.array(
      fc.record({
        host: fc.integer({ min: 0, max: 5 }),
        port: fc.constantFrom(80, 443, 8080, 4140, 53),
        udp: fc.boolean(),
        target: fc.constantFrom('DNAT', 'REDIRECT', 'RETURN', 'ACCEPT', 'MARK', 'JUMP'),
      }),
      { minLength: 8, maxLength: 24 },
    ),
    filterDrop: fc.boolean(),
  })
  .map(({ byDst, rules, filterDrop }) => {
    const line = (chain: string, r: { host: number; port: number; udp: boolean; target: string }, i: number, table: 'nat' | 'filter'): string => {
      const proto = r.udp ? 'udp' : 'tcp';
      const dst = byDst ? `-d 10.0.${r.host}.${r.host === 0 ? 2 : 9}/32 ` : '';
      const head = `-A ${chain} ${dst}-p ${proto} -m comment --comment "svc ${i}" -m ${proto} --dport ${r.port}`;
      if (table === 'filter') return `${head} -j ${r.target === 'ACCEPT' || r.target === 'RETURN' ? r.target : 'DROP'}`;
      switch (r.target) {
        case 'DNAT':
          return `${head} -j DNAT --to-destination 10.1.0.${1 + (i % 3)}:${8000 + i}`;
        case 'REDIRECT':
          return `${head} -j REDIRECT --to-ports 8080`;
        case 'MARK':
          return `${head} -j MARK --set-xmark 0x4000/0x4000`;
        case 'JUMP':
          return `${head} -j SVC-JUMP`;
        default:
          return `${head} -j ${r.target}`;
      }
    };
    const nat = rules.map((r, i) => line('SVCS', r, i, 'nat'));
    const filter = rules.map((r, i) => line('FSVCS', r, i, 'filter'));
    return [
      '*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', ':SVCS - [0:0]', ':SVC-JUMP - [0:0]',
      '-A PREROUTING -j SVCS', '-A OUTPUT -j SVCS', '-A SVC-JUMP -p tcp -j DNAT --to-destination 10.1.0.7:9000', ...nat, 'COMMIT',
      '*filter', `:INPUT ${filterDrop ? 'DROP' : 'ACCEPT'} [0:0]`, ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':FSVCS - [0:0]',
      '-A INPUT -j FSVCS', '-A OUTPUT -j FSVCS', ...filter, filterDrop ? '-A INPUT -p tcp --dport 8080 -j ACCEPT' : '-A INPUT -p tcp --dport 1 -j ACCEPT', 'COMMIT', '',
    ].join('\n');
  });

describe('explore: indexed runs of address and port rules', () => {
  test.prop([dispatchRuleset, fc.constantFrom('local' as const, 'remote' as const), fc.integer()], { numRuns: 25 })(
    'kube-proxy-shaped runs partition exactly and agree with connect',
    (rules, from, seed) => {
      const options = { rules, listen: [8080, 9000], peers: { '10.1.0.1': [8001, 8002] }, from, family: 4 as const };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      expectPartition(r, 4);
      for (const p of cornerProbes(r, 4, mulberry32(seed), 16)) expectAgreement(r, options, p);
      // Every key of the run, and its neighbours.
      for (let host = 0; host <= 5; host++) {
        for (const port of [79, 80, 81, 443, 8080, 4140, 53]) {
          const dst = `10.0.${host}.${host === 0 ? 2 : 9}:${port}`;
          expectAgreement(r, options, from === 'local' ? { uid: 1000, gid: 1000, dst } : { src: '10.0.0.7', dst, iface: 'eth0' });
        }
      }
    },
  );
});

/**
 * `-m socket` in PREROUTING looks up the namespace's listeners (and the probe's own connection):
 * generated listeners (by address or wildcard, transparent or not, with marks) against the match's
 * options, with TPROXY sending to one of them.
 */
const socketPod = fc.record({
  listeners: fc.array(
    fc.record({ addr: fc.constantFrom('', '10.0.0.2:', '127.0.0.1:'), port: fc.constantFrom(8080, 9090, 15001), transparent: fc.boolean() }),
    { minLength: 1, maxLength: 3 },
  ),
  opts: fc.subarray(['--transparent', '--nowildcard', '--restore-skmark']),
  tproxy: fc.boolean(),
  drop: fc.boolean(),
});

describe('explore: -m socket reads the listeners the namespace has', () => {
  test.prop([socketPod, fc.constantFrom('local' as const, 'remote' as const), fc.integer()], { numRuns: 30 })(
    'generated listeners and socket options partition exactly and agree with connect',
    ({ listeners, opts, tproxy, drop }, from, seed) => {
      const rules = [
        '*mangle', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', ':DIVERT - [0:0]',
        `-A PREROUTING -p tcp -m socket ${opts.join(' ')} -j DIVERT`.replace(/ +/g, ' '),
        ...(tproxy ? ['-A PREROUTING -p tcp -m tcp --dport 1000:20000 -j TPROXY --on-port 15001 --on-ip 127.0.0.1 --tproxy-mark 0x2/0xffffffff'] : []),
        '-A DIVERT -j MARK --set-xmark 0x1/0x1', '-A DIVERT -j ACCEPT', 'COMMIT',
        '*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]',
        `-A INPUT -p tcp -m mark --mark 0x1/0x1 -j ${drop ? 'DROP' : 'REJECT --reject-with tcp-reset'}`, 'COMMIT', '',
      ].join('\n');
      const listen = listeners.map((l) => ({ ...(l.addr ? { address: l.addr.slice(0, -1) } : {}), port: l.port, transparent: l.transparent }));
      const options: ExploreOptions = { rules, listen, from, family: 4 };
      const r = exploreOrRefuse(options);
      expect(r, 'explore reads -m socket').not.toBeNull();
      expectPartition(r!, 4);
      for (const p of cornerProbes(r!, 4, mulberry32(seed), 24)) expectAgreement(r!, options, p);
    },
  );
});

/**
 * `recent` lists start empty for every probe; what a lookup finds was added by the probe's own
 * earlier packets (the SYN, the SYN-ACK, the ACK), keyed on its source or destination, next to
 * NAT rules that write constants a probe's own address may equal.
 */
const recentRule = fc.record({
  where: fc.constantFrom('-t mangle -A PREROUTING', '-t mangle -A OUTPUT', '-t filter -A INPUT', '-t filter -A OUTPUT', '-t mangle -A POSTROUTING'),
  addr: fc.constantFrom('', '-s 10.0.0.9/32 ', '-d 10.0.0.2/32 ', '-d 127.0.0.1/32 ', '! -s 10.1.0.0/16 '),
  port: fc.constantFrom('', '--dport 8080 ', '--sport 8080 ', '--dport 80 '),
  command: fc.constantFrom('--set', '--rcheck', '--update', '--remove', '! --rcheck'),
  extra: fc.subarray(['--seconds 60', '--hitcount 2', '--rttl', '--reap']),
  side: fc.constantFrom('', '--rdest', '--rsource'),
  name: fc.constantFrom('a', 'b'),
  target: fc.constantFrom('DROP', 'ACCEPT', 'RETURN', 'REJECT', 'MARK'),
});

function recentText(rules: { where: string; addr: string; port: string; command: string; extra: string[]; side: string; name: string; target: string }[], nat: boolean): string {
  const tables: Record<string, string[]> = { mangle: [], filter: [], nat: [] };
  for (const r of rules) {
    const [, table, , chain] = r.where.split(' ');
    const checks = r.command.endsWith('rcheck') || r.command === '--update' ? r.extra.filter((e) => e !== '--reap' || r.extra.includes('--seconds 60')) : [];
    const tail = r.target === 'REJECT' ? (table === 'filter' ? '-j REJECT --reject-with tcp-reset' : '-j DROP') : r.target === 'MARK' ? '-j MARK --set-xmark 0x1/0x1' : `-j ${r.target}`;
    tables[table!]!.push(`-A ${chain} ${r.addr}-p tcp -m tcp ${r.port}-m recent ${r.command} ${checks.join(' ')} --name ${r.name} ${r.side} ${tail}`.replace(/ +/g, ' '));
  }
  if (nat) {
    tables['nat']!.push(
      '-A PREROUTING -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.0.0.2:8080', '-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080',
      // A constant no route, local address or peer singles out: only the lookup's fact does.
      '-A OUTPUT -p tcp -m tcp --dport 81 -j DNAT --to-destination 10.1.2.3:8080',
    );
  }
  return [
    '*mangle', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', ...tables['mangle']!, 'COMMIT',
    '*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', ...tables['nat']!, 'COMMIT',
    '*filter', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ...tables['filter']!, 'COMMIT', '',
  ].join('\n');
}

describe('explore: recent lists, empty for every probe', () => {
  let explored = 0;
  test.prop([fc.array(recentRule, { minLength: 1, maxLength: 5 }), fc.boolean(), fc.constantFrom('local' as const, 'remote' as const), fc.integer()], { numRuns: 40 })(
    'generated recent rules beside NAT partition exactly and agree with connect',
    (rules, nat, from, seed) => {
      const options: ExploreOptions = { rules: recentText(rules, nat), listen: [8080, '127.0.0.1:9000'], from, family: 4 };
      const r = exploreOrRefuse(options);
      if (r === null) return;
      explored++;
      expectPartition(r, 4);
      for (const p of cornerProbes(r, 4, mulberry32(seed), 24)) expectAgreement(r, options, p);
      // The NAT constants, the rules' addresses and their neighbours as the probe's own.
      for (const dst of ['10.0.0.2:8080', '10.0.0.2:80', '127.0.0.1:8080', '10.0.0.9:80', '10.1.0.1:8080', '10.1.2.3:81', '10.1.2.3:8080', '10.1.2.4:81']) {
        expectAgreement(r, options, from === 'local' ? { uid: 1000, gid: 1000, dst } : { src: '10.0.0.9', dst, iface: 'eth0' });
        if (from === 'remote') expectAgreement(r, options, { src: '10.0.0.2', dst, iface: 'eth0' });
      }
    },
  );
  it('a list entry of the probe\'s own destination, looked up after DNAT rewrote it: the NAT constant is a class of its own', () => {
    const rules = [
      '*mangle', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]',
      '-A OUTPUT -p tcp -m recent --set --name a --rdest', '-A POSTROUTING -p tcp -m recent --rcheck --name a --rdest -j DROP', 'COMMIT',
      '*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]',
      '-A OUTPUT -p tcp -m tcp --dport 81 -j DNAT --to-destination 10.1.2.3:8080', 'COMMIT', '',
    ].join('\n');
    const options: ExploreOptions = { rules, from: 'local', family: 4 };
    const r = explore(options);
    expectPartition(r, 4);
    for (const dst of ['10.1.2.3:81', '10.1.2.2:81', '10.1.2.4:81', '10.1.2.3:80']) expectAgreement(r, options, { uid: 0, gid: 0, dst });
    expect(classOf(r, { uid: 0, gid: 0, dst: '10.1.2.3:81' })!.outcome).toBe('dropped');
    expect(classOf(r, { uid: 0, gid: 0, dst: '10.1.2.4:81' })!.outcome).toBe('remote');
  });

  it('explored most of them (a lookup comparing a source with a destination is refused)', () => {
    expect(explored).toBeGreaterThan(20);
  });
});
