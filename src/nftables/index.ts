/**
 * nftables input: read `nft -f` files, list them as `nft list ruleset` does, and check what the
 * kernel refuses at commit.
 *
 * @example
 * ```ts
 * import { formatNftRuleset } from 'netfilter-sim';
 * formatNftRuleset('add table inet t\nadd chain inet t out { type nat hook output priority -100 ; }\n');
 * // "table inet t {\n\tchain out {\n\t\ttype nat hook output priority -100; policy accept;\n\t}\n}\n"
 * ```
 *
 * @module
 */
import { NetfilterSimError, diagnostic, type Diagnostic } from '../model/errors.js';
import { checkNftRuleset } from './check.js';
import { evaluateNftCommands, type NftEvaluateOptions } from './typecheck.js';
import type { NftRuleset } from './model.js';
import { printNftRuleset } from './print.js';
import { parseNftCommands } from './syntax/parse.js';
import { expectArgument } from '../model/guard.js';

export type * from './model.js';
export { printNftRuleset, printNftRule, printNftTable } from './print.js';
export { checkNftRuleset, type NftCheckOptions } from './check.js';
export { detectRulesSyntax, type RulesSyntax } from './detect.js';

/** The rule set a file describes, and what was wrong with it. */
export interface NftParseResult {
  readonly ruleset: NftRuleset;
  /**
   * Syntax and evaluation errors, as `nft -f` reports them before it talks to the kernel; when
   * there are none, what the kernel refuses in the transaction (an existing table given to
   * `create`, a rule handle that does not exist …). {@link checkNftRuleset} adds the kernel's
   * validation of the result (jumps, loops, statements per hook).
   */
  readonly diagnostics: readonly Diagnostic[];
}

/** Options for {@link parseNftRuleset}. */
export interface NftParseOptions {
  /** The rule set already in the namespace, which the file's commands change. */
  readonly base?: NftRuleset;
  /**
   * The host's interfaces other than `lo`, in ifindex order (lo is 1, the first given is 2 …):
   * `iif`/`oif NAME`, `device NAME` and flowtable devices resolve against them, as nft resolves
   * names against the host when it reads a file. Default: none, a fresh network namespace.
   */
  readonly interfaces?: readonly string[];
  /**
   * Reads the file an `include "PATH"` names; returns its text, or undefined when there is none.
   * Without it, `include` is refused (the library reads no files; the CLI reads them with -I DIR).
   */
  readonly include?: (path: string) => string | undefined;
}

function evaluateOptions(options: NftParseOptions): NftEvaluateOptions {
  return { ...(options.base ? { base: options.base } : {}), ...(options.interfaces ? { interfaces: options.interfaces } : {}) };
}

/**
 * Parses and evaluates an `nft -f` file: the command form (`add table …`, `add rule …`,
 * `insert rule … index N`) and the block form that `nft list ruleset` prints, `define`,
 * comments and line continuations. Errors come back as diagnostics with `FILE:LINE:COL`
 * positions; the rule set is what was built up to the first error.
 *
 * @example
 * ```ts
 * const { ruleset, diagnostics } = parseNftRuleset('table ip t {\n\tchain c {\n\t\ttcp dport 22 accept\n\t}\n}\n');
 * ruleset.tables[0]?.chains[0]?.rules.length; // 1
 * diagnostics.length; // 0
 * ```
 */
export function parseNftRuleset(text: string, options: NftParseOptions = {}): NftParseResult {
  expectArgument(text, 'string', 'text');
  expectArgument(options, 'object', 'options');
  const parsed = parseNftCommands(text, options.include ? { include: options.include } : {});
  if (parsed.diagnostics.length > 0) return { ruleset: options.base ?? { kind: 'nftables', tables: [] }, diagnostics: parsed.diagnostics };
  const ev = evaluateNftCommands(parsed.commands, evaluateOptions(options));
  return { ruleset: ev.ruleset, diagnostics: ev.diagnostics.length > 0 ? ev.diagnostics : (ev.commitDiagnostics ?? []) };
}

