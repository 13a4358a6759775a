/**
 * The namespace's interfaces, addresses and routes: the local table (every local address, all of
 * 127/8, ::1), the main table (connected routes, default routes), extra tables reached by
 * `ip rule fwmark M lookup T`, and the lookups the packet path makes (`fib_lookup`,
 * `ip_route_input_slow`'s martian checks, `inet_select_addr`).
 *
 * @module
 */
import { ADDR_TYPE } from '../../model/packet.js';
import type { Family } from '../../model/types.js';
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { formatAddress, parseAddress, prefixMask } from '../../model/address.js';

/** One address on an interface. */
export interface IfaceAddress {
  readonly family: Family;
  readonly addr: readonly number[];
  readonly prefix: number;
  /**
   * IPv4 `IFA_F_SECONDARY`: an earlier address of the interface is in the same subnet (same
   * prefix length and network), and is this one's primary.
   */
  readonly secondary?: boolean;
}

/** An interface (`struct net_device` with its `in_device`/`inet6_dev`). */
export interface Iface {
  readonly name: string;
  /** ifindex; `lo` is 1. */
  readonly index: number;
  readonly loopback: boolean;
  /**
   * IPv4 addresses in `ifa_list` order (`inet_insert_ifa`: primary addresses in the order they
   * were added, then the secondary ones).
   */
  readonly addrs4: readonly IfaceAddress[];
  /** IPv6 addresses in `addr_list` order (see {@link orderIpv6}). */
  readonly addrs6: readonly IfaceAddress[];
  /** `net.ipv4.conf.IFACE.route_localnet`. */
  readonly routeLocalnet: boolean;
}

/** `rtm_type` values the engine uses. */
export type RouteType = 'unicast' | 'local' | 'broadcast' | 'blackhole' | 'unreachable' | 'prohibit' | 'throw';

/** A route in one table. */
export interface Route {
  readonly family: Family;
  readonly dst: readonly number[];
  readonly mask: readonly number[];
  readonly prefix: number;
  readonly type: RouteType;
  /** ifindex of the device, or 0 for none (blackhole…). */
  readonly dev: number;
  readonly via: readonly number[] | null;
  /** Preferred source (`src`), or null. */
  readonly prefsrc: readonly number[] | null;
}

/** `ip rule`: `[fwmark M[/mask]] lookup T`, ordered by priority. */
export interface PolicyRule {
  readonly family: Family;
  readonly priority: number;
  readonly fwmark: number | null;
  readonly mask: number;
  readonly table: number;
}

/** What a route lookup found. */
export interface RouteResult {
  readonly type: RouteType;
  readonly dev: Iface | null;
  readonly via: readonly number[] | null;
  /** The source address the route would give a new connection. */
  readonly src: readonly number[] | null;
  readonly table: number;
  /**
   * The destination a locally sent packet gets when it was addressed to the unspecified address
   * (0.0.0.0 or ::): the host itself. Absent otherwise.
   */
  readonly dst?: readonly number[];
}

/** How many IPv4 destinations the route caches remember before starting over. */
const ROUTE_CACHE_SIZE = 65536;

/** `RT_TABLE_LOCAL`, `RT_TABLE_MAIN`, `RT_TABLE_DEFAULT`. */
export const RT_TABLE = { LOCAL: 255, MAIN: 254, DEFAULT: 253 } as const;

/** Route specification accepted by the namespace options. */
export interface RouteSpec {
  /** `10.96.0.0/12`, `default`, `0.0.0.0/0`, `::/0`. */
  readonly dst: string;
  readonly via?: string;
  readonly dev?: string;
  /** Table id; 254 (main) by default. */
  readonly table?: number;
  readonly type?: RouteType;
  readonly src?: string;
}

/** `ip rule add fwmark M[/mask] lookup T [priority P]`. */
export interface RuleSpec {
  readonly fwmark: number;
  readonly mask?: number;
  readonly table: number;
  readonly priority?: number;
  /** 4, 6, or both (the default, as istio and TPROXY setups install both). */
  readonly family?: Family;
}

function bad(message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', message));
}

/** Parses `addr` of either family. */
export function parseAnyAddress(text: string): { family: Family; addr: number[] } | null {
  const t = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (t.includes(':')) {
    const a = parseAddress(t, 6);
    return a ? { family: 6, addr: a } : null;
  }
  if (!/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(t)) return null;
  const a = parseAddress(t, 4);
  return a ? { family: 4, addr: a } : null;
}

/** Parsed interface addresses by their text (the values are never modified). */
const IFACE_ADDRESSES = new Map<string, IfaceAddress>();

/** Parses `addr/prefix` of either family; no prefix means a host. */
export function parseIfaceAddress(text: string): IfaceAddress {
  let a = IFACE_ADDRESSES.get(text);
  if (a === undefined) {
    a = parseIfaceAddressOnce(text);
    if (IFACE_ADDRESSES.size >= 4096) IFACE_ADDRESSES.clear();
    IFACE_ADDRESSES.set(text, a);
  }
  return a;
}

