import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatIptablesSave } from '../../src/iptables/fmt.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';

const fmt = (t: string, family: 4 | 6 = 4) => formatIptablesSave(t, { family });
const errorOf = (t: string, mode: 'strict' | 'lenient' = 'strict', family: 4 | 6 = 4) =>
  parseIptablesSave(t, { mode, family }).diagnostics.find((d) => d.severity === 'error');

describe('iptables-save text', () => {
  it('prints built-ins in hook order and user chains sorted by strcmp', () => {
    const out = fmt('*nat\n-N ZZ\n-N AA\n-N a_b\n-N B\n-A ZZ -j RETURN\n-A AA -j ZZ\nCOMMIT\n');
    expect(out).toBe(
      '*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n' +
        ':AA - [0:0]\n:B - [0:0]\n:ZZ - [0:0]\n:a_b - [0:0]\n-A AA -j ZZ\n-A ZZ -j RETURN\nCOMMIT\n',
    );
  });
  it('lists tables in the nf_tables order and omits an empty block', () => {
    const out = fmt('*nat\n-A OUTPUT -j ACCEPT\nCOMMIT\n*raw\nCOMMIT\n*filter\n-A INPUT -j ACCEPT\nCOMMIT\n*mangle\n-A OUTPUT -j ACCEPT\nCOMMIT\n');
    expect(out.match(/^\*\w+/gm)).toEqual(['*mangle', '*filter', '*nat']);
  });
  it('accepts "* nat" headers and -N/-I lines as istio writes them', () => {
    const out = fmt('* nat\n-N X\n-A OUTPUT -j X\n-I OUTPUT 1 -j RETURN\nCOMMIT\n');
    expect(out).toContain('-A OUTPUT -j RETURN\n-A OUTPUT -j X\n');
  });
  it('puts the base options in save order and canonicalises them', () => {
    const out = fmt('*filter\n-A FORWARD -p 47 -f -o lo -i eth+ ! -d 10.0.12.0/255.0.255.0 -s 1.2.3.4\n-A INPUT -s 10.0.0.0/0 -d 0/0 -i + -p all -j ACCEPT\nCOMMIT\n');
    expect(out).toContain('-A INPUT -j ACCEPT\n');
    expect(out).toContain('-A FORWARD -s 1.2.3.4/32 ! -d 10.0.12.0/255.0.255.0 -i eth+ -o lo -p gre -f\n');
  });
  it('expands address lists into one rule per pair, sources outermost', () => {
    const out = fmt('*filter\n-A FORWARD -s 1.2.3.4,5.6.7.8 -d 9.9.9.9,8.8.8.8\nCOMMIT\n');
    expect(out).toContain('-A FORWARD -s 1.2.3.4/32 -d 9.9.9.9/32\n-A FORWARD -s 1.2.3.4/32 -d 8.8.8.8/32\n-A FORWARD -s 5.6.7.8/32 -d 9.9.9.9/32\n');
  });
  it('keeps counters only when asked, as iptables-restore -c', () => {
    const t = '*filter\n:INPUT DROP [3:4]\n[7:8] -A INPUT -j ACCEPT\nCOMMIT\n';
    expect(fmt(t)).toContain(':INPUT DROP [0:0]\n');
    expect(fmt(t)).toContain('\n-A INPUT -j ACCEPT\n');
    expect(formatIptablesSave(t, { counters: true })).toContain(':INPUT DROP [3:4]\n');
    expect(formatIptablesSave(t, { counters: true })).toContain('\n[7:8] -A INPUT -j ACCEPT\n');
  });
  it('prints IPv6 addresses as inet_ntop', () => {
    expect(fmt('*filter\n-A INPUT -s 2001:0db8::0001/64 -j DROP\nCOMMIT\n', 6)).toContain('-A INPUT -s 2001:db8::/64 -j DROP\n');
  });
});

