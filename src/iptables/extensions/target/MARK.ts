/**
 * `-j MARK` (`libxt_MARK.c` revision 2, kernel `xt_mark.c` `mark_tg`): sets skb->mark as
 * `mark = (mark & ~mask) ^ value`. Every form is stored that way and iptables-save prints
 * `--set-xmark 0xV/0xM`: `--set-mark v[/m]` is value v, mask `v | m` (m defaults to
 * 0xffffffff); `--and-mark v` is 0/~v; `--or-mark v` is v/v; `--xor-mark v` is v/0.
 *
 * @module
 */
import type { MarkOptions } from '../target-options.js';
import type { ExtensionContext, OptionDef, OptionOccurrence, TargetExtension } from '../types.js';
import { conflict, hex, missing, parseMarkMask, parseUint32, unknownOption } from '../values.js';

/** The mark operations MARK and CONNMARK share (`--set-xmark` … `--xor-mark`). */
export const MARK_OPERATIONS: readonly OptionDef[] = [
  { name: 'set-xmark', arg: true },
  { name: 'set-mark', arg: true },
  { name: 'and-mark', arg: true },
  { name: 'or-mark', arg: true },
  { name: 'xor-mark', arg: true },
];

/** Turns one MARK/CONNMARK set operation into the kernel's value/mask pair. */
export function markOperation(o: OptionOccurrence, ext: string): { value: number; mask: number } {
  switch (o.name) {
    case 'set-xmark':
      return parseMarkMask(o, ext);
    case 'set-mark': {
      const { value, mask } = parseMarkMask(o, ext);
      return { value, mask: (value | mask) >>> 0 };
    }
    case 'and-mark':
      return { value: 0, mask: ~parseUint32(o, ext) >>> 0 };
    case 'or-mark': {
      const v = parseUint32(o, ext);
      return { value: v, mask: v };
    }
    case 'xor-mark':
      return { value: parseUint32(o, ext), mask: 0 };
    default:
      return unknownOption(ext, o);
  }
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): MarkOptions {
  let r: MarkOptions | undefined;
  let first: OptionOccurrence | undefined;
  for (const o of occurrences) {
    if (first) conflict(o, first.written);
    first = o;
    r = markOperation(o, 'MARK');
  }
  if (!r) missing(ctx, 'MARK', 'one of --set-xmark, --set-mark, --and-mark, --or-mark or --xor-mark is required');
  return r;
}

/** `-j MARK`. */
export const MARK: TargetExtension<MarkOptions> = {
  kind: 'target',
  name: 'MARK',
  family: 'both',
  terminal: false,
  options: MARK_OPERATIONS,
  parse,
  save(o) {
    return `--set-xmark ${hex(o.value)}/${hex(o.mask)}`;
  },
};
