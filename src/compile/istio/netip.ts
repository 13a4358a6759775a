/**
 * The parts of Go's `net/netip` that istio-iptables relies on: `ParseAddr`, `ParsePrefix`,
 * `Prefix.String()`, `Addr.Is4()` and `Addr.IsLoopback()`. The CIDR lists of `-i`/`-x` go
 * through `ParsePrefix` and are written back with `Prefix.String()`, so reproducing the rule text
 * means reproducing Go's parser and printer (IPv6 in RFC 5952 form, host bits kept).
 *
 * @module
 * @internal
 */
import { parseIpv6 } from '../../model/address.js';

/** A parsed Go `netip.Addr`: 4 bytes, or 16 bytes for IPv6 (including IPv4-mapped ones). @internal */
export interface GoAddr {
  readonly bytes: readonly number[];
}

/** A parsed Go `netip.Prefix`. @internal */
export interface GoPrefix {
  readonly addr: GoAddr;
  readonly bits: number;
}

/**
 * Go's `netip.ParseAddr`, without zones. Returns an error message instead of throwing.
 * @internal
 */
export function parseGoAddr(s: string): GoAddr | string {
  if (s.includes('%')) return `ParseAddr(${JSON.stringify(s)}): zone not allowed`;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '.') return parseIPv4(s);
    if (c === ':') return parseIPv6(s);
  }
  return `ParseAddr(${JSON.stringify(s)}): unable to parse IP`;
}

function parseIPv4(s: string): GoAddr | string {
  const fields = s.split('.');
  const err = `ParseAddr(${JSON.stringify(s)}): IPv4 address invalid`;
  if (fields.length !== 4) return err;
  const bytes: number[] = [];
  for (const f of fields) {
    if (!/^[0-9]{1,3}$/.test(f)) return err;
    if (f.length > 1 && f[0] === '0') return `ParseAddr(${JSON.stringify(s)}): IPv4 field has octet with leading zero`;
    const v = Number(f);
    if (v > 255) return err;
    bytes.push(v);
  }
  return { bytes };
}

function parseIPv6(s: string): GoAddr | string {
  // netip.ParseAddr agrees with inet_pton here (zones aside, which istio never passes).
  const words = parseIpv6(s);
  if (!words) return `ParseAddr(${JSON.stringify(s)}): IPv6 address invalid`;
  const bytes: number[] = [];
  for (const w of words) bytes.push(w >>> 24, (w >>> 16) & 0xff, (w >>> 8) & 0xff, w & 0xff);
  return { bytes };
}

/**
 * Go's `netip.ParsePrefix`. Host bits are kept, as Go does.
 * @internal
 */
export function parseGoPrefix(s: string): GoPrefix | string {
  const i = s.lastIndexOf('/');
  if (i < 0) return `netip.ParsePrefix(${JSON.stringify(s)}): no '/'`;
  const addr = parseGoAddr(s.slice(0, i));
  if (typeof addr === 'string') return `netip.ParsePrefix(${JSON.stringify(s)}): ${addr}`;
  const bitsStr = s.slice(i + 1);
  if (!/^[0-9]+$/.test(bitsStr)) return `netip.ParsePrefix(${JSON.stringify(s)}): bad bits after slash: ${JSON.stringify(bitsStr)}`;
  if (bitsStr.length > 1 && bitsStr[0] === '0') {
    return `netip.ParsePrefix(${JSON.stringify(s)}): bad bits after slash: ${JSON.stringify(bitsStr)}`;
  }
  const bits = Number(bitsStr);
  const max = addr.bytes.length * 8;
  if (bits > max) return `netip.ParsePrefix(${JSON.stringify(s)}): prefix length out of range`;
  return { addr, bits };
}

/** Go's `Addr.Is4()`: a 4-byte address (IPv4-mapped IPv6 addresses are not). @internal */
export function isGo4(a: GoAddr): boolean {
  return a.bytes.length === 4;
}

function isGo4In6(a: GoAddr): boolean {
  const b = a.bytes;
  if (b.length !== 16) return false;
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/** Go's `Addr.IsLoopback()` (IPv4-mapped addresses are unmapped first). @internal */
export function isGoLoopback(a: GoAddr): boolean {
  const b = a.bytes;
  if (b.length === 4) return b[0] === 127;
  if (isGo4In6(a)) return b[12] === 127;
  for (let i = 0; i < 15; i++) if (b[i] !== 0) return false;
  return b[15] === 1;
}

/** Go's `Addr.String()`. @internal */
export function formatGoAddr(a: GoAddr): string {
  const b = a.bytes;
  if (b.length === 4) return b.join('.');
  if (isGo4In6(a)) return `::ffff:${b.slice(12).join('.')}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i]! << 8) | b[i + 1]!);
  // RFC 5952: compress the longest run (at least two) of zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

/** Go's `Prefix.String()`. @internal */
export function formatGoPrefix(p: GoPrefix): string {
  return `${formatGoAddr(p.addr)}/${p.bits}`;
}
