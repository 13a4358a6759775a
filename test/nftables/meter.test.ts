// `meter NAME [size N] { KEY [timeout T] STATEMENT }`: nft 1.0.6 keeps a dynamic set of that
// name that `nft list ruleset` does not list, and lists the rule with the set's size (65535 when
// not given). The listing below is what the kernel here printed for the same text.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset, parseNftRuleset } from '../../src/nftables/index.js';

const text = 'table ip t {\n\tchain c {\n\t\ttype filter hook input priority 0;\n\t\ttcp dport 80 meter f { ip saddr limit rate 10/second }\n'
  + '\t\tmeter g size 10 { ip saddr . tcp dport timeout 1m counter } accept\n\t}\n}\n';

describe('meters', () => {
  it('list as nft 1.0.6 lists them, without their sets', () => {
    expect(formatNftRuleset(text)).toBe('table ip t {\n\tchain c {\n\t\ttype filter hook input priority filter; policy accept;\n'
      + '\t\ttcp dport 80 meter f size 65535 { ip saddr limit rate 10/second }\n'
      + '\t\tmeter g size 10 { ip saddr . tcp dport timeout 1m counter } accept\n\t}\n}\n');
  });

  it('keep a dynamic set per meter in the model', () => {
    const r = parseNftRuleset(text);
    expect(r.diagnostics).toEqual([]);
    const sets = r.ruleset.tables[0]!.sets;
    expect(sets.map((s) => [s.name, s.key, s.flags, s.size, s.meter])).toEqual([
      ['f', ['ipv4_addr'], ['dynamic'], 65535, true],
      ['g', ['ipv4_addr', 'inet_service'], ['dynamic', 'timeout'], 10, true],
    ]);
  });

  it('refuse a meter named as a set the table has', () => {
    expect(() => formatNftRuleset('table ip t {\n\tset f {\n\t\ttype ipv4_addr\n\t}\n\n\tchain c {\n\t\tmeter f { ip saddr counter }\n\t}\n}\n')).toThrow(NetfilterSimError);
  });

  it('stop connect with a named reason when a packet reaches one', () => {
    const ns = new Netns({ nft: [text], listen: [80] });
    expect(() => ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:80' }, { trace: false })).toThrow(/meter f/);
  });
});
