// `meta time|day|hour` and `sctp chunk`: read and listed as nft 1.0.6 lists them (the listings
// below are what `nft list ruleset` printed for these rules on this machine, whose time zone is
// UTC), and evaluated on the namespace's clock.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset } from '../../src/nftables/index.js';

const chain = (rule: string): string => `table inet t {\n\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n\t\t${rule}\n\t}\n}\n`;
const listed = (rule: string): string => formatNftRuleset(chain(rule)).split('\n')[3]!.trim();

describe('meta time, day and hour', () => {
  it('list as nft lists them', () => {
    expect(listed('meta time "1970-05-23 21:07:14" drop')).toBe('meta time "1970-05-23 21:07:14" drop');
    expect(listed('meta time 12341234 drop')).toBe('meta time "1970-05-23 20:07:14" drop');
    expect(listed('time < "2022-07-01 11:00:00" accept')).toBe('meta time < "2022-07-01 11:00:00" accept');
    expect(listed('meta day 6 drop')).toBe('meta day "Saturday" drop');
    expect(listed('meta hour "17:00:00" drop')).toBe('meta hour "17:00" drop');
    expect(listed('meta hour "17:00:01" drop')).toBe('meta hour "17:00:01" drop');
  });

  it('refuses what nft refuses, on the rule', () => {
    for (const bad of ['meta day "Satturday" drop', 'meta day 7 drop', 'meta hour "24:00" drop', 'meta time "meh"']) {
      let err: unknown;
      try {
        formatNftRuleset(chain(bad));
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(NetfilterSimError);
      expect((err as NetfilterSimError).span?.line, bad).toBe(4);
    }
  });

  for (const evaluator of ['lowered', 'reference'] as const) {
    it(`decide on the namespace's clock (${evaluator})`, () => {
      const nft = 'table inet t {\n\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n'
        + '\t\ttcp dport 8080 meta day { "Saturday", "Sunday" } drop\n'
        + '\t\ttcp dport 8080 meta hour < "09:00" drop\n'
        + '\t\ttcp dport 8080 meta time > "2030-01-01 00:00:00" drop\n\t}\n}\n';
      // 2024-01-01 was a Monday.
      const ns = new Netns({ nft: [nft], listen: [8080], clock: Date.UTC(2024, 0, 1, 8, 0, 0) / 1000, evaluator });
      const probe = (): string => ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }, { trace: false }).outcome;
      expect(probe()).toBe('dropped'); // 08:00
      ns.advance(3600);
      expect(probe()).toBe('local'); // 09:00 Monday
      ns.advance(5 * 86400);
      expect(probe()).toBe('dropped'); // Saturday
      ns.advance(2 * 86400);
      expect(probe()).toBe('local'); // Monday again
      ns.advance(6 * 365 * 86400);
      expect(probe()).toBe('dropped'); // after 2030
    });
  }
});

describe('sctp chunk', () => {
  it('lists as written', () => {
    for (const r of ['sctp chunk data exists', 'sctp chunk init-ack exists', 'sctp chunk init flags 23', 'sctp chunk data stream 1337', 'sctp chunk asconf seqno 12345', 'sctp chunk forward-tsn new-cum-tsn 31337']) expect(listed(r)).toBe(r);
  });

  it('refuses an unknown chunk and a field the chunk has not', () => {
    expect(() => formatNftRuleset(chain('sctp chunk nosuch exists'))).toThrow(NetfilterSimError);
    expect(() => formatNftRuleset(chain('sctp chunk abort seqno 1'))).toThrow(NetfilterSimError);
  });

  it('never matches a TCP connection', () => {
    const nft = chain('sctp chunk init exists drop').replace('policy accept;', 'policy accept;\n\t\ttcp dport 8080 sctp chunk data exists drop');
    expect(() => formatNftRuleset(nft)).toThrow(/conflicting protocols/);
    const ns = new Netns({ nft: [chain('sctp chunk init exists drop')], listen: [8080] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }, { trace: false }).outcome).toBe('local');
  });
});
