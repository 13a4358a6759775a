/**
 * The option objects the target modules hand to the engine (`target-options.ts` shapes), and
 * the model's JSON law: every parsed option value survives `JSON.stringify`/`parse` unchanged.
 */
import { describe, expect, it } from 'vitest';
import { TARGETS } from '../../src/iptables/extensions/registry.js';
import { parseAddress } from '../../src/model/address.js';
import { parseRuleArgs, tokenize } from './harness.js';

function target(line: string, family: 4 | 6 = 4, table = 'nat', chain = 'OUTPUT'): unknown {
  const r = parseRuleArgs(tokenize(line), { family, table, chain });
  if (!r.target || 'verdict' in r.target) throw new Error('no extension target');
  return r.target.options;
}
const v4 = (s: string): number[] => parseAddress(s, 4)!;

describe('target options for the engine', () => {
  it('REDIRECT', () => {
    expect(target('-p tcp -j REDIRECT --to-port 4140')).toEqual({ toPorts: { min: 4140, max: 4140 }, random: false });
    expect(target('-j REDIRECT --random')).toEqual({ random: true });
  });
  it('DNAT / SNAT / MASQUERADE', () => {
    expect(target('-p tcp -j DNAT --to-destination 10.180.0.1:80', 4, 'nat', 'PREROUTING')).toEqual({
      to: { addrMin: v4('10.180.0.1'), addrMax: v4('10.180.0.1'), ports: { min: 80, max: 80 } }, random: false, persistent: false,
    });
    expect(target('-p tcp -j DNAT --to-destination :8080-8090/100', 4, 'nat', 'PREROUTING')).toEqual({
      to: { ports: { min: 8080, max: 8090 }, baseport: 100 }, random: false, persistent: false,
    });
    expect(target('-j SNAT --to-source 192.0.2.1-192.0.2.3 --random-fully', 4, 'nat', 'POSTROUTING')).toEqual({
      to: { addrMin: v4('192.0.2.1'), addrMax: v4('192.0.2.3') }, random: false, randomFully: true, persistent: false,
    });
    expect(target('-j MASQUERADE', 4, 'nat', 'POSTROUTING')).toEqual({ random: false, randomFully: false });
  });
  it('MARK and CONNMARK store value/mask as the kernel does', () => {
    expect(target('-j MARK --set-mark 1337')).toEqual({ value: 0x539, mask: 0xffffffff });
    expect(target('-j MARK --or-mark 0x4000')).toEqual({ value: 0x4000, mask: 0x4000 });
    expect(target('-j MARK --and-mark 0xff')).toEqual({ value: 0, mask: 0xffffff00 });
    expect(target('-j CONNMARK --save-mark')).toEqual({ mode: 'save', nfmask: 0xffffffff, ctmask: 0xffffffff });
    expect(target('-j CONNMARK --restore-mark --nfmask 0xff')).toEqual({ mode: 'restore', nfmask: 0xff, ctmask: 0xffffffff });
    expect(target('-j CONNMARK --set-xmark 0x111/0xfff')).toEqual({ mode: 'set', value: 0x111, mask: 0xfff });
  });
  it('TPROXY, CT, REJECT, LOG', () => {
    expect(target('-p tcp -j TPROXY --tproxy-mark 0x539/0xffffffff --on-port 15006', 4, 'mangle', 'PREROUTING')).toEqual({
      onPort: 15006, markValue: 0x539, markMask: 0xffffffff,
    });
    expect(target('-p tcp -j TPROXY --on-port 1 --on-ip ::1', 6, 'mangle', 'PREROUTING')).toEqual({
      onPort: 1, onIp: [0, 0, 0, 1], markValue: 0, markMask: 0,
    });
    expect(target('-j CT --zone 2', 4, 'raw')).toEqual({ notrack: false, zone: 2 });
    expect(target('-j CT --notrack --zone-reply 7', 4, 'raw')).toEqual({ notrack: true, zone: 7, zoneDirection: 'reply' });
    expect(target('-j REJECT', 4, 'filter')).toEqual({ rejectWith: 'icmp-port-unreachable' });
    expect(target('-j REJECT', 6, 'filter')).toEqual({ rejectWith: 'icmp6-port-unreachable' });
    expect(target('-p tcp -j REJECT --reject-with tcp-rst', 4, 'filter')).toEqual({ rejectWith: 'tcp-reset' });
    expect(target('-j LOG --log-prefix "[x] " --log-level debug --log-uid', 4, 'filter')).toEqual({ prefix: '[x] ', level: 7, flags: ['uid'] });
  });
  it('terminal targets end the chain walk; the others continue', () => {
    const terminal = [...TARGETS.values()].filter((t) => t.terminal).map((t) => t.name).sort();
    expect(terminal).toEqual(['DNAT', 'MASQUERADE', 'NETMAP', 'NFQUEUE', 'REDIRECT', 'REJECT', 'SNAT', 'SYNPROXY', 'TPROXY']);
  });
});

describe('option values are plain JSON', () => {
  const lines: [string, 4 | 6, string, string][] = [
    ['-p tcp -m tcp --dport 80 --syn -m multiport --sports 1:2,3 -m owner ! --uid-owner 0-10 -m comment --comment "a b"', 4, 'nat', 'OUTPUT'],
    ['-m conntrack --ctstate NEW --ctorigdst 10.0.0.0/8 --ctorigdstport 80 --ctexpire 1:2 --ctdir REPLY -m statistic --mode nth --every 2 --packet 1', 4, 'nat', 'OUTPUT'],
    ['-m addrtype --dst-type LOCAL -m iprange --src-range ::1-::2 -m mark --mark 0x1/0x1 -m recent --set -m limit --limit 1/sec', 6, 'nat', 'OUTPUT'],
    ['-p tcp -j DNAT --to-destination [fd00::1]:80', 6, 'nat', 'OUTPUT'],
  ];
  it.each(lines)('%s', (line, family, table, chain) => {
    const r = parseRuleArgs(tokenize(line), { family, table, chain });
    const values = [...r.matches.map((m) => m.options), r.target && 'ext' in r.target ? r.target.options : null];
    for (const v of values) expect(JSON.parse(JSON.stringify(v))).toEqual(v);
  });
});
