/**
 * The arguments of `ip rule add …` and `ip route add …`, read as iproute2 reads them, into the
 * {@link RuleSpec}s and {@link RouteSpec}s a {@link Netns} takes (`ipRules`, `routes`).
 *
 * What the namespace models: rules `[-4|-6] [from all] [to all] fwmark M[/MASK]
 * [pref|priority|preference N] lookup|table T`; routes `[-4|-6] [TYPE] PREFIX [via ADDR] [dev IFACE]
 * [table T] [src ADDR]` with TYPE one of unicast, local, broadcast, blackhole, unreachable,
 * prohibit, throw. A selector or attribute that iproute2 knows but the namespace does not model
 * (`iif`, `uidrange`, `metric`, …) is refused by name rather than ignored.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import type { Family } from '../../model/types.js';
import { parseAnyAddress } from '../state/routing.js';
import type { RouteSpec, RouteType, RuleSpec } from '../state/routing.js';

function fail(what: string, text: string, message: string, token?: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', `${what} "${text}": ${message}`, undefined, token));
}

/** iproute2's `get_u32(…, 0)`: decimal, 0x hex or 0 octal. */
function u32(t: string | undefined): number | null {
  if (t === undefined) return null;
  let n: number;
  if (/^0x[0-9a-f]+$/i.test(t)) n = parseInt(t.slice(2), 16);
  else if (/^0[0-7]*$/.test(t)) n = parseInt(t, 8);
  else if (/^[1-9]\d*$/.test(t)) n = Number(t);
  else return null;
  return n <= 0xffffffff ? n : null;
}

/** `rtnl_rttable_a2n`: a number or one of the reserved names. */
function tableId(t: string | undefined): number | null {
  if (t === 'main') return 254;
  if (t === 'local') return 255;
  if (t === 'default') return 253;
  const n = u32(t);
  return n === null || n === 0 ? null : n;
}

function tokens(text: string): string[] {
  return text.trim().split(/\s+/).filter((t) => t !== '');
}

function familyFlag(ts: string[]): Family | undefined {
  if (ts[0] === '-4' || ts[0] === '-6') return ts.shift() === '-4' ? 4 : 6;
  return undefined;
}

/**
 * Reads the arguments of `ip [-4|-6] rule add` (without `ip rule add`): `fwmark 1 lookup 100`,
 * `-6 fwmark 0x111/0xfff pref 32764 lookup 100`. As with `ip rule`, a rule without `-6` is IPv4.
 *
 * @example
 * ```ts
 * parseIpRule('fwmark 1 lookup 100'); // { fwmark: 1, table: 100, family: 4 }
 * ```
 */
export function parseIpRule(text: string): RuleSpec {
  const what = 'ip rule';
  const ts = tokens(text);
  const family = familyFlag(ts) ?? 4;
  let fwmark: number | undefined;
  let mask: number | undefined;
  let table: number | undefined;
  let priority: number | undefined;
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]!;
    const arg = ts[i + 1];
    const need = (): string => {
      if (arg === undefined) fail(what, text, `"${t}" needs an argument`, t);
      i++;
      return arg;
    };
    switch (t) {
      case 'from':
      case 'to': {
        const v = need();
        if (v !== 'all') fail(what, text, `"${t} ${v}": only fwmark selectors are modelled (${t} all is the default)`, v);
        break;
      }
      case 'fwmark': {
        const v = need();
        const [m, k, extra] = v.split('/');
        const mv = u32(m);
        const kv = k === undefined ? undefined : u32(k);
        if (mv === null || kv === null || extra !== undefined) fail(what, text, `bad fwmark "${v}"`, v);
        fwmark = mv;
        if (kv !== undefined) mask = kv;
        break;
      }
      case 'pref':
      case 'priority':
      case 'preference':
      case 'order': {
        const v = need();
        const n = u32(v);
        if (n === null) fail(what, text, `bad priority "${v}"`, v);
        priority = n;
        break;
      }
      case 'lookup':
      case 'table': {
        const v = need();
        const n = tableId(v);
        if (n === null) fail(what, text, `bad table "${v}" (a number from 1, or main, local, default)`, v);
        table = n;
        break;
      }
      case 'not': case 'iif': case 'oif': case 'tos': case 'dsfield': case 'uidrange': case 'ipproto':
      case 'sport': case 'dport': case 'l3mdev': case 'goto': case 'nop': case 'realms': case 'blackhole':
      case 'unreachable': case 'prohibit': case 'suppress_prefixlength': case 'suppress_ifgroup':
      case 'protocol': case 'tun_id': case 'nat': case 'map-to':
        fail(what, text, `"${t}" is not modelled (rules are fwmark M[/MASK] [pref N] lookup TABLE)`, t);
      // falls through (fail never returns)
      default:
        fail(what, text, `unknown token "${t}"`, t);
    }
  }
  if (fwmark === undefined) fail(what, text, 'needs fwmark M[/MASK] (the only selector modelled)');
  if (table === undefined) fail(what, text, 'needs lookup TABLE');
  return { fwmark, ...(mask !== undefined ? { mask } : {}), table, family, ...(priority !== undefined ? { priority } : {}) };
}

