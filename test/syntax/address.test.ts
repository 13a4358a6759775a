import { describe, expect, it } from 'vitest';
import { formatCidr, formatIpv6, parseCidr, parseIpv4, parseIpv6 } from '../../src/model/address.js';

describe('addresses as libxtables parses and prints them', () => {
  it.each([
    ['1.2.3.4', '1.2.3.4/32'],
    ['10.11.12.13/8', '10.0.0.0/8'],
    ['10.0.12.0/255.0.255.0', '10.0.12.0/255.0.255.0'],
    ['10.1.2.3/255.255.0.0', '10.1.0.0/16'],
    ['10', '10.0.0.0/32'],
    ['0/0', '0.0.0.0/0'],
    ['::/0', '0.0.0.0/0'],
    ['anything/0', '0.0.0.0/0'],
    ['010.0.0.1', '8.0.0.1/32'],
  ])('v4 %s → %s', (input, out) => {
    expect(formatCidr(parseCidr(input, 4)!)).toBe(out);
  });
  it.each([['256.0.0.1'], ['1.2.3.4/33'], ['1.2.3.4.5'], ['a.b.c.d'], ['1.2.3.4/08'], ['']])('rejects v4 %s', (input) => {
    expect(parseCidr(input, 4)).toBeNull();
  });
  it.each([
    ['fd00::2', 'fd00::2/128'],
    ['fd00::2/64', 'fd00::/64'],
    ['::ffff:127.0.0.1/128', '::ffff:127.0.0.1/128'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1/128'],
    ['::/0', '::/0'],
    ['1:0:0:1:0:0:0:1', '1:0:0:1::1/128'],
    ['::6', '::6/128'],
    ['::127.0.0.53', '::127.0.0.53/128'],
  ])('v6 %s → %s', (input, out) => {
    expect(formatCidr(parseCidr(input, 6)!)).toBe(out);
  });
  it('parses and prints v6 words', () => {
    expect(parseIpv6('::1')).toEqual([0, 0, 0, 1]);
    expect(formatIpv6([0x20010db8, 0, 0, 1])).toBe('2001:db8::1');
    expect(parseIpv4('192.168.0.1')).toBe(0xc0a80001);
    expect(parseIpv6('1::2::3')).toBeNull();
  });
});
