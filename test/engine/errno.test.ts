// What the client's connect() returns, in every result: the errno a RST, each REJECT's ICMP
// error, a drop and a failed connect() give, as the kernel gives them (icmp_err_convert,
// icmpv6_err_convert, tcp_reset, udp_sendmsg's -EPERM from a local hook). The same cases run
// against real sockets in test/kernel/reject.differential.test.ts.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/index.js';
import { renderOutcome } from '../../src/trace/render.js';

const rules = (line: string, family: 4 | 6 = 4): string =>
  `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n${line}\nCOMMIT\n`.replace('ICMP', family === 4 ? 'icmp' : 'ipv6-icmp');

describe('errno: what the client reads', () => {
  it.each([
    ['-A OUTPUT -d 10.0.0.9 -j REJECT', 'refused', 'ECONNREFUSED'],
    ['-A OUTPUT -d 10.0.0.9 -p tcp -j REJECT --reject-with tcp-reset', 'refused', 'ECONNREFUSED'],
    ['-A OUTPUT -d 10.0.0.9 -j REJECT --reject-with icmp-host-unreachable', 'refused', 'EHOSTUNREACH'],
    ['-A OUTPUT -d 10.0.0.9 -j REJECT --reject-with icmp-host-prohibited', 'refused', 'EHOSTUNREACH'],
    ['-A OUTPUT -d 10.0.0.9 -j REJECT --reject-with icmp-admin-prohibited', 'refused', 'EHOSTUNREACH'],
    ['-A OUTPUT -d 10.0.0.9 -j REJECT --reject-with icmp-net-unreachable', 'refused', 'ENETUNREACH'],
    ['-A OUTPUT -d 10.0.0.9 -j REJECT --reject-with icmp-net-prohibited', 'refused', 'ENETUNREACH'],
    ['-A OUTPUT -d 10.0.0.9 -j REJECT --reject-with icmp-proto-unreachable', 'refused', 'ENOPROTOOPT'],
    ['-A OUTPUT -d 10.0.0.9 -j DROP', 'dropped', 'ETIMEDOUT'],
  ])('IPv4 TCP, %s: %s %s', (line, outcome, errno) => {
    const r = new Netns({ rules: rules(line) }).connect({ from: 'local', uid: 1000, dst: '10.0.0.9:80' });
    expect([r.outcome, r.errno]).toEqual([outcome, errno]);
  });

  it.each([
    ['-A OUTPUT -d fd00::9 -j REJECT', 'ECONNREFUSED'],
    ['-A OUTPUT -d fd00::9 -j REJECT --reject-with icmp6-adm-prohibited', 'EACCES'],
    ['-A OUTPUT -d fd00::9 -j REJECT --reject-with icmp6-no-route', 'ENETUNREACH'],
    ['-A OUTPUT -d fd00::9 -j REJECT --reject-with icmp6-addr-unreachable', 'EHOSTUNREACH'],
    ['-A OUTPUT -d fd00::9 -j REJECT --reject-with icmp6-policy-fail', 'EACCES'],
  ])('IPv6 TCP, %s: %s', (line, errno) => {
    const r = new Netns({ rules6: rules(line, 6) }).connect({ from: 'local', uid: 1000, dst: '[fd00::9]:80' });
    expect([r.outcome, r.errno]).toEqual(['refused', errno]);
  });

  it('a connection made, and an attempt no socket answers', () => {
    const ns = new Netns({ listen: [8080] });
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.0.0.9:80' }).errno).toBeNull();
    expect(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:8080' }).errno).toBeNull();
    const r = ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:81' });
    expect([r.outcome, r.errno]).toEqual(['refused', 'ECONNREFUSED']);
    const u = ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:81', proto: 'udp' });
    expect([u.outcome, u.errno]).toEqual(['refused', 'ECONNREFUSED']);
  });

  it('a UDP datagram a local OUTPUT rule drops or rejects fails the send(): EPERM', () => {
    for (const line of ['-A OUTPUT -d 10.0.0.9 -j DROP', '-A OUTPUT -d 10.0.0.9 -j REJECT']) {
      const r = new Netns({ rules: rules(line) }).connect({ from: 'local', uid: 0, dst: '10.0.0.9:53', proto: 'udp' });
      expect(r.errno, line).toBe('EPERM');
    }
  });

  it('after the SYN-ACK the client has connected: a RST to its ACK is ECONNRESET, a lost ACK no error', () => {
    const reset = new Netns({ rules: rules('-A INPUT -p tcp --tcp-flags SYN,ACK,RST ACK -j REJECT --reject-with tcp-reset'), listen: [8080] });
    expect(reset.connect({ from: 'local', uid: 0, dst: '10.0.0.2:8080' })).toMatchObject({ outcome: 'refused', errno: 'ECONNRESET' });
    const lost = new Netns({ rules: rules('-A INPUT -p tcp --tcp-flags SYN,ACK,RST ACK -j DROP'), listen: [8080] });
    expect(lost.connect({ from: 'local', uid: 0, dst: '10.0.0.2:8080' })).toMatchObject({ outcome: 'dropped', errno: null });
  });

  it('a connect() that fails before any packet: errno is its error', () => {
    const r = new Netns({ routes: [{ dst: '10.9.0.0/16', type: 'unreachable' }] }).connect({ from: 'local', uid: 0, dst: '10.9.0.1:80' });
    expect(r.error).toBe('EHOSTUNREACH');
    expect(r.errno).toBe('EHOSTUNREACH');
  });

  it('the text output names it', () => {
    const r = new Netns({ rules: rules('-A OUTPUT -d 10.0.0.9 -j REJECT --reject-with icmp-admin-prohibited') }).connect({ from: 'local', uid: 0, dst: '10.0.0.9:80' });
    expect(renderOutcome(r)).toMatch(/^refused: EHOSTUNREACH \(/);
  });
});
