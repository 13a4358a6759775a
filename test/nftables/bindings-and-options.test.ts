/**
 * Anonymous chains (`jump { … }`, `goto { … }`), IPv4 options (`ip option`), inner header
 * payloads (`@ih`) and segment routing header addresses (`srh sid[N]`). The listings beside the
 * files in test/fixtures/nft-listings (anonymous-chains, ip-options, inner-header-srh) are nft
 * 1.0.6's; every refusal and handle below is what nft 1.0.6 and the kernel (6.18) gave.
 */
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset, nftLoadErrors, parseNftRulesetOrThrow, printNftRuleset } from '../../src/nftables/index.js';

function refusal(text: string): { line: number | undefined; column: number | undefined; message: string } {
  try {
    formatNftRuleset(text);
  } catch (e) {
    if (e instanceof NetfilterSimError) return { line: e.span?.line, column: e.span?.column, message: e.diagnostics[0]!.message };
    throw e;
  }
  throw new Error('accepted');
}
const inChain = (rule: string, family = 'ip', hook = 'input'): string => `table ${family} t {\n\tchain c {\n\t\ttype filter hook ${hook} priority 0;\n\t\t${rule}\n\t}\n}\n`;

describe('anonymous chains', () => {
  it('are chains of the table named as the kernel names them, with the handles it gives', () => {
    // `nft -a list ruleset` of this file: the binding rules have handles 8 and 11, the chain
    // created for each takes the handle before its rules, and the rule that binds them last.
    const rs = parseNftRulesetOrThrow('table inet x {\n\tchain y {\n\t\ttype filter hook input priority 0;\n'
      + '\t\tmeta l4proto { tcp, udp } th dport 53 jump {\n\t\t\tip saddr { 127.0.0.0/8, 172.23.0.0/16 } counter accept\n\t\t\tip6 saddr ::1 counter accept\n\t\t}\n'
      + '\t\tmeta l4proto ipv6-icmp jump { counter accept; }\n\t}\n\tchain z {\n\t}\n}\n');
    const chains = rs.tables[0]!.chains;
    expect(chains.map((c) => [c.name, c.handle, c.binding === true, c.rules.map((r) => r.handle)])).toEqual([
      ['y', 1, false, [8, 11]], ['z', 2, false, []], ['__chain1', 3, true, [5, 6]], ['__chain2', 9, true, [10]],
    ]);
    expect(chains[0]!.rules[0]!.statements.at(-1)).toMatchObject({ kind: 'verdict', verdict: 'jump', chain: '__chain1' });
  });

  it('go with the rule that binds them (delete, flush), and a later file numbers on', () => {
    const base = parseNftRulesetOrThrow('table ip t {\n\tchain c {\n\t\ttcp dport 1 jump { accept; }\n\t\ttcp dport 2 goto { drop; }\n\t}\n}\n');
    expect(base.tables[0]!.chains.map((c) => c.name)).toEqual(['c', '__chain1', '__chain2']);
    // handles: c 1, __chain1 2, its rule 3, the binding rule 4; __chain2 5, 6, 7.
    const deleted = parseNftRulesetOrThrow('delete rule ip t c handle 4\nadd rule ip t c jump { return; }\n', { base });
    expect(deleted.tables[0]!.chains.map((c) => c.name)).toEqual(['c', '__chain2', '__chain3']);
    expect(printNftRuleset(parseNftRulesetOrThrow('delete rule ip t c handle 4\n', { base }))).toBe('table ip t {\n\tchain c {\n\t\ttcp dport 2 goto {\n\t\t\tdrop\n\t\t}\n\t}\n}\n');
    const flushed = parseNftRulesetOrThrow('flush chain ip t c\n', { base });
    expect(flushed.tables[0]!.chains.map((c) => c.name)).toEqual(['c']);
    const replaced = parseNftRulesetOrThrow('replace rule ip t c handle 7 accept\n', { base });
    expect(replaced.tables[0]!.chains.map((c) => c.name)).toEqual(['c', '__chain1']);
  });

  it('are refused where nft and the kernel refuse them, on their line', () => {
    // Inside a chain of a table block, a second level is one scope too many (nft points at the end of `jump`).
    expect(refusal(inChain('jump { jump { accept; }; }'))).toEqual({ line: 4, column: 13, message: 'too many levels of nesting' });
    // In the command form the parser lets it through and the kernel binds no chain to a bound chain's rule.
    expect(refusal('add table ip t\nadd chain ip t c\nadd rule ip t c jump { jump { accept; }; }\n'))
      .toMatchObject({ line: 3, message: 'Could not process rule: Operation not supported' });
    expect(refusal(inChain('jump { accept }'))).toMatchObject({ line: 4, column: 17, message: "syntax error, unexpected '}', expecting newline or semicolon" });
    // nft 1.0.6: "syntax error, unexpected '{', expecting string or '$'" — not in a verdict map.
    expect(refusal(inChain('tcp dport vmap { 22 : jump { accept; }, 23 : drop }')).line).toBe(4);
    // A bound chain is a regular chain: it may not jump to a base chain.
    expect(refusal(inChain('jump {\n\t\t\tjump c\n\t\t}'))).toMatchObject({ line: 5 });
    expect(refusal(inChain('jump { redirect to :80; }')).line).toBe(4);
  });

  const bound = `table inet f {
	chain out {
		type filter hook output priority filter; policy accept;
		tcp dport { 25, 26 } jump {
			ip daddr 10.9.0.1 tcp dport 25 reject with tcp reset
			ip daddr 10.9.0.2 return
			tcp dport 26 drop
		}
		tcp dport 27 goto {
			ip daddr 10.9.0.1 accept
		}
		ip daddr 10.9.0.2 drop
	}
}
`;
  const named = `table inet f {
	chain out {
		type filter hook output priority filter; policy accept;
		tcp dport { 25, 26 } jump a
		tcp dport 27 goto b
		ip daddr 10.9.0.2 drop
	}

	chain a {
		ip daddr 10.9.0.1 tcp dport 25 reject with tcp reset
		ip daddr 10.9.0.2 return
		tcp dport 26 drop
	}

	chain b {
		ip daddr 10.9.0.1 accept
	}
}
`;
  const probes = ['10.9.0.1:25', '10.9.0.1:26', '10.9.0.2:25', '10.9.0.3:26', '10.9.0.1:27', '10.9.0.2:27', '10.9.0.3:25'];

  it('run exactly as the named chains they stand for, with both evaluators', () => {
    const outcomes: string[] = [];
    for (const evaluator of ['lowered', 'reference'] as const) {
      const a = new Netns({ nft: bound, evaluator });
      const b = new Netns({ nft: named, evaluator });
      for (const dst of probes) {
        const ra = a.connect({ from: 'local', uid: 0, dst }, { trace: false });
        const rb = b.connect({ from: 'local', uid: 0, dst }, { trace: false });
        expect({ outcome: ra.outcome, reason: ra.reason }, `${evaluator} ${dst}`).toEqual({ outcome: rb.outcome, reason: rb.reason });
        if (evaluator === 'lowered') outcomes.push(ra.outcome);
      }
    }
    // RETURN comes back to the rule after the binding one (10.9.0.2:25 is dropped there); goto does not.
    expect(outcomes).toEqual(['refused', 'dropped', 'dropped', 'dropped', 'remote', 'remote', 'remote']);
  });

  it('trace steps name the chain __chainN and list the binding rule as nft monitor trace does', () => {
    // `nft -a list ruleset` gives the binding rule handle 7 (the chain 2, its rules 3-5, the anonymous set 6).
    const ns = new Netns({ nft: bound });
    const r = ns.connect({ from: 'local', uid: 0, dst: '10.9.0.2:25' });
    const rules = (r.trace ?? []).filter((e) => e.type === 'rule' || e.type === 'return');
    expect(rules.map((e) => ('chain' in e ? `${e.chain}:${'rule' in e ? e.rule : ''}` : ''))).toEqual(['out:1', '__chain1:2', 'out:3']);
    const first = rules[0]!;
    expect('text' in first ? first.text : '').toBe('tcp dport { 25, 26 } jump {\n\t\t\tip daddr 10.9.0.1 tcp dport 25 reject with tcp reset\n\t\t\tip daddr 10.9.0.2 return\n\t\t\ttcp dport 26 drop\n\t\t} # handle 7');
  });
});

