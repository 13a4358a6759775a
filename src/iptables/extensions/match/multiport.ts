/**
 * `-m multiport` (`libxt_multiport.c` revision 1, kernel `xt_multiport.c`): up to 15 ports or
 * ranges (`XT_MULTI_PORTS`; a range `a:b` takes two slots) for the source, the destination or
 * either; needs `-p tcp|udp|udplite|sctp|dccp`. iptables-save prints numbers and `a:b`.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { PacketView } from '../../../model/packet.js';
import { protocolName } from '../../../model/protocols.js';
import type { PortRange } from '../target-options.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, conflict, formatPortRange, missing, parsePortOrFail, ruleProtocol, unknownOption } from '../values.js';

/** `XT_MULTI_PORTS` (include/uapi/linux/netfilter/xt_multiport.h). */
export const XT_MULTI_PORTS = 15;

/** The protocols multiport works with (`proto_to_name` in libxt_multiport.c). */
export const MULTIPORT_PROTOCOLS: readonly number[] = [6, 17, 136, 132, 33];

/** Options of `-m multiport`. */
export interface MultiportOptions {
  readonly negated: boolean;
  /** `--sports`, `--dports` or `--ports`. */
  readonly direction: 'source' | 'destination' | 'either';
  /** Single ports have `min === max`. */
  readonly ports: readonly PortRange[];
}

const OPTION_OF = { source: 'sports', destination: 'dports', either: 'ports' } as const;

/** `parse_multi_ports_v1`: comma list of ports and `a:b` ranges (`a < b`), at most 15 slots. */
function parsePorts(o: OptionOccurrence, proto: string): PortRange[] {
  const text = argOf(o);
  const items = text.split(',');
  const out: PortRange[] = [];
  let slots = 0;
  for (let k = 0; k < items.length; k++) {
    if (slots >= XT_MULTI_PORTS) {
      fail('TOO_MANY_PORTS', `too many ports specified in "${text}" (at most ${XT_MULTI_PORTS}, a range counts as two)`, o.argSpan ?? o.span, text);
    }
    const item = items[k]!;
    const colon = item.indexOf(':');
    if (colon < 0) {
      const p = parsePortOrFail(o, item, proto);
      out.push({ min: p, max: p });
      slots++;
      continue;
    }
    if (slots === XT_MULTI_PORTS - 1) {
      fail('TOO_MANY_PORTS', `too many ports specified in "${text}" (at most ${XT_MULTI_PORTS}, a range counts as two)`, o.argSpan ?? o.span, text);
    }
    const min = parsePortOrFail(o, item.slice(0, colon), proto);
    const max = parsePortOrFail(o, item.slice(colon + 1), proto);
    if (min >= max) fail('BAD_PORT', `invalid port range "${item}" (the first port must be lower)`, o.argSpan ?? o.span, text);
    out.push({ min, max });
    slots += 2;
  }
  return out;
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): MultiportOptions {
  let r: MultiportOptions | undefined;
  let first: OptionOccurrence | undefined;
  for (const o of occurrences) {
    const direction = o.name === 'sports' ? 'source' : o.name === 'dports' ? 'destination' : o.name === 'ports' ? 'either' : undefined;
    if (!direction) unknownOption('multiport', o);
    if (first) conflict(o, first.written);
    first = o;
    // check_proto: the rule's -p must name one of the five protocols, not inverted.
    const rp = ruleProtocol(ctx.protocol);
    if (!rp) fail('MATCH_NEEDS_PROTOCOL', 'multiport needs "-p tcp", "-p udp", "-p udplite", "-p sctp" or "-p dccp"', o.span, o.written);
    if (rp.negated || !MULTIPORT_PROTOCOLS.includes(rp.num)) {
      fail('MATCH_NEEDS_PROTOCOL', 'multiport only works with TCP, UDP, UDPLITE, SCTP and DCCP', o.span, o.written);
    }
    r = { negated: o.negated, direction, ports: parsePorts(o, protocolName(rp.num)) };
  }
  if (!r) missing(ctx, 'multiport', 'no ports specified (use --sports, --dports or --ports)');
  return r;
}

/** `-m multiport`. */
export const multiport: MatchExtension<MultiportOptions> = {
  kind: 'match',
  name: 'multiport',
  family: 'both',
  options: [
    { name: 'sports', aliases: ['source-ports'], arg: true, negatable: true },
    { name: 'dports', aliases: ['destination-ports'], arg: true, negatable: true },
    { name: 'ports', arg: true, negatable: true },
  ],
  placement: { protocols: ['tcp', 'udp', 'udplite', 'sctp', 'dccp'] },
  parse,
  save(o) {
    return `${o.negated ? '! ' : ''}--${OPTION_OF[o.direction]} ${o.ports.map((r) => formatPortRange(r)).join(',')}`;
  },
  lower(o) {
    const n = o.ports.length;
    const mins = new Uint16Array(n);
    const maxs = new Uint16Array(n);
    o.ports.forEach((r, i) => {
      mins[i] = r.min;
      maxs[i] = r.max;
    });
    const inv = o.negated;
    const src = o.direction !== 'destination';
    const dst = o.direction !== 'source';
    // ports_match_v1: the first hit returns true ^ invert; no hit returns invert.
    return (p: PacketView): boolean => {
      if (p.fragment) return false;
      for (let i = 0; i < n; i++) {
        const lo = mins[i]!;
        const hi = maxs[i]!;
        if ((src && p.sport >= lo && p.sport <= hi) || (dst && p.dport >= lo && p.dport <= hi)) return !inv;
      }
      return inv;
    };
  },
};
