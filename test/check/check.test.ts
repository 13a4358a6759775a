// Load-time validation: what the kernel and iptables refuse before a rule set is loaded.
import { describe, expect, it } from 'vitest';
import { check, reachableHooks } from '../../src/iptables/check/check.js';
import type { Diagnostic } from '../../src/model/errors.js';
import type { Ruleset } from '../../src/model/types.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';
import { parseIpsetHeaders } from '../../src/iptables/syntax/ipset.js';
import { parseNfacctList } from '../../src/iptables/syntax/nfacct.js';

function load(text: string, family: 4 | 6 = 4): Ruleset {
  const r = parseIptablesSave(text, { family, mode: 'lenient' });
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((d) => d.message).join('\n'));
  return r.ruleset;
}

function errors(text: string, options: Parameters<typeof check>[1] = {}): Diagnostic[] {
  return check(load(text), options).filter((d) => d.severity === 'error');
}

const NAT = (body: string, extra = '') => `*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n${extra}${body}COMMIT\n`;
const FILTER = (body: string, extra = '') => `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n${extra}${body}COMMIT\n`;

describe('check', () => {
  it('accepts the mesh rule sets', () => {
    expect(errors(NAT('-A OUTPUT -j X\n-A X -o lo -j RETURN\n-A X -p tcp -j REDIRECT --to-ports 4140\n', ':X - [0:0]\n'))).toEqual([]);
  });

  it('finds loops, through jumps and gotos, with the span of the closing jump (ELOOP)', () => {
    const text = FILTER('-A INPUT -j A\n-A A -j B\n-A B -g A\n', ':A - [0:0]\n:B - [0:0]\n');
    const d = errors(text);
    expect(d.map((x) => x.code)).toEqual(['CHAIN_LOOP']);
    expect(d[0]!.span?.line).toBe(9);
    expect(d[0]!.message).toMatch(/ELOOP/);
  });

  it('a loop no built-in chain reaches is only a warning (mark_source_chains never walks it)', () => {
    const all = check(load(FILTER('-A A -j B\n-A B -j A\n', ':A - [0:0]\n:B - [0:0]\n')));
    expect(all.map((d) => `${d.code}/${d.severity}`)).toEqual(['CHAIN_LOOP/warning']);
  });

  it('limits jump nesting to NFT_JUMP_STACK_SIZE for iptables-nft, not for legacy', () => {
    const chains = Array.from({ length: 17 }, (_, i) => `C${i}`);
    const body = ['-A INPUT -j C0', ...chains.slice(0, -1).map((c, i) => `-A ${c} -j ${chains[i + 1]}`)].join('\n') + '\n';
    const text = FILTER(body, chains.map((c) => `:${c} - [0:0]`).join('\n') + '\n');
    expect(errors(text).map((d) => d.code)).toEqual(['JUMP_TOO_DEEP']);
    expect(errors(text, { backend: 'legacy' })).toEqual([]);
    const ok = FILTER(['-A INPUT -j C0', ...chains.slice(0, 14).map((c, i) => `-A ${c} -j ${chains[i + 1]}`)].join('\n') + '\n', chains.map((c) => `:${c} - [0:0]`).join('\n') + '\n');
    expect(errors(ok)).toEqual([]);
  });

  it('refuses -i where there is no in-device and -o where there is no out-device', () => {
    const rule = (iface: 'in' | 'out') => ({ matches: [], target: null, [iface === 'in' ? 'inInterface' : 'outInterface']: { negated: false, value: 'eth0' } });
    const rs: Ruleset = {
      family: 4,
      tables: [{ name: 'filter', chains: [
        { name: 'INPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [rule('out'), { matches: [], target: { kind: 'jump', chain: 'U' } }] },
        { name: 'OUTPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [rule('in')] },
        { name: 'U', builtin: false, policy: null, counters: { packets: 0, bytes: 0 }, rules: [rule('out')] },
      ] }],
    };
    const d = check(rs);
    expect(d.map((x) => `${x.severity} ${x.message.replace(/ \(.*$|: .*$/, '')}`)).toEqual([
      "error Can't use -o with INPUT",
      "error Can't use -i with OUTPUT",
      'warning -o cannot match in INPUT',
    ]);
  });

  it('places REDIRECT by the hooks its chain is reachable from', () => {
    const onlyOutput = NAT('-A OUTPUT -j X\n-A X -p tcp -j REDIRECT --to-ports 4140\n', ':X - [0:0]\n');
    expect(errors(onlyOutput)).toEqual([]);
    const fromPostrouting = NAT('-A OUTPUT -j X\n-A POSTROUTING -j X\n-A X -p tcp -j REDIRECT --to-ports 4140\n', ':X - [0:0]\n');
    const d = errors(fromPostrouting);
    expect(d.map((x) => x.code)).toEqual(['INVALID_HOOK']);
    expect(d[0]!.message).toMatch(/POSTROUTING/);
    expect(d[0]!.span?.line).toBe(9);
  });

  it('places targets by table, and matches by protocol', () => {
    expect(errors(FILTER('-A INPUT -p tcp -j REDIRECT --to-ports 80\n')).map((d) => d.code)).toContain('INVALID_TABLE');
  });

  it('owner only where packets have sockets', () => {
    expect(errors(FILTER('-A INPUT -m owner --uid-owner 0 -j ACCEPT\n')).map((d) => d.code)).toEqual(['INVALID_HOOK']);
    expect(errors(FILTER('-A OUTPUT -m owner --uid-owner 0 -j ACCEPT\n'))).toEqual([]);
  });

  it('undefined chains, jumps to built-in chains, long names, policies', () => {
    const rs: Ruleset = {
      family: 4,
      tables: [
        {
          name: 'filter',
          chains: [
            { name: 'INPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [{ matches: [], target: { kind: 'jump', chain: 'NOPE' } }, { matches: [], target: { kind: 'jump', chain: 'OUTPUT' } }] },
            { name: 'A'.repeat(29), builtin: false, policy: null, counters: { packets: 0, bytes: 0 }, rules: [] },
            { name: 'U', builtin: false, policy: 'DROP', counters: { packets: 0, bytes: 0 }, rules: [] },
            { name: 'OUTPUT', builtin: true, policy: 'REJECT' as 'DROP', counters: { packets: 0, bytes: 0 }, rules: [] },
          ],
        },
      ],
    };
    expect(check(rs).map((d) => d.code).sort()).toEqual(['BAD_POLICY', 'BAD_POLICY', 'BUILTIN_CHAIN', 'CHAIN_NAME_TOO_LONG', 'UNKNOWN_CHAIN']);
  });

  it('unknown extensions in a hand-built rule set', () => {
    const rs: Ruleset = {
      family: 4,
      tables: [{ name: 'filter', chains: [{ name: 'INPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [{ matches: [{ name: 'nosuch', options: {} }], target: { kind: 'extension', name: 'NOSUCH', options: {} } }] }] }],
    };
    expect(check(rs).map((d) => d.code)).toEqual(['UNKNOWN_MATCH', 'UNKNOWN_TARGET']);
  });

  it('computes the hooks each chain is reachable from, as mark_source_chains', () => {
    const rs = load(NAT('-A OUTPUT -j A\n-A PREROUTING -j B\n-A A -g B\n', ':A - [0:0]\n:B - [0:0]\n:C - [0:0]\n'));
    const hooks = reachableHooks(rs.tables[0]!);
    expect([...hooks.get('A')!]).toEqual(['OUTPUT']);
    expect([...hooks.get('B')!].sort()).toEqual(['OUTPUT', 'PREROUTING']);
    expect([...hooks.get('C')!]).toEqual([]);
  });
});

describe('check: named objects', () => {
  const rs = (text: string, family: 4 | 6 = 4) => parseIptablesSave(text, { family }).ruleset;
  const RULES = '*filter\n-A INPUT -m set --match-set a src -m nfacct --nfacct-name n1 -j SET --add-set b dst\nCOMMIT\n';

  it('checks nothing about sets and nfacct objects unless told', () => {
    expect(check(rs(RULES))).toEqual([]);
  });

  it('names each missing set and object, with the rule', () => {
    const d = check(rs(RULES), { ipsets: [{ name: 'a', type: 'hash:ip', family: 4 }], nfacct: [] });
    expect(d.map((x) => [x.code, x.token])).toEqual([['UNKNOWN_NFACCT', 'n1'], ['UNKNOWN_SET', 'b']]);
    expect(d.every((x) => x.severity === 'error' && x.message.includes('filter INPUT rule 1'))).toBe(true);
  });

  it('a list:set (family null) serves both families; an inet set only IPv4', () => {
    const six = rs('*filter\n-A INPUT -m set --match-set a src\nCOMMIT\n', 6);
    expect(check(six, { ipsets: [{ name: 'a', type: 'list:set', family: null }] })).toEqual([]);
    expect(check(six, { ipsets: [{ name: 'a', type: 'hash:ip', family: 4 }] }).map((x) => x.code)).toEqual(['WRONG_FAMILY']);
  });
});

describe('ipset headers and nfacct lists', () => {
  it('reads every set type from ipset save, with its family', () => {
    const text = 'create KUBE-NODE-PORT-TCP bitmap:port range 0-65535\ncreate KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024\nadd KUBE-LOOP-BACK 10.0.0.1,tcp:80,10.0.0.1\ncreate s6 hash:net family inet6\n';
    expect(parseIpsetHeaders(text)).toEqual([
      { name: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port', family: null },
      { name: 'KUBE-LOOP-BACK', type: 'hash:ip,port,ip', family: 4 },
      { name: 's6', type: 'hash:net', family: 6 },
    ]);
  });
  it('refuses an unknown type and a set created twice, naming the line', () => {
    expect(() => parseIpsetHeaders('create a hash:nope\n', 'f')).toThrow(/f:1:10: unknown set type "hash:nope"/);
    expect(() => parseIpsetHeaders('create a hash:ip\ncreate a hash:ip\n', 'f')).toThrow(/f:2:8: set "a" is created twice/);
  });
  it('reads nfacct list output and plain names', () => {
    expect(parseNfacctList('{ pkts = 00000000000000000000, bytes = 00000000000000000000 } = http;\n# c\n\ndns\n')).toEqual(['http', 'dns']);
    expect(() => parseNfacctList('x'.repeat(32), 'g')).toThrow(/g:1:1: nfacct object name .* longer than 31 bytes/);
  });
});
