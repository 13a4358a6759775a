/**
 * The parts of Go's `net/netip` that istio-iptables relies on: `ParseAddr`, `ParsePrefix`,
 * `Prefix.String()`, `Addr.Is4()` and `Addr.IsLoopback()`. The CIDR lists of `-i`/`-x` go
 * through `ParsePrefix` and are written back with `Prefix.String()`, so reproducing the rule text
 * means reproducing Go's parser and printer (IPv6 in RFC 5952 form, host bits kept).
 *
 * @module
 * @internal
 */

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
  const err = `ParseAddr(${JSON.stringify(s)}): IPv6 address invalid`;
  let head = s;
  let tail4: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.indexOf('.', lastColon) >= 0) {
    const v4 = parseIPv4(s.slice(lastColon + 1));
    if (typeof v4 === 'string') return err;
    tail4 = [...v4.bytes];
    head = s.slice(0, lastColon + 1);
    // "::1.2.3.4" leaves "::", "1::1.2.3.4" leaves "1::": keep the group separator intact.
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groupsWanted = tail4.length > 0 ? 6 : 8;
  const dbl = head.indexOf('::');
  if (dbl >= 0 && head.indexOf('::', dbl + 1) >= 0) return err;
  const parseGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const g of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  let groups: number[];
  if (dbl >= 0) {
    const left = parseGroups(head.slice(0, dbl));
    const right = parseGroups(head.slice(dbl + 2));
    if (!left || !right) return err;
    const missing = groupsWanted - left.length - right.length;
    if (missing < 1) return err;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  } else {
    const all = parseGroups(head);
    if (!all || all.length !== groupsWanted) return err;
    groups = all;
  }
  const bytes: number[] = [];
  for (const g of groups) bytes.push(g >> 8, g & 0xff);
  bytes.push(...tail4);
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
