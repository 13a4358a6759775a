/**
 * `-m devgroup` (`libxt_devgroup.c`, kernel `xt_devgroup.c`): the device group of the in
 * (`--src-group`) and out (`--dst-group`) interfaces, `(group & mask) == value`. Interfaces the
 * engine knows are in group 0 (the default group). The kernel allows `--src-group` where there
 * is an in interface and `--dst-group` where there is an out interface.
 *
 * @module
 */
import type { Diagnostic } from '../../../model/errors.js';
import type { HookName } from '../../../model/types.js';
import { checkentryHooks, hookDiagnostic } from '../placement.js';
import type { MatchExtension } from '../types.js';
import { formatValMask, missing, parseValMask, unknownOption } from '../values.js';

interface Group {
  readonly negated: boolean;
  readonly value: number;
  readonly mask: number;
}

/** Options of `-m devgroup`. */
export interface DevgroupOptions {
  readonly src?: Group;
  readonly dst?: Group;
}

const IN_HOOKS: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD'];
const OUT_HOOKS: readonly HookName[] = ['FORWARD', 'OUTPUT', 'POSTROUTING'];

/** `-m devgroup`. */
export const devgroup: MatchExtension<DevgroupOptions> = {
  kind: 'match',
  name: 'devgroup',
  family: 'both',
  options: [
    { name: 'src-group', arg: true, negatable: true },
    { name: 'dst-group', arg: true, negatable: true },
  ],
  parse(occurrences, ctx) {
    const r: { src?: Group; dst?: Group } = {};
    for (const o of occurrences) {
      const { value, mask } = parseValMask(o, 'devgroup');
      if (o.name === 'src-group') r.src = { negated: o.negated, value, mask };
      else if (o.name === 'dst-group') r.dst = { negated: o.negated, value, mask };
      else unknownOption('devgroup', o);
    }
    if (!r.src && !r.dst) missing(ctx, 'devgroup', 'devgroup match: you must specify either --src-group or --dst-group');
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.src) out.push(`${o.src.negated ? '! ' : ''}--src-group ${formatValMask(o.src.value, o.src.mask)}`);
    if (o.dst) out.push(`${o.dst.negated ? '! ' : ''}--dst-group ${formatValMask(o.dst.value, o.dst.mask)}`);
    return out.join(' ');
  },
  check(o, ctx) {
    const out: Diagnostic[] = [];
    // devgroup_mt_checkentry tests hook_mask itself: a user chain loads it under nft.
    const hooks = checkentryHooks(ctx);
    if (!hooks) return out;
    if (o.src) {
      const bad = hooks.filter((h) => !IN_HOOKS.includes(h));
      if (bad.length > 0) out.push(hookDiagnostic('devgroup match --src-group', bad, IN_HOOKS, undefined, 'devgroup'));
    }
    if (o.dst) {
      const bad = hooks.filter((h) => !OUT_HOOKS.includes(h));
      if (bad.length > 0) out.push(hookDiagnostic('devgroup match --dst-group', bad, OUT_HOOKS, undefined, 'devgroup'));
    }
    return out;
  },
  lower(o) {
    const test = (g: Group | undefined, present: boolean): boolean => g === undefined || !present || (((0 & g.mask) === g.value) !== g.negated);
    const { src, dst } = o;
    return (p) => test(src, p.inIface !== null) && test(dst, p.outIface !== null);
  },
};
