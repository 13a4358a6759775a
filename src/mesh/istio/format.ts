/**
 * The output forms of a compiled Istio rule set: the exact restore input, the recorded
 * commands, the rule sets as loaded (the model), and what `iptables-save` prints afterwards.
 *
 * @module
 */
import { fail, NetfilterSimError } from '../../errors.js';
import type { Ruleset } from '../../model/types.js';
import { printIptablesSave } from '../../print/save.js';
import { parseIptablesSave } from '../../syntax/save.js';
import type { IstioCompileResult } from './compile.js';
import type { AmbientCompileResult } from './ambient.js';

/**
 * The output formats of `compile istio` / `compile istio-cni`.
 *
 * @example
 * ```ts
 * const f: IstioOutputFormat = 'save';
 * ```
 */
export type IstioOutputFormat = 'save' | 'restore' | 'commands' | 'json';

/**
 * The output formats, in the order `--help` lists them.
 *
 * @example
 * ```ts
 * ISTIO_OUTPUT_FORMATS.includes('json'); // true
 * ```
 */
export const ISTIO_OUTPUT_FORMATS: readonly IstioOutputFormat[] = ['save', 'restore', 'commands', 'json'];

/**
 * The restore input(s) as one text: the IPv4 input, then the IPv6 input when IPv6 ran. This is a
 * sidecar-capture golden without its `iptables-save`/`ip6tables-save` lines.
 *
 * @example
 * ```ts
 * formatIstioRestore(compileIstio({})); // '* nat\n-N ISTIO_INBOUND\n…COMMIT\n'
 * ```
 */
export function formatIstioRestore(result: IstioCompileResult): string {
  return result.restore.map((r) => r.text).join('');
}

/**
 * The recorded commands as the sidecar-capture goldens lay them out, one per line.
 *
 * @example
 * ```ts
 * formatIstioCommands(compileIstio({})).startsWith('iptables-save\nip6tables-save\n* nat\n'); // true
 * ```
 */
export function formatIstioCommands(result: IstioCompileResult): string {
  return result.commands.length === 0 ? '' : `${result.commands.join('\n')}\n`;
}

/**
 * Loads each restore input into an empty rule set of its family, as `iptables-restore --noflush`
 * does in a fresh namespace, and returns the rule sets (IPv4 first). Throws a
 * `NetfilterSimError` with the diagnostics if the input would be rejected.
 *
 * @example
 * ```ts
 * const [v4] = istioRulesets(compileIstio({ inboundPortsInclude: '*' }));
 * v4.tables.map((t) => t.name); // ['nat']
 * ```
 */
export function istioRulesets(result: Pick<IstioCompileResult, 'restore'>): Ruleset[] {
  return result.restore.map((r) => {
    const { ruleset, diagnostics } = parseIptablesSave(r.text, { family: r.family, mode: 'strict' });
    const errors = diagnostics.filter((d) => d.severity === 'error');
    if (errors.length > 0) {
      throw new NetfilterSimError(errors, { file: r.family === 4 ? '<iptables-restore input>' : '<ip6tables-restore input>' });
    }
    return ruleset;
  });
}

/**
 * What `iptables-save` prints after the tool ran in a fresh namespace (without the `#` lines),
 * followed by what `ip6tables-save` prints when the tool ran an IPv6 pass.
 *
 * @example
 * ```ts
 * formatIstioSave(compileIstio({})).split('\n')[0]; // '*nat'
 * ```
 */
export function formatIstioSave(result: Pick<IstioCompileResult, 'restore'>): string {
  return istioRulesets(result).map((rs) => printIptablesSave(rs)).join('');
}

/**
 * Formats a result in one of the {@link IstioOutputFormat}s. `json` is the loaded rule set(s), an
 * array with the IPv4 rule set first.
 *
 * @example
 * ```ts
 * process.stdout.write(formatIstioResult(compileIstio({ inboundPortsInclude: '*' }), 'save'));
 * ```
 */
export function formatIstioResult(result: IstioCompileResult, format: IstioOutputFormat): string {
  if (result.nft !== undefined) {
    // --native-nftables: commands/restore are the nft -f input; the listing needs the nft printer.
    if (format === 'commands' || format === 'restore') return result.nft;
    fail('UNSUPPORTED', `--format ${format} of an nftables rule set is what \`nft list ruleset\` prints, which needs the nft printer (not in this build); use --format commands for the nft -f input`);
  }
  switch (format) {
    case 'restore':
      return formatIstioRestore(result);
    case 'commands':
      return formatIstioCommands(result);
    case 'save':
      return formatIstioSave(result);
    case 'json':
      return `${JSON.stringify(istioRulesets(result), null, 2)}\n`;
  }
}

/**
 * Formats an ambient result. With the nftables backend, `commands` and `restore` are the
 * transaction istio-cni hands to `nft -f`; `save` and `json` (what `nft list ruleset` lists after
 * it) need the nft printer and are refused with an `UNSUPPORTED` error rather than guessed.
 *
 * @example
 * ```ts
 * process.stdout.write(formatIstioAmbientResult(compileIstioAmbient({}), 'save'));
 * ```
 */
export function formatIstioAmbientResult(result: AmbientCompileResult, format: IstioOutputFormat): string {
  if (result.backend === 'nftables') {
    if (format === 'commands' || format === 'restore') return result.nft;
    fail('UNSUPPORTED', `--format ${format} of an nftables rule set is what \`nft list ruleset\` prints, which needs the nft printer (not in this build); use --format commands for the nft -f input`);
  }
  const { nft: _nft, ...iptables } = result;
  return formatIstioResult(iptables as unknown as IstioCompileResult, format);
}
