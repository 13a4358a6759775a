/**
 * Eager validation of arbitrary constraints: a bad constraint throws when the arbitrary is built,
 * naming the arbitrary, the field and what was expected, as fast-check's own arbitraries do.
 *
 * @module
 * @internal
 */
import { diagnostic, NetfilterSimError } from '../model/errors.js';
import { TABLE_NAMES, type Family, type TableName } from '../model/types.js';

/**
 * Throws the error every arbitrary throws for a bad constraint: a `NetfilterSimError` with code
 * `BAD_CONFIG`, its message naming the arbitrary and the field.
 * @internal
 */
export function badConstraint(arbitrary: string, field: string, message: string): never {
  throw new NetfilterSimError(diagnostic('BAD_CONFIG', `${arbitrary}(): constraint "${field}" ${message}`, undefined, field));
}

/** Validates an optional address family. @internal */
export function checkFamily(arbitrary: string, family: unknown): Family {
  if (family === undefined) return 4;
  if (family !== 4 && family !== 6) badConstraint(arbitrary, 'family', `must be 4 or 6, got ${JSON.stringify(family)}`);
  return family;
}

/** Validates an optional integer in [min, max]. @internal */
export function checkInt(arbitrary: string, field: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    badConstraint(arbitrary, field, `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Validates an optional boolean. @internal */
export function checkBool(arbitrary: string, field: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') badConstraint(arbitrary, field, `must be a boolean, got ${JSON.stringify(value)}`);
  return value;
}

/** Validates that `min <= max` for a pair of already-validated bounds. @internal */
export function checkOrder(arbitrary: string, minField: string, min: number, maxField: string, max: number): void {
  if (min > max) badConstraint(arbitrary, minField, `(${min}) must not exceed "${maxField}" (${max})`);
}

/** Validates an optional list of table names (non-empty, known, no duplicates). @internal */
export function checkTables(arbitrary: string, value: unknown, fallback: readonly TableName[]): readonly TableName[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.length === 0) badConstraint(arbitrary, 'tables', 'must be a non-empty array of table names');
  for (const t of value) {
    if (!(TABLE_NAMES as readonly unknown[]).includes(t)) {
      badConstraint(arbitrary, 'tables', `has unknown table ${JSON.stringify(t)} (expected one of ${TABLE_NAMES.join(', ')})`);
    }
  }
  if (new Set(value).size !== value.length) badConstraint(arbitrary, 'tables', 'lists a table twice');
  return value as TableName[];
}

/** Validates an optional list of members of `known`. @internal */
export function checkSubset<T extends string>(arbitrary: string, field: string, value: unknown, known: readonly T[], fallback: readonly T[]): readonly T[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value)) badConstraint(arbitrary, field, 'must be an array');
  for (const v of value) {
    if (!(known as readonly unknown[]).includes(v)) {
      badConstraint(arbitrary, field, `has unsupported value ${JSON.stringify(v)} (expected one of ${known.join(', ')})`);
    }
  }
  return value as T[];
}

/** Rejects fields the constraints type does not have (a typo must not silently do nothing). @internal */
export function checkKnownKeys(arbitrary: string, constraints: object | undefined, known: readonly string[]): void {
  if (constraints === undefined) return;
  if (typeof constraints !== 'object' || constraints === null || Array.isArray(constraints)) {
    throw new NetfilterSimError(diagnostic('BAD_CONFIG', `${arbitrary}(): constraints must be an object`));
  }
  for (const k of Object.keys(constraints)) {
    if (!known.includes(k)) badConstraint(arbitrary, k, `is not a constraint of ${arbitrary}() (known: ${known.join(', ')})`);
  }
}
