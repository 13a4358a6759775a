/**
 * `-m ecn` (`libxt_ecn.c`, kernel `xt_ecn.c`): the TCP ECE and CWR flags and the IP header's ECN
 * field (`--ecn-ip-ect 0-3`). The TCP options need `-p tcp`. iptables-save prints ECE, CWR,
 * then the IP field. The engine's packets carry ECN 0 and neither flag.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../../model/errors.js';
import { IPPROTO, TCP_FLAGS } from '../../../model/packet.js';
import type { MatchExtension } from '../types.js';
import { missing, parseUint32, protocolIs, unknownOption } from '../values.js';

interface Flag {
  readonly negated: boolean;
}

/** Options of `-m ecn`. */
export interface EcnOptions {
  readonly ece?: Flag;
  readonly cwr?: Flag;
  readonly ect?: { readonly negated: boolean; readonly value: number };
}

/** `-m ecn`. */
export const ecn: MatchExtension<EcnOptions> = {
  kind: 'match',
  name: 'ecn',
  family: 'both',
  options: [
    { name: 'ecn-tcp-cwr', arg: false, negatable: true },
    { name: 'ecn-tcp-ece', arg: false, negatable: true },
    { name: 'ecn-ip-ect', arg: true, negatable: true },
  ],
  parse(occurrences, ctx) {
    const r: { -readonly [K in keyof EcnOptions]: EcnOptions[K] } = {};
    for (const o of occurrences) {
      if (o.name === 'ecn-tcp-cwr') r.cwr = { negated: o.negated };
      else if (o.name === 'ecn-tcp-ece') r.ece = { negated: o.negated };
      else if (o.name === 'ecn-ip-ect') r.ect = { negated: o.negated, value: parseUint32(o, 'ecn', 0, 3) };
      else unknownOption('ecn', o);
    }
    if (!r.cwr && !r.ece && !r.ect) missing(ctx, 'ecn', 'ECN match: some option required');
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.ece) out.push(`${o.ece.negated ? '! ' : ''}--ecn-tcp-ece`);
    if (o.cwr) out.push(`${o.cwr.negated ? '! ' : ''}--ecn-tcp-cwr`);
    if (o.ect) out.push(`${o.ect.negated ? '! ' : ''}--ecn-ip-ect ${o.ect.value}`);
    return out.join(' ');
  },
  check(o, ctx): Diagnostic[] {
    // ecn_mt_check: the TCP tests need "-p tcp" (not inverted).
    if ((o.ece || o.cwr) && !protocolIs(ctx.protocol, [IPPROTO.tcp])) {
      return [diagnostic('MATCH_NEEDS_PROTOCOL', 'ecn match --ecn-tcp-ece/--ecn-tcp-cwr needs -p tcp', undefined, 'ecn')];
    }
    return [];
  },
  lower(o) {
    const { ece, cwr, ect } = o;
    return (p) => {
      if (ect && (((p.tos ?? 0) & 3) === ect.value) === ect.negated) return false;
      if (ece || cwr) {
        if (p.proto !== IPPROTO.tcp) return false;
        if (ece && ((p.tcpFlags & TCP_FLAGS.ECE) !== 0) === ece.negated) return false;
        if (cwr && ((p.tcpFlags & TCP_FLAGS.CWR) !== 0) === cwr.negated) return false;
      }
      return true;
    };
  },
};
