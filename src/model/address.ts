/**
 * IPv4 and IPv6 addresses and masks, parsed and printed as iptables does
 * (`libxtables/xtables.c`: `xtables_ipparse_multiple`, `xtables_ipmask_to_numeric`).
 *
 * Addresses are arrays of unsigned 32-bit words, most significant first.
 *
 * @module
 */
import type { Cidr, Family } from './types.js';
import { expectArgument, expectFields, expectOneOf } from './guard.js';

/** Parses an unsigned integer as `strtoul(s, &end, 0)` would with a full-string check. */
function strtoui(s: string, max: number): number | null {
  let v: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(s)) v = parseInt(s.slice(2), 16);
  else if (/^0[0-7]*$/.test(s)) v = s.length > 1 ? parseInt(s.slice(1), 8) : 0;
  else if (/^[1-9][0-9]*$/.test(s)) v = Number(s);
  else return null;
  return v <= max ? v : null;
}

/**
 * Parses an IPv4 address the way `xtables_numeric_to_ipaddr` does: one to four dot-separated
 * bytes, each a C integer (so `010` is octal); missing trailing bytes are zero (`10` is 10.0.0.0).
 */
export function parseIpv4(text: string): number | null {
  if (text.length === 0 || text.length > 19) return null;
  const parts = text.split('.');
  if (parts.length > 4) return null;
  let v = 0;
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    let b = 0;
    if (p !== undefined) {
      const n = strtoui(p, 255);
      if (n === null) return null;
      b = n;
    }
    v = v * 256 + b;
  }
  return v >>> 0;
}

/** Parses a dotted IPv4 netmask (all four bytes required, as for masks in iptables). */
function parseIpv4Mask(text: string): number | null {
  if (text.split('.').length !== 4) return null;
  return parseIpv4(text);
}

/** Parses an IPv6 address as `inet_pton(AF_INET6)`, including an embedded IPv4 tail. */
export function parseIpv6(text: string): number[] | null {
  if (text.length === 0 || text.length > 45) return null;
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  let head = text;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.')) {
    const v4 = text.slice(lastColon + 1);
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(v4)) return null;
    const bytes = v4.split('.').map(Number);
    if (bytes.some((b) => b > 255 || Number.isNaN(b))) return null;
    if (v4.split('.').some((b) => b.length > 1 && b.startsWith('0'))) return null;
    tail = [(bytes[0]! << 8) | bytes[1]!, (bytes[2]! << 8) | bytes[3]!];
    head = text.slice(0, lastColon + 1);
    // "::1.2.3.4" keeps its "::"; "1:2:3:4:5:6:1.2.3.4" drops the separator before the tail.
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const dbl = head.indexOf('::');
  if (dbl !== head.lastIndexOf('::')) return null;
  const parseGroups = (s: string): number[] | null => {
    if (s === '') return [];
    const out: number[] = [];
    for (const g of s.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  let groups: number[];
  if (dbl >= 0) {
    const left = parseGroups(head.slice(0, dbl));
    const right = parseGroups(head.slice(dbl + 2));
    if (!left || !right) return null;
    const fill = 8 - tail.length - left.length - right.length;
    if (fill < 1) return null;
    groups = [...left, ...new Array<number>(fill).fill(0), ...right, ...tail];
  } else {
    const g = parseGroups(head);
    if (!g) return null;
    groups = [...g, ...tail];
    if (groups.length !== 8) return null;
  }
  const words: number[] = [];
  for (let i = 0; i < 4; i++) words.push(((groups[2 * i]! << 16) | groups[2 * i + 1]!) >>> 0);
  return words;
}

/** Parses an address of the family into words, or returns null. */
export function parseAddress(text: string, family: Family): number[] | null {
  expectArgument(text, 'string', 'text');
  expectOneOf(family, [4, 6], 'family');
  if (family === 4) {
    const v = parseIpv4(text);
    return v === null ? null : [v];
  }
  return parseIpv6(text);
}

/** Formats an IPv4 word as dotted quad. */
export function formatIpv4(v: number): string {
  return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;
}

/** Formats IPv6 words as `inet_ntop` does (RFC 5952: longest zero run compressed, lower case). */
export function formatIpv6(words: readonly number[]): string {
  const g: number[] = [];
  for (const w of words) g.push(w >>> 16, w & 0xffff);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (bestLen < 2) bestStart = -1;
  // glibc inet_ntop6: a dotted IPv4 tail only for ::a.b.c.d (six zero words) and ::ffff:a.b.c.d.
  if (bestStart === 0 && (bestLen === 6 || (bestLen === 5 && g[5] === 0xffff))) {
    return (bestLen === 6 ? '::' : '::ffff:') + formatIpv4(words[3]!);
  }
  const hex = g.map((x) => x.toString(16));
  if (bestStart < 0) return hex.join(':');
  const left = hex.slice(0, bestStart).join(':');
  const right = hex.slice(bestStart + bestLen).join(':');
  return `${left}::${right}`;
}

/** Formats an address of either family. */
export function formatAddress(words: readonly number[], family: Family): string {
  expectArgument(words, 'array', 'words');
  return family === 4 ? formatIpv4(words[0]!) : formatIpv6(words);
}

/** The mask words for a prefix length. */
export function prefixMask(len: number, family: Family): number[] {
  const n = family === 4 ? 1 : 4;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const bits = Math.max(0, Math.min(32, len - 32 * i));
    out.push(bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);
  }
  return out;
}