function parseIfaceAddressOnce(text: string): IfaceAddress {
  const slash = text.indexOf('/');
  const a = parseAnyAddress(slash < 0 ? text : text.slice(0, slash));
  if (!a) bad(`bad interface address "${text}"`);
  const max = a.family === 4 ? 32 : 128;
  const prefix = slash < 0 ? max : Number(text.slice(slash + 1));
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) bad(`bad prefix length in "${text}"`);
  return { family: a.family, addr: a.addr, prefix };
}

/** Whether `addr` is in `dst/mask`. */
export function inPrefix(addr: readonly number[], dst: readonly number[], mask: readonly number[]): boolean {
  for (let i = 0; i < dst.length; i++) if ((((addr[i] ?? 0) & mask[i]!) >>> 0) !== dst[i]) return false;
  return true;
}

function network(addr: readonly number[], mask: readonly number[]): number[] {
  return addr.map((w, i) => (w & mask[i]!) >>> 0);
}

/** IPv4 127/8. */
export function isLoopback4(a: number): boolean {
  return a >>> 24 === 127;
}

/** Whether an address of the family is loopback (127/8, ::1). */
export function isLoopback(addr: readonly number[], family: Family): boolean {
  if (family === 4) return isLoopback4(addr[0]!);
  return addr[0] === 0 && addr[1] === 0 && addr[2] === 0 && addr[3] === 1;
}

function isMulticast(addr: readonly number[], family: Family): boolean {
  if (family === 4) return addr[0]! >>> 28 === 0xe;
  return addr[0]! >>> 24 === 0xff;
}

function isZero(addr: readonly number[]): boolean {
  for (const w of addr) if (w !== 0) return false;
  return true;
}

/**
 * `__ipv6_addr_src_scope(ipv6_addr_type(a))` as source selection sees it: ::1 and fe80::/10 are
 * link-local (0x2), fec0::/10 site-local (0x5), a multicast address its own scope, the rest
 * global (0xe).
 */
function srcScope6(a: readonly number[]): number {
  if (a[0]! >>> 24 === 0xff) return (a[0]! >>> 16) & 0xf;
  if (a[0]! >>> 22 === 0x3fa) return 0x2;
  if (a[0]! >>> 22 === 0x3fb) return 0x5;
  if (a[0] === 0 && a[1] === 0 && a[2] === 0 && a[3] === 1) return 0x2;
  return 0xe;
}

/** The default IPv6 address label table (`ip addrlabel`, net/ipv6/addrlabel.c), longest prefix first. */
const ADDR_LABELS: readonly (readonly [readonly number[], number, number])[] = [
  [[0, 0, 0, 1], 128, 0],
  [[0, 0, 0, 0], 96, 3],
  [[0, 0, 0xffff, 0], 96, 4],
  [[0x20010000, 0, 0, 0], 32, 6],
  [[0x20010010, 0, 0, 0], 28, 7],
  [[0x3ffe0000, 0, 0, 0], 16, 12],
  [[0x20020000, 0, 0, 0], 16, 2],
  [[0xfec00000, 0, 0, 0], 10, 11],
  [[0xfc000000, 0, 0, 0], 7, 5],
];

/** `ipv6_addr_label`: the label of the longest matching prefix of the default table (::/0: 1). */
function addrLabel6(a: readonly number[]): number {
  let best = -1;
  let label = 1;
  for (const [p, len, l] of ADDR_LABELS) {
    if (len > best && commonPrefix(a, p) >= len) {
      best = len;
      label = l;
    }
  }
  return label;
}

/** `ipv6_addr_diff`: the number of leading bits two addresses share. */
function commonPrefix(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = (a[i]! ^ b[i]!) >>> 0;
    if (x !== 0) return i * 32 + Math.clz32(x);
  }
  return a.length * 32;
}

/** `ipv6_addr_src_scope`: link-local 0x2, loopback 0x1, everything else global (0xe). */
function ipv6Scope(addr: readonly number[]): number {
  if (addr[0]! >>> 22 === 0x3fa) return 0x2;
  if (addr[0] === 0 && addr[1] === 0 && addr[2] === 0 && addr[3] === 1) return 0x1;
  return 0xe;
}

/** `ifa_scope` of an IPv4 address as `ip addr add` sets it: host for 127/8, else universe. */
function ipv4Scope(a: IfaceAddress): number {
  return isLoopback4(a.addr[0]!) ? RT_SCOPE.HOST : RT_SCOPE.UNIVERSE;
}

/** `rt_scope_t`. */
const RT_SCOPE = { UNIVERSE: 0, LINK: 253, HOST: 254 } as const;

/**
 * `inet_insert_ifa`: an address in the subnet of an earlier one becomes secondary and goes to the
 * end of the list; a primary one goes after the last primary whose scope is not narrower.
 */
