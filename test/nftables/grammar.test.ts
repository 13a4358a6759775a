/**
 * The nft 1.0.6 grammar as people write it, case by case. Every listing in
 * test/fixtures/nft-listings was printed by nft 1.0.6 after `nft -f` of the file beside it (the
 * kernel differential test/kernel/nft-listings.differential.test.ts checks them live); every
 * refusal below is what nft 1.0.6 refused, on the line it named.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { Netns } from '../../src/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset, nftLoadErrors, parseNftRulesetOrThrow } from '../../src/nftables/index.js';

const LISTINGS = join(import.meta.dirname, '..', 'fixtures', 'nft-listings');
const listings = readdirSync(LISTINGS).filter((f) => f.endsWith('.nft')).map((f) => f.slice(0, -4)).sort();

describe('files nft 1.0.6 loads list as it lists them', () => {
  it('has the cases', () => {
    expect(listings).toEqual(expect.arrayContaining([
      'set-counter', 'meta-protocol', 'ct-helper', 'define-in-table', 'nat-without-to', 'tcp-option-maxseg', 'nat-address-and-port-map',
      'service-names', 'bridge', 'integers-and-ranges', 'fib-type-at-postrouting', 'objects', 'typeof-and-dynamic-sets', 'netdev-and-arp',
    ]));
  });
  it.for(listings)('%s', (name) => {
    const text = readFileSync(join(LISTINGS, `${name}.nft`), 'utf8');
    expect(formatNftRuleset(text)).toBe(readFileSync(join(LISTINGS, `${name}.list`), 'utf8'));
  });
});

function refusal(text: string): { line: number | undefined; message: string } {
  try {
    formatNftRuleset(text);
  } catch (e) {
    if (e instanceof NetfilterSimError) return { line: e.span?.line, message: e.diagnostics[0]!.message };
    throw e;
  }
  throw new Error('accepted');
}

describe('what nft 1.0.6 refuses, on its line', () => {
  it('keywords are not names, and names are not quoted', () => {
    expect(refusal('table inet t {\n\tchain fwd {\n\t}\n}\n')).toMatchObject({ line: 2, message: 'syntax error, unexpected fwd, expecting string' });
    expect(refusal('table inet t {\n\tchain log {\n\t}\n}\n').line).toBe(2);
    expect(refusal('add table inet t\nadd chain inet t counter\n')).toMatchObject({ line: 2, message: 'syntax error, unexpected counter, expecting string' });
    expect(refusal('table inet t {\n\tchain c {\n\t}\n\tchain "d" {\n\t}\n}\n')).toMatchObject({ line: 4, message: 'syntax error, unexpected quoted string, expecting string' });
    expect(refusal('table inet t {\n\tchain c {\n\t\tjump meta\n\t}\n}\n').line).toBe(3);
    // A word that is a keyword only inside an expression is a fine name.
    expect(nftLoadErrors('add table ip t\nadd chain ip t state\n').diagnostics).toEqual([]);
  });
  it('a header whose protocol conflicts with one the rule established; explicit protocol matches never conflict', () => {
    const rule = (family: string, r: string): string => `table ${family} t {\n\tchain c {\n\t\t${r}\n\t}\n}\n`;
    // Each as nft 1.0.6 refused it, on line 3.
    expect(refusal(rule('ip', 'meta l4proto udp meta l4proto tcp tcp dport 1'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: udp vs. tcp' });
    expect(refusal(rule('ip', 'meta l4proto udp meta l4proto tcp udp dport 1'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: tcp vs. udp' });
    expect(refusal(rule('ip', 'tcp dport 1 meta l4proto udp udp dport 1'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: tcp vs. udp' });
    expect(refusal(rule('ip', 'meta l4proto { tcp, udp } meta l4proto tcp tcp dport 1'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: udp vs. tcp' });
    expect(refusal(rule('inet', 'meta nfproto ipv4 meta nfproto ipv6 ip saddr 1.1.1.1'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: ip6 vs. ip' });
    expect(refusal(rule('netdev', 'meta protocol ip vlan id 4'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: ether vs. vlan' });
    expect(refusal(rule('bridge', 'ip6 saddr ::1 vlan pcp 1'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: ether vs. vlan' });
    expect(refusal(rule('bridge', 'vlan type ip arp operation reply'))).toMatchObject({ line: 3, message: 'conflicting protocols specified: ip vs. arp' });
    // A ct port has no type before a transport protocol is fixed.
    expect(refusal(rule('ip', 'ct original proto-dst 22')).line).toBe(3);
    expect(refusal(rule('ip', 'meta mark set ct original proto-dst')).line).toBe(3);
    expect(nftLoadErrors(rule('ip', 'ct original protocol tcp ct original proto-dst 22')).diagnostics).toEqual([]);
    expect(nftLoadErrors(rule('ip', 'tcp dport 1 ct original proto-dst 22')).diagnostics).toEqual([]);
    // And what it loaded (listed in test/fixtures/nft-listings/protocol-context).
    for (const [family, r] of [
      ['ip', 'meta l4proto icmp ip protocol tcp'], ['ip', 'meta l4proto udp meta l4proto tcp'], ['ip6', 'ip6 nexthdr udp ip6 nexthdr tcp'],
      ['inet', 'ip saddr 1.1.1.1 meta nfproto ipv6 ip6 saddr ::1'], ['netdev', 'meta protocol ip meta protocol ip6 ip6 saddr ::1'],
      ['bridge', 'vlan type ip vlan id 3'], ['bridge', 'ip saddr 1.1.1.1 ether type vlan vlan id 2'],
    ] as const) expect(nftLoadErrors(rule(family, r)).diagnostics, r).toEqual([]);
  });
  it('a block needs a separator after its closing brace', () => {
    expect(refusal('table ip t { chain saddr { } }\n').line).toBe(1);
  });
  it('statements after a terminal statement', () => {
    expect(refusal('table inet t {\n\tchain c {\n\t\ttype filter hook input priority 0; policy drop;\n\t\ttcp dport 22 accept drop\n\t}\n}\n'))
      .toMatchObject({ line: 4, message: 'Statement after terminal statement has no effect' });
  });
  it('define: no redefinition in an inner scope, scopes end with their block, redefine and undefine', () => {
    expect(refusal('define a = 1\ntable inet t {\n\tdefine a = 2\n\tchain c {\n\t}\n}\n')).toMatchObject({ line: 3, message: "redefinition of symbol 'a'" });
    expect(refusal('table inet t {\n\tchain c {\n\t\tdefine x = 80\n\t\ttcp dport $x accept\n\t}\n\tchain d {\n\t\ttcp dport $x accept\n\t}\n}\n'))
      .toMatchObject({ line: 7, message: "unknown identifier 'x'" });
    expect(refusal('define a = 1\nundefine a\nundefine a\n')).toMatchObject({ line: 3, message: "undefined symbol 'a'" });
  });
  it('fib by the kernel\'s hook rules: an iif lookup is not at output', () => {
    expect(refusal('table ip t {\n\tchain c {\n\t\ttype filter hook output priority 0; policy accept;\n\t\tfib daddr . iif type local accept\n\t}\n}\n').line).toBe(4);
    expect(nftLoadErrors('table ip t {\n\tchain c {\n\t\ttype filter hook postrouting priority 0; policy accept;\n\t\tfib daddr type local accept\n\t}\n}\n').diagnostics).toEqual([]);
  });
  it('a 30-layer graph of chains: refused at the first rule that makes a chain 16 jumps deep, and answered at once', () => {
    const W = 4;
    let t = 'table ip t {\n\tchain base {\n\t\ttype filter hook input priority 0; policy accept;\n' + Array.from({ length: W }, (_, j) => `\t\tjump c0_${j}\n`).join('') + '\t}\n';
    for (let l = 0; l < 30; l++) {
      for (let j = 0; j < W; j++) t += `\tchain c${l}_${j} {\n${l + 1 < 30 ? Array.from({ length: W }, (_, k) => `\t\tjump c${l + 1}_${k}\n`).join('') : '\t\taccept\n'}\t}\n`;
    }
    t += '}\n';
    // nft 1.0.6 on this file: "layers.nft:346:3-12: Error: Could not process rule: Too many links".
    expect(nftLoadErrors(t).diagnostics.map((d) => d.span?.line)).toEqual([346]);
  });
  it('a wildcard is no map value; byte limits that overflow the kernel\'s bucket; empty strings', () => {
    expect(refusal('table inet t {\n\tmap m { type ipv4_addr : ifname; elements = { 1.1.1.1 : "eth*" } }\n}\n').message).toBe('Value must be a singleton');
    expect(refusal('add table ip t\nadd chain ip t c\nadd rule ip t c limit rate 1023000 mbytes/second\n').line).toBe(3);
    expect(refusal('add table ip t\nadd chain ip t c\nadd rule ip t c ct helper ""\n')).toMatchObject({ line: 3, message: 'Empty string is not allowed' });
  });
});

describe('interfaces of the host', () => {
  const text = 'table inet t {\n\tchain c {\n\t\tiif eth0 accept\n\t\toif { lo, eth0 } accept\n\t\tiif 2 accept\n\t\tiif 7 accept\n\t}\n\n\tchain in {\n\t\ttype filter hook ingress device eth0 priority 0; policy accept;\n\t}\n}\n';
  // nft 1.0.6 in a namespace where `ip link add eth0 type veth peer name eth1` made eth1 (2) and eth0 (3).
  const listed = 'table inet t {\n\tchain c {\n\t\tiif "eth0" accept\n\t\toif { "lo", "eth0" } accept\n\t\tiif "eth1" accept\n\t\tiif 7 accept\n\t}\n\n\tchain in {\n\t\ttype filter hook ingress device "eth0" priority filter; policy accept;\n\t}\n}\n';
  it('resolve iif/oif names and indexes, and devices, as nft resolves them', () => {
    expect(formatNftRuleset(text, { interfaces: ['eth1', 'eth0'] })).toBe(listed);
    expect(nftLoadErrors(text).diagnostics[0]).toMatchObject({ message: 'Interface does not exist', span: { line: 3 } });
  });
  it('fmt --iface tells the CLI what the host has', async () => {
    const io = memoryIO({ 'r.nft': text });
    expect(await run(['fmt', '--iface', 'eth1', '--iface', 'eth0', 'r.nft'], io)).toBe(0);
    expect(io.out).toBe(listed);
    const bad = memoryIO({ 'r.nft': text });
    expect(await run(['check', 'r.nft'], bad)).toBe(1);
    expect(bad.err).toContain('r.nft:3:');
  });
  it('connect resolves iif against the namespace\'s interfaces', () => {
    const nft = 'table inet f {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\t\tct state established,related accept\n\t\tiif eth0 tcp dport 22 accept\n\t\tiif lo accept\n\t}\n}\n';
    const ns = new Netns({ nft, listen: [22, 80] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:22' }, { trace: false }).outcome).toBe('local');
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:80' }, { trace: false }).outcome).toBe('dropped');
    expect(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:80' }, { trace: false }).outcome).toBe('local');
  });
});

describe('include', () => {
  it('the library reads no files: include is refused with the way out', () => {
    expect(refusal('include "rules.nft"\n')).toMatchObject({ line: 1 });
    expect(refusal('include "rules.nft"\n').message).toContain('-I DIR');
  });
  it('with a reader (the CLI\'s -I DIR), the file is read in place, in the including scope', () => {
    const files: Record<string, string> = { 'defs.nft': 'define ssh = 22\n', 'filter.nft': 'table inet f {\n\tchain c {\n\t\ttcp dport $ssh accept\n\t}\n}\n' };
    const text = 'include "defs.nft"\ninclude "filter.nft"\n';
    expect(formatNftRuleset(text, { include: (p) => files[p] })).toBe('table inet f {\n\tchain c {\n\t\ttcp dport 22 accept\n\t}\n}\n');
    expect(refusal('include "missing.nft"\n').line).toBe(1);
  });
});

describe('flag tests run as the kernel runs them', () => {
  it('value / mask keeps its operator in the engine', () => {
    const nft = 'table inet f {\n\tchain output {\n\t\ttype filter hook output priority filter; policy accept;\n\t\ttcp dport 9 ct state new tcp flags != syn / syn,ack drop\n\t\ttcp dport 10 ct state new tcp flags syn / syn,ack drop\n\t}\n}\n';
    for (const evaluator of ['lowered', 'reference'] as const) {
      const ns = new Netns({ nft, evaluator });
      // The SYN matches syn / syn,ack: port 10 is dropped, port 9 (the != rule) is not.
      expect(ns.connect({ from: 'local', uid: 0, dst: '10.9.0.1:9' }, { trace: false }).outcome).toBe('remote');
      expect(ns.connect({ from: 'local', uid: 0, dst: '10.9.0.1:10' }, { trace: false }).outcome).toBe('dropped');
    }
  });
  it('parses into the bitwise form the printer lists nft\'s way', () => {
    const rs = parseNftRulesetOrThrow('table inet t {\n\tchain c {\n\t\tct status ! dnat accept\n\t}\n}\n');
    expect(rs.tables[0]!.chains[0]!.rules[0]!.statements[0]).toMatchObject({ kind: 'match', op: '==', left: { kind: 'bitwise', mask: 32n }, right: { value: 0n } });
  });
});

describe('statements the engine does not evaluate are refused by name, never guessed', () => {
  it('tcp options as values, synproxy', () => {
    const ns = new Netns({ nft: 'table inet t {\n\tchain o {\n\t\ttype filter hook output priority 0; policy accept;\n\t\ttcp option maxseg size 1460 accept\n\t}\n}\n' });
    expect(() => ns.connect({ from: 'local', uid: 0, dst: '10.9.0.1:80' })).toThrow(/tcp option maxseg is not read by the engine/);
  });
  it('netdev chains on a device of the namespace', () => {
    expect(() => new Netns({ nft: 'table netdev n {\n\tchain i {\n\t\ttype filter hook ingress device "lo" priority 0; policy accept;\n\t}\n}\n' })).toThrow(/device hooks \(ingress, egress\) are not simulated/);
  });
});