/**
 * {@link parseNftRuleset}, throwing a `NetfilterSimError` on the first error.
 *
 * @example
 * ```ts
 * const rs = parseNftRulesetOrThrow('add table ip filter\n');
 * rs.tables[0]?.name; // "filter"
 * ```
 */
export function parseNftRulesetOrThrow(text: string, options: NftParseOptions & { file?: string } = {}): NftRuleset {
  expectArgument(text, 'string', 'text');
  expectArgument(options, 'object', 'options');
  const r = parseNftRuleset(text, options);
  if (r.diagnostics.length > 0) throw new NetfilterSimError(r.diagnostics, options.file !== undefined ? { file: options.file } : {});
  return r.ruleset;
}

/**
 * `netfilter-sim fmt FILE.nft` as a function: what `nft list ruleset` prints after `nft -f`
 * loaded the text into a fresh network namespace. Throws a `NetfilterSimError` (with the
 * position of the offending token) for whatever `nft -f` refuses, including what the kernel
 * refuses at commit (a jump to a missing chain, a loop, `redirect` outside a nat chain …).
 *
 * @example
 * ```ts
 * formatNftRuleset('add table inet t\nadd chain inet t c\nadd rule inet t c meta l4proto tcp tcp dport 80 counter accept\n');
 * // "table inet t {\n\tchain c {\n\t\ttcp dport 80 counter packets 0 bytes 0 accept\n\t}\n}\n"
 * ```
 */
export function formatNftRuleset(text: string, options: { file?: string } & Omit<NftParseOptions, 'base'> = {}): string {
  expectArgument(text, 'string', 'text');
  expectArgument(options, 'object', 'options');
  const { file: _file, ...load } = options;
  void _file;
  const errors = nftLoadErrors(text, load);
  if (errors.diagnostics.length > 0) throw new NetfilterSimError(errors.diagnostics, options.file !== undefined ? { file: options.file } : {});
  return printNftRuleset(errors.ruleset);
}

/**
 * Everything `nft -f` would refuse in a text, in the order nft reports it: syntax errors, then
 * evaluation errors, then what the kernel refuses at commit (sorted by position).
 *
 * @example
 * ```ts
 * nftLoadErrors('table ip t {\n\tchain c {\n\t\tjump nowhere\n\t}\n}\n').diagnostics[0]?.span?.line; // 3
 * ```
 */
export function nftLoadErrors(text: string, options: NftParseOptions = {}): NftParseResult {
  expectArgument(text, 'string', 'text');
  expectArgument(options, 'object', 'options');
  expectArgument(options.base, ['object', 'undefined'], 'options.base');
  if (options.interfaces !== undefined && (!Array.isArray(options.interfaces) || !options.interfaces.every((n) => typeof n === 'string' && /^[^\s/:]{1,15}$/.test(n)))) {
    throw new NetfilterSimError([diagnostic('BAD_CONFIG', 'options.interfaces must be interface names (1-15 characters, no spaces, "/" or ":")')]);
  }
  const parsed = parseNftCommands(text, options.include ? { include: options.include } : {});
  if (parsed.diagnostics.length > 0) return { ruleset: options.base ?? { kind: 'nftables', tables: [] }, diagnostics: parsed.diagnostics };
  const ev = evaluateNftCommands(parsed.commands, evaluateOptions(options));
  if (ev.diagnostics.length > 0) return { ruleset: ev.ruleset, diagnostics: ev.diagnostics };
  // Errors on single messages of the transaction come back first; the validation of the whole
  // table (statements per hook, jump depth) runs only when every message was accepted.
  const byOffset = (a: Diagnostic, b: Diagnostic): number => (a.span?.offset ?? 0) - (b.span?.offset ?? 0);
  const perMessage = [...(ev.commitDiagnostics ?? [])].sort(byOffset);
  if (perMessage.length > 0) return { ruleset: ev.ruleset, diagnostics: perMessage };
  return { ruleset: ev.ruleset, diagnostics: checkNftRuleset(ev.ruleset).filter((d) => d.severity === 'error') };
}
