/**
 * Listings nft 1.0.6 gave for scripts of nftables' own tests (test/vectors/nftables-upstream,
 * GPL-2.0 test data): each expected line below is what `nft -f` then `nft list ruleset` printed
 * for that script on the kernel here (test/kernel/nft-upstream.differential.test.ts compares all
 * of them; these are the cases the printer was fixed for, kept so that they run without a kernel).
 * A `tests/py` case is named `FILE:LINE FAMILY TABLE CHAIN`; its rule is the last one listed in
 * that chain.
 */
import { describe, expect, it } from 'vitest';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { upstreamPyCases, upstreamShellDumps } from '../kernel/nft-upstream.js';

const py = new Map(upstreamPyCases().map((c) => [c.id, c]));
const shell = new Map(upstreamShellDumps().map((d) => [d.id, d.text]));

/** The last rule `formatNftRuleset` lists in the case's chain. */
function listedRule(id: string): string {
  const c = py.get(id);
  if (c === undefined) throw new Error(`no tests/py case ${id}`);
  const lines = formatNftRuleset(c.text).split('\n');
  const start = lines.indexOf(`\tchain ${c.chain} {`);
  expect(start, `chain ${c.chain} listed`).toBeGreaterThanOrEqual(0);
  const body: string[] = [];
  for (let i = start + 1; i < lines.length && lines[i] !== '\t}'; i++) {
    if (lines[i]!.startsWith('\t\t') && !lines[i]!.startsWith('\t\ttype ')) body.push(lines[i]!.slice(2));
  }
  return body[body.length - 1] ?? '';
}

function expectRules(cases: Readonly<Record<string, string>>): void {
  for (const [id, listing] of Object.entries(cases)) expect(listedRule(id), id).toBe(listing);
}

describe("nft 1.0.6's listing of flag sets", () => {
  it('splits a flag value of a set element into flags joined by |, sorted by the lowest flag, later ones first', () => {
    expectRules({
      'inet/tcp.t:87 ip test-ip4 input': 'tcp flags { syn | ack, syn }',
      'inet/tcp.t:87 inet test-inet input': 'tcp flags { syn | ack, syn }',
      'inet/tcp.t:88 ip6 test-ip6 input': 'tcp flags & (fin | syn | rst | psh | ack | urg) == { fin | psh | ack, fin, psh | ack, ack }',
    });
  });

  it('lists a named set of tcp flags in the same order, folded as nft folds it', () => {
    const text = shell.get('testcases/sets/dumps/0055tcpflags_0.nft')!;
    expect(formatNftRuleset(text)).toBe([
      'table ip test {',
      '\tset tcp_good_flags {',
      '\t\ttype tcp_flag',
      '\t\tflags constant',
      '\t\telements = { fin | ack, fin | ack | urg, fin | psh | ack, fin | psh | ack | urg, syn,',
      '\t\t\t     syn | ack, syn | ack | urg, syn | psh | ack, syn | psh | ack | urg, rst,',
      '\t\t\t     rst | ack, rst | ack | urg, rst | psh | ack, rst | psh | ack | urg, psh | ack,',
      '\t\t\t     psh | ack | urg, ack, ack | urg }',
      '\t}',
      '}',
      '',
    ].join('\n'));
  });

  it('keeps a plain flag comparison as a comma list', () => {
    expectRules({
      'inet/tcp.t:75 ip test-ip4 input': 'tcp flags syn,ack',
      'inet/tcp.t:83 ip test-ip4 input': 'tcp flags syn,ack / fin,syn,rst,ack',
    });
  });
});

describe("nft 1.0.6's listing of raw payloads", () => {
  it('reads two bytes at the start of a transport header back as its ports, named by the protocol where it is known', () => {
    expectRules({
      'any/rawpayload.t:8 inet test-inet input': 'meta l4proto { tcp, udp, sctp } th dport { 22, 23, 80 }',
      'any/rawpayload.t:9 netdev test-netdev ingress': 'tcp dport { 22, 23, 80 }',
      'any/rawpayload.t:9 inet test-inet input': 'tcp dport { 22, 23, 80 }',
    });
  });

  it('lists a window that is not whole bytes as the bytes around it and a mask', () => {
    expectRules({
      'any/rawpayload.t:18 inet test-inet input': '@ll,0,8 & 0x80 == 0x80',
      'any/rawpayload.t:18 netdev test-netdev egress': '@ll,0,8 & 0x80 == 0x80',
      'any/rawpayload.t:19 inet test-inet input': '@ll,0,8 & 0x80 == 0x80',
    });
  });

  it('reads a window at an arp field back as that field, in a match and as the target of a write', () => {
    const listing = 'iifname "invalid" arp htype 1 arp ptype ip arp hlen 6 arp plen 4 arp daddr ip 192.168.143.16 arp daddr ether set 11:22:33:44:55:66';
    expectRules({ 'arp/arp.t:60 arp test-arp input': listing, 'arp/arp.t:60 netdev test-netdev ingress': listing });
  });

  it('keeps a window where the network protocol is not known', () => {
    expectRules({ 'any/rawpayload.t:10 inet test-inet input': '@nh,8,8 0xff' });
  });
});

describe("nft 1.0.6's merged header matches", () => {
  it('merges adjacent arp fields into one load, listed in header order', () => {
    expectRules({
      'arp/arp.t:58 arp test-arp input': 'arp saddr ip 192.168.1.1 arp daddr ether fe:ed:00:c0:ff:ee',
      'arp/arp.t:58 netdev test-netdev ingress': 'arp saddr ip 192.168.1.1 arp daddr ether fe:ed:00:c0:ff:ee',
    });
  });

  it("merges a vlan match's ether type dependency with ether saddr, at the dependency's place", () => {
    expectRules({
      'bridge/vlan.t:52 bridge test-bridge input': 'ether saddr 00:01:02:03:04:06 vlan id 2',
      'bridge/vlan.t:52 netdev test-netdev egress': 'ether saddr 00:01:02:03:04:06 vlan id 2',
    });
  });

  it('merges the ether type dependency of an ip match where the link layer is Ethernet (inet, netdev), not in a bridge table', () => {
    expectRules({
      'inet/ether-ip.t:8 inet test-inet input': 'tcp dport 22 ether saddr 00:0f:54:0c:11:04 ip daddr 1.2.3.4 accept',
      'inet/ether-ip.t:8 netdev test-netdev ingress': 'tcp dport 22 ether saddr 00:0f:54:0c:11:04 ip daddr 1.2.3.4 accept',
      'bridge/ether.t:6 bridge test-bridge input': 'tcp dport 22 ip daddr 1.2.3.4 ether saddr 00:0f:54:0c:11:04',
    });
  });

  it('keeps an explicit ether type 8021q that the vlan type dependency it adds does not replace', () => {
    expectRules({ 'bridge/vlan.t:37 bridge test-bridge input': 'ether type 8021q ip protocol icmp accept' });
  });
});

describe('tests/shell listings nft 1.0.6 lists back unchanged', () => {
  // Each of these listed, through nft and the kernel here, exactly as saved.
  it.each([
    // Concatenations with intervals, listed in the order they were added (the kernel's pipapo set).
    'testcases/maps/dumps/anon_objmap_concat.nft',
    'testcases/sets/dumps/sets_with_ifnames.nft',
    'testcases/optimizations/dumps/merge_vmap_raw.nft',
    // A dormant table: an empty line after its flags.
    'testcases/transactions/dumps/0002table_0.nft',
  ])('%s', (id) => {
    const text = shell.get(id);
    expect(text, id).toBeDefined();
    expect(formatNftRuleset(text!)).toBe(text);
  });
});
