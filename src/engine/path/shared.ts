/**
 * What namespaces built from the same rule text share. Reading a rule set (parsing it as the
 * restore tools would, checking it) and lowering it are most of what building a namespace costs,
 * and a property test, `explore` or a cluster builds many namespaces from a few texts. The first
 * namespace built from a text reads it; the rule set it gives is frozen and kept, with what a
 * namespace derives from it (its warnings, whether it turns conntrack on, whether the outcome
 * cache may serve it), for every later namespace built from the same text, read the same way.
 *
 * The lowered program is kept too, per list of interface names (lowering resolves `-i`/`-o`
 * against them), when no rule of the set has a match whose lowered test keeps state between
 * packets (`limit`, `hashlimit`, `quota`, `statistic --mode nth`) or reads the namespace's
 * ipsets or rate estimators (`set`, `rateest`): a lowered program holds no counter (each
 * namespace counts into its own array, see `LoweredRule.id`) and its tests read only their rule
 * and the packet, which carries its own namespace.
 *
 * Only texts read with the built-in extension registry are kept (a custom registry can give
 * the same text another meaning), texts of at most {@link MAX_SHARED_TEXT} characters, and at
 * most {@link MAX_SHARED_RULE_SETS} of them: past that the oldest goes. A parsed rule set given
 * to a namespace is not kept (the caller owns it).
 *
 * @module
 */
import type { Family, Ruleset } from '../../model/types.js';
import type { Diagnostic } from '../../model/errors.js';
import type { CheckOptions } from '../../iptables/check/check.js';
import { MATCHES, TARGETS } from '../../iptables/extensions/registry.js';
import type { ExtensionRegistry } from '../rules/registry.js';
import { outcomeCacheRefusal } from './outcome-cache.js';
import { lowerRuleset } from '../rules/iptables-lower.js';
import type { LoweredRuleset } from '../rules/iptables-lower.js';
import type { LowerEnvironment } from '../../iptables/extensions/types.js';
import { loadNft, loadRules, needsConntrack } from './setup.js';
import type { NftRuleset } from '../../nftables/model.js';
import { Routing, parseAnyAddress } from '../state/routing.js';
import type { RoutingConfig } from '../state/routing.js';
import type { SocketView } from '../../model/packet.js';
import type { SocketRecord } from '../state/packet-state.js';
import { pushAll } from '../../model/limits.js';
import { parseEndpoint } from './probe.js';
import type { Endpoint } from './probe.js';
import type { ListenerSpec } from './api.js';
import { parseListener } from './setup.js';

/** Readings kept at most; a new text past this drops the oldest text's. */
export const MAX_SHARED_RULE_SETS = 256;
/** Characters of the longest text kept (longer ones are read for each namespace). */
export const MAX_SHARED_TEXT = 1 << 20;

/** One family's rule text, read and checked once, and what a namespace derives from it. */
export interface SharedRules {
  /** The rule set, frozen (every namespace built from the text holds this one object). */
  readonly ruleset: Ruleset;
  /** What reading it reported without refusing it (lenient reading), as `Netns.warnings` lists it. */
  readonly warnings: readonly Diagnostic[];
  readonly needsConntrack: boolean;
  /** Why the outcome cache may not serve it ({@link outcomeCacheRefusal}), or null. */
  readonly cacheRefusal: string | null;
  /** Its lowered programs by interface names; null when namespaces may not share them. */
  readonly programs: Map<string, LoweredRuleset> | null;
  /** Whether a rule names an ipset (`-m set`, `-j SET`): else there is nothing to check against the namespace's sets. */
  readonly namesSets: boolean;
}

/**
 * Built-in matches whose lowered test keeps nothing from one packet to the next and reads no
 * namespace state but through the packet (its host: routing, sockets, conntrack, `recent`
 * lists, the clock, `statistic` draws): namespaces may share a program made of them. Every other
 * built-in match is named in {@link UNSHARED_MATCHES}; a match in neither list (a module added
 * since) keeps its program unshared.
 */
export const SHAREABLE_MATCHES: ReadonlySet<string> = new Set([
  'addrtype', 'comment', 'connmark', 'conntrack', 'icmp', 'icmp6', 'icmpv6', 'ipv6-icmp', 'iprange', 'mac', 'mark', 'multiport',
  'nfacct', 'owner', 'policy', 'recent', 'rpfilter', 'sctp', 'socket', 'state', 'tcp', 'udp', 'length', 'ttl', 'hl', 'tos', 'dscp',
  'pkttype', 'helper', 'realm', 'devgroup', 'cpu', 'connlimit', 'esp', 'ah', 'ipcomp', 'ecn', 'tcpmss', 'physdev', 'cgroup',
  'connbytes', 'connlabel', 'cluster', 'string', 'u32', 'time', 'rt', 'frag', 'hbh', 'dst', 'ipv6header', 'eui64', 'mh', 'dccp',
  'srh', 'osf', 'bpf',
]);

