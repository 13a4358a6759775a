// Corners of the engine found by probing rule sets other people wrote, each against the kernel
// with real sockets: the same rules, interfaces, routes and probes in a real pod namespace and in
// a simulated one, probe by probe in order; outcome, address, port, SO_ORIGINAL_DST and the source
// address the accepting side saw must agree.
import { namedDifferential, namedLocal, namedRemote, saveTable, type NamedCase } from './connect-differential.js';
import { describeKernel, kernelSave } from './harness.js';
import { loadNetns } from './sim.js';
import { expect, it } from 'vitest';

const local = namedLocal;
const remote = namedRemote;
const table = saveTable;
const filter = table('filter');
const nat = table('nat');

// a. The source the accepting side saw: SNAT and MASQUERADE on the way out, none on the way in.
const SOURCE: readonly NamedCase[] = [
  { name: 'source: a local connection to the pod address comes from it', rules4: '', listen: [8080], probes: [local('10.0.0.2:8080'), local('127.0.0.1:8080'), local('[fd00::2]:8080'), local('[::1]:8080')] },
  { name: 'source: the world sees the pod address', rules4: '', listen: [], probes: [local('10.1.0.5:80'), local('[fd00:1::5]:80')] },
  { name: 'source: a remote client is seen as itself', rules4: '', listen: [8080], probes: [remote('10.1.0.5', '10.0.0.2:8080'), remote('fd00:1::5', '[fd00::2]:8080')] },
  { name: 'source: SNAT to a host address is seen by the world', rules4: nat('-A POSTROUTING -o eth0 -p tcp -j SNAT --to-source 10.0.0.2'), listen: [], probes: [local('10.1.0.5:80')] },
  { name: 'source: SNAT of a local connection is seen by the listener', rules4: nat('-A POSTROUTING -o lo -p tcp -j SNAT --to-source 127.0.0.9'), listen: [8080], probes: [local('127.0.0.1:8080')] },
  { name: 'source: SNAT in nat INPUT is seen by the listener', rules4: nat('-A INPUT -p tcp -m tcp --dport 8080 -j SNAT --to-source 127.0.0.7'), listen: [8080], probes: [local('127.0.0.1:8080'), remote('10.1.0.5', '10.0.0.2:8080')] },
  { name: 'source: MASQUERADE out of eth0', rules4: nat('-A POSTROUTING -o eth0 -j MASQUERADE'), rules6: nat('-A POSTROUTING -o eth0 -j MASQUERADE'), listen: [], probes: [local('10.1.0.5:80'), local('[fd00:1::5]:80')] },
];

// b. Source address selection: the primary address of the subnet towards the gateway, a
// secondary address's local route naming its primary, RFC 6724 for IPv6.
const SECONDARY = ['addr add 10.0.0.3/24 dev eth0'];
const SELECTION: readonly NamedCase[] = [
  {
    name: 'selection: a secondary address in the subnet is not the source',
    rules4: '', listen: [8080], ipBatch: SECONDARY,
    options: { interfaces: { eth0: ['10.0.0.2/24', '10.0.0.3/24', 'fd00::2/64'] } },
    probes: [local('10.1.0.5:80'), local('10.0.0.3:8080'), local('10.0.0.2:8080')],
  },
  {
    name: 'selection: the primary is the first address added',
    rules4: '', listen: [8080],
    ipBatch: ['addr del 10.0.0.2/24 dev eth0', 'addr add 10.0.0.3/24 dev eth0', 'addr add 10.0.0.2/24 dev eth0', 'route add default via 10.0.0.1 dev eth0'],
    options: { interfaces: { eth0: ['10.0.0.3/24', '10.0.0.2/24', 'fd00::2/64'] } },
    probes: [local('10.1.0.5:80'), local('10.0.0.2:8080'), local('10.0.0.3:8080')],
  },
  {
    name: 'selection: the address of the subnet that holds the gateway, not the first one',
    rules4: '', listen: [8080],
    ipBatch: ['addr del 10.0.0.2/24 dev eth0', 'addr add 192.168.7.2/24 dev eth0', 'addr add 10.0.0.2/24 dev eth0', 'route add default via 10.0.0.1 dev eth0'],
    options: { interfaces: { eth0: ['192.168.7.2/24', '10.0.0.2/24', 'fd00::2/64'] }, gateway: ['10.0.0.1', 'fd00::1'] },
    probes: [local('10.1.0.5:80'), local('192.168.7.2:8080'), local('10.0.0.2:8080')],
  },
  {
    name: 'selection: IPv6 longest matching prefix and label',
    rules4: '', listen: [8080],
    ipBatch: ['addr add 2001:db8:1::2/64 dev eth0 nodad', 'addr add fd00:2::2/64 dev eth0 nodad'],
    worldBatch: ['route add 2001:db8:1::/64 dev eth0', 'route add fd00:2::/64 dev eth0'],
    options: { interfaces: { eth0: ['10.0.0.2/24', 'fd00::2/64', '2001:db8:1::2/64', 'fd00:2::2/64'] } },
    probes: [local('[2001:db8:7::5]:80'), local('[fd00:3::5]:80'), local('[2003::5]:80'), local('[fd00:1::5]:80'), local('[2001:db8:1::2]:8080'), local('[fd00:2::2]:8080'), local('[::1]:8080')],
  },
];

