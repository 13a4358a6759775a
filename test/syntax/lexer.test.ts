import { describe, expect, it } from 'vitest';
import { tokenizeLine } from '../../src/iptables/syntax/lexer.js';

const texts = (line: string) => tokenizeLine(line, 1, 0).map((t) => t.text);

describe('tokenizeLine (add_param_to_argv)', () => {
  it('splits on blanks and tabs, collapsing runs', () => {
    expect(texts('-A  INPUT\t-j   ACCEPT')).toEqual(['-A', 'INPUT', '-j', 'ACCEPT']);
  });
  it('keeps quoted spans together and drops the quotes', () => {
    expect(texts('--comment "a b c" -j X')).toEqual(['--comment', 'a b c', '-j', 'X']);
  });
  it('unescapes backslashes only inside quotes', () => {
    expect(texts('"a \\"b\\" \\\\c"')).toEqual(['a "b" \\c']);
    expect(texts('a\\b')).toEqual(['a\\b']);
  });
  it('treats single quotes as ordinary characters', () => {
    expect(texts("--comment 'a b'")).toEqual(['--comment', "'a", "b'"]);
  });
  it('ends a token at the closing quote, as iptables does', () => {
    expect(texts('"ab"cd')).toEqual(['ab', 'cd']);
  });
  it('gives an empty argument for ""', () => {
    expect(texts('--comment "" -j X')).toEqual(['--comment', '', '-j', 'X']);
  });
  it('lets an unterminated quote swallow the newline', () => {
    expect(texts('--comment "abc')).toEqual(['--comment', 'abc\n']);
  });
  it('reports 1-based columns and offsets', () => {
    const [a, b] = tokenizeLine('-A "X Y"', 3, 100);
    expect(a!.span).toEqual({ line: 3, column: 1, offset: 100, length: 2 });
    expect(b!.span.column).toBe(4);
    expect(b!.quoted).toBe(true);
  });
});
