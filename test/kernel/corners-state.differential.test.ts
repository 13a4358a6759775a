// Conntrack's TCP state machine, SO_ORIGINAL_DST, the socket match and connect() to non-unicast
// addresses, against the kernel with
// real sockets: packets of one exchange that conntrack sees out of order (a SYN it never saw, an
// ACK before the SYN-ACK), the lookup SO_ORIGINAL_DST makes by the socket's own addresses, and
// the socket lookup `-m socket` makes for an arriving packet.
import { namedDifferential, namedLocal, namedRemote, saveTable, type NamedCase } from './connect-differential.js';
import { describeKernel } from './harness.js';

const local = namedLocal;
const remote = namedRemote;
const table = saveTable;
const filter = table('filter');
// A conntrack match makes the namespace track connections (CT --notrack alone does not).
const TRACKED = filter('-A INPUT -m conntrack --ctstate RELATED -j ACCEPT');
const SYN_ONLY = '-p tcp -m tcp --tcp-flags SYN,ACK SYN';
const SYNACK_ONLY = '-p tcp -m tcp --tcp-flags SYN,ACK SYN,ACK';

// An ACK conntrack takes up mid-stream (nf_conntrack_tcp_loose) after a SYN it never saw: REDIRECTed
// elsewhere, it meets a socket that has no such connection and is answered with a RST.
const MISDIRECTED: readonly NamedCase[] = [
  {
    name: 'misdirected ACK: the SYN untracked, the ACK REDIRECTed to a listener',
    rules4: table('raw')(`-A OUTPUT ${SYN_ONLY} -j CT --notrack`) + table('nat')('-A OUTPUT -p tcp -m tcp --dport 8080 -j REDIRECT --to-ports 4140'),
    listen: [8080, 4140],
    probes: [local('10.0.0.2:8080'), local('127.0.0.1:8080')],
  },
  {
    name: 'misdirected ACK: the SYN untracked, the ACK REDIRECTed to a closed port',
    rules4: table('raw')(`-A OUTPUT ${SYN_ONLY} -j CT --notrack`) + table('nat')('-A OUTPUT -p tcp -m tcp --dport 8080 -j REDIRECT --to-ports 4140'),
    listen: [8080],
    probes: [local('10.0.0.2:8080')],
  },
  {
    name: 'misdirected ACK from a remote client',
    rules4: table('raw')(`-A PREROUTING ${SYN_ONLY} -j CT --notrack`) + table('nat')('-A PREROUTING -p tcp -m tcp --dport 8080 -j REDIRECT --to-ports 4140'),
    listen: [8080, 4140],
    probes: [remote('10.1.0.5', '10.0.0.2:8080')],
  },
];

// An ACK while the entry is still SYN_SENT (its SYN-ACK went untracked) is INVALID.
const SYN_SENT: readonly NamedCase[] = [
  {
    name: 'SYN_SENT: an ACK before conntrack saw the SYN-ACK is INVALID (local)',
    rules4: table('raw')(`-A OUTPUT ${SYNACK_ONLY} -j CT --notrack`) + filter('-A OUTPUT -m conntrack --ctstate INVALID -j DROP'),
    listen: [8080],
    probes: [local('10.0.0.2:8080'), local('127.0.0.1:8080')],
  },
  {
    name: 'SYN_SENT: an ACK before conntrack saw the SYN-ACK is INVALID (remote)',
    rules4: table('raw')(`-A OUTPUT ${SYNACK_ONLY} -j CT --notrack`) + filter('-A INPUT -m conntrack --ctstate INVALID -j DROP'),
    listen: [8080],
    probes: [remote('10.1.0.5', '10.0.0.2:8080')],
  },
  {
    name: 'SYN_SENT: the INVALID ACK is not NEW either',
    rules4: table('raw')(`-A OUTPUT ${SYNACK_ONLY} -j CT --notrack`) + filter('-A INPUT -p tcp -m tcp --dport 8080 -m conntrack --ctstate NEW -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 -m conntrack --ctstate UNTRACKED,ESTABLISHED -j DROP'),
    listen: [8080],
    probes: [local('10.0.0.2:8080')],
  },
];