const ROUTE_TYPES: readonly RouteType[] = ['unicast', 'local', 'broadcast', 'blackhole', 'unreachable', 'prohibit', 'throw'];

function prefixText(v: string, family: Family | undefined, what: string, text: string): { dst: string; family: Family } {
  if (v === 'default' || v === 'all' || v === 'any') {
    const f = family ?? 4;
    return { dst: f === 4 ? '0.0.0.0/0' : '::/0', family: f };
  }
  const [a, len, extra] = v.split('/');
  const addr = a === undefined ? null : parseAnyAddress(a);
  if (!addr || a!.startsWith('[') || extra !== undefined) fail(what, text, `bad prefix "${v}"`, v);
  if (family !== undefined && addr.family !== family) fail(what, text, `"${v}" is not an IPv${family} prefix`, v);
  const max = addr.family === 4 ? 32 : 128;
  if (len !== undefined && (!/^\d+$/.test(len) || Number(len) > max)) fail(what, text, `bad prefix length in "${v}"`, v);
  return { dst: `${a}/${len ?? max}`, family: addr.family };
}

/**
 * Reads the arguments of `ip [-4|-6] route add` (without `ip route add`): `local default dev lo
 * table 100`, `10.96.0.0/12 via 10.0.0.1 dev eth0`. `default` is IPv4 unless `-6` is given or a
 * `via` gateway is IPv6, as iproute2 decides.
 *
 * @example
 * ```ts
 * parseIpRoute('local default dev lo table 100'); // { dst: '0.0.0.0/0', type: 'local', dev: 'lo', table: 100 }
 * ```
 */
export function parseIpRoute(text: string): RouteSpec {
  const what = 'ip route';
  const ts = tokens(text);
  let family = familyFlag(ts);
  let type: RouteType | undefined;
  if (ts[0] !== undefined && (ROUTE_TYPES as readonly string[]).includes(ts[0])) type = ts.shift() as RouteType;
  else if (ts[0] === 'multicast' || ts[0] === 'anycast' || ts[0] === 'nat') fail(what, text, `route type "${ts[0]}" is not modelled`, ts[0]);
  if (ts[0] === 'to') ts.shift();
  const p = ts.shift();
  if (p === undefined) fail(what, text, 'needs a destination prefix (or default)');
  const isDefault = p === 'default' || p === 'all' || p === 'any';
  // An address prefix sets the family before the attributes are read, as iproute2 reads argv in order.
  let d = isDefault ? undefined : prefixText(p, family, what, text);
  family ??= d?.family;
  let via: string | undefined;
  let dev: string | undefined;
  let table: number | undefined;
  let src: string | undefined;
  const later: { v: string; t: string }[] = [];
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i]!;
    const arg = ts[i + 1];
    const need = (): string => {
      if (arg === undefined) fail(what, text, `"${t}" needs an argument`, t);
      i++;
      return arg;
    };
    switch (t) {
      case 'via': {
        let v = need();
        if (v === 'inet' || v === 'inet6') v = need();
        const a = parseAnyAddress(v);
        if (!a || v.startsWith('[')) fail(what, text, `bad gateway "${v}"`, v);
        later.push({ v, t });
        via = v;
        family ??= a.family;
        break;
      }
      case 'dev':
      case 'oif':
        dev = need();
        break;
      case 'table': {
        const v = need();
        const n = tableId(v);
        if (n === null) fail(what, text, `bad table "${v}" (a number from 1, or main, local, default)`, v);
        table = n;
        break;
      }
      case 'src': {
        const v = need();
        const a = parseAnyAddress(v);
        if (!a || v.startsWith('[')) fail(what, text, `bad source address "${v}"`, v);
        later.push({ v, t });
        src = v;
        break;
      }
      case 'proto': case 'protocol': case 'scope': case 'metric': case 'priority': case 'preference':
      case 'mtu': case 'advmss': case 'realm': case 'realms': case 'onlink': case 'pervasive': case 'nexthop':
      case 'nhid': case 'weight': case 'encap': case 'expires': case 'tos': case 'dsfield': case 'from':
      case 'congctl': case 'features': case 'quickack': case 'initcwnd': case 'initrwnd': case 'rtt':
      case 'rttvar': case 'window': case 'cwnd': case 'ssthresh': case 'hoplimit': case 'reordering':
      case 'pref': case 'ttl-propagate': case 'fastopen_no_cookie': case 'lock':
        fail(what, text, `"${t}" is not modelled (routes are [TYPE] PREFIX [via ADDR] [dev IFACE] [table T] [src ADDR])`, t);
      // falls through (fail never returns)
      default:
        fail(what, text, `unknown token "${t}"`, t);
    }
  }
  d ??= prefixText(p, family, what, text);
  for (const { v, t } of later) {
    if (parseAnyAddress(v)!.family !== d.family) fail(what, text, `${t} ${v} is not an IPv${d.family} address`, v);
  }
  return {
    dst: d.dst,
    ...(type !== undefined ? { type } : {}),
    ...(via !== undefined ? { via } : {}),
    ...(dev !== undefined ? { dev } : {}),
    ...(table !== undefined ? { table } : {}),
    ...(src !== undefined ? { src } : {}),
  };
}
