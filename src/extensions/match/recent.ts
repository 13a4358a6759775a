/**
 * `-m recent` (`libxt_recent.c` revision 1, kernel `xt_recent.c`): named lists of recently seen
 * addresses (`--set`, `--rcheck`, `--update`, `--remove`). iptables 1.8 saves revision 1, which
 * always prints `--mask` (255.255.255.255 by default) and the side (`--rsource` by default).
 *
 * Not evaluated faithfully: the lists are state shared between rules and across packets, which
 * the simulator does not keep. lower() assumes every list is empty: `--set` matches (and would
 * add the address), `--rcheck`/`--update`/`--remove` do not; `!` inverts as usual.
 *
 * @module
 */
import { fail } from '../../errors.js';
import type { Family } from '../../model/types.js';
import { formatAddress, parseAddress } from '../../syntax/address.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, conflict, missing, parseUint32, unknownOption } from '../values.js';

/** `XT_RECENT_NAME_LEN` - 1. */
const MAX_NAME = 199;

/** Options of `-m recent`. */
export interface RecentOptions {
  readonly command: 'set' | 'rcheck' | 'update' | 'remove';
  readonly negated: boolean;
  /** 0 when not given. */
  readonly seconds: number;
  readonly reap: boolean;
  /** 0 when not given. */
  readonly hitcount: number;
  readonly rttl: boolean;
  readonly name: string;
  readonly side: 'source' | 'dest';
  readonly mask: readonly number[];
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): RecentOptions {
  let command: RecentOptions['command'] | undefined;
  let cmdOpt: OptionOccurrence | undefined;
  let negated = false;
  let seconds = 0;
  let reap = false;
  let hitcount = 0;
  let rttl = false;
  let name = 'DEFAULT';
  let side: RecentOptions['side'] = 'source';
  let mask: readonly number[] = ctx.family === 4 ? [0xffffffff] : [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff];
  for (const o of occurrences) {
    switch (o.name) {
      case 'set': case 'rcheck': case 'update': case 'remove':
        if (cmdOpt) conflict(o, cmdOpt.written);
        cmdOpt = o;
        command = o.name;
        if (o.negated) negated = true;
        break;
      case 'seconds': seconds = parseUint32(o, 'recent', 1); break;
      case 'reap': reap = true; break;
      case 'hitcount': hitcount = parseUint32(o, 'recent'); break;
      case 'rttl': rttl = true; break;
      case 'name': {
        const n = argOf(o);
        if (n.length === 0) badValue(o, `recent: bad list name "${n}"`);
        name = n.slice(0, MAX_NAME);
        break;
      }
      case 'rsource': side = 'source'; break;
      case 'rdest': side = 'dest'; break;
      case 'mask': {
        const m = parseAddress(argOf(o), ctx.family);
        if (!m) badValue(o, `recent: bad mask "${o.arg}"`);
        mask = m;
        break;
      }
      default:
        unknownOption('recent', o);
    }
  }
  if (!command) missing(ctx, 'recent', 'you must specify one of --set, --rcheck, --update or --remove');
  if (reap && seconds === 0) fail('MISSING_OPTION', 'recent: --reap needs --seconds', ctx.span, 'recent');
  if (rttl && (command === 'set' || command === 'remove')) conflict(occurrences.find((o) => o.name === 'rttl')!, cmdOpt!.written);
  return { command, negated, seconds, reap, hitcount, rttl, name, side, mask };
}

function save(o: RecentOptions, family: Family): string {
  const out: string[] = [];
  if (o.negated) out.push('!');
  out.push(`--${o.command}`);
  if (o.seconds) out.push(`--seconds ${o.seconds}`);
  if (o.reap) out.push('--reap');
  if (o.hitcount) out.push(`--hitcount ${o.hitcount}`);
  if (o.rttl) out.push('--rttl');
  out.push(`--name ${o.name}`);
  out.push(`--mask ${formatAddress(o.mask, family)}`);
  out.push(o.side === 'source' ? '--rsource' : '--rdest');
  return out.join(' ');
}

/** `-m recent`. */
export const recent: MatchExtension<RecentOptions> = {
  kind: 'match',
  name: 'recent',
  family: 'both',
  options: [
    { name: 'set', arg: false, negatable: true },
    { name: 'rcheck', arg: false, negatable: true },
    { name: 'update', arg: false, negatable: true },
    { name: 'remove', arg: false, negatable: true },
    { name: 'seconds', arg: true },
    { name: 'reap', arg: false },
    { name: 'hitcount', arg: true },
    { name: 'rttl', arg: false },
    { name: 'name', arg: true },
    { name: 'rsource', arg: false },
    { name: 'rdest', arg: false },
    { name: 'mask', arg: true },
  ],
  parse,
  save,
  lower(o) {
    const result = (o.command === 'set') !== o.negated;
    return () => result;
  },
  evaluates: 'assumed',
  assumption(o) {
    return `recent lists are not kept: list "${o.name}" is taken to be empty, so --${o.command} ${o.command === 'set' ? 'matches' : 'does not match'}`;
  },
};
