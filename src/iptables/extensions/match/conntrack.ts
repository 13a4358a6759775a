/**
 * `-m conntrack` (`libxt_conntrack.c` revision 3, kernel `xt_conntrack.c`): the packet's
 * conntrack state (with the virtual `SNAT`/`DNAT` states), protocol, original and reply tuples,
 * status bits, remaining lifetime and direction.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { CT_STATE, CT_STATUS, type PacketView } from '../../../model/packet.js';
import type { Family, Negatable } from '../../../model/types.js';
import { parseProtocol } from '../../../model/protocols.js';
import type { PortRange } from '../target-options.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import {
  argOf, badValue, formatAddrMask, formatBits, missing, parseHostMask, parsePort, parsePrefixList, strtoul, UINT32_MAX, unknownOption,
} from '../values.js';

/** Virtual state bits (`XT_CONNTRACK_STATE_SNAT`/`_DNAT`), beside the {@link CT_STATE} bits. */
export const CTSTATE_SNAT: number = 1 << 5;
export const CTSTATE_DNAT: number = 1 << 6;

/** State names in the order `conntrack_ps_state` tries them (prefixes match the first). */
export const CTSTATE_PARSE_ORDER: readonly (readonly [string, number])[] = [
  ['INVALID', CT_STATE.INVALID], ['NEW', CT_STATE.NEW], ['ESTABLISHED', CT_STATE.ESTABLISHED],
  ['RELATED', CT_STATE.RELATED], ['UNTRACKED', CT_STATE.UNTRACKED], ['SNAT', CTSTATE_SNAT], ['DNAT', CTSTATE_DNAT],
];
/** State names in the order `print_state` prints them. */
export const CTSTATE_PRINT_ORDER: readonly (readonly [string, number])[] = [
  ['INVALID', CT_STATE.INVALID], ['NEW', CT_STATE.NEW], ['RELATED', CT_STATE.RELATED],
  ['ESTABLISHED', CT_STATE.ESTABLISHED], ['UNTRACKED', CT_STATE.UNTRACKED], ['SNAT', CTSTATE_SNAT], ['DNAT', CTSTATE_DNAT],
];
/** Status names in `conntrack_ps_status` order; `NONE` is 0. Printed in the same order. */
export const CTSTATUS_NAMES: readonly (readonly [string, number])[] = [
  ['NONE', 0], ['EXPECTED', CT_STATUS.EXPECTED], ['SEEN_REPLY', CT_STATUS.SEEN_REPLY],
  ['ASSURED', CT_STATUS.ASSURED], ['CONFIRMED', CT_STATUS.CONFIRMED],
];

/** An address with a mask, as conntrack stores it (the address is not masked). */
export interface AddrMask {
  readonly addr: readonly number[];
  readonly mask: readonly number[];
}

/** Options of `-m conntrack`. `state` and `status` are bit sets (see the name tables). */
export interface ConntrackOptions {
  readonly state?: Negatable<number>;
  /** `--ctproto`, as a protocol number (iptables-save prints the number). */
  readonly proto?: Negatable<number>;
  readonly origSrc?: Negatable<AddrMask>;
  readonly origDst?: Negatable<AddrMask>;
  readonly replSrc?: Negatable<AddrMask>;
  readonly replDst?: Negatable<AddrMask>;
  readonly origSrcPort?: Negatable<PortRange>;
  readonly origDstPort?: Negatable<PortRange>;
  readonly replSrcPort?: Negatable<PortRange>;
  readonly replDstPort?: Negatable<PortRange>;
  readonly status?: Negatable<number>;
  /** `--ctexpire min[:max]`, seconds. */
  readonly expire?: Negatable<{ readonly min: number; readonly max: number }>;
  readonly direction?: 'ORIGINAL' | 'REPLY';
}

/** Parses `--ctstate` / `--state` lists. */
export function parseStates(o: OptionOccurrence, names: readonly (readonly [string, number])[], what: string): number {
  return parsePrefixList(o, names, what);
}

/** `XTTYPE_PORTRC`: `p`, `a:b`, `:b`, `a:`, `:`; names resolve for any protocol. */
function parseCtPorts(o: OptionOccurrence): PortRange {
  const text = argOf(o);
  const parts = text.split(':');
  if (parts.length > 2) badValue(o, `conntrack: too many components in "${text}" (at most 2)`);
  const one = (s: string, dflt: number): number => {
    if (s === '') return dflt;
    const p = parsePort(s, null);
    if (p === null) fail('BAD_PORT', `conntrack: port "${s}" does not resolve to anything`, o.argSpan ?? o.span, text);
    return p;
  };
  const min = one(parts[0]!, 0);
  const max = parts.length === 2 ? one(parts[1]!, 65535) : min;
  // iptables 1.8.9 takes a reversed range as given (it then matches nothing).
  return { min, max };
}

