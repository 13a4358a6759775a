/**
 * `netfilter-sim fmt` as a function: iptables-save/restore text in, the canonical
 * `iptables-save` text out.
 *
 * @module
 */
import { NetfilterSimError } from '../model/errors.js';
import type { Family } from '../model/types.js';
import { printIptablesSave } from './print/save.js';
import { parseIptablesSave } from './syntax/save.js';
import { expectArgument, expectShape } from '../model/guard.js';

/** Options for {@link formatIptablesSave}. */
export interface FormatOptions {
  /** 4 (the default) or 6. */
  readonly family?: Family;
  /** Accept exactly what `iptables-restore --test` accepts (the default), or also generator quirks. */
  readonly strict?: boolean;
  /** Keep counters from the input, as `iptables-restore -c` then `iptables-save -c`. */
  readonly counters?: boolean;
}

/**
 * Formats rule-set text exactly as `iptables-save` (iptables 1.8.9) would print it after
 * `iptables-restore` loaded it into an empty namespace. Throws a `NetfilterSimError` when the
 * text is rejected; load-time failures (a missing chain) are not errors here, as for
 * `iptables-restore --test` — run `check` for those.
 *
 * @example
 * ```ts
 * formatIptablesSave('*nat\n-A OUTPUT -p tcp --dport 80 -j REDIRECT --to-port 4140\nCOMMIT\n');
 * // "*nat\n:PREROUTING ACCEPT [0:0]\n…\n-A OUTPUT -p tcp -m tcp --dport 80 -j REDIRECT --to-ports 4140\nCOMMIT\n"
 * ```
 */
export function formatIptablesSave(text: string, options: FormatOptions = {}): string {
  expectArgument(text, 'string', 'text');
  expectShape(options, { kind: 'object', fields: { family: { kind: ['integer', 'undefined'], oneOf: [4, 6] }, strict: ['boolean', 'undefined'], counters: ['boolean', 'undefined'] } }, 'options');
  const result = parseIptablesSave(text, {
    family: options.family ?? 4,
    mode: options.strict === false ? 'lenient' : 'strict',
    counters: options.counters ?? false,
  });
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new NetfilterSimError(errors);
  return printIptablesSave(result.ruleset, { counters: options.counters ?? false });
}
