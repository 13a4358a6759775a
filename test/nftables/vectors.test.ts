/**
 * Istio's native nftables goldens (sidecar capture, builder, ambient): every nft script loads,
 * and `formatNftRuleset` prints exactly what `nft list ruleset` printed after the kernel loaded
 * it (`kernel` in cases.json). Where the kernel refused the script, we refuse it on the same line.
 *
 * The vectors are those of test/fixtures/istio-nftables and test/fixtures/istio-ambient (Apache-2.0,
 * see the ATTRIBUTION.md of each).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NetfilterSimError } from '../../src/model/errors.js';
import { formatNftRuleset } from '../../src/nftables/index.js';

interface KernelListing {
  readonly accepted: boolean;
  readonly list?: string;
  readonly error?: string;
  readonly setup?: string | null;
}
interface VectorCase {
  readonly file: string;
  readonly kernel: KernelListing;
}


function nftCases(dir: string): [string, VectorCase][] {
  const cases = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as Record<string, VectorCase>;
  return Object.entries(cases).filter(([k, v]) => k !== '_meta' && /nft/.test(k) && typeof v.kernel === 'object');
}

for (const name of ['istio-nftables', 'istio-ambient']) {
  const dir = join(import.meta.dirname, '../fixtures', name);
  describe(`${name} vectors: fmt equals the kernel's nft list ruleset`, () => {
    const cases = nftCases(dir);
    it('has the nft cases', () => {
      expect(cases.length).toBeGreaterThanOrEqual(name === 'istio-nftables' ? 31 : 10);
    });
    it.each(cases)('%s', (_key, c) => {
      const text = (c.kernel.setup ?? '') + readFileSync(join(dir, c.file), 'utf8');
      if (c.kernel.accepted) {
        expect(formatNftRuleset(text, { file: '/dev/stdin' })).toBe(c.kernel.list);
        return;
      }
      // nft: "/dev/stdin:19:53-56: Error: …" — the same line must be refused.
      const line = Number(/^[^:]*:(\d+):/.exec(c.kernel.error ?? '')?.[1]);
      let thrown: unknown;
      try {
        formatNftRuleset(text, { file: '/dev/stdin' });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(NetfilterSimError);
      expect((thrown as NetfilterSimError).span?.line, (thrown as Error).message).toBe(line);
    });
  });
}