describe('ip option', () => {
  it('is refused where nft refuses it, on its line', () => {
    expect(refusal(inChain('ip option rr exists', 'ip6'))).toMatchObject({ line: 4, column: 3, message: 'cannot use exthdr with ip6' });
    expect(refusal(inChain('ip6 saddr ::1 ip option rr exists', 'inet'))).toMatchObject({ line: 4, column: 17, message: 'cannot use exthdr with ip6' });
    expect(refusal(inChain('ip option rr exists ip6 saddr ::1', 'inet'))).toMatchObject({ line: 4, column: 23, message: 'conflicting protocols specified: ip vs. ip6' });
    expect(refusal(inChain('ip option foo exists'))).toMatchObject({ line: 4, column: 13, message: 'syntax error, unexpected foo, expecting lsrr or rr or ssrr or ra' });
    expect(refusal(inChain('ip option 7 exists'))).toMatchObject({ line: 4, column: 13, message: 'syntax error, unexpected number, expecting lsrr or rr or ssrr or ra' });
    expect(refusal(inChain('ip option rr value 1'))).toMatchObject({ line: 4, column: 3, message: 'unknown ip option type/field' });
    expect(refusal(inChain('ip option ra ptr 1'))).toMatchObject({ line: 4, column: 3, message: 'unknown ip option type/field' });
    expect(refusal(inChain('ip option rr type 256'))).toMatchObject({ line: 4, column: 21, message: 'Value 256 exceeds valid range 0-255' });
    // nft 1.0.6 reads an option's address as an integer.
    expect(refusal(inChain('ip option lsrr addr 1.2.3.4'))).toMatchObject({ line: 4, column: 23, message: 'Could not parse integer' });
    expect(refusal(inChain('ip option rr'))).toMatchObject({ line: 4, column: 15, message: 'syntax error, unexpected newline' });
    // The kernel writes no IPv4 option.
    expect(refusal(inChain('ip option ra value set 3', 'inet'))).toMatchObject({ line: 4, column: 3, message: 'Could not process rule: Operation not supported' });
  });

  it('on the namespace\'s packets, which carry no options: missing is true, exists false, a field never matches', () => {
    const nft = inChain([
      'tcp dport 1 ip option rr exists drop',
      'tcp dport 2 ip option ssrr missing drop',
      'tcp dport 3 ip option lsrr type != 1 drop',
      'tcp dport 4 ip option ra value 0 drop',
      'tcp dport 5 ip option rr missing drop',
    ].join('\n\t\t'), 'inet', 'output');
    for (const evaluator of ['lowered', 'reference'] as const) {
      const ns = new Netns({ nft, evaluator });
      const v4 = [1, 2, 3, 4].map((p) => ns.connect({ from: 'local', uid: 0, dst: `10.9.0.1:${p}` }, { trace: false }).outcome);
      expect(v4, evaluator).toEqual(['remote', 'dropped', 'remote', 'remote']);
      // An IPv6 packet breaks the rule: missing does not match it either.
      expect(ns.connect({ from: 'local', uid: 0, dst: '[2001:db8::9]:5' }, { trace: false }).outcome, evaluator).not.toBe('dropped');
    }
  });
});

