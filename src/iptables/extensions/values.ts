/**
 * Value parsers and printers shared by the extension modules, each after the libxtables function
 * whose behaviour it copies: numbers as `xtables_strtoul` reads them (base 0, so `0x10` and `010`
 * work), ports and service names as `xtables_parse_port`, marks as `xtopt_parse_markmask`, strings
 * as `xtables_save_string` quotes them.
 *
 * @module
 */
import { diagnostic, fail, type Diagnostic } from '../../model/errors.js';
import type { Family, Negatable, Span } from '../../model/types.js';
import { formatAddress, maskLength, parseAddress, prefixMask } from '../../model/address.js';
import { parseProtocol } from '../../model/protocols.js';
import type { Accounts, ExtensionContext, OptionOccurrence } from './types.js';
import type { PortRange } from './target-options.js';

/** The largest unsigned 32-bit value. */
export const UINT32_MAX = 0xffffffff;

/**
 * Reads an unsigned integer at the start of `text` as `strtoumax(s, &end, 0)` does: optional
 * leading blanks and `+`, then `0x`/`0X` hex, `0` octal or decimal. A leading `-` is refused, as
 * `xtables_strtoul_base` refuses it. Returns the value and the index just past the digits.
 */
export function strtoulPrefix(text: string): { value: number; end: number } | null {
  let i = 0;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  if (text[i] === '-') return null;
  if (text[i] === '+') i++;
  let base = 10;
  let start = i;
  if (text[i] === '0' && (text[i + 1] === 'x' || text[i + 1] === 'X') && /[0-9a-fA-F]/.test(text[i + 2] ?? '')) {
    base = 16;
    start = i + 2;
  } else if (text[i] === '0') {
    base = 8;
  }
  const digit = base === 16 ? /[0-9a-fA-F]/ : base === 8 ? /[0-7]/ : /[0-9]/;
  let j = start;
  while (j < text.length && digit.test(text[j]!)) j++;
  if (j === start) return null;
  const digits = text.slice(start, j);
  // Beyond 2^53 the exact value no longer matters: every caller's maximum is far below it.
  const value = digits.length > 15 ? Number.MAX_SAFE_INTEGER : parseInt(digits, base);
  return { value, end: j };
}

/**
 * `xtables_strtoul(s, NULL, &v, min, max)`: the whole string must be a number in range.
 */
export function strtoul(text: string, min: number, max: number): number | null {
  const r = strtoulPrefix(text);
  if (!r || r.end !== text.length) return null;
  return r.value >= min && r.value <= max ? r.value : null;
}

/** Formats a 32-bit value as iptables prints marks: `0x%x`. */
export function hex(value: number): string {
  return `0x${(value >>> 0).toString(16)}`;
}

// ---------------------------------------------------------------------------------------------
// Errors

/** The span and token to blame for an option's argument. */
export function argSpan(o: OptionOccurrence): Span {
  return o.argSpan ?? o.span;
}

/** Fails with `BAD_VALUE` naming the option's argument. */
export function badValue(o: OptionOccurrence, message: string): never {
  return fail('BAD_VALUE', message, argSpan(o), o.arg);
}

/** The argument of an option that takes one (the dispatcher guarantees it). */
export function argOf(o: OptionOccurrence): string {
  if (o.arg === undefined) fail('MISSING_ARGUMENT', `option "${o.written}" requires an argument`, o.span, o.written);
  return o.arg;
}

/** Fails for an option the module does not know (the dispatcher should not send one). */
export function unknownOption(ext: string, o: OptionOccurrence): never {
  return fail('UNKNOWN_OPTION', `${ext}: unknown option "${o.written}"`, o.span, o.written);
}

/** Fails when a required option is missing (`XTOPT_MAND`, or an `x6_fcheck` message). */
export function missing(ctx: ExtensionContext, ext: string, message: string): never {
  return fail('MISSING_OPTION', `${ext}: ${message}`, ctx.span, ext);
}

