/**
 * `-m icmp` (`libipt_icmp.c`, kernel `ip_tables.c` `icmp_match`), IPv4 only: `--icmp-type`
 * by name (unique, case-insensitive prefixes accepted) or as `type[/code]`. iptables-save
 * prints numbers (`--icmp-type 3/4`), or `any`.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import { IPPROTO } from '../../../model/packet.js';
import type { Negatable } from '../../../model/types.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, missing, strtoul, unknownOption } from '../values.js';

/** An ICMP type and an inclusive code range (`type 0xff` = any, IPv4 only). */
export interface IcmpType {
  readonly type: number;
  readonly codeMin: number;
  readonly codeMax: number;
}

/** Options of `-m icmp`. */
export interface IcmpOptions {
  readonly icmpType: Negatable<IcmpType>;
}

type IcmpName = readonly [name: string, type: number, codeMin: number, codeMax: number];

/** `icmp_codes` of libipt_icmp.c, in its order (order decides ambiguity messages only). */
export const ICMP_NAMES: readonly IcmpName[] = [
  ['any', 0xff, 0, 0xff],
  ['echo-reply', 0, 0, 0xff], ['pong', 0, 0, 0xff],
  ['destination-unreachable', 3, 0, 0xff],
  ['network-unreachable', 3, 0, 0], ['host-unreachable', 3, 1, 1], ['protocol-unreachable', 3, 2, 2],
  ['port-unreachable', 3, 3, 3], ['fragmentation-needed', 3, 4, 4], ['source-route-failed', 3, 5, 5],
  ['network-unknown', 3, 6, 6], ['host-unknown', 3, 7, 7], ['network-prohibited', 3, 9, 9],
  ['host-prohibited', 3, 10, 10], ['TOS-network-unreachable', 3, 11, 11], ['TOS-host-unreachable', 3, 12, 12],
  ['communication-prohibited', 3, 13, 13], ['host-precedence-violation', 3, 14, 14], ['precedence-cutoff', 3, 15, 15],
  ['source-quench', 4, 0, 0xff],
  ['redirect', 5, 0, 0xff], ['network-redirect', 5, 0, 0], ['host-redirect', 5, 1, 1],
  ['TOS-network-redirect', 5, 2, 2], ['TOS-host-redirect', 5, 3, 3],
  ['echo-request', 8, 0, 0xff], ['ping', 8, 0, 0xff],
  ['router-advertisement', 9, 0, 0xff], ['router-solicitation', 10, 0, 0xff],
  ['time-exceeded', 11, 0, 0xff], ['ttl-exceeded', 11, 0, 0xff],
  ['ttl-zero-during-transit', 11, 0, 0], ['ttl-zero-during-reassembly', 11, 1, 1],
  ['parameter-problem', 12, 0, 0xff], ['ip-header-bad', 12, 0, 0], ['required-option-missing', 12, 1, 1],
  ['timestamp-request', 13, 0, 0xff], ['timestamp-reply', 14, 0, 0xff],
  ['address-mask-request', 17, 0, 0xff], ['address-mask-reply', 18, 0, 0xff],
];

/**
 * `parse_icmp` / `parse_icmpv6`: a name (a case-insensitive prefix of exactly one table entry)
 * or `type[/code]`, both 0-255; no code means every code.
 */
export function parseIcmpType(o: OptionOccurrence, names: readonly IcmpName[], what: string): IcmpType {
  const text = argOf(o);
  const span = o.argSpan ?? o.span;
  const lower = text.toLowerCase();
  let hit: IcmpName | undefined;
  for (const n of names) {
    if (!n[0].toLowerCase().startsWith(lower)) continue;
    if (hit) fail('BAD_VALUE', `ambiguous ${what} type "${text}": "${hit[0]}" or "${n[0]}"?`, span, text);
    hit = n;
  }
  if (hit) return { type: hit[1], codeMin: hit[2], codeMax: hit[3] };
  const slash = text.indexOf('/');
  const typeText = slash < 0 ? text : text.slice(0, slash);
  const type = strtoul(typeText, 0, 255);
  if (type === null) fail('BAD_VALUE', `invalid ${what} type "${typeText}"`, span, text);
  if (slash < 0) return { type, codeMin: 0, codeMax: 0xff };
  const code = strtoul(text.slice(slash + 1), 0, 255);
  if (code === null) fail('BAD_VALUE', `invalid ${what} code "${text.slice(slash + 1)}"`, span, text);
  return { type, codeMin: code, codeMax: code };
}

/** `type` or `type/code` as the icmp saves print it. */
export function formatIcmpType(t: IcmpType): string {
  return t.codeMin !== 0 || t.codeMax !== 0xff ? `${t.type}/${t.codeMin}` : String(t.type);
}

function parse(occurrences: readonly OptionOccurrence[], ctx: Parameters<MatchExtension['parse']>[1]): IcmpOptions {
  let icmpType: Negatable<IcmpType> | undefined;
  for (const o of occurrences) {
    if (o.name !== 'icmp-type') unknownOption('icmp', o);
    icmpType = { negated: o.negated, value: parseIcmpType(o, ICMP_NAMES, 'ICMP') };
  }
  if (!icmpType) missing(ctx, 'icmp', 'option "--icmp-type" must be specified');
  return { icmpType };
}

/** `-m icmp`. */
export const icmp: MatchExtension<IcmpOptions> = {
  kind: 'match',
  name: 'icmp',
  family: 4,
  options: [{ name: 'icmp-type', arg: true, negatable: true }],
  placement: { protocols: ['icmp'] },
  parse,
  save(o) {
    const t = o.icmpType.value;
    return `${o.icmpType.negated ? '! ' : ''}--icmp-type ${t.type === 0xff ? 'any' : formatIcmpType(t)}`;
  },
  lower(o) {
    const { type, codeMin, codeMax } = o.icmpType.value;
    const inv = o.icmpType.negated;
    // icmp_type_code_match: (test_type == 0xff || (type == test_type && code in range)) ^ invert
    return (p) => {
      if (p.proto !== IPPROTO.icmp || p.fragment) return false;
      const m = type === 0xff || (p.icmpType === type && p.icmpCode >= codeMin && p.icmpCode <= codeMax);
      return m !== inv;
    };
  },
};
