/**
 * `-j CONNMARK` (`libxt_CONNMARK.c` revision 1, kernel `xt_connmark.c` `connmark_tg`): sets the
 * connection mark (`--set-xmark`, `--set-mark`, `--and/--or/--xor-mark`, all saved as
 * `--set-xmark 0xV/0xM`), copies the packet mark to it (`--save-mark`) or back
 * (`--restore-mark`), with `--nfmask`/`--ctmask` (or `--mask` for both, default 0xffffffff);
 * save and restore always print both masks.
 *
 * @module
 */
import type { ConnmarkOptions } from '../target-options.js';
import type { ExtensionContext, OptionOccurrence, TargetExtension } from '../types.js';
import { conflict, hex, missing, parseUint32, UINT32_MAX, unknownOption } from '../values.js';
import { MARK_OPERATIONS, markOperation } from './MARK.js';

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): ConnmarkOptions {
  let mode: ConnmarkOptions['mode'] | undefined;
  let op: OptionOccurrence | undefined;
  let ctmark = 0;
  let ctmask = UINT32_MAX;
  let nfmask = UINT32_MAX;
  let maskOpt: OptionOccurrence | undefined;
  for (const o of occurrences) {
    switch (o.name) {
      case 'set-xmark': case 'set-mark': case 'and-mark': case 'or-mark': case 'xor-mark': {
        if (op) conflict(o, op.written);
        op = o;
        mode = 'set';
        const m = markOperation(o, 'CONNMARK');
        ctmark = m.value;
        ctmask = m.mask;
        break;
      }
      case 'save-mark': case 'restore-mark':
        if (op) conflict(o, op.written);
        op = o;
        mode = o.name === 'save-mark' ? 'save' : 'restore';
        break;
      case 'mask':
        if (maskOpt && maskOpt.name !== 'mask') conflict(o, maskOpt.written);
        maskOpt = o;
        nfmask = ctmask = parseUint32(o, 'CONNMARK');
        break;
      case 'ctmask': case 'nfmask':
        if (maskOpt?.name === 'mask') conflict(o, maskOpt.written);
        maskOpt = o;
        if (o.name === 'ctmask') ctmask = parseUint32(o, 'CONNMARK');
        else nfmask = parseUint32(o, 'CONNMARK');
        break;
      default:
        unknownOption('CONNMARK', o);
    }
  }
  if (!mode) missing(ctx, 'CONNMARK', 'no operation specified (--set-xmark, --save-mark, --restore-mark, …)');
  if (mode === 'set') return { mode, value: ctmark, mask: ctmask };
  return { mode, nfmask, ctmask };
}

/** `-j CONNMARK`. */
export const CONNMARK: TargetExtension<ConnmarkOptions> = {
  kind: 'target',
  name: 'CONNMARK',
  family: 'both',
  terminal: false,
  options: [
    ...MARK_OPERATIONS,
    { name: 'save-mark', arg: false },
    { name: 'restore-mark', arg: false },
    { name: 'ctmask', arg: true },
    { name: 'nfmask', arg: true },
    { name: 'mask', arg: true },
  ],
  parse,
  save(o) {
    switch (o.mode) {
      case 'set': return `--set-xmark ${hex(o.value)}/${hex(o.mask)}`;
      case 'save': return `--save-mark --nfmask ${hex(o.nfmask)} --ctmask ${hex(o.ctmask)}`;
      case 'restore': return `--restore-mark --nfmask ${hex(o.nfmask)} --ctmask ${hex(o.ctmask)}`;
    }
  },
};