export function orderIpv4(added: readonly IfaceAddress[]): IfaceAddress[] {
  const list: IfaceAddress[] = [];
  for (const a0 of added) {
    const mask = prefixMask(a0.prefix, 4)[0]!;
    let lastPrimary = 0;
    let secondary = false;
    for (let i = 0; i < list.length; i++) {
      const b = list[i]!;
      if (!b.secondary && ipv4Scope(a0) <= ipv4Scope(b)) lastPrimary = i + 1;
      if (b.prefix === a0.prefix && ((b.addr[0]! & mask) >>> 0) === ((a0.addr[0]! & mask) >>> 0)) {
        if (sameWords(b.addr, a0.addr)) bad(`address ${formatAddress(a0.addr, 4)}/${a0.prefix} given twice`);
        secondary = true;
      }
    }
    const a: IfaceAddress = { family: 4, addr: a0.addr, prefix: a0.prefix, ...(secondary ? { secondary: true } : {}) };
    if (secondary) list.push(a);
    else list.splice(lastPrimary, 0, a);
  }
  return list;
}

function sameWords(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return a.length === b.length;
}

/**
 * The kernel's `addr_list` order for IPv6 addresses given in the order they were added:
 * `ipv6_link_dev_addr` keeps the list "sorted in order of scope - global before linklocal",
 * inserting each new address before the first one whose scope is not wider, so within one scope
 * the newest address comes first.
 */
export function orderIpv6(added: readonly IfaceAddress[]): IfaceAddress[] {
  const list: IfaceAddress[] = [];
  for (const a of added) {
    const s = ipv6Scope(a.addr);
    let i = 0;
    while (i < list.length && s < ipv6Scope(list[i]!.addr)) i++;
    list.splice(i, 0, a);
  }
  return list;
}

/** Interface configuration accepted by the namespace options. */
export interface InterfaceSpec {
  readonly name: string;
  /** Addresses with prefix, in the order `ip addr add` would add them. */
  readonly addresses: readonly string[];
  readonly routeLocalnet?: boolean;
}

/** Routing configuration of a namespace. */
export interface RoutingConfig {
  readonly interfaces: readonly InterfaceSpec[];
  readonly gateways: readonly string[];
  readonly routes: readonly RouteSpec[];
  readonly rules: readonly RuleSpec[];
  /** `net.ipv4.conf.all.route_localnet`. */
  readonly routeLocalnet: boolean;
}

/**
 * Told of each address and port the namespace's own decisions read (routes, local, special and
 * peer addresses, listening sockets), before they read it: `explore` learns from it which
 * namespace ranges a probe's field had to be in for the run to go as it did. @internal
 */
export interface NamespaceObserver {
  addr(words: readonly number[]): void;
  port(port: number): void;
}

/** The family of a route as given: its destination's, or its gateway's for `default`. */
function routeFamily(r: RouteSpec): Family {
  if (r.dst === 'default') return r.via !== undefined && r.via.includes(':') ? 6 : 4;
  return r.dst.includes(':') ? 6 : 4;
}

/** The rules every namespace starts with (`ip rule`: local, main, default), per family; shared, never written. */
const DEFAULT_RULES: readonly PolicyRule[] = ([4, 6] as const).flatMap((fam) => [
  { family: fam, priority: 0, fwmark: null, mask: 0, table: RT_TABLE.LOCAL },
  { family: fam, priority: 32766, fwmark: null, mask: 0, table: RT_TABLE.MAIN },
  { family: fam, priority: 32767, fwmark: null, mask: 0, table: RT_TABLE.DEFAULT },
]);

/** Interfaces, routing tables and policy rules, with the lookups the packet path needs. */
export class Routing {
  /** Set by `explore` only. @internal */
  observer: NamespaceObserver | null = null;
  readonly ifaces: Iface[] = [];
  readonly byName = new Map<string, Iface>();
  readonly tables = new Map<number, Route[]>();
  readonly rules: PolicyRule[] = [];
  readonly routeLocalnetAll: boolean;
  /**
   * `fib4_has_custom_rules || fib_has_custom_local_routes`: an IPv4 `ip rule` was added, or a route
   * of type `local` (`ip route add local …`). Either makes `fib_validate_source` run its full
   * check, a reverse lookup of the source, instead of asking only whether the source is one of the
   * interfaces' addresses. Neither is ever cleared in the kernel.
   */
  readonly fullSourceCheck4: boolean;

