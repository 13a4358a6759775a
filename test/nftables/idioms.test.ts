/**
 * Idioms that real nft rule sets decide packets with (Docker 29's interface-name verdict maps,
 * fw4's and NixOS's `ct state vmap`, named sets of interface names), listed as nft 1.0.6 lists
 * them and run by both evaluators. The kernel agrees with every outcome here
 * (test/kernel/nft-idioms.differential.test.ts runs the same shapes with real sockets).
 */
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { formatNftRuleset, nftLoadErrors } from '../../src/nftables/index.js';

const EVALUATORS = ['lowered', 'reference'] as const;

describe('interface names as set and map keys', () => {
  it('a named set of interface names keeps every element, listed as nft lists it', () => {
    const text = 'table inet f {\n\tset ifaces {\n\t\ttype ifname\n\t\telements = { "veth0", "lo", "eth0" }\n\t}\n}\n';
    // nft 1.0.6: a hash set lists its names by their bytes read little-endian, one per line.
    expect(formatNftRuleset(text)).toBe('table inet f {\n\tset ifaces {\n\t\ttype ifname\n\t\telements = { "lo",\n\t\t\t     "eth0",\n\t\t\t     "veth0" }\n\t}\n}\n');
  });

  it('a map keyed by interface names takes more than one element', () => {
    const text = 'table ip t {\n\tchain a {\n\t}\n\n\tmap m {\n\t\ttype ifname : verdict\n\t\telements = { "docker0" : jump a, "br-1" : drop }\n\t}\n}\n';
    expect(nftLoadErrors(text).diagnostics).toEqual([]);
    expect(formatNftRuleset(text)).toContain('elements = { "br-1" : drop,\n\t\t\t     "docker0" : jump a }');
  });

  it('wildcards are intervals: in interval sets they keep their place in byte order', () => {
    const text = 'table inet t {\n\tset s {\n\t\ttype ifname\n\t\tflags interval\n\t\telements = { "lo", "veth0", "eth*" }\n\t}\n\n\tchain c {\n\t\tiifname { "veth0", "lo", "eth*" } accept\n\t}\n}\n';
    const out = formatNftRuleset(text);
    expect(out).toContain('elements = { "eth*",\n\t\t\t     "lo",\n\t\t\t     "veth0" }');
    expect(out).toContain('iifname { "eth*", "lo", "veth0" } accept');
  });

  it('a wildcard needs flags interval in a named set, and is no map value', () => {
    expect(nftLoadErrors('table inet t {\n\tset s { type ifname; elements = { "eth*", "lo" } }\n}\n').diagnostics[0]?.message)
      .toBe("You must add 'flags interval' to your set declaration if you want to add prefix elements");
    expect(nftLoadErrors('table inet t {\n\tmap m { type ipv4_addr : ifname; elements = { 1.1.1.1 : "eth*" } }\n}\n').diagnostics[0]?.message)
      .toBe('Value must be a singleton');
  });
});

const DOCKER_LIKE = `table ip docker-bridges {
	map filter-forward-in-jumps {
		type ifname : verdict
		elements = { "docker0" : jump filter-forward-in__docker0, "br-a" : jump filter-forward-in__br-a }
	}
	set ifaces {
		type ifname
		elements = { "veth0", "lo", "eth0" }
	}
	chain filter-forward-in__docker0 {
		tcp dport 80 accept
	}
	chain filter-forward-in__br-a {
		drop
	}
	chain input {
		type filter hook input priority filter; policy drop;
		ct state vmap { established : accept, related : accept, invalid : drop }
		iifname vmap { "lo" : accept, "eth0" : jump wan }
	}
	chain wan {
		tcp dport 22 accept
		iifname @ifaces tcp dport 8080 accept
	}
	chain output {
		type filter hook output priority filter; policy drop;
		ct state vmap { established : accept, related : accept, invalid : drop }
		oifname vmap @filter-forward-in-jumps
		oifname @ifaces tcp dport != 9 accept
	}
}
`;

describe('interface-name verdict maps and sets decide packets', () => {
  for (const evaluator of EVALUATORS) {
    it(`${evaluator}: iifname vmap, named ifname sets and ct state vmap`, () => {
      const ns = new Netns({ nft: DOCKER_LIKE, listen: [22, 80, 8080], evaluator });
      const remote = (port: number) => ns.connect({ from: 'remote', src: '10.1.0.5', dst: `10.0.0.2:${port}` }, { trace: false });
      expect(remote(22)).toMatchObject({ outcome: 'local', originalDestination: '10.0.0.2:22' });
      expect(remote(8080)).toMatchObject({ outcome: 'local' });
      expect(remote(80)).toMatchObject({ outcome: 'dropped' });
      // Out through eth0 (in the set): allowed, and the reply is established.
      expect(ns.connect({ from: 'local', uid: 0, dst: '10.9.0.1:443' }, { trace: false })).toMatchObject({ outcome: 'remote' });
      expect(ns.connect({ from: 'local', uid: 0, dst: '10.9.0.1:9' }, { trace: false })).toMatchObject({ outcome: 'dropped' });
      // lo: out through the set, in through the map's accept.
      expect(ns.connect({ from: 'local', uid: 0, dst: '127.0.0.1:80' }, { trace: false })).toMatchObject({ outcome: 'local', originalDestination: '127.0.0.1:80' });
    });
  }

  for (const evaluator of EVALUATORS) {
    it(`${evaluator}: ct state vmap lets the replies of outbound connections in`, () => {
      const nft = 'table inet f {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\t\tct state vmap { established : accept, related : accept, invalid : drop }\n\t}\n}\n';
      const ns = new Netns({ nft, listen: [80], evaluator });
      expect(ns.connect({ from: 'local', uid: 0, dst: '10.9.0.1:443' }, { trace: false })).toMatchObject({ outcome: 'remote' });
      expect(ns.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:80' }, { trace: false })).toMatchObject({ outcome: 'dropped' });
    });
  }

  for (const evaluator of EVALUATORS) {
    it(`${evaluator}: a concatenation with an interface name`, () => {
      const nft = 'table inet f {\n\tchain input {\n\t\ttype filter hook input priority filter; policy drop;\n\t\tct state established,related accept\n\t\tiifname . tcp dport { "eth0" . 22, "lo" . 80 } accept\n\t\tiifname "e*" tcp dport 8080 accept\n\t}\n}\n';
      const ns = new Netns({ nft, listen: [22, 80, 8080], evaluator });
      const remote = (port: number) => ns.connect({ from: 'remote', src: '10.1.0.5', dst: `10.0.0.2:${port}` }, { trace: false }).outcome;
      expect([remote(22), remote(80), remote(8080)]).toEqual(['local', 'dropped', 'local']);
    });
  }
});
