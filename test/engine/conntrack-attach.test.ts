// What a packet carries from raw: a CT template (later CT and NOTRACK rules leave it alone), and
// the RELATED mark the answer to an untracked packet gets (nf_conntrack_attach); and how policy
// rules match marks (fib_rule_match). Each is also a kernel-differential case
// (test/kernel/areas-found.differential.test.ts).
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';

const t = (name: string, ...lines: string[]): string => `*${name}\n${lines.join('\n')}\nCOMMIT\n`;

describe('CT templates', () => {
  it('a second CT rule is ignored: the packet keeps the first template and its zone', () => {
    const ns = new Netns({
      rules: t('raw', '-A OUTPUT -p tcp -j CT --ctevents new,destroy', '-A OUTPUT -o eth0 -j CT --zone 3', '-A PREROUTING -i eth0 -j CT --zone 3') + t('filter', '-A OUTPUT -p tcp -m conntrack --ctstate INVALID -j DROP'),
      listen: [8080],
    });
    // The SYN is tracked in zone 3; the SYN-ACK, in zone 0, finds nothing: INVALID, dropped.
    const r = ns.connect({ from: 'remote', src: '10.1.0.6', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(ns.conntrack().map((e) => e.zone)).toEqual([3]);
  });

  it('CT --notrack after a template is ignored', () => {
    const ns = new Netns({ rules: t('raw', '-A OUTPUT -p tcp -m tcp --dport 80 -j CT --ctevents new', '-A OUTPUT -p tcp -j CT --notrack') + t('filter', '-A OUTPUT -m conntrack --ctstate UNTRACKED -j DROP'), listen: [] });
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.7.7.7:80' }).outcome).toBe('remote');
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.7.7.7:443' }).outcome).toBe('dropped');
  });
});

describe('the answer to an untracked packet', () => {
  const notrackLo = t('raw', '-A OUTPUT -o lo -j CT --notrack', '-A PREROUTING -i lo -j CT --notrack');

  it('a RST is not untracked: an UNTRACKED REJECT misses it and the client is refused', () => {
    for (const [family, dst] of [[4, '127.0.0.1:8081'], [6, '[::1]:8081']] as const) {
      const rules = notrackLo + t('filter', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -j REJECT --reject-with tcp-reset');
      const ns = new Netns(family === 4 ? { rules, listen: [8081] } : { rules6: rules, listen: [8081] });
      const r = ns.connect({ from: 'local', uid: 1000, dst });
      expect(r.outcome, `IPv${family}`).toBe('refused');
    }
  });

  it('a RST or an ICMP error of no connection is INVALID', () => {
    const ns = new Netns({
      rules: notrackLo + t('filter', '-A OUTPUT -m conntrack --ctstate INVALID -j DROP', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -m tcp --dport 8081 -j REJECT --reject-with tcp-reset', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -m tcp --dport 8082 -j REJECT'),
      listen: [8081, 8082],
    });
    expect(ns.connect({ from: 'local', uid: 1000, dst: '127.0.0.1:8081' }).outcome).toBe('dropped');
    expect(ns.connect({ from: 'local', uid: 1000, dst: '127.0.0.1:8082' }).outcome).toBe('dropped');
  });
});

describe('fwmark rules', () => {
  const routes = [{ dst: '10.96.0.0/12', type: 'prohibit' as const, table: 101 }];

  it('match on (fwmark ^ mark) & mask: the rule mark is not masked when it is added', () => {
    // fwmark 0x4000/0xff matches every mark whose low byte is 0, mark 0 included.
    const ns = new Netns({ rules: '', ipRules: [{ fwmark: 0x4000, mask: 0xff, table: 101, priority: 1000 }], routes });
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.96.0.10:80' }).outcome).toBe('refused');
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.96.0.10:80', mark: 0x100 }).outcome).toBe('refused');
    // Every packet of the socket carries SO_MARK, its ACK too.
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.96.0.10:80', mark: 0x1 }).outcome).toBe('remote');
  });

  it('fwmark 0 without a mask matches every mark', () => {
    const ns = new Netns({ rules: '', ipRules: [{ fwmark: 0, table: 101, priority: 1000 }], routes });
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.96.0.10:80', mark: 0x7 }).outcome).toBe('refused');
  });
});
