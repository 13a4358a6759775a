/**
 * `-m dst` (`libip6t_dst.c`, kernel `ip6t_hbh.c`): the IPv6 destination options header, read as
 * `-m hbh` reads the hop-by-hop header (`--dst-len`, `--dst-opts`).
 *
 * @module
 */
import type { MatchExtension } from '../types.js';
import { optsExtension, type OptsOptions } from './hbh.js';

/** `-m dst`. */
export const dst: MatchExtension<OptsOptions> = optsExtension('dst');