  constructor(config: RoutingConfig) {
    this.routeLocalnetAll = config.routeLocalnet;
    const lo: InterfaceSpec = config.interfaces.find((i) => i.name === 'lo') ?? { name: 'lo', addresses: [] };
    const loAddrs = ['127.0.0.1/8', '::1/128', ...lo.addresses.filter((a) => a !== '127.0.0.1/8' && a !== '::1/128')];
    const specs = [{ ...lo, addresses: loAddrs }, ...config.interfaces.filter((i) => i.name !== 'lo')];
    for (const spec of specs) {
      if (this.byName.has(spec.name)) bad(`interface "${spec.name}" given twice`);
      if (!/^[^\s/:]{1,15}$/.test(spec.name)) bad(`bad interface name "${spec.name}"`);
      const addrs = spec.addresses.map(parseIfaceAddress);
      const iface: Iface = {
        name: spec.name,
        index: this.ifaces.length + 1,
        loopback: spec.name === 'lo',
        addrs4: orderIpv4(addrs.filter((a) => a.family === 4)),
        addrs6: orderIpv6(addrs.filter((a) => a.family === 6)),
        routeLocalnet: spec.routeLocalnet ?? false,
      };
      this.ifaces.push(iface);
      this.byName.set(iface.name, iface);
    }
    this.tables.set(RT_TABLE.LOCAL, []);
    this.tables.set(RT_TABLE.MAIN, []);
    this.tables.set(RT_TABLE.DEFAULT, []);
    for (const iface of this.ifaces) this.addConnected(iface);
    for (const gw of config.gateways) this.addDefault(gw);
    for (const r of config.routes) this.addRoute(r);
    for (const r of DEFAULT_RULES) this.rules.push(r);
    let next = 32765;
    for (const r of config.rules) {
      const priority = r.priority ?? next--;
      for (const fam of r.family ? [r.family] : ([4, 6] as const)) {
        // fib_nl2rule: without a mask, a non-zero fwmark gets 0xffffffff and `fwmark 0` gets 0.
        this.rules.push({ family: fam, priority, fwmark: r.fwmark >>> 0, mask: (r.mask ?? (r.fwmark === 0 ? 0 : 0xffffffff)) >>> 0, table: r.table });
      }
      if (!this.tables.has(r.table)) this.tables.set(r.table, []);
    }
    this.rules.sort((a, b) => a.priority - b.priority);
    this.fullSourceCheck4 = config.rules.some((r) => r.family !== 6) || config.routes.some((r) => (r.type ?? 'unicast') === 'local' && routeFamily(r) === 4);
  }

  /**
   * `fib_validate_source` for a packet arriving on a device other than `lo`, with the defaults of
   * a new namespace (`rp_filter` 0, `accept_local` 0, `src_valid_mark` 0): the reason it is a
   * martian source, or null. Without custom rules or local routes: a source that is one of the
   * interfaces' addresses (`inet_lookup_ifaddr_rcu`). With them (`__fib_validate_source`): the
   * route back to the source, looked up with mark 0, may not be `local` or `broadcast` (a subnet's
   * broadcast address is martian then); no route, or an unreachable, blackhole or prohibit one,
   * passes.
   */
  validateSource4(src: readonly number[]): string | null {
    this.observer?.addr(src);
    if (!this.fullSourceCheck4) return this.isInterfaceAddress4(src[0]!) ? 'martian source (an address of this host)' : null;
    const back = this.fibLookup(4, src, 0);
    if (back === null) return null;
    if (back.route.type === 'local') return 'martian source (the route back to it is local)';
    if (back.route.type === 'broadcast') return 'martian source (a broadcast address)';
    return null;
  }

  /** Whether an interface has this IPv4 address (`inet_lookup_ifaddr_rcu`). */
  private isInterfaceAddress4(a: number): boolean {
    for (const i of this.ifaces) for (const x of i.addrs4) if (x.addr[0] === a) return true;
    return false;
  }

  private table(id: number): Route[] {
    let t = this.tables.get(id);
    if (!t) {
      t = [];
      this.tables.set(id, t);
    }
    return t;
  }

  private addConnected(iface: Iface): void {
    const local = this.table(RT_TABLE.LOCAL);
    const main = this.table(RT_TABLE.MAIN);
    for (const a of [...iface.addrs4, ...iface.addrs6]) {
      const max = a.family === 4 ? 32 : 128;
      const hostMask = prefixMask(max, a.family);
      const mask = prefixMask(a.prefix, a.family);
      const net = network(a.addr, mask);
      // fib_add_ifaddr: a secondary address's local route names its primary as the source, and
      // only a primary address adds the subnet and broadcast routes.
      const primary = a.secondary ? iface.addrs4.find((b) => !b.secondary && b.prefix === a.prefix && inPrefix(b.addr, net, mask)) ?? a : a;
      local.push({ family: a.family, dst: a.addr, mask: hostMask, prefix: max, type: 'local', dev: iface.index, via: null, prefsrc: primary.addr });
      if (a.secondary) continue;
      if (iface.loopback && a.family === 4 && isLoopback4(a.addr[0]!)) {
        // fib_add_ifaddr: `local 127.0.0.0/8 dev lo src 127.0.0.1` and its broadcast.
        local.push({ family: 4, dst: net, mask, prefix: a.prefix, type: 'local', dev: iface.index, via: null, prefsrc: a.addr });
        if (a.prefix < 31) local.push({ family: 4, dst: [(net[0]! | ~mask[0]!) >>> 0], mask: hostMask, prefix: 32, type: 'broadcast', dev: iface.index, via: null, prefsrc: a.addr });
        continue;
      }
      if (a.prefix < max) {
        main.push({ family: a.family, dst: net, mask, prefix: a.prefix, type: 'unicast', dev: iface.index, via: null, prefsrc: a.family === 4 ? a.addr : null });
        if (a.family === 4 && a.prefix < 31) {
          local.push({ family: 4, dst: [(net[0]! | ~mask[0]!) >>> 0], mask: hostMask, prefix: 32, type: 'broadcast', dev: iface.index, via: null, prefsrc: a.addr });
        }
      }
    }
  }

