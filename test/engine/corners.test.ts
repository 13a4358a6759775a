// Engine corners the kernel differential found (test/kernel/corners-engine.differential.test.ts):
// the source the accepting side sees, source address selection, MASQUERADE's address.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import { Routing, orderIpv4, parseIfaceAddress } from '../../src/engine/state/routing.js';
import { parseAddress } from '../../src/model/address.js';
import { NetfilterSimError } from '../../src/model/errors.js';

const nat = (...lines: string[]): string => `*nat\n${lines.join('\n')}\nCOMMIT\n`;
const host = (endpoint: string | null): string | null => (endpoint === null ? null : endpoint.replace(/:\d+$/, ''));

describe('source: what the accepting side saw', () => {
  it('is the client socket for a local connection, and null when nothing accepted', () => {
    const ns = new Netns({ listen: [8080] });
    const r = ns.connect({ from: 'local', uid: 0, dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('local');
    expect(r.source).toMatch(/^10\.0\.0\.2:\d+$/);
    const refused = ns.connect({ from: 'local', uid: 0, dst: '10.0.0.2:9999' });
    expect(refused.outcome).toBe('refused');
    expect(refused.source).toBeNull();
  });

  it('keeps a given source port, and a remote client is seen as itself', () => {
    const ns = new Netns({ listen: [8080] });
    expect(ns.connect({ from: 'remote', src: '10.1.0.5', sport: 5555, dst: '10.0.0.2:8080' }).source).toBe('10.1.0.5:5555');
    expect(ns.connect({ from: 'remote', src: 'fd00:1::5', sport: 5556, dst: '[fd00::2]:8080' }).source).toBe('[fd00:1::5]:5556');
  });

  it('is after SNAT: the world sees the rewritten source', () => {
    const ns = new Netns({ rules: nat('-A POSTROUTING -o eth0 -p tcp -j SNAT --to-source 10.0.0.2:7000'), interfaces: { eth0: ['10.0.0.2/24', '10.0.0.3/24'] } });
    const r = ns.connect({ from: 'local', uid: 0, src: '10.0.0.3', sport: 5000, dst: '10.1.0.5:80' });
    expect(r.outcome).toBe('remote');
    expect(r.source).toBe('10.0.0.2:7000');
  });

  it('is in the batch results too (no trace)', () => {
    const ns = new Netns({ listen: [8080] });
    const r = ns.connect({ from: 'remote', src: '10.1.0.5', sport: 5555, dst: '10.0.0.2:8080' }, { trace: false });
    expect(Object.keys(r).slice(0, 5)).toEqual(['outcome', 'address', 'port', 'originalDestination', 'source']);
  });
});

describe('IPv4 source address selection (inet_select_addr, fib_add_ifaddr)', () => {
  const words = (a: string): number[] => parseAddress(a, 4)!;

  it('marks an address in the subnet of an earlier one secondary and lists it after the primaries', () => {
    const list = orderIpv4(['10.0.0.2/24', '10.0.0.3/24', '192.168.7.2/24'].map(parseIfaceAddress));
    expect(list.map((a) => [a.addr[0], a.secondary ?? false])).toEqual([[words('10.0.0.2')[0], false], [words('192.168.7.2')[0], false], [words('10.0.0.3')[0], true]]);
  });

  it('refuses the same address twice, as ip addr add does', () => {
    expect(() => new Netns({ interfaces: { eth0: ['10.0.0.2/24', '10.0.0.2/24'] } })).toThrow(NetfilterSimError);
  });

  it('a secondary address is never the source: not towards the gateway, not to itself', () => {
    const ns = new Netns({ listen: [8080], interfaces: { eth0: ['10.0.0.2/24', '10.0.0.3/24'] } });
    expect(host(ns.connect({ from: 'local', uid: 0, dst: '10.1.0.5:80' }).source)).toBe('10.0.0.2');
    expect(host(ns.connect({ from: 'local', uid: 0, dst: '10.0.0.3:8080' }).source)).toBe('10.0.0.2');
  });

  it('takes the primary address whose subnet holds the gateway, not the first address', () => {
    const ns = new Netns({ interfaces: { eth0: ['192.168.7.2/24', '10.0.0.2/24'] }, gateway: '10.0.0.1' });
    expect(host(ns.connect({ from: 'local', uid: 0, dst: '10.1.0.5:80' }).source)).toBe('10.0.0.2');
  });

  it('MASQUERADE asks with the universe scope: out of lo it takes 10.0.0.2, never 127.0.0.1', () => {
    const ns = new Netns({ rules: nat('-A POSTROUTING -o lo -j MASQUERADE'), listen: [8080] });
    expect(host(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:8080' }).source)).toBe('10.0.0.2');
  });
});

describe('IPv6 source address selection (ipv6_dev_get_saddr, RFC 6724)', () => {
  const routing = new Routing({
    interfaces: [{ name: 'eth0', addresses: ['fd00::2/64', '2001:db8:1::2/64', 'fd00:2::2/64', 'fe80::2/64'] }],
    gateways: ['fd00::1'],
    routes: [],
    rules: [],
    routeLocalnet: false,
  });
  const pick = (dst: string): string => {
    const r = routing.routeOutput(6, parseAddress(dst, 6)!, 0, null);
    return r.src === null ? 'none' : formatWords(r.src);
  };
  const formatWords = (w: readonly number[]): string => w.map((x) => x.toString(16)).join('.');
  const w = (a: string): string => formatWords(parseAddress(a, 6)!);

  it('prefers the destination itself, then the matching label, then the longest common prefix', () => {
    expect(pick('fd00:2::2')).toBe(w('fd00:2::2'));
    expect(pick('2001:db8:7::5')).toBe(w('2001:db8:1::2'));
    expect(pick('fd00:3::5')).toBe(w('fd00:2::2'));
    expect(pick('fd00:1::5')).toBe(w('fd00::2'));
    expect(pick('2003::5')).toBe(w('2001:db8:1::2'));
  });

  it('a global destination never gets ::1 or a link-local source; a link-local one gets the link-local address', () => {
    expect(pick('2003::5')).not.toBe(w('fe80::2'));
    expect(pick('fe80::9')).toBe(w('fe80::2'));
  });

  it('MASQUERADE out of lo takes the destination (fd00::2), not ::1', () => {
    const ns = new Netns({ rules6: nat('-A POSTROUTING -o lo -j MASQUERADE'), listen: [8080] });
    expect(host(ns.connect({ from: 'local', uid: 0, dst: '[fd00::2]:8080' }).source)).toBe('[fd00::2]');
  });
});

describe('IPv4-mapped destinations (tcp_v6_connect)', () => {
  it('an IPv6 socket connecting to ::ffff:127.0.0.1 makes an IPv4 connection: IPv4 rules, routes and listeners', () => {
    const rules = '*filter\n-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 8081 -j DROP\nCOMMIT\n';
    const ns = new Netns({ rules, rules6: '*filter\n-A OUTPUT -j DROP\nCOMMIT\n', listen: ['127.0.0.1:8080', '127.0.0.1:8081'] });
    const r = ns.connect({ from: 'local', uid: 0, dst: '[::ffff:127.0.0.1]:8080' });
    expect([r.outcome, r.address, r.port, host(r.source)]).toEqual(['local', '127.0.0.1', 8080, '127.0.0.1']);
    expect(ns.connect({ from: 'local', uid: 0, dst: '[::ffff:127.0.0.1]:8081' }).outcome).toBe('dropped');
    const out = ns.connect({ from: 'local', uid: 0, dst: '[::ffff:10.1.0.5]:80' });
    expect([out.outcome, out.address, host(out.source)]).toEqual(['remote', '10.1.0.5', '10.0.0.2']);
  });
});

describe('addrtype --limit-iface-in reached from OUTPUT', () => {
  const rules = (chain: string): string => `*filter\n:X - [0:0]\n-A OUTPUT -j X\n-A ${chain} -p tcp -m addrtype --dst-type LOCAL --limit-iface-in -j DROP\nCOMMIT\n`;
  it('loads in a user chain (nf_tables: checkentry sees no hooks there) and limits nothing in OUTPUT', () => {
    const ns = new Netns({ rules: rules('X'), listen: [8080] });
    expect(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:8080' }).outcome).toBe('dropped');
  });
  it('is refused in OUTPUT itself', () => {
    expect(() => new Netns({ rules: rules('OUTPUT') })).toThrow(NetfilterSimError);
  });
});

describe('a policy local route for an address the host does not own', () => {
  const options = {
    rules: '*mangle\n-A OUTPUT -d 10.1.0.5/32 -p tcp -j MARK --set-xmark 0x1/0xffffffff\nCOMMIT\n',
    ipRules: [{ fwmark: 1, table: 100, family: 4 as const }],
    routes: [{ dst: '0.0.0.0/0', dev: 'lo', type: 'local' as const, table: 100 }],
  };
  it('a plain listener gets the SYN but its SYN-ACK cannot leave (the source is not ours): dropped', () => {
    const ns = new Netns({ ...options, listen: [8080] });
    const r = ns.connect({ from: 'local', uid: 0, dst: '10.1.0.5:8080' });
    expect(r.outcome).toBe('dropped');
    expect(r.reason).toMatch(/does not own/);
    // No listener: the kernel's RST cannot leave either.
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.1.0.5:9090' }).outcome).toBe('dropped');
  });
  it('an IP_TRANSPARENT listener answers', () => {
    const ns = new Netns({ ...options, listen: [{ port: 8080, transparent: true }] });
    expect(ns.connect({ from: 'local', uid: 0, dst: '10.1.0.5:8080' }).outcome).toBe('local');
  });
  it('connect() with SO_MARK 1 fails at once with ENETUNREACH; owned addresses still work', () => {
    const ns = new Netns({ ...options, rules: '', listen: [8080] });
    const r = ns.connect({ from: 'local', uid: 0, mark: 1, dst: '10.1.0.5:8080' });
    expect([r.outcome, r.error]).toEqual(['refused', 'ENETUNREACH']);
    expect(ns.connect({ from: 'local', uid: 0, mark: 1, dst: '10.0.0.2:8080' }).outcome).toBe('local');
  });
});

describe('output routes, kept by destination', () => {
  it('give what a fresh lookup gives, whatever the caller does with its destination array', () => {
    const config = {
      interfaces: [
        { name: 'eth0', addresses: ['10.0.0.2/24', '10.0.0.3/24'] },
        { name: 'eth1', addresses: ['192.168.5.1/24'] },
      ],
      gateways: ['10.0.0.1'],
      routes: [
        { dst: '10.96.0.0/12', dev: 'eth1' },
        { dst: '172.16.0.0/16', type: 'blackhole' as const },
        { dst: '172.17.0.0/16', type: 'prohibit' as const },
        { dst: '198.51.100.0/24', via: '10.0.0.1', src: '10.0.0.3' },
        { dst: '203.0.113.0/24', type: 'local' as const, dev: 'lo' },
      ],
      rules: [],
      routeLocalnet: false,
    };
    const kept = new Routing(config);
    const fresh = new Routing(config);
    // With an observer, every lookup is walked (explore must see every address read).
    fresh.observer = { addr: () => undefined, port: () => undefined };
    const addresses = ['10.0.0.9', '10.0.0.2', '127.0.0.1', '127.3.4.5', '10.100.0.1', '172.16.3.3', '172.17.0.1', '198.51.100.7', '203.0.113.9', '8.8.8.8', '255.255.255.255', '192.168.5.255', '224.0.0.1', '0.0.0.0'];
    for (let round = 0; round < 2; round++) {
      for (const a of addresses) {
        const dst = parseAddress(a, 4)!;
        const got = kept.routeOutput(4, dst, 0, null);
        expect(got, a).toEqual(fresh.routeOutput(4, parseAddress(a, 4)!, 0, null));
        // The answer is not tied to the caller's array (a packet record is reused).
        const src = got.src === null ? null : got.src.slice();
        dst[0] = 0x01020304;
        expect(got.src, a).toEqual(src);
        // With a source (a packet's own, as output routing of a later packet asks).
        for (const from of ['10.0.0.3', '127.0.0.1', '192.168.5.1', '10.9.9.9']) {
          const words = parseAddress(from, 4)!;
          const to = parseAddress(a, 4)!;
          const withSrc = kept.routeOutput(4, to, 0, words);
          expect(withSrc, `${from} > ${a}`).toEqual(fresh.routeOutput(4, parseAddress(a, 4)!, 0, parseAddress(from, 4)!));
          const before = JSON.stringify(withSrc);
          words[0] = 0x01020304;
          to[0] = 0x01020304;
          expect(JSON.stringify(withSrc), `${from} > ${a}`).toBe(before);
        }
        // Input routing of an arriving packet, kept or walked.
        const eth0 = kept.byName.get('eth0')!;
        expect(kept.routeInput(4, parseAddress('10.0.0.77', 4)!, parseAddress(a, 4)!, 0, eth0, false), a).toEqual(fresh.routeInput(4, parseAddress('10.0.0.77', 4)!, parseAddress(a, 4)!, 0, fresh.byName.get('eth0')!, false));
      }
    }
    // A mark or a source goes past the kept answers.
    expect(kept.routeOutput(4, parseAddress('10.100.0.1', 4)!, 0, parseAddress('10.0.0.3', 4)!).src).toEqual(parseAddress('10.0.0.3', 4));
  });
});