/** Fails when an option excludes one given before (`.excl`). */
export function conflict(o: OptionOccurrence, other: string): never {
  return fail('CONFLICTING_OPTIONS', `option "${o.written}" cannot be used together with "${other}"`, o.span, o.written);
}

/** Fails when `!` precedes an option that cannot be inverted. */
export function noInvert(o: OptionOccurrence): void {
  if (o.negated) fail('BAD_NEGATION', `option "${o.written}" cannot be inverted`, o.span, '!');
}

// ---------------------------------------------------------------------------------------------
// Protocols

/** The rule's `-p` as a number and negation, or undefined when there is none (or `all`). */
export function ruleProtocol(protocol: Negatable<string> | undefined): { num: number; negated: boolean } | undefined {
  if (!protocol) return undefined;
  const num = parseProtocol(protocol.value.toLowerCase());
  if (num === null || num === 0) return undefined;
  return { num, negated: protocol.negated };
}

/** Whether the rule's `-p` is one of `nums`, not negated (the kernel's `proto` check). */
export function protocolIs(protocol: Negatable<string> | undefined, nums: readonly number[]): boolean {
  const p = ruleProtocol(protocol);
  return p !== undefined && !p.negated && nums.includes(p.num);
}

// ---------------------------------------------------------------------------------------------
// Ports and services

/**
 * Service names iptables resolves, from Debian 12's netbase `/etc/services` (names and aliases,
 * first port listed), so results do not depend on the machine running the tests. iptables 1.8.9
 * resolves a TCP-only name for UDP and the reverse (`-p udp --dport ssh` loads as 22), but finds
 * none for SCTP, DCCP or UDP-Lite, which the file does not list.
 */