/** The prefix length of a contiguous mask, or -1 when the mask is not contiguous. */
export function maskLength(mask: readonly number[]): number {
  let len = 0;
  let ended = false;
  for (const w of mask) {
    for (let b = 31; b >= 0; b--) {
      const set = ((w >>> b) & 1) === 1;
      if (set) {
        if (ended) return -1;
        len++;
      } else ended = true;
    }
  }
  return len;
}

/**
 * Parses `addr[/mask]` where mask is a prefix length or a full mask, clearing host bits as
 * `xtables_ipparse_multiple` does. No mask means a host (`/32`, `/128`).
 */
export function parseCidr(text: string, family: Family): Cidr | null {
  expectArgument(text, 'string', 'text');
  expectOneOf(family, [4, 6], 'family');
  const slash = text.indexOf('/');
  const addrText = slash < 0 ? text : text.slice(0, slash);
  const maskText = slash < 0 ? undefined : text.slice(slash + 1);
  let mask: number[];
  if (maskText === undefined) mask = prefixMask(family === 4 ? 32 : 128, family);
  else if (!maskText.includes(family === 4 ? '.' : ':')) {
    const len = strtoui(maskText, family === 4 ? 32 : 128);
    if (len === null) return null;
    mask = prefixMask(len, family);
  } else {
    const m = family === 4 ? (() => { const v = parseIpv4Mask(maskText); return v === null ? null : [v]; })() : parseIpv6(maskText);
    if (!m) return null;
    mask = m;
  }
  // xtables_ipparse_multiple: "if a null mask is given, the name is ignored, like in any/0".
  if (mask.every((w) => w === 0)) return { family, addr: mask.map(() => 0), mask };
  const addr = parseAddress(addrText, family);
  if (!addr) return null;
  return { family, addr: addr.map((w, i) => (w & mask[i]!) >>> 0), mask };
}

/**
 * Formats an address and mask as iptables-save does: `a.b.c.d/len` for contiguous masks (also
 * `/32`), the dotted (or IPv6) mask otherwise.
 */
export function formatCidr(c: Cidr): string {
  expectArgument(c, 'object', 'cidr');
  expectFields(c, { addr: 'array', mask: 'array' }, 'cidr');
  const len = maskLength(c.mask);
  const a = formatAddress(c.addr, c.family);
  return len >= 0 ? `${a}/${len}` : `${a}/${formatAddress(c.mask, c.family)}`;
}

/** True when `addr` lies in `c` (`(addr & mask) == c.addr`). */
export function cidrContains(c: Cidr, addr: readonly number[]): boolean {
  for (let i = 0; i < c.addr.length; i++) if (((addr[i]! & c.mask[i]!) >>> 0) !== c.addr[i]) return false;
  return true;
}

/** Printed addresses, remembered: traces print the same few addresses over and over. */
const V4_TEXT = new Map<number, string>();
const V6_TEXT = new Map<string, string>();
const TEXT_CACHE_SIZE = 65536;

/** {@link formatAddress}, through a bounded cache. */
export function addressText(addr: readonly number[], family: Family): string {
  if (family === 4) {
    const k = addr[0]!;
    let t = V4_TEXT.get(k);
    if (t === undefined) {
      t = formatAddress(addr, 4);
      if (V4_TEXT.size >= TEXT_CACHE_SIZE) V4_TEXT.clear();
      V4_TEXT.set(k, t);
    }
    return t;
  }
  // Eight UTF-16 units: cheaper to build than the decimal words.
  const a0 = addr[0]!;
  const a1 = addr[1]!;
  const a2 = addr[2]!;
  const a3 = addr[3]!;
  const k = String.fromCharCode(a0 >>> 16, a0 & 0xffff, a1 >>> 16, a1 & 0xffff, a2 >>> 16, a2 & 0xffff, a3 >>> 16, a3 & 0xffff);
  let t = V6_TEXT.get(k);
  if (t === undefined) {
    t = formatAddress(addr, 6);
    if (V6_TEXT.size >= TEXT_CACHE_SIZE) V6_TEXT.clear();
    V6_TEXT.set(k, t);
  }
  return t;
}

/** `addr:port`, `[v6]:port`. */
export function formatEndpoint(addr: readonly number[], port: number, family: Family): string {
  const a = addressText(addr, family);
  return family === 6 ? `[${a}]:${port}` : `${a}:${port}`;
}
