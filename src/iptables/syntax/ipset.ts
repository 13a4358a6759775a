/**
 * Reads ipset contents: `ipset save` text (`create NAME TYPE family inet …`, `add NAME MEMBER`)
 * and the short `NAME=MEMBER,MEMBER` form of the command line.
 *
 * @module
 */
import { diagnostic, type Diagnostic, NetfilterSimError } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';
import type { Ipset, IpsetEntry, IpsetType } from '../../model/ipset.js';
import type { Family } from '../../model/types.js';
import { parseAddress } from '../../model/address.js';

const TYPES: readonly IpsetType[] = ['hash:ip', 'hash:net', 'hash:ip,port', 'hash:net,port'];
/** `IPSET_MAXNAMELEN` - 1. */
export const IPSET_MAX_NAME = 31;
const PROTOS: Readonly<Record<string, number>> = { tcp: 6, udp: 17, sctp: 132, udplite: 136 };

interface Pos {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

function err(message: string, pos: Pos, token: string): Diagnostic {
  return diagnostic('BAD_VALUE', message, { line: pos.line, column: pos.column, offset: pos.offset, length: Math.max(1, token.length) }, token);
}

/**
 * Parses one member of a set of the given type (`10.0.0.5`, `10.0.0.0/24`, `10.0.0.5,tcp:80`,
 * `10.0.0.0/8,udp:53 nomatch` handled by the caller). Returns a message on error.
 */
export function parseIpsetMember(text: string, type: IpsetType, family: Family): IpsetEntry | string {
  const [addrPart, portPart, extra] = text.split(',');
  if (extra !== undefined) return `"${text}" has more parts than a ${type} member`;
  const withPort = type.endsWith(',port');
  if (withPort !== (portPart !== undefined)) return withPort ? `a ${type} member needs ADDRESS,PROTO:PORT, got "${text}"` : `a ${type} member is an address, got "${text}"`;
  const slash = addrPart!.indexOf('/');
  const host = slash < 0 ? addrPart! : addrPart!.slice(0, slash);
  const addr = parseAddress(host, family);
  if (addr === null) return `"${host}" is not an IPv${family} address`;
  const max = family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    if (type.startsWith('hash:ip')) return `a ${type} member takes no prefix ("${addrPart}")`;
    const p = addrPart!.slice(slash + 1);
    if (!/^\d+$/.test(p) || Number(p) < 1 || Number(p) > max) return `bad prefix length "${p}"`;
    prefix = Number(p);
  }
  const entry: { addr: number[]; prefix: number; proto?: number; port?: number; nomatch: boolean } = { addr: maskTo(addr, prefix), prefix, nomatch: false };
  if (portPart !== undefined) {
    const m = /^(?:([a-z]+):)?(\d+)$/.exec(portPart);
    const proto = m?.[1] === undefined ? 6 : PROTOS[m[1]];
    if (!m || proto === undefined || Number(m[2]) > 65535) return `bad PROTO:PORT "${portPart}" (e.g. tcp:80)`;
    entry.proto = proto;
    entry.port = Number(m[2]);
  }
  return entry;
}

function maskTo(addr: readonly number[], prefix: number): number[] {
  return addr.map((w, i) => {
    const bits = Math.max(0, Math.min(32, prefix - 32 * i));
    return bits === 0 ? 0 : bits === 32 ? w >>> 0 : (w & (~0 << (32 - bits))) >>> 0;
  });
}

/**
 * Parses `ipset save` output (or `ipset restore` input): `create` and `add` lines; `-exist`,
 * comments and blank lines are ignored, other commands refused. Throws a `NetfilterSimError`
 * naming the line and token.
 *
 * @example
 * ```ts
 * parseIpsetSave('create p hash:ip family inet\nadd p 10.0.0.5\n')[0].entries.length; // 1
 * ```
 */
