/**
 * `-m ttl` (`libipt_ttl.c`, kernel `ipt_ttl.c`): the IPv4 TTL compared with a value (`-m hl`, in
 * hl.ts, is its IPv6 twin and shares this parser): `--ttl-eq` (or `--ttl`), `! --ttl-eq`,
 * `--ttl-lt`, `--ttl-gt`; one of them. The engine's packets carry TTL 64 where they are made
 * (Linux's default), one less after each forwarding hop.
 *
 * @module
 */
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { exclusive, missing, noInvert, parseUint32, unknownOption } from '../values.js';

/** Options of `-m ttl` and `-m hl`. */
export interface TtlOptions {
  readonly mode: 'eq' | 'ne' | 'lt' | 'gt';
  readonly value: number;
}

/** The parser of `-m ttl` and `-m hl` (they differ only in the options' prefix). @internal */
export function build(prefix: 'ttl' | 'hl') {
  const names = [`${prefix}-eq`, `${prefix}-lt`, `${prefix}-gt`, prefix];
  return (occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): TtlOptions => {
    exclusive(occurrences, names);
    let r: TtlOptions | undefined;
    for (const o of occurrences) {
      const value = parseUint32(o, prefix, 0, 255);
      if (o.name === `${prefix}-eq`) r = { mode: o.negated ? 'ne' : 'eq', value };
      else {
        noInvert(o);
        if (o.name === prefix) r = { mode: 'eq', value };
        else if (o.name === `${prefix}-lt`) r = { mode: 'lt', value };
        else if (o.name === `${prefix}-gt`) r = { mode: 'gt', value };
        else unknownOption(prefix, o);
      }
    }
    if (!r) missing(ctx, prefix, `${prefix === 'ttl' ? 'TTL' : 'HL'} match: you must specify one of --${prefix}-eq, --${prefix}-lt, --${prefix}-gt`);
    return r;
  };
}

/** The printer of `-m ttl` and `-m hl`. @internal */
export function save(prefix: string) {
  return (o: TtlOptions): string => `${o.mode === 'ne' ? '! ' : ''}--${prefix}-${o.mode === 'ne' ? 'eq' : o.mode} ${o.value}`;
}

/** The test of `-m ttl` and `-m hl` on the engine's packets. @internal */
export function lower(o: TtlOptions) {
  const { mode, value } = o;
  return (p: { readonly ttl?: number }): boolean => {
    const t = p.ttl ?? 64;
    return mode === 'eq' ? t === value : mode === 'ne' ? t !== value : mode === 'lt' ? t < value : t > value;
  };
}

/** `-m ttl` (IPv4). */
export const ttl: MatchExtension<TtlOptions> = {
  kind: 'match',
  name: 'ttl',
  family: 4,
  options: [
    { name: 'ttl-eq', arg: true, negatable: true },
    { name: 'ttl-lt', arg: true },
    { name: 'ttl-gt', arg: true },
    { name: 'ttl', arg: true },
  ],
  parse: build('ttl'),
  save: save('ttl'),
  lower,
};
