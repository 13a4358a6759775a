/**
 * The few Go standard-library parsers whose exact behaviour decides what proxy-init and the
 * Linkerd injector accept: `strconv.Atoi`/`ParseInt`/`ParseBool`, `encoding/csv` (pflag's string
 * slices), `net.ParseCIDR` (via `net/netip`) and `time.ParseDuration`. Error texts are Go's.
 *
 * @internal
 * @module
 */

/**
 * A Go `strconv.NumError`, as `Error()` prints it.
 * @internal
 *
 * @example
 * ```ts
 * const r = goAtoi('x'); if ('error' in r) r.error.reason; // 'invalid syntax'
 * ```
 */
export interface GoNumError {
  readonly func: 'Atoi' | 'ParseInt' | 'ParseBool';
  readonly input: string;
  readonly reason: 'invalid syntax' | 'value out of range';
}

/**
 * Formats a {@link GoNumError} as Go does: `strconv.Atoi: parsing "x": invalid syntax`.
 * @internal
 *
 * @example
 * ```ts
 * formatNumError({ func: 'Atoi', input: 'proxy', reason: 'invalid syntax' }); // 'strconv.Atoi: parsing "proxy": invalid syntax'
 * ```
 */
export function formatNumError(e: GoNumError): string {
  return `strconv.${e.func}: parsing ${goQuote(e.input)}: ${e.reason}`;
}

/**
 * Go's `%q` for the strings we meet (printable ASCII plus the usual escapes).
 * @internal
 *
 * @example
 * ```ts
 * goQuote('a"b'); // '"a\\"b"'
 * ```
 */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + '"';
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/**
 * `strconv.ParseInt(s, base, 64)` for base 10 (`Atoi`) or base 0 (pflag's int flags: `0x`, `0o`,
 * `0b` prefixes, a leading `0` for octal, `_` separators). Values beyond 2^53 keep their sign and
 * magnitude approximately (JavaScript numbers); beyond int64 they are out of range, as in Go.
 * @internal
 *
 * @example
 * ```ts
 * goParseInt('0x10', 0, 'ParseInt'); // { value: 16 }
 * ```
 */
export function goParseInt(
  s: string,
  base: 0 | 10,
  func: 'Atoi' | 'ParseInt',
): { readonly value: number } | { readonly error: GoNumError } {
  const err = (reason: GoNumError['reason']): { error: GoNumError } => ({ error: { func, input: s, reason } });
  if (s.length === 0) return err('invalid syntax');
  let body = s;
  let neg = false;
  if (body[0] === '+' || body[0] === '-') {
    neg = body[0] === '-';
    body = body.slice(1);
    if (body.length === 0) return err('invalid syntax');
  }
  let radix = 10;
  let digits = body;
  const base0 = base === 0;
  if (base0 && body[0] === '0') {
    const p = body[1]?.toLowerCase();
    if (body.length >= 3 && p === 'b') { radix = 2; digits = body.slice(2); }
    else if (body.length >= 3 && p === 'o') { radix = 8; digits = body.slice(2); }
    else if (body.length >= 3 && p === 'x') { radix = 16; digits = body.slice(2); }
    else { radix = 8; digits = body.slice(1); }
  }
  let n = 0n;
  let underscores = false;
  const big = BigInt(radix);
  for (const ch of digits) {
    if (ch === '_' && base0) { underscores = true; continue; }
    const d = digitValue(ch);
    if (d === undefined || d >= radix) return err('invalid syntax');
    n = n * big + BigInt(d);
    if (n > (1n << 64n)) n = 1n << 64n; // saturate: out of range either way
  }
  if (underscores && !underscoreOK(s)) return err('invalid syntax');
  const v = neg ? -n : n;
  if (v > INT64_MAX || v < INT64_MIN) return err('value out of range');
  return { value: Number(v) };
}

function digitValue(ch: string): number | undefined {
  const c = ch.charCodeAt(0);
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 122) return c - 97 + 10;
  if (c >= 65 && c <= 90) return c - 65 + 10;
  return undefined;
}