// c. MASQUERADE out of lo: never a host-scope address.
const MASQUERADE_LO: readonly NamedCase[] = [
  {
    name: 'MASQUERADE -o lo: IPv4 takes 10.0.0.2, not 127.0.0.1',
    rules4: nat('-A POSTROUTING -o lo -j MASQUERADE'), listen: [8080],
    probes: [local('127.0.0.1:8080'), local('10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:8080')],
  },
  {
    name: 'MASQUERADE -o lo: IPv6 takes the destination, fd00::2, not ::1',
    rules4: '', rules6: nat('-A POSTROUTING -o lo -j MASQUERADE'), listen: [8080],
    probes: [local('[fd00::2]:8080'), local('[::1]:8080')],
  },
  {
    name: 'MASQUERADE -o lo after a REDIRECT',
    rules4: nat('-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080', '-A POSTROUTING -o lo -j MASQUERADE'),
    rules6: nat('-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 8080', '-A POSTROUTING -o lo -j MASQUERADE'),
    listen: [8080],
    probes: [local('10.1.0.5:80'), local('[fd00:1::5]:80')],
  },
];

// d. An IPv6 socket connecting to an IPv4-mapped address makes an IPv4 connection.
const MAPPED: readonly NamedCase[] = [
  { name: 'mapped: ::ffff:127.0.0.1 reaches the IPv4 listener', rules4: '', listen: [8080], probes: [local('[::ffff:127.0.0.1]:8080'), local('[::ffff:10.0.0.2]:8080'), local('[::ffff:10.1.0.5]:80')] },
  { name: 'mapped: a listener on 127.0.0.1 only', rules4: '', listen: [{ address: '127.0.0.1', port: 8080 }], probes: [local('[::ffff:127.0.0.1]:8080')] },
  { name: 'mapped: IPv4 rules apply, IPv6 rules do not', rules4: filter('-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j REJECT --reject-with tcp-reset'), rules6: filter('-A OUTPUT -j DROP'), listen: [8080, 8081], probes: [local('[::ffff:127.0.0.1]:8080'), local('[::ffff:127.0.0.1]:8081')] },
  { name: 'mapped: IPv4 nat, SO_ORIGINAL_DST names the IPv4 address', rules4: nat('-A OUTPUT -d 10.96.0.10/32 -p tcp -j REDIRECT --to-ports 8080'), rules6: nat('-A OUTPUT -p tcp -j REDIRECT --to-ports 8081'), listen: [8080, 8081], probes: [local('[::ffff:10.96.0.10]:80')] },
];

