/**
 * Addresses and CIDRs as the Kubernetes API writes them: dotted quads and IPv6 text, a prefix
 * length after the slash. Stricter than iptables' reading (no `10` for 10.0.0.0, no octal).
 *
 * @module
 */
import { parseAddress, prefixMask, formatAddress } from '../model/address.js';
import type { Family } from '../model/types.js';

/** A parsed address of either family. */
export interface IpAddress {
  readonly family: Family;
  readonly words: readonly number[];
  readonly text: string;
}

/** A parsed CIDR: network words (host bits cleared), prefix length, and its text. */
export interface IpCidr {
  readonly family: Family;
  readonly words: readonly number[];
  readonly prefix: number;
  readonly text: string;
}

const V4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** An IP address as the API accepts it (`10.244.0.5`, `fd00::5`), or null. */
export function parseIp(text: string): IpAddress | null {
  if (typeof text !== 'string') return null;
  const m = V4.exec(text);
  if (m !== null) {
    if (m.slice(1).some((b) => Number(b) > 255)) return null;
    const words = parseAddress(text, 4);
    return words === null ? null : { family: 4, words, text: formatAddress(words, 4) };
  }
  if (!text.includes(':')) return null;
  const words = parseAddress(text, 6);
  return words === null ? null : { family: 6, words, text: formatAddress(words, 6) };
}

/** A CIDR (`10.244.0.0/24`, `fd00:10:244::/64`), host bits cleared, or null. */
export function parseIpCidr(text: string): IpCidr | null {
  if (typeof text !== 'string') return null;
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const a = parseIp(text.slice(0, slash));
  const len = text.slice(slash + 1);
  if (a === null || !/^\d{1,3}$/.test(len)) return null;
  const prefix = Number(len);
  if (prefix > (a.family === 4 ? 32 : 128)) return null;
  const mask = prefixMask(prefix, a.family);
  const words = a.words.map((w, i) => (w & mask[i]!) >>> 0);
  return { family: a.family, words, prefix, text: `${formatAddress(words, a.family)}/${prefix}` };
}

/** Whether `addr` lies in `cidr`. */
export function cidrHolds(cidr: IpCidr, addr: IpAddress): boolean {
  if (cidr.family !== addr.family) return false;
  const mask = prefixMask(cidr.prefix, cidr.family);
  for (let i = 0; i < mask.length; i++) if (((addr.words[i]! & mask[i]!) >>> 0) !== cidr.words[i]) return false;
  return true;
}

/** Whether two CIDRs share an address. */
export function cidrsOverlap(a: IpCidr, b: IpCidr): boolean {
  if (a.family !== b.family) return false;
  const mask = prefixMask(Math.min(a.prefix, b.prefix), a.family);
  for (let i = 0; i < mask.length; i++) if (((a.words[i]! & mask[i]!) >>> 0) !== ((b.words[i]! & mask[i]!) >>> 0)) return false;
  return true;
}

/** The `n`th address of a CIDR (1: the first host, as `host-local` gives the gateway). */
export function nthAddress(cidr: IpCidr, n: number): IpAddress {
  const words = cidr.words.slice();
  let carry = n;
  for (let i = words.length - 1; i >= 0 && carry > 0; i--) {
    const sum = words[i]! + carry;
    words[i] = sum >>> 0;
    carry = Math.floor(sum / 0x100000000);
  }
  return { family: cidr.family, words, text: formatAddress(words, cidr.family) };
}

/** `ADDR:PORT` or `[V6]:PORT`. */
export function endpointText(addr: string, port: number): string {
  return addr.includes(':') ? `[${addr}]:${port}` : `${addr}:${port}`;
}