describe('rejections, with the position of the offending token', () => {
  it.each([
    ['*filter\n-A INPUT -j ACCEPT\n', 'MISSING_COMMIT'],
    ['*filter\n-A INPUT -j ACCEPT\nCOMMIT  \n', 'UNEXPECTED_TOKEN'],
    ['*bogus\nCOMMIT\n', 'UNKNOWN_TABLE'],
    ['-A INPUT -j ACCEPT\n', 'RULE_OUTSIDE_TABLE'],
    ['*filter\n-A INPUT -s ! 1.2.3.4 -j ACCEPT\nCOMMIT\n', 'BAD_ADDRESS'],
    ['*filter\n-A INPUT ! ! -s 1.2.3.4 -j ACCEPT\nCOMMIT\n', 'MULTIPLE_NEGATION'],
    ['*filter\n-A INPUT -t nat -j ACCEPT\nCOMMIT\n', 'BAD_COMMAND'],
    ['*filter\n:INPUT BOGUS\nCOMMIT\n', 'BAD_POLICY'],
    ['*filter\n-N ABCDEFGHIJKLMNOPQRSTUVWXYZABC\nCOMMIT\n', 'CHAIN_NAME_TOO_LONG'],
    ['*filter\n-A INPUT -o lo -j ACCEPT\nCOMMIT\n', 'INVALID_HOOK'],
    ['*filter\n-A INPUT -s 1.2.3.4 -s 1.2.3.5\nCOMMIT\n', 'DUPLICATE_OPTION'],
    ['*filter\n-A INPUT -m nosuchmodule\nCOMMIT\n', 'UNKNOWN_MATCH'],
    ['*filter\n-A INPUT --dport 80\nCOMMIT\n', 'UNKNOWN_OPTION'],
    ['*filter\n   \nCOMMIT\n', 'BAD_COMMAND'],
    ['*filter\n-A INPUT -j\nCOMMIT\n', 'MISSING_ARGUMENT'],
    ['*filter\n-A INPUT -p nosuchproto\nCOMMIT\n', 'BAD_PROTOCOL'],
  ])('%j → %s', (text, code) => {
    const d = errorOf(text);
    expect(d?.code).toBe(code);
    expect(d?.span?.line).toBeGreaterThanOrEqual(1);
  });
  it('names the token and its column', () => {
    const d = errorOf('*filter\n-A INPUT -p tcp -s 300.1.1.1 -j ACCEPT\nCOMMIT\n')!;
    expect(d.span).toMatchObject({ line: 2, column: 20 });
    expect(d.message).toContain('300.1.1.1');
  });
  it('refuses a NUL byte and a 10 MB line without hanging', () => {
    expect(errorOf('*filter\n-A IN\0PUT\nCOMMIT\n')?.code).toBe('NUL_BYTE');
    const huge = '*filter\n-A INPUT -m comment --comment ' + 'x'.repeat(10 * 1024 * 1024) + '\nCOMMIT\n';
    expect(errorOf(huge)?.code).toBe('LINE_TOO_LONG');
  });
  it('throws a typed error from formatIptablesSave', () => {
    expect(() => fmt('*filter\n-A INPUT -p tcp -s 300.1.1.1\nCOMMIT\n')).toThrow(NetfilterSimError);
  });
  it('reports load failures as warnings, not rejections (as iptables-restore --test)', () => {
    const r = parseIptablesSave('*filter\n-A NOPE -j ACCEPT\n-I INPUT 3 -j ACCEPT\nCOMMIT\n');
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['warning', 'UNKNOWN_CHAIN'], ['warning', 'BAD_RULE_NUMBER']]);
  });
  it('cuts a 256-character comment to 255 as iptables 1.8.9 does, with a warning', () => {
    const r = parseIptablesSave(`*filter\n-A INPUT -m comment --comment ${'c'.repeat(256)}\nCOMMIT\n`);
    expect(r.diagnostics.map((d) => [d.severity, d.code])).toEqual([['warning', 'COMMENT_TOO_LONG']]);
    expect(fmt(`*filter\n-A INPUT -m comment --comment ${'c'.repeat(256)}\nCOMMIT\n`)).toContain(`--comment ${'c'.repeat(255)}\n`);
  });
  it('refuses chain names that clash with target names', () => {
    expect(errorOf('*filter\n-N DROP\nCOMMIT\n')?.code).toBe('BAD_CHAIN_NAME');
    expect(errorOf('*filter\n-N MARK\nCOMMIT\n')?.code).toBe('BAD_CHAIN_NAME');
    expect(errorOf('*filter\n:QUEUE - [0:0]\nCOMMIT\n')?.code).toBe('BAD_CHAIN_NAME');
    expect(errorOf('*filter\n:MARK - [0:0]\nCOMMIT\n')).toBeUndefined();
  });
  it('reads udp ports as getaddrinfo does: decimal, cut to 16 bits', () => {
    expect(fmt('*filter\n-A INPUT -p udp --dport 70000\nCOMMIT\n')).toContain('-A INPUT -p udp -m udp --dport 4464\n');
    expect(errorOf('*filter\n-A INPUT -p udp --dport 4294967295\nCOMMIT\n')?.code).toBe('BAD_PORT');
    expect(errorOf('*filter\n-A INPUT -p tcp --dport 70000\nCOMMIT\n')?.code).toBe('BAD_PORT');
  });
  it('in lenient mode accepts a missing COMMIT and CRLF line ends', () => {
    expect(errorOf('*filter\r\n-A INPUT -j ACCEPT\r\n', 'lenient')).toBeUndefined();
  });
});
