/**
 * Splits one line of `iptables-restore` input into tokens with their spans, exactly as
 * iptables' `add_param_to_argv` (`iptables/xshared.c`) does: whitespace separates; a double
 * quote opens a quoted span in which a backslash escapes the next character; a closing quote ends
 * the token. Single quotes and backslashes outside quotes are ordinary characters.
 *
 * @module
 */
import type { Span } from '../../model/types.js';

/** A token of a rule line. */
export interface Token {
  readonly text: string;
  readonly span: Span;
  /** Whether any part of the token was inside double quotes. */
  readonly quoted: boolean;
}

/** iptables' parameter buffer (`param_buffer[1024]`): longer tokens are refused. */
export const MAX_TOKEN_LENGTH = 1023;

/**
 * Tokenizes one line. `line` excludes its newline; `hadNewline` tells whether one followed (an
 * unterminated quote swallows it, as in iptables). Positions are reported from `lineNo` and
 * `lineOffset` (the offset of the line's first character in the whole text).
 */
export function tokenizeLine(line: string, lineNo: number, lineOffset: number, hadNewline = true): Token[] {
  const tokens: Token[] = [];
  let buf = '';
  let start = -1;
  let quoteOpen = false;
  let escaped = false;
  let quoted = false;
  const text = hadNewline ? line + '\n' : line;
  const emit = (end: number): void => {
    const s = start < 0 ? end : start;
    tokens.push({ text: buf, quoted, span: { line: lineNo, column: s + 1, offset: lineOffset + s, length: Math.max(1, Math.min(end, line.length) - s) } });
    buf = '';
    start = -1;
    quoted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoteOpen) {
      if (escaped) {
        buf += c;
        escaped = false;
        continue;
      }
      if (c === '\\') {
        escaped = true;
        continue;
      }
      if (c === '"') {
        quoteOpen = false;
        emit(i + 1);
        continue;
      }
      buf += c;
      continue;
    }
    if (c === '"') {
      if (start < 0) start = i;
      quoteOpen = true;
      quoted = true;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n') {
      if (buf.length === 0 && start < 0) continue;
      emit(i);
      continue;
    }
    if (start < 0) start = i;
    buf += c;
  }
  if (buf.length > 0 || start >= 0) emit(line.length);
  return tokens;
}