// e. IPv6 addrtype: the address class (UNICAST, MULTICAST, UNSPEC) and the route (LOCAL,
// UNREACHABLE) are separate tests, ANDed.
const ADDRTYPE6: readonly NamedCase[] = [
  { name: 'addrtype6: ::1 and the pod address are UNICAST', rules4: '', rules6: filter('-A OUTPUT -p tcp -m addrtype --dst-type UNICAST -m tcp --dport 8080 -j DROP'), listen: [8080, 8081], probes: [local('[::1]:8080'), local('[fd00::2]:8080'), local('[::1]:8081'), local('[fd00:1::5]:8080')] },
  { name: 'addrtype6: UNICAST,LOCAL is both', rules4: '', rules6: filter('-A OUTPUT -p tcp -m addrtype --dst-type UNICAST,LOCAL -j REJECT --reject-with tcp-reset'), listen: [8080], probes: [local('[::1]:8080'), local('[fd00::2]:8080'), local('[fd00:1::5]:80')] },
  { name: 'addrtype6: ! --dst-type UNICAST', rules4: '', rules6: filter('-A OUTPUT -p tcp -m addrtype ! --dst-type UNICAST -j DROP'), listen: [8080], probes: [local('[::1]:8080'), local('[fd00:1::5]:80')] },
  { name: 'addrtype6: LOCAL,UNREACHABLE is either route', rules4: '', rules6: filter('-A OUTPUT -p tcp -m addrtype --dst-type LOCAL,UNREACHABLE -j DROP'), listen: [8080], probes: [local('[::1]:8080'), local('[fd00:1::5]:80')] },
  { name: 'addrtype6: --src-type UNICAST on the answers', rules4: '', rules6: filter('-A INPUT -p tcp -m addrtype --src-type UNICAST -m tcp --sport 8080 -j DROP'), listen: [8080], probes: [local('[::1]:8080'), local('[fd00::2]:8081')] },
  { name: 'addrtype6: MULTICAST and UNSPEC never hold for a unicast destination', rules4: '', rules6: filter('-A OUTPUT -p tcp -m addrtype --dst-type MULTICAST -j DROP', '-A OUTPUT -p tcp -m addrtype --dst-type UNSPEC -j DROP'), listen: [8080], probes: [local('[::1]:8080'), local('[fd00:1::5]:80')] },
];

// j. --limit-iface-in in a user chain reached from OUTPUT: the nf_tables back end loads it (in a
// user chain checkentry sees no hooks), and in OUTPUT there is no in-device to limit to.
const LIMIT_IFACE: readonly NamedCase[] = [
  { name: 'addrtype --limit-iface-in in a user chain reached from OUTPUT', rules4: filter(':X - [0:0]', '-A OUTPUT -j X', '-A X -p tcp -m addrtype --dst-type LOCAL --limit-iface-in -m tcp --dport 8080 -j DROP'), listen: [8080, 8081], probes: [local('127.0.0.1:8080'), local('10.0.0.2:8081'), local('10.1.0.5:8080')] },
  { name: 'addrtype --limit-iface-out in a user chain reached from INPUT', rules4: filter(':X - [0:0]', '-A INPUT -j X', '-A X -p tcp -m addrtype --dst-type LOCAL --limit-iface-out -m tcp --dport 8080 -j DROP'), listen: [8080], probes: [local('127.0.0.1:8080'), remote('10.1.0.5', '10.0.0.2:8080')] },
];