  private addDefault(gw: string): void {
    const g = parseAnyAddress(gw);
    if (!g) bad(`bad gateway "${gw}"`);
    const dev = this.connectedDevice(g.family, g.addr);
    if (!dev) bad(`gateway ${gw} is not on a connected network`);
    this.table(RT_TABLE.MAIN).push({
      family: g.family,
      dst: g.family === 4 ? [0] : [0, 0, 0, 0],
      mask: g.family === 4 ? [0] : [0, 0, 0, 0],
      prefix: 0,
      type: 'unicast',
      dev: dev.index,
      via: g.addr,
      prefsrc: null,
    });
  }

  private addRoute(r: RouteSpec): void {
    let family: Family;
    let dst: number[];
    let prefix: number;
    if (r.dst === 'default') {
      const v = r.via ? parseAnyAddress(r.via) : null;
      family = v ? v.family : 4;
      dst = family === 4 ? [0] : [0, 0, 0, 0];
      prefix = 0;
    } else {
      const a = parseIfaceAddress(r.dst);
      family = a.family;
      dst = a.addr.slice();
      prefix = a.prefix;
    }
    const mask = prefixMask(prefix, family);
    const via = r.via ? parseAnyAddress(r.via) : null;
    if (r.via && (!via || via.family !== family)) bad(`bad gateway "${r.via}" for route ${r.dst}`);
    let dev = r.dev ? this.byName.get(r.dev) : undefined;
    if (r.dev && !dev) bad(`route ${r.dst}: no interface "${r.dev}"`);
    if (!dev && via) dev = this.connectedDevice(family, via.addr) ?? undefined;
    const type = r.type ?? 'unicast';
    if (!dev && (type === 'unicast' || type === 'local')) bad(`route ${r.dst}: no device`);
    const src = r.src ? parseAnyAddress(r.src) : null;
    this.table(r.table ?? RT_TABLE.MAIN).push({
      family,
      dst: network(dst, mask),
      mask,
      prefix,
      type,
      dev: dev ? dev.index : 0,
      via: via ? via.addr : null,
      prefsrc: src ? src.addr : null,
    });
  }

  /** The device whose connected network holds `addr`. */
  connectedDevice(family: Family, addr: readonly number[]): Iface | null {
    this.observer?.addr(addr);
    let best: Route | null = null;
    for (const r of this.table(RT_TABLE.MAIN)) {
      if (r.family !== family || r.via !== null || r.type !== 'unicast') continue;
      if (inPrefix(addr, r.dst, r.mask) && (!best || r.prefix > best.prefix)) best = r;
    }
    return best ? this.ifaceByIndex(best.dev) : null;
  }

  /** The interface with this ifindex. */
  ifaceByIndex(index: number): Iface | null {
    return this.ifaces[index - 1] ?? null;
  }

  /** The loopback device. */
  get lo(): Iface {
    return this.ifaces[0]!;
  }

  private lookupTable(id: number, family: Family, dst: readonly number[]): Route | null {
    const t = this.tables.get(id);
    if (!t) return null;
    let best: Route | null = null;
    for (const r of t) {
      if (r.family !== family) continue;
      if (inPrefix(dst, r.dst, r.mask) && (!best || r.prefix > best.prefix)) best = r;
    }
    return best;
  }

  /**
   * Answers of {@link fibLookup} for IPv4 without a mark, and of the local table for IPv4, by
   * destination. Routes do not change after construction, so the answers do not either.
   */
  private fib4: Map<number, { route: Route; table: number } | null> | null = null;
  private local4: Map<number, Route | null> | null = null;

  /** `fib_lookup`: walks the policy rules in priority order. */
  fibLookup(family: Family, dst: readonly number[], mark: number): { route: Route; table: number } | null {
    this.observer?.addr(dst);
    if (family !== 4 || mark !== 0) return this.fibWalk(family, dst, mark);
    const key = dst[0]!;
    const fib4 = (this.fib4 ??= new Map());
    let hit = fib4.get(key);
    if (hit === undefined) {
      hit = this.fibWalk(family, dst, mark);
      if (fib4.size >= ROUTE_CACHE_SIZE) fib4.clear();
      fib4.set(key, hit);
    }
    return hit;
  }

