/**
 * `-m tcp` (`libxt_tcp.c`, kernel `xt_tcpudp.c` `tcp_mt`): source and destination port ranges,
 * TCP flags, a TCP option. Loaded implicitly by `-p tcp --dport …`.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { IPPROTO, type PacketView } from '../../../model/packet.js';
import type { Negatable, Span } from '../../../model/types.js';
import type { PortRange } from '../target-options.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, conflict, formatPortRange, parsePortRange, strtoul, unknownOption } from '../values.js';

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
 * Prints a port option as iptables-save 1.8.9 does. The full range is never printed, with or
 * without `!` (`tcp_save`; 1.8.11 prints `! --sport 0:65535`). With the nf_tables backend (the
 * default), a negated range starting at 0 comes back as the equivalent positive range above it:
 * `! --dport 0:1023` → `--dport 1024:65535` (the rule is stored as `dport >= 1024`); legacy
 * prints it as given. We print the nf_tables form.
 */
export function savePorts(name: string, v: Negatable<PortRange> | undefined, out: string[]): void {
  if (!v || isFullRange(v.value)) return;
  const { min, max } = v.value;
  if (v.negated && min === 0 && max > min) {
    out.push(`--${name} ${formatPortRange({ min: max + 1, max: 65535 })}`);
    return;
  }
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
        if (mask !== 0 || o.negated) r.flags = { negated: o.negated, value: { mask, comp } };
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

function save(o: TcpOptions): string {
  const out: string[] = [];
  savePorts('sport', o.sport, out);
  savePorts('dport', o.dport, out);
  if (o.option) out.push(`${o.option.negated ? '! ' : ''}--tcp-option ${o.option.value}`);
  if (o.flags) out.push(`${o.flags.negated ? '! ' : ''}--tcp-flags ${formatTcpFlags(o.flags.value.mask)} ${formatTcpFlags(o.flags.value.comp)}`);
  return out.join(' ');
}

/** The port part shared by tcp and udp lowering: true when both port tests pass. */
export function lowerPorts(o: { sport?: Negatable<PortRange>; dport?: Negatable<PortRange> }): (p: PacketView) => boolean {
  const sMin = o.sport?.value.min ?? 0;
  const sMax = o.sport?.value.max ?? 65535;
  const sInv = o.sport?.negated ?? false;
  const dMin = o.dport?.value.min ?? 0;
  const dMax = o.dport?.value.max ?? 65535;
  const dInv = o.dport?.negated ?? false;
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
  placement: { protocols: ['tcp'] },
  parse,
  save,
  lower(o) {
    const ports = lowerPorts(o);
    const fMask = o.flags?.value.mask ?? 0;
    const fComp = o.flags?.value.comp ?? 0;
    const fInv = o.flags?.negated ?? false;
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
