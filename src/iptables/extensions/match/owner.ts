/**
 * `-m owner` (`libxt_owner.c` revision 1, kernel `xt_owner.c`): the UID/GID of the socket that
 * sent a locally generated packet. Only in OUTPUT and POSTROUTING. Names are resolved at parse
 * time (iptables-save prints numbers; `root` → `0`); ranges `a-b` (or `a:b`) print as `a-b`.
 *
 * Kernel semantics kept by lower(): a packet without a socket matches only when every given
 * test is negated (`(match ^ invert) == 0`), so `! --uid-owner 1337` is true for it.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { Negatable } from '../../../model/types.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { accountsOf, argOf, missing, strtoulPrefix, UINT32_MAX, unknownOption } from '../values.js';

/** An inclusive id range. */
export interface IdRange {
  readonly min: number;
  readonly max: number;
}

/** Options of `-m owner`. */
export interface OwnerOptions {
  readonly uid?: Negatable<IdRange>;
  readonly gid?: Negatable<IdRange>;
  /** `--suppl-groups`: `--gid-owner` also tests the supplementary groups. */
  readonly supplGroups?: boolean;
  readonly socketExists?: Negatable<true>;
}

/** `xt_owner.h` flag bits, for lower(). */
const XT_OWNER_UID = 1;
const XT_OWNER_GID = 2;
const XT_OWNER_SOCKET = 4;
const XT_OWNER_SUPPL_GROUPS = 8;

/** `owner_parse_range`: `n`, `n-m` or `n:m`, each 0..2^32-2 (-1 is reserved). */
function parseIdRange(o: OptionOccurrence, table: ReadonlyMap<string, number>, what: string): IdRange {
  const text = argOf(o);
  const named = table.get(text);
  if (named !== undefined) return { min: named, max: named };
  const bad = (): never =>
    fail('BAD_VALUE', `owner: bad value "${text}" for option "${o.written}" (no such ${what}, and not a number or range)`, o.argSpan ?? o.span, text);
  const a = strtoulPrefix(text);
  if (!a || a.value > UINT32_MAX - 1) bad();
  let max = a!.value;
  let end = a!.end;
  if (text[end] === '-' || text[end] === ':') {
    const b = strtoulPrefix(text.slice(end + 1));
    if (!b || b.value > UINT32_MAX - 1) bad();
    max = b!.value;
    end = end + 1 + b!.end;
  }
  if (end !== text.length) bad();
  return { min: a!.value, max };
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): OwnerOptions {
  const accounts = accountsOf(ctx);
  const r: { -readonly [K in keyof OwnerOptions]: OwnerOptions[K] } = {};
  for (const o of occurrences) {
    switch (o.name) {
      case 'uid-owner':
        r.uid = { negated: o.negated, value: parseIdRange(o, accounts.users, 'user') };
        break;
      case 'gid-owner':
        r.gid = { negated: o.negated, value: parseIdRange(o, accounts.groups, 'group') };
        break;
      case 'socket-exists':
        r.socketExists = { negated: o.negated, value: true };
        break;
      case 'suppl-groups':
        if (o.negated) fail('BAD_NEGATION', 'owner: option "--suppl-groups" cannot be inverted', o.span, '!');
        if (!r.gid) fail('BAD_VALUE', 'owner: "--suppl-groups" needs "--gid-owner" before it', o.span, o.written);
        r.supplGroups = true;
        break;
      default:
        unknownOption('owner', o);
    }
  }
  if (!r.uid && !r.gid && !r.socketExists) {
    missing(ctx, 'owner', 'at least one of --uid-owner, --gid-owner or --socket-exists is required');
  }
  return r;
}

const fmt = (r: IdRange): string => (r.min === r.max ? String(r.min) : `${r.min}-${r.max}`);

/** `-m owner`. */
export const owner: MatchExtension<OwnerOptions> = {
  kind: 'match',
  name: 'owner',
  family: 'both',
  options: [
    { name: 'uid-owner', arg: true, negatable: true },
    { name: 'gid-owner', arg: true, negatable: true },
    { name: 'socket-exists', arg: false, negatable: true },
    { name: 'suppl-groups', arg: false, negatable: true },
  ],
  placement: { hooks: ['OUTPUT', 'POSTROUTING'] },
  parse,
  // owner_mt_save: --socket-exists, --uid-owner, --gid-owner, --suppl-groups, numbers only.
  save(o) {
    const out: string[] = [];
    if (o.socketExists) out.push(`${o.socketExists.negated ? '! ' : ''}--socket-exists`);
    if (o.uid) out.push(`${o.uid.negated ? '! ' : ''}--uid-owner ${fmt(o.uid.value)}`);
    if (o.gid) out.push(`${o.gid.negated ? '! ' : ''}--gid-owner ${fmt(o.gid.value)}`);
    if (o.supplGroups) out.push('--suppl-groups');
    return out.join(' ');
  },
  lower(o) {
    let match = 0;
    let invert = 0;
    if (o.uid) {
      match |= XT_OWNER_UID;
      if (o.uid.negated) invert |= XT_OWNER_UID;
    }
    if (o.gid) {
      match |= XT_OWNER_GID;
      if (o.gid.negated) invert |= XT_OWNER_GID;
    }
    if (o.socketExists) {
      match |= XT_OWNER_SOCKET;
      if (o.socketExists.negated) invert |= XT_OWNER_SOCKET;
    }
    if (o.supplGroups) match |= XT_OWNER_SUPPL_GROUPS;
    const noSocket = (match ^ invert) === 0;
    const socketButNegated = (match & invert & XT_OWNER_SOCKET) !== 0;
    const uidMin = o.uid?.value.min ?? 0;
    const uidMax = o.uid?.value.max ?? 0;
    const uidInv = o.uid?.negated ?? false;
    const gidMin = o.gid?.value.min ?? 0;
    const gidMax = o.gid?.value.max ?? 0;
    const gidInv = o.gid?.negated ?? false;
    const hasUid = o.uid !== undefined;
    const hasGid = o.gid !== undefined;
    const suppl = o.supplGroups === true;
    // owner_mt: each test returns false when (in range) ^ !invert.
    return (p) => {
      const s = p.socket;
      if (s === null) return noSocket;
      if (socketButNegated) return false;
      if (hasUid && (s.uid >= uidMin && s.uid <= uidMax) === uidInv) return false;
      if (hasGid) {
        let m = s.gid >= gidMin && s.gid <= gidMax;
        if (!m && suppl) {
          for (let i = 0; i < s.groups.length; i++) {
            const g = s.groups[i]!;
            if (g >= gidMin && g <= gidMax) {
              m = true;
              break;
            }
          }
        }
        if (m === gidInv) return false;
      }
      return true;
    };
  },
};