// strconv/atoi.go underscoreOK: underscores only between digits or after a base prefix.
function underscoreOK(s0: string): boolean {
  let s = s0;
  let saw = '^';
  let i = 0;
  if (s.length >= 1 && (s[0] === '-' || s[0] === '+')) s = s.slice(1);
  let hex = false;
  const p = s[1]?.toLowerCase();
  if (s.length >= 2 && s[0] === '0' && (p === 'b' || p === 'o' || p === 'x')) {
    i = 2;
    saw = '0';
    hex = p === 'x';
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    const l = c.toLowerCase();
    if ((c >= '0' && c <= '9') || (hex && l >= 'a' && l <= 'f')) { saw = '0'; continue; }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/**
 * `strconv.Atoi`.
 * @internal
 *
 * @example
 * ```ts
 * goAtoi('+8443'); // { value: 8443 }
 * ```
 */
export function goAtoi(s: string): { readonly value: number } | { readonly error: GoNumError } {
  return goParseInt(s, 10, 'Atoi');
}

/**
 * `strconv.ParseBool`.
 * @internal
 *
 * @example
 * ```ts
 * goParseBool('F'); // false
 * ```
 */
export function goParseBool(s: string): boolean | undefined {
  switch (s) {
    case '1': case 't': case 'T': case 'TRUE': case 'true': case 'True':
      return true;
    case '0': case 'f': case 'F': case 'FALSE': case 'false': case 'False':
      return false;
    default:
      return undefined;
  }
}

/**
 * `csv.NewReader(strings.NewReader(s)).Read()`: the first record of `s`, as pflag's string-slice
 * flags read their value. Fields are not trimmed; `"..."` quotes a field (`""` is a quote).
 * @internal
 *
 * @example
 * ```ts
 * goReadCsvRecord('443, 8080'); // { fields: ['443', ' 8080'] }
 * ```
 */
export function goReadCsvRecord(s: string): { readonly fields: string[] } | { readonly error: string } {
  // csv.Reader skips empty lines before the first record.
  let pos = 0;
  let line = 1;
  while (pos < s.length && (s[pos] === '\n' || (s[pos] === '\r' && s[pos + 1] === '\n'))) {
    pos += s[pos] === '\r' ? 2 : 1;
    line++;
  }
  const fields: string[] = [];
  const lineStart = pos;
  for (;;) {
    if (s[pos] === '"') {
      // quoted field
      let field = '';
      let i = pos + 1;
      for (;;) {
        if (i >= s.length) {
          return { error: `record on line ${line}; parse error on line ${line}, column ${i - lineStart + 1}: extraneous or missing " in quoted-field` };
        }
        const c = s[i]!;
        if (c === '"') {
          if (s[i + 1] === '"') { field += '"'; i += 2; continue; }
          const next = s[i + 1];
          if (next === undefined || next === ',' || next === '\n' || (next === '\r' && s[i + 2] === '\n')) {
            i++;
            break;
          }
          return { error: `parse error on line ${line}, column ${i - lineStart + 2}: extraneous or missing " in quoted-field` };
        }
        field += c === '\r' && s[i + 1] === '\n' ? '' : c;
        i++;
      }
      fields.push(field);
      pos = i;
    } else {
      let i = pos;
      while (i < s.length && s[i] !== ',' && s[i] !== '\n' && !(s[i] === '\r' && s[i + 1] === '\n')) {
        if (s[i] === '"') {
          return { error: `parse error on line ${line}, column ${i - lineStart + 1}: bare " in non-quoted-field` };
        }
        i++;
      }
      fields.push(s.slice(pos, i));
      pos = i;
    }
    if (s[pos] === ',') { pos++; continue; }
    return { fields };
  }
}

/**
 * A parsed IP address (`net/netip.Addr`): `family` 4 for dotted quads, 6 otherwise.
 * @internal
 *
 * @example
 * ```ts
 * goParseAddr('::ffff:10.0.0.1')?.family; // 6
 * ```
 */
export interface GoAddr {
  readonly family: 4 | 6;
  /** 4 or 16 bytes. */
  readonly bytes: readonly number[];
}

/**
 * `netip.ParseAddr`, minus zones (which `net.ParseCIDR` rejects anyway).
 * @internal
 *
 * @example
 * ```ts
 * goParseAddr('010.0.0.1'); // undefined: netip refuses leading zeros
 * ```
 */
export function goParseAddr(s: string): GoAddr | undefined {
  if (s.includes(':')) {
    const b = parseIpv6Strict(s);
    return b ? { family: 6, bytes: b } : undefined;
  }
  const b = parseIpv4Strict(s);
  return b ? { family: 4, bytes: b } : undefined;
}

function parseIpv4Strict(s: string): number[] | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p)) return undefined;
    if (p.length > 1 && p[0] === '0') return undefined; // netip: leading zeros are rejected
    const v = Number(p);
    if (v > 255) return undefined;
    out.push(v);
  }
  return out;
}

