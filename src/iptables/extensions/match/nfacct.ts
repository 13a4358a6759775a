/**
 * `-m nfacct` (`libxt_nfacct.c`, kernel `xt_nfacct.c`): counts the packet in a named
 * accounting object and always matches. kube-proxy uses it (`--nfacct-name …`). The object must
 * exist when the rule is loaded (`nfacct add NAME`); `check` is told which do with its `nfacct`
 * option. iptables 1.8.9 saves the name after two spaces (`nfacct_print_name` prints one and
 * `xtables_save_string` another).
 *
 * @module
 */
import { truncateUtf8 } from '../../../model/limits.js';
import type { ExtensionContext, MatchExtension } from '../types.js';
import { argOf, badValue, missing, saveString, unknownOption } from '../values.js';

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
      const text = argOf(o);
      if (text.includes('\n')) badValue(o, 'Newlines not allowed in --nfacct-name');
      name = truncateUtf8(text, MAX_NAME); // XTOPT_PUT strings are cut to the field size
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
