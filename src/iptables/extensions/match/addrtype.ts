/**
 * `-m addrtype` (`libxt_addrtype.c` revision 1, kernel `xt_addrtype.c`): the route type of the
 * source and/or destination address (`LOCAL`, `UNICAST`, …), optionally looked up only via the
 * incoming (`--limit-iface-in`, PREROUTING/INPUT/FORWARD) or outgoing interface
 * (`--limit-iface-out`, OUTPUT/POSTROUTING/FORWARD).
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../../model/errors.js';
import { ADDR_TYPE } from '../../../model/packet.js';
import type { HookName, Negatable } from '../../../model/types.js';
import { checkentryHooks, hookDiagnostic } from '../placement.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { conflict, formatBits, missing, parsePrefixList, unknownOption } from '../values.js';

/** Route type names in `rtn_names` order, with their {@link ADDR_TYPE} bits. */
export const ADDR_TYPE_NAMES: readonly (readonly [string, number])[] = Object.entries(ADDR_TYPE);

/** Options of `-m addrtype`; types are {@link ADDR_TYPE} bit sets. */
export interface AddrtypeOptions {
  readonly srcType?: Negatable<number>;
  readonly dstType?: Negatable<number>;
  readonly limitIface?: 'in' | 'out';
}

const IN_HOOKS: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD'];
const OUT_HOOKS: readonly HookName[] = ['POSTROUTING', 'OUTPUT', 'FORWARD'];

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): AddrtypeOptions {
  const r: { -readonly [K in keyof AddrtypeOptions]: AddrtypeOptions[K] } = {};
  let limitFrom: OptionOccurrence | undefined;
  for (const o of occurrences) {
    switch (o.name) {
      case 'src-type':
        r.srcType = { negated: o.negated, value: parsePrefixList(o, ADDR_TYPE_NAMES, 'address type') };
        break;
      case 'dst-type':
        r.dstType = { negated: o.negated, value: parsePrefixList(o, ADDR_TYPE_NAMES, 'address type') };
        break;
      case 'limit-iface-in':
      case 'limit-iface-out':
        if (limitFrom) conflict(o, limitFrom.written);
        limitFrom = o;
        r.limitIface = o.name === 'limit-iface-in' ? 'in' : 'out';
        break;
      default:
        unknownOption('addrtype', o);
    }
  }
  if (!r.srcType && !r.dstType) missing(ctx, 'addrtype', 'you must specify --src-type or --dst-type');
  return r;
}

/**
 * `match_type6`: every class type listed must hold (MULTICAST, UNICAST — any address but ::,
 * ::ffff:0:0/96 and multicast, so ::1 and the pod's own addresses are unicast —, UNSPEC: ::),
 * and when LOCAL, ANYCAST or UNREACHABLE is listed, the route must give one of those (LOCAL: a
 * local route; UNREACHABLE: a reject, blackhole or missing route). `routeType` is the
 * namespace's answer ({@link ADDR_TYPE} bit). Subnet-router anycast is not modelled.
 */
function matchType6(routeType: number, a: readonly number[], mask: number): boolean {
  const multicast = a[0]! >>> 24 === 0xff;
  const any = a[0] === 0 && a[1] === 0 && a[2] === 0 && a[3] === 0;
  const mapped = a[0] === 0 && a[1] === 0 && a[2] === 0xffff;
  if (mask & ADDR_TYPE.MULTICAST && !multicast) return false;
  if (mask & ADDR_TYPE.UNICAST && (multicast || any || mapped)) return false;
  if (mask & ADDR_TYPE.UNSPEC && !any) return false;
  if (mask & (ADDR_TYPE.LOCAL | ADDR_TYPE.ANYCAST | ADDR_TYPE.UNREACHABLE)) {
    const route = routeType === ADDR_TYPE.LOCAL ? ADDR_TYPE.LOCAL : routeType === ADDR_TYPE.UNREACHABLE || routeType === ADDR_TYPE.BLACKHOLE ? ADDR_TYPE.UNREACHABLE : 0;
    return (mask & route) !== 0;
  }
  return true;
}

/** `-m addrtype`. */
export const addrtype: MatchExtension<AddrtypeOptions> = {
  kind: 'match',
  name: 'addrtype',
  family: 'both',
  options: [
    { name: 'src-type', arg: true, negatable: true },
    { name: 'dst-type', arg: true, negatable: true },
    { name: 'limit-iface-in', arg: false },
    { name: 'limit-iface-out', arg: false },
  ],
  parse,
  save(o) {
    const out: string[] = [];
    if (o.srcType) out.push(`${o.srcType.negated ? '! ' : ''}--src-type ${formatBits(o.srcType.value, ADDR_TYPE_NAMES)}`);
    if (o.dstType) out.push(`${o.dstType.negated ? '! ' : ''}--dst-type ${formatBits(o.dstType.value, ADDR_TYPE_NAMES)}`);
    if (o.limitIface === 'in') out.push('--limit-iface-in');
    if (o.limitIface === 'out') out.push('--limit-iface-out');
    return out.join(' ');
  },
  // addrtype_mt_checkentry_v1
  check(o, ctx): Diagnostic[] {
    const out: Diagnostic[] = [];
    // In a user chain the nf_tables back end's hook_mask is empty: the kernel loads it.
    const hooks = checkentryHooks(ctx);
    if (o.limitIface && hooks) {
      const allowed = o.limitIface === 'in' ? IN_HOOKS : OUT_HOOKS;
      const bad = hooks.filter((h) => !allowed.includes(h));
      if (bad.length > 0) out.push(hookDiagnostic(`addrtype match --limit-iface-${o.limitIface}`, bad, allowed, undefined, 'addrtype'));
    }
    if (ctx.family === 6) {
      const all = (o.srcType?.value ?? 0) | (o.dstType?.value ?? 0);
      // addrtype_mt_checkentry_v1: no BLACKHOLE, no BROADCAST, nothing from PROHIBIT on (PROHIBIT,
      // THROW, NAT, XRESOLVE).
      for (const t of ['BLACKHOLE', 'BROADCAST', 'PROHIBIT', 'THROW', 'NAT', 'XRESOLVE'] as const) {
        if (all & ADDR_TYPE[t]) out.push(diagnostic('BAD_VALUE', `addrtype: IPv6 ${t} matching is not supported`, undefined, t));
      }
    }
    return out;
  },
  lower(o) {
    const src = o.srcType?.value ?? 0;
    const srcInv = o.srcType?.negated ?? false;
    const dst = o.dstType?.value ?? 0;
    const dstInv = o.dstType?.negated ?? false;
    const limitIn = o.limitIface === 'in';
    const limitOut = o.limitIface === 'out';
    // addrtype_mt_v1: each given test is (mask & (1 << type)) != 0, xor its invert flag; IPv6
    // (match_type6) tests the address class and the route instead (see matchType6).
    return (p) => {
      const dev = limitIn ? p.inIface : limitOut ? p.outIface : null;
      if (p.family === 6) {
        if (src !== 0 && matchType6(p.addressType(p.src, dev), p.src, src) === srcInv) return false;
        if (dst !== 0 && matchType6(p.addressType(p.dst, dev), p.dst, dst) === dstInv) return false;
        return true;
      }
      if (src !== 0 && ((p.addressType(p.src, dev) & src) !== 0) === srcInv) return false;
      if (dst !== 0 && ((p.addressType(p.dst, dev) & dst) !== 0) === dstInv) return false;
      return true;
    };
  },
};