function parseIpv6Strict(s0: string): number[] | undefined {
  if (s0.includes('%')) return undefined; // a zone: ParseCIDR refuses it
  const ip: number[] = new Array(16).fill(0);
  let s = s0;
  let ellipsis = -1;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return ip;
  }
  let i = 0;
  while (i < 16) {
    // a hex field, or an IPv4 tail
    const m = /^[0-9a-fA-F]*/.exec(s)![0];
    if (m.length === 0 || m.length > 4) {
      if (m.length > 4) return undefined;
      return undefined;
    }
    if (s[m.length] === '.') {
      if (ellipsis < 0 && i !== 12) return undefined;
      if (i + 4 > 16) return undefined;
      const v4 = parseIpv4Strict(s);
      if (!v4) return undefined;
      ip[i] = v4[0]!; ip[i + 1] = v4[1]!; ip[i + 2] = v4[2]!; ip[i + 3] = v4[3]!;
      s = '';
      i += 4;
      break;
    }
    const v = parseInt(m, 16);
    ip[i] = v >> 8;
    ip[i + 1] = v & 0xff;
    i += 2;
    s = s.slice(m.length);
    if (s.length === 0) break;
    if (s[0] !== ':' || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) return undefined;
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) return undefined;
  if (i < 16) {
    if (ellipsis < 0) return undefined;
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    for (let j = ellipsis + n - 1; j >= ellipsis; j--) ip[j] = 0;
  } else if (ellipsis >= 0) {
    return undefined; // "::" must stand for at least one zero field
  }
  return ip;
}

/**
 * A CIDR as `net.ParseCIDR` accepts it.
 * @internal
 *
 * @example
 * ```ts
 * goParseCidr('10.0.0.0/08')?.prefix; // 8 (iptables will read the mask as octal and fail)
 * ```
 */
export interface GoCidr {
  readonly addr: GoAddr;
  readonly prefix: number;
  /** The text after the slash, as written (iptables re-parses it with `strtoul(…, 0)`). */
  readonly maskText: string;
  /** The text before the slash. */
  readonly hostText: string;
}

/**
 * `net.ParseCIDR`: `addr/prefix`, the prefix in decimal (leading zeros allowed), no zone.
 * @internal
 *
 * @example
 * ```ts
 * goParseCidr('0.0.0.0'); // undefined: a prefix length is required
 * ```
 */
export function goParseCidr(s: string): GoCidr | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const hostText = s.slice(0, slash);
  const maskText = s.slice(slash + 1);
  const addr = goParseAddr(hostText);
  if (!addr) return undefined;
  if (!/^[0-9]+$/.test(maskText)) return undefined;
  // dtoi gives up at 0xFFFFFF; anything that long is out of range anyway.
  const prefix = maskText.length > 8 ? Infinity : Number(maskText);
  if (prefix > (addr.family === 4 ? 32 : 128)) return undefined;
  return { addr, prefix, maskText, hostText };
}

/**
 * `time.ParseDuration`, in nanoseconds: `300ms`, `-1.5h`, `2h45m`; units `ns us µs μs ms s m h`.
 * @internal
 *
 * @example
 * ```ts
 * goParseDuration('1h30s'); // 3630e9
 * ```
 */
export function goParseDuration(s0: string): number | undefined {
  let s = s0;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  const units: Record<string, number> = {
    ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9,
  };
  let total = 0;
  while (s !== '') {
    const m = /^([0-9]*)(\.([0-9]*))?/.exec(s)!;
    const whole = m[1] ?? '';
    const frac = m[3] ?? '';
    if (whole === '' && frac === '') return undefined;
    s = s.slice(m[0].length);
    const u = /^[^0-9.]+/.exec(s);
    if (!u) return undefined; // missing unit
    const unit = units[u[0]];
    if (unit === undefined) return undefined;
    s = s.slice(u[0].length);
    total += Number(whole === '' ? '0' : whole) * unit + (frac === '' ? 0 : Number(`0.${frac}`) * unit);
  }
  return neg ? -total : total;
}