  /** The local table's route for an address (what `inet_addr_type` reads). */
  private localRoute(family: Family, addr: readonly number[]): Route | null {
    if (family !== 4) return this.lookupTable(RT_TABLE.LOCAL, family, addr);
    const key = addr[0]!;
    const local4 = (this.local4 ??= new Map());
    let r = local4.get(key);
    if (r === undefined) {
      r = this.lookupTable(RT_TABLE.LOCAL, family, addr);
      if (local4.size >= ROUTE_CACHE_SIZE) local4.clear();
      local4.set(key, r);
    }
    return r;
  }

  private fibWalk(family: Family, dst: readonly number[], mark: number): { route: Route; table: number } | null {
    for (const rule of this.rules) {
      if (rule.family !== family) continue;
      // fib_rule_match: ((rule->mark ^ mark) & rule->mark_mask) (the rule's mark is not masked
      // when it is added: `fwmark 0x4000/0xff` matches every mark whose low byte is 0).
      if (rule.fwmark !== null && (((rule.fwmark ^ mark) & rule.mask) >>> 0) !== 0) continue;
      const route = this.lookupTable(rule.table, family, dst);
      if (!route || route.type === 'throw') continue;
      return { route, table: rule.table };
    }
    return null;
  }

  /**
   * The source address for a destination reached through `dev`: IPv4 `inet_select_addr(dev, via,
   * scope)` (see {@link selectSource4}), IPv6 `ipv6_dev_get_saddr` (see {@link selectSource6}).
   */
  selectSource(family: Family, dev: Iface | null, dst: readonly number[], via: readonly number[] | null = null): readonly number[] | null {
    if (family === 6) return this.selectSource6(dev, dst);
    return this.selectSource4(dev, via, via === null ? RT_SCOPE.LINK : RT_SCOPE.UNIVERSE);
  }

  /**
   * `inet_select_addr`: on `dev`, the first primary address (no wider scope than `scope`) whose
   * subnet holds `near` (the gateway), else its first primary address of that scope; without one,
   * the first primary address of any device that is neither link- nor narrower-scoped. MASQUERADE
   * asks with the universe scope, so 127.0.0.1 (host scope) is never chosen.
   */
  selectSource4(dev: Iface | null, near: readonly number[] | null, scope: number): readonly number[] | null {
    if (near !== null) this.observer?.addr(near);
    let addr: readonly number[] | null = null;
    if (dev) {
      const localnetScope = this.routeLocalnet(dev) ? RT_SCOPE.LINK : RT_SCOPE.HOST;
      for (const a of dev.addrs4) {
        if (a.secondary) continue;
        if (Math.min(ipv4Scope(a), localnetScope) > scope) continue;
        if (near === null || inPrefix(near, network(a.addr, prefixMask(a.prefix, 4)), prefixMask(a.prefix, 4))) return a.addr;
        addr ??= a.addr;
      }
      if (addr) return addr;
    }
    for (const i of this.ifaces) {
      for (const a of i.addrs4) if (!a.secondary && ipv4Scope(a) !== RT_SCOPE.LINK && ipv4Scope(a) <= scope) return a.addr;
    }
    return null;
  }

  /**
   * `ipv6_dev_get_saddr` (RFC 6724 section 5): every address of every device is a candidate (only
   * those of `dev` for a link-local or multicast destination); the best one by, in order: being
   * the destination itself, scope (the narrowest one not narrower than the destination's, else
   * the widest), being on the outgoing device, the label of the policy table (`ip addrlabel`'s
   * defaults) equal to the destination's, and the longest common prefix (up to the address's
   * prefix length). Ties keep the earlier address, in device and `addr_list` order. Deprecated,
   * temporary and home addresses are not modelled.
   */
  selectSource6(dev: Iface | null, dst: readonly number[]): readonly number[] | null {
    this.observer?.addr(dst);
    const dstScope = srcScope6(dst);
    const dstLabel = addrLabel6(dst);
    const onlyDev = dev !== null && (isMulticast(dst, 6) || dstScope <= 0x2);
    let best: readonly number[] | null = null;
    let bestScore: number[] = [];
    for (const i of onlyDev ? [dev] : this.ifaces) {
      for (const a of i.addrs6) {
        if (isZero(a.addr) || isMulticast(a.addr, 6)) continue;
        const sc = srcScope6(a.addr);
        const score = [
          sameWords(a.addr, dst) ? 1 : 0,
          sc >= dstScope ? -sc : sc - 128,
          dev === null || dev.index === i.index ? 1 : 0,
          addrLabel6(a.addr) === dstLabel ? 1 : 0,
          Math.min(commonPrefix(a.addr, dst), a.prefix),
        ];
        let better = best === null;
        for (let k = 0; !better && k < score.length; k++) {
          if (score[k]! > bestScore[k]!) better = true;
          else if (score[k]! < bestScore[k]!) break;
        }
        if (better) {
          best = a.addr;
          bestScore = score;
        }
      }
    }
    return best;
  }

