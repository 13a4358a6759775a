/**
 * `-m dscp` (`libxt_dscp.c`, kernel `xt_dscp.c`): the DSCP (the TOS byte's upper six bits)
 * equals `--dscp n` (0-63) or the class of `--dscp-class` (`AF11`, `EF`, `CS3`…). iptables-save
 * prints `--dscp 0xNN`. The engine's packets carry DSCP 0.
 *
 * @module
 */
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { badValue, bang, exclusive, hex2, missing, parseUint32, unknownOption } from '../values.js';

/** Options of `-m dscp`. */
export interface DscpMatchOptions {
  readonly negated: boolean;
  readonly dscp: number;
}

/** The DiffServ class names `class_to_dscp` knows (`dscp_helper.c`). */
export const DSCP_CLASSES: readonly (readonly [string, number])[] = [
  ['CS0', 0x00], ['CS1', 0x08], ['CS2', 0x10], ['CS3', 0x18], ['CS4', 0x20], ['CS5', 0x28], ['CS6', 0x30], ['CS7', 0x38],
  ['BE', 0x00], ['AF11', 0x0a], ['AF12', 0x0c], ['AF13', 0x0e], ['AF21', 0x12], ['AF22', 0x14], ['AF23', 0x16],
  ['AF31', 0x1a], ['AF32', 0x1c], ['AF33', 0x1e], ['AF41', 0x22], ['AF42', 0x24], ['AF43', 0x26], ['EF', 0x2e],
];

/** `class_to_dscp`: a class name, case-insensitive. */
export function dscpClass(o: OptionOccurrence, ext: string): number {
  const text = o.arg ?? '';
  const hit = DSCP_CLASSES.find(([n]) => n.toLowerCase() === text.toLowerCase());
  if (!hit) badValue(o, `${ext}: invalid DSCP class value "${text}"`);
  return hit[1];
}

/** `-m dscp`. */
export const dscp: MatchExtension<DscpMatchOptions> = {
  kind: 'match',
  name: 'dscp',
  family: 'both',
  options: [
    { name: 'dscp', arg: true, negatable: true },
    { name: 'dscp-class', arg: true, negatable: true },
  ],
  parse(occurrences, ctx) {
    exclusive(occurrences, ['dscp', 'dscp-class']);
    let r: DscpMatchOptions | undefined;
    for (const o of occurrences) {
      if (o.name === 'dscp') r = { negated: o.negated, dscp: parseUint32(o, 'dscp', 0, 63) };
      else if (o.name === 'dscp-class') r = { negated: o.negated, dscp: dscpClass(o, 'dscp') };
      else unknownOption('dscp', o);
    }
    if (!r) missing(ctx, 'dscp', 'DSCP match: parameter --dscp is required');
    return r;
  },
  save(o) {
    return `${bang(o.negated)}--dscp ${hex2(o.dscp)}`;
  },
  lower(o) {
    const { dscp: v, negated } = o;
    return (p) => (((p.tos ?? 0) >> 2) === v) !== negated;
  },
};