const SERVICES: ReadonlyMap<string, number> = new Map<string, number>([
  ['tcpmux', 1], ['echo', 7], ['discard', 9], ['sink', 9], ['null', 9], ['systat', 11],
  ['users', 11], ['daytime', 13], ['netstat', 15], ['qotd', 17], ['quote', 17], ['chargen', 19],
  ['ttytst', 19], ['source', 19], ['ftp-data', 20], ['ftp', 21], ['fsp', 21], ['fspd', 21],
  ['ssh', 22], ['telnet', 23], ['smtp', 25], ['mail', 25], ['time', 37], ['timserver', 37],
  ['whois', 43], ['nicname', 43], ['tacacs', 49], ['domain', 53], ['bootps', 67], ['bootpc', 68],
  ['tftp', 69], ['gopher', 70], ['finger', 79], ['http', 80], ['www', 80], ['kerberos', 88],
  ['kerberos5', 88], ['krb5', 88], ['kerberos-sec', 88], ['iso-tsap', 102], ['tsap', 102],
  ['acr-nema', 104], ['dicom', 104], ['pop3', 110], ['pop-3', 110], ['sunrpc', 111],
  ['portmapper', 111], ['auth', 113], ['authentication', 113], ['tap', 113], ['ident', 113],
  ['nntp', 119], ['readnews', 119], ['untp', 119], ['ntp', 123], ['epmap', 135], ['loc-srv', 135],
  ['netbios-ns', 137], ['netbios-dgm', 138], ['netbios-ssn', 139], ['imap2', 143], ['imap', 143],
  ['snmp', 161], ['snmp-trap', 162], ['snmptrap', 162], ['cmip-man', 163], ['cmip-agent', 164],
  ['mailq', 174], ['xdmcp', 177], ['bgp', 179], ['smux', 199], ['qmtp', 209], ['z3950', 210],
  ['wais', 210], ['ipx', 213], ['ptp-event', 319], ['ptp-general', 320], ['pawserv', 345],
  ['zserv', 346], ['rpc2portmap', 369], ['codaauth2', 370], ['clearcase', 371], ['Clearcase', 371],
  ['ldap', 389], ['svrloc', 427], ['https', 443], ['snpp', 444], ['microsoft-ds', 445],
  ['kpasswd', 464], ['submissions', 465], ['ssmtp', 465], ['smtps', 465], ['urd', 465],
  ['saft', 487], ['isakmp', 500], ['rtsp', 554], ['nqs', 607], ['asf-rmcp', 623], ['qmqp', 628],
  ['ipp', 631], ['ldp', 646], ['exec', 512], ['biff', 512], ['comsat', 512], ['login', 513],
  ['who', 513], ['whod', 513], ['shell', 514], ['cmd', 514], ['syslog', 514], ['printer', 515],
  ['spooler', 515], ['talk', 517], ['ntalk', 518], ['route', 520], ['router', 520],
  ['routed', 520], ['gdomap', 538], ['uucp', 540], ['uucpd', 540], ['klogin', 543],
  ['kshell', 544], ['krcmd', 544], ['dhcpv6-client', 546], ['dhcpv6-server', 547],
  ['afpovertcp', 548], ['nntps', 563], ['snntp', 563], ['submission', 587], ['ldaps', 636],
  ['tinc', 655], ['silc', 706], ['kerberos-adm', 749], ['domain-s', 853], ['rsync', 873],
  ['ftps-data', 989], ['ftps', 990], ['telnets', 992], ['imaps', 993], ['pop3s', 995],
  ['socks', 1080], ['proofd', 1093], ['rootd', 1094], ['openvpn', 1194], ['rmiregistry', 1099],
  ['lotusnote', 1352], ['lotusnotes', 1352], ['ms-sql-s', 1433], ['ms-sql-m', 1434],
  ['ingreslock', 1524], ['datametrics', 1645], ['old-radius', 1645], ['sa-msg-port', 1646],
  ['old-radacct', 1646], ['kermit', 1649], ['groupwise', 1677], ['l2f', 1701], ['l2tp', 1701],
  ['radius', 1812], ['radius-acct', 1813], ['radacct', 1813], ['cisco-sccp', 2000], ['nfs', 2049],
  ['gnunet', 2086], ['rtcm-sc104', 2101], ['gsigatekeeper', 2119], ['gris', 2135],
  ['cvspserver', 2401], ['venus', 2430], ['venus-se', 2431], ['codasrv', 2432],
  ['codasrv-se', 2433], ['mon', 2583], ['dict', 2628], ['f5-globalsite', 2792], ['gsiftp', 2811],
  ['gpsd', 2947], ['gds-db', 3050], ['gds_db', 3050], ['icpv2', 3130], ['icp', 3130],
  ['isns', 3205], ['iscsi-target', 3260], ['mysql', 3306], ['ms-wbt-server', 3389], ['nut', 3493],
  ['distcc', 3632], ['daap', 3689], ['svn', 3690], ['subversion', 3690], ['suucp', 4031],
  ['sysrqd', 4094], ['sieve', 4190], ['epmd', 4369], ['remctl', 4373], ['f5-iquery', 4353],
  ['ntske', 4460], ['ipsec-nat-t', 4500], ['iax', 4569], ['mtn', 4691], ['radmin-port', 4899],
  ['sip', 5060], ['sip-tls', 5061], ['xmpp-client', 5222], ['jabber-client', 5222],
  ['xmpp-server', 5269], ['jabber-server', 5269], ['cfengine', 5308], ['mdns', 5353],
  ['postgresql', 5432], ['postgres', 5432], ['freeciv', 5556], ['rptp', 5556], ['amqps', 5671],
  ['amqp', 5672], ['x11', 6000], ['x11-0', 6000], ['x11-1', 6001], ['x11-2', 6002],
  ['x11-3', 6003], ['x11-4', 6004], ['x11-5', 6005], ['x11-6', 6006], ['x11-7', 6007],
  ['gnutella-svc', 6346], ['gnutella-rtr', 6347], ['redis', 6379], ['sge-qmaster', 6444],
  ['sge_qmaster', 6444], ['sge-execd', 6445], ['sge_execd', 6445], ['mysql-proxy', 6446],
  ['babel', 6696], ['ircs-u', 6697], ['bbs', 7000], ['afs3-fileserver', 7000],
  ['afs3-callback', 7001], ['afs3-prserver', 7002], ['afs3-vlserver', 7003],
  ['afs3-kaserver', 7004], ['afs3-volser', 7005], ['afs3-bos', 7007], ['afs3-update', 7008],
  ['afs3-rmtsys', 7009], ['font-service', 7100], ['xfs', 7100], ['http-alt', 8080],
  ['webcache', 8080], ['puppet', 8140], ['bacula-dir', 9101], ['bacula-fd', 9102],
  ['bacula-sd', 9103], ['xmms2', 9667], ['nbd', 10809], ['zabbix-agent', 10050],
  ['zabbix-trapper', 10051], ['amanda', 10080], ['hkp', 11371], ['db-lsp', 17500], ['dcap', 22125],
  ['gsidcap', 22128], ['wnn6', 22273], ['rtmp', 1], ['nbp', 2], ['zip', 6], ['kerberos4', 750],
  ['kerberos-iv', 750], ['kdc', 750], ['kerberos-master', 751], ['kerberos_master', 751],
  ['passwd-server', 752], ['passwd_server', 752], ['krb-prop', 754], ['krb_prop', 754],
  ['krb5_prop', 754], ['hprop', 754], ['zephyr-srv', 2102], ['zephyr-clt', 2103],
  ['zephyr-hm', 2104], ['iprop', 2121], ['supfilesrv', 871], ['supfiledbg', 1127],
  ['poppassd', 106], ['moira-db', 775], ['moira_db', 775], ['moira-update', 777],
  ['moira_update', 777], ['moira-ureg', 779], ['moira_ureg', 779], ['spamd', 783],
  ['skkserv', 1178], ['predict', 1210], ['rmtcfg', 1236], ['xtel', 1313], ['xtelw', 1314],
  ['zebrasrv', 2600], ['zebra', 2601], ['ripd', 2602], ['ripngd', 2603], ['ospfd', 2604],
  ['bgpd', 2605], ['ospf6d', 2606], ['ospfapi', 2607], ['isisd', 2608], ['fax', 4557],
  ['hylafax', 4559], ['munin', 4949], ['lrrd', 4949], ['rplay', 5555], ['nrpe', 5666],
  ['nsca', 5667], ['canna', 5680], ['syslog-tls', 6514], ['sane-port', 6566], ['sane', 6566],
  ['saned', 6566], ['ircd', 6667], ['zope-ftp', 8021], ['tproxy', 8081], ['omniorb', 8088],
  ['clc-build-daemon', 8990], ['xinetd', 9098], ['git', 9418], ['zope', 9673], ['webmin', 10000],
  ['kamanda', 10081], ['amandaidx', 10082], ['amidxtape', 10083], ['sgi-cmsd', 17001],
  ['sgi-crsd', 17002], ['sgi-gcd', 17003], ['sgi-cad', 17004], ['binkp', 24554], ['asp', 27374],
  ['csync2', 30865], ['dircproxy', 57000], ['tfido', 60177], ['fido', 60179],
]);

