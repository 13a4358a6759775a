/**
 * The output forms of a compiled Istio rule set: the exact restore input, the recorded
 * commands, the rule sets as loaded (the model), and what `iptables-save` prints afterwards.
 *
 * @module
 */
import { NetfilterSimError } from '../../model/errors.js';
import { formatNftRuleset, parseNftRulesetOrThrow } from '../../nftables/index.js';
import type { Ruleset } from '../../model/types.js';
import { printIptablesSave } from '../../iptables/print/save.js';
import { parseIptablesSave } from '../../iptables/syntax/save.js';
import type { IstioCompileResult } from './compile.js';
import type { AmbientCompileResult } from './ambient.js';
import { expectArgument, expectFields } from '../../model/guard.js';

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
  expectArgument(result, 'object', 'result');
  expectFields(result, { restore: 'array' }, 'result');
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
  expectArgument(result, 'object', 'result');
  expectFields(result, { commands: 'array', restore: 'array' }, 'result');
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
  expectArgument(result, 'object', 'result');
  expectFields(result, { restore: 'array' }, 'result');
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
  expectArgument(result, 'object', 'result');
  expectFields(result, { restore: 'array' }, 'result');
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
  expectArgument(result, 'object', 'result');
  if (result.nft !== undefined) {
    // --native-nftables: commands/restore are the nft -f input, save what `nft list ruleset`
    // lists after it was applied in a fresh namespace, json that rule set.
    if (format === 'commands' || format === 'restore') return result.nft;
    if (format === 'save') return formatNftRuleset(result.nft, { file: '<nft -f input>' });
    return `${JSON.stringify(parseNftRulesetOrThrow(result.nft, { file: '<nft -f input>' }), null, 2)}\n`;
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
 * transaction istio-cni hands to `nft -f`, `save` what `nft list ruleset` lists after it (on the
 * node, with the probe sets istio-cni creates first) and `json` that nft rule set.
 *
 * @example
 * ```ts
 * process.stdout.write(formatIstioAmbientResult(compileIstioAmbient({}), 'save'));
 * ```
 */
export function formatIstioAmbientResult(result: AmbientCompileResult, format: IstioOutputFormat): string {
  expectArgument(result, 'object', 'result');
  if (result.backend === 'nftables') {
    if (format === 'commands' || format === 'restore') return result.nft;
    // On the node, istio-cni creates the probe sets (host_sets.go) before the rules name them.
    const sets = result.sets.map((x) => `add set inet istio-ambient-nat ${x.name} { type ${x.family === 4 ? 'ipv4_addr' : 'ipv6_addr'} ; comment "UUID of the pods that are part of ambient mesh" ; }\n`).join('');
    const text = result.host ? `add table inet istio-ambient-nat\n${sets}${result.nft}` : result.nft;
    if (format === 'save') return formatNftRuleset(text, { file: '<nft -f input>' });
    return `${JSON.stringify(parseNftRulesetOrThrow(text, { file: '<nft -f input>' }), null, 2)}\n`;
  }
  const { nft: _nft, ...iptables } = result;
  return formatIstioResult(iptables as unknown as IstioCompileResult, format);
}
