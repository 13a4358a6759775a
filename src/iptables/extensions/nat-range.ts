/**
 * NAT ranges as the NAT targets read and print them: `--to-destination` / `--to-source`
 * (`[ip[-ip]][:port[-port[/base]]]`, IPv6 in brackets when a port follows) and `--to-ports`
 * (`port[-port]`). After `libxt_DNAT.c` (iptables 1.8.9: `parse_to`, `parse_ports`,
 * `sprint_range`) and `libipt_SNAT.c` / `libipt_MASQUERADE.c`.
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import type { Family } from '../../model/types.js';
import { formatAddress, parseAddress } from '../../model/address.js';
import type { NatRange, PortRange } from './target-options.js';
import type { ExtensionContext, OptionOccurrence } from './types.js';
import { argSpan, ruleProtocol, sameAddress, serviceToPort, strtoulPrefix } from './values.js';

/** How strict the port part is: DNAT/REDIRECT take service names and a base port. */
export interface PortSyntax {
  readonly services: boolean;
  readonly base: boolean;
  /** Lowest allowed port. */
  readonly min: number;
  /**
   * SNAT and MASQUERADE (revision 0, `nf_nat_ipv4_multi_range_compat`) have no field for the base
   * port: iptables 1.8.9 parses `/base`, keeps the flag and loses the value, so it saves `/0`.
   */
  readonly dropBase?: boolean;
  readonly target: string;
}

/** Ports are only allowed with `-p tcp|udp|sctp|dccp|icmp` (the number, even after `!`). */
export function portsAllowed(ctx: ExtensionContext): boolean {
  const p = ruleProtocol(ctx.protocol);
  return p !== undefined && [6, 17, 132, 33, 1].includes(p.num);
}

function needProto(o: OptionOccurrence, target: string): never {
  return fail('MATCH_NEEDS_PROTOCOL', `${target}: need -p tcp, udp, sctp or dccp with a port specification`, o.span, o.written);
}

/** `parse_ports`: `p`, `p-q`, `p-q/base`. */
export function parseNatPorts(o: OptionOccurrence, text: string, syntax: PortSyntax): { ports: PortRange; baseport?: number } {
  const bad = (msg: string): never => fail('BAD_PORT', `${syntax.target}: ${msg}`, argSpan(o), o.arg);
  const num = (s: string): { value: number; end: number } | null => {
    const r = strtoulPrefix(s);
    return r && r.value <= 65535 ? r : null;
  };
  let first = num(text);
  let rest: string;
  if (!first || (first.end !== text.length && text[first.end] !== '-' && text[first.end] !== ':' && text[first.end] !== '/')) {
    const svc = syntax.services ? serviceToPort(text, null) : null;
    if (svc === null) bad(`port "${text}" is not valid${/^\d+$/.test(text) ? ' (must be 0-65535)' : ''}`);
    first = { value: svc!, end: text.length };
  }
  if (first.value < syntax.min) bad(`port "${text}" is not valid (must be ${syntax.min}-65535)`);
  rest = text.slice(first.end);
  if (rest === '') return { ports: { min: first.value, max: first.value } };
  if (rest[0] === ':') bad(`invalid port:port syntax in "${text}" - use a dash`);
  if (rest[0] !== '-') bad(`garbage after port value: "${rest}"`);
  const maxText = rest.slice(1);
  const max = num(maxText);
  if (!max || max.end === 0) bad(`port "${maxText}" is not valid`);
  if (max!.value < syntax.min) bad(`port "${maxText}" is not valid (must be ${syntax.min}-65535)`);
  if (max!.value < first.value) bad(`port range "${text}" is backwards`);
  const ports = { min: first.value, max: max!.value };
  rest = maxText.slice(max!.end);
  if (rest === '') return { ports };
  if (rest[0] !== '/' || !syntax.base) bad(`garbage after port range: "${rest}"`);
  const baseText = rest.slice(1);
  let base: number | null = null;
  const b = strtoulPrefix(baseText);
  if (b && b.end === baseText.length && b.value >= 1 && b.value <= 65535) base = b.value;
  else if (syntax.services) base = serviceToPort(baseText, null);
  if (base === null) bad(`base port "${baseText}" is not valid (must be 1-65535)`);
  return { ports, baseport: syntax.dropBase ? 0 : base! };
}

