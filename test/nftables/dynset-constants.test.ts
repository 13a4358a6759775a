// A set filled from the packet path with a constant among its key's fields (`add @s { ip saddr .
// 22 }`, nftables' tests/shell sets/0045concat_ipv4_service): read with the set's type at the
// constant's place, listed as nft 1.0.6 lists it (the listings below are what it printed here),
// refused where nft refuses it, and run by both evaluators.
import { describe, expect, it } from 'vitest';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { Netns } from '../../src/engine/index.js';
import { thrown } from '../thrown.js';

const table = (rule: string): string => `table inet t {\n\tset s {\n\t\ttype ipv4_addr . inet_service\n\t\tsize 65535\n\t\tflags dynamic,timeout\n\t}\n\n\tchain c {\n\t\t${rule}\n\t}\n}\n`;

describe('a constant in a dynamic set key', () => {
  it.each([
    ['update @s { ip saddr . 0x16 timeout 1m }', 'update @s { ip saddr . 22 timeout 1m }'],
    ['set add ip saddr . ssh @s', 'add @s { ip saddr . 22 }'],
    ['meta l4proto tcp add @s { 10.0.0.1 . tcp dport }', 'add @s { 10.0.0.1 . tcp dport }'],
    ['meta l4proto tcp add @s { ip saddr . 22 }', 'meta l4proto tcp add @s { ip saddr . 22 }'],
    // The key's fields hide their dependencies, as a map's key does.
    ['meta nfproto ipv4 meta l4proto tcp add @s { ip saddr . tcp dport }', 'add @s { ip saddr . tcp dport }'],
  ])('%s lists as %s', (written, listed) => {
    expect(formatNftRuleset(table(written))).toBe(table(listed));
  });

  it('a constant of the wrong type, or one field too many, is refused on its line as nft refuses it', () => {
    for (const [rule, message] of [['add @s { ip saddr . 10.0.0.1 }', /Could not resolve service/], ['add @s { ip saddr . 22 . 1 }', /Can't parse symbolic invalid expressions/]] as const) {
      const d = thrown(() => formatNftRuleset(table(rule))).diagnostics[0]!;
      expect(d.message, rule).toMatch(message);
      expect(d.span?.line, rule).toBe(9);
    }
  });

  for (const evaluator of ['lowered', 'reference'] as const) {
    it(`${evaluator}: the constant goes into the element, and a later lookup of that address and port finds it`, () => {
      const nft = `table ip t {
\tset s {
\t\ttype ipv4_addr . inet_service
\t\tflags dynamic,timeout
\t}

\tchain input {
\t\ttype filter hook input priority filter; policy accept;
\t\ttcp dport 80 add @s { ip saddr . 22 }
\t\tip saddr . tcp dport @s drop
\t}
}
`;
      const ns = new Netns({ nft, listen: [22, 80], evaluator });
      const to22 = (): string => ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:22' }, { trace: false }).outcome;
      expect(to22()).toBe('local');
      expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:80' }, { trace: false }).outcome).toBe('local');
      expect(to22()).toBe('dropped');
      // Another source was not added.
      expect(ns.connect({ from: 'remote', src: '10.1.0.6', dst: '10.0.0.2:22' }, { trace: false }).outcome).toBe('local');
    });
  }
});