// l. recent: --set then ! --rcheck on the same packet finds the address just added.
const RECENT: readonly NamedCase[] = [
  { name: 'recent --set then ! --rcheck on the same packet', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -m recent --set --name T --rsource', '-A INPUT -p tcp -m tcp --dport 8080 -m recent ! --rcheck --name T --rsource -j DROP'), listen: [8080], probes: [remote('10.1.0.5', '10.0.0.2:8080'), local('10.0.0.2:8080')] },
  { name: 'recent --set then ! --update on the same packet', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -m recent --set --name S', '-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -m recent ! --update --name S -j REJECT --reject-with tcp-reset'), listen: [8080], probes: [remote('10.1.0.5', '10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:8080')] },
  { name: 'recent ! --rcheck before any --set', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -m recent ! --rcheck --name U -j DROP', '-A INPUT -p tcp -m tcp --dport 8081 -m recent --set --name U'), listen: [8080, 8081], probes: [remote('10.1.0.5', '10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:8081'), remote('10.1.0.5', '10.0.0.2:8080')] },
];

// k. A policy `local` route for addresses the pod does not own: IPv4 output routing refuses such
// a source unless the socket is IP_TRANSPARENT, so no SYN-ACK or RST leaves from it; connect()
// with the mark fails at once.
const POLICY_LOCAL_BATCH = ['rule add fwmark 1 lookup 100', 'route add local default dev lo table 100'];
const POLICY_LOCAL_OPTIONS = { ipRules: [{ fwmark: 1, table: 100, family: 4 }], routes: [{ dst: '0.0.0.0/0', dev: 'lo', type: 'local', table: 100 }] };
const POLICY_LOCAL: readonly NamedCase[] = [
  {
    name: 'policy local route: a marked SYN to a foreign address reaches a plain listener, which cannot answer',
    rules4: table('mangle')('-A OUTPUT -d 10.1.0.5/32 -p tcp -j MARK --set-xmark 0x1/0xffffffff'), listen: [8080], ipBatch: POLICY_LOCAL_BATCH, options: POLICY_LOCAL_OPTIONS,
    probes: [local('10.1.0.5:8080'), local('10.1.0.5:9090')],
  },
  {
    name: 'policy local route: a transparent listener answers',
    rules4: table('mangle')('-A OUTPUT -d 10.1.0.5/32 -p tcp -j MARK --set-xmark 0x1/0xffffffff'), listen: [{ port: 8080, transparent: true }], ipBatch: POLICY_LOCAL_BATCH, options: POLICY_LOCAL_OPTIONS,
    probes: [local('10.1.0.5:8080')],
  },
  {
    name: 'policy local route: connect() with SO_MARK 1 to a foreign address fails at once',
    rules4: '', listen: [8080], ipBatch: POLICY_LOCAL_BATCH, options: POLICY_LOCAL_OPTIONS,
    probes: [local('10.1.0.5:8080', { mark: 1 }), local('10.0.0.2:8080', { mark: 1 }), local('127.0.0.1:8080', { mark: 1 })],
  },
];

// i. CT --zone: the zone belongs to the packets the template was attached to; the answers are
// looked up again, in the zone their own raw rules give (the default one otherwise).
const raw = table('raw');
const ZONES: readonly NamedCase[] = [
  { name: 'CT --zone on the SYN only: the SYN-ACK is INVALID in the default zone', rules4: raw('-A OUTPUT -d 127.0.0.1/32 -p tcp -m tcp --dport 8080 -j CT --zone 1') + filter('-A INPUT -m conntrack --ctstate INVALID -j DROP'), listen: [8080, 8081], probes: [local('127.0.0.1:8080'), local('127.0.0.1:8081')] },
  { name: 'CT --zone on every local packet: the exchange stays in zone 1', rules4: raw('-A OUTPUT -j CT --zone 1') + filter('-A INPUT -m conntrack --ctstate INVALID -j DROP'), listen: [8080], probes: [local('127.0.0.1:8080'), local('10.0.0.2:8080')] },
  { name: 'CT --zone in PREROUTING for a remote client', rules4: raw('-A PREROUTING -p tcp -m tcp --dport 8080 -j CT --zone 1') + filter('-A OUTPUT -m conntrack --ctstate INVALID -j DROP'), listen: [8080], probes: [remote('10.1.0.5', '10.0.0.2:8080')] },
];

describeKernel('engine corners: what the kernel loads', () => {
  // ip6tables-restore --test takes them all; the kernel's addrtype_mt_checkentry_v1 refuses these.
  const TYPES = ['THROW', 'NAT', 'XRESOLVE', 'PROHIBIT', 'BLACKHOLE', 'BROADCAST', 'UNREACHABLE', 'ANYCAST', 'LOCAL', 'UNSPEC', 'UNICAST,LOCAL'];
  it.for(TYPES)('ip6tables addrtype --dst-type %s', async (type) => {
    const text = filter(`-A OUTPUT -m addrtype --dst-type ${type} -j DROP`);
    const kernel = (await kernelSave(text, 6)).ok;
    const Netns = await loadNetns();
    let ours = true;
    try {
      new Netns({ rules: '', rules6: text, listen: [] });
    } catch {
      ours = false;
    }
    expect(ours).toBe(kernel);
  });
});

describeKernel('engine corners: Netns.connect vs real sockets', () => {
  namedDifferential([...SOURCE, ...SELECTION, ...MASQUERADE_LO, ...MAPPED, ...ADDRTYPE6, ...LIMIT_IFACE, ...RECENT, ...POLICY_LOCAL, ...ZONES]);
});
