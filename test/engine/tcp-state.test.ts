// Conntrack's TCP state table, SO_ORIGINAL_DST by the socket's addresses, the RST that answers a
// misdirected ACK, -m socket, and connect() to non-unicast addresses. Each is also checked
// against the kernel in test/kernel/corners-state.differential.test.ts.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectResult } from '../../src/engine/path/netns.js';
import type { TraceEvent } from '../../src/engine/trace/events.js';

const table = (name: string) => (...lines: string[]): string => `*${name}\n${lines.join('\n')}\nCOMMIT\n`;
const raw = table('raw');
const filter = table('filter');
const nat = table('nat');
const SYN_ONLY = '-p tcp -m tcp --tcp-flags SYN,ACK SYN';
const SYNACK_ONLY = '-p tcp -m tcp --tcp-flags SYN,ACK SYN,ACK';
const conntrackEvents = (r: ConnectResult): TraceEvent[] => (r.trace ?? []).filter((e) => e.type === 'conntrack');

describe('the TCP state table', () => {
  it('an ACK while the entry is SYN_SENT is INVALID, and the trace says why', () => {
    const ns = new Netns({ rules: raw(`-A OUTPUT ${SYNACK_ONLY} -j CT --notrack`) + filter('-A OUTPUT -m conntrack --ctstate INVALID -j DROP'), listen: [8080] });
    const r = ns.connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' }, { trace: true });
    expect(r.outcome).toBe('dropped');
    expect(r.reason).toMatch(/^the ACK: /);
    const invalid = conntrackEvents(r).find((e) => e.type === 'conntrack' && e.action === 'invalid' && e.label === 'ACK');
    expect(invalid).toMatchObject({ reason: 'ACK in state SYN_SENT', direction: 'ORIGINAL' });
  });

  it('without the INVALID rule the ACK still reaches the listener', () => {
    const ns = new Netns({ rules: raw(`-A OUTPUT ${SYNACK_ONLY} -j CT --notrack`) + filter('-A INPUT -m conntrack --ctstate RELATED -j ACCEPT'), listen: [8080] });
    expect(ns.connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' }).outcome).toBe('local');
  });

  it('a SYN on an established tuple is ignored: the entry keeps its state', () => {
    const ns = new Netns({ rules: filter('-A INPUT -m conntrack --ctstate INVALID -j DROP'), listen: [8080] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', sport: 5000, dst: '10.0.0.2:8080' }).outcome).toBe('local');
    const again = ns.connect({ from: 'remote', src: '10.1.0.5', sport: 5000, dst: '10.0.0.2:8080' }, { trace: true });
    const found = conntrackEvents(again).find((e) => e.type === 'conntrack' && e.action === 'found' && e.label === 'SYN');
    expect(found).toMatchObject({ state: 'ESTABLISHED', reason: 'SYN ignored in state ESTABLISHED: the entry is kept as it was' });
    expect(ns.conntrack().find((c) => c.state !== null)?.state).toBe('ESTABLISHED');
  });

  it('a SYN after a close starts a new connection', () => {
    const ns = new Netns({ rules: nat('-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080'), listen: [8080] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', sport: 5001, dst: '10.0.0.2:8080' }, { close: true }).outcome).toBe('local');
    const r = ns.connect({ from: 'remote', src: '10.1.0.5', sport: 5001, dst: '10.0.0.2:8080' }, { trace: true });
    expect(r.outcome).toBe('local');
    expect(conntrackEvents(r).some((e) => e.type === 'conntrack' && e.action === 'reopen' && e.reason === 'the entry was TIME_WAIT')).toBe(true);
  });
});

describe('SO_ORIGINAL_DST', () => {
  it('finds the entry a later packet made when the SYN went untracked', () => {
    const ns = new Netns({ rules: raw(`-A OUTPUT ${SYN_ONLY} -j CT --notrack`) + filter('-A INPUT -m conntrack --ctstate RELATED -j ACCEPT'), listen: [8080] });
    const r = ns.connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' });
    expect([r.outcome, r.originalDestination]).toEqual(['local', '10.0.0.2:8080']);
  });

  it('finds the default-zone entry when only the SYN was zoned, and nothing when all was', () => {
    const part = new Netns({ rules: raw(`-A OUTPUT ${SYN_ONLY} -j CT --zone 1`), listen: [8080] });
    expect(part.connect({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' }).originalDestination).toBe('127.0.0.1:8080');
    const all = new Netns({ rules: raw('-A OUTPUT -p tcp -j CT --zone 1', '-A PREROUTING -p tcp -j CT --zone 1'), listen: [8080] });
    const r = all.connect({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' });
    expect([r.outcome, r.originalDestination]).toEqual(['local', null]);
  });
});

describe('a misdirected ACK', () => {
  const rules = raw(`-A OUTPUT ${SYN_ONLY} -j CT --notrack`) + nat('-A OUTPUT -p tcp -m tcp --dport 8080 -j REDIRECT --to-ports 4140');
  it('meets a listener with no such connection: its RST resets the client', () => {
    const r = new Netns({ rules, listen: [8080, 4140] }).connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' }, { trace: true });
    expect(r.outcome).toBe('refused');
    expect(r.reason).toBe('the ACK reached the listener 0.0.0.0:4140, which has no such connection: connection reset');
    expect((r.trace ?? []).some((e) => e.type === 'packet' && e.label === 'RST')).toBe(true);
  });

  it('meets a closed port: the same', () => {
    expect(new Netns({ rules, listen: [8080] }).connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' }).outcome).toBe('refused');
  });

  it('is lost when a rule drops the RST', () => {
    const r = new Netns({ rules: rules + filter('-A INPUT -p tcp -m tcp --tcp-flags RST RST -j DROP'), listen: [8080, 4140] }).connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
  });
});

describe('-m socket', () => {
  const accept = (m: string): string => filter(`-A INPUT -p tcp -m tcp --syn ${m} -j ACCEPT`, '-A INPUT -p tcp -m tcp --syn -j DROP');
  it('ignores a wildcard listener unless --nowildcard, and finds a bound one', () => {
    const ns = new Netns({ rules: accept('-m socket'), listen: [8080, '10.0.0.2:9090'] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }).outcome).toBe('dropped');
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:9090' }).outcome).toBe('local');
    const nw = new Netns({ rules: accept('-m socket --nowildcard'), listen: [8080] });
    expect(nw.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }).outcome).toBe('local');
    expect(nw.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:7070' }).outcome).toBe('dropped');
  });

  it('--transparent wants an IP_TRANSPARENT socket', () => {
    const ns = new Netns({ rules: accept('-m socket --transparent --nowildcard'), listen: [{ port: 8080, transparent: true }, 9090] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }).outcome).toBe('local');
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:9090' }).outcome).toBe('dropped');
  });

  it('lets a TPROXY pod connect out from its client address', () => {
    const options = { ipRules: [{ fwmark: 1, table: 100, family: 4 as const }], routes: [{ dst: '0.0.0.0/0', dev: 'lo', type: 'local' as const, table: 100 }] };
    const marked = new Netns({ rules: table('mangle')('-A PREROUTING -p tcp -m socket --transparent -j MARK --set-xmark 0x1/0xffffffff'), ...options });
    expect(marked.connect({ from: 'local', uid: 0, src: '10.9.0.7', transparent: true, dst: '10.1.0.5:80' }).outcome).toBe('remote');
    const plain = new Netns({ ...options });
    expect(plain.connect({ from: 'local', uid: 0, src: '10.9.0.7', transparent: true, dst: '10.1.0.5:80' }).outcome).toBe('dropped');
  });

  it('refuses to bind a source the namespace does not own, unless the socket is transparent', () => {
    const ns = new Netns({ listen: [8080] });
    const r = ns.connect({ from: 'local', uid: 0, src: '10.9.0.7', dst: '10.1.0.5:80' });
    expect(r.outcome).toBe('refused');
    expect(r.error).toBe('EADDRNOTAVAIL');
    expect(r.reason).toMatch(/^bind\(\): EADDRNOTAVAIL/);
    expect(ns.connect({ from: 'local', uid: 0, src: '10.0.0.2', dst: '10.1.0.5:80' }).outcome).toBe('remote');
    expect(ns.connect({ from: 'local', uid: 0, src: '127.0.0.5', dst: '127.0.0.1:8080' }).outcome).toBe('local');
    expect(ns.connect({ from: 'local', uid: 0, src: 'fd00::7', dst: '[fd00:1::5]:80' }).error).toBe('EADDRNOTAVAIL');
    // Transparent: the bind succeeds and the SYN leaves; without a policy route back, the SYN-ACK
    // to 10.9.0.7 is not for this namespace.
    const t = ns.connect({ from: 'local', uid: 0, src: '10.9.0.7', transparent: true, dst: '10.1.0.5:80' });
    expect([t.outcome, t.error]).toEqual(['dropped', undefined]);
  });
});

describe('connect() to a non-unicast address', () => {
  it('TCP fails with ENETUNREACH before any rule, whatever the rules', () => {
    const ns = new Netns({ rules: nat('-A OUTPUT -p tcp -j REDIRECT --to-ports 8080'), rules6: nat('-A OUTPUT -p tcp -j REDIRECT --to-ports 8080'), listen: [8080] });
    for (const dst of ['10.0.0.255:80', '127.255.255.255:80', '224.0.0.1:80', '255.255.255.255:80', '[ff02::1]:80']) {
      const r = ns.connect({ from: 'local', uid: 1000, dst }, { trace: true });
      expect([dst, r.outcome, r.error]).toEqual([dst, 'refused', 'ENETUNREACH']);
      expect((r.trace ?? []).some((e) => e.type === 'rule' || e.type === 'policy')).toBe(false);
    }
    expect(ns.connect({ from: 'local', uid: 1000, dst: '10.0.0.254:80' }).outcome).toBe('local');
  });

  it('UDP to a broadcast address fails with EACCES; to a multicast one it is sent', () => {
    const ns = new Netns({});
    expect(ns.connect({ from: 'local', uid: 1000, proto: 'udp', dst: '10.0.0.255:53' }).error).toBe('EACCES');
    expect(ns.connect({ from: 'local', uid: 1000, proto: 'udp', dst: '224.0.0.1:53' }).error).toBeUndefined();
  });
});
