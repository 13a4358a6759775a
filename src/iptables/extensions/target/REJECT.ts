/**
 * `-j REJECT` (`libipt_REJECT.c` / `libip6t_REJECT.c`, kernel `ipt_REJECT.c` /
 * `ip6t_REJECT.c`): drops the packet and answers with an ICMP error or a TCP reset. filter
 * table, INPUT/FORWARD/OUTPUT only. `--reject-with` takes a name or its alias, or a unique
 * prefix of either (first in table order); iptables-save always prints the canonical name,
 * `icmp-port-unreachable` / `icmp6-port-unreachable` by default. `tcp-reset` needs `-p tcp`.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../../model/errors.js';
import type { Family } from '../../../model/types.js';
import type { RejectOptions } from '../target-options.js';
import type { TargetExtension } from '../types.js';
import { argOf, badValue, protocolIs, unknownOption } from '../values.js';

/** `reject_table` of libipt_REJECT.c: name, alias. */
export const REJECT_TYPES_V4: readonly (readonly [string, string])[] = [
  ['icmp-net-unreachable', 'net-unreach'],
  ['icmp-host-unreachable', 'host-unreach'],
  ['icmp-proto-unreachable', 'proto-unreach'],
  ['icmp-port-unreachable', 'port-unreach'],
  ['icmp-net-prohibited', 'net-prohib'],
  ['icmp-host-prohibited', 'host-prohib'],
  ['tcp-reset', 'tcp-rst'],
  ['icmp-admin-prohibited', 'admin-prohib'],
];

/** `reject_table` of libip6t_REJECT.c: name, alias. */
export const REJECT_TYPES_V6: readonly (readonly [string, string])[] = [
  ['icmp6-no-route', 'no-route'],
  ['icmp6-adm-prohibited', 'adm-prohibited'],
  ['icmp6-addr-unreachable', 'addr-unreach'],
  ['icmp6-port-unreachable', 'port-unreach'],
  ['tcp-reset', 'tcp-reset'],
  ['icmp6-policy-fail', 'policy-fail'],
  ['icmp6-reject-route', 'reject-route'],
];

/** The default type of each family. */
export function defaultRejectWith(family: Family): string {
  return family === 4 ? 'icmp-port-unreachable' : 'icmp6-port-unreachable';
}

/** `-j REJECT`. */
export const REJECT: TargetExtension<RejectOptions> = {
  kind: 'target',
  name: 'REJECT',
  family: 'both',
  terminal: true,
  options: [{ name: 'reject-with', arg: true }],
  placement: { tables: ['filter'], hooks: ['INPUT', 'FORWARD', 'OUTPUT'] },
  parse(occurrences, ctx) {
    let rejectWith = defaultRejectWith(ctx.family);
    const table = ctx.family === 4 ? REJECT_TYPES_V4 : REJECT_TYPES_V6;
    for (const o of occurrences) {
      if (o.name !== 'reject-with') unknownOption('REJECT', o);
      const text = argOf(o).toLowerCase();
      // strncasecmp(name, arg, strlen(arg)) against the name, then the alias, entry by entry.
      const hit = table.find(([n, a]) => n.startsWith(text) || a.startsWith(text));
      if (!hit) badValue(o, `REJECT: unknown reject type "${o.arg}"`);
      rejectWith = hit[0];
    }
    return { rejectWith };
  },
  save(o) {
    return `--reject-with ${o.rejectWith}`;
  },
  // reject_tg_check / reject_tg6_check
  check(o, ctx): Diagnostic[] {
    if (o.rejectWith === 'tcp-reset' && !protocolIs(ctx.protocol, [6])) {
      return [diagnostic('MATCH_NEEDS_PROTOCOL', 'REJECT --reject-with tcp-reset needs -p tcp', undefined, 'tcp-reset')];
    }
    return [];
  },
};
