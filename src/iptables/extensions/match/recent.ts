/**
 * `-m recent` (`libxt_recent.c` revision 1, kernel `xt_recent.c`): named lists of recently seen
 * addresses (`--set`, `--rcheck`, `--update`, `--remove`). iptables 1.8 saves revision 1, which
 * always prints `--mask` (255.255.255.255 by default) and the side (`--rsource` by default).
 *
 * The lists live in the namespace ({@link PacketView.recentTable}) and are shared by every rule
 * that names them, across packets and connections, with time stamps from the namespace's virtual
 * clock: `--set` adds the address (or a time stamp to it), `--rcheck` and `--update` look for it
 * (with `--seconds`, only stamps that recent; with `--hitcount`, at least that many; with
 * `--rttl`, only an entry made at the same TTL), `--update` also stamps it when found, `--remove`
 * deletes it. Each entry keeps its last 20 stamps (`ip_pkt_list_tot`). Without a namespace (a rule
 * lowered on its own) the lists start empty for every packet.
 *
 * @module
 */
import { diagnostic, fail } from '../../../model/errors.js';
import type { Family } from '../../../model/types.js';
import { formatAddress, parseAddress } from '../../../model/address.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, checkProcName, conflict, missing, parseUint32, unknownOption } from '../values.js';

/** `XT_RECENT_NAME_LEN` - 1. */
const MAX_NAME = 199;
/** `XT_RECENT_MAX_NSTAMPS`: a hitcount must stay below it. */
const MAX_NSTAMPS = 65536;

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
  // recent_mt_check: at most XT_RECENT_MAX_NSTAMPS - 1 hits, and a name /proc can hold.
  check(o) {
    const out = checkProcName(o.name, 'recent --name');
    if (o.hitcount >= MAX_NSTAMPS) out.push(diagnostic('BAD_VALUE', `recent: hitcount (${o.hitcount}) is larger than allowed maximum (${MAX_NSTAMPS - 1}) (the kernel refuses the rule: Invalid argument)`, undefined, String(o.hitcount)));
    return out;
  },
  lower(o) {
    const { command, negated, seconds, reap, hitcount, rttl, name, side, mask } = o;
    return (p) => {
      // recent_mt, step for step.
      const table = p.recentTable ? p.recentTable(name) : new Map<string, RecentEntry>();
      const from = side === 'dest' ? p.dst : p.src;
      const key = `${p.family}|${from.map((w, i) => ((w & (mask[i] ?? 0)) >>> 0)).join('.')}`;
      // "use TTL as seen before forwarding": a forwarded packet's TTL was already decremented.
      const ttl = (p.ttl ?? 64) + (p.outIface !== null && p.socket === null && p.hook !== 'OUTPUT' && p.inIface !== null ? 1 : 0);
      const now = p.now ?? 0;
      let ret = negated;
      let e = table.get(key);
      if (e !== undefined && rttl && e.ttl !== ttl) e = undefined;
      if (e === undefined) {
        if (command !== 'set') return ret;
        table.set(key, { stamps: [now], ttl });
        return !ret;
      }
      if (command === 'set') ret = !ret;
      else if (command === 'remove') {
        table.delete(key);
        return !ret;
      } else {
        const since = now - seconds;
        let hits = 0;
        for (const stamp of e.stamps) {
          if (seconds && stamp < since) continue;
          if (!hitcount || ++hits >= hitcount) {
            ret = !ret;
            break;
          }
        }
        if (reap) e.stamps = e.stamps.filter((t) => t >= since);
      }
      if (command === 'set' || (command === 'update' && ret)) {
        e.stamps.push(now);
        if (e.stamps.length > RECENT_STAMPS) e.stamps.shift();
        e.ttl = ttl;
        // The entry moves to the end of the list's LRU order.
        table.delete(key);
        table.set(key, e);
      }
      return ret;
    };
  },
};

/** `ip_pkt_list_tot`: time stamps kept per address. */
const RECENT_STAMPS = 20;

/** One address of a recent list: its time stamps (seconds, oldest first) and TTL. */
export interface RecentEntry {
  stamps: number[];
  ttl: number;
}
