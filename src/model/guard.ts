/**
 * Argument checks for the public entry points. Callers from plain JavaScript get a
 * {@link NetfilterSimError} with code `BAD_ARGUMENT` naming the argument and what it should be,
 * instead of a `TypeError` from deep inside.
 *
 * @module
 */
import { NetfilterSimError, diagnostic } from './errors.js';
import { MAX_ARGS } from './limits.js';

/** What an argument may be. `array` and `object` are told apart; `object` excludes `null` and arrays. */
export type ArgumentKind = 'string' | 'number' | 'integer' | 'boolean' | 'bigint' | 'function' | 'array' | 'object' | 'undefined' | 'null';

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : Number.isFinite(value) ? (Number.isInteger(value) ? 'an integer' : 'a number') : String(value);
  if (typeof value === 'object') return 'an object';
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}

function fits(value: unknown, kind: ArgumentKind): boolean {
  switch (kind) {
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'integer':
      return Number.isSafeInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'null':
      return value === null;
    default:
      return typeof value === kind;
  }
}

/**
 * Throws `BAD_ARGUMENT` unless `value` is one of `kinds`. `what` names the argument as the caller
 * knows it (`"text"`, `"options.family"`).
 *
 * @example
 * ```ts
 * expectArgument(text, 'string', 'text');
 * expectArgument(options, ['object', 'undefined'], 'options');
 * ```
 */
export function expectArgument(value: unknown, kinds: ArgumentKind | readonly ArgumentKind[], what: string): void {
  if (typeof kinds === 'string') {
    if (fits(value, kinds)) return;
  } else for (const k of kinds) if (fits(value, k)) return;
  const list: readonly ArgumentKind[] = typeof kinds === 'string' ? [kinds] : kinds;
  const want = list.filter((k) => k !== 'undefined').map((k) => (k === 'null' ? 'null' : k === 'integer' || k === 'array' || k === 'object' ? `an ${k}` : `a ${k}`));
  const optional = list.includes('undefined') ? ' (or nothing)' : '';
  throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `${what} must be ${want.join(' or ')}${optional}, not ${kindOf(value)}`));
}

/** Throws `BAD_ARGUMENT` unless every element of `values` is a string. */
export function expectStrings(values: readonly unknown[], what: string): void {
  for (let i = 0; i < values.length; i++) {
    if (typeof values[i] !== 'string') expectArgument(values[i], 'string', `${what}[${i}]`);
  }
}

/**
 * Throws unless `argv` is an array of at most {@link MAX_ARGS} strings: `BAD_ARGUMENT` for a wrong
 * type (a string where an array is expected would otherwise be read one character at a time),
 * `LIMIT_EXCEEDED` past the limit.
 */
export function expectArgv(argv: unknown, what: string): void {
  expectArgument(argv, 'array', what);
  const list = argv as readonly unknown[];
  if (list.length > MAX_ARGS) {
    throw new NetfilterSimError(diagnostic('LIMIT_EXCEEDED', `${what} has ${list.length} arguments; the most netfilter-sim reads is ${MAX_ARGS}`));
  }
  expectStrings(list, what);
}

/** Throws `BAD_ARGUMENT` unless `value` is one of `allowed` (`undefined` passes when `optional`). */
export function expectOneOf(value: unknown, allowed: readonly unknown[], what: string, optional = false): void {
  if ((optional && value === undefined) || allowed.includes(value)) return;
  const shown = typeof value === 'string' ? JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value) : kindOf(value);
  throw new NetfilterSimError(diagnostic('BAD_ARGUMENT', `${what} must be ${allowed.map((a) => JSON.stringify(a)).join(' or ')}${optional ? ' (or nothing)' : ''}, not ${shown}`));
}

/**
 * Throws `BAD_ARGUMENT` unless `value` is an object whose listed fields have the listed kinds
 * (`{ tables: 'array' }` for a rule set): enough to tell a wrong value from a right one at the
 * entry point, without walking it.
 */
export function expectFields(value: unknown, fields: Readonly<Record<string, ArgumentKind | readonly ArgumentKind[]>>, what: string): void {
  expectArgument(value, 'object', what);
  for (const [k, kinds] of Object.entries(fields)) expectArgument((value as Record<string, unknown>)[k], kinds, `${what}.${k}`);
}

/** Throws `BAD_ARGUMENT` unless every element of `values` is a non-null object (trace events, rules). */
export function expectObjects(values: readonly unknown[], what: string): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== 'object' || v === null || Array.isArray(v)) expectArgument(v, 'object', `${what}[${i}]`);
  }
}
