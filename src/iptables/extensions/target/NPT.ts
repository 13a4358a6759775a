/**
 * `-j DNPT` and `-j SNPT` (`libip6t_DNPT.c`, `libip6t_SNPT.c`, kernel `ip6t_NPT.c`): stateless
 * IPv6 prefix translation (RFC 6296) from `--src-pfx` to `--dst-pfx`, both required, each a
 * prefix of at most /64 without host bits. mangle table; DNPT in PREROUTING and OUTPUT, SNPT in
 * INPUT and POSTROUTING. The simulator does not apply the checksum-neutral rewrite: the targets
 * continue.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../../model/errors.js';
import { formatAddress, maskLength } from '../../../model/address.js';
import type { ExtensionContext, OptionOccurrence, TargetExtension } from '../types.js';
import { parseHostMask, requireOption, unknownOption } from '../values.js';

interface Prefix {
  readonly addr: readonly number[];
  readonly len: number;
}

/** Options of `-j DNPT` / `-j SNPT`. */
export interface NptOptions {
  readonly src: Prefix;
  readonly dst: Prefix;
}

function build(name: 'DNPT' | 'SNPT'): TargetExtension<NptOptions> {
  return {
    kind: 'target',
    name,
    family: 6,
    terminal: false,
    options: [
      { name: 'src-pfx', arg: true },
      { name: 'dst-pfx', arg: true },
    ],
    placement: { tables: ['mangle'], hooks: name === 'DNPT' ? ['PREROUTING', 'OUTPUT'] : ['INPUT', 'POSTROUTING'] },
    parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext) {
      requireOption(ctx, occurrences, name, 'src-pfx');
      requireOption(ctx, occurrences, name, 'dst-pfx');
      const r: { src: Prefix; dst: Prefix } = { src: { addr: [0, 0, 0, 0], len: 0 }, dst: { addr: [0, 0, 0, 0], len: 0 } };
      for (const o of occurrences) {
        const { addr, mask } = parseHostMask(o, name, 6);
        const p = { addr, len: maskLength(mask) };
        if (o.name === 'src-pfx') r.src = p;
        else if (o.name === 'dst-pfx') r.dst = p;
        else unknownOption(name, o);
      }
      return r;
    },
    save(o) {
      const out: string[] = [];
      const zero = (p: Prefix): boolean => p.len === 0 && p.addr.every((w) => w === 0);
      if (!zero(o.src)) out.push(`--src-pfx ${formatAddress(o.src.addr, 6)}/${o.src.len}`);
      if (!zero(o.dst)) out.push(`--dst-pfx ${formatAddress(o.dst.addr, 6)}/${o.dst.len}`);
      return out.join(' ');
    },
    check(o) {
      // ip6t_npt_checkentry: at most /64, and no bits set past the prefix.
      const out: Diagnostic[] = [];
      for (const [what, p] of [['--src-pfx', o.src], ['--dst-pfx', o.dst]] as const) {
        const hostBits = p.addr.some((w, i) => {
          const bits = Math.max(0, Math.min(32, p.len - i * 32));
          const m = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
          return ((w & ~m) >>> 0) !== 0;
        });
        if (p.len > 64 || hostBits) out.push(diagnostic('BAD_VALUE', `${name}: ${what} must be a prefix of at most /64 with no host bits set`, undefined, name));
      }
      return out;
    },
  };
}

/** `-j DNPT`. */
export const DNPT: TargetExtension<NptOptions> = build('DNPT');
/** `-j SNPT`. */
export const SNPT: TargetExtension<NptOptions> = build('SNPT');