/** `XTTYPE_UINT32RC`: `n` or `a:b`. */
function parseExpire(o: OptionOccurrence): { min: number; max: number } {
  const text = argOf(o);
  const parts = text.split(':');
  if (parts.length > 2) badValue(o, `conntrack: too many components in "${text}" (at most 2)`);
  const one = (s: string, dflt: number): number => {
    if (s === '') return dflt;
    const n = strtoul(s, 0, UINT32_MAX);
    if (n === null) badValue(o, `conntrack: bad value "${s}" for option "${o.written}" (must be 0-${UINT32_MAX})`);
    return n;
  };
  const min = one(parts[0]!, 0);
  const max = parts.length === 2 ? one(parts[1]!, UINT32_MAX) : min;
  return { min, max };
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): ConntrackOptions {
  const r: { -readonly [K in keyof ConntrackOptions]: ConntrackOptions[K] } = {};
  const neg = <T>(o: OptionOccurrence, value: T): Negatable<T> => ({ negated: o.negated, value });
  for (const o of occurrences) {
    switch (o.name) {
      case 'ctstate':
        r.state = neg(o, parseStates(o, CTSTATE_PARSE_ORDER, 'ctstate'));
        break;
      case 'ctproto': {
        const text = argOf(o);
        const n = parseProtocol(text.toLowerCase());
        if (n === null) badValue(o, `conntrack: unknown protocol "${text}"`);
        r.proto = neg(o, n);
        break;
      }
      case 'ctorigsrc': r.origSrc = neg(o, parseHostMask(o, 'conntrack', ctx.family)); break;
      case 'ctorigdst': r.origDst = neg(o, parseHostMask(o, 'conntrack', ctx.family)); break;
      case 'ctreplsrc': r.replSrc = neg(o, parseHostMask(o, 'conntrack', ctx.family)); break;
      case 'ctrepldst': r.replDst = neg(o, parseHostMask(o, 'conntrack', ctx.family)); break;
      case 'ctorigsrcport': r.origSrcPort = neg(o, parseCtPorts(o)); break;
      case 'ctorigdstport': r.origDstPort = neg(o, parseCtPorts(o)); break;
      case 'ctreplsrcport': r.replSrcPort = neg(o, parseCtPorts(o)); break;
      case 'ctrepldstport': r.replDstPort = neg(o, parseCtPorts(o)); break;
      case 'ctstatus':
        r.status = neg(o, parsePrefixList(o, CTSTATUS_NAMES, 'ctstatus'));
        break;
      case 'ctexpire':
        r.expire = neg(o, parseExpire(o));
        break;
      case 'ctdir': {
        const text = argOf(o).toUpperCase();
        if (text !== 'ORIGINAL' && text !== 'REPLY') badValue(o, `conntrack: bad value "${o.arg}" for "--ctdir" (ORIGINAL or REPLY)`);
        r.direction = text;
        break;
      }
      default:
        unknownOption('conntrack', o);
    }
  }
  if (Object.keys(r).length === 0) missing(ctx, 'conntrack', 'at least one option is required');
  return r;
}

/** Prints `! --NAME value` parts in `conntrack_dump` order. */
function save(o: ConntrackOptions, family: Family): string {
  const out: string[] = [];
  const put = (v: Negatable<unknown> | undefined, name: string, text: string): void => {
    if (v) out.push(`${v.negated ? '! ' : ''}--${name} ${text}`);
  };
  const ports = (r: PortRange): string => (r.min === r.max ? String(r.min) : `${r.min}:${r.max}`);
  const am = (a: AddrMask): string => formatAddrMask(a.addr, a.mask, family);
  if (o.state) put(o.state, 'ctstate', formatBits(o.state.value, CTSTATE_PRINT_ORDER));
  if (o.proto) put(o.proto, 'ctproto', String(o.proto.value));
  if (o.origSrc) put(o.origSrc, 'ctorigsrc', am(o.origSrc.value));
  if (o.origDst) put(o.origDst, 'ctorigdst', am(o.origDst.value));
  if (o.replSrc) put(o.replSrc, 'ctreplsrc', am(o.replSrc.value));
  if (o.replDst) put(o.replDst, 'ctrepldst', am(o.replDst.value));
  if (o.origSrcPort) put(o.origSrcPort, 'ctorigsrcport', ports(o.origSrcPort.value));
  if (o.origDstPort) put(o.origDstPort, 'ctorigdstport', ports(o.origDstPort.value));
  if (o.replSrcPort) put(o.replSrcPort, 'ctreplsrcport', ports(o.replSrcPort.value));
  if (o.replDstPort) put(o.replDstPort, 'ctrepldstport', ports(o.replDstPort.value));
  if (o.status) put(o.status, 'ctstatus', o.status.value === 0 ? 'NONE' : formatBits(o.status.value, CTSTATUS_NAMES));
  if (o.expire) put(o.expire, 'ctexpire', o.expire.value.min === o.expire.value.max ? String(o.expire.value.min) : `${o.expire.value.min}:${o.expire.value.max}`);
  if (o.direction) out.push(`--ctdir ${o.direction}`);
  return out.join(' ');
}

/** `((k ^ u) & mask) == 0` for every word (`conntrack_addrcmp`). */
function addrEq(k: readonly number[], a: readonly number[], m: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if ((((k[i]! ^ a[i]!) & m[i]!) >>> 0) !== 0) return false;
  return true;
}