/**
 * `xtables_service_to_port(name, proto)`: the port of a service name, or null. `proto` null
 * (the NAT targets) or tcp/udp find every name; other protocols find none.
 */
export function serviceToPort(name: string, proto: string | null): number | null {
  if (proto !== null && proto !== 'tcp' && proto !== 'udp') return null;
  return SERVICES.get(name) ?? null;
}

/**
 * `xtables_parse_port(text, proto)`: a number 0-65535 (base 0) or a service name of `proto`.
 */
export function parsePort(text: string, proto: string | null): number | null {
  const n = strtoul(text, 0, 65535);
  if (n !== null) return n;
  return serviceToPort(text, proto);
}

/** Like {@link parsePort}, failing with `invalid port/service "x" specified`. */
export function parsePortOrFail(o: OptionOccurrence, text: string, proto: string | null): number {
  const p = parsePort(text, proto);
  if (p === null) {
    fail('BAD_PORT', `invalid port/service "${text}" specified${/^\d+$/.test(text) ? ' (must be 0-65535)' : ''}`, argSpan(o), o.arg);
  }
  return p;
}

/**
 * A port range as the tcp/udp/sctp matches read it (`parse_tcp_ports`): `p`, `a:b`, `:b` (from
 * 0), `a:` (to 65535), `:` (everything); `a > b` is an error.
 */
