// explore over native nftables chains (and nft beside iptables): the partition law, agreement
// with connect, and the typed refusals for what cannot be split exactly.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { classOf, expectedFor, explore } from '../../src/explore/index.js';
import { Netns } from '../../src/engine/path/netns.js';
import type { ExploreOptions, ExploreResult } from '../../src/explore/index.js';
import { mulberry32 } from '../kernel/generate.js';
import { generateNftConnectCase, generateNftText } from '../kernel/nft-generate.js';
import { kubeProxyNftRules, kubeProxyNode, kubeProxyProbes, kubeProxyRules, kubeProxyServices } from '../../bench/kube-proxy.js';
import { cornerProbes, expectAgreement, expectGeneratedCase, expectPartition, exploreOrRefuse } from './helpers.js';

const NFT = `table ip t {
\tchain out {
\t\ttype nat hook output priority -100; policy accept;
\t\tmeta skuid 1337 return
\t\tip daddr 127.0.0.1 return
\t\ttcp dport { 22, 100-200 } return
\t\tip daddr . tcp dport { 10.0.0.1 . 80, 10.0.0.2 . 443 } accept
\t\ttcp dport 80 redirect to :4140
\t}
}
`;

/** Every selector and lookup form explore splits on, over both families, in nat and filter chains. */
const FORMS = `table inet pod {
	set blocked {
		type ipv4_addr
		flags interval
		elements = { 10.9.0.0/16, 192.168.3.1-192.168.3.40 }
	}
	map service-ips {
		type ipv4_addr . inet_proto . inet_service : verdict
		elements = { 10.96.0.10 . tcp . 80 : jump svc-a, 10.96.0.10 . tcp . 443 : jump svc-b, 10.96.0.11 . udp . 53 : jump svc-a, 10.96.0.12 . tcp . 8080 : accept }
	}
	chain out {
		type nat hook output priority -100; policy accept;
		meta skuid 1000-1999 meta skgid != 5 return
		ip daddr & 255.255.0.0 == 10.7.0.0 tcp dport < 1024 return
		ip6 daddr fd00::/64 tcp dport > 30000 redirect to :15001
		ip daddr . meta l4proto . th dport vmap @service-ips
		ip daddr . tcp dport { 10.20.0.0/16 . 1-1000, 10.21.0.0/16 . 80 } dnat ip to 10.0.0.9:8080
		ip daddr 10.30.0.0/16 meta l4proto tcp dnat ip to tcp dport map { 80 : 10.0.0.7, 443 : 10.0.0.8 }
		ip daddr 10.40.0.0/16 meta l4proto tcp redirect to :15001-15006
		tcp dport vmap { 1-99 : accept, 100-199 : jump svc-a }
		ip6 daddr != ::1 tcp dport != 22 ip6 daddr { fd01::/32, fd02::1 } redirect to :15006
	}
	chain svc-a {
		meta l4proto tcp dnat ip to 10.0.0.5:8080
	}
	chain svc-b {
		meta l4proto tcp redirect to :15006
	}
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr @blocked drop
		ip saddr . tcp dport { 172.16.0.0/12 . 8080 } reject with tcp reset
		ct original ip daddr 10.0.0.9 tcp dport 8080 accept
		ip6 saddr fd00::/16 tcp dport 15006 drop
	}
	chain pre {
		type nat hook prerouting priority -100; policy accept;
		ip saddr 172.20.0.0/14 tcp dport 1-1000 redirect to :15006
		ip6 saddr != fd00::/16 tcp dport 9000-9999 redirect to :15006
	}
}
`;

