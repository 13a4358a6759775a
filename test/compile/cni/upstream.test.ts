// The reference CNI plugins' own test expectations (containernetworking/plugins v1.9.1,
// Apache-2.0, Copyright CNI authors): plugins/meta/portmap/portmap_iptables_test.go and
// portmap_nftables_test.go, pkg/ip/ipmasq_nftables_linux_test.go; and flannel's
// (flannel-io/flannel v0.28.9, Apache-2.0) pkg/trafficmngr/iptables masqRules count. The expected
// values are copied from those tests; the nftables ones are knftables' fake dumps, compared after
// replaying our transactions into the state they leave and sorting both as the tests' dumps are
// sorted (table, chains, rules grouped by chain, then elements).
import { describe, expect, it } from 'vitest';
import { cniChainName, dnatChain, markMasqChain, portmapNftTransaction, setMarkChain, topLevelDnatChain, type PortmapConfig, type PortMapEntry } from '../../../src/compile/cni/portmap.js';
import { nftMasqTransaction } from '../../../src/compile/cni/ipmasq.js';
import { flannelRules } from '../../../src/compile/cni/flannel.js';

const LONG_ID = 'icee6giejonei6sohng6ahngee7laquohquee9shiGo7fohferakah3Feiyoolu2pei7ciPhoh7shaoX6vai3vuf0ahfaeng8yohb9ceu0daez5hashee8ooYai5wa3y';