/** `parse_to`: `[ip[-ip]][:ports]`, IPv6 as `[ip]:ports` when ports follow. */
export function parseNatTo(o: OptionOccurrence, text: string, ctx: ExtensionContext, syntax: PortSyntax): NatRange {
  const family = ctx.family;
  let addrPart: string;
  let portPart: string | undefined;
  if (text.includes('[')) {
    const open = text.indexOf('[');
    const close = text.indexOf(']', open);
    if (close < 0 || family === 4) fail('BAD_ADDRESS', `${syntax.target}: invalid address format "${text}"`, argSpan(o), text);
    addrPart = text.slice(open + 1, close);
    const after = text.slice(close + 1);
    const colon = after.indexOf(':');
    portPart = colon >= 0 ? after.slice(colon + 1) : undefined;
  } else {
    const first = text.indexOf(':');
    // One colon is port information; more than one is an IPv6 address.
    if (first >= 0 && text.indexOf(':', first + 1) < 0) {
      addrPart = text.slice(0, first);
      portPart = text.slice(first + 1);
    } else {
      addrPart = text;
    }
  }
  const r: { -readonly [K in keyof NatRange]: NatRange[K] } = {};
  if (portPart !== undefined) {
    if (!portsAllowed(ctx)) needProto(o, syntax.target);
    const p = parseNatPorts(o, portPart, syntax);
    r.ports = p.ports;
    if (p.baseport !== undefined) r.baseport = p.baseport;
  }
  if (addrPart !== '') {
    const dash = addrPart.indexOf('-');
    const minText = dash < 0 ? addrPart : addrPart.slice(0, dash);
    const min = parseAddress(minText, family);
    if (!min) fail('BAD_ADDRESS', `${syntax.target}: bad IP address "${minText}"`, argSpan(o), text);
    let max = min;
    if (dash >= 0) {
      const m = parseAddress(addrPart.slice(dash + 1), family);
      if (!m) fail('BAD_ADDRESS', `${syntax.target}: bad IP address "${addrPart.slice(dash + 1)}"`, argSpan(o), text);
      max = m;
    }
    r.addrMin = min;
    r.addrMax = max;
  } else if (portPart === undefined) {
    fail('BAD_ADDRESS', `${syntax.target}: bad IP address ""`, argSpan(o), text);
  }
  return r;
}

/** `sprint_range`: `ip[-ip][:p[-q][/base]]`, IPv6 in brackets when ports follow. */
export function formatNatRange(r: NatRange, family: Family): string {
  let s = '';
  if (r.addrMin) {
    const brackets = family === 6 && r.ports !== undefined;
    s += brackets ? '[' : '';
    s += formatAddress(r.addrMin, family);
    if (r.addrMax && !sameAddress(r.addrMin, r.addrMax)) s += `-${formatAddress(r.addrMax, family)}`;
    s += brackets ? ']' : '';
  }
  if (r.ports) {
    s += `:${r.ports.min}`;
    if (r.ports.max !== r.ports.min) s += `-${r.ports.max}`;
    if (r.baseport !== undefined) s += `/${r.baseport}`;
  }
  return s;
}

/** `--to-ports p[-q][/base]` as REDIRECT and MASQUERADE print it. */
export function formatToPorts(p: PortRange, baseport?: number): string {
  return (p.min === p.max ? String(p.min) : `${p.min}-${p.max}`) + (baseport !== undefined ? `/${baseport}` : '');
}

/** `--to-ports` of REDIRECT/MASQUERADE, after the protocol check. */
export function parseToPorts(o: OptionOccurrence, ctx: ExtensionContext, syntax: PortSyntax): { ports: PortRange; baseport?: number } {
  if (!portsAllowed(ctx)) needProto(o, syntax.target);
  return parseNatPorts(o, o.arg ?? '', syntax);
}
