// Anonymous chains (`jump { … }`, `goto { … }`) and IPv4 options against the kernel: each case
// loads its rules into a real pod namespace and into a simulated one, makes the same connections
// in order, and outcome, address, port and SO_ORIGINAL_DST must agree probe by probe, with both
// evaluators; `fmt` must list each case as `nft list ruleset` lists it.
import { beforeAll, expect, it } from 'vitest';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { describeNftKernel, kernelConnectMany, kernelNftListMany, type KernelConnectReport, type KernelNftResult } from './harness.js';
import { expectAsKernel, kernelCasesOf, local, remote, type IdiomCase } from './idiom-case.js';


const CASES: readonly IdiomCase[] = [
  {
    name: 'jump { … } returns to the rule after it; its verdicts end the base chain',
    nft: `table inet f {
	chain input {
		type filter hook input priority filter; policy drop;
		ct state established,related accept
		iifname "lo" accept
		tcp dport { 22, 80, 443 } jump {
			ip saddr 10.1.0.6 drop
			tcp dport 22 ip saddr 10.1.0.0/24 accept
			tcp dport 443 reject with tcp reset
			ip saddr 10.1.0.7 return
			tcp dport 80 accept
		}
		tcp dport 80 ip saddr 10.1.0.7 counter accept
	}
}
`,
    listen: [22, 80, 443],
    probes: [remote(22), remote(22, '10.1.0.6'), remote(80), remote(443), remote(80, '10.1.0.7'), remote(22, '10.2.0.5'), local('127.0.0.1:443')],
    expect: ['local', 'dropped', 'local', 'refused', 'local', 'dropped', 'local'],
  },
  {
    name: 'goto { … } does not come back: the policy of the base chain decides after it',
    nft: `table ip f {
	chain output {
		type filter hook output priority filter; policy drop;
		oifname "lo" accept
		ct state established accept
		tcp dport 25 goto {
			ip daddr 10.9.0.1 accept
		}
		tcp dport 25 accept
		tcp dport 80 accept
	}
}
`,
    listen: [],
    probes: [local('10.9.0.1:25'), local('10.9.0.2:25'), local('10.9.0.2:80')],
    expect: ['remote', 'dropped', 'remote'],
  },
  {
    name: 'NAT in an anonymous chain of a nat chain, beside a named chain it jumps to',
    nft: `table ip nat {
	chain output {
		type nat hook output priority -100; policy accept;
		meta skuid 1337 return
		tcp dport { 80, 8080 } jump {
			ip daddr 127.0.0.1 return
			tcp dport 8080 jump to-proxy
			meta l4proto tcp redirect to :15001
		}
	}

	chain to-proxy {
		meta l4proto tcp redirect to :15006
	}
}
`,
    listen: [15001, 15006],
    probes: [local('10.9.0.1:80'), local('10.9.0.1:8080'), local('10.9.0.1:80', 1337), local('127.0.0.1:80')],
    expect: ['local', 'local', 'remote', 'refused'],
  },
  {
    name: 'ip option: a connection carries no IPv4 options (missing matches, exists and fields do not)',
    nft: `table inet f {
	chain output {
		type filter hook output priority filter; policy accept;
		tcp dport 1 ip option rr exists drop
		tcp dport 2 ip option ssrr missing drop
		tcp dport 3 ip option lsrr type != 1 drop
		tcp dport 4 ip option ra value 0 drop
		tcp dport 5 ip option rr missing goto {
			drop
		}
	}
}
`,
    listen: [],
    probes: [local('10.9.0.1:1'), local('10.9.0.1:2'), local('10.9.0.1:3'), local('10.9.0.1:4'), local('10.9.0.1:5')],
    expect: ['remote', 'dropped', 'remote', 'remote', 'dropped'],
  },
  {
    name: 'a constant in a dynamic set key: a connection to 80 adds its source with port 22',
    nft: `table ip t {
	set s {
		type ipv4_addr . inet_service
		flags dynamic,timeout
	}

	chain input {
		type filter hook input priority filter; policy accept;
		tcp dport 80 add @s { ip saddr . 22 timeout 1m }
		ip saddr . tcp dport @s drop
	}
}
`,
    listen: [22, 80],
    probes: [remote(22), remote(80), remote(22), remote(22, '10.1.0.6')],
    expect: ['local', 'local', 'dropped', 'local'],
  },
];

describeNftKernel('anonymous chains, ip options and constants in set keys: Netns.connect and fmt vs the kernel and nft', () => {
  const kernel = new Map<IdiomCase, KernelConnectReport>();
  const listings = new Map<IdiomCase, KernelNftResult>();
  beforeAll(async () => {
    const reports = await kernelConnectMany(kernelCasesOf(CASES));
    const lists = await kernelNftListMany(CASES.map((c) => c.nft));
    CASES.forEach((c, i) => {
      kernel.set(c, reports[i]!);
      listings.set(c, lists[i]!);
    });
  }, 300_000);

  it.for(CASES)('$name', (c) => {
    expectAsKernel(c, kernel.get(c)!);
    const l = listings.get(c)!;
    if (!l.ok) expect.fail(`nft refused the case:\n${l.stderr}`);
    expect(formatNftRuleset(c.nft)).toBe(l.list);
  });
});
