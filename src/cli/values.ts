/**
 * Reading `parseArgs` values: a flag's one string, or every string of a repeatable flag.
 *
 * @internal
 * @module
 */

/** What `parseArgs` gives back for the options of a command. */
export type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** The string given to `--k`, if any. */
export function str(v: Values, k: string): string | undefined {
  const x = v[k];
  return typeof x === 'string' ? x : undefined;
}

/** Every string given to a repeatable `--k`, in order. */
export function list(v: Values, k: string): string[] {
  const x = v[k];
  if (x === undefined) return [];
  return (Array.isArray(x) ? x : [x]).filter((s): s is string => typeof s === 'string');
}
