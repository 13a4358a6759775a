// Extensions with state across packets and connections, on the namespace's virtual clock.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';

const filter = (...lines: string[]): string => `*filter\n${lines.join('\n')}\nCOMMIT\n`;
const remote = (src: string, dst = '10.0.0.2:8080') => ({ from: 'remote' as const, src, dst });

describe('recent on the virtual clock', () => {
  const rules = filter(
    '-A INPUT -p tcp -m tcp --dport 8080 -m conntrack --ctstate NEW -m recent --set --name SSH',
    '-A INPUT -p tcp -m tcp --dport 8080 -m conntrack --ctstate NEW -m recent --update --seconds 60 --hitcount 2 --name SSH -j DROP',
  );
  it('drops a second connection within 60 s and accepts one after', () => {
    const ns = new Netns({ rules, listen: [8080] });
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('local');
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('dropped');
    expect(ns.connect(remote('10.1.0.6')).outcome).toBe('local');
    ns.advance(61);
    // The stamps are older than 60 s: the list still holds the address, but no recent hit.
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('local');
    expect(ns.recentLists()['SSH']!.map((e) => e.address).sort()).toEqual(['10.1.0.5', '10.1.0.6']);
  });
  it('the lists belong to the namespace', () => {
    const a = new Netns({ rules, listen: [8080] });
    const b = new Netns({ rules, listen: [8080] });
    a.connect(remote('10.1.0.5'));
    expect(b.connect(remote('10.1.0.5')).outcome).toBe('local');
    expect(b.connect(remote('10.1.0.5')).outcome).toBe('dropped');
  });
});

describe('limit and hashlimit refill with the clock', () => {
  it('limit 1/min burst 2', () => {
    const ns = new Netns({ rules: filter('-A INPUT -p tcp -m tcp --dport 8080 --syn -m limit --limit 1/min --limit-burst 2 -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 --syn -j DROP'), listen: [8080] });
    const out = () => ns.connect(remote('10.1.0.5')).outcome;
    expect([out(), out(), out()]).toEqual(['local', 'local', 'dropped']);
    ns.advance(59);
    expect(out()).toBe('dropped');
    ns.advance(1);
    expect([out(), out()]).toEqual(['local', 'dropped']);
  });
  it('hashlimit keeps one bucket per source', () => {
    const ns = new Netns({ rules: filter('-A INPUT -p tcp -m tcp --dport 8080 --syn -m hashlimit --hashlimit-upto 1/sec --hashlimit-burst 1 --hashlimit-mode srcip --hashlimit-name h -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 --syn -j DROP'), listen: [8080] });
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('local');
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('dropped');
    expect(ns.connect(remote('10.1.0.6')).outcome).toBe('local');
    ns.advance(1);
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('local');
  });
  it('advance refuses a negative or non-finite step', () => {
    const ns = new Netns({});
    expect(() => ns.advance(-1)).toThrow(/non-negative/);
    expect(() => ns.advance(Number.NaN)).toThrow(/non-negative/);
  });
});

describe('time, quota, NFQUEUE, NETMAP, TTL', () => {
  it('time windows follow the clock', () => {
    const rules = filter('-A INPUT -p tcp -m tcp --dport 8080 -m time --timestart 09:00 --timestop 17:00 --weekdays Mon,Tue,Wed,Thu,Fri -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 -j DROP');
    // 2024-01-01 was a Monday.
    const monday8 = Date.UTC(2024, 0, 1, 8, 0, 0) / 1000;
    const ns = new Netns({ rules, listen: [8080], clock: monday8 });
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('dropped');
    ns.advance(3600);
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('local');
    ns.advance(5 * 86400);
    expect(ns.connect(remote('10.1.0.5')).outcome).toBe('dropped'); // Saturday
  });
  it('quota counts bytes until it runs out', () => {
    const ns = new Netns({ rules: filter('-A INPUT -p tcp -m tcp --dport 8080 --syn -m quota --quota 130 -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 --syn -j DROP'), listen: [8080] });
    expect([0, 1, 2].map(() => ns.connect(remote('10.1.0.5')).outcome)).toEqual(['local', 'local', 'dropped']);
  });
  it('NFQUEUE without a reader drops and says why; --queue-bypass accepts', () => {
    const ns = new Netns({ rules: filter('-A INPUT -p tcp -m tcp --dport 8080 -j NFQUEUE --queue-num 7'), listen: [8080] });
    const r = ns.connect(remote('10.1.0.5'));
    expect(r.outcome).toBe('dropped');
    expect(r.reason).toContain('no program reads queue 7');
    const by = new Netns({ rules: filter('-A INPUT -p tcp -m tcp --dport 8080 -j NFQUEUE --queue-bypass', '-A INPUT -j DROP'), listen: [8080] });
    expect(by.connect(remote('10.1.0.5')).outcome).toBe('local');
  });
  it('NETMAP keeps the host part', () => {
    const ns = new Netns({ rules: '*nat\n-A OUTPUT -d 10.9.9.0/24 -j NETMAP --to 127.0.0.0/24\nCOMMIT\n', listen: ['127.0.0.7:8080'] });
    const r = ns.connect({ from: 'local', uid: 0, gid: 0, dst: '10.9.9.7:8080' });
    expect([r.outcome, r.address, r.originalDestination]).toEqual(['local', '127.0.0.7', '10.9.9.7:8080']);
  });
  it('TTL 1 is not forwarded', () => {
    const rules = '*mangle\n-A PREROUTING -j TTL --ttl-set 1\nCOMMIT\n';
    const ns = new Netns({ rules, ipForward: true, interfaces: { eth0: ['10.0.0.2/24'], eth1: ['10.2.0.1/24'] } });
    const r = ns.connect(remote('10.1.0.5', '10.2.0.9:80'));
    expect(r.outcome).toBe('dropped');
    expect(r.reason).toContain('TTL exceeded');
  });
});