/**
 * Built-in matches that keep their program unshared: a token bucket, a quota or an nth counter in
 * the lowered test, or the namespace's ipsets and rate estimators bound at lowering (`statistic`
 * only in `nth` mode: a random draw comes from the namespace).
 */
export const UNSHARED_MATCHES: ReadonlySet<string> = new Set(['limit', 'hashlimit', 'quota', 'statistic', 'set', 'rateest']);

/** Whether namespaces may share a lowered program of `rs` (see {@link SHAREABLE_MATCHES}). */
function programShareable(rs: Ruleset): boolean {
  for (const t of rs.tables) {
    for (const c of t.chains) {
      for (const r of c.rules) {
        for (const m of r.matches) {
          if (SHAREABLE_MATCHES.has(m.name)) continue;
          if (m.name === 'statistic' && (m.options as { readonly mode?: string }).mode === 'random') continue;
          return false;
        }
      }
    }
  }
  return true;
}

/** Whether a rule of `rs` names an ipset: a `set` match or a `SET` target. */
function namesSets(rs: Ruleset): boolean {
  for (const t of rs.tables) {
    for (const c of t.chains) {
      for (const r of c.rules) {
        if (r.matches.some((m) => m.name === 'set')) return true;
        if (r.target?.kind === 'extension' && r.target.name === 'SET') return true;
      }
    }
  }
  return false;
}

/** Lowered programs kept per reading (interface-name lists seen), at most. */
const MAX_PROGRAMS = 16;

/**
 * The lowered program of a reading for a namespace whose interfaces are `ifaceNames`: the kept
 * one when namespaces may share it, else one of its own (lowered with `env`).
 */
export function loweredProgram(read: SharedRules, ifaceNames: readonly string[], registry: ExtensionRegistry, env: LowerEnvironment): LoweredRuleset {
  const programs = read.programs;
  if (programs === null) return lowerRuleset(read.ruleset, ifaceNames, registry, env);
  const key = ifaceNames.join(' ');
  let program = programs.get(key);
  if (program === undefined) {
    // Its tests read no ipset or rate estimator (programShareable): no namespace's env.
    program = lowerRuleset(read.ruleset, ifaceNames, registry, {});
    if (programs.size < MAX_PROGRAMS) programs.set(key, program);
  }
  return program;
}

/**
 * Kept readings by text (oldest first), then by how it was read (see {@link howRead}). The text
 * itself is the key: a string keeps its hash, so a namespace given the same string again finds
 * its reading without hashing the text anew.
 */
const kept = new Map<string, Map<string, SharedRules>>();
/** Readings kept, all texts together. */
let keptCount = 0;

function howRead(family: Family, lenient: boolean, options: CheckOptions | undefined): string {
  return `${family}${lenient ? 'l' : 's'}${options?.backend === 'legacy' ? 'L' : 'n'}`;
}

/** Whether what namespaces read with `registry` may be shared: the built-in modules only. */
function sharedRegistry(registry: ExtensionRegistry, options: CheckOptions | undefined): boolean {
  return registry.matches === MATCHES && registry.targets === TARGETS && (options?.registry === undefined || (options.registry.matches === MATCHES && options.registry.targets === TARGETS));
}

/** The kept reading of `text`, if a namespace has read it the same way before. */
export function keptRules(text: string, family: Family, registry: ExtensionRegistry, options: CheckOptions | undefined, lenient: boolean): SharedRules | undefined {
  if (text.length > MAX_SHARED_TEXT || !sharedRegistry(registry, options)) return undefined;
  return kept.get(text)?.get(howRead(family, lenient, options));
}

/**
 * `text` (iptables-save text) read for one family as {@link loadRules} reads it: the kept reading
 * when there is one, else a new one, kept when the text and the registry allow. Throws what
 * loadRules throws; a refused text is not kept.
 */