// SO_ORIGINAL_DST looks the connection up by the socket's addresses in the default zone.
const ORIGINAL_DST: readonly NamedCase[] = [
  {
    name: 'SO_ORIGINAL_DST: an untracked SYN, the ACK tracked',
    rules4: table('raw')(`-A OUTPUT ${SYN_ONLY} -j CT --notrack`) + TRACKED,
    listen: [8080],
    probes: [local('10.0.0.2:8080'), local('127.0.0.1:8080')],
  },
  {
    name: 'SO_ORIGINAL_DST: an untracked SYN from a remote client',
    rules4: table('raw')(`-A PREROUTING ${SYN_ONLY} -j CT --notrack`) + TRACKED,
    listen: [8080],
    probes: [remote('10.1.0.5', '10.0.0.2:8080')],
  },
  {
    name: 'SO_ORIGINAL_DST: nothing tracked',
    rules4: table('raw')('-A OUTPUT -j CT --notrack', '-A PREROUTING -j CT --notrack') + TRACKED,
    listen: [8080],
    probes: [local('10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:8080')],
  },
  {
    name: 'SO_ORIGINAL_DST: a zone-1 SYN, the rest of the connection in the default zone',
    rules4: table('raw')(`-A OUTPUT ${SYN_ONLY} -j CT --zone 1`) + filter('-A INPUT -p tcp -m tcp --sport 8080 -m conntrack --ctstate NEW -j DROP'),
    listen: [8080],
    probes: [local('127.0.0.1:8080'), local('10.0.0.2:8080')],
  },
  {
    name: 'SO_ORIGINAL_DST: every packet in zone 1',
    rules4: table('raw')('-A OUTPUT -p tcp -j CT --zone 1', '-A PREROUTING -p tcp -j CT --zone 1'),
    listen: [8080],
    probes: [local('127.0.0.1:8080'), remote('10.1.0.5', '10.0.0.2:8080')],
  },
];

