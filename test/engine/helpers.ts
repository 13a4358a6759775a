/**
 * Test helpers: the vectors of test/fixtures (see the ATTRIBUTION.md of each folder).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The fixtures folder (read-only inputs). */
export const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

/** Reads a file under test/fixtures. */
export function fixture(path: string): string {
  return readFileSync(join(FIXTURES, path), 'utf8');
}