export function readRules(text: string, family: Family, registry: ExtensionRegistry, options: CheckOptions | undefined, lenient: boolean): SharedRules {
  const shareable = text.length <= MAX_SHARED_TEXT && sharedRegistry(registry, options);
  const how = howRead(family, lenient, options);
  const hit = shareable ? kept.get(text)?.get(how) : undefined;
  if (hit !== undefined) return hit;
  const warnings: Diagnostic[] = [];
  const ruleset = loadRules(text, family, registry, options, lenient, warnings);
  const read: SharedRules = {
    ruleset, warnings, needsConntrack: needsConntrack(ruleset), cacheRefusal: outcomeCacheRefusal([ruleset]),
    programs: shareable && programShareable(ruleset) ? new Map() : null,
    namesSets: namesSets(ruleset),
  };
  if (!shareable) return read;
  freeze(read);
  let readings = kept.get(text);
  if (readings === undefined) {
    readings = new Map();
    kept.set(text, readings);
  }
  readings.set(how, read);
  keptCount++;
  // Past the bound, the oldest texts' readings go (never the one just made).
  for (const [oldest, r] of kept) {
    if (keptCount <= MAX_SHARED_RULE_SETS || oldest === text) break;
    keptCount -= r.size;
    kept.delete(oldest);
  }
  return read;
}

/** Listener lists by their options, kept for the namespaces given the same (at most 1,024). */
const LISTENERS = new Map<string, readonly SocketRecord[]>();

/**
 * The listening sockets of a namespace's `listen` option. Namespaces given the same list (of
 * ports, texts and plain specs) share one list of records: nothing writes to a listener's record.
 */
export function listenersOf(listen: readonly (number | string | ListenerSpec)[]): readonly SocketRecord[] {
  const key = JSON.stringify(listen);
  let out = LISTENERS.get(key);
  if (out === undefined) {
    const list: SocketRecord[] = [];
    for (const l of listen) pushAll(list, parseListener(l));
    out = list;
    if (LISTENERS.size >= 1024) LISTENERS.clear();
    LISTENERS.set(key, out);
  }
  return out;
}

/** Texts kept parsed at most (endpoints, addresses); past that they all go. */
const PARSE_CACHE_SIZE = 4096;

/**
 * Parsed `IP:PORT` texts and addresses of recent calls, in every namespace (probes repeat their
 * destinations; a parse depends on the text alone, and nothing writes to what it gives).
 */
const endpoints = new Map<string, Endpoint>();
const addresses = new Map<string, { family: Family; addr: number[] } | null>();

/** `IP:PORT` or `[V6]:PORT` parsed (see {@link parseEndpoint}); never written to. */
export function parsedEndpoint(text: string): Endpoint {
  let e = endpoints.get(text);
  if (e === undefined) {
    e = parseEndpoint(text, true);
    if (endpoints.size >= PARSE_CACHE_SIZE) endpoints.clear();
    endpoints.set(text, e);
  }
  return e;
}

/** An address of either family parsed, or null; never written to. */
export function parsedAddress(text: string): { family: Family; addr: number[] } | null {
  let a = addresses.get(text);
  if (a === undefined) {
    a = parseAnyAddress(text);
    if (addresses.size >= PARSE_CACHE_SIZE) addresses.clear();
    addresses.set(text, a);
  }
  return a;
}

/**
 * IPv4 addresses and owners shared by the sockets that have them, in every namespace (read-only
 * everywhere): an open connection costs its sockets, not copies of their addresses.
 */
const addrIntern = new Map<number, readonly number[]>();
const ownerIntern = new Map<number, Map<number, SocketView>>();

/** One shared array per IPv4 address (IPv6 addresses are copied). */
export function internedAddress(family: Family, addr: readonly number[]): readonly number[] {
  if (family !== 4) return addr.slice();
  const w = addr[0]!;
  let a = addrIntern.get(w);
  if (a === undefined) {
    if (addrIntern.size >= 65536) addrIntern.clear();
    a = [w];
    addrIntern.set(w, a);
  }
  return a;
}

/** One shared owner per uid and gid without supplementary groups. */
export function internedOwner(o: SocketView): SocketView {
  if (o.groups.length !== 0) return o;
  let byGid = ownerIntern.get(o.uid);
  if (byGid === undefined) {
    if (ownerIntern.size >= 4096) ownerIntern.clear();
    byGid = new Map();
    ownerIntern.set(o.uid, byGid);
  }
  let v = byGid.get(o.gid);
  if (v === undefined) {
    v = o;
    byGid.set(o.gid, v);
  }
  return v;
}

/**
 * nft texts loaded (a namespace's one nft input), oldest first; for each, the frozen rule set by
 * the namespace's interface names (nft refuses a rule naming an interface with `iif`/`oif` that
 * the namespace does not have, so the same text can load differently).
 */
