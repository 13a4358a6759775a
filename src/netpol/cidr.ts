/**
 * Addresses and CIDRs as the Kubernetes API reads them, which is not how iptables reads them:
 * Go's parsers, not `inet_aton`. Two readings exist (`k8s.io/apimachinery/pkg/util/validation/ip.go`):
 *
 * - sloppy (`netutils.ParseIPSloppy`, `ParseCIDRSloppy`): IPv4 octets may carry leading zeros,
 *   read as decimal; a CIDR may have host bits set (`10.0.0.1/24` is the network 10.0.0.0/24);
 * - strict (`netip.ParseAddr`, `ParsePrefix`, the `StrictIPCIDRValidation` gate: alpha and off in
 *   Kubernetes 1.33 to 1.35, beta and on from 1.36): no leading zeros, no IPv4-mapped IPv6 address, no bits set
 *   past the prefix length.
 *
 * The API server validates `ipBlock.cidr` and `except` with the strict reading when the gate is
 * on and the sloppy one otherwise; what it accepted means, in every case, the masked network.
 *
 * @module
 */
import { formatAddress, parseIpv6 } from '../model/address.js';
import type { Family } from '../model/types.js';

/** An address: its family and its bits as 32-bit words, most significant first. */
export interface NetpolAddress {
  readonly family: Family;
  readonly words: readonly number[];
}

/** A network: family, the address with host bits cleared, and the prefix length. */
export interface NetpolCidr {
  readonly family: Family;
  readonly words: readonly number[];
  readonly prefix: number;
}

/** A parse that failed says why, in the API server's words. */
export type CidrParse =
  | { readonly ok: true; readonly cidr: NetpolCidr; readonly hostBits: boolean; readonly leadingZeros: boolean; readonly mapped: boolean }
  | { readonly ok: false };

function parseIpv4Go(text: string): { words: number[]; leadingZeros: boolean } | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let v = 0;
  let leadingZeros = false;
  for (const p of parts) {
    // Go's sloppy parser reads up to three decimal digits per octet, leading zeros allowed.
    if (!/^[0-9]{1,3}$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    if (p.length > 1 && p.startsWith('0')) leadingZeros = true;
    v = v * 256 + n;
  }
  return { words: [v >>> 0], leadingZeros };
}

/**
 * Parses an address as `netutils.ParseIPSloppy` does, and says whether the strict reading would
 * refuse it (leading zeros, or an IPv4-mapped IPv6 address).
 */
export function parseK8sAddress(text: string): { address: NetpolAddress; leadingZeros: boolean; mapped: boolean } | null {
  if (typeof text !== 'string' || text.length === 0 || text.length > 64) return null;
  if (!text.includes(':')) {
    const v4 = parseIpv4Go(text);
    return v4 === null ? null : { address: { family: 4, words: v4.words }, leadingZeros: v4.leadingZeros, mapped: false };
  }
  // IPv6; an embedded IPv4 tail with leading zeros is refused by both readers.
  const words = parseIpv6(text);
  if (words === null) return null;
  const mapped = words[0] === 0 && words[1] === 0 && words[2] === 0xffff;
  return { address: { family: 6, words }, leadingZeros: false, mapped };
}

/** The mask words of a prefix length. */
function maskWords(prefix: number, family: Family): number[] {
  const n = family === 4 ? 1 : 4;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const bits = Math.max(0, Math.min(32, prefix - 32 * i));
    out.push(bits === 0 ? 0 : bits === 32 ? 0xffffffff : (~0 << (32 - bits)) >>> 0);
  }
  return out;
}

/** Parses `ADDR/LEN` as `ParseCIDRSloppy` does; the flags say what the strict reading refuses. */
export function parseK8sCidr(text: string): CidrParse {
  if (typeof text !== 'string') return { ok: false };
  const slash = text.indexOf('/');
  if (slash < 0 || slash !== text.lastIndexOf('/')) return { ok: false };
  const a = parseK8sAddress(text.slice(0, slash));
  const lenText = text.slice(slash + 1);
  if (a === null || !/^[0-9]{1,3}$/.test(lenText)) return { ok: false };
  const family = a.address.family;
  const prefix = Number(lenText);
  if (prefix > (family === 4 ? 32 : 128)) return { ok: false };
  const mask = maskWords(prefix, family);
  const words = a.address.words.map((w, i) => (w & mask[i]!) >>> 0);
  const hostBits = words.some((w, i) => w !== a.address.words[i]);
  const leadingZeros = a.leadingZeros || (lenText.length > 1 && lenText.startsWith('0'));
  return { ok: true, cidr: { family, words, prefix }, hostBits, leadingZeros, mapped: a.mapped };
}

/** True when the network holds the address (never across families). */
export function cidrHolds(c: NetpolCidr, a: NetpolAddress): boolean {
  if (c.family !== a.family) return false;
  const mask = maskWords(c.prefix, c.family);
  for (let i = 0; i < c.words.length; i++) if (((a.words[i]! & mask[i]!) >>> 0) !== c.words[i]) return false;
  return true;
}

/** `ADDR/LEN`, the address in its canonical text. */
export function formatK8sCidr(c: NetpolCidr): string {
  return `${formatAddress(c.words, c.family)}/${c.prefix}`;
}

/** The address in its canonical text (`10.0.0.5`, `fd00::5`). */
export function formatK8sAddress(a: NetpolAddress): string {
  return formatAddress(a.words, a.family);
}