const NO_ENTRY = CT_STATE.INVALID | CT_STATE.UNTRACKED;

/**
 * Lowers conntrack options as `conntrack_mt` evaluates them. A packet whose `ct` is null (raw
 * table, before conntrack) counts as INVALID; an INVALID or UNTRACKED view has no entry, so only
 * the state test applies and the match holds only when `--ctstate` was given.
 */
export function lowerConntrack(o: ConntrackOptions): (p: PacketView) => boolean {
  const hasState = o.state !== undefined;
  const stateMask = o.state?.value ?? 0;
  const stateInv = o.state?.negated ?? false;
  const hasDir = o.direction !== undefined;
  const dirReply = o.direction === 'REPLY';
  type AddrTest = readonly [which: 0 | 1 | 2 | 3, addr: readonly number[], mask: readonly number[], inv: boolean];
  const addrTests: AddrTest[] = [];
  const addAddr = (which: 0 | 1 | 2 | 3, v: Negatable<AddrMask> | undefined): void => {
    if (v) addrTests.push([which, v.value.addr, v.value.mask, v.negated]);
  };
  addAddr(0, o.origSrc);
  addAddr(1, o.origDst);
  addAddr(2, o.replSrc);
  addAddr(3, o.replDst);
  type PortTest = readonly [which: 0 | 1 | 2 | 3, min: number, max: number, inv: boolean];
  const portTests: PortTest[] = [];
  const addPort = (which: 0 | 1 | 2 | 3, v: Negatable<PortRange> | undefined): void => {
    if (v) portTests.push([which, v.value.min, v.value.max, v.negated]);
  };
  addPort(0, o.origSrcPort);
  addPort(1, o.origDstPort);
  addPort(2, o.replSrcPort);
  addPort(3, o.replDstPort);
  const hasProto = o.proto !== undefined;
  const proto = o.proto?.value ?? 0;
  const protoInv = o.proto?.negated ?? false;
  const hasStatus = o.status !== undefined;
  const statusMask = o.status?.value ?? 0;
  const statusInv = o.status?.negated ?? false;
  // Timeouts are not modelled: --ctexpire is taken to hold (see `assumption`).
  const expireOk = o.expire ? !o.expire.negated : true;

  return (p) => {
    const ct = p.ct;
    let statebit: number;
    let tracked: boolean;
    if (ct === null) {
      statebit = CT_STATE.INVALID;
      tracked = false;
    } else if ((ct.state & NO_ENTRY) !== 0) {
      statebit = ct.state & NO_ENTRY;
      tracked = false;
    } else {
      statebit = ct.state;
      tracked = true;
    }
    if (hasState) {
      if (tracked) {
        if (ct!.status & CT_STATUS.SNAT) statebit |= CTSTATE_SNAT;
        if (ct!.status & CT_STATUS.DNAT) statebit |= CTSTATE_DNAT;
      }
      if (((stateMask & statebit) !== 0) === stateInv) return false;
    }
    if (!tracked) return hasState;
    const c = ct!;
    if (hasDir && (c.direction === 'ORIGINAL') === dirReply) return false;
    for (let i = 0; i < addrTests.length; i++) {
      const t = addrTests[i]!;
      const k = t[0] === 0 ? c.origSrc : t[0] === 1 ? c.origDst : t[0] === 2 ? c.replySrc : c.replyDst;
      if (addrEq(k, t[1], t[2]) === t[3]) return false;
    }
    if (hasProto && (c.proto === proto) === protoInv) return false;
    for (let i = 0; i < portTests.length; i++) {
      const t = portTests[i]!;
      const port = t[0] === 0 ? c.origSport : t[0] === 1 ? c.origDport : t[0] === 2 ? c.replySport : c.replyDport;
      if ((port >= t[1] && port <= t[2]) === t[3]) return false;
    }
    if (hasStatus && ((statusMask & c.status) !== 0) === statusInv) return false;
    return expireOk;
  };
}

/** `-m conntrack`. */
export const conntrack: MatchExtension<ConntrackOptions> = {
  kind: 'match',
  name: 'conntrack',
  family: 'both',
  options: [
    { name: 'ctstate', arg: true, negatable: true },
    { name: 'ctproto', arg: true, negatable: true },
    { name: 'ctorigsrc', arg: true, negatable: true },
    { name: 'ctorigdst', arg: true, negatable: true },
    { name: 'ctreplsrc', arg: true, negatable: true },
    { name: 'ctrepldst', arg: true, negatable: true },
    { name: 'ctorigsrcport', arg: true, negatable: true },
    { name: 'ctorigdstport', arg: true, negatable: true },
    { name: 'ctreplsrcport', arg: true, negatable: true },
    { name: 'ctrepldstport', arg: true, negatable: true },
    { name: 'ctstatus', arg: true, negatable: true },
    { name: 'ctexpire', arg: true, negatable: true },
    { name: 'ctdir', arg: true },
  ],
  parse,
  save,
  lower: lowerConntrack,
  assumption(o) {
    return o.expire ? 'conntrack timeouts are not modelled: --ctexpire is taken to hold' : undefined;
  },
};
