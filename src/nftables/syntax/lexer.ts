/**
 * The nft scanner: text → tokens with spans, as `src/scanner.l` splits `nft -f` input. Words
 * keep the characters that make up addresses, prefixes, ranges and port specs (`10.0.0.0/8`,
 * `fd00::1`, `1-1024`, `:15001`) together; the parser reads them by the type expected.
 * `#` starts a comment, a backslash before a newline joins lines, newlines and `;` end commands.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../model/errors.js';
import type { Span } from '../../model/types.js';

/** A token of nft input. */
export interface NftToken {
  readonly kind: 'word' | 'string' | 'punct' | 'newline' | 'eof';
  readonly text: string;
  readonly span: Span;
}

const WORD = /[A-Za-z0-9_./:\-*$@[\]%+]/;
const PUNCT2 = new Set(['==', '!=', '<=', '>=', '<<', '>>']);
const PUNCT1 = new Set(['{', '}', '(', ')', ',', ';', '=', '<', '>', '&', '|', '^', '!']);

/**
 * A word as nft's scanner would cut it at colons: the scanner reads addresses (`fd00::1`,
 * `aa:bb:cc:dd:ee:ff`) and `N:M` whole, but a colon before a name (`25:accept`, `:tcp`) or at
 * the end of a word (`::dddd:`) is a token of its own.
 */
function pushWord(tokens: NftToken[], word: string, start: number, span: (a: number, b: number) => Span): void {
  const colon = word.lastIndexOf(':');
  if (colon >= 0 && !word.startsWith('[')) {
    const head = word.slice(0, colon);
    const tail = word.slice(colon + 1);
    const named = /^[A-Za-z_]/.test(tail) && /[g-zG-Z_\-]/.test(tail);
    const trailing = tail === '' && head !== '' && !head.endsWith(':') && !/^[0-9.]+$/.test(head);
    if ((named && !head.includes('$')) || trailing) {
      if (head !== '') pushWord(tokens, head, start, span);
      tokens.push({ kind: 'word', text: ':', span: span(start + colon, start + colon + 1) });
      if (tail !== '') tokens.push({ kind: 'word', text: tail, span: span(start + colon + 1, start + word.length) });
      return;
    }
  }
  tokens.push({ kind: 'word', text: word, span: span(start, start + word.length) });
}

/** Splits nft input into tokens; an unterminated string is a diagnostic. */
export function tokenizeNft(text: string): { tokens: NftToken[]; diagnostics: Diagnostic[] } {
  const tokens: NftToken[] = [];
  const diagnostics: Diagnostic[] = [];
  let line = 1;
  let lineStart = 0;
  let i = 0;
  const span = (start: number, end: number, l = line, ls = lineStart): Span => ({ line: l, column: start - ls + 1, offset: start, length: Math.max(1, end - start) });
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\n') {
      tokens.push({ kind: 'newline', text: '\n', span: span(i, i + 1) });
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '\\' && (text[i + 1] === '\n' || (text[i + 1] === '\r' && text[i + 2] === '\n'))) {
      i += text[i + 1] === '\r' ? 3 : 2;
      line++;
      lineStart = i;
      continue;
    }
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '"') {
      const start = i;
      let j = i + 1;
      while (j < text.length && text[j] !== '"' && text[j] !== '\n') j++;
      if (text[j] !== '"') {
        diagnostics.push(diagnostic('UNTERMINATED_QUOTE', 'syntax error, unterminated string', span(start, j), text.slice(start, j)));
        i = j;
        continue;
      }
      tokens.push({ kind: 'string', text: text.slice(i + 1, j), span: span(start, j + 1) });
      i = j + 1;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (PUNCT2.has(two)) {
      tokens.push({ kind: 'punct', text: two, span: span(i, i + 2) });
      i += 2;
      continue;
    }
    if (PUNCT1.has(c)) {
      tokens.push({ kind: 'punct', text: c, span: span(i, i + 1) });
      i++;
      continue;
    }
    if (c === '@') {
      // `@name`: the scanner reads an identifier after `@` (so `@map:80` is `@map` then `:80`).
      const start = i;
      i++;
      while (i < text.length && /[A-Za-z0-9_./\-]/.test(text[i]!)) i++;
      tokens.push({ kind: 'word', text: text.slice(start, i), span: span(start, i) });
      continue;
    }
    if (WORD.test(c)) {
      const start = i;
      while (i < text.length && WORD.test(text[i]!)) i++;
      pushWord(tokens, text.slice(start, i), start, span);
      continue;
    }
    diagnostics.push(diagnostic('UNEXPECTED_TOKEN', `syntax error, unexpected character "${c}"`, span(i, i + 1), c));
    i++;
  }
  tokens.push({ kind: 'eof', text: '', span: span(i, i) });
  return { tokens, diagnostics };
}