export function parseIpsetSave(text: string, file = '<ipset>'): Ipset[] {
  expectArgument(text, 'string', 'text');
  expectArgument(file, 'string', 'file');
  const sets = new Map<string, { name: string; type: IpsetType; family: Family; entries: IpsetEntry[] }>();
  const lines = text.split('\n');
  let offset = 0;
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    const start = offset;
    const pos = (col: number): Pos => ({ line: i + 1, column: col + 1, offset: start + col });
    offset += raw.length + 1;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const words = [...line.matchAll(/\S+/g)].map((m) => ({ text: m[0], col: m.index! }));
    const fail = (message: string, w: { text: string; col: number }): never => {
      throw new NetfilterSimError([err(message, pos(w.col), w.text)], { file });
    };
    const cmd = words[0]!;
    const name = words[1];
    if (cmd.text !== 'create' && cmd.text !== 'add' && cmd.text !== '-N' && cmd.text !== '-A') fail(`unsupported ipset command "${cmd.text}" (expected create or add)`, cmd);
    if (!name) fail(`${cmd.text} needs a set name`, cmd);
    if (name!.text.length > IPSET_MAX_NAME) fail(`set name "${name!.text}" is longer than ${IPSET_MAX_NAME} characters`, name!);
    if (cmd.text === 'create' || cmd.text === '-N') {
      const type = words[2];
      if (!type || !(TYPES as readonly string[]).includes(type.text)) {
        fail(`set type ${type ? `"${type.text}"` : 'missing'} (modelled: ${TYPES.join(', ')})`, type ?? name!);
      }
      let family: Family = 4;
      const fi = words.findIndex((w) => w.text === 'family');
      if (fi >= 0) {
        const f = words[fi + 1];
        if (f?.text === 'inet') family = 4;
        else if (f?.text === 'inet6') family = 6;
        else fail(`family must be inet or inet6`, f ?? words[fi]!);
      }
      if (sets.has(name!.text)) fail(`set "${name!.text}" is created twice`, name!);
      sets.set(name!.text, { name: name!.text, type: type!.text as IpsetType, family, entries: [] });
      return;
    }
    const set = sets.get(name!.text);
    if (!set) fail(`set "${name!.text}" is not created before this add`, name!);
    const member = words[2];
    if (!member) fail('add needs a member', name!);
    const e = parseIpsetMember(member!.text, set!.type, set!.family);
    if (typeof e === 'string') fail(e, member!);
    const nomatch = words.slice(3).some((w) => w.text === 'nomatch');
    set!.entries.push(nomatch ? { ...(e as IpsetEntry), nomatch: true } : (e as IpsetEntry));
  });
  return [...sets.values()];
}

/**
 * Parses the command line's `NAME=MEMBER,MEMBER…` (a `hash:ip`, or `hash:net` when a member has
 * a prefix; the family from the first member; `NAME=` is an empty IPv4 set, `NAME=inet6:` an
 * empty IPv6 one).
 *
 * @example
 * ```ts
 * parseIpsetArgument('istio-inpod-probes-v4=10.0.0.2,10.0.0.3').entries.length; // 2
 * ```
 */
export function parseIpsetArgument(text: string): Ipset {
  expectArgument(text, 'string', 'text');
  const eq = text.indexOf('=');
  const bad = (message: string): never => {
    throw new NetfilterSimError([diagnostic('BAD_VALUE', `--ipset ${text}: ${message}`, undefined, text)]);
  };
  if (eq <= 0) bad('expected NAME=ADDRESS,…');
  const name = text.slice(0, eq);
  if (name.length > IPSET_MAX_NAME) bad(`set name longer than ${IPSET_MAX_NAME} characters`);
  let rest = text.slice(eq + 1);
  let family: Family | undefined;
  if (rest.startsWith('inet6:')) {
    family = 6;
    rest = rest.slice(6);
  } else if (rest.startsWith('inet:')) {
    family = 4;
    rest = rest.slice(5);
  }
  const members = rest.split(',').filter((m) => m !== '');
  family ??= members[0]?.includes(':') ? 6 : 4;
  const type: IpsetType = members.some((m) => m.includes('/')) ? 'hash:net' : 'hash:ip';
  const entries = members.map((m) => {
    const e = parseIpsetMember(m, type, family);
    return typeof e === 'string' ? bad(e) : e;
  });
  return { name, type, family, entries };
}