describe('explore over native nftables', () => {
  for (const from of ['local', 'remote'] as const) {
    it(`splits every selector and lookup form exactly (${from} probes, both families)`, () => {
      const options = { from, rules: FORMS, listen: [8080, 15001, 15006, '[::]:15001', '[::]:15006'], interfaces: { lo: ['127.0.0.1/8', '::1/128'], eth0: ['10.0.0.2/24', 'fd00::2/64'] } };
      const r = explore(options);
      for (const family of [4, 6] as const) {
        expectPartition(r, family);
        for (const p of cornerProbes(r, family, mulberry32(11), 400)) expectAgreement(r, options, p);
      }
      if (from === 'local') {
        const at = (uid: number, gid: number, dst: string): unknown => {
          const c = classOf(r, { uid, gid, dst });
          return c && expectedFor(c, { dst });
        };
        // The kube-proxy style verdict map, its jump and the DNAT behind it.
        expect(at(0, 0, '10.96.0.10:80')).toMatchObject({ outcome: 'remote', address: '10.0.0.5', port: 8080 });
        expect(at(0, 0, '10.96.0.10:443')).toMatchObject({ outcome: 'local', port: 15006 });
        expect(at(0, 0, '10.96.0.10:444')).toMatchObject({ outcome: 'remote', address: '10.96.0.10', port: 444 });
        // The uid range with the gid test, and the masked address with the port comparison.
        expect(at(1500, 6, '10.96.0.10:80')).toMatchObject({ outcome: 'remote', address: '10.96.0.10' });
        expect(at(1500, 5, '10.96.0.10:80')).toMatchObject({ address: '10.0.0.5' });
        expect(at(0, 0, '10.7.200.1:1023')).toMatchObject({ outcome: 'remote', address: '10.7.200.1', port: 1023 });
        // A redirect to a port range keeps a port inside it and maps others to its start.
        expect(at(0, 0, '10.40.0.1:15006')).toMatchObject({ outcome: 'local', port: 15006 });
        expect(at(0, 0, '10.40.0.1:80')).toMatchObject({ outcome: 'local', port: 15001 });
        // The port map of a DNAT, and the IPv6 comparisons.
        expect(at(0, 0, '10.30.0.1:443')).toMatchObject({ address: '10.0.0.8', port: 443 });
        expect(at(0, 0, '[fd00::9]:30001')).toMatchObject({ outcome: 'local', port: 15001 });
        expect(at(0, 0, '[fd00::9]:30000')).toMatchObject({ outcome: 'remote', port: 30000 });
      }
    });
  }

  it('numgen random: each draw is a branch with its probability (1/2 each for mod 2), as connect --enumerate gives', () => {
    const rules = 'table ip t {\n\tchain out { type nat hook output priority -100; policy accept;\n\t\ttcp dport 80 numgen random mod 2 vmap { 0 : jump a, 1 : accept }\n\t}\n\tchain a {\n\t\tmeta l4proto tcp redirect to :15001\n\t}\n}\n';
    const branches = new Netns({ rules, listen: [15001] }).connectAll({ from: 'local', uid: 0, dst: '10.1.1.1:80', sport: 41000 } as never, { trace: false });
    expect(branches.map((b) => [b.outcome, b.port, b.probability])).toEqual([['local', 15001, 0.5], ['remote', 80, 0.5]]);
    const r = explore({ rules, listen: [15001], from: 'local', family: 4 });
    const c = classOf(r, { uid: 0, gid: 0, dst: '10.1.1.1:80' })!;
    expect(c.outcome).toBe('random');
    expect(c.alternatives!.map((o) => [o.outcome, o.probability])).toEqual([['local', 0.5], ['remote', 0.5]]);
    expect(classOf(r, { uid: 0, gid: 0, dst: '10.1.1.1:81' })!.outcome).toBe('remote');
  });

  it('a map\'s catch-all element (*) answers what no other element matched, as connect does', () => {
    const rules = 'table ip t {\n\tchain out { type nat hook output priority -100; policy accept;\n\t\tmeta l4proto tcp tcp dport vmap { 80 : accept, 8000-8999 : return, * : jump a }\n\t}\n\tchain a {\n\t\tmeta l4proto tcp redirect to :15001\n\t}\n}\n';
    const r = explore({ rules, listen: [15001], from: 'local', family: 4 });
    expectPartition(r, 4);
    expect(classOf(r, { uid: 0, gid: 0, dst: '10.1.1.1:80' })!.outcome).toBe('remote');
    expect(classOf(r, { uid: 0, gid: 0, dst: '10.1.1.1:8500' })!.outcome).toBe('remote');
    expect(classOf(r, { uid: 0, gid: 0, dst: '10.1.1.1:443' })).toMatchObject({ outcome: 'local', port: 15001 });
    const rand = mulberry32(7);
    for (const probe of cornerProbes(r, 4, rand)) expectAgreement(r, { rules, listen: [15001] }, probe);
  });

  const refused = (rules: string, what: RegExp): void => {
    let caught: unknown;
    try {
      explore({ from: 'local', rules, listen: [15001] });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(NetfilterSimError);
    expect((caught as NetfilterSimError).code, (caught as Error).message).toBe('UNSUPPORTED');
    // FILE:LINE:COL of the rule, the rule as nft lists it, and what cannot be split.
    expect((caught as NetfilterSimError).message).toMatch(/^<input>:3:\d+: /);
    expect((caught as NetfilterSimError).message).toMatch(what);
  };
  const chain = (rule: string): string => `table ip t {\n\tchain out { type nat hook output priority -100; policy accept;\n\t\t${rule}\n\t}\n}\n`;

  it('refuses, naming the rule, what it cannot split exactly', () => {
    refused(chain('tcp dport 80 limit rate 10/second redirect to :15001'), /"limit".*rule 1 \(tcp dport 80 limit rate 10\/second/);
    refused(chain('meta l4proto tcp meta mark set numgen inc mod 2'), /"numgen inc"/);
    refused(chain('ip daddr & 255.0.255.0 == 10.0.1.0 meta l4proto tcp redirect to :15001'), /mask .* does not keep a prefix/);
    refused(chain('meta l4proto tcp dnat to 10.0.0.1-10.0.0.9'), /"dnat" to an address range/);
  });

  it('splits on uid, address, port sets and concatenations, and agrees with connect', () => {
    const options = { from: 'local' as const, rules: NFT, listen: [4140], family: 4 as const };
    const r = explore(options);
    expectPartition(r, 4);
    const redirected = r.classes.filter((c) => c.outcome === 'local' && c.port === 4140);
    expect(redirected.length).toBeGreaterThan(0);
    for (const p of cornerProbes(r, 4, mulberry32(7), 60)) expectAgreement(r, options, p);
  });
});

const refusals: string[] = [];

/** explore, or the typed refusal it is allowed to give (naming a rule); null when refused. */
function exploreOrRefuseNamed(options: ExploreOptions): ExploreResult | null {
  return exploreOrRefuse(options, (e) => {
    expect(e.message).toMatch(/rule \d+ \(|more than/);
    refusals.push(e.message);
  });
}

const LISTEN = [8080, 15001, 15006, '127.0.0.1:15053'];

/**
 * A generated text without what explore refuses by design (a `limit` bucket and a `numgen inc`
 * counter carry over from earlier packets; the refusal has its own test), or null when the
 * simulator does not load the text (the generator also writes texts nft rejects).
 */
function explorable(text: string): string | null {
  // The generator may continue a rule on the next line (`\` newline) anywhere between words.
  const out = text
    .replace(/limit[\s\\]+rate[\s\\]+(over[\s\\]+)?\d+\/\w+([\s\\]+burst[\s\\]+\d+[\s\\]+packets)?/g, 'counter')
    .replace(/numgen[\s\\]+inc/g, 'numgen random');
  try {
    new Netns({ rules: out });
  } catch {
    return null;
  }
  return out;
}

describe('explore over generated nft rule sets: classes partition the space and agree with connect', () => {
  let explored = 0;
  let runs = 0;
  test.prop([fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 60 })(
    'the nft generator\'s rule sets (families ip, ip6, inet; sets, maps, verdict maps, concatenations, NAT)',
    (seed, from) => {
      const rules = explorable(generateNftText(seed));
      if (rules === null) return;
      runs++;
      const options = { rules, listen: LISTEN, from };
      const r = exploreOrRefuseNamed(options);
      if (r === null) return;
      explored++;
      for (const family of [4, 6] as const) {
        expectPartition(r, family);
        for (const p of cornerProbes(r, family, mulberry32(seed), 8)) expectAgreement(r, options, p);
      }
    },
  );
  it('explored them all but for the typed refusals (none expected once limit and numgen inc are out)', () => {
    expect(refusals).toEqual([]);
    expect(explored).toBe(runs);
  });

  test.prop([fc.integer({ min: 1, max: 100_000 }), fc.boolean(), fc.constantFrom('local' as const, 'remote' as const)], { numRuns: 40 })(
    'the kernel suite\'s nft and mixed (iptables + nft) pods, with their own probes',
    (seed, mixed, from) => {
      const c = generateNftConnectCase(seed, mixed);
      const options = { ...c.sim, nft: c.nft, from };
      const r = exploreOrRefuseNamed(options);
      if (r !== null) expectGeneratedCase(r, options, c.probes, seed);
    },
  );
});

describe('explore over kube-proxy\'s nftables mode', () => {
  it('the service-ips verdict map (ip daddr . meta l4proto . th dport), endpoints drawn by numgen: partition, agreement, and the iptables mode\'s outcomes', () => {
    const services = kubeProxyServices(12, 3);
    const nft = { ...kubeProxyNode(undefined, { nft: kubeProxyNftRules(services) }), from: 'remote' as const, family: 4 as const };
    const r = explore(nft);
    expectPartition(r, 4, ['eth0', 'cbr0']);
    for (const p of cornerProbes(r, 4, mulberry32(5), 200)) expectAgreement(r, nft, p);
    // Every service's own address and port: the class agrees with connect, and a service with
    // several endpoints has one alternative per endpoint.
    const ipt = explore({ ...kubeProxyNode(kubeProxyRules(services)), from: 'remote', family: 4 });
    for (const p of kubeProxyProbes(services, 60, 9)) {
      const probe = { src: p.src as string, dst: p.dst, iface: 'cbr0' };
      expectAgreement(r, nft, probe);
      const a = classOf(r, probe)!;
      const b = classOf(ipt, probe)!;
      const view = (c: typeof a): unknown => (c.alternatives ?? [c]).map((o) => expectedFor(o, probe)).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
      expect(view(a), `${p.dst}`).toEqual(view(b));
    }
  });
});
