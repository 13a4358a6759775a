/**
 * The round-trip law of the canonical printer: printing a rule set, parsing the text and
 * printing again gives the same text.
 *
 * @module
 */
import type { Ruleset } from '../model/types.js';
import { printIptablesSave } from '../iptables/print/save.js';
import { parseIptablesSave } from '../iptables/syntax/save.js';
import type { Counterexample } from './counterexample.js';
import { expectArgument, expectFields } from '../model/guard.js';

/**
 * The name of {@link printParseRoundTrip}, as counterexamples carry it in `law`.
 *
 * @example
 * ```ts
 * printParseRoundTrip(rs)?.law === PRINT_PARSE_ROUND_TRIP;
 * ```
 */
export const PRINT_PARSE_ROUND_TRIP = 'print(parse(print(r))) === print(r)';

/**
 * Law: `print(parse(print(r))) === print(r)` for the canonical `iptables-save` printer and the
 * strict parser (what `iptables-restore` accepts). Returns a counterexample with the first line
 * that changed, or the parse error.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { ruleset } from 'netfilter-sim/arbitraries';
 * fc.assert(fc.property(ruleset({ family: 6 }), (r) => printParseRoundTrip(r) === undefined));
 * ```
 */
export function printParseRoundTrip(ruleset: Ruleset): Counterexample | undefined {
  expectArgument(ruleset, 'object', 'ruleset');
  expectFields(ruleset, { tables: 'array', family: 'integer' }, 'ruleset');
  const text = printIptablesSave(ruleset);
  const parsed = parseIptablesSave(text, { family: ruleset.family, mode: 'strict' });
  const error = parsed.diagnostics.find((d) => d.severity === 'error');
  if (error) {
    const line = error.span ? text.split('\n')[error.span.line - 1] : undefined;
    return {
      law: PRINT_PARSE_ROUND_TRIP, family: ruleset.family, rules: text,
      message: `the printed text does not parse back: ${error.message}${line !== undefined ? `\n  at line ${error.span!.line}: ${line}` : ''}`,
    };
  }
  const again = printIptablesSave(parsed.ruleset);
  if (again === text) return undefined;
  const a = text.split('\n');
  const b = again.split('\n');
  const i = a.findIndex((l, k) => l !== b[k]);
  return {
    law: PRINT_PARSE_ROUND_TRIP, family: ruleset.family, rules: text,
    message: `printing the parsed text changed line ${i + 1}:\n  printed:   ${a[i] ?? '(end)'}\n  reprinted: ${b[i] ?? '(end)'}`,
    details: `Reprinted (iptables-save):\n${again}`,
  };
}