describe('@ih and srh', () => {
  it('srh sid[N] as nft knows it: sid[1], sid[2]', () => {
    expect(refusal(inChain('srh sid[0] ::1', 'ip6'))).toMatchObject({ line: 4, column: 14, message: 'Could not parse integer' });
    expect(refusal(inChain('srh sid[3] dead::beef', 'ip6'))).toMatchObject({ line: 4, column: 14, message: 'No symbol type information' });
    expect(refusal(inChain('srh sid[1] ::1', 'ip')).line).toBe(4);
    expect(nftLoadErrors(inChain('srh sid[2] ::1', 'inet')).diagnostics).toEqual([]);
  });

  it('srh fields break the rule on a packet without a routing header; @ih stops connect by name', () => {
    const srh = inChain('srh sid[1] != ::1 drop\n\t\tsrh tag != 0 drop', 'ip6', 'output');
    for (const evaluator of ['lowered', 'reference'] as const) {
      expect(new Netns({ nft: srh, evaluator }).connect({ from: 'local', uid: 0, dst: '[2001:db8::9]:80' }, { trace: false }).outcome).toBe('remote');
      const ih = new Netns({ nft: inChain('udp dport 4789 @ih,0,8 5 drop', 'ip', 'output'), evaluator });
      expect(() => ih.connect({ from: 'local', uid: 0, dst: '10.9.0.1:4789', proto: 'udp' }, { trace: false })).toThrow(/@ih,0,8 \(inner header\)/);
      // A rule that does not reach the expression decides as usual.
      expect(ih.connect({ from: 'local', uid: 0, dst: '10.9.0.1:80' }, { trace: false }).outcome).toBe('remote');
    }
  });
});
