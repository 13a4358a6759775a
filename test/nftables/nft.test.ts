/**
 * The nftables front end, case by case: what the parser reads and refuses (with nft's positions),
 * how the listing prints, what the commit-time checks refuse, syntax detection and the CLI.
 * Every listing expected here was produced by nft 1.0.6 (`nft -f` then `nft list ruleset`); the
 * kernel differential (test/kernel/nft-fmt.differential.test.ts) checks hundreds more.
 */
import { describe, expect, it } from 'vitest';
import { memoryIO } from '../../src/cli/io.js';
import { run } from '../../src/cli/run.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import {
  checkNftRuleset, detectRulesSyntax, formatNftRuleset, nftLoadErrors, parseNftRuleset, parseNftRulesetOrThrow, printNftRuleset,
} from '../../src/nftables/index.js';

function refused(text: string): { line: number | undefined; column: number | undefined; code: string; message: string } {
  try {
    formatNftRuleset(text);
  } catch (e) {
    if (e instanceof NetfilterSimError) return { line: e.span?.line, column: e.span?.column, code: e.code, message: e.message };
    throw e;
  }
  throw new Error('accepted');
}

describe('nft listing (as nft list ruleset prints it)', () => {
  it('lists the command form the way the kernel gives it back', () => {
    const text = [
      'add table inet istio-proxy-nat',
      'flush table inet istio-proxy-nat',
      'add chain inet istio-proxy-nat output { type nat hook output priority -100 ; }',
      'add chain inet istio-proxy-nat istio-output',
      'add rule inet istio-proxy-nat output counter jump istio-output',
      'add rule inet istio-proxy-nat istio-output oifname lo meta l4proto tcp ip daddr != 127.0.0.1/32 tcp dport != { 53, 15008 } skuid 1337 counter redirect to :15006',
      '',
    ].join('\n');
    expect(formatNftRuleset(text)).toBe([
      'table inet istio-proxy-nat {',
      '\tchain output {',
      '\t\ttype nat hook output priority -100; policy accept;',
      '\t\tcounter packets 0 bytes 0 jump istio-output',
      '\t}',
      '',
      '\tchain istio-output {',
      '\t\toifname "lo" ip daddr != 127.0.0.1 tcp dport != { 53, 15008 } meta skuid 1337 counter packets 0 bytes 0 redirect to :15006',
      '\t}',
      '}',
      '',
    ].join('\n'));
  });

  it('names priorities as nft does: a standard name, name ± up to 10, dstnat/srcnat only at their hooks', () => {
    const text = `table ip t {
  chain a { type filter hook input priority filter + 5; policy drop; }
  chain b { type filter hook output priority -155; }
  chain c { type nat hook output priority 100; }
  chain d { type nat hook postrouting priority 100; }
  chain e { type filter hook prerouting priority -200; }
  chain f { type filter hook forward priority - 1; }
}
`;
    const out = formatNftRuleset(text);
    expect(out).toContain('type filter hook input priority filter + 5; policy drop;');
    expect(out).toContain('type filter hook output priority mangle - 5; policy accept;');
    expect(out).toContain('type nat hook output priority 100; policy accept;');
    expect(out).toContain('type nat hook postrouting priority srcnat; policy accept;');
    expect(out).toContain('type filter hook prerouting priority -200; policy accept;');
    expect(out).toContain('type filter hook forward priority filter - 1; policy accept;');
  });

  it('sorts and merges set elements, folds bitwise marks, prints values by type', () => {
    const text = `table inet t {
  set s { type ipv4_addr; elements = { 10.9.0.1, 1.2.3.4, 10.0.0.3, 192.168.0.1, 5.6.7.8 } ; }
  chain x {
    tcp dport { 80, 443, 8000-8080, 81 } accept
    ip saddr { 10.0.0.0/8, 10.1.0.0/16, 192.168.1.1 } drop
    mark and 0xfff != 0x539 ct mark set ct mark & 0xfffff000 |  0x111
    meta mark set mark ^ 0x10
    iifname { "lo", "eth0" } ct state established,related accept
    tcp dport 22 tcp sport 80 accept
  }
}
`;
    expect(formatNftRuleset(text)).toBe(`table inet t {
\tset s {
\t\ttype ipv4_addr
\t\telements = { 1.2.3.4, 5.6.7.8,
\t\t\t     10.0.0.3, 10.9.0.1,
\t\t\t     192.168.0.1 }
\t}

\tchain x {
\t\ttcp dport { 80-81, 443, 8000-8080 } accept
\t\tip saddr { 10.0.0.0/8, 192.168.1.1 } drop
\t\tmeta mark & 0x00000fff != 0x00000539 ct mark set ct mark & 0xfffff111 | 0x00000111
\t\tmeta mark set meta mark ^ 0x00000010
\t\tiifname { "lo", "eth0" } ct state established,related accept
\t\ttcp sport 80 tcp dport 22 accept
\t}
}
`);
  });

  it('reads define, comments and line continuations', () => {
    const text = '#!/usr/sbin/nft -f\n# a comment\ndefine PORT = 15001\ntable ip t {\n\tchain c {\n\t\ttcp dport 80 \\\n\t\t\tredirect to :$PORT # why\n\t}\n}\n';
    expect(formatNftRuleset(text)).toBe('table ip t {\n\tchain c {\n\t\ttcp dport 80 redirect to :15001\n\t}\n}\n');
  });

  it('keeps handles in creation order, anonymous sets included', () => {
    const rs = parseNftRulesetOrThrow('add table ip t\nadd chain ip t c\nadd rule ip t c tcp dport { 1, 2 } accept\nadd rule ip t c accept\n');
    const rules = rs.tables[0]!.chains[0]!.rules;
    expect(rules.map((r) => r.handle)).toEqual([3, 4]);
  });

  it('inserts at an index and at the front, as insert rule does', () => {
    const text = 'add table ip t\nadd chain ip t c\nadd rule ip t c tcp dport 1 accept\nadd rule ip t c tcp dport 2 accept\ninsert rule ip t c index 1 tcp dport 3 accept\ninsert rule ip t c tcp dport 4 accept\n';
    expect(formatNftRuleset(text)).toContain('\t\ttcp dport 4 accept\n\t\ttcp dport 1 accept\n\t\ttcp dport 3 accept\n\t\ttcp dport 2 accept\n');
  });
});

