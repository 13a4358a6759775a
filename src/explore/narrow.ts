/**
 * Narrowing an exploration: the options that restrict the probe space to a box (destination and
 * source prefixes, port, uid and gid ranges, interfaces), read into interval sets per field.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';
import { parseAnyAddress } from '../engine/state/routing.js';
import { wordsToBig } from './instrument.js';
import { normalize } from './intervals.js';
import type { IntervalSet } from './intervals.js';

/** A list of values, or one string of comma-separated values. */
type ListOf<T> = T | readonly T[];

/**
 * The options of `explore` that narrow the space. A probe is in the narrowed space when every
 * given field holds one of its values; a field not given is not narrowed.
 */
export interface ExploreNarrowing {
  /** Destination prefixes (`10.96.0.0/12`, `fd00::/64`, one address); a family without one is not explored. */
  readonly dst?: ListOf<string>;
  /** Source prefixes (remote probes only), as `dst`. */
  readonly src?: ListOf<string>;
  /** Destination ports: `80`, `8000-8080`, `80,443`, or numbers. */
  readonly dport?: ListOf<string | number>;
  /** The local process's uid: `N` or `N-M` (local probes only). */
  readonly uid?: ListOf<string | number>;
  /** The local process's gid: `N` or `N-M` (local probes only). */
  readonly gid?: ListOf<string | number>;
  /** The interfaces a remote probe arrives on, by name (remote probes only). */
  readonly iface?: ListOf<string>;
}

/** The narrowing, read: per field its allowed values (addresses per family); absent fields are whole. */
export interface NarrowSets {
  readonly dst?: { readonly 4: IntervalSet; readonly 6: IntervalSet };
  readonly src?: { readonly 4: IntervalSet; readonly 6: IntervalSet };
  readonly dport?: IntervalSet;
  readonly uid?: IntervalSet;
  readonly gid?: IntervalSet;
  readonly iface?: readonly string[];
}

function badOption(option: string, message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `explore: ${option}: ${message}`));
}

function items<T>(option: string, value: ListOf<T>, kind: 'string' | 'string-or-number'): string[] {
  const list = Array.isArray(value) ? (value as readonly unknown[]) : [value];
  if (list.length === 0) badOption(option, 'an empty list narrows the space to nothing (leave it out to explore every value)');
  const out: string[] = [];
  for (const v of list) {
    if (typeof v === 'number' && kind === 'string-or-number') out.push(String(v));
    else if (typeof v === 'string') out.push(...v.split(',').map((s) => s.trim()));
    else badOption(option, `expected ${kind === 'string' ? 'a string' : 'a string or a number'}, not ${v === null ? 'null' : typeof v}`);
  }
  for (const s of out) if (s === '') badOption(option, `an empty value in "${list.join(',')}"`);
  return out;
}

function prefixes(option: 'dst' | 'src', value: ListOf<string>): { 4: IntervalSet; 6: IntervalSet } {
  const by: { 4: [bigint, bigint][]; 6: [bigint, bigint][] } = { 4: [], 6: [] };
  for (const text of items(option, value, 'string')) {
    const slash = text.indexOf('/');
    const addrText = slash < 0 ? text : text.slice(0, slash);
    const a = parseAnyAddress(addrText);
    if (!a) badOption(option, `"${text}" is not an address or a prefix (ADDR or ADDR/LEN)`);
    const bits = a.family === 4 ? 32 : 128;
    let len = bits;
    if (slash >= 0) {
      const l = text.slice(slash + 1);
      if (!/^\d{1,3}$/.test(l) || Number(l) > bits) badOption(option, `"${text}": the prefix length is 0-${bits} for IPv${a.family}`);
      len = Number(l);
    }
    const host = (1n << BigInt(bits - len)) - 1n;
    const base = wordsToBig(a.addr) & ~host;
    by[a.family].push([base, base | host]);
  }
  return { 4: normalize(by[4]), 6: normalize(by[6]) };
}

function numbers(option: string, value: ListOf<string | number>, min: number, max: number, what: string): IntervalSet {
  const out: [bigint, bigint][] = [];
  for (const text of items(option, value, 'string-or-number')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(text);
    if (!m) badOption(option, `"${text}" is not N or N-M`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (lo < min || hi > max || !Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) badOption(option, `"${text}" is outside ${what} ${min}-${max}`);
    if (lo > hi) badOption(option, `"${text}" has its first value above its last`);
    out.push([BigInt(lo), BigInt(hi)]);
  }
  return normalize(out);
}

/**
 * Reads the narrowing options of `explore` (which fields exist depends on `from`), or throws
 * `BAD_ARGUMENT` naming the option.
 */
export function readNarrowing(options: ExploreNarrowing, from: 'local' | 'remote'): NarrowSets {
  const out: { -readonly [K in keyof NarrowSets]: NarrowSets[K] } = {};
  const onlyFor = (option: keyof ExploreNarrowing, side: 'local' | 'remote'): void => {
    if (options[option] !== undefined && from !== side) {
      badOption(option, `narrows the ${side} space; ${from} probes have ${from === 'local' ? 'uid, gid, dst and dport' : 'src, dst, dport and iface'}`);
    }
  };
  onlyFor('uid', 'local');
  onlyFor('gid', 'local');
  onlyFor('src', 'remote');
  onlyFor('iface', 'remote');
  if (options.dst !== undefined) out.dst = prefixes('dst', options.dst);
  if (options.src !== undefined) out.src = prefixes('src', options.src);
  if (options.dport !== undefined) out.dport = numbers('dport', options.dport, 1, 65535, 'the ports');
  if (options.uid !== undefined) out.uid = numbers('uid', options.uid, 0, 0xffffffff, 'the uids');
  if (options.gid !== undefined) out.gid = numbers('gid', options.gid, 0, 0xffffffff, 'the gids');
  if (options.iface !== undefined) out.iface = [...new Set(items('iface', options.iface, 'string'))];
  return out;
}

/** The narrowing as text, for a result's header: `dst 10.96.0.0/12, dport 80`. */
export function narrowingText(options: ExploreNarrowing): string {
  const parts: string[] = [];
  for (const k of ['uid', 'gid', 'src', 'dst', 'dport', 'iface'] as const) {
    const v = options[k];
    if (v === undefined) continue;
    parts.push(`${k} ${(Array.isArray(v) ? (v as readonly unknown[]) : [v]).join(',')}`);
  }
  return parts.join(', ');
}