const MAPPINGS: readonly PortMapEntry[] = [
  { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
  { hostPort: 8081, containerPort: 80, protocol: 'tcp' },
  { hostPort: 8080, containerPort: 81, protocol: 'udp' },
  { hostPort: 8082, containerPort: 82, protocol: 'udp' },
  { hostPort: 8083, containerPort: 83, protocol: 'tcp', hostIP: '192.168.0.2' },
  { hostPort: 8084, containerPort: 84, protocol: 'tcp', hostIP: '0.0.0.0' },
  { hostPort: 8085, containerPort: 85, protocol: 'tcp', hostIP: '2001:db8:a::1' },
  { hostPort: 8086, containerPort: 86, protocol: 'tcp', hostIP: '::' },
];

const CONF: PortmapConfig = { name: 'test', snat: true, markMasqBit: 13, masqAll: false, conditionsV4: ['-a', 'b'], conditionsV6: ['-c', 'd'] };

describe('portmap, iptables backend (portmap_iptables_test.go)', () => {
  it('names the container chain CNI-DN- + SHA-512 of network name and container ID', () => {
    expect(cniChainName('testNetName', LONG_ID, 'DN-')).toBe('CNI-DN-bfd599665540dd91d5d28');
    expect(cniChainName('test', LONG_ID, 'DN-')).toBe('CNI-DN-67e92b96e692a494b6b85');
  });

  it('generates a correct standard container chain (IPv4)', () => {
    const ch = dnatChain(CONF, LONG_ID, MAPPINGS, '10.0.0.2', 24);
    expect(ch.name).toBe('CNI-DN-67e92b96e692a494b6b85');
    expect(ch.entryChains).toEqual(['CNI-HOSTPORT-DNAT']);
    const comment = `dnat name: "test" id: "${LONG_ID}"`;
    expect(ch.entryRules).toEqual([
      ['-m', 'comment', '--comment', comment, '-m', 'multiport', '-p', 'tcp', '--destination-ports', '8080,8081,8083,8084,8085,8086', '-a', 'b'],
      ['-m', 'comment', '--comment', comment, '-m', 'multiport', '-p', 'udp', '--destination-ports', '8080,8082', '-a', 'b'],
    ]);
    expect(ch.rules).toEqual([
      ['-p', 'tcp', '--dport', '8080', '-s', '10.0.0.2/24', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8080', '-s', '127.0.0.1', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8080', '-j', 'DNAT', '--to-destination', '10.0.0.2:80'],
      ['-p', 'tcp', '--dport', '8081', '-s', '10.0.0.2/24', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8081', '-s', '127.0.0.1', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8081', '-j', 'DNAT', '--to-destination', '10.0.0.2:80'],
      ['-p', 'udp', '--dport', '8080', '-s', '10.0.0.2/24', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'udp', '--dport', '8080', '-s', '127.0.0.1', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'udp', '--dport', '8080', '-j', 'DNAT', '--to-destination', '10.0.0.2:81'],
      ['-p', 'udp', '--dport', '8082', '-s', '10.0.0.2/24', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'udp', '--dport', '8082', '-s', '127.0.0.1', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'udp', '--dport', '8082', '-j', 'DNAT', '--to-destination', '10.0.0.2:82'],
      ['-p', 'tcp', '--dport', '8083', '-d', '192.168.0.2', '-s', '10.0.0.2/24', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8083', '-d', '192.168.0.2', '-s', '127.0.0.1', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8083', '-d', '192.168.0.2', '-j', 'DNAT', '--to-destination', '10.0.0.2:83'],
      ['-p', 'tcp', '--dport', '8084', '-s', '10.0.0.2/24', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8084', '-s', '127.0.0.1', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8084', '-j', 'DNAT', '--to-destination', '10.0.0.2:84'],
    ]);
  });

  it('generates a correct standard container chain (IPv6)', () => {
    expect(dnatChain(CONF, LONG_ID, MAPPINGS, '2001:db8::2', 64).rules).toEqual([
      ['-p', 'tcp', '--dport', '8080', '-s', '2001:db8::2/64', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8080', '-j', 'DNAT', '--to-destination', '[2001:db8::2]:80'],
      ['-p', 'tcp', '--dport', '8081', '-s', '2001:db8::2/64', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8081', '-j', 'DNAT', '--to-destination', '[2001:db8::2]:80'],
      ['-p', 'udp', '--dport', '8080', '-s', '2001:db8::2/64', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'udp', '--dport', '8080', '-j', 'DNAT', '--to-destination', '[2001:db8::2]:81'],
      ['-p', 'udp', '--dport', '8082', '-s', '2001:db8::2/64', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'udp', '--dport', '8082', '-j', 'DNAT', '--to-destination', '[2001:db8::2]:82'],
      ['-p', 'tcp', '--dport', '8085', '-d', '2001:db8:a::1', '-s', '2001:db8::2/64', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8085', '-d', '2001:db8:a::1', '-j', 'DNAT', '--to-destination', '[2001:db8::2]:85'],
      ['-p', 'tcp', '--dport', '8086', '-s', '2001:db8::2/64', '-j', 'CNI-HOSTPORT-SETMARK'],
      ['-p', 'tcp', '--dport', '8086', '-j', 'DNAT', '--to-destination', '[2001:db8::2]:86'],
    ]);
  });

  it('without snat, only the DNAT rules', () => {
    expect(dnatChain({ ...CONF, snat: false }, LONG_ID, MAPPINGS, '10.0.0.2', 24).rules).toEqual([
      ['-p', 'tcp', '--dport', '8080', '-j', 'DNAT', '--to-destination', '10.0.0.2:80'],
      ['-p', 'tcp', '--dport', '8081', '-j', 'DNAT', '--to-destination', '10.0.0.2:80'],
      ['-p', 'udp', '--dport', '8080', '-j', 'DNAT', '--to-destination', '10.0.0.2:81'],
      ['-p', 'udp', '--dport', '8082', '-j', 'DNAT', '--to-destination', '10.0.0.2:82'],
      ['-p', 'tcp', '--dport', '8083', '-d', '192.168.0.2', '-j', 'DNAT', '--to-destination', '10.0.0.2:83'],
      ['-p', 'tcp', '--dport', '8084', '-j', 'DNAT', '--to-destination', '10.0.0.2:84'],
    ]);
  });

  it('generates a correct chain with external mark', () => {
    const conf: PortmapConfig = { name: 'test', snat: true, markMasqBit: 13, masqAll: false, externalSetMarkChain: 'PLZ-SET-MARK', conditionsV4: ['-a', 'b'], conditionsV6: ['-c', 'd'] };
    expect(dnatChain(conf, LONG_ID, [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }], '10.0.0.2', 24).rules).toEqual([
      ['-p', 'tcp', '--dport', '8080', '-s', '10.0.0.2/24', '-j', 'PLZ-SET-MARK'],
      ['-p', 'tcp', '--dport', '8080', '-s', '127.0.0.1', '-j', 'PLZ-SET-MARK'],
      ['-p', 'tcp', '--dport', '8080', '-j', 'DNAT', '--to-destination', '10.0.0.2:80'],
    ]);
  });

  it('generates a correct top-level chain and the mark chains', () => {
    expect(topLevelDnatChain()).toEqual({ table: 'nat', name: 'CNI-HOSTPORT-DNAT', entryChains: ['PREROUTING', 'OUTPUT'], entryRules: [['-m', 'addrtype', '--dst-type', 'LOCAL']], rules: [], prependEntry: false });
    expect(setMarkChain(5)).toEqual({ table: 'nat', name: 'CNI-HOSTPORT-SETMARK', entryChains: [], entryRules: [], rules: [['-m', 'comment', '--comment', 'CNI portfwd masquerade mark', '-j', 'MARK', '--set-xmark', '0x20/0x20']], prependEntry: false });
    expect(markMasqChain(5)).toEqual({
      table: 'nat', name: 'CNI-HOSTPORT-MASQ', entryChains: ['POSTROUTING'], entryRules: [['-m', 'comment', '--comment', 'CNI portfwd requiring masquerade']],
      rules: [['-m', 'mark', '--mark', '0x20/0x20', '-j', 'MASQUERADE']], prependEntry: true,
    });
  });
});

/** The state a knftables transaction leaves, one `add` line per object, rule and element. */
function replay(ops: readonly string[]): string[] {
  const objects = new Map<string, string>();
  const rules = new Map<string, string[]>();
  for (const line of ops) {
    const w = line.split(' ');
    const [verb, type] = [w[0]!, w[1]!];
    const name = type === 'table' ? '' : w[4]!;
    if (verb === 'add' && type !== 'rule' && type !== 'element') {
      if (!objects.has(`${type} ${name}`) || line.includes('{')) objects.set(`${type} ${name}`, line);
    } else if (verb === 'add') rules.set(name, [...(rules.get(name) ?? []), line]);
    else if (verb === 'flush') rules.delete(name);
    else throw new Error(line);
  }
  return [...objects.values(), ...[...rules.values()].flat()];
}

/** knftables' fake Dump order: the table, then chains and sets by name, then rules by chain name (in order). */
function dumpOrder(lines: readonly string[]): string {
  const rank = (l: string): number => (l.startsWith('add table') ? 0 : l.startsWith('add rule') ? 2 : 1);
  return lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => {
      const ra = rank(a.l);
      const rb = rank(b.l);
      if (ra !== rb) return ra - rb;
      const na = a.l.split(' ')[4] ?? '';
      const nb = b.l.split(' ')[4] ?? '';
      if (na !== nb) return na < nb ? -1 : 1;
      return a.i - b.i;
    })
    .map((x) => x.l)
    .join('\n');
}

describe('portmap, nftables backend (portmap_nftables_test.go)', () => {
  const id = 'icee6giejonei6so';
  const conf: PortmapConfig = { name: 'test', snat: true, markMasqBit: 13, masqAll: false, conditionsV4: ['a', 'b'], conditionsV6: ['c', 'd'] };

  it('generates correct rules (IPv4, snat)', () => {
    expect(dumpOrder(replay(portmapNftTransaction(conf, id, MAPPINGS, '10.0.0.2')))).toBe(`add table ip cni_hostport { comment "CNI portmap plugin" ; }
add chain ip cni_hostport hostip_hostports
add chain ip cni_hostport hostports
add chain ip cni_hostport hostports_all
add chain ip cni_hostport masquerading { type nat hook postrouting priority 100 ; }
add chain ip cni_hostport output { type nat hook output priority -100 ; }
add chain ip cni_hostport prerouting { type nat hook prerouting priority -100 ; }
add rule ip cni_hostport hostports tcp dport 8080 dnat to 10.0.0.2:80 comment "icee6giejonei6so"
add rule ip cni_hostport hostports tcp dport 8081 dnat to 10.0.0.2:80 comment "icee6giejonei6so"
add rule ip cni_hostport hostports udp dport 8080 dnat to 10.0.0.2:81 comment "icee6giejonei6so"
add rule ip cni_hostport hostports udp dport 8082 dnat to 10.0.0.2:82 comment "icee6giejonei6so"
add rule ip cni_hostport hostports ip daddr 192.168.0.2 tcp dport 8083 dnat to 10.0.0.2:83 comment "icee6giejonei6so"
add rule ip cni_hostport hostports tcp dport 8084 dnat to 10.0.0.2:84 comment "icee6giejonei6so"
add rule ip cni_hostport hostports_all jump hostip_hostports
add rule ip cni_hostport hostports_all jump hostports
add rule ip cni_hostport masquerading ip saddr 10.0.0.2 ip daddr 10.0.0.2 masquerade comment "icee6giejonei6so"
add rule ip cni_hostport masquerading ip saddr 127.0.0.1 ip daddr 10.0.0.2 masquerade comment "icee6giejonei6so"
add rule ip cni_hostport output a b fib daddr type local jump hostports_all
add rule ip cni_hostport prerouting a b fib daddr type local jump hostports_all`);
  });

  it('generates correct rules (IPv6, no snat)', () => {
    expect(dumpOrder(replay(portmapNftTransaction({ ...conf, snat: false }, id, MAPPINGS, '2001:db8::2')))).toBe(`add table ip6 cni_hostport { comment "CNI portmap plugin" ; }
add chain ip6 cni_hostport hostip_hostports
add chain ip6 cni_hostport hostports
add chain ip6 cni_hostport hostports_all
add chain ip6 cni_hostport output { type nat hook output priority -100 ; }
add chain ip6 cni_hostport prerouting { type nat hook prerouting priority -100 ; }
add rule ip6 cni_hostport hostports tcp dport 8080 dnat to [2001:db8::2]:80 comment "icee6giejonei6so"
add rule ip6 cni_hostport hostports tcp dport 8081 dnat to [2001:db8::2]:80 comment "icee6giejonei6so"
add rule ip6 cni_hostport hostports udp dport 8080 dnat to [2001:db8::2]:81 comment "icee6giejonei6so"
add rule ip6 cni_hostport hostports udp dport 8082 dnat to [2001:db8::2]:82 comment "icee6giejonei6so"
add rule ip6 cni_hostport hostports ip6 daddr 2001:db8:a::1 tcp dport 8085 dnat to [2001:db8::2]:85 comment "icee6giejonei6so"
add rule ip6 cni_hostport hostports tcp dport 8086 dnat to [2001:db8::2]:86 comment "icee6giejonei6so"
add rule ip6 cni_hostport hostports_all jump hostip_hostports
add rule ip6 cni_hostport hostports_all jump hostports
add rule ip6 cni_hostport output c d fib daddr type local jump hostports_all
add rule ip6 cni_hostport prerouting c d fib daddr type local jump hostports_all`);
  });
});

describe('ipmasq, nftables backend (ipmasq_nftables_linux_test.go)', () => {
  const addr = (cidr: string): { ip: string; prefixLength: number; subnet: string } => {
    const [ip, len] = cidr.split('/') as [string, string];
    const subnets: Record<string, string> = {
      '192.168.1.1/24': '192.168.1.0/24', '192.168.1.2/24': '192.168.1.0/24', '2001:db8::2/64': '2001:db8::/64', '192.168.99.5/24': '192.168.99.0/24',
      '10.0.0.5/24': '10.0.0.0/24', '10.0.0.6/24': '10.0.0.0/24', '10.0.1.7/24': '10.0.1.0/24', '2001:db8::5/64': '2001:db8::/64', '2001:db8::6/64': '2001:db8::/64',
      '2001:db8:1::7/64': '2001:db8:1::/64',
    };
    return { ip, prefixLength: Number(len), subnet: subnets[cidr]! };
  };
  const containers = [
    { network: 'unit-test', ifname: 'eth0', id: 'one', addrs: ['192.168.1.1/24'] },
    { network: 'unit-test', ifname: 'eth0', id: 'two', addrs: ['192.168.1.2/24', '2001:db8::2/64'] },
    { network: 'unit-test', ifname: 'eth0', id: 'three', addrs: ['192.168.99.5/24'] },
    { network: 'alternate', ifname: 'net1', id: 'three', addrs: ['10.0.0.5/24', '10.0.0.6/24', '10.0.1.7/24', '2001:db8::5/64', '2001:db8::6/64', '2001:db8:1::7/64'] },
  ];

  it('sets up four containers as the test does', () => {
    const ops = containers.flatMap((c) => nftMasqTransaction(c.network, c.ifname, c.id, c.addrs.map(addr)));
    expect(dumpOrder(replay(ops))).toBe(`add table inet cni_plugins_masquerade { comment "Masquerading for plugins from github.com/containernetworking/plugins" ; }
add chain inet cni_plugins_masquerade masq_checks { comment "Masquerade traffic from certain IPs to any (non-multicast) IP outside their subnet" ; }
add chain inet cni_plugins_masquerade postrouting { type nat hook postrouting priority 100 ; }
add rule inet cni_plugins_masquerade masq_checks ip saddr == 192.168.1.1 ip daddr != 192.168.1.0/24 masquerade comment "6fd94d501e58f0aa-287fc69eff0574a2, net: unit-test, if: eth0, id: one"
add rule inet cni_plugins_masquerade masq_checks ip saddr == 192.168.1.2 ip daddr != 192.168.1.0/24 masquerade comment "6fd94d501e58f0aa-d750b2c8f0f25d5f, net: unit-test, if: eth0, id: two"
add rule inet cni_plugins_masquerade masq_checks ip6 saddr == 2001:db8::2 ip6 daddr != 2001:db8::/64 masquerade comment "6fd94d501e58f0aa-d750b2c8f0f25d5f, net: unit-test, if: eth0, id: two"
add rule inet cni_plugins_masquerade masq_checks ip saddr == 192.168.99.5 ip daddr != 192.168.99.0/24 masquerade comment "6fd94d501e58f0aa-a4d4adb82b669cfe, net: unit-test, if: eth0, id: three"
add rule inet cni_plugins_masquerade masq_checks ip saddr == 10.0.0.5 ip daddr != 10.0.0.0/24 masquerade comment "82783ef24bdc7036-acb19d111858e348, net: alternate, if: net1, id: three"
add rule inet cni_plugins_masquerade masq_checks ip saddr == 10.0.0.6 ip daddr != 10.0.0.0/24 masquerade comment "82783ef24bdc7036-acb19d111858e348, net: alternate, if: net1, id: three"
add rule inet cni_plugins_masquerade masq_checks ip saddr == 10.0.1.7 ip daddr != 10.0.1.0/24 masquerade comment "82783ef24bdc7036-acb19d111858e348, net: alternate, if: net1, id: three"
add rule inet cni_plugins_masquerade masq_checks ip6 saddr == 2001:db8::5 ip6 daddr != 2001:db8::/64 masquerade comment "82783ef24bdc7036-acb19d111858e348, net: alternate, if: net1, id: three"
add rule inet cni_plugins_masquerade masq_checks ip6 saddr == 2001:db8::6 ip6 daddr != 2001:db8::/64 masquerade comment "82783ef24bdc7036-acb19d111858e348, net: alternate, if: net1, id: three"
add rule inet cni_plugins_masquerade masq_checks ip6 saddr == 2001:db8:1::7 ip6 daddr != 2001:db8:1::/64 masquerade comment "82783ef24bdc7036-acb19d111858e348, net: alternate, if: net1, id: three"
add rule inet cni_plugins_masquerade postrouting ip daddr == 224.0.0.0/4  return
add rule inet cni_plugins_masquerade postrouting ip6 daddr == ff00::/8  return
add rule inet cni_plugins_masquerade postrouting goto masq_checks`);
  });

  it('hashes a reused address under its own container ("four")', () => {
    const ops = nftMasqTransaction('unit-test', 'eth0', 'four', [addr('192.168.1.1/24')]);
    expect(ops.at(-1)).toBe('add rule inet cni_plugins_masquerade masq_checks ip saddr == 192.168.1.1 ip daddr != 192.168.1.0/24 masquerade comment "6fd94d501e58f0aa-e766de567ef6c543, net: unit-test, if: eth0, id: four"');
  });
});

describe('flannel (pkg/trafficmngr/iptables)', () => {
  it('masqRules: seven rules, the first from POSTROUTING', () => {
    const r = flannelRules('10.0.0.0/16', '10.0.1.0/24', 4, true);
    expect(r.nat).toHaveLength(7);
    expect(r.nat).toEqual([
      '-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG',
      '-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN',
      '-A FLANNEL-POSTRTG -s 10.0.1.0/24 -d 10.0.0.0/16 -m comment --comment "flanneld masq" -j RETURN',
      '-A FLANNEL-POSTRTG -s 10.0.0.0/16 -d 10.0.1.0/24 -m comment --comment "flanneld masq" -j RETURN',
      '-A FLANNEL-POSTRTG ! -s 10.0.0.0/16 -d 10.0.1.0/24 -m comment --comment "flanneld masq" -j RETURN',
      '-A FLANNEL-POSTRTG -s 10.0.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully',
      '-A FLANNEL-POSTRTG ! -s 10.0.0.0/16 -d 10.0.0.0/16 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully',
    ]);
    expect(flannelRules('fd00::/56', 'fd00:0:0:1::/64', 6, false).nat[5]).toBe('-A FLANNEL-POSTRTG -s fd00::/56 ! -d ff00::/8 -m comment --comment "flanneld masq" -j MASQUERADE');
    expect(r.filter).toEqual([
      '-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD',
      '-A FLANNEL-FWD -s 10.0.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT',
      '-A FLANNEL-FWD -d 10.0.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT',
    ]);
  });
});