describe('nft errors (positions as nft reports them)', () => {
  it('a syntax error names the token and its line and column', () => {
    const r = refused('table ip t {\n\tchain c {\n\t\ttcp dport 80 acept\n\t}\n}\n');
    expect([r.line, r.column, r.code]).toEqual([3, 16, 'UNEXPECTED_TOKEN']);
    expect(r.message).toContain('syntax error, unexpected acept');
  });
  it('conflicting protocols, bad values and unknown sets are refused where they are written', () => {
    expect(refused('add table inet t\nadd chain inet t c\nadd rule inet t c ip saddr 1.1.1.1 ip6 daddr ::1 accept\n')).toMatchObject({ line: 3, message: expect.stringContaining('conflicting protocols specified: ip vs. ip6') });
    expect(refused('add table ip t\nadd chain ip t c\nadd rule ip t c tcp dport 70000\n')).toMatchObject({ line: 3, code: 'BAD_VALUE' });
    expect(refused('add table ip t\nadd chain ip t c\nadd rule ip t c ip saddr @nope\n')).toMatchObject({ line: 3 });
    expect(refused('add table ip t\nadd chain ip t c\nadd rule ip t c meta skgid nosuchgroup\n')).toMatchObject({ line: 3, message: expect.stringContaining('Group does not exist') });
  });
  it('reads every family nft has; bridge chains list their own priority names', () => {
    // nft 1.0.6: bridge's filter priority is -200, so 0 lists as a number.
    expect(formatNftRuleset('table bridge b {\n\tchain f {\n\t\ttype filter hook forward priority 0; policy accept;\n\t\tether type ip accept\n\t}\n}\n'))
      .toBe('table bridge b {\n\tchain f {\n\t\ttype filter hook forward priority 0; policy accept;\n\t\tether type ip accept\n\t}\n}\n');
    expect(formatNftRuleset('add table bridge b\nadd chain bridge b c { type filter hook input priority -200 ; }\n')).toContain('priority filter;');
    expect(refused('add table foo b\n')).toMatchObject({ line: 1 });
  });
  it('reports syntax errors before evaluation errors, and kernel errors last', () => {
    const text = 'add table ip t\nadd chain ip t c\nadd rule ip t c jump nowhere\nadd rule ip t c ip saddr 1.2.3.999\nadd rule ip t c tcp dport 1 acept\n';
    expect(refused(text).line).toBe(5);
    expect(refused(text.replace(' acept', '')).line).toBe(4);
    expect(refused(text.replace(' acept', '').replace('1.2.3.999', '1.2.3.9')).line).toBe(3);
  });
  it('refuses an overlapping element in a named interval set', () => {
    expect(refused('table ip t {\n\tset s { type ipv4_addr; flags interval; elements = { 10.0.0.0/8, 10.0.0.2 }; }\n}\n')).toMatchObject({ line: 2, message: expect.stringContaining('conflicting intervals specified') });
  });
});