/** Every set type ipset 7 creates, and the family its sets have when `family` is not given. */
const ALL_TYPES: ReadonlyMap<string, Family | null> = new Map<string, Family | null>([
  ['bitmap:ip', 4], ['bitmap:ip,mac', 4], ['bitmap:port', null],
  ['hash:ip', 4], ['hash:mac', null], ['hash:ip,mac', 4], ['hash:net', 4], ['hash:net,net', 4],
  ['hash:ip,port', 4], ['hash:net,port', 4], ['hash:ip,port,ip', 4], ['hash:ip,port,net', 4],
  ['hash:ip,mark', 4], ['hash:net,port,net', 4], ['hash:net,iface', 4], ['list:set', null],
]);

/** A set's name, type and family, as far as a rule that names it cares. */
export interface IpsetHeader {
  readonly name: string;
  readonly type: string;
  /** `null`: a set that serves both families (`list:set`, `bitmap:port`, `hash:mac`). */
  readonly family: Family | null;
}

/**
 * Reads only the `create` lines of `ipset save` output, for any set type ipset knows (a node's
 * kube-proxy in IPVS mode has `bitmap:port` and `hash:ip,port,net` sets): what loading rules that
 * name sets needs. `add` lines, comments and blank lines are skipped; other commands, unknown
 * types and a set created twice are refused with a `NetfilterSimError` naming the line.
 *
 * @example
 * ```ts
 * parseIpsetHeaders('create KUBE-NODE-PORT-TCP bitmap:port range 0-65535\n'); // [{ name: 'KUBE-NODE-PORT-TCP', type: 'bitmap:port', family: null }]
 * ```
 */
export function parseIpsetHeaders(text: string, file = '<ipset>'): IpsetHeader[] {
  expectArgument(text, 'string', 'text');
  expectArgument(file, 'string', 'file');
  const out = new Map<string, IpsetHeader>();
  let offset = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    const start = offset;
    offset += raw.length + 1;
    const words = [...line.matchAll(/\S+/g)].map((m) => ({ text: m[0], col: m.index! }));
    const bad = (message: string, w: { text: string; col: number }): never => {
      throw new NetfilterSimError([err(message, { line: i + 1, column: w.col + 1, offset: start + w.col }, w.text)], { file });
    };
    const cmd = words[0];
    if (cmd === undefined || cmd.text.startsWith('#') || cmd.text === 'add' || cmd.text === '-A') return;
    if (cmd.text !== 'create' && cmd.text !== '-N') bad(`unsupported ipset command "${cmd.text}" (expected create or add)`, cmd);
    const name = words[1] ?? bad(`${cmd.text} needs a set name`, cmd);
    if (name.text.length > IPSET_MAX_NAME) bad(`set name "${name.text}" is longer than ${IPSET_MAX_NAME} characters`, name);
    const type = words[2] ?? bad(`create ${name.text} needs a set type`, name);
    if (!ALL_TYPES.has(type.text)) bad(`unknown set type "${type.text}" (ipset has ${[...ALL_TYPES.keys()].join(', ')})`, type);
    let family = ALL_TYPES.get(type.text)!;
    const fi = words.findIndex((w) => w.text === 'family');
    if (fi >= 0) {
      const f = words[fi + 1];
      if (f?.text === 'inet') family = 4;
      else if (f?.text === 'inet6') family = 6;
      else bad('family must be inet or inet6', f ?? words[fi]!);
    }
    if (out.has(name.text)) bad(`set "${name.text}" is created twice`, name);
    out.set(name.text, { name: name.text, type: type.text, family });
  });
  return [...out.values()];
}
