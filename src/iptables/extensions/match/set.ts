/**
 * `-m set` (`libxt_set.c` revision 4, kernel `xt_set.c` `set_match_v4`): looks the packet up in
 * an ipset. `--match-set NAME FLAGS` names the set and, per dimension of the set, whether the
 * packet's source or destination is used (`src`, `dst,dst`, at most 6). iptables-save prints
 * `[!] --match-set NAME FLAGS [--return-nomatch] [! --update-counters] [! --update-subcounters]
 * [[!] --packets-eq N | --packets-lt N | --packets-gt N] [[!] --bytes-… N]`.
 *
 * The set's contents are the namespace's (`ipsets` of `Netns`); element counters are not
 * modelled, so a `--packets-*`/`--bytes-*` condition is assumed to hold.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { PacketView } from '../../../model/packet.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence, RuntimeIpset } from '../types.js';
import { argOf, argSpan, badValue, missing, noInvert, unknownOption } from '../values.js';

/** `IPSET_DIM_MAX`. */
const IPSET_DIM_MAX = 6;
/** `IPSET_MAXNAMELEN` - 1. */
const MAX_NAME = 31;

/** A counter condition (`IPSET_COUNTER_*`). */
export interface SetCounter {
  readonly op: 'eq' | 'lt' | 'gt';
  readonly negated: boolean;
  readonly value: bigint;
}

/** Options of `-m set`. */
export interface SetMatchOptions {
  readonly name: string;
  readonly negated: boolean;
  /** One entry per dimension: `src` or `dst`. */
  readonly flags: readonly ('src' | 'dst')[];
  readonly returnNomatch: boolean;
  readonly noUpdateCounters: boolean;
  readonly noUpdateSubcounters: boolean;
  readonly packets: SetCounter | null;
  readonly bytes: SetCounter | null;
}

/** Parses `src,dst,…` as `parse_dirs` does. */
export function parseSetFlags(o: OptionOccurrence, text: string): ('src' | 'dst')[] {
  const parts = text.split(',');
  if (parts.length > IPSET_DIM_MAX) badValue(o, `Can't be more src/dst options than ${IPSET_DIM_MAX}.`);
  return parts.map((p) => (p === 'src' || p === 'dst' ? p : badValue(o, "You must spefify (the comma separated list of) 'src' or 'dst'.")));
}

/** Parses a set name (at most 31 characters). */
export function parseSetName(o: OptionOccurrence, name: string): string {
  if (name.length > MAX_NAME) fail('BAD_VALUE', `setname \`${name}' too long, max ${MAX_NAME} characters.`, argSpan(o), name);
  return name;
}

function parseCounter(o: OptionOccurrence): bigint {
  const t = argOf(o);
  if (!/^\d+$/.test(t) || BigInt(t) > 0xffffffffffffffffn) badValue(o, `Cannot parse ${t} as a counter value`);
  return BigInt(t);
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): SetMatchOptions {
  let set: { name: string; negated: boolean; flags: ('src' | 'dst')[] } | undefined;
  let first: OptionOccurrence | undefined;
  let returnNomatch = false;
  let noUpdateCounters = false;
  let noUpdateSubcounters = false;
  let packets: SetCounter | null = null;
  let bytes: SetCounter | null = null;
  for (const o of occurrences) {
    switch (o.name) {
      case 'match-set': {
        if (first) fail('DUPLICATE_OPTION', '--match-set can be specified only once', o.span, o.written);
        first = o;
        const flags = o.extra?.[0];
        if (!flags) fail('MISSING_ARGUMENT', '--match-set requires two args.', o.span, o.written);
        set = { name: parseSetName(o, argOf(o)), negated: o.negated, flags: parseSetFlags({ ...o, argSpan: flags.span, arg: flags.text }, flags.text) };
        break;
      }
      case 'return-nomatch':
        noInvert(o);
        returnNomatch = true;
        break;
      case 'update-counters':
        noUpdateCounters = o.negated;
        break;
      case 'update-subcounters':
        noUpdateSubcounters = o.negated;
        break;
      case 'packets-eq':
      case 'packets-lt':
      case 'packets-gt':
      case 'bytes-eq':
      case 'bytes-lt':
      case 'bytes-gt': {
        const [what, op] = o.name.split('-') as ['packets' | 'bytes', 'eq' | 'lt' | 'gt'];
        if (op !== 'eq') noInvert(o);
        if ((what === 'packets' ? packets : bytes) !== null) {
          fail('CONFLICTING_OPTIONS', `only one of the --${what}-[eq|lt|gt] is allowed`, o.span, o.written);
        }
        const c: SetCounter = { op, negated: o.negated, value: parseCounter(o) };
        if (what === 'packets') packets = c;
        else bytes = c;
        break;
      }
      default:
        unknownOption('set', o);
    }
  }
  if (!set) missing(ctx, 'set', 'You must specify `--match-set\' with proper arguments');
  return { ...set, returnNomatch, noUpdateCounters, noUpdateSubcounters, packets, bytes };
}

