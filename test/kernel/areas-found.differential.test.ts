// The disagreements the area generators (areas-generate.ts) found, minimised, each against the
// kernel with real sockets: the same rules and probes in a real pod and in a simulated one.
import { namedDifferential, type NamedCase } from './connect-differential.js';
import type { SimProbe } from './generate.js';
import { describeKernel } from './harness.js';

const local = (dst: string, uid = 1000, mark?: number): SimProbe => ({ from: 'local', uid, gid: uid, dst, ...(mark === undefined ? {} : { mark }) });
const remote = (src: string, dst = '10.0.0.2:8080'): SimProbe => ({ from: 'remote', src, dst });
const t = (name: string, ...lines: string[]): string => `*${name}\n${lines.join('\n')}\nCOMMIT\n`;
const NOTRACK_LO = t('raw', '-A OUTPUT -p tcp -o lo -j CT --notrack', '-A PREROUTING -p tcp -i lo -j CT --notrack');

const CASES: readonly NamedCase[] = [
  {
    // xt_ct_target: a packet that carries a template already (here the ctevents one, zone 0) is
    // left alone by a later CT rule: the SYN-ACK is looked up in zone 0, not in the SYN's zone 3,
    // finds nothing, and is INVALID.
    name: 'a second CT rule is ignored: the SYN-ACK keeps the first template',
    rules4: t('raw', '-A OUTPUT -p tcp -j CT --ctevents new,destroy', '-A OUTPUT -o eth0 -j CT --zone 3', '-A PREROUTING -i eth0 -j CT --zone 3') + t('filter', '-A OUTPUT -p tcp -m conntrack --ctstate INVALID -j DROP'),
    listen: [8080],
    probes: [remote('10.1.0.6'), remote('10.1.0.5')],
  },
  {
    name: 'CT --notrack after a CT template is ignored',
    rules4: t('raw', '-A OUTPUT -p tcp -m tcp --dport 80 -j CT --ctevents new', '-A OUTPUT -p tcp -j CT --notrack') + t('filter', '-A OUTPUT -m conntrack --ctstate UNTRACKED -j DROP'),
    listen: [8080],
    probes: [local('10.7.7.7:80'), local('10.7.7.7:443')],
  },
  {
    // The RST answering an untracked SYN is RELATED without an entry: raw's notrack leaves it
    // alone, conntrack finds no connection for it (INVALID), and an UNTRACKED rule misses it.
    name: 'the RST answering an untracked SYN is not untracked (IPv4 and IPv6)',
    rules4: NOTRACK_LO + t('filter', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -j REJECT --reject-with tcp-reset'),
    rules6: NOTRACK_LO + t('filter', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -j REJECT --reject-with tcp-reset'),
    listen: [8081],
    probes: [local('127.0.0.1:8081'), local('[::1]:8081')],
  },
  {
    name: 'the RST answering an untracked SYN is INVALID',
    rules4: NOTRACK_LO + t('filter', '-A OUTPUT -m conntrack --ctstate INVALID -j DROP', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -m tcp --dport 8081 -j REJECT --reject-with tcp-reset'),
    rules6: NOTRACK_LO + t('filter', '-A OUTPUT -m conntrack --ctstate INVALID -j DROP', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -m tcp --dport 8081 -j REJECT --reject-with tcp-reset'),
    listen: [8081],
    probes: [local('127.0.0.1:8081'), local('[::1]:8081'), local('127.0.0.1:8082')],
  },
  {
    // Its INVALID verdict in OUTPUT clears the mark: back in on lo, raw may untrack it.
    name: 'the RST answering an untracked SYN is untracked by raw when it comes back in on lo',
    rules4: NOTRACK_LO + t('filter', '-A INPUT -m conntrack --ctstate INVALID -j DROP', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -j REJECT --reject-with tcp-reset'),
    rules6: NOTRACK_LO + t('filter', '-A INPUT -m conntrack --ctstate UNTRACKED -p tcp -j REJECT --reject-with tcp-reset'),
    listen: [8081],
    probes: [local('127.0.0.1:8081'), local('[::1]:8082'), local('[::1]:8081')],
  },
  {
    name: 'the ICMP error answering an untracked SYN is INVALID, and never untracked by raw',
    rules4: t('raw', '-A OUTPUT -o lo -j CT --notrack', '-A PREROUTING -i lo -j CT --notrack') + t('filter', '-A OUTPUT -m conntrack --ctstate INVALID -p icmp -j DROP', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p tcp -m tcp --dport 8081 -j REJECT'),
    listen: [8081],
    probes: [local('127.0.0.1:8081'), local('127.0.0.1:8082')],
  },
  {
    name: 'the ICMP error answering an untracked SYN is still INVALID back in on lo',
    rules4: t('raw', '-A OUTPUT -o lo -j CT --notrack', '-A PREROUTING -i lo -j CT --notrack') + t('filter', '-A INPUT -m conntrack --ctstate INVALID -p icmp -j DROP', '-A OUTPUT -p tcp -m tcp --dport 8081 -j REJECT'),
    listen: [8081],
    probes: [local('127.0.0.1:8081')],
  },
  {
    name: 'the ICMP error answering an untracked SYN passes an UNTRACKED DROP',
    rules4: t('raw', '-A OUTPUT -o lo -j CT --notrack', '-A PREROUTING -i lo -j CT --notrack') + t('filter', '-A OUTPUT -p tcp -m tcp --dport 8081 -j REJECT', '-A OUTPUT -m conntrack --ctstate UNTRACKED -p icmp -j DROP'),
    listen: [8081],
    probes: [local('127.0.0.1:8081')],
  },
  {
    // fib_rule_match: ((rule mark ^ mark) & mask) != 0 skips the rule; the rule's mark is kept as
    // given. Every packet of a socket carries its SO_MARK, the handshake's ACK too.
    name: 'fwmark 0x4000/0xff matches marks whose low byte is 0 (0 too); SO_MARK on every packet',
    rules4: '',
    listen: [8080],
    ipBatch: ['rule add fwmark 0x4000/0xff pref 1000 lookup 101', 'route add prohibit 10.96.0.0/12 table 101'],
    options: { ipRules: [{ fwmark: 0x4000, mask: 0xff, table: 101, priority: 1000, family: 4 }], routes: [{ dst: '10.96.0.0/12', type: 'prohibit', table: 101 }] },
    probes: [local('10.96.0.10:80'), local('10.96.0.10:80', 0, 0x100), local('10.96.0.10:80', 0, 0x1), local('10.96.0.10:80', 0, 0x4001)],
  },
];

describeKernel('found by the area generators: Netns.connect vs real sockets', () => {
  namedDifferential(CASES);
});
