/**
 * The unit vectors of test/fixtures/linkerd/unit.json: proxy-init's multiport chunking, port-range
 * and port parsing (upstream's tests and outputs of the upstream functions).
 */
import { describe, expect, it } from 'vitest';
import { makeMultiportDestinations, parsePort, parsePortRange } from '../../../src/compile/linkerd/ports.js';
import { unit } from './fixtures.js';

describe('makeMultiportDestinations', () => {
  it.each(unit['multiport-chunking'].map((v) => [JSON.stringify(v.input), v] as const))('%s', (_name, v) => {
    expect(makeMultiportDestinations(v.input).chunks).toEqual(v.chunks);
  });

  it('logs every dropped entry as proxy-init does', () => {
    expect(makeMultiportDestinations(['22', 'nope', '25-23']).invalid).toEqual([
      'invalid port configuration of "nope": "nope" is not a valid lower-bound',
      'invalid port configuration of "25-23": "25-23": upper-bound must be greater than or equal to lower-bound',
    ]);
  });

  it('never puts more than 15 port slots in a chunk (a range takes two)', () => {
    const entries = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? `${i}-${i + 1}` : `${i}`));
    const { chunks } = makeMultiportDestinations(entries);
    for (const chunk of chunks) {
      const weight = chunk.reduce((w, d) => w + (d.includes(':') ? 2 : 1), 0);
      expect(weight).toBeLessThanOrEqual(15);
    }
    expect(chunks.flat()).toEqual(entries.map((e) => e.replace('-', ':')));
  });
});

describe('ParsePortRange', () => {
  it.each(unit['port-ranges'].map((v) => [JSON.stringify(v.input), v] as const))('%s', (_name, v) => {
    const r = parsePortRange(v.input);
    if (v.error !== undefined) {
      expect(r).toEqual({ ok: false, error: v.error });
      expect(v.error).toContain(v.errorContains);
    } else {
      expect(r).toEqual({ ok: true, value: { lowerBound: v.lower, upperBound: v.upper } });
    }
  });
});

describe('ParsePort', () => {
  it.each(unit.ports.map((v) => [JSON.stringify(v.input), v] as const))('%s', (_name, v) => {
    const r = parsePort(v.input);
    if (v.error !== undefined) expect(r).toEqual({ ok: false, error: v.error });
    else expect(r).toEqual({ ok: true, value: v.port });
  });
});
