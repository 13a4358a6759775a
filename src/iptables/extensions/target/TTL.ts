/**
 * `-j TTL` (`libipt_TTL.c`, kernel `xt_HL.c` `ttl_tg`; its IPv6 twin `-j HL` is in HL.ts):
 * set (`--ttl-set`), decrement (`--ttl-dec`, at least 1) or increment (`--ttl-inc`) the IPv4 TTL
 * or IPv6 hop limit, saturating at 0 and 255. mangle table. The engine's packets carry the new
 * value (the `ttl`/`hl` matches read it).
 *
 * @module
 */
import type { ExtensionContext, OptionOccurrence, TargetExtension } from '../types.js';
import { exclusive, missing, parseUint32, unknownOption } from '../values.js';

/** Options of `-j TTL` and `-j HL`. */
export interface TtlTargetOptions {
  readonly mode: 'set' | 'dec' | 'inc';
  readonly value: number;
}

/** The parser of `-j TTL` and `-j HL`. @internal */
export function build(prefix: 'ttl' | 'hl', ext: string) {
  return (occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): TtlTargetOptions => {
    exclusive(occurrences, [`${prefix}-set`, `${prefix}-dec`, `${prefix}-inc`]);
    let r: TtlTargetOptions | undefined;
    for (const o of occurrences) {
      if (o.name === `${prefix}-set`) r = { mode: 'set', value: parseUint32(o, ext, 0, 255) };
      else if (o.name === `${prefix}-dec`) r = { mode: 'dec', value: parseUint32(o, ext, 1, 255) };
      else if (o.name === `${prefix}-inc`) r = { mode: 'inc', value: parseUint32(o, ext, 1, 255) };
      else unknownOption(ext, o);
    }
    if (!r) missing(ctx, ext, `${ext}: you must specify an action`);
    return r;
  };
}

/** `-j TTL` (IPv4). */
export const TTL: TargetExtension<TtlTargetOptions> = {
  kind: 'target',
  name: 'TTL',
  family: 4,
  terminal: false,
  options: [
    { name: 'ttl-set', arg: true },
    { name: 'ttl-dec', arg: true },
    { name: 'ttl-inc', arg: true },
  ],
  placement: { tables: ['mangle'] },
  parse: build('ttl', 'TTL'),
  save: (o) => `--ttl-${o.mode} ${o.value}`,
};
