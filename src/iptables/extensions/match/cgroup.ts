/**
 * `-m cgroup` (`libxt_cgroup.c` revisions 0-2, kernel `xt_cgroup.c`): the owning socket's
 * cgroup v2 path (`--path`) or net_cls class id (`--cgroup`). The engine's sockets belong to the
 * root cgroup ("/") and have class id 0 — an assumption the trace shows. Only OUTPUT, POSTROUTING
 * and INPUT see a socket; arriving packets have none and do not match. The kernel refuses a
 * `--path` that names no cgroup of the machine loading the rules; the simulator cannot know the
 * machine's cgroups and accepts every path.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import type { MatchExtension } from '../types.js';
import { argOf, missing, parseUint32, saveString, unknownOption } from '../values.js';

/** Options of `-m cgroup`. */
export interface CgroupOptions {
  readonly path?: { readonly negated: boolean; readonly value: string };
  readonly classid?: { readonly negated: boolean; readonly value: number };
}

/** `-m cgroup`. */
export const cgroup: MatchExtension<CgroupOptions> = {
  kind: 'match',
  name: 'cgroup',
  family: 'both',
  options: [
    { name: 'path', arg: true, negatable: true },
    { name: 'cgroup', arg: true, negatable: true },
  ],
  // xt_cgroup.c `.hooks`: where a packet may have a local socket (enforced in user chains too).
  placement: { hooks: ['INPUT', 'OUTPUT', 'POSTROUTING'] },
  parse(occurrences, ctx) {
    const r: { -readonly [K in keyof CgroupOptions]: CgroupOptions[K] } = {};
    for (const o of occurrences) {
      if (o.name === 'path') r.path = { negated: o.negated, value: argOf(o).slice(0, 4095) };
      else if (o.name === 'cgroup') r.classid = { negated: o.negated, value: parseUint32(o, 'cgroup') };
      else unknownOption('cgroup', o);
    }
    if (!r.path && !r.classid) missing(ctx, 'cgroup', 'either --path or --cgroup must be specified');
    return r;
  },
  save(o) {
    const out: string[] = [];
    if (o.path) out.push(`${o.path.negated ? '! ' : ''}--path ${o.path.value === '' ? '""' : saveString(o.path.value)}`);
    if (o.classid) out.push(`${o.classid.negated ? '! ' : ''}--cgroup ${o.classid.value}`);
    return out.join(' ');
  },
  check(o) {
    // cgroup_mt_check_v1: a path and a class id together are refused.
    if (o.path && o.classid) return [diagnostic('CONFLICTING_OPTIONS', 'cgroup: --path and --cgroup cannot be used together', undefined, 'cgroup')];
    // cgroup_get_from_path: a path the loading machine does not have is refused (Invalid argument).
    if (o.path && o.path.value !== '/') {
      return [{ ...diagnostic('BAD_VALUE', `cgroup --path ${o.path.value}: the load fails (Invalid argument) unless that cgroup exists on the machine that loads the rules`, undefined, o.path.value), severity: 'warning' }];
    }
    return [];
  },
  lower(o) {
    const { path, classid } = o;
    return (p) => {
      if (p.socket === null) return false;
      if (path && (path.value === '/' || path.value === '') === path.negated) return false;
      if (classid && (classid.value === 0) === classid.negated) return false;
      return true;
    };
  },
  evaluates: 'assumed',
  assumption() {
    return 'cgroups are not modelled: every socket is taken to be in the root cgroup "/" with class id 0';
  },
};
