// A namespace that lives for many connections: source ports from ip_local_port_range, EADDRNOTAVAIL,
// close through the hooks, TIME_WAIT for sockets and conntrack, and the clock that expires them.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import type { ConnectResult } from '../../src/index.js';

const nat = (...lines: string[]): string => `*nat\n${lines.join('\n')}\nCOMMIT\n`;
const REDIRECT = nat('-A OUTPUT -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140');
const local = { from: 'local', uid: 1000, dst: '10.96.0.10:80' } as const;

function sport(r: ConnectResult): number {
  const syn = r.trace!.find((e) => e.type === 'packet') as { sport: number } | undefined;
  return syn!.sport;
}
const packets = (r: ConnectResult): string[] => r.trace!.filter((e) => e.type === 'packet').map((e) => (e as { label: string }).label);

describe('source ports (__inet_hash_connect)', () => {
  it('come from 32768–60999, the same for the same seed, and differ per connection', () => {
    const a = new Netns({ rules: REDIRECT, listen: [4140] });
    const b = new Netns({ rules: REDIRECT, listen: [4140] });
    const pa = [0, 1, 2].map(() => sport(a.connect(local)));
    const pb = [0, 1, 2].map(() => sport(b.connect(local)));
    expect(pa).toEqual(pb);
    expect(new Set(pa).size).toBe(3);
    for (const p of pa) expect(p >= 32768 && p <= 60999).toBe(true);
    // The first pass takes ports of the range's parity (even), two apart.
    expect(pa.map((p) => p % 2)).toEqual([0, 0, 0]);
    expect(pa[1]! - pa[0]!).toBe(2);
  });

  it('no free port: connect() fails with EADDRNOTAVAIL before any packet, the outcome says so', () => {
    const ns = new Netns({ rules: REDIRECT, listen: [4140], localPortRange: [40000, 40002] });
    expect([0, 1].map(() => ns.connect(local).outcome)).toEqual(['local', 'local']);
    const r = ns.connect(local);
    expect(r).toMatchObject({ outcome: 'refused', error: 'EADDRNOTAVAIL', address: null, port: null });
    expect(r.reason).toBe('connect(): EADDRNOTAVAIL: no free source port in 40000–40002 from 10.0.0.2 to 10.96.0.10:80');
    expect(packets(r)).toEqual([]);
    expect(ns.conntrack()).toHaveLength(2);
    // Another destination has its own tuples.
    expect(ns.connect({ ...local, dst: '10.96.0.11:80' }).outcome).toBe('remote');
  });

  it('skips a port a listener holds', () => {
    const ns = new Netns({ listen: [4140, 40000], localPortRange: [40000, 40001] });
    expect(sport(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:4140' }))).toBe(40001);
    expect(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:4140' }).error).toBe('EADDRNOTAVAIL');
  });

  it('a failed attempt leaves no socket behind', () => {
    const ns = new Netns({ localPortRange: [40000, 40001] });
    const outcomes = [0, 1, 2, 3].map(() => ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:9' }).outcome);
    expect(outcomes).toEqual(['refused', 'refused', 'refused', 'refused']);
    expect(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:9' }).error).toBeUndefined();
  });

  it('route failures carry their errno', () => {
    const ns = new Netns({ routes: [{ dst: '10.9.0.0/16', type: 'prohibit' }] });
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.9.0.1:80' })).toMatchObject({ outcome: 'refused', error: 'EACCES' });
  });

  it('refuses a bad range', () => {
    expect(() => new Netns({ localPortRange: [5, 4] })).toThrow(/localPortRange/);
    expect(() => new Netns({ localPortRange: [0, 4] as never })).toThrow(/localPortRange/);
  });

  it('connectAll leaves the next port as it was', () => {
    const a = new Netns({ rules: REDIRECT, listen: [4140] });
    const b = new Netns({ rules: REDIRECT, listen: [4140] });
    a.connectAll(local);
    expect(sport(a.connect(local))).toBe(sport(b.connect(local)));
  });
});

describe('close: FINs through the hooks, TIME_WAIT, the clock', () => {
  it('the FIN-ACKs and the last ACK cross the hooks and rules can match them', () => {
    const rules = `${REDIRECT}*filter\n-A OUTPUT -p tcp -m tcp --tcp-flags FIN FIN\nCOMMIT\n`;
    const ns = new Netns({ rules, listen: [4140] });
    const r = ns.connect(local, { close: true });
    expect(r.outcome).toBe('local');
    expect(r.reason).toBe('accepted by the listener 0.0.0.0:4140; closed (client in TIME_WAIT)');
    expect(packets(r)).toEqual(['SYN', 'SYN-ACK', 'ACK', 'FIN', 'FIN', 'ACK']);
    // Both FINs were sent by local sockets: OUTPUT counted each once.
    expect(ns.counters(4).find((c) => c.chain === 'OUTPUT' && c.table === 'filter' && c.rule === 1)?.packets).toBe(2);
    expect(ns.conntrack()).toMatchObject([{ state: 'TIME_WAIT', expires: 120 }]);
  });

  it('a dropped FIN: the close does not complete, and the reason says where', () => {
    const rules = `${REDIRECT}*filter\n-A INPUT -p tcp -m tcp --tcp-flags FIN FIN -j DROP\nCOMMIT\n`;
    const ns = new Netns({ rules, listen: [4140] });
    const r = ns.connect(local, { close: true });
    expect(r.outcome).toBe('local');
    expect(r.reason).toMatch(/the close did not complete: the client's FIN/);
    expect(ns.conntrack()[0]!.state).toBe('FIN_WAIT');
  });

  it('the conntrack entry leaves at 120 s, the client socket frees its tuple at 60 s', () => {
    const ns = new Netns({ rules: REDIRECT, listen: [4140], localPortRange: [40000, 40001] });
    expect([0, 1].map(() => ns.connect(local, { close: true }).outcome)).toEqual(['local', 'local']);
    expect(ns.connect(local).error).toBe('EADDRNOTAVAIL');
    ns.advance(59.5);
    expect(ns.connect(local).error).toBe('EADDRNOTAVAIL');
    expect(ns.conntrack().map((c) => c.state)).toEqual(['TIME_WAIT', 'TIME_WAIT']);
    ns.advance(0.5);
    const again = ns.connect(local);
    expect(again.outcome).toBe('local');
    // The SYN met the old entry in TIME_WAIT: it is removed and the connection starts anew, NAT included.
    expect(again.trace!.some((e) => e.type === 'conntrack' && e.action === 'reopen')).toBe(true);
    expect(again.originalDestination).toBe('10.96.0.10:80');
    ns.advance(60);
    expect(ns.conntrack().map((c) => c.state)).toEqual(['ESTABLISHED']);
  });

  it('a loopback TIME_WAIT tuple is reused in the next second (tcp_tw_reuse = 2)', () => {
    const ns = new Netns({ listen: [8080], localPortRange: [40000, 40001] });
    const spec = { from: 'local', uid: 0, dst: '127.0.0.1:8080' } as const;
    ns.connect(spec, { close: true });
    ns.connect(spec, { close: true });
    expect(ns.connect(spec).error).toBe('EADDRNOTAVAIL');
    ns.advance(1);
    expect(ns.connect(spec).outcome).toBe('local');
  });

  it('a closed UDP socket frees its port; an open one keeps it', () => {
    const ns = new Netns({ listen: [53], localPortRange: [40000, 40001] });
    const udp = { from: 'local', uid: 0, dst: '127.0.0.1:53', proto: 'udp' } as const;
    expect([0, 1, 2].map(() => ns.connect(udp, { close: true }).outcome)).toEqual(['local', 'local', 'local']);
    expect([0, 1, 2].map(() => ns.connect(udp).error ?? 'ok')).toEqual(['ok', 'ok', 'EADDRNOTAVAIL']);
  });

  it('100,000 connections opened and closed 10 ms apart keep giving the right outcome', () => {
    const ns = new Netns({ rules: REDIRECT, listen: [4140] });
    let wrong = 0;
    for (let i = 0; i < 100_000; i++) {
      const r = ns.connect(local, { trace: false, close: true });
      if (r.outcome !== 'local' || r.port !== 4140 || r.originalDestination !== '10.96.0.10:80' || !r.reason.endsWith('closed (client in TIME_WAIT)')) wrong++;
      ns.advance(0.01);
    }
    expect(wrong).toBe(0);
    // What lives is what the timers hold: 120 s of conntrack entries at 100 connections per second.
    expect(ns.conntrack().length).toBeLessThanOrEqual(12_001);
    expect(ns.conntrack().length).toBeGreaterThanOrEqual(11_999);
  }, 120_000);
});

describe('NAT port search (nf_nat_l4proto_unique_tuple)', () => {
  const snat = (range: string): string => nat(`-A POSTROUTING -d 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j SNAT --to-source 127.0.0.1:${range}`);
  const spec = { from: 'local', uid: 0, dst: '127.0.0.1:8080' } as const;

  it('a full port range drops the SYN at confirm; a closed connection frees its port when its entry expires', () => {
    const ns = new Netns({ rules: snat('50000-50009'), listen: ['127.0.0.1:8080'] });
    const first = [...Array(10).keys()].map(() => ns.connect(spec, { close: true, trace: false }).outcome);
    expect(first).toEqual(Array(10).fill('local'));
    const full = ns.connect(spec);
    expect(full.outcome).toBe('dropped');
    expect(full.reason).toMatch(/^nf_conntrack: insert failed: another connection holds the tuple 127\.0\.0\.1:8080 > 127\.0\.0\.1:500\d\d \(no free NAT port\)$/);
    ns.advance(120);
    expect(ns.connect(spec).outcome).toBe('local');
  });

  it('a clash without a range moves the source port within its class', () => {
    const ns = new Netns({ rules: nat('-A POSTROUTING -d 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j SNAT --to-source 127.0.0.1'), listen: ['127.0.0.1:8080'], interfaces: { eth0: ['10.0.0.2/24', '10.0.0.3/24'] } });
    expect(ns.connect({ ...spec, src: '10.0.0.2', sport: 40000 }).outcome).toBe('local');
    expect(ns.connect({ ...spec, src: '10.0.0.3', sport: 40000 }).outcome).toBe('local');
    const ports = ns.conntrack().map((c) => Number(/:(\d+)$/.exec(c.reply)![1]));
    expect(ports[0]).toBe(40000);
    expect(ports[1]).not.toBe(40000);
    expect(ports[1]! >= 1024 && ports[1]! <= 65535).toBe(true);
  });

  it('the search is bounded: 2,000 clashing attempts on a two-port range all end, dropped', () => {
    const ns = new Netns({ rules: snat('50000-50001'), listen: ['127.0.0.1:8080'] });
    ns.connect(spec, { trace: false });
    ns.connect(spec, { trace: false });
    let dropped = 0;
    for (let i = 0; i < 2000; i++) if (ns.connect(spec, { trace: false }).outcome === 'dropped') dropped++;
    expect(dropped).toBe(2000);
  });
});

