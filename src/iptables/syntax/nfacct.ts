/**
 * Reads the names of nfacct accounting objects, as `nfacct list` prints them
 * (`{ pkts = 00000000000000000000, bytes = 00000000000000000000 } = NAME;`) or one name a line.
 *
 * @module
 */
import { diagnostic, NetfilterSimError } from '../../model/errors.js';
import { expectArgument } from '../../model/guard.js';
import { utf8Length } from '../../model/limits.js';

/** `NFACCT_NAME_MAX` - 1: the longest object name. */
export const NFACCT_MAX_NAME = 31;

/**
 * The object names in `nfacct list` output (plain or one name per line; `#` comments and blank
 * lines are skipped). A name longer than 31 bytes or with blanks is refused with a
 * `NetfilterSimError` naming the line.
 *
 * @example
 * ```ts
 * parseNfacctList('{ pkts = 00000000000000000000, bytes = 00000000000000000000 } = http;\n'); // ['http']
 * ```
 */
export function parseNfacctList(text: string, file = '<nfacct>'): string[] {
  expectArgument(text, 'string', 'text');
  expectArgument(file, 'string', 'file');
  const names: string[] = [];
  let offset = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    const start = offset;
    offset += raw.length + 1;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const listed = /^\{[^}]*\}\s*=\s*(.*?);?\s*$/.exec(trimmed);
    const name = listed ? listed[1]! : trimmed;
    const col = line.indexOf(name);
    const span = { line: i + 1, column: col + 1, offset: start + col, length: Math.max(1, name.length) };
    if (name === '' || /\s/.test(name)) throw new NetfilterSimError([diagnostic('BAD_VALUE', `"${trimmed}" is not an nfacct object name (expected NAME, or a line of nfacct list)`, span, trimmed)], { file });
    if (utf8Length(name) > NFACCT_MAX_NAME) throw new NetfilterSimError([diagnostic('BAD_VALUE', `nfacct object name "${name}" is longer than ${NFACCT_MAX_NAME} bytes`, span, name)], { file });
    names.push(name);
  });
  return names;
}
