/**
 * `-j TEE` (`libxt_TEE.c`, kernel `xt_TEE.c`): sends a copy of the packet to `--gateway ADDR`
 * (optionally via `--oif IF`); the original continues. The simulator does not follow the copy.
 *
 * @module
 */
import { formatAddress, parseAddress } from '../../../model/address.js';
import { utf8Length } from '../../../model/limits.js';
import type { TargetExtension } from '../types.js';
import { argOf, badValue, requireOption, unknownOption } from '../values.js';

/** Options of `-j TEE`. */
export interface TeeOptions {
  readonly gateway: readonly number[];
  readonly oif?: string;
}

/** `IFNAMSIZ`. */
const IFNAMSIZ = 16;

/** `-j TEE`. */
export const TEE: TargetExtension<TeeOptions> = {
  kind: 'target',
  name: 'TEE',
  family: 'both',
  terminal: false,
  options: [
    { name: 'gateway', arg: true },
    { name: 'oif', arg: true },
  ],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'TEE', 'gateway');
    let gateway: readonly number[] = [];
    let oif: string | undefined;
    for (const o of occurrences) {
      if (o.name === 'gateway') {
        const a = parseAddress(argOf(o), ctx.family);
        if (!a) badValue(o, `TEE: bad ${ctx.family === 4 ? 'IPv4' : 'IPv6'} address "${o.arg}"`);
        gateway = a;
      } else if (o.name === 'oif') {
        oif = argOf(o);
        if (utf8Length(oif) >= IFNAMSIZ) badValue(o, `TEE: interface name "${oif}" is too long`);
      } else unknownOption('TEE', o);
    }
    return oif === undefined ? { gateway } : { gateway, oif };
  },
  save(o, family) {
    return `--gateway ${formatAddress(o.gateway, family)}${o.oif !== undefined && o.oif !== '' ? ` --oif ${o.oif}` : ''}`;
  },
};
