/**
 * A command line's words, split as a POSIX shell splits a simple command: blanks separate words,
 * single quotes keep everything, double quotes keep all but `\"` and `\\`, a backslash outside
 * quotes keeps the next character, and a backslash before a newline joins two lines. No
 * expansions: `$`, `*` and `~` are themselves.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from '../model/errors.js';

/**
 * Splits `text` into words.
 *
 * @example
 * ```ts
 * shellWords(`-p 4143 --inbound-ports-to-ignore '4190,4191' "a b"`); // ['-p', '4143', '--inbound-ports-to-ignore', '4190,4191', 'a b']
 * ```
 */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      if (word !== null) words.push(word);
      word = null;
    } else if (ch === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new NetfilterSimError(diagnostic('BAD_CONFIG', 'unterminated single quote'));
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (ch === '"') {
      let s = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && (text[j + 1] === '"' || text[j + 1] === '\\' || text[j + 1] === '$' || text[j + 1] === '`')) s += text[++j];
        else if (text[j] === '\\' && text[j + 1] === '\n') j++;
        else s += text[j];
      }
      if (j >= text.length) throw new NetfilterSimError(diagnostic('BAD_CONFIG', 'unterminated double quote'));
      word = (word ?? '') + s;
      i = j;
    } else if (ch === '\\') {
      const next = text[i + 1];
      if (next === '\n') i++;
      else if (next !== undefined) {
        word = (word ?? '') + next;
        i++;
      }
    } else word = (word ?? '') + ch;
  }
  if (word !== null) words.push(word);
  return words;
}
