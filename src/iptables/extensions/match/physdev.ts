/**
 * `-m physdev` (`libxt_physdev.c`, kernel `xt_physdev.c`): the bridge ports a bridged packet
 * entered (`--physdev-in`) and leaves by (`--physdev-out`), whether it entered or leaves by a
 * bridge port (`--physdev-is-in`, `--physdev-is-out`) and whether it is bridged at all
 * (`--physdev-is-bridged`). iptables-save prints is-in, in, is-out, out, is-bridged. A packet
 * the engine routes has crossed no bridge port, so only the negated tests hold for it.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import { checkentryHooks } from '../placement.js';
import type { MatchExtension } from '../types.js';
import { argOf, missing, unknownOption } from '../values.js';

interface Port {
  readonly negated: boolean;
  readonly name: string;
}

/** Options of `-m physdev`. */
export interface PhysdevOptions {
  readonly in?: Port;
  readonly out?: Port;
  readonly isIn?: boolean;
  readonly isOut?: boolean;
  readonly isBridged?: boolean;
}

/** An interface name as iptables reads it: `eth+` matches every name starting with `eth`. */
function interfaceMatcher(name: string): (iface: string) => boolean {
  if (name.endsWith('+')) {
    const prefix = name.slice(0, -1);
    return (i) => i.startsWith(prefix);
  }
  return (i) => i === name;
}

/** `-m physdev`. */
export const physdev: MatchExtension<PhysdevOptions> = {
  kind: 'match',
  name: 'physdev',
  family: 'both',
  options: [
    { name: 'physdev-in', arg: true, negatable: true },
    { name: 'physdev-out', arg: true, negatable: true },
    { name: 'physdev-is-in', arg: false, negatable: true },
    { name: 'physdev-is-out', arg: false, negatable: true },
    { name: 'physdev-is-bridged', arg: false, negatable: true },
  ],
  parse(occurrences, ctx) {
    const r: { -readonly [K in keyof PhysdevOptions]: PhysdevOptions[K] } = {};
    for (const o of occurrences) {
      switch (o.name) {
        case 'physdev-in': r.in = { negated: o.negated, name: argOf(o) }; break;
        case 'physdev-out': r.out = { negated: o.negated, name: argOf(o) }; break;
        // The value is "not negated": true means "is", false means "! is".
        case 'physdev-is-in': r.isIn = !o.negated; break;
        case 'physdev-is-out': r.isOut = !o.negated; break;
        case 'physdev-is-bridged': r.isBridged = !o.negated; break;
        default: unknownOption('physdev', o);
      }
    }
    if (Object.keys(r).length === 0) missing(ctx, 'physdev', 'PHYSDEV: no physdev option specified');
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.isIn !== undefined) out.push(`${o.isIn ? '' : '! '}--physdev-is-in`);
    if (o.in) out.push(`${o.in.negated ? '! ' : ''}--physdev-in ${o.in.name}`);
    if (o.isOut !== undefined) out.push(`${o.isOut ? '' : '! '}--physdev-is-out`);
    if (o.out) out.push(`${o.out.negated ? '! ' : ''}--physdev-out ${o.out.name}`);
    if (o.isBridged !== undefined) out.push(`${o.isBridged ? '' : '! '}--physdev-is-bridged`);
    return out.join(' ');
  },
  // physdev_mt_check: an out-port test (--physdev-out, --physdev-is-out, negated or not) on
  // traffic not required to be bridged is refused in OUTPUT, where the bridge port is not known
  // yet (a test of hook_mask: a user chain loads it under nft).
  check(o, ctx) {
    const hooks = checkentryHooks(ctx);
    if ((o.out !== undefined || o.isOut !== undefined) && o.isBridged !== true && hooks?.includes('OUTPUT')) {
      return [diagnostic('INVALID_HOOK', 'physdev: --physdev-out and --physdev-is-out only supported in the FORWARD and POSTROUTING chains with bridged traffic (the kernel refuses it in OUTPUT unless --physdev-is-bridged)', undefined, 'physdev')];
    }
    return [];
  },
  lower(o) {
    const inTest = o.in ? interfaceMatcher(o.in.name) : null;
    const outTest = o.out ? interfaceMatcher(o.out.name) : null;
    return (p) => {
      const pin = p.physIn ?? null;
      const pout = p.physOut ?? null;
      // physdev_mt: "Not a bridged IP packet or no info available yet" — only the negated
      // is-bridged / is-in / is-out tests and nothing else may hold.
      if (pin === null && pout === null) {
        if (o.isBridged === true || o.isIn === true || o.isOut === true) return false;
        if (o.in && !o.in.negated) return false;
        if (o.out && !o.out.negated) return false;
        return true;
      }
      if (o.isBridged === false) return false;
      if (o.isIn !== undefined && (pin !== null) !== o.isIn) return false;
      if (o.isOut !== undefined && (pout !== null) !== o.isOut) return false;
      if (o.in && inTest && (pin !== null && inTest(pin)) === o.in.negated) return false;
      if (o.out && outTest && (pout !== null && outTest(pout)) === o.out.negated) return false;
      return true;
    };
  },
};
