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
  const shown = typeof value === 'string' ? JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value) : typeof value === 'number' ? String(value) : kindOf(value);
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

/**
 * The shape of an option object's field, for {@link expectShape}: its kinds (with `'undefined'`
 * when it may be left out), the words it may be (`oneOf`), and for an object its fields, for an
 * array its items, for a record (name → value) its values.
 */
export type Shape = ArgumentKind | readonly ArgumentKind[] | ShapeSpec;

/** See {@link Shape}. */
export interface ShapeSpec {
  readonly kind: ArgumentKind | readonly ArgumentKind[];
  /** The values a string (or number) may be. */
  readonly oneOf?: readonly unknown[];
  /** When the value is an object: its fields' shapes. */
  readonly fields?: Readonly<Record<string, Shape>>;
  /** When the value is an array: every item's shape. */
  readonly items?: Shape;
  /** When the value is an object used as a record: every value's shape. */
  readonly values?: Shape;
}

/** Most items of an array {@link expectShape} looks at (a longer list is checked where it is read). */
const MAX_SHAPE_ITEMS = 4096;

/**
 * Throws `BAD_ARGUMENT` naming the field's path (`options.interfaces.eth0[1]`) unless `value`
 * has `shape`: kinds, words, and the shapes of its fields, items or values, walked to the end.
 *
 * @example
 * ```ts
 * expectShape(options, { kind: 'object', fields: { from: { kind: 'string', oneOf: ['local', 'remote'] } } }, 'spec');
 * ```
 */
export function expectShape(value: unknown, shape: Shape, what: string): void {
  const spec: ShapeSpec = typeof shape === 'string' || Array.isArray(shape) ? { kind: shape as ArgumentKind | readonly ArgumentKind[] } : (shape as ShapeSpec);
  expectArgument(value, spec.kind, what);
  if (value === undefined || value === null) return;
  if (spec.oneOf !== undefined && (typeof value === 'string' || typeof value === 'number')) expectOneOf(value, spec.oneOf, what);
  if (Array.isArray(value)) {
    if (spec.items !== undefined) {
      const n = Math.min(value.length, MAX_SHAPE_ITEMS);
      for (let i = 0; i < n; i++) expectShape(value[i], spec.items, `${what}[${i}]`);
    }
    return;
  }
  if (typeof value !== 'object') return;
  const o = value as Record<string, unknown>;
  if (spec.fields !== undefined) for (const [k, s] of Object.entries(spec.fields)) expectShape(o[k], s, `${what}.${k}`);
  if (spec.values !== undefined) for (const k of Object.keys(o)) expectShape(o[k], spec.values, `${what}.${k}`);
}

/**
 * Throws `BAD_ARGUMENT` naming the field unless every field of `value` that `template` has (a
 * complete default configuration) is absent or of the template's kind: an integer where the
 * default is one, a string, a boolean, an array whose items have `itemKinds[field]` (default
 * `string`). Fields the template lacks are left to the caller.
 */
export function expectFieldsLike(value: unknown, template: object, what: string, itemKinds: Readonly<Record<string, ArgumentKind>> = {}): void {
  expectArgument(value, 'object', what);
  const o = value as Record<string, unknown>;
  for (const [k, d] of Object.entries(template)) {
    const v = o[k];
    if (v === undefined) continue;
    const kind: ArgumentKind = Array.isArray(d) ? 'array' : typeof d === 'number' ? (Number.isInteger(d) ? 'integer' : 'number') : typeof d === 'boolean' ? 'boolean' : typeof d === 'string' ? 'string' : 'object';
    expectShape(v, kind === 'array' ? { kind, items: itemKinds[k] ?? 'string' } : kind, `${what}.${k}`);
  }
}
