/**
 * `-m srh` (`libip6t_srh.c`, kernel `ip6t_srh.c`): fields of an IPv6 segment routing header
 * (routing type 4). ip6tables only. `--srh-next-hdr N`; `--srh-hdr-len-eq|gt|lt N`,
 * `--srh-segs-left-eq|gt|lt N`, `--srh-last-entry-eq|gt|lt N` (the three comparisons of a field
 * share one value, so the last one given sets it for all, as iptables 1.8.9 prints it); `--srh-tag
 * N`; `--srh-psid|nsid|lsid ADDR[/MASK]` (previous, next, last segment). Each can be negated.
 *
 * The engine's packets carry no routing header, and the kernel's match fails on a packet without
 * one whatever the negations: on them it never matches.
 *
 * @module
 */
import type { Family } from '../../../model/types.js';
import { formatAddress, maskLength } from '../../../model/address.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { parseHostMask, parseUint32, unknownOption } from '../values.js';

type Cmp = 'eq' | 'gt' | 'lt';
const CMPS: readonly Cmp[] = ['eq', 'gt', 'lt'];
const FIELDS = ['hdr-len', 'segs-left', 'last-entry'] as const;
const SIDS = ['psid', 'nsid', 'lsid'] as const;

/** A compared field: its one value, and which comparisons are on (with their `!`). */
interface Compared {
  readonly value: number;
  readonly on: Readonly<Partial<Record<Cmp, { readonly negated: boolean }>>>;
}

/** Options of `-m srh`. */
export interface SrhOptions {
  readonly nextHdr?: { readonly negated: boolean; readonly value: number };
  readonly fields: Readonly<Partial<Record<(typeof FIELDS)[number], Compared>>>;
  readonly tag?: { readonly negated: boolean; readonly value: number };
  readonly sids: Readonly<Partial<Record<(typeof SIDS)[number], { readonly negated: boolean; readonly addr: number[]; readonly mask: number[] }>>>;
}

const FAMILY: Family = 6;

function parse(occurrences: readonly OptionOccurrence[]): SrhOptions {
  let nextHdr: SrhOptions['nextHdr'];
  let tag: SrhOptions['tag'];
  const fields: { [K in (typeof FIELDS)[number]]?: { value: number; on: Partial<Record<Cmp, { negated: boolean }>> } } = {};
  const sids: { -readonly [K in keyof SrhOptions['sids']]: SrhOptions['sids'][K] } = {};
  for (const o of occurrences) {
    const name = o.name.replace(/^srh-/, '');
    if (name === 'next-hdr') nextHdr = { negated: o.negated, value: parseUint32(o, 'srh', 0, 255) };
    else if (name === 'tag') tag = { negated: o.negated, value: parseUint32(o, 'srh', 0, 65535) };
    else if ((SIDS as readonly string[]).includes(name)) {
      const { addr, mask } = parseHostMask(o, 'srh', FAMILY);
      sids[name as (typeof SIDS)[number]] = { negated: o.negated, addr, mask };
    } else {
      const m = /^(hdr-len|segs-left|last-entry)-(eq|gt|lt)$/.exec(name);
      if (!m) unknownOption('srh', o);
      const f = m[1] as (typeof FIELDS)[number];
      const value = parseUint32(o, 'srh', 0, 255);
      const prev = fields[f];
      fields[f] = { value, on: { ...(prev?.on ?? {}), [m[2] as Cmp]: { negated: o.negated } } };
    }
  }
  return { ...(nextHdr ? { nextHdr } : {}), fields, ...(tag ? { tag } : {}), sids };
}

function save(o: SrhOptions): string {
  const out: string[] = [];
  const bang = (n: boolean): string => (n ? '! ' : '');
  if (o.nextHdr) out.push(`${bang(o.nextHdr.negated)}--srh-next-hdr ${o.nextHdr.value}`);
  for (const f of FIELDS) {
    const c = o.fields[f];
    if (!c) continue;
    for (const k of CMPS) {
      const on = c.on[k];
      if (on) out.push(`${bang(on.negated)}--srh-${f}-${k} ${c.value}`);
    }
  }
  if (o.tag) out.push(`${bang(o.tag.negated)}--srh-tag ${o.tag.value}`);
  for (const s of SIDS) {
    const v = o.sids[s];
    if (v) out.push(`${bang(v.negated)}--srh-${s} ${formatAddress(v.addr, FAMILY)}/${Math.max(0, maskLength(v.mask))}`);
  }
  return out.join(' ');
}

/** `-m srh` (IPv6). */
export const srh: MatchExtension<SrhOptions> = {
  kind: 'match',
  name: 'srh',
  family: 6,
  options: [
    { name: 'srh-next-hdr', arg: true, negatable: true },
    ...FIELDS.flatMap((f) => CMPS.map((k) => ({ name: `srh-${f}-${k}`, arg: true, negatable: true }) as const)),
    { name: 'srh-tag', arg: true, negatable: true },
    ...SIDS.map((s) => ({ name: `srh-${s}`, arg: true, negatable: true }) as const),
  ],
  parse,
  save,
  // ip6t_srh: no segment routing header, no match (negations apply to its fields only).
  lower: () => () => false,
};