const keptNft = new Map<string, Map<string, NftRuleset>>();

/** Whether `text` is an nft text a namespace has loaded before. */
export function isKeptNft(text: string): boolean {
  return keptNft.has(text);
}

/**
 * A namespace's only nft input, loaded as {@link loadNft} loads it: the kept rule set when a
 * namespace with the same interface names has loaded the same text before, else a new one, frozen
 * and kept (texts of at most {@link MAX_SHARED_TEXT} characters, at most
 * {@link MAX_SHARED_RULE_SETS} texts, each with at most that many interface sets). The nft
 * engines keep their state (counters, sets, limits) apart from the rule set they are given.
 */
export function readNft(text: string, interfaces: readonly string[]): NftRuleset {
  const ifaceKey = interfaces.join('\0');
  const byIfaces = keptNft.get(text);
  const hit = byIfaces?.get(ifaceKey);
  if (hit !== undefined) return hit;
  const ruleset = loadNft([text], interfaces);
  if (text.length > MAX_SHARED_TEXT) return ruleset;
  freeze(ruleset);
  if (byIfaces !== undefined) {
    if (byIfaces.size >= MAX_SHARED_RULE_SETS) byIfaces.delete(byIfaces.keys().next().value!);
    byIfaces.set(ifaceKey, ruleset);
  } else {
    if (keptNft.size >= MAX_SHARED_RULE_SETS) keptNft.delete(keptNft.keys().next().value!);
    keptNft.set(text, new Map([[ifaceKey, ruleset]]));
  }
  return ruleset;
}

/** Routing tables kept by their configuration, at most; past that the oldest goes. */
export const MAX_SHARED_ROUTINGS = 256;

const routings = new Map<string, Routing>();

/**
 * The routing of a namespace: one kept for every namespace with the same interfaces, gateways,
 * routes and policy rules. Routing does not change once built (its caches of answers are answers
 * of the same tables), so those namespaces share its tables and what it has looked up. A
 * namespace watched by an observer (`explore`) gets one of its own.
 */
export function routingFor(config: RoutingConfig): Routing {
  const key = routingKey(config);
  let r = routings.get(key);
  if (r === undefined) {
    r = new Routing(config);
    if (routings.size >= MAX_SHARED_ROUTINGS) routings.delete(routings.keys().next().value!);
    routings.set(key, r);
  }
  return r;
}

/** Any whitespace: no valid interface name, address or gateway holds one. */
const SPACE = /\s/;

/**
 * A text that names the configuration. Interface names, addresses and gateways are joined with
 * spaces and newlines, which none that is valid holds; a configuration with one (which Routing
 * refuses) or with routes or policy rules is named by its JSON.
 */
function routingKey(config: RoutingConfig): string {
  if (config.routes.length !== 0 || config.rules.length !== 0) return JSON.stringify(config);
  let key = config.routeLocalnet ? 'L' : 'l';
  for (const i of config.interfaces) {
    if (SPACE.test(i.name) || Object.keys(i).some((k) => k !== 'name' && k !== 'addresses' && k !== 'routeLocalnet')) return JSON.stringify(config);
    key += `\n${i.name}${i.routeLocalnet === true ? '+' : i.routeLocalnet === undefined ? '' : '-'}`;
    for (const a of i.addresses) {
      if (typeof a !== 'string' || SPACE.test(a)) return JSON.stringify(config);
      key += ` ${a}`;
    }
  }
  key += '\n=';
  for (const g of config.gateways) {
    if (typeof g !== 'string' || SPACE.test(g)) return JSON.stringify(config);
    key += ` ${g}`;
  }
  return key;
}

/** Forgets everything kept (tests compare namespaces built with and without it). @internal */
export function forgetShared(): void {
  kept.clear();
  keptNft.clear();
  keptCount = 0;
  routings.clear();
  LISTENERS.clear();
  endpoints.clear();
  addresses.clear();
  addrIntern.clear();
  ownerIntern.clear();
}

/** Freezes a reading all the way down (plain objects and arrays; the model holds nothing else). */
function freeze(o: unknown): void {
  if (typeof o !== 'object' || o === null || Object.isFrozen(o) || ArrayBuffer.isView(o)) return;
  Object.freeze(o);
  if (Array.isArray(o)) for (const v of o) freeze(v);
  else for (const k of Object.keys(o)) freeze((o as Record<string, unknown>)[k]);
}
