// TCP options by kind number, raw option bits and option stripping, listed as nft 1.0.6 lists
// them (nftables' tests/py any/tcpopt.t, as the kernel here listed them).
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset } from '../../src/nftables/index.js';

const chain = (rule: string): string => `table inet t {\n\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n\t\t${rule}\n\t}\n}\n`;
const listed = (rule: string): string => formatNftRuleset(chain(rule)).split('\n')[3]!.trim();

describe('tcp options by number, raw, and reset', () => {
  it('list as nft lists them', () => {
    expect(listed('tcp option 255 missing')).toBe('tcp option 255 missing');
    expect(listed('tcp option 6 exists')).toBe('tcp option 6 exists');
    expect(listed('tcp option 2 exists')).toBe('tcp option maxseg exists');
    expect(listed('tcp option @255,8,8 255')).toBe('tcp option @255,8,8 255');
    expect(listed('reset tcp option mptcp')).toBe('reset tcp option mptcp');
    expect(listed('reset tcp option 2')).toBe('reset tcp option maxseg');
    expect(listed('reset tcp option 123')).toBe('reset tcp option 123');
    // nft adds no protocol dependency to option stripping, nor minds another protocol's match.
    expect(listed('udp dport 53 reset tcp option mptcp')).toBe('udp dport 53 reset tcp option mptcp');
  });

  it('refuse what nft refuses', () => {
    for (const bad of ['tcp option 256 exists', 'tcp option @255,8,8 256', 'reset tcp option meh', 'reset tcp option 256']) {
      expect(() => formatNftRuleset(chain(bad)), bad).toThrow(NetfilterSimError);
    }
  });

  it('option stripping changes nothing a connection depends on', () => {
    const ns = new Netns({ nft: [chain('tcp dport 8080 reset tcp option sack-perm')], listen: [8080] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }, { trace: false }).outcome).toBe('local');
  });
});