// -m socket: the socket an arriving packet belongs to.
const TPROXY_BATCH = ['rule add fwmark 1 lookup 100', 'route add local default dev lo table 100'];
const TPROXY_OPTIONS = { ipRules: [{ fwmark: 1, table: 100, family: 4 }], routes: [{ dst: '0.0.0.0/0', dev: 'lo', type: 'local', table: 100 }] };
const SOCKET: readonly NamedCase[] = [
  {
    name: 'socket: a wildcard listener is not found without --nowildcard',
    rules4: filter('-A INPUT -p tcp -m socket -j ACCEPT', '-A INPUT -p tcp -j DROP'),
    listen: [8080, { address: '10.0.0.2', port: 9090 }],
    probes: [local('10.0.0.2:8080'), local('10.0.0.2:9090'), remote('10.1.0.5', '10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:9090')],
  },
  {
    name: 'socket --nowildcard finds a wildcard listener',
    rules4: filter('-A INPUT -p tcp -m socket --nowildcard -j ACCEPT', '-A INPUT -p tcp -j DROP'),
    listen: [8080],
    probes: [local('10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:8080'), local('10.0.0.2:7070')],
  },
  {
    name: 'socket --transparent needs an IP_TRANSPARENT socket',
    rules4: filter('-A INPUT -p tcp -m socket --transparent --nowildcard -j ACCEPT', '-A INPUT -p tcp -j DROP'),
    listen: [{ port: 8080, transparent: true }, 9090],
    probes: [remote('10.1.0.5', '10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:9090')],
  },
  {
    name: 'socket in PREROUTING: only the answers to local connections',
    rules4: table('mangle')('-A PREROUTING -p tcp -m socket -j MARK --set-xmark 0x7/0xffffffff') + filter('-A INPUT -p tcp -m mark --mark 0x7 -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 -j ACCEPT', '-A INPUT -p tcp -j DROP'),
    listen: [8080],
    probes: [local('10.1.0.5:80'), local('10.0.0.2:8080'), remote('10.1.0.5', '10.0.0.2:8080')],
  },
  {
    name: 'socket --restore-skmark: the answer takes the mark of the socket it comes back to',
    rules4: table('mangle')('-A PREROUTING -p tcp -m socket --restore-skmark -j ACCEPT') + filter('-A INPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN,ACK -m mark ! --mark 0x5 -j DROP'),
    listen: [8080],
    probes: [local('10.0.0.2:8080', { mark: 5 }), local('10.0.0.2:8080', { mark: 6 }), local('10.0.0.2:8080')],
  },
  {
    name: 'socket (IPv6): a wildcard listener, a bound one, --nowildcard',
    rules4: '',
    rules6: filter('-A INPUT -p tcp -m tcp --dport 8080 -m socket --nowildcard -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 9090 -m socket -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 7070 -m socket -j ACCEPT', '-A INPUT -p tcp -m tcp --syn -j DROP'),
    listen: [8080, 7070, { address: 'fd00::2', port: 9090 }],
    probes: [local('[fd00::2]:8080'), local('[fd00::2]:9090'), local('[fd00::2]:7070'), remote('fd00:1::5', '[fd00::2]:9090')],
  },
  {
    name: 'socket --transparent: a TPROXY pod connects out from its client address',
    rules4: table('mangle')('-A PREROUTING -p tcp -m socket --transparent -j MARK --set-xmark 0x1/0xffffffff'),
    listen: [],
    ipBatch: TPROXY_BATCH, options: TPROXY_OPTIONS, worldBatch: ['route add 10.9.0.7/32 via 10.0.0.2'],
    probes: [local('10.1.0.5:80', { src: '10.9.0.7', transparent: true }), local('10.1.0.5:80')],
  },
  {
    // inet_bind: EADDRNOTAVAIL for an address the namespace does not own, unless IP_TRANSPARENT.
    name: 'bind: a source the pod does not own needs IP_TRANSPARENT; one it owns does not',
    rules4: '', listen: [8080],
    probes: [local('10.1.0.5:80', { src: '10.9.0.7' }), local('10.1.0.5:80', { src: '10.0.0.2' }), local('127.0.0.1:8080', { src: '127.0.0.5' }), local('[fd00:1::5]:80', { src: 'fd00::7' })],
  },
  {
    name: 'nft socket: transparent, wildcard and mark of the socket a packet belongs to',
    rules4: '', listen: [8080, { address: '10.0.0.2', port: 9090 }, { port: 7070, transparent: true }],
    nft: [
      'table inet t {',
      '  chain in {',
      '    type filter hook input priority 0; policy accept;',
      '    tcp dport 8080 tcp flags syn socket wildcard 1 accept',
      '    tcp dport 9090 tcp flags syn socket wildcard 0 accept',
      '    tcp dport 7070 tcp flags syn socket transparent 1 accept',
      '    tcp dport 6060 tcp flags syn socket transparent 0 accept',
      '    tcp flags syn drop',
      '  }',
      '}',
      '',
    ].join('\n'),
    probes: [local('10.0.0.2:8080'), local('10.0.0.2:9090'), local('10.0.0.2:7070'), local('10.0.0.2:6060'), remote('10.1.0.5', '10.0.0.2:9090'), local('[fd00::2]:8080')],
  },
];

// connect() refuses a broadcast or multicast destination before any packet leaves.
const NON_UNICAST: readonly NamedCase[] = [
  {
    name: 'connect() to a broadcast or multicast address fails (ENETUNREACH)',
    rules4: table('nat')('-A OUTPUT -p tcp -j REDIRECT --to-ports 8080'), rules6: table('nat')('-A OUTPUT -p tcp -j REDIRECT --to-ports 8080'),
    listen: [8080],
    probes: [local('127.255.255.255:80'), local('10.0.0.255:80'), local('224.0.0.1:80'), local('239.1.2.3:80'), local('255.255.255.255:80'), local('[ff02::1]:80'), local('[ff05::2]:80'), local('10.0.0.254:80')],
  },
];

describeKernel('kernel differential: conntrack TCP states, SO_ORIGINAL_DST, -m socket, non-unicast connect()', () => {
  namedDifferential([...MISDIRECTED, ...SYN_SENT, ...ORIGINAL_DST, ...SOCKET, ...NON_UNICAST]);
});
