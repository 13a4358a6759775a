/**
 * Test helpers: the shared vectors.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The shared vectors folder (read-only inputs). */
export const SHARED = join(import.meta.dirname, '..', '..', '..', 'shared');

/** Reads a file under shared/. */
export function shared(path: string): string {
  return readFileSync(join(SHARED, path), 'utf8');
}
