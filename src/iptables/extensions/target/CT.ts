/**
 * `-j CT` (`libxt_CT.c` revision 2, kernel `xt_CT.c`): conntrack settings for a connection's
 * first packet: `--notrack`, `--helper`, `--timeout`, `--ctevents`, `--expevents`, `--zone`
 * (`--zone-orig`, `--zone-reply`; a number 0-65535 or `mark`). raw table only. iptables-save
 * prints them in that order and omits zone 0.
 *
 * @module
 */
import type { CtOptions } from '../target-options.js';
import type { OptionOccurrence, TargetExtension } from '../types.js';
import { argOf, badValue, formatBits, strtoul, unknownOption } from '../values.js';

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