function saveCounter(what: string, c: SetCounter | null): string {
  if (c === null) return '';
  return ` ${c.negated ? '! ' : ''}--${what}-${c.op} ${c.value}`;
}

/** `set_save_v4`. */
function save(o: SetMatchOptions): string {
  return `${o.negated ? '! ' : ''}--match-set ${o.name} ${o.flags.join(',')}` +
    (o.returnNomatch ? ' --return-nomatch' : '') +
    (o.noUpdateCounters ? ' ! --update-counters' : '') +
    (o.noUpdateSubcounters ? ' ! --update-subcounters' : '') +
    saveCounter('packets', o.packets) +
    saveCounter('bytes', o.bytes);
}

/**
 * `set_match_v4` → `match_set`: `ip_set_test` with the packet's source or destination per
 * dimension; a `nomatch` member counts as a match with `--return-nomatch`; `!` inverts. A set
 * with more dimensions than the flags give never matches (`ip_set_test`: `opt->dim < dimension`).
 */
function lowerSet(o: SetMatchOptions, set: RuntimeIpset | undefined): (p: PacketView) => boolean {
  if (set === undefined) {
    // The kernel refuses such a rule at load ("Set NAME doesn't exist"); Netns checks first.
    return () => false;
  }
  const inv = o.negated;
  const dims = o.flags.length;
  const addrSrc = o.flags[0] === 'src';
  const portSrc = o.flags[1] === 'src';
  const nomatch = o.returnNomatch;
  return (p) => {
    if (dims < set.dimension || p.family !== set.family) return inv;
    const r = set.test(addrSrc ? p.src : p.dst, p.proto, portSrc ? p.sport : p.dport);
    const hit = r === 'match' || (r === 'nomatch' && nomatch);
    return hit !== inv;
  };
}

/** `-m set`. */
export const set: MatchExtension<SetMatchOptions> = {
  kind: 'match',
  name: 'set',
  family: 'both',
  options: [
    { name: 'match-set', aliases: ['set'], arg: true, negatable: true, extraArgs: 1 },
    { name: 'return-nomatch', arg: false },
    { name: 'update-counters', arg: false, negatable: true },
    { name: 'update-subcounters', arg: false, negatable: true },
    { name: 'packets-eq', arg: true, negatable: true },
    { name: 'packets-lt', arg: true, negatable: true },
    { name: 'packets-gt', arg: true, negatable: true },
    { name: 'bytes-eq', arg: true, negatable: true },
    { name: 'bytes-lt', arg: true, negatable: true },
    { name: 'bytes-gt', arg: true, negatable: true },
  ],
  parse,
  save,
  lower(o, _family, env) {
    return lowerSet(o, env?.ipsets?.get(o.name));
  },
  assumption(o) {
    return o.packets !== null || o.bytes !== null ? 'set element counters are not modelled: the --packets/--bytes condition is taken as true' : undefined;
  },
};
