/**
 * `-j SET` (`libxt_SET.c` revision 3, kernel `xt_set.c` `set_target_v3`): adds the packet's
 * source or destination to an ipset (`--add-set NAME FLAGS [--exist] [--timeout N]`), deletes it
 * (`--del-set NAME FLAGS`), or both; the walk continues. `--map-set` (skbinfo sets) is not modelled.
 *
 * @module
 */
import { fail } from '../../../model/errors.js';
import type { ExtensionContext, OptionOccurrence, TargetExtension } from '../types.js';
import { argOf, missing, unknownOption } from '../values.js';
import { parseSetFlags, parseSetName } from '../match/set.js';

/** One set operand: the set and the flags per dimension. */
export interface SetOperand {
  readonly name: string;
  readonly flags: readonly ('src' | 'dst')[];
}

/** Options of `-j SET`. */
export interface SetTargetOptions {
  readonly add: SetOperand | null;
  readonly del: SetOperand | null;
  readonly exist: boolean;
  /** `--timeout`; null when not given (the set's default). */
  readonly timeout: number | null;
}

function operand(o: OptionOccurrence): SetOperand {
  const flags = o.extra?.[0];
  if (!flags) fail('MISSING_ARGUMENT', `${o.written} requires two args.`, o.span, o.written);
  return { name: parseSetName(o, argOf(o)), flags: parseSetFlags({ ...o, argSpan: flags.span, arg: flags.text }, flags.text) };
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): SetTargetOptions {
  let add: SetOperand | null = null;
  let del: SetOperand | null = null;
  let exist: OptionOccurrence | null = null;
  let timeout: { o: OptionOccurrence; v: number } | null = null;
  for (const o of occurrences) {
    switch (o.name) {
      case 'add-set':
        add = operand(o);
        break;
      case 'del-set':
        del = operand(o);
        break;
      case 'exist':
        exist = o;
        break;
      case 'timeout': {
        const t = argOf(o);
        if (!/^\d+$/.test(t) || Number(t) > 0xffffffff) fail('BAD_VALUE', `Invalid value for option --timeout or out of range 0-${0xffffffff}.`, o.argSpan ?? o.span, t);
        timeout = { o, v: Number(t) };
        break;
      }
      case 'map-set':
        fail('UNSUPPORTED', 'SET --map-set (skbinfo sets) is not modelled', o.span, o.written);
        break;
      default:
        unknownOption('SET', o);
    }
  }
  if (!add && !del) missing(ctx, 'SET', "You must specify either `--add-set' or `--del-set' or `--map-set'");
  if (!add && exist) fail('CONFLICTING_OPTIONS', "Flag `--exist' can be used with `--add-set' only", exist.span, exist.written);
  if (!add && timeout) fail('CONFLICTING_OPTIONS', "Option `--timeout' can be used with `--add-set' only", timeout.o.span, timeout.o.written);
  return { add, del, exist: exist !== null, timeout: timeout?.v ?? null };
}

/** `set_target_save_v3`. */
function save(o: SetTargetOptions): string {
  const parts: string[] = [];
  if (o.add) parts.push(`--add-set ${o.add.name} ${o.add.flags.join(',')}`);
  if (o.exist) parts.push('--exist');
  if (o.timeout !== null) parts.push(`--timeout ${o.timeout}`);
  if (o.del) parts.push(`--del-set ${o.del.name} ${o.del.flags.join(',')}`);
  return parts.join(' ');
}

/** `-j SET`. */
export const SET: TargetExtension<SetTargetOptions> = {
  kind: 'target',
  name: 'SET',
  family: 'both',
  terminal: false,
  options: [
    { name: 'add-set', arg: true, extraArgs: 1 },
    { name: 'del-set', arg: true, extraArgs: 1 },
    { name: 'map-set', arg: true, extraArgs: 1 },
    { name: 'exist', arg: false },
    { name: 'timeout', arg: true },
  ],
  parse,
  save,
};
