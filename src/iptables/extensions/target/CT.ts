/**
 * `-j CT` (`libxt_CT.c` revision 2, kernel `xt_CT.c`): conntrack settings for a connection's
 * first packet: `--notrack`, `--helper`, `--timeout`, `--ctevents`, `--expevents`, `--zone`
 * (`--zone-orig`, `--zone-reply`; a number 0-65535 or `mark`). raw table only. iptables-save
 * prints them in that order and omits zone 0.
 *
 * @module
 */
import type { CtOptions } from '../target-options.js';
import { diagnostic, type Diagnostic } from '../../../model/errors.js';
import type { Family } from '../../../model/types.js';
import type { OptionOccurrence, TargetExtension } from '../types.js';
import { argOf, badValue, formatBits, ruleProtocol, strtoul, unknownOption } from '../values.js';

/**
 * The conntrack helpers `--helper` can name, by protocol and family, as this kernel (Debian 12's
 * set of nf_conntrack_* modules) registers them; `xt_ct_set_helper` looks the name up for the
 * rule's family and protocol.
 */
const HELPERS: ReadonlyMap<string, readonly (readonly [number, readonly Family[]])[]> = new Map<string, readonly (readonly [number, readonly Family[]])[]>([
  ['ftp', [[6, [4, 6]]]], ['tftp', [[17, [4, 6]]]], ['sip', [[6, [4, 6]], [17, [4, 6]]]], ['irc', [[6, [4]]]],
  ['amanda', [[17, [4, 6]]]], ['RAS', [[17, [4, 6]]]], ['Q.931', [[6, [4, 6]]]], ['pptp', [[6, [4]]]],
  ['sane', [[6, [4, 6]]]], ['snmp', [[17, [4]]]], ['snmp_trap', [[17, [4]]]], ['netbios-ns', [[17, [4]]]],
]);

/** `xt_ct_set_helper`: the rule must name its protocol, and the helper must exist for it. */
function checkHelper(helper: string, ctx: { readonly family: Family; readonly protocol: Parameters<typeof ruleProtocol>[0] }): Diagnostic[] {
  const p = ruleProtocol(ctx.protocol);
  if (p === undefined || p.negated) {
    return [diagnostic('MATCH_NEEDS_PROTOCOL', `CT --helper ${helper}: you must specify a L4 protocol and not use inversions on it (the kernel refuses the rule: No such file or directory)`, undefined, 'CT')];
  }
  const ok = HELPERS.get(helper)?.some(([proto, families]) => proto === p.num && families.includes(ctx.family));
  if (ok) return [];
  const known = [...HELPERS].filter(([, ways]) => ways.some(([proto, families]) => proto === p.num && families.includes(ctx.family))).map(([n]) => n);
  return [diagnostic('BAD_VALUE', `CT --helper ${helper}: no such conntrack helper for ${p.num === 6 ? 'tcp' : p.num === 17 ? 'udp' : `protocol ${p.num}`} over IPv${ctx.family} (the kernel refuses the rule: No such file or directory)${known.length > 0 ? `; there are ${known.join(', ')}` : ''}`, undefined, helper)];
}

/** `ct_event_tbl` (bit = 1 << IPCT_*). */
const CT_EVENTS: readonly (readonly [string, number])[] = [
  ['new', 1 << 0], ['related', 1 << 1], ['destroy', 1 << 2], ['reply', 1 << 3], ['assured', 1 << 4],
  ['protoinfo', 1 << 5], ['helper', 1 << 6], ['mark', 1 << 7], ['natseqinfo', 1 << 8], ['secmark', 1 << 9],
];
const EXP_EVENTS: readonly (readonly [string, number])[] = [['new', 1]];

/** Options of `-j CT`: the engine's {@link CtOptions} plus what it does not act on. */
export interface CtTargetOptions extends CtOptions {
  /** `--zone mark`: the zone is taken from the packet mark. */
  readonly zoneMark?: boolean;
  readonly timeout?: string;
  /** Event names in `ct_event_tbl` order. */
  readonly ctevents?: readonly string[];
  readonly expevents?: readonly string[];
}

