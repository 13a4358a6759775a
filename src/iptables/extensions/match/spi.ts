/**
 * What the SPI matches share (`-m esp` in esp.ts, `-m ah` in ah.ts, `-m ipcomp` in ipcomp.ts;
 * `libxt_esp.c`, `libipt_ah.c`, `libip6t_ah.c`, `libxt_ipcomp.c`, kernel `xt_esp.c`, `ipt_ah.c`,
 * `ip6t_ah.c`, `xt_ipcomp.c`): the
 * security parameter index of the protocol's header within `min[:max]`. The full range
 * 0:4294967295 is not printed. The engine makes no IPsec packets, so on its packets the protocol
 * test already fails.
 *
 * @module
 */
import type { OptionOccurrence } from '../types.js';
import { parseUint32, parseUintRange, unknownOption, UINT32_MAX } from '../values.js';

/** Options of the SPI matches. */
export interface SpiOptions {
  readonly negated: boolean;
  readonly min: number;
  readonly max: number;
  /** ah (IPv6): `--ahlen`, with its negation. */
  readonly hdrlen?: { readonly negated: boolean; readonly value: number };
  /** ah (IPv6) `--ahres`, ipcomp `--compres`. */
  readonly res?: boolean;
}

/** Prints the SPI range option (nothing for the full range). @internal */
export function spiSave(option: string, o: SpiOptions): string[] {
  if (o.min === 0 && o.max === UINT32_MAX) return [];
  return [`${o.negated ? '! ' : ''}--${option} ${o.min !== o.max ? `${o.min}:${o.max}` : o.min}`];
}

/** The parser of the SPI matches. @internal */
export function spiParse(ext: string, spiName: string, lenName?: string, resName?: string, defaultMax: number = UINT32_MAX) {
  return (occurrences: readonly OptionOccurrence[]): SpiOptions => {
    let r: { -readonly [K in keyof SpiOptions]: SpiOptions[K] } = { negated: false, min: 0, max: defaultMax };
    for (const o of occurrences) {
      if (o.name === spiName) {
        const { lo, hi } = parseUintRange(o, ext, UINT32_MAX);
        r = { ...r, negated: o.negated, min: lo, max: hi };
      } else if (lenName !== undefined && o.name === lenName) r.hdrlen = { negated: o.negated, value: parseUint32(o, ext) };
      else if (resName !== undefined && o.name === resName) r.res = true;
      else unknownOption(ext, o);
    }
    return r;
  };
}

/** The engine's packets carry no SPI: a packet of the protocol is taken to have SPI 0. */
export function spiLower(proto: number) {
  return (o: SpiOptions) => {
    const zero = (o.min === 0) !== o.negated;
    return (p: { readonly proto: number }): boolean => p.proto === proto && zero;
  };
}
