// The typed error a call throws, for tests that look at its diagnostics.
import { NetfilterSimError } from '../src/model/errors.js';

/** The NetfilterSimError `f` throws; any other throw is passed on, and no throw fails the test. */
export function thrown(f: () => unknown): NetfilterSimError {
  try {
    f();
  } catch (e) {
    if (e instanceof NetfilterSimError) return e;
    throw e;
  }
  throw new Error('expected a NetfilterSimError, and nothing was thrown');
}