  /**
   * `ip_route_output_key`: the route for a locally generated packet. Local destinations leave
   * through `lo` whatever device their local route names.
   */
  routeOutput(family: Family, dst: readonly number[], mark: number, src: readonly number[] | null): RouteResult {
    if (family === 4 && mark === 0 && this.observer === null) {
      // Routes do not change: the answer for a destination (and a source) is kept. It is made for
      // arrays of its own, since the answer can hold the source or the destination it was given.
      const key = dst[0]!;
      if (src === null) {
        const out4 = (this.out4 ??= new Map());
        let r = out4.get(key);
        if (r === undefined) {
          r = this.routeOutputOf(4, [key], 0, null);
          if (out4.size >= ROUTE_CACHE_SIZE) out4.clear();
          out4.set(key, r);
        }
        return r;
      }
      const from = src[0]!;
      const out4src = (this.out4src ??= new Map());
      let bySrc = out4src.get(key);
      let r = bySrc?.get(from);
      if (r === undefined) {
        r = this.routeOutputOf(4, [key], 0, [from]);
        if (this.out4srcSize >= ROUTE_CACHE_SIZE) {
          out4src.clear();
          this.out4srcSize = 0;
          bySrc = undefined;
        }
        if (bySrc === undefined) out4src.set(key, (bySrc = new Map()));
        bySrc.set(from, r);
        this.out4srcSize++;
      }
      return r;
    }
    return this.routeOutputOf(family, dst, mark, src);
  }

  /** The answer of {@link routeInput} for a local destination, by the table its route is in. */
  private localIn: Map<number, RouteResult & { reason: string | null; martian: boolean }> | null = null;

  // The caches of a namespace are made at their first answer: many namespaces make few connections.
  /** Answers of {@link routeOutput} for IPv4 without a mark: by destination, without a source. */
  private out4: Map<number, RouteResult> | null = null;
  /** The same with a source: by destination, then source. */
  private out4src: Map<number, Map<number, RouteResult>> | null = null;
  private out4srcSize = 0;

  private routeOutputOf(family: Family, dst: readonly number[], mark: number, src: readonly number[] | null): RouteResult {
    if (this.observer !== null) {
      this.observer.addr(dst);
      if (src !== null) this.observer.addr(src);
    }
    if (isZero(dst)) return this.routeUnspecified(family, mark, src);
    const hit = this.fibLookup(family, dst, mark);
    if (!hit) return { type: 'unreachable', dev: null, via: null, src: null, table: 0 };
    const { route, table } = hit;
    if (route.type === 'local') {
      return { type: 'local', dev: this.lo, via: null, src: src ?? route.prefsrc ?? dst, table };
    }
    if (route.type === 'broadcast') {
      return { type: 'broadcast', dev: this.ifaceByIndex(route.dev), via: null, src: src ?? route.prefsrc, table };
    }
    if (route.type !== 'unicast') return { type: route.type, dev: null, via: null, src: null, table };
    const dev = this.ifaceByIndex(route.dev);
    // __mkroute_output: a loopback source may not leave through another device unless
    // route_localnet is set on it (-EINVAL).
    if (family === 4 && dev && !dev.loopback && src !== null && isLoopback4(src[0]!) && !this.routeLocalnet(dev)) {
      return { type: 'unreachable', dev: null, via: null, src: null, table };
    }
    return { type: 'unicast', dev, via: route.via, src: src ?? route.prefsrc ?? this.selectSource(family, dev, dst, route.via), table };
  }

  /**
   * A local packet to 0.0.0.0 or ::, which Linux delivers to the host itself: IPv4
   * `ip_route_output_key_hash_rcu` makes the destination the source address (127.0.0.1 when there
   * is none) and the route local through `lo`, with no lookup; IPv6 `tcp_v6_connect` and
   * `__ip6_datagram_connect` make it ::1 before routing.
   */
  private routeUnspecified(family: Family, mark: number, src: readonly number[] | null): RouteResult {
    if (family === 4) {
      const to = src !== null && !isZero(src) ? src.slice() : [0x7f000001];
      return { type: 'local', dev: this.lo, via: null, src: src ?? to, table: RT_TABLE.LOCAL, dst: to };
    }
    const to = [0, 0, 0, 1];
    return { ...this.routeOutput(6, to, mark, src), dst: to };
  }

  /** `IN_DEV_ROUTE_LOCALNET`: `all` or the device's own setting. */
  routeLocalnet(dev: Iface): boolean {
    return this.routeLocalnetAll || dev.routeLocalnet;
  }