function parseEvents(o: OptionOccurrence, table: readonly (readonly [string, number])[]): string[] {
  let bits = 0;
  for (const e of argOf(o).split(',')) {
    const hit = table.find(([n]) => n === e);
    if (!hit) badValue(o, `CT: unknown event type "${e}"`);
    bits |= hit[1];
  }
  return formatBits(bits, table).split(',');
}

/** `-j CT`. */
export const CT: TargetExtension<CtTargetOptions> = {
  kind: 'target',
  name: 'CT',
  family: 'both',
  terminal: false,
  options: [
    { name: 'notrack', arg: false },
    { name: 'helper', arg: true },
    { name: 'timeout', arg: true },
    { name: 'ctevents', arg: true },
    { name: 'expevents', arg: true },
    { name: 'zone-orig', arg: true },
    { name: 'zone-reply', arg: true },
    { name: 'zone', arg: true },
  ],
  placement: { tables: ['raw'] },
  parse(occurrences) {
    let notrack = false;
    let helper: string | undefined;
    let timeout: string | undefined;
    let ctevents: string[] | undefined;
    let expevents: string[] | undefined;
    let zone = 0;
    let zoneMark = false;
    let dirOrig = false;
    let dirReply = false;
    for (const o of occurrences) {
      switch (o.name) {
        case 'notrack': notrack = true; break;
        case 'helper': helper = argOf(o).slice(0, 15); break; // char helper[16]
        case 'timeout': timeout = argOf(o).slice(0, 31); break; // char timeout[32]
        case 'ctevents': ctevents = parseEvents(o, CT_EVENTS); break;
        case 'expevents': expevents = parseEvents(o, EXP_EVENTS); break;
        case 'zone': case 'zone-orig': case 'zone-reply': {
          // ct_parse_zone_id: the direction flags accumulate; the id is the last one given.
          if (o.name === 'zone-orig') dirOrig = true;
          if (o.name === 'zone-reply') dirReply = true;
          const text = argOf(o);
          zone = 0;
          if (text.toLowerCase() === 'mark') zoneMark = true;
          else {
            const n = strtoul(text, 0, 65535);
            if (n === null) badValue(o, `CT: cannot parse "${text}" as a zone ID (0-65535 or "mark")`);
            zone = n;
          }
          break;
        }
        default:
          unknownOption('CT', o);
      }
    }
    const r: { -readonly [K in keyof CtTargetOptions]: CtTargetOptions[K] } = { notrack };
    if (helper !== undefined && helper !== '') r.helper = helper;
    if (timeout !== undefined && timeout !== '') r.timeout = timeout;
    if (ctevents && ctevents[0] !== '') r.ctevents = ctevents;
    if (expevents && expevents[0] !== '') r.expevents = expevents;
    if (zoneMark || zone !== 0) {
      if (zoneMark) r.zoneMark = true;
      else r.zone = zone;
      if (dirOrig && !dirReply) r.zoneDirection = 'orig';
      if (dirReply && !dirOrig) r.zoneDirection = 'reply';
    }
    return r;
  },
  check(o, ctx) {
    const out: Diagnostic[] = [];
    if (o.helper !== undefined) out.push(...checkHelper(o.helper, ctx));
    if (o.timeout !== undefined) {
      // xt_ct_set_timeout: a cttimeout policy object (nfct add timeout NAME …) of the machine.
      out.push({ ...diagnostic('BAD_VALUE', `CT --timeout ${o.timeout}: the load fails (No such file or directory) unless the machine has that timeout policy (nfct add timeout ${o.timeout} …)`, undefined, o.timeout), severity: 'warning' });
    }
    return out;
  },
  save(o) {
    const out: string[] = [];
    if (o.notrack) out.push('--notrack');
    if (o.helper !== undefined) out.push(`--helper ${o.helper}`);
    if (o.timeout !== undefined) out.push(`--timeout ${o.timeout}`);
    if (o.ctevents) out.push(`--ctevents ${o.ctevents.join(',')}`);
    if (o.expevents) out.push(`--expevents ${o.expevents.join(',')}`);
    if (o.zoneMark || o.zone !== undefined) {
      const dir = o.zoneDirection === 'orig' ? '-orig' : o.zoneDirection === 'reply' ? '-reply' : '';
      out.push(`--zone${dir} ${o.zoneMark ? 'mark' : o.zone}`);
    }
    return out.join(' ');
  },
};
