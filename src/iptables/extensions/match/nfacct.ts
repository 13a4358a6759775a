/**
 * `-m nfacct` (`libxt_nfacct.c`, kernel `xt_nfacct.c`): counts the packet in a named
 * accounting object and always matches. kube-proxy uses it (`--nfacct-name …`).
 *
 * @module
 */
import type { ExtensionContext, MatchExtension } from '../types.js';
import { argOf, missing, saveString, unknownOption } from '../values.js';

/** `NFACCT_NAME_MAX` - 1. */
const MAX_NAME = 31;

/** Options of `-m nfacct`. */
export interface NfacctOptions {
  readonly name: string;
}

/** `-m nfacct`. */
export const nfacct: MatchExtension<NfacctOptions> = {
  kind: 'match',
  name: 'nfacct',
  family: 'both',
  options: [{ name: 'nfacct-name', arg: true }],
  parse(occurrences, ctx: ExtensionContext) {
    let name: string | undefined;
    for (const o of occurrences) {
      if (o.name !== 'nfacct-name') unknownOption('nfacct', o);
      name = argOf(o).slice(0, MAX_NAME); // XTOPT_PUT strings are cut to the field size
    }
    if (name === undefined) missing(ctx, 'nfacct', 'option "--nfacct-name" must be specified');
    return { name };
  },
  save(o) {
    // libxt_nfacct prints " --nfacct-name " and then xtables_save_string, which starts with its own space.
    return `--nfacct-name  ${saveString(o.name)}`;
  },
  lower() {
    return () => true;
  },
};
