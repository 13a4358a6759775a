/**
 * `-j CLASSIFY` (`libxt_CLASSIFY.c`, kernel `xt_CLASSIFY.c`): sets `skb->priority` to a traffic
 * control class `MAJOR:MINOR` (hex). Any table; the kernel allows it from OUTPUT, FORWARD and
 * POSTROUTING only. iptables-save prints `%.4x:%.4x`. Traffic control is not
 * modelled: the target changes nothing the simulator decides by and continues.
 *
 * @module
 */
import type { TargetExtension } from '../types.js';
import { argOf, badValue, requireOption, unknownOption } from '../values.js';

/** Options of `-j CLASSIFY`. */
export interface ClassifyOptions {
  readonly major: number;
  readonly minor: number;
}

/** C's `sscanf("%x")` on a prefix: hex digits with an optional `0x`, or null. */
function scanHex(text: string): { value: number; rest: string } | null {
  const m = /^\s*[+]?(?:0[xX])?([0-9a-fA-F]+)/.exec(text);
  if (!m) return null;
  return { value: parseInt(m[1]!.slice(-8), 16) >>> 0, rest: text.slice(m[0].length) };
}

/** `-j CLASSIFY`. */
export const CLASSIFY: TargetExtension<ClassifyOptions> = {
  kind: 'target',
  name: 'CLASSIFY',
  family: 'both',
  terminal: false,
  options: [{ name: 'set-class', arg: true }],
  // xt_CLASSIFY.c: any table (the mangle-only rule is long gone), these hooks only.
  placement: { hooks: ['OUTPUT', 'FORWARD', 'POSTROUTING'] },
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'CLASSIFY', 'set-class');
    let r: ClassifyOptions = { major: 0, minor: 0 };
    for (const o of occurrences) {
      if (o.name !== 'set-class') unknownOption('CLASSIFY', o);
      const text = argOf(o);
      const a = scanHex(text);
      const b = a && a.rest[0] === ':' ? scanHex(a.rest.slice(1)) : null;
      if (!a || !b) badValue(o, `CLASSIFY: bad class value "${text}"`);
      r = { major: a.value & 0xffff, minor: b.value & 0xffff };
    }
    return r;
  },
  save(o) {
    return `--set-class ${o.major.toString(16).padStart(4, '0')}:${o.minor.toString(16).padStart(4, '0')}`;
  },
};
