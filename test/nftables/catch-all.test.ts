// Catch-all set and map elements (`*`): listed last, as the kernel keeps them apart, and matching
// what no other element matches. The listings are what `nft list ruleset` printed for
// nftables' own tests/shell dumps sets/0063set_catchall_0 and maps/0064map_catchall_0.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { formatNftRuleset } from '../../src/nftables/index.js';

describe('catch-all elements', () => {
  it('list after the other elements', () => {
    const text = 'table ip x {\n\tmap z {\n\t\ttype ipv4_addr : ipv4_addr\n\t\tflags interval\n\t\telements = { * : 192.168.0.3, 10.141.0.0/24 : 192.168.0.2 }\n\t}\n\n'
      + '\tchain y {\n\t\tip saddr vmap { *: accept, 1.1.1.1 : drop }\n\t}\n}\n';
    expect(formatNftRuleset(text)).toBe('table ip x {\n\tmap z {\n\t\ttype ipv4_addr : ipv4_addr\n\t\tflags interval\n\t\telements = { 10.141.0.0/24 : 192.168.0.2, * : 192.168.0.3 }\n\t}\n\n'
      + '\tchain y {\n\t\tip saddr vmap { 1.1.1.1 : drop, * : accept }\n\t}\n}\n');
  });

  for (const evaluator of ['lowered', 'reference'] as const) {
    it(`decide what no other element matches (${evaluator})`, () => {
      const nft = 'table inet t {\n\tset allowed {\n\t\ttype ipv4_addr\n\t\telements = { 10.1.0.5, * }\n\t}\n\n'
        + '\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n'
        + '\t\ttcp dport 8080 ip saddr vmap { 10.1.0.6 : drop, * : accept }\n'
        + '\t\ttcp dport 9090 meta mark set ip saddr map { 10.1.0.5 : 0x00000001, * : 0x00000002 }\n'
        + '\t\ttcp dport 9090 meta mark 0x00000002 accept\n'
        + '\t\ttcp dport 7070 ip saddr @allowed accept\n\t}\n}\n';
      const ns = new Netns({ nft: [nft], listen: [7070, 8080, 9090], evaluator });
      const from = (src: string, port: number): string => ns.connect({ from: 'remote', src, dst: `10.0.0.2:${port}` }, { trace: false }).outcome;
      expect(from('10.1.0.6', 8080)).toBe('dropped');
      expect(from('10.1.0.7', 8080)).toBe('local');
      expect(from('10.1.0.5', 9090)).toBe('dropped');
      expect(from('10.1.0.7', 9090)).toBe('local');
      expect(from('10.1.0.9', 7070)).toBe('local');
    });
  }
});
