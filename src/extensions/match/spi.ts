/**
 * The SPI matches: `-m esp` (`libxt_esp.c`), `-m ah` (`libipt_ah.c`, `libip6t_ah.c`) and
 * `-m ipcomp` (`libxt_ipcomp.c`), kernel `xt_esp.c`, `ipt_ah.c`, `ip6t_ah.c`, `xt_ipcomp.c`: the
 * security parameter index of the protocol's header within `min[:max]`. The full range
 * 0:4294967295 is not printed. The engine makes no IPsec packets, so on its packets the protocol
 * test already fails.
 *
 * @module
 */
import { diagnostic } from '../../errors.js';
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { parseUint32, parseUintRange, protocolIs, unknownOption, UINT32_MAX } from '../values.js';

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

function spiSave(option: string, o: SpiOptions): string[] {
  if (o.min === 0 && o.max === UINT32_MAX) return [];
  return [`${o.negated ? '! ' : ''}--${option} ${o.min !== o.max ? `${o.min}:${o.max}` : o.min}`];
}

function spiParse(ext: string, spiName: string, lenName?: string, resName?: string, defaultMax: number = UINT32_MAX) {
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
function spiLower(proto: number) {
  return (o: SpiOptions) => {
    const zero = (o.min === 0) !== o.negated;
    return (p: { readonly proto: number }): boolean => p.proto === proto && zero;
  };
}

/** `-m esp`. */
export const esp: MatchExtension<SpiOptions> = {
  kind: 'match',
  name: 'esp',
  family: 'both',
  options: [{ name: 'espspi', arg: true, negatable: true }],
  placement: { protocols: ['esp'] },
  parse: spiParse('esp', 'espspi'),
  save: (o) => spiSave('espspi', o).join(' '),
  lower: spiLower(50),
};

/** `-m ah` (IPv4 and IPv6; `--ahlen` and `--ahres` are IPv6 only). */
export const ah: MatchExtension<SpiOptions> = {
  kind: 'match',
  name: 'ah',
  family: 'both',
  options: [
    { name: 'ahspi', arg: true, negatable: true },
    { name: 'ahlen', arg: true, negatable: true, family: 6 },
    { name: 'ahres', arg: false, family: 6 },
  ],
  check(_o, ctx) {
    // ipt_ah has `.proto = IPPROTO_AH`; ip6t_ah walks the extension headers instead.
    if (ctx.family === 4 && !protocolIs(ctx.protocol, [51])) return [diagnostic('MATCH_NEEDS_PROTOCOL', 'ah match needs -p ah', undefined, 'ah')];
    return [];
  },
  parse: spiParse('ah', 'ahspi', 'ahlen', 'ahres'),
  save(o) {
    const out = spiSave('ahspi', o);
    if (o.hdrlen && (o.hdrlen.value !== 0 || o.hdrlen.negated)) out.push(`${o.hdrlen.negated ? '! ' : ''}--ahlen ${o.hdrlen.value}`);
    if (o.res) out.push('--ahres');
    return out.join(' ');
  },
  lower: spiLower(51),
};

/** `-m ipcomp`. */
export const ipcomp: MatchExtension<SpiOptions> = {
  kind: 'match',
  name: 'ipcomp',
  family: 'both',
  options: [
    { name: 'ipcompspi', arg: true, negatable: true },
    { name: 'compres', arg: false },
  ],
  placement: { protocols: ['ipcomp'] },
  // libxt_ipcomp has no init function: without --ipcompspi the range is 0:0.
  parse: spiParse('ipcomp', 'ipcompspi', undefined, 'compres', 0),
  save(o) {
    const out = spiSave('ipcompspi', o);
    if (o.res) out.push('--compres');
    return out.join(' ');
  },
  lower: spiLower(108),
};
