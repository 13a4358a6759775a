// The idioms real nft rule sets decide packets with — interface-name verdict maps and sets
// (Docker 29), `ct state vmap` (fw4, NixOS), NAT written without `to`, `redirect to PORT`, NAT
// through a map to address and port, ct helper objects, named limits, service names, catch-all
// set elements, `define` in a table block — against the kernel: each case loads its rules into a
// real pod namespace and into a simulated one, makes the same connections in order, and outcome,
// address, port and SO_ORIGINAL_DST must agree probe by probe, with both evaluators.
import { beforeAll, it } from 'vitest';
import { describeNftKernel, kernelConnectMany, type KernelConnectReport } from './harness.js';
import { expectAsKernel, kernelCasesOf, local, remote, type IdiomCase } from './idiom-case.js';


export const IDIOM_CASES: readonly IdiomCase[] = [
  {
    name: 'iifname vmap and a named ifname set decide the input chain',
    nft: `table inet f {
	set trusted {
		type ifname
		elements = { "veth0", "lo", "eth9" }
	}
	chain input {
		type filter hook input priority filter; policy drop;
		ct state vmap { established : accept, related : accept, invalid : drop }
		iifname vmap { "lo" : accept, "eth0" : jump wan }
	}
	chain wan {
		tcp dport 22 accept
		tcp dport 8080 iifname @trusted accept
	}
}
`,
    listen: [22, 80, 8080],
    probes: [remote(22), remote(80), remote(8080), local('127.0.0.1:80'), local('10.0.0.2:8080')],
    expect: ['local', 'dropped', 'dropped', 'local', 'local'],
  },
  {
    name: 'oifname vmap through a named ifname map (Docker 29 shape)',
    nft: `table ip docker-bridges {
	map filter-out-jumps {
		type ifname : verdict
		elements = { "eth0" : jump out-eth0, "docker0" : drop }
	}
	chain out-eth0 {
		tcp dport 443 accept
		reject
	}
	chain filter-OUTPUT {
		type filter hook output priority filter; policy accept;
		oifname vmap @filter-out-jumps
	}
}
`,
    listen: [80],
    probes: [local('10.9.0.1:443'), local('10.9.0.1:80'), local('127.0.0.1:80')],
    expect: ['remote', 'refused', 'local'],
  },
  {
    name: 'ct state vmap lets the replies of outbound connections in (policy drop)',
    nft: `table inet filter {
	chain input {
		type filter hook input priority filter; policy drop;
		ct state vmap { invalid : drop, established : accept, related : accept }
		iifname "lo" accept
	}
}
`,
    listen: [80],
    probes: [local('10.9.0.1:443'), remote(80), local('127.0.0.1:80')],
    expect: ['remote', 'dropped', 'local'],
  },
  {
    name: 'a concatenation with an interface name and a wildcard',
    nft: `table inet f {
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		iifname . tcp dport { "eth0" . 22, "lo" . 80 } accept
		iifname "e*" tcp dport 8080 accept
	}
}
`,
    listen: [22, 80, 8080],
    probes: [remote(22), remote(80), remote(8080)],
    expect: ['local', 'dropped', 'local'],
  },
  {
    name: 'dnat and snat written without to, redirect to a bare port',
    nft: `table ip nat {
	chain output {
		type nat hook output priority -100; policy accept;
		ip daddr 10.96.0.10 tcp dport 80 dnat 10.0.0.2:8080
		ip daddr 10.96.0.11 tcp dport 80 redirect to 8081
	}
	chain input {
		type nat hook input priority 100; policy accept;
		tcp dport 8082 snat 10.0.0.2
	}
}
`,
    listen: [8080, 8081, 8082],
    probes: [local('10.96.0.10:80'), local('10.96.0.11:80'), remote(8082)],
    expect: ['local', 'local', 'local'],
  },
  {
    name: 'NAT to a mapped address and port (anonymous map and named map)',
    nft: `table ip nat {
	map svc {
		type ipv4_addr . inet_service : ipv4_addr . inet_service
		elements = { 10.96.0.20 . 80 : 10.0.0.2 . 8081 }
	}
	chain output {
		type nat hook output priority -100; policy accept;
		meta l4proto tcp dnat ip to ip daddr . tcp dport map { 10.96.0.10 . 80 : 10.0.0.2 . 8080, 10.96.0.10 . 443 : 10.0.0.2 . 8443 }
		meta l4proto tcp dnat ip to ip daddr . tcp dport map @svc
	}
}
`,
    listen: [8080, 8081, 8443],
    probes: [local('10.96.0.10:80'), local('10.96.0.10:443'), local('10.96.0.20:80'), local('10.96.0.10:81')],
    expect: ['local', 'local', 'local', 'remote'],
  },
  {
    name: 'ct helper objects, ct helper set and the ct helper match',
    nft: `table inet raw {
	ct helper ftp-standard {
		type "ftp" protocol tcp
		l3proto inet
	}
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		tcp dport 21 ct helper set "ftp-standard"
	}
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 2121 ct helper "ftp" drop
	}
}
`,
    listen: [21, 2121],
    probes: [remote(21), remote(2121)],
    expect: ['local', 'local'],
  },
  {
    name: 'meta protocol, ip version, service names, define in a table block, counter in a set',
    nft: `table inet f {
	define admin = 10.1.0.5
	set web {
		type inet_service
		counter
		elements = { http, https }
	}
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		meta protocol ip ip version 4 ip saddr $admin tcp dport ssh accept
		tcp dport @web accept
		meta protocol ip6 accept
	}
}
`,
    listen: [22, 80, 443, 8080],
    probes: [remote(22), remote(22, '10.1.0.6'), remote(80, '10.1.0.6'), remote(443), remote(8080)],
    expect: ['local', 'dropped', 'local', 'local', 'dropped'],
  },
  {
    name: 'a named limit object shared by two rules',
    nft: `table inet f {
	limit ssh-rate {
		rate over 1/minute burst 2 packets
	}
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport { 22, 2222 } tcp flags syn / syn,ack limit name "ssh-rate" drop
	}
}
`,
    listen: [22, 2222],
    probes: [remote(22), remote(2222), remote(22), remote(2222)],
    expect: ['local', 'local', 'dropped', 'dropped'],
  },
  {
    name: 'flag tests keep their operator: value / mask, != value / mask, ! flags',
    nft: `table inet f {
	chain output {
		type filter hook output priority filter; policy accept;
		tcp dport 9 ct state new tcp flags != syn / syn,ack drop
		tcp dport 10 ct state new tcp flags syn / syn,ack drop
		tcp dport 11 ct state new tcp flags ! ack drop
		tcp dport 12 ct status ! dnat drop
	}
}
`,
    listen: [],
    probes: [local('10.9.0.1:9'), local('10.9.0.1:10'), local('10.9.0.1:11'), local('10.9.0.1:12')],
    expect: ['remote', 'dropped', 'dropped', 'dropped'],
  },
  {
    name: 'a bridge table and a log statement change nothing for local traffic',
    nft: `table bridge filter {
	chain forward {
		type filter hook forward priority filter; policy drop;
	}
}
table inet f {
	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 80 log prefix "web " accept
		tcp dport 81 drop
	}
}
`,
    listen: [80, 81],
    probes: [remote(80), remote(81)],
    expect: ['local', 'dropped'],
  },
  {
    name: 'catch-all elements (*) decide what no other element matches, in a verdict map and a named map',
    nft: `table inet f {
	map ports {
		type inet_service : verdict
		elements = { 22 : accept, * : drop }
	}
	chain input {
		type filter hook input priority filter; policy accept;
		ip saddr vmap { 10.1.0.6 : drop, * : jump svc }
	}
	chain svc {
		tcp dport vmap @ports
	}
}
`,
    listen: [22, 80],
    probes: [remote(22), remote(80), remote(22, '10.1.0.6')],
    expect: ['local', 'dropped', 'dropped'],
  },
];

describeNftKernel('nft idioms of real rule sets: Netns.connect vs real sockets', () => {
  const kernel = new Map<IdiomCase, KernelConnectReport>();
  beforeAll(async () => {
    const reports = await kernelConnectMany(kernelCasesOf(IDIOM_CASES));
    IDIOM_CASES.forEach((c, i) => kernel.set(c, reports[i]!));
  }, 300_000);

  it.for(IDIOM_CASES)('$name', (c) => expectAsKernel(c, kernel.get(c)!));
});
