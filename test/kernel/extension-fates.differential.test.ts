// Extensions that decide a packet's fate, against the kernel: each case loads rules that use one
// extension into a real pod namespace and into a simulated one, makes the same connections in
// order (state such as recent lists, rate limits and quotas carries from one to the next, as it
// does in the kernel), and outcome, address, port and SO_ORIGINAL_DST must agree, probe by probe.
// (IPv6 rules keep to TCP: dropping neighbour discovery, which the simulator does not model,
// would cut the pod off in the kernel.)
import { namedDifferential, type NamedCase, type NamedProbe } from './connect-differential.js';
import { Rng, type SimProbe } from './generate.js';
import { describeKernel } from './harness.js';

const A = '10.1.0.5';
const B = '10.1.0.6';
const remote = (src: string, dst = '10.0.0.2:8080'): SimProbe => ({ from: 'remote', src, dst });
const local = (dst: string, uid = 1000): SimProbe => ({ from: 'local', uid, gid: uid, dst });
const filter = (...lines: string[]): string => `*filter\n${lines.join('\n')}\nCOMMIT\n`;
const table = (name: string, ...lines: string[]): string => `*${name}\n${lines.join('\n')}\nCOMMIT\n`;

const CASES: readonly NamedCase[] = [
  { name: 'NFQUEUE without a reader drops', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -j NFQUEUE --queue-num 3'), listen: [8080, 8081], probes: [remote(A), remote(A, '10.0.0.2:8081')] },
  { name: 'NFQUEUE --queue-bypass lets the packet on', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -j NFQUEUE --queue-num 3 --queue-bypass', '-A INPUT -p tcp -m tcp --dport 8080 -j DROP'), listen: [8080], probes: [remote(A)] },
  { name: 'NFQUEUE in OUTPUT', rules4: filter('-A OUTPUT -p tcp -m tcp --dport 8080 -j NFQUEUE'), listen: [8080], probes: [local('127.0.0.1:8080'), local('10.7.7.7:80')] },
  { name: 'length of a SYN (60 bytes)', rules4: filter('-A INPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN -m length --length 60 -j DROP'), listen: [8080], probes: [remote(A)] },
  { name: 'length outside the SYN', rules4: filter('-A INPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN -m length ! --length 60 -j DROP', '-A INPUT -m length --length 0:51 -j DROP'), listen: [8080], probes: [remote(A), local('127.0.0.1:8080')] },
  { name: 'length of an IPv6 SYN (80 bytes)', rules4: '', rules6: filter('-A INPUT -p tcp -m tcp --tcp-flags SYN,ACK SYN -m length --length 80 -j DROP'), listen: [8080], probes: [{ from: 'remote', src: 'fd00:1::5', dst: '[fd00::2]:8080' }, local('[::1]:8080')] },
  { name: 'ttl of an arriving packet', rules4: filter('-A INPUT -i eth0 -m ttl --ttl-eq 64 -j DROP'), listen: [8080], probes: [remote(A), local('127.0.0.1:8080')] },
  { name: 'ttl lt/gt', rules4: filter('-A INPUT -m ttl --ttl-lt 64 -j DROP', '-A INPUT -m ttl --ttl-gt 64 -j DROP'), listen: [8080], probes: [remote(A), local('127.0.0.1:8080')] },
  { name: 'TTL target then ttl match', rules4: table('mangle', '-A PREROUTING -i eth0 -j TTL --ttl-set 5') + filter('-A INPUT -m ttl --ttl-eq 5 -j DROP'), listen: [8080], probes: [remote(A), local('127.0.0.1:8080')] },
  { name: 'hl of IPv6 packets', rules4: '', rules6: filter('-A INPUT -i eth0 -p tcp -m hl ! --hl-eq 64 -j DROP', '-A INPUT -i lo -p tcp -m hl --hl-eq 64 -j DROP'), listen: [8080], probes: [{ from: 'remote', src: 'fd00:1::5', dst: '[fd00::2]:8080' }, local('[::1]:8080')] },
  { name: 'DSCP target then dscp and tos matches', rules4: table('mangle', '-A PREROUTING -p tcp -m tcp --dport 8080 -j DSCP --set-dscp 10', '-A PREROUTING -p tcp -m tcp --dport 8081 -j TOS --set-tos 0x10/0xff') + filter('-A INPUT -m dscp --dscp 10 -j DROP', '-A INPUT -m tos --tos 0x10/0x3f -j DROP'), listen: [8080, 8081, 8082], probes: [remote(A), remote(A, '10.0.0.2:8081'), remote(A, '10.0.0.2:8082')] },
  { name: 'pkttype unicast', rules4: filter('-A INPUT -i eth0 -m pkttype --pkt-type unicast -j DROP', '-A INPUT -i lo -m pkttype ! --pkt-type unicast -j DROP'), listen: [8080], probes: [remote(A), local('127.0.0.1:8080')] },
  { name: 'physdev on a routed packet', rules4: filter('-A INPUT -m physdev --physdev-is-bridged -j DROP', '-A INPUT -m physdev --physdev-in eth0 -j DROP'), listen: [8080], probes: [remote(A)] },
  { name: 'physdev negated on a routed packet', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -m physdev ! --physdev-is-bridged -j DROP'), listen: [8080, 8081], probes: [remote(A), remote(A, '10.0.0.2:8081')] },
  {
    name: 'recent: the second connection within 60 s is dropped (Shorewall SSH limit)',
    rules4: filter(
      '-A INPUT -p tcp -m tcp --dport 8080 -m conntrack --ctstate NEW -m recent --set --name SSH --mask 255.255.255.255 --rsource',
      '-A INPUT -p tcp -m tcp --dport 8080 -m conntrack --ctstate NEW -m recent --update --seconds 60 --hitcount 2 --name SSH --mask 255.255.255.255 --rsource -j DROP',
    ),
    listen: [8080],
    probes: [remote(A), remote(A), remote(B), remote(A)],
  },
  { name: 'recent: --set then ! --rcheck on the same packet', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -m recent --set --name X', '-A INPUT -p tcp -m tcp --dport 8080 -m recent ! --rcheck --name X -j DROP'), listen: [8080], probes: [remote(A)] },
  { name: 'recent: --rdest, --remove', rules4: filter('-A OUTPUT -p tcp -m tcp --dport 8080 -m recent --rcheck --rdest --name D -j DROP', '-A OUTPUT -p tcp -m tcp --dport 8080 -m recent --set --rdest --name D', '-A INPUT -p tcp -m tcp --dport 8081 -m recent --remove --rdest --name D'), listen: [8080, 8081], probes: [local('127.0.0.1:8080'), local('127.0.0.1:8080'), local('127.0.0.1:8081'), local('127.0.0.1:8080')] },
  { name: 'limit: a burst of 2 SYNs a minute', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -m limit --limit 1/min --limit-burst 2 -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -j DROP'), listen: [8080], probes: [remote(A), remote(B), remote(A), remote(B)] },
  { name: 'hashlimit per source address', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -m hashlimit --hashlimit-upto 1/min --hashlimit-burst 1 --hashlimit-mode srcip --hashlimit-name t -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -j DROP'), listen: [8080], probes: [remote(A), remote(A), remote(B), remote(B)] },
  { name: 'hashlimit-above with no mode', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -m hashlimit --hashlimit-above 1/hour --hashlimit-burst 2 --hashlimit-name u -j DROP'), listen: [8080], probes: [remote(A), remote(B), remote(A)] },
  { name: 'quota of SYN bytes', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -m quota --quota 130 -j ACCEPT', '-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -j DROP'), listen: [8080], probes: [remote(A), remote(B), remote(A)] },
  { name: 'connlimit counts the new connection itself', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 --tcp-flags SYN,ACK SYN -m connlimit --connlimit-above 0 -j DROP', '-A INPUT -p tcp -m tcp --dport 8081 --tcp-flags SYN,ACK SYN -m connlimit --connlimit-upto 1 --connlimit-mask 24 -j DROP'), listen: [8080, 8081], probes: [remote(A), remote(A, '10.0.0.2:8081')] },
  { name: 'time: after a date in the past, before one in the future', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -m time --datestart 2020-01-01 -j DROP', '-A INPUT -p tcp -m tcp --dport 8081 -m time --datestop 2001-01-01 -j DROP', '-A INPUT -p tcp -m tcp --dport 8082 -m time --datestart 2037-01-01 -j DROP'), listen: [8080, 8081, 8082], probes: [remote(A), remote(A, '10.0.0.2:8081'), remote(A, '10.0.0.2:8082')] },
  {
    // The estimators tick every 8 s from the load, so every probe here sees a rate of 0.
    name: 'rateest before the estimator first ticks: the rate is 0',
    rules4: table('mangle', '-A PREROUTING -p tcp -j RATEEST --rateest-name r --rateest-interval 8s --rateest-ewmalog 16s', '-A PREROUTING -p tcp -j RATEEST --rateest-name s --rateest-interval 8s --rateest-ewmalog 32s') + filter(
      '-A INPUT -p tcp -m tcp --dport 8080 -m rateest --rateest r --rateest-gt --rateest-pps 0 -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8081 -m rateest --rateest r --rateest-lt --rateest-bps 8 -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8082 -m rateest --rateest r --rateest-eq --rateest-bps 0 --rateest-pps 0 -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8083 -m rateest --rateest1 r --rateest-eq --rateest-bps --rateest2 s -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8084 -m rateest --rateest-delta --rateest r --rateest-bps1 1mbit --rateest-gt --rateest-bps2 2mbit -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8085 -m rateest --rateest r ! --rateest-lt --rateest-pps 1 -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8086 -m rateest --rateest-delta --rateest1 r --rateest-pps1 5 --rateest-gt --rateest-pps2 3 --rateest2 s -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8087 -m rateest --rateest1 r --rateest-gt --rateest-pps --rateest2 s -j REJECT',
    ),
    listen: [8080, 8081, 8082, 8083, 8084, 8085, 8086, 8087],
    probes: [8080, 8081, 8082, 8083, 8084, 8085, 8086, 8087, 8080, 8081].map((p) => remote(A, `10.0.0.2:${p}`)),
  },
  {
    name: 'rateest (IPv6) before the estimator first ticks',
    rules4: '',
    rules6: table('mangle', '-A PREROUTING -p tcp -j RATEEST --rateest-name r6 --rateest-interval 8s --rateest-ewmalog 16s') + filter(
      '-A INPUT -p tcp -m tcp --dport 8080 -m rateest --rateest r6 --rateest-lt --rateest-pps 1 -j REJECT',
      '-A INPUT -p tcp -m tcp --dport 8081 -m rateest --rateest r6 --rateest-gt --rateest-bps 0 -j REJECT',
    ),
    listen: [8080, 8081],
    probes: [{ from: 'remote', src: 'fd00:1::5', dst: '[fd00::2]:8080' }, { from: 'remote', src: 'fd00:1::5', dst: '[fd00::2]:8081' }],
  },
  { name: 'NETMAP in OUTPUT and POSTROUTING', rules4: table('nat', '-A OUTPUT -d 10.9.9.0/24 -j NETMAP --to 127.0.0.0/24', '-A POSTROUTING -o eth0 -j NETMAP --to 10.0.0.0/24'), listen: [8080], probes: [local('10.9.9.1:8080'), local('10.7.7.7:80')] },
  { name: 'NETMAP in PREROUTING', rules4: table('nat', '-A PREROUTING -d 10.0.0.2/32 -p tcp -m tcp --dport 8081 -j NETMAP --to 10.0.0.3/32', '-A PREROUTING -d 10.0.0.0/24 -p tcp -m tcp --dport 8080 -j NETMAP --to 10.0.0.0/24'), listen: [8080, 8081], probes: [remote(A, '10.0.0.2:8081'), remote(A)] },
  { name: 'CHECKSUM, AUDIT, IDLETIMER, CLASSIFY continue', rules4: table('mangle', '-A POSTROUTING -p tcp -j CHECKSUM --checksum-fill', '-A POSTROUTING -j CLASSIFY --set-class 1:10', '-A INPUT -j AUDIT --type accept', '-A INPUT -j IDLETIMER --timeout 10 --label idle'), listen: [8080], probes: [remote(A), local('127.0.0.1:8080')] },
  // iptables-nft writes no test for these (add_nft_tcpudp, add_nft_tcp): the rules match every tcp packet.
  { name: 'tcp ! --dport 0:65535 tests nothing', rules4: filter('-A INPUT -p tcp -m tcp ! --dport 0:65535 -j DROP'), listen: [8080], probes: [remote(A)] },
  { name: 'tcp --tcp-flags NONE SYN tests nothing', rules4: filter('-A INPUT -p tcp -m tcp --dport 8080 -m tcp --tcp-flags NONE SYN -j DROP'), listen: [8080, 8081], probes: [remote(A), remote(A, '10.0.0.2:8081')] },
  { name: 'udp ! --sport 0:65535 tests nothing (IPv6, tcp probe untouched)', rules4: '', rules6: filter('-A INPUT -p udp -m udp ! --sport 0:65535 -j DROP', '-A INPUT -p tcp -m tcp ! --tcp-flags NONE NONE -j REJECT --reject-with tcp-reset'), listen: [8080], probes: [{ from: 'remote', src: 'fd00:1::5', dst: '[fd00::2]:8080' }] },
  { name: 'ecn, tcpmss, cgroup, realm, devgroup on plain packets', rules4: filter('-A INPUT -p tcp -m ecn --ecn-tcp-cwr -j DROP', '-A INPUT -p tcp -m tcpmss --mss 0:1000 -j DROP', '-A INPUT -m realm --realm 1 -j DROP', '-A INPUT -m devgroup ! --src-group 0 -j DROP', '-A OUTPUT -m cgroup ! --path / -j DROP'), listen: [8080], probes: [remote(A), local('127.0.0.1:8080')] },
];

// The virtual clock starts at the wall clock, for the time matches.
const clock = Date.now() / 1000;

describeKernel('extension fates: Netns.connect vs real sockets', () => {
  namedDifferential(CASES.map((c) => ({ ...c, options: { clock } })));
});

// HMARK: the mark is the kernel's jhash of the tuple, so a wrong hash shows. HMARK in mangle
// (PREROUTING for remote clients, OUTPUT for local ones), then nat REDIRECTs each possible mark
// to its own port (9000 + mark - offset): the port a probe lands on is its mark. Random options
// (tuple items, prefix lengths, port masks and sets, proto mask, rnd, mod, offset, ct), random
// sources and source ports, IPv4 and IPv6.
function hmarkCases(count: number): NamedCase[] {
  const out: NamedCase[] = [];
  for (let i = 0; i < count; i++) {
    const r = new Rng(1400 + i);
    const v6 = i % 3 === 2;
    const local = !v6 && i % 3 === 1;
    const full = v6 ? 128 : 32;
    const mod = r.int(2, 6);
    const offset = r.int(0, 3) === 0 ? undefined : r.int(0, 1000);
    const base = offset ?? 0;
    const opts: string[] = [];
    const tuple: string[] = [];
    const pick = (item: string, option: () => string): void => {
      const c = r.int(0, 2);
      if (c === 1) tuple.push(item);
      else if (c === 2) opts.push(option());
    };
    pick('src', () => `--hmark-src-prefix ${r.int(0, full)}`);
    pick('dst', () => `--hmark-dst-prefix ${r.int(0, full)}`);
    if (r.int(0, 4) === 0) pick('spi', () => `--hmark-spi-mask 0x${r.int(0, 0xffffffff).toString(16)}`);
    else {
      pick('sport', () => `--hmark-sport-mask 0x${r.int(0, 0xffff).toString(16)}`);
      pick('dport', () => `--hmark-dport-mask 0x${r.int(0, 0xffff).toString(16)}`);
    }
    if (r.int(0, 3) === 0) opts.push(r.int(0, 2) === 0 ? `--hmark-spi 0x${r.int(0, 0xffffffff).toString(16)}` : `--hmark-sport ${r.int(0, 0xffff)} --hmark-dport ${r.int(0, 0xffff)}`);
    pick('proto', () => `--hmark-proto-mask ${r.int(0, 0xff)}`);
    if (r.int(0, 3) === 0) tuple.push('ct');
    if (tuple.length === 0 && opts.length === 0) tuple.push('src');
    const hmark = [tuple.length > 0 ? `--hmark-tuple ${tuple.join(',')}` : '', ...opts, `--hmark-rnd 0x${r.int(0, 0xffffffff).toString(16)}`, `--hmark-mod ${mod}`, offset === undefined ? '' : `--hmark-offset ${offset}`].filter((x) => x !== '').join(' ');
    const hook = local ? 'OUTPUT' : 'PREROUTING';
    const redirects = Array.from({ length: mod }, (_, k) => `-A ${hook} -p tcp -m mark --mark ${base + k} -j REDIRECT --to-ports ${9000 + k}`);
    const rules = table('mangle', `-A ${hook} -p tcp -j HMARK ${hmark}`) + table('nat', ...redirects);
    const probes: SimProbe[] = [];
    const used = new Set<number>();
    for (let k = 0; k < 6; k++) {
      let sport = r.int(20000, 30000);
      while (used.has(sport)) sport++;
      used.add(sport);
      const port = r.int(0, 1) === 0 ? 8080 : 8081;
      if (local) probes.push({ from: 'local', uid: 1000, gid: 1000, dst: `${r.int(0, 1) === 0 ? '127.0.0.1' : '10.0.0.2'}:${port}`, sport });
      else if (v6) probes.push({ from: 'remote', src: `fd00:${r.int(1, 0xffff).toString(16)}::${r.int(1, 0xffff).toString(16)}`, dst: `[fd00::2]:${port}`, sport });
      else probes.push({ from: 'remote', src: `10.${r.int(1, 200)}.${r.int(0, 255)}.${r.int(1, 254)}`, dst: `10.0.0.2:${port}`, sport });
    }
    out.push({
      name: `HMARK ${i}: ${hook} ${hmark}`,
      rules4: v6 ? '' : rules,
      ...(v6 ? { rules6: rules } : {}),
      listen: [8080, 8081, ...Array.from({ length: mod }, (_, k) => 9000 + k)],
      probes,
    });
  }
  return out;
}

describeKernel('HMARK: the mark of random tuples and options, Netns.connect vs real sockets', () => {
  namedDifferential(hmarkCases(Number(process.env.HMARK_CASES ?? 48)));
});

// connlimit across connections: every probe keeps its connection open (in the kernel too), so
// the earlier ones are counted, and connlimit decides the Nth.
const kept = (src: string, dst = '10.0.0.2:8080'): NamedProbe => ({ from: 'remote', src, dst, keep: true });
const keptLocal = (dst: string): NamedProbe => ({ from: 'local', uid: 1000, gid: 1000, dst, keep: true });
const SYN_RESET = '-p tcp -m tcp --tcp-flags FIN,SYN,RST,ACK SYN';
const CONNLIMIT_CASES: readonly NamedCase[] = [
  {
    name: 'connlimit: the third connection from one address is over 2',
    rules4: filter(`-A INPUT ${SYN_RESET} -m tcp --dport 8080 -m connlimit --connlimit-above 2 --connlimit-mask 32 --connlimit-saddr -j REJECT --reject-with tcp-reset`),
    listen: [8080],
    probes: [kept(A), kept(A), kept(A), kept(B), kept(A), kept(B), kept(B)],
  },
  {
    name: 'connlimit: a /24 counts its addresses together',
    rules4: filter(`-A INPUT ${SYN_RESET} -m tcp --dport 8080 -m connlimit --connlimit-above 1 --connlimit-mask 24 -j REJECT --reject-with tcp-reset`),
    listen: [8080],
    probes: [kept(A), kept(B), kept('10.2.0.5'), kept('10.2.0.9'), kept('10.1.0.77')],
  },
  {
    name: 'connlimit: --connlimit-daddr counts connections to the destination',
    rules4: filter(`-A INPUT ${SYN_RESET} -m tcp --dport 8080 -m connlimit --connlimit-above 2 --connlimit-daddr -j REJECT --reject-with tcp-reset`),
    listen: [8080],
    probes: [kept(A), kept(B), kept('10.2.0.5'), kept('10.3.0.5')],
  },
  {
    name: 'connlimit: --connlimit-upto accepts up to N, then the default DROP',
    rules4: filter(`-A INPUT ${SYN_RESET} -m tcp --dport 8080 -m connlimit --connlimit-upto 2 -j ACCEPT`, `-A INPUT ${SYN_RESET} -m tcp --dport 8080 -j REJECT --reject-with tcp-reset`),
    listen: [8080],
    probes: [kept(A), kept(A), kept(A), kept(B)],
  },
  {
    name: 'connlimit: local connections in OUTPUT, by destination',
    rules4: filter(`-A OUTPUT ${SYN_RESET} -m connlimit --connlimit-above 1 --connlimit-daddr -j REJECT --reject-with tcp-reset`),
    listen: [8080, 8081],
    probes: [keptLocal('127.0.0.1:8080'), keptLocal('127.0.0.1:8081'), keptLocal('10.0.0.2:8080'), keptLocal('10.0.0.2:8081')],
  },
  {
    name: 'connlimit (IPv6): a /64 counts its addresses together',
    rules4: '',
    rules6: filter(`-A INPUT ${SYN_RESET} -m tcp --dport 8080 -m connlimit --connlimit-above 2 --connlimit-mask 64 -j REJECT --reject-with tcp-reset`),
    listen: [8080],
    probes: [kept('fd00:1::5', '[fd00::2]:8080'), kept('fd00:1::6', '[fd00::2]:8080'), kept('fd00:1::7', '[fd00::2]:8080'), kept('fd00:2::5', '[fd00::2]:8080')],
  },
];

describeKernel('connlimit across kept connections: Netns.connect vs real sockets', () => {
  namedDifferential(CONNLIMIT_CASES);
});

// rateest after the estimator's first interval (2 s from the load): the first connection's SYN
// and ACK (60 + 52 bytes; IPv6 80 + 72) are averaged in at the tick (ewma_log 1), and the
// probes 2.5 s later read exactly that rate (28 B/s; IPv6 38 B/s), before the second tick.
function rateestAfterTick(v6: boolean): NamedCase {
  const bps = v6 ? 38 : 28;
  const rules = table('mangle', '-A PREROUTING -p tcp -j RATEEST --rateest-name r --rateest-interval 2s --rateest-ewmalog 4s') + filter(
    `-A INPUT -p tcp -m tcp --dport 8080 -m rateest --rateest r --rateest-eq --rateest-bps ${bps * 8} -j REJECT`,
    `-A INPUT -p tcp -m tcp --dport 8081 -m rateest --rateest r --rateest-eq --rateest-bps ${(bps - 1) * 8} -j REJECT`,
    `-A INPUT -p tcp -m tcp --dport 8082 -m rateest --rateest-delta --rateest r --rateest-bps1 ${(bps + 2) * 8} --rateest-eq --rateest-bps2 16 -j REJECT`,
    '-A INPUT -p tcp -m tcp --dport 8083 -m rateest --rateest r --rateest-eq --rateest-pps 0 -j REJECT',
    '-A INPUT -p tcp -m tcp --dport 8084 -m rateest --rateest r --rateest-gt --rateest-bps 0 -j REJECT',
  );
  const src = v6 ? 'fd00:1::5' : A;
  const to = (port: number): string => (v6 ? `[fd00::2]:${port}` : `10.0.0.2:${port}`);
  const p = (port: number, after?: number): NamedProbe => ({ from: 'remote', src, dst: to(port), keep: true, ...(after === undefined ? {} : { after }) });
  return {
    name: `rateest ${v6 ? '(IPv6) ' : ''}after the first interval reads the averaged rate`,
    rules4: v6 ? '' : rules,
    ...(v6 ? { rules6: rules } : {}),
    listen: [8080, 8081, 8082, 8083, 8084],
    probes: [p(8080), p(8080, 2.5), p(8081), p(8082), p(8083), p(8084)],
  };
}

describeKernel('rateest across an estimator interval: Netns.connect (with advance) vs real sockets', () => {
  namedDifferential([rateestAfterTick(false), rateestAfterTick(true)]);
});
