/**
 * `-m tcp` (`libxt_tcp.c`, kernel `xt_tcpudp.c` `tcp_mt`): source and destination port ranges,
 * TCP flags, a TCP option. Loaded implicitly by `-p tcp --dport …`.
 *
 * @module
 */
import { diagnostic, fail, type Diagnostic } from '../../../model/errors.js';
import { IPPROTO, type PacketView } from '../../../model/packet.js';
import type { Negatable, Span } from '../../../model/types.js';
import type { PortRange } from '../target-options.js';
import type { CheckContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, conflict, formatPortRange, parsePortRange, ruleProtocol, strtoul, unknownOption } from '../values.js';

/** The TCP flag names iptables knows (`tcp_flag_names`), in its print order. */
export const TCP_FLAG_NAMES: readonly (readonly [string, number])[] = [
  ['FIN', 0x01], ['SYN', 0x02], ['RST', 0x04], ['PSH', 0x08], ['ACK', 0x10], ['URG', 0x20], ['ALL', 0x3f], ['NONE', 0],
];

/** `--tcp-flags mask comp`: the packet matches when `flags & mask == comp`. */
export interface TcpFlags {
  readonly mask: number;
  readonly comp: number;
}

/**
 * Options of `-m tcp`. A port range covering everything without `!` is dropped at parse, as
 * iptables-save drops it, so the model is canonical.
 */
export interface TcpOptions {
  readonly sport?: Negatable<PortRange>;
  readonly dport?: Negatable<PortRange>;
  readonly flags?: Negatable<TcpFlags>;
  /** `--tcp-option N` (1-255). */
  readonly option?: Negatable<number>;
}

/** Parses a flag list (`SYN,ACK`, case-insensitive; `ALL`, `NONE`) as `parse_tcp_flag`. */
export function parseTcpFlagList(text: string, o: OptionOccurrence, span: Span | undefined = o.argSpan): number {
  let bits = 0;
  for (const item of text.split(',')) {
    if (item === '') continue; // strtok skips empty fields
    const hit = TCP_FLAG_NAMES.find(([n]) => n.toLowerCase() === item.toLowerCase());
    if (!hit) fail('BAD_VALUE', `unknown TCP flag "${item}"`, span ?? o.span, item);
    bits |= hit[1];
  }
  return bits;
}

/** Prints flag bits as `print_tcpf`: names in table order, `NONE` for none. */
export function formatTcpFlags(bits: number): string {
  const out: string[] = [];
  let rest = bits & 0xff;
  for (const [n, b] of TCP_FLAG_NAMES) {
    if (b !== 0 && b !== 0x3f && (rest & b) !== 0) {
      out.push(n);
      rest &= ~b;
    }
  }
  return out.length === 0 ? 'NONE' : out.join(',');
}

const isFullRange = (r: PortRange): boolean => r.min === 0 && r.max === 65535;

/**
 * Prints a port option as `tcp_save`/`udp_save` of iptables 1.8.9 do: the full range is never
 * printed, with or without `!` (1.8.11 prints `! --sport 0:65535`). This is the match as the
 * kernel holds it in an xt match; what iptables-nft lists back after turning ports into payload
 * tests (`! --dport 0:1023` as `--dport 1024:65535`) is `print/nft-matches.ts`.
 */
export function savePorts(name: string, v: Negatable<PortRange> | undefined, out: string[]): void {
  if (!v || isFullRange(v.value)) return;
  out.push(`${v.negated ? '! ' : ''}--${name} ${formatPortRange(v.value)}`);
}

function parse(occurrences: readonly OptionOccurrence[]): TcpOptions {
  const r: { -readonly [K in keyof TcpOptions]: TcpOptions[K] } = {};
  let flagsFrom: string | undefined;
  for (const o of occurrences) {
    switch (o.name) {
      case 'sport': {
        const v = parsePortRange(o, 'tcp');
        if (o.negated || !isFullRange(v)) r.sport = { negated: o.negated, value: v };
        break;
      }
      case 'dport': {
        const v = parsePortRange(o, 'tcp');
        if (o.negated || !isFullRange(v)) r.dport = { negated: o.negated, value: v };
        break;
      }
      case 'syn':
      case 'tcp-flags': {
        if (flagsFrom !== undefined) conflict(o, flagsFrom);
        flagsFrom = o.written;
        let mask: number;
        let comp: number;
        if (o.name === 'syn') {
          mask = 0x17; // SYN,RST,ACK,FIN
          comp = 0x02;
        } else {
          const next = o.extra?.[0];
          if (!next || next.text.startsWith('-') || next.text.startsWith('!')) {
            fail('MISSING_ARGUMENT', '--tcp-flags requires two arguments (mask and comparison)', o.argSpan ?? o.span, o.written);
          }
          mask = parseTcpFlagList(argOf(o), o);
          comp = parseTcpFlagList(next.text, o, next.span);
        }
        // Kept unless it is no test at all (NONE NONE): iptables-nft drops a zero mask but lists a
        // match that had only such flags differently from one that had none.
        if (mask !== 0 || comp !== 0 || o.negated) r.flags = { negated: o.negated, value: { mask, comp } };
        break;
      }
      case 'tcp-option': {
        const text = argOf(o);
        const n = strtoul(text, 1, 255);
        if (n === null) fail('BAD_VALUE', `bad TCP option "${text}" (must be 1-255)`, o.argSpan ?? o.span, text);
        r.option = { negated: o.negated, value: n };
        break;
      }
      default:
        unknownOption('tcp', o);
    }
  }
  return r;
}