describe('nft commit-time checks (what the kernel refuses)', () => {
  const load = (body: string): ReturnType<typeof nftLoadErrors> => nftLoadErrors(`table ip t {\n${body}\n}\n`);
  it('refuses redirect outside nat prerouting/output, masquerade outside postrouting, tproxy outside prerouting', () => {
    expect(load('\tchain c { type filter hook output priority 0; tcp dport 80 redirect to :1; }').diagnostics[0]?.code).toBe('INVALID_HOOK');
    expect(load('\tchain c { type nat hook output priority 0; masquerade; }').diagnostics[0]?.code).toBe('INVALID_HOOK');
    expect(load('\tchain c { type nat hook postrouting priority 100; masquerade; }').diagnostics).toEqual([]);
    expect(load('\tchain c { type filter hook input priority 0; tcp dport 80 tproxy to :1; }').diagnostics[0]?.code).toBe('INVALID_HOOK');
    expect(load('\tchain c { type filter hook postrouting priority 0; reject; }').diagnostics[0]?.code).toBe('INVALID_HOOK');
  });
  it('checks a regular chain only when a base chain reaches it, with the base chain\'s hook', () => {
    expect(load('\tchain r { tcp dport 80 redirect to :1; }').diagnostics).toEqual([]);
    const d = load('\tchain b { type filter hook input priority 0; jump r; }\n\tchain r { tcp dport 80 redirect to :1; }').diagnostics;
    expect(d[0]?.code).toBe('INVALID_HOOK');
    expect(d[0]?.span?.line).toBe(3);
  });
  it('refuses jumps to missing chains, loops and chain types at the wrong hook', () => {
    expect(load('\tchain c { jump nowhere; }').diagnostics[0]?.code).toBe('UNKNOWN_CHAIN');
    expect(load('\tchain b { type filter hook input priority 0; jump x; }\n\tchain x { jump y; }\n\tchain y { jump x; }').diagnostics[0]?.code).toBe('CHAIN_LOOP');
    expect(load('\tchain c { type route hook input priority 0; }').diagnostics[0]?.code).toBe('INVALID_HOOK');
    expect(load('\tchain c { type nat hook forward priority 0; }').diagnostics[0]?.code).toBe('INVALID_HOOK');
  });
  it('checkNftRuleset is the same check on a parsed rule set', () => {
    const rs = parseNftRulesetOrThrow('table ip t {\n\tchain c {\n\t\tjump nowhere\n\t}\n}\n');
    expect(checkNftRuleset(rs).map((d) => d.code)).toEqual(['UNKNOWN_CHAIN']);
  });
});

describe('syntax detection', () => {
  it('guesses nft from the first statement, iptables otherwise', () => {
    expect(detectRulesSyntax('#!/usr/sbin/nft -f\n\nflush ruleset\n')).toBe('nft');
    expect(detectRulesSyntax('table inet t {\n}\n')).toBe('nft');
    expect(detectRulesSyntax('define X = 1\n')).toBe('nft');
    expect(detectRulesSyntax('# Generated by iptables-save\n*nat\nCOMMIT\n')).toBe('iptables');
    expect(detectRulesSyntax('-A OUTPUT -j ACCEPT\n')).toBe('iptables');
  });
});

describe('netfilter-sim fmt / check on nft files', () => {
  const file = 'add table inet t\nadd chain inet t c { type filter hook input priority 0 ; }\nadd rule inet t c meta l4proto tcp tcp dport 22 counter accept\n';
  it('fmt prints the listing', async () => {
    const io = memoryIO({ 'r.nft': file });
    expect(await run(['fmt', 'r.nft'], io)).toBe(0);
    expect(io.out).toBe('table inet t {\n\tchain c {\n\t\ttype filter hook input priority filter; policy accept;\n\t\ttcp dport 22 counter packets 0 bytes 0 accept\n\t}\n}\n');
  });
  it('fmt reports FILE:LINE:COL and exits 1', async () => {
    const io = memoryIO({ 'r.nft': file.replace('accept', 'acept') });
    expect(await run(['fmt', 'r.nft'], io)).toBe(1);
    expect(io.err).toMatch(/^r\.nft:3:57: syntax error, unexpected acept/);
  });
  it('--syntax overrides the guess, and iptables-only flags are usage errors on nft', async () => {
    const io = memoryIO({ 'r.txt': file });
    expect(await run(['fmt', '--syntax', 'iptables', 'r.txt'], io)).toBe(1);
    expect(await run(['fmt', '--syntax', 'bogus', 'r.txt'], memoryIO({ 'r.txt': file }))).toBe(2);
    expect(await run(['fmt', '-6', 'r.txt'], memoryIO({ 'r.txt': file }))).toBe(2);
  });
  it('check says ok or lists what the kernel refuses', async () => {
    const io = memoryIO({ 'r.nft': file });
    expect(await run(['check', 'r.nft'], io)).toBe(0);
    expect(io.out).toBe('r.nft: ok (1 rules)\n');
    const bad = memoryIO({ 'r.nft': file.replace('counter accept', 'redirect to :1') });
    expect(await run(['check', '--json', 'r.nft'], bad)).toBe(1);
    expect(JSON.parse(bad.out).diagnostics[0].code).toBe('INVALID_HOOK');
  });
  it('parseNftRuleset returns diagnostics instead of throwing', () => {
    const r = parseNftRuleset('add rule ip nope c accept\n');
    expect(r.diagnostics[0]?.code).toBe('UNKNOWN_TABLE');
    expect(printNftRuleset(r.ruleset)).toBe('');
  });
});
