/**
 * Errors are values: a {@link Diagnostic} has a code, a message naming the offending token, and
 * where the input was text, its position. Core APIs collect diagnostics; convenience APIs throw a
 * {@link NetfilterSimError} carrying them.
 *
 * @module
 */
import type { Span } from './types.js';

/** Every error code netfilter-sim reports. */
export type ErrorCode =
  // text and tokens
  | 'NUL_BYTE'
  | 'LINE_TOO_LONG'
  | 'UNTERMINATED_QUOTE'
  | 'UNEXPECTED_TOKEN'
  | 'MISSING_ARGUMENT'
  | 'UNKNOWN_OPTION'
  | 'DUPLICATE_OPTION'
  | 'MULTIPLE_NEGATION'
  | 'BAD_NEGATION'
  // iptables-save structure
  | 'MISSING_COMMIT'
  | 'COMMIT_OUTSIDE_TABLE'
  | 'RULE_OUTSIDE_TABLE'
  | 'UNKNOWN_TABLE'
  | 'BAD_CHAIN_LINE'
  | 'BAD_COUNTERS'
  | 'BAD_COMMAND'
  // values
  | 'BAD_ADDRESS'
  | 'BAD_PORT'
  | 'BAD_PROTOCOL'
  | 'BAD_INTERFACE'
  | 'BAD_NUMBER'
  | 'BAD_VALUE'
  | 'WRONG_FAMILY'
  // extensions
  | 'UNKNOWN_MATCH'
  | 'UNKNOWN_TARGET'
  | 'UNKNOWN_SET'
  | 'UNKNOWN_ESTIMATOR'
  | 'UNKNOWN_NFACCT'
  | 'MATCH_NEEDS_PROTOCOL'
  | 'MISSING_OPTION'
  | 'CONFLICTING_OPTIONS'
  | 'TOO_MANY_PORTS'
  | 'COMMENT_TOO_LONG'
  // chains and tables
  | 'UNKNOWN_CHAIN'
  | 'CHAIN_EXISTS'
  | 'CHAIN_NAME_TOO_LONG'
  | 'BAD_CHAIN_NAME'
  | 'BUILTIN_CHAIN'
  | 'CHAIN_IN_USE'
  | 'CHAIN_NOT_EMPTY'
  | 'BAD_POLICY'
  | 'BAD_RULE_NUMBER'
  | 'RULE_NOT_FOUND'
  | 'CHAIN_LOOP'
  | 'JUMP_TOO_DEEP'
  | 'TOO_MANY_RULES'
  | 'INVALID_HOOK'
  | 'INVALID_TABLE'
  // engine and mesh inputs
  | 'BAD_PROBE'
  | 'BAD_CONFIG'
  | 'BAD_MANIFEST'
  | 'UNSUPPORTED'
  /** A pod the mesh's sidecar injector leaves alone (host network, opted out, another sidecar). */
  | 'NOT_INJECTED'
  // Kubernetes objects
  | 'INVALID_NETWORK_POLICY'
  // bounds and argument types (docs/semantics.md, "Limits")
  | 'BAD_ARGUMENT'
  | 'INPUT_TOO_LARGE'
  | 'LIMIT_EXCEEDED';

/** A problem found in the input. */
export interface Diagnostic {
  readonly code: ErrorCode;
  readonly severity: 'error' | 'warning';
  readonly message: string;
  /** Where in the source text, when the input was text. */
  readonly span?: Span;
  /** The offending token, as written. */
  readonly token?: string;
}

/** Builds an error diagnostic. */
export function diagnostic(
  code: ErrorCode,
  message: string,
  span?: Span,
  token?: string,
): Diagnostic {
  const d: { -readonly [K in keyof Diagnostic]: Diagnostic[K] } = { code, severity: 'error', message: showInvisible(message) };
  if (span) d.span = span;
  if (token !== undefined) d.token = token;
  return d;
}

// Control characters (but newline and tab) and the byte-order mark, which a terminal hides.
const INVISIBLE = /[\x00-\x08\x0b-\x1f\x7f\ufeff]/g;

/** A message with invisible characters written as escapes (`\r`, `\x1b`, `\ufeff`). */
function showInvisible(message: string): string {
  INVISIBLE.lastIndex = 0;
  if (!INVISIBLE.test(message)) return message;
  return message.replace(INVISIBLE, (c) => {
    if (c === '\r') return '\\r';
    if (c === '\ufeff') return '\\ufeff';
    return '\\x' + c.charCodeAt(0).toString(16).padStart(2, '0');
  });
}

/**
 * The error netfilter-sim throws. It carries every diagnostic; `message` is the first one,
 * prefixed with its position when known.
 *
 * @example
 * ```ts
 * try { parseIptablesSaveOrThrow('*nat\n-A X -j Y\n'); }
 * catch (e) { if (e instanceof NetfilterSimError) console.error(e.code, e.diagnostics); }
 * ```
 */
export class NetfilterSimError extends Error {
  readonly code: ErrorCode;
  readonly diagnostics: readonly Diagnostic[];
  readonly span: Span | undefined;

  constructor(diagnostics: readonly Diagnostic[] | Diagnostic, options?: { file?: string }) {
    const list = Array.isArray(diagnostics) ? diagnostics : [diagnostics as Diagnostic];
    const first = list[0] ?? diagnostic('BAD_VALUE', 'unknown error');
    const where = first.span ? `${options?.file ?? '<input>'}:${first.span.line}:${first.span.column}: ` : '';
    super(where + first.message);
    this.name = 'NetfilterSimError';
    this.code = first.code;
    this.diagnostics = list;
    this.span = first.span;
  }
}

/** Throws a {@link NetfilterSimError} for one diagnostic. */
export function fail(code: ErrorCode, message: string, span?: Span, token?: string): never {
  throw new NetfilterSimError(diagnostic(code, message, span, token));
}
