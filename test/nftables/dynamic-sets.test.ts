// Sets filled from the packet path (`update @set { … }`, `add @set { … }`, nft_dynset) and a
// set's default `timeout`: read, listed as nft lists them, and kept by the engine on its clock.
import { describe, expect, it } from 'vitest';
import { formatNftRuleset } from '../../src/nftables/index.js';
import { parseTime, printTime as formatTime } from '../../src/nftables/datatypes.js';
import { Netns } from '../../src/engine/index.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import { DYNAMIC_SETS_INPUT } from './dynamic-sets-cases.js';

describe('time strings', () => {
  it.each([['10800s', 10_800_000, '3h'], ['90061s', 90_061_000, '1d1h1m1s'], ['1s', 1000, '1s'], ['90', 90_000, '1m30s'], ['1d2h', 93_600_000, '1d2h'], ['250ms', 250, '250ms']])('%s', (text, ms, listed) => {
    expect(parseTime(text)).toBe(ms);
    expect(formatTime(ms)).toBe(listed);
  });
  it.each(['', 'h', '3x', '1h2', 's3'])('refuses %j', (text) => expect(parseTime(text)).toBeUndefined());
});

describe('listing', () => {
  it('lists size, flags (dynamic before timeout) and the default timeout as nft does, and the statements', () => {
    const out = formatNftRuleset(DYNAMIC_SETS_INPUT);
    // A set filled from the packet path without a size gets 65535 slots from the kernel (nft_dynset),
    // and nft marks it dynamic when the same file declares it; a default timeout adds no flag.
    // (This listing is what nft 1.0.6 printed for this input on kernel 6.18.)
    expect(out).toBe(`table ip t {
\tset s {
\t\ttype ipv4_addr
\t\tsize 65535
\t\tflags dynamic,timeout
\t\ttimeout 3h
\t}

\tset s2 {
\t\ttype ipv4_addr
\t\tsize 100
\t\tflags dynamic
\t\tcomment "x"
\t}

\tset s3 {
\t\ttype ipv4_addr
\t\tsize 65535
\t\tflags dynamic
\t}

\tset unused {
\t\ttype ipv4_addr
\t\ttimeout 1m30s
\t}

\tchain c {
\t\tip saddr @s accept
\t\tupdate @s { ip saddr }
\t\tupdate @s2 { ip saddr }
\t\tadd @s3 { ip daddr }
\t}
}
`);
    expect(formatNftRuleset(out)).toBe(out);
  });

  it('refuses an update of a set that does not exist, or with a key of another type', () => {
    const err = (text: string): string => {
      try {
        formatNftRuleset(text);
        return 'no error';
      } catch (e) {
        return (e as NetfilterSimError).message;
      }
    };
    expect(err('add table ip t\nadd chain ip t c\nadd rule ip t c update @nope { ip saddr }\n')).toMatch(/No such file or directory; did you mean set 'nope'/);
    expect(err('add table ip t\nadd chain ip t c\nadd set ip t s { type ipv4_addr ; }\nadd rule ip t c update @s { tcp dport }\n')).toMatch(/datatype mismatch/);
  });
});

describe('the engine keeps what the packet path puts in a set', () => {
  // Connections from the node to 10.96.0.1:80: the first is marked and remembered by source; a
  // later one whose source is in the set goes to another address, until the element times out.
  const rules = [
    'table ip t {',
    '\tset seen { type ipv4_addr; flags dynamic,timeout; timeout 10s; }',
    '\tchain out { type nat hook output priority -100; policy accept;',
    '\t\tip daddr 10.96.0.1 ip saddr @seen dnat to 10.200.0.2',
    '\t\tip daddr 10.96.0.1 update @seen { ip saddr } dnat to 10.200.0.1',
    '\t}',
    '}',
    '',
  ].join('\n');
  it.each([false, true])('reference evaluator: %s', (reference) => {
    const ns = new Netns({ rules: '', nft: rules, listen: [], ...(reference ? { evaluator: 'reference' as const } : {}) });
    const to = (): string | null => ns.connect({ from: 'local', uid: 0, gid: 0, dst: '10.96.0.1:80' }, { trace: false }).address;
    expect(to()).toBe('10.200.0.1');
    expect(to()).toBe('10.200.0.2');
    ns.advance(11);
    expect(to()).toBe('10.200.0.1');
    expect(to()).toBe('10.200.0.2');
  });
});

describe('maps updated from the packet path', () => {
  // What `nft list ruleset` printed here for the same text: a map is not marked dynamic, and a
  // map's `timeout` lists without `flags timeout`; a set is and does.
  it('list without the dynamic flag, unlike sets', () => {
    const text = 'table ip t {\n\tmap m {\n\t\ttype ipv4_addr : mark\n\t\ttimeout 6m\n\t}\n\n\tset s {\n\t\ttype ipv4_addr\n\t\ttimeout 6m\n\t}\n\n'
      + '\tchain c {\n\t\tupdate @m { ip saddr : 0x2 }\n\t\tupdate @s { ip saddr }\n\t}\n}\n';
    expect(formatNftRuleset(text)).toBe('table ip t {\n\tmap m {\n\t\ttype ipv4_addr : mark\n\t\tsize 65535\n\t\ttimeout 6m\n\t}\n\n'
      + '\tset s {\n\t\ttype ipv4_addr\n\t\tsize 65535\n\t\tflags dynamic,timeout\n\t\ttimeout 6m\n\t}\n\n'
      + '\tchain c {\n\t\tupdate @m { ip saddr : 0x00000002 }\n\t\tupdate @s { ip saddr }\n\t}\n}\n');
  });
});