/**
 * Whether iptables-nft writes this tcp match as payload tests (`add_nft_tcp`) rather than as an
 * xt match: unless it has `--tcp-option` or no test at all.
 */
export function tcpAsPayload(o: TcpOptions): boolean {
  return o.option === undefined && (o.sport !== undefined || o.dport !== undefined || o.flags !== undefined);
}

/**
 * Where a tcp or udp match may be used. As payload tests (iptables-nft) iptables only asks that
 * the rule's `-p` names the protocol, `!` or not ("TCP match requires '-p tcp'"); as an xt match
 * (legacy, or a match iptables-nft keeps as one) the kernel wants it named and not negated.
 */
export function checkTcpUdp(name: 'tcp' | 'udp', asPayload: boolean, ctx: CheckContext): Diagnostic[] {
  const want = name === 'tcp' ? IPPROTO.tcp : IPPROTO.udp;
  const p = ruleProtocol(ctx.protocol);
  const payload = asPayload && ctx.backend !== 'legacy';
  if (p !== undefined && p.num === want && (payload || !p.negated)) return [];
  const upper = name.toUpperCase();
  const why = p === undefined ? '' : p.negated && p.num === want ? (payload ? '' : ` (not "! -p ${name}": the kernel's ${name} match wants the protocol itself)`) : ` (not "${p.negated ? '! ' : ''}-p ${ctx.protocol!.value}")`;
  return [diagnostic('MATCH_NEEDS_PROTOCOL', `${name} match needs -p ${name}${why}: iptables says "${upper} match requires '-p ${name}'"`, undefined, name)];
}

/** `tcp_save`: the options of one tcp match as the kernel holds it. */
export function saveTcp(o: TcpOptions): string {
  const out: string[] = [];
  savePorts('sport', o.sport, out);
  savePorts('dport', o.dport, out);
  if (o.option) out.push(`${o.option.negated ? '! ' : ''}--tcp-option ${o.option.value}`);
  // tcp_save: flags only with a mask or a `!`.
  if (o.flags && (o.flags.value.mask !== 0 || o.flags.negated)) out.push(`${o.flags.negated ? '! ' : ''}--tcp-flags ${formatTcpFlags(o.flags.value.mask)} ${formatTcpFlags(o.flags.value.comp)}`);
  return out.join(' ');
}

/** A port option as the test it is: none for a full range, negated or not (see {@link lowerPorts}). */
export function portTestOf(v: Negatable<PortRange> | undefined): Negatable<PortRange> | undefined {
  return v !== undefined && isFullRange(v.value) ? undefined : v;
}

/**
 * The port part shared by tcp and udp lowering: true when both port tests pass. A negated full
 * range is no test: iptables-nft writes none for it (`add_nft_tcpudp`), where an xt match would
 * never match.
 */
export function lowerPorts(o: { sport?: Negatable<PortRange>; dport?: Negatable<PortRange> }): (p: PacketView) => boolean {
  const sport = portTestOf(o.sport);
  const dport = portTestOf(o.dport);
  const sMin = sport?.value.min ?? 0;
  const sMax = sport?.value.max ?? 65535;
  const sInv = sport?.negated ?? false;
  const dMin = dport?.value.min ?? 0;
  const dMax = dport?.value.max ?? 65535;
  const dInv = dport?.negated ?? false;
  // xt_tcpudp.c port_match: (min <= port && port <= max) ^ invert
  return (p) => (p.sport >= sMin && p.sport <= sMax) !== sInv && (p.dport >= dMin && p.dport <= dMax) !== dInv;
}

/** `-m tcp`. */
export const tcp: MatchExtension<TcpOptions> = {
  kind: 'match',
  name: 'tcp',
  family: 'both',
  options: [
    { name: 'sport', aliases: ['source-port'], arg: true, negatable: true },
    { name: 'dport', aliases: ['destination-port'], arg: true, negatable: true },
    { name: 'syn', arg: false, negatable: true },
    { name: 'tcp-flags', arg: true, negatable: true, extraArgs: 1 },
    { name: 'tcp-option', arg: true, negatable: true },
  ],
  parse,
  save: saveTcp,
  check(o, ctx) {
    return checkTcpUdp('tcp', tcpAsPayload(o), ctx);
  },
  lower(o) {
    const ports = lowerPorts(o);
    // iptables-nft emits no flags test for a zero mask (add_nft_tcp: only `if (flg_mask)`), so
    // `--tcp-flags NONE SYN` and `! --tcp-flags NONE NONE` test nothing.
    const fMask = o.flags?.value.mask ?? 0;
    const fComp = fMask === 0 ? 0 : o.flags?.value.comp ?? 0;
    const fInv = fMask === 0 ? false : o.flags?.negated ?? false;
    // TCP options are not modelled: a packet carries none, so only "! --tcp-option" can match.
    const optionOk = o.option ? o.option.negated : true;
    return (p) => {
      if (p.proto !== IPPROTO.tcp || p.fragment) return false; // tcp_mt: fragoff != 0 never matches
      if (!ports(p)) return false;
      if (((p.tcpFlags & fMask) === fComp) === fInv) return false;
      return optionOk;
    };
  },
  assumption(o) {
    return o.option ? 'TCP options are not modelled: packets carry none, so --tcp-option never matches' : undefined;
  },
};
