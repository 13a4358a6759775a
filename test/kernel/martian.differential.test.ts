// Martian sources (fib_validate_source) against the kernel, with and without policy routing: the
// same rules, routes and probes in a real pod namespace and in a simulated one. Without an
// `ip rule` or a user `local` route the kernel only refuses a source that is one of the host's
// addresses; with either, it looks the source up backwards and refuses one whose route back is
// `local` or `broadcast`, such as the subnet's broadcast address (every TPROXY sidecar and ambient
// pod has such a rule). Whether a probe's SYN reached INPUT shows in a second probe: INPUT notes
// every SYN to port 8080 in a recent list keyed by its destination, and a SYN to 8081 is reset
// when the list has the pod's address.
import { namedDifferential, namedRemote as remote, saveTable, type NamedCase } from './connect-differential.js';
import { describeKernel } from './harness.js';

const filter = saveTable('filter');
const mangle = saveTable('mangle');
const SEEN = filter(
  '-A INPUT -p tcp -m tcp --dport 8080 -m recent --set --name seen --rdest',
  '-A INPUT -p tcp -m tcp --dport 8081 -m recent --rcheck --name seen --rdest -j REJECT --reject-with tcp-reset',
);
/**
 * A first connection (to a closed port) from an ordinary address, then the SYN from `src`, then
 * the check whether it reached INPUT. The first one makes the world learn the pod's link address:
 * the world asks for it in ARP from the packet's own source, and with policy routing the pod does
 * not answer an ARP request from a martian source (arp_process routes the request's sender as an
 * arriving packet's source), so the world's SYN from the broadcast address would not even leave.
 */
const probes = (src: string) => [remote('10.1.0.5', '10.0.0.2:8082'), remote(src, '10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:8081')];
/** The world on 10.0.0.1/16, so that it can send from 10.0.0.255, the pod subnet's broadcast address. */
const WIDE_WORLD = ['addr del 10.0.0.1/24 dev eth0', 'addr add 10.0.0.1/16 dev eth0'];
const FWMARK_RULE = { ipBatch: ['rule add fwmark 1 lookup 100'], options: { ipRules: [{ fwmark: 1, table: 100, family: 4 }] } };
const both = (ip: readonly string[], options: Readonly<Record<string, unknown>>) => ({ ipBatch: ip, options });

const CASES: readonly NamedCase[] = [
  // The subnet's broadcast address as the source.
  { name: 'broadcast source, no policy routing: reaches INPUT (the SYN-ACK to it is lost)', rules4: SEEN, listen: [8080, 8081], worldBatch: WIDE_WORLD, probes: probes('10.0.0.255') },
  { name: 'broadcast source with an ip rule: martian, dropped before INPUT', rules4: SEEN, listen: [8080, 8081], worldBatch: WIDE_WORLD, ...FWMARK_RULE, probes: probes('10.0.0.255') },
  {
    name: 'broadcast source with only a user local route: martian',
    rules4: SEEN, listen: [8080, 8081], worldBatch: WIDE_WORLD,
    ...both(['route add local 10.99.0.0/16 dev lo table 100'], { routes: [{ dst: '10.99.0.0/16', dev: 'lo', type: 'local', table: 100 }] }),
    probes: probes('10.0.0.255'),
  },
  {
    name: 'broadcast source in a TPROXY pod (fwmark rule, local default in table 100): martian',
    rules4: SEEN + mangle('-A PREROUTING -p tcp -m tcp --dport 15001 -j TPROXY --on-port 15006 --tproxy-mark 0x1/0x1'),
    listen: [8080, 8081, { port: 15006, transparent: true }], worldBatch: WIDE_WORLD,
    ...both(['rule add fwmark 1 lookup 100', 'route add local 0.0.0.0/0 dev lo table 100'], { ipRules: [{ fwmark: 1, table: 100, family: 4 }], routes: [{ dst: '0.0.0.0/0', dev: 'lo', type: 'local', table: 100 }] }),
    probes: [...probes('10.0.0.255'), remote('10.1.0.6', '10.0.0.2:15001')],
  },
  { name: 'the network address as the source, with an ip rule: not martian', rules4: SEEN, listen: [8080, 8081], ...FWMARK_RULE, probes: probes('10.0.0.0') },
  // A source the route back to which is local.
  {
    name: 'a source under a user local route in main: martian',
    rules4: SEEN, listen: [8080, 8081],
    ...both(['route add local 10.99.0.0/16 dev lo table main'], { routes: [{ dst: '10.99.0.0/16', dev: 'lo', type: 'local', table: 254 }] }),
    probes: probes('10.99.0.5'),
  },
  {
    name: 'a source under a local route only a fwmark rule reaches: the route back (mark 0) is unicast',
    rules4: SEEN, listen: [8080, 8081],
    ...both(['rule add fwmark 1 lookup 100', 'route add local 10.99.0.0/16 dev lo table 100'], { ipRules: [{ fwmark: 1, table: 100, family: 4 }], routes: [{ dst: '10.99.0.0/16', dev: 'lo', type: 'local', table: 100 }] }),
    probes: probes('10.99.0.5'),
  },
  {
    name: 'a source under a fwmark-0 rule to a local table: every source is martian',
    rules4: SEEN, listen: [8080, 8081],
    ...both(['rule add fwmark 0 lookup 100', 'route add local 10.0.0.0/8 dev lo table 100'], { ipRules: [{ fwmark: 0, table: 100, family: 4 }], routes: [{ dst: '10.0.0.0/8', dev: 'lo', type: 'local', table: 100 }] }),
    probes: [remote('10.1.0.5', '10.0.0.2:8080')],
  },
  // Routes back that fail the lookup pass the check (the reply then goes nowhere).
  {
    name: 'a source with a blackhole route back, with an ip rule: reaches INPUT',
    rules4: SEEN, listen: [8080, 8081],
    ...both(['rule add fwmark 1 lookup 100', 'route add blackhole 10.98.0.0/16'], { ipRules: [{ fwmark: 1, table: 100, family: 4 }], routes: [{ dst: '10.98.0.0/16', type: 'blackhole' }] }),
    probes: probes('10.98.0.5'),
  },
  {
    name: 'a source with an unreachable route back, with an ip rule: reaches INPUT',
    rules4: SEEN, listen: [8080, 8081],
    ...both(['rule add fwmark 1 lookup 100', 'route add unreachable 10.98.0.0/16'], { ipRules: [{ fwmark: 1, table: 100, family: 4 }], routes: [{ dst: '10.98.0.0/16', type: 'unreachable' }] }),
    probes: probes('10.98.0.5'),
  },
  {
    name: 'a source with a prohibit route back, no policy routing: reaches INPUT',
    rules4: SEEN, listen: [8080, 8081],
    ...both(['route add prohibit 10.98.0.0/16'], { routes: [{ dst: '10.98.0.0/16', type: 'prohibit' }] }),
    probes: probes('10.98.0.5'),
  },
];

describeKernel('martian sources: Netns.connect vs real sockets', () => {
  namedDifferential(CASES);
});
