/**
 * `-j SECMARK` (`libxt_SECMARK.c`, kernel `xt_SECMARK.c`): sets the packet's security mark from
 * an SELinux context (`--selctx`). mangle and security tables. The kernel resolves the context
 * with the loaded security module at load time; without one (the kernel here, and the simulator)
 * every SECMARK rule is refused.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import { utf8Length } from '../../../model/limits.js';
import type { TargetExtension } from '../types.js';
import { argOf, badValue, requireOption, saveString, unknownOption } from '../values.js';

/** Options of `-j SECMARK`. */
export interface SecmarkOptions {
  readonly selctx: string;
}

/** `SECMARK_SECCTX_MAX`. */
const SECCTX_MAX = 256;

/** `-j SECMARK`. */
export const SECMARK: TargetExtension<SecmarkOptions> = {
  kind: 'target',
  name: 'SECMARK',
  family: 'both',
  terminal: false,
  options: [{ name: 'selctx', arg: true }],
  placement: { tables: ['mangle', 'security'] },
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'SECMARK', 'selctx');
    let selctx = '';
    for (const o of occurrences) {
      if (o.name !== 'selctx') unknownOption('SECMARK', o);
      selctx = argOf(o);
      if (utf8Length(selctx) >= SECCTX_MAX) badValue(o, `SECMARK: --selctx is too long (at most ${SECCTX_MAX - 1} characters)`);
    }
    return { selctx };
  },
  save(o) {
    return `--selctx ${saveString(o.selctx)}`;
  },
  check() {
    return [diagnostic('UNSUPPORTED', 'SECMARK: the kernel resolves --selctx with a security module (SELinux), which is not loaded: the rule is refused', undefined, 'SECMARK')];
  },
};
