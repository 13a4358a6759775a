/**
 * A diagnostic as people read it: `file:line:col: message`, the source line and a caret run.
 *
 * @module
 */
import type { Diagnostic } from './errors.js';
import { expectArgument } from './guard.js';

/**
 * Formats a diagnostic as `file:line:col: message`, followed by the source line and a caret run
 * under the offending token (trimmed to 80 columns).
 *
 * @example
 * ```ts
 * formatDiagnostic(d, text, 'rules.txt');
 * // rules.txt:3:18: unknown match "mutliport" (did you mean "multiport"?)
 * //   -A OUTPUT -p tcp -m mutliport --dports 1,2 -j ACCEPT
 * //                       ^^^^^^^^^
 * ```
 */
export function formatDiagnostic(d: Diagnostic, source?: string, file = '<input>'): string {
  expectArgument(d, 'object', 'diagnostic');
  expectArgument(source, ['string', 'undefined'], 'source');
  expectArgument(file, 'string', 'file');
  if (!d.span) return `${file}: ${d.message}`;
  const head = `${file}:${d.span.line}:${d.span.column}: ${d.message}`;
  if (source === undefined) return head;
  const lineText = sourceLine(source, d.span.line);
  if (lineText === undefined) return head;
  const width = 80;
  let start = 0;
  const col = d.span.column - 1;
  if (col > width - 20) start = col - 20;
  // One character for one: tabs as spaces, control characters as their pictures (U+2400…).
  const shown = lineText
    .slice(start, start + width)
    .replace(/\t/g, ' ')
    .replace(/[\x00-\x1f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)))
    .replace(/\x7f/g, '\u2421')
    .replace(/\ufeff/g, '\u2423');
  const caretStart = col - start;
  const caretLen = Math.max(1, Math.min(d.span.length, shown.length - caretStart));
  const prefix = start > 0 ? '…' : ' ';
  return `${head}\n ${prefix}${shown}\n  ${' '.repeat(Math.max(0, caretStart))}${'^'.repeat(caretLen)}`;
}

function sourceLine(source: string, line: number): string | undefined {
  let pos = 0;
  for (let i = 1; i < line; i++) {
    const nl = source.indexOf('\n', pos);
    if (nl < 0) return undefined;
    pos = nl + 1;
  }
  const end = source.indexOf('\n', pos);
  return source.slice(pos, end < 0 ? undefined : end);
}