export function parsePortRange(o: OptionOccurrence, proto: string | null, allowReversed: boolean = false): PortRange {
  const text = argOf(o);
  const colon = text.indexOf(':');
  if (colon < 0) {
    const p = parsePortOrFail(o, text, proto);
    return { min: p, max: p };
  }
  const lo = text.slice(0, colon);
  const hi = text.slice(colon + 1);
  const min = lo === '' ? 0 : parsePortOrFail(o, lo, proto);
  const max = hi === '' ? 65535 : parsePortOrFail(o, hi, proto);
  if (min > max && !allowReversed) fail('BAD_PORT', `invalid port range "${text}" (min > max)`, argSpan(o), text);
  return { min, max };
}

/** Prints a port range as the matches save it: `p` or `a:b`. */
export function formatPortRange(r: PortRange, sep: string = ':'): string {
  return r.min === r.max ? String(r.min) : `${r.min}${sep}${r.max}`;
}

// ---------------------------------------------------------------------------------------------
// Marks

/**
 * `xtopt_parse_markmask`: `value[/mask]`, both 32-bit numbers in base 0; no mask means
 * 0xffffffff.
 */
export function parseMarkMask(o: OptionOccurrence, ext: string): { value: number; mask: number } {
  const text = argOf(o);
  const v = strtoulPrefix(text);
  if (!v || v.value > UINT32_MAX) badValue(o, `${ext}: bad mark value "${text}" for option "${o.written}" (must be 0-0xffffffff)`);
  let mask = UINT32_MAX;
  let end = v.end;
  if (text[end] === '/') {
    const m = strtoulPrefix(text.slice(end + 1));
    if (!m || m.value > UINT32_MAX) badValue(o, `${ext}: bad mask value "${text.slice(end + 1)}" for option "${o.written}" (must be 0-0xffffffff)`);
    mask = m.value;
    end = end + 1 + m.end;
  }
  if (end !== text.length) badValue(o, `${ext}: trailing garbage after value "${text}" for option "${o.written}"`);
  return { value: v.value, mask };
}