  /**
   * `ip_route_input_slow` (and `ip6_route_input`): the route for an arriving packet, with the
   * martian checks that come before the lookup.
   */
  routeInput(
    family: Family,
    src: readonly number[],
    dst: readonly number[],
    mark: number,
    dev: Iface,
    forwarding: boolean,
  ): RouteResult & { reason: string | null; martian: boolean } {
    const none = (type: RouteType, reason: string, martian = false) => ({ type, dev: null, via: null, src: null, table: 0, reason, martian });
    // The source first: a martian source is refused before the destination is read.
    this.observer?.addr(src);
    if (family === 4) {
      if (isMulticast(src, 4) || src[0] === 0xffffffff) return none('unreachable', 'martian source', true);
      if (isZero(src)) return none('unreachable', 'martian source', true);
      this.observer?.addr(dst);
      if (isZero(dst)) return none('unreachable', 'martian destination', true);
      if (!dev.loopback && isLoopback4(dst[0]!)) {
        if (!this.routeLocalnet(dev)) return none('unreachable', 'martian destination (127/8 without route_localnet)', true);
      } else if (!dev.loopback && isLoopback4(src[0]!)) {
        if (!this.routeLocalnet(dev)) return none('unreachable', 'martian source (127/8 without route_localnet)', true);
      }
    }
    if (family === 6) this.observer?.addr(dst);
    if (family === 6 && !dev.loopback && isLoopback(dst, 6)) {
      // rt6_need_strict: ::1 is looked up on the incoming device only, and only lo has it.
      return none('unreachable', 'no route to ::1 from a device other than lo', true);
    }
    const hit = this.fibLookup(family, dst, mark);
    if (!hit) return none('unreachable', 'no route');
    const { route, table } = hit;
    // ip_route_input_slow validates the source for a local or broadcast destination and for one
    // it forwards (fib_validate_source), off lo.
    const validated = route.type === 'local' || route.type === 'broadcast' || (route.type === 'unicast' && forwarding);
    if (validated && !dev.loopback) {
      const bad = family === 4 ? this.validateSource4(src) : this.isLocalAddress(6, src) ? 'martian source (a local address)' : null;
      if (bad !== null) return none('unreachable', bad, true);
    }
    if (route.type === 'local') {
      const localIn = (this.localIn ??= new Map());
      let r = localIn.get(table);
      if (r === undefined) localIn.set(table, (r = { type: 'local', dev: this.lo, via: null, src: null, table, reason: null, martian: false }));
      return r;
    }
    if (route.type === 'broadcast') return { type: 'local', dev: this.lo, via: null, src: null, table, reason: 'broadcast', martian: false };
    if (route.type !== 'unicast') return { type: route.type, dev: null, via: null, src: null, table, reason: route.type, martian: false };
    if (!forwarding) return none('unreachable', 'forwarding is disabled (net.ipv4.ip_forward=0)');
    return { type: 'unicast', dev: this.ifaceByIndex(route.dev), via: route.via, src: null, table, reason: null, martian: false };
  }

  /** Whether the local table holds `addr` as a local address (all of 127/8, ::1, own addresses). */
  isLocalAddress(family: Family, addr: readonly number[]): boolean {
    this.observer?.addr(addr);
    const r = this.localRoute(family, addr);
    return r !== null && r.type === 'local';
  }

  /**
   * `inet_dev_addr_type` / `xt_addrtype`'s IPv6 test: the route type of an address as an
   * {@link ADDR_TYPE} bit, optionally limited to one device.
   */
  addressType(family: Family, addr: readonly number[], ifaceName: string | null): number {
    this.observer?.addr(addr);
    if (family === 4) {
      const a = addr[0]!;
      if (a === 0 || a === 0xffffffff) return ADDR_TYPE.BROADCAST;
      if (isMulticast(addr, 4)) return ADDR_TYPE.MULTICAST;
      const r = this.localRoute(4, addr);
      if (!r) return ADDR_TYPE.UNICAST;
      if (ifaceName !== null) {
        const dev = this.byName.get(ifaceName);
        if (!dev || dev.index !== r.dev) return ADDR_TYPE.UNICAST;
      }
      return r.type === 'local' ? ADDR_TYPE.LOCAL : r.type === 'broadcast' ? ADDR_TYPE.BROADCAST : ADDR_TYPE.UNICAST;
    }
    if (isZero(addr)) return ADDR_TYPE.UNSPEC;
    if (isMulticast(addr, 6)) return ADDR_TYPE.MULTICAST;
    const r = this.lookupTable(RT_TABLE.LOCAL, 6, addr);
    if (r && r.type === 'local') {
      if (ifaceName !== null) {
        const dev = this.byName.get(ifaceName);
        if (!dev || (dev.index !== r.dev && !(r.dev === 1 && dev.loopback))) return ADDR_TYPE.UNICAST;
      }
      return ADDR_TYPE.LOCAL;
    }
    const hit = this.fibLookup(6, addr, 0);
    if (hit && (hit.route.type === 'unreachable' || hit.route.type === 'prohibit')) return ADDR_TYPE.UNREACHABLE;
    if (hit && hit.route.type === 'blackhole') return ADDR_TYPE.BLACKHOLE;
    return ADDR_TYPE.UNICAST;
  }

  /** `ip addr`-style description of the interfaces, for messages. */
  describe(): string {
    return this.ifaces
      .map((i) => `${i.name}: ${[...i.addrs4, ...i.addrs6].map((a) => `${formatAddress(a.addr, a.family)}/${a.prefix}`).join(' ')}`)
      .join('\n');
  }
}
