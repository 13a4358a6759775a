/**
 * `-m hl` (`libip6t_hl.c`, kernel `ip6t_hl.c`): the IPv6 hop limit compared with a value:
 * `--hl-eq` (or `--hl`), `! --hl-eq`, `--hl-lt`, `--hl-gt`; one of them. ip6tables only. The
 * engine's packets carry hop limit 64 where they are made, one less after each forwarding hop.
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { build, lower, save, type TtlOptions } from './ttl.js';

/** `-m hl` (IPv6). */
export const hl: MatchExtension<TtlOptions> = {
  kind: 'match',
  name: 'hl',
  family: 6,
  options: [
    { name: 'hl-eq', arg: true, negatable: true },
    { name: 'hl-lt', arg: true },
    { name: 'hl-gt', arg: true },
    { name: 'hl', arg: true },
  ],
  parse: build('hl'),
  save: save('hl'),
  lower,
};