/** A plain 32-bit number (`XTTYPE_UINT32`), base 0. */
export function parseUint32(o: OptionOccurrence, ext: string, min: number = 0, max: number = UINT32_MAX): number {
  const text = argOf(o);
  const n = strtoul(text, min, max);
  if (n === null) badValue(o, `${ext}: bad value "${text}" for option "${o.written}" (must be ${min}-${max})`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Strings

const NO_QUOTE = /^[A-Za-z0-9_-]+$/;

/**
 * `xtables_save_string`: bare when the string is non-empty and only `[A-Za-z0-9_-]`, otherwise
 * in double quotes with `"`, `\` and `'` escaped by a backslash.
 */
export function saveString(value: string): string {
  if (NO_QUOTE.test(value)) return value;
  return `"${value.replace(/["\\']/g, (c) => `\\${c}`)}"`;
}

/**
 * Parses a comma-separated list of names where each item may be a case-insensitive prefix of a
 * name, matched in table order (`strncasecmp(item, name, strlen(item))`, as the conntrack,
 * state and addrtype parsers do). Returns the OR of the bits.
 */
export function parsePrefixList(
  o: OptionOccurrence,
  names: readonly (readonly [string, number])[],
  what: string,
): number {
  const text = argOf(o);
  let bits = 0;
  for (const item of text.split(',')) {
    if (item.length === 0) badValue(o, `bad ${what} "${text}"`);
    const lower = item.toLowerCase();
    const hit = names.find(([n]) => n.toLowerCase().startsWith(lower));
    if (!hit) badValue(o, `bad ${what} "${item}"`);
    bits |= hit[1];
  }
  return bits >>> 0;
}

/** Prints the names whose bits are set, in table order, joined by commas. */
export function formatBits(bits: number, names: readonly (readonly [string, number])[]): string {
  const out: string[] = [];
  for (const [n, b] of names) if (b !== 0 && (bits & b) !== 0) out.push(n);
  return out.join(',');
}

// ---------------------------------------------------------------------------------------------
// Addresses

/**
 * An address with an optional mask as `xtables_ipaddr_to_numeric` + `xtables_ipmask_to_numeric`
 * print it: no suffix for a full mask, `/len` for a contiguous one, the dotted (or IPv6) mask
 * otherwise. (The rule's own `-s`/`-d` always print `/32`; matches such as conntrack do not.)
 */
export function formatAddrMask(addr: readonly number[], mask: readonly number[], family: Family): string {
  const a = formatAddress(addr, family);
  const len = maskLength(mask);
  const full = family === 4 ? 32 : 128;
  if (len === full) return a;
  return len >= 0 ? `${a}/${len}` : `${a}/${formatAddress(mask, family)}`;
}

/**
 * `XTTYPE_HOSTMASK` as iptables 1.8.9 reads it (conntrack `--ctorigsrc`, policy
 * `--tunnel-src`): `address[/mask]` where the address is not masked, and the mask is a prefix
 * length or a full mask. Its quirks, checked against the binary: an IPv4 length above 32 means
 * /32, a non-contiguous mask means a full one; an IPv6 length above 128 is an error.
 */
export function parseHostMask(o: OptionOccurrence, ext: string, family: Family): { addr: number[]; mask: number[] } {
  const text = argOf(o);
  const slash = text.indexOf('/');
  const host = slash < 0 ? text : text.slice(0, slash);
  const addr = parseAddress(host, family);
  if (!addr) badValue(o, `${ext}: bad ${family === 4 ? 'IPv4' : 'IPv6'} address "${host}"`);
  if (slash < 0) return { addr, mask: prefixMask(family === 4 ? 32 : 128, family) };
  return { addr, mask: prefixMask(parsePlenMask(o, ext, family, text.slice(slash + 1), text), family) };
}

/**
 * `XTTYPE_PLENMASK` (HMARK `--hmark-src-prefix`): a prefix length or a full mask, with the
 * quirks of {@link parseHostMask}: an IPv4 length above 32 means 32, a non-contiguous mask means a
 * full one, an IPv6 length above 128 is an error. Returns the prefix length.
 */
export function parsePlenMask(o: OptionOccurrence, ext: string, family: Family, m: string = argOf(o), whole: string = m): number {
  const full = family === 4 ? 32 : 128;
  const bad = (): never => badValue(o, `${ext}: bad value "${whole}": neither a valid network mask nor a valid CIDR (0-${full})`);
  const n = strtoul(m, 0, UINT32_MAX);
  if (n !== null) {
    if (family === 6 && n > 128) bad();
    return Math.min(n, full);
  }
  const asMask = m === '' ? null : parseAddress(m, family);
  if (!asMask) bad();
  const len = maskLength(asMask!);
  return len < 0 ? full : len;
}

/** True when two address arrays are equal. */
export function sameAddress(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return a.length === b.length;
}

/** Compares two addresses as unsigned numbers: negative, zero or positive. */
export function compareAddress(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]! >>> 0;
    const y = b[i]! >>> 0;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Users and groups

/** Debian's base `/etc/passwd` users (base-passwd), standing in for `getpwnam`. */
export const DEFAULT_USERS: ReadonlyMap<string, number> = new Map([
  ['root', 0], ['daemon', 1], ['bin', 2], ['sys', 3], ['sync', 4], ['games', 5], ['man', 6], ['lp', 7],
  ['mail', 8], ['news', 9], ['uucp', 10], ['proxy', 13], ['www-data', 33], ['backup', 34], ['list', 38],
  ['irc', 39], ['_apt', 42], ['nobody', 65534],
]);

/** Debian's base `/etc/group` groups (base-passwd), standing in for `getgrnam`. */
export const DEFAULT_GROUPS: ReadonlyMap<string, number> = new Map([
  ['root', 0], ['daemon', 1], ['bin', 2], ['sys', 3], ['adm', 4], ['tty', 5], ['disk', 6], ['lp', 7],
  ['mail', 8], ['news', 9], ['uucp', 10], ['man', 12], ['proxy', 13], ['kmem', 15], ['dialout', 20],
  ['fax', 21], ['voice', 22], ['cdrom', 24], ['floppy', 25], ['tape', 26], ['sudo', 27], ['audio', 29],
  ['dip', 30], ['www-data', 33], ['backup', 34], ['operator', 37], ['list', 38], ['irc', 39], ['src', 40],
  ['shadow', 42], ['utmp', 43], ['video', 44], ['sasl', 45], ['plugdev', 46], ['staff', 50],
  ['games', 60], ['users', 100], ['nogroup', 65534],
]);

/** The accounts of a parse context, or the Debian defaults. */
export function accountsOf(ctx: ExtensionContext): Accounts {
  return ctx.accounts ?? { users: DEFAULT_USERS, groups: DEFAULT_GROUPS };
}

// ---------------------------------------------------------------------------------------------
// Typed xtables options (xtoptions.c)

/**
 * `xtopt_parse_mint` with two components (`XTTYPE_UINT*RC`): `a`, `a:b`, `:b` (from 0) or `a:`
 * (to `max`), each number in base 0 up to `max`. Returns `[min, max]` and how many components
 * were written (1 or 2); no ordering is enforced, as xtables enforces none.
 */
export function parseUintRange(o: OptionOccurrence, ext: string, max: number): { lo: number; hi: number; count: number } {
  const text = argOf(o);
  const parts = text.split(':');
  if (parts.length > 2) badValue(o, `${ext}: too many components for option "--${o.name}" (max: 2)`);
  const vals: number[] = [];
  parts.forEach((p, i) => {
    if (p === '') {
      vals.push(i === 1 ? max : 0);
      return;
    }
    const n = strtoulPrefix(p);
    if (!n || n.value > max) badValue(o, `${ext}: bad value for option "--${o.name}" near "${p}", or out of range (0-${max})`);
    if (n.end !== p.length) badValue(o, `${ext}: argument to "--${o.name}" has unexpected characters near "${p.slice(n.end)}"`);
    vals.push(n.value);
  });
  return { lo: vals[0]!, hi: vals[1] ?? vals[0]!, count: vals.length };
}

/** Prints a range as most matches save one: `a` when both ends are equal, else `a:b`. */
export function formatRange(lo: number, hi: number): string {
  return lo === hi ? String(lo) : `${lo}:${hi}`;
}

/** `! ` when negated, as every save function prints it before the option. */
export function bang(negated: boolean): string {
  return negated ? '! ' : '';
}

/** The IPv4 TOS names `xtables_parse_tosmask` knows (`tos_symbol_names`). */
export const TOS_NAMES: readonly (readonly [string, number])[] = [
  ['Minimize-Delay', 0x10], ['Maximize-Throughput', 0x08], ['Maximize-Reliability', 0x04],
  ['Minimize-Cost', 0x02], ['Normal-Service', 0x00],
];

/**
 * `XTTYPE_TOSMASK`: `value[/mask]` (8-bit numbers, mask 0xff when absent) or a TOS name, which
 * takes `symbolMask` as its mask (0x3f for the match revision 1, 0xff for the TOS target).
 */
export function parseTosMask(o: OptionOccurrence, ext: string, symbolMask: number): { value: number; mask: number } {
  const text = argOf(o);
  const v = strtoulPrefix(text);
  if (v && text[0] !== ' ') {
    if (v.value > 0xff) badValue(o, `${ext}: illegal value "${text}" (must be 0-255)`);
    if (v.end === text.length) return { value: v.value, mask: 0xff };
    if (text[v.end] !== '/') badValue(o, `${ext}: illegal value "${text}"`);
    const m = strtoul(text.slice(v.end + 1), 0, 0xff);
    if (m === null) badValue(o, `${ext}: illegal mask in "${text}" (must be 0-255)`);
    return { value: v.value, mask: m };
  }
  const hit = TOS_NAMES.find(([n]) => n.toLowerCase() === text.toLowerCase());
  if (!hit) badValue(o, `${ext}: symbolic name "${text}" is unknown`);
  return { value: hit[1], mask: symbolMask };
}

/** `0x%02x`. */
export function hex2(value: number): string {
  return `0x${value.toString(16).padStart(2, '0')}`;
}

/**
 * `xtables_parse_val_mask` without a names file (`/etc/iproute2/rt_realms`, `group`): `v[/m]`,
 * 32-bit numbers in base 0, mask 0xffffffff when absent.
 */
export function parseValMask(o: OptionOccurrence, ext: string): { value: number; mask: number } {
  const text = argOf(o);
  const v = strtoulPrefix(text);
  if (!v || v.value > UINT32_MAX) badValue(o, `${ext}: "${text}" is not a number and no names file lists it`);
  if (v.end === text.length) return { value: v.value, mask: UINT32_MAX };
  if (text[v.end] !== '/') badValue(o, `${ext}: bad value "${text}"`);
  const m = strtoul(text.slice(v.end + 1), 0, UINT32_MAX);
  if (m === null) badValue(o, `${ext}: bad mask in "${text}"`);
  return { value: v.value, mask: m };
}

/** `xtables_print_val_mask` without names: `0xV` or `0xV/0xM`. */
export function formatValMask(value: number, mask: number): string {
  return mask === UINT32_MAX ? hex(value) : `${hex(value)}/${hex(mask)}`;
}

/** Fails unless the option was given (`XTOPT_MAND`), naming it as xtables does. */
export function requireOption(ctx: ExtensionContext, occurrences: readonly OptionOccurrence[], ext: string, name: string): void {
  if (!occurrences.some((o) => o.name === name)) missing(ctx, ext, `option "--${name}" must be specified`);
}

/** Fails when an option in `group` follows another of the group (`.excl`). */
export function exclusive(occurrences: readonly OptionOccurrence[], group: readonly string[]): void {
  let first: OptionOccurrence | undefined;
  for (const o of occurrences) {
    if (!group.includes(o.name)) continue;
    if (first && first.name !== o.name) conflict(o, first.written);
    first ??= o;
  }
}

/** `XTTYPE_UINT64`: a 64-bit number in base 0, exact (as a bigint). */
export function parseUint64(o: OptionOccurrence, ext: string, text: string = argOf(o)): bigint {
  const m = /^\s*\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/.exec(text);
  const v = m ? BigInt(m[1]!.length > 1 && m[1]![0] === '0' && !/[xX]/.test(m[1]!) ? `0o${m[1]!.slice(1)}` : m[1]!) : -1n;
  if (v < 0n || v > 0xffffffffffffffffn) badValue(o, `${ext}: bad value "${text}" for option "${o.written}" (must be 0-18446744073709551615)`);
  return v;
}

/**
 * `xt_check_proc_name`: the name of a `/proc/net/xt_*` entry (`recent --name`, `hashlimit
 * --hashlimit-name`) may not be `.` or `..` nor contain `/`; the kernel refuses the rule with
 * EINVAL. Returns the diagnostics for `what`.
 */
export function checkProcName(name: string, what: string): Diagnostic[] {
  if (name === '.' || name === '..' || name.includes('/')) {
    return [diagnostic('BAD_VALUE', `${what} "${name}": the kernel refuses a name that is . or .. or contains / (it names a /proc entry; Invalid argument)`, undefined, name)];
  }
  return [];
}
