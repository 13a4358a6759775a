/**
 * Our own extension vectors, `test/vectors/extensions/NAME.t` in the iptables `.t` shape
 * (`:CHAIN,…`, `*table`, `rule;saved|=;OK|FAIL`). Files named `*-ipv6.t` are read as ip6tables
 * rules. Each rule is tried in every listed chain: OK lines must parse, pass the load-time
 * checks and save to the expected text; FAIL lines must be refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MATCHES, TARGETS } from '../../src/iptables/extensions/registry.js';
import { readVectors, runRule } from './harness.js';

const DIR = fileURLToPath(new URL('../vectors/extensions/', import.meta.url));
const files = readdirSync(DIR).filter((f) => f.endsWith('.t')).sort();

const cases = files.flatMap((f) => {
  const family = f.endsWith('-ipv6.t') ? 6 : 4;
  return readVectors(f, readFileSync(join(DIR, f), 'utf8')).flatMap((v) => v.chains.map((chain) => ({ ...v, chain, family: family as 4 | 6 })));
});

describe('extension vectors (test/vectors/extensions)', () => {
  it('has a vector file for every registered extension', () => {
    const names = new Set(files.map((f) => f.replace(/(-ipv6)?\.t$/, '')));
    // `set` and `SET` name ipsets, which a vector line cannot create in the kernel's fresh
    // namespace (the kernel refuses a rule naming a missing set): their rules are run against the
    // kernel, with the sets created first, in test/kernel/ipset.differential.test.ts.
    // `rateest` names an estimator that an earlier RATEEST rule must create (and iptables-save
    // prints some of its rules in a form iptables-restore refuses): test/extensions/rateest.test.ts
    // and the rateest section of test/kernel/extensions.differential.test.ts.
    const elsewhere = new Set(['set', 'SET', 'rateest']);
    const missing = [...new Set([...MATCHES.values(), ...TARGETS.values()].map((e) => e.name))].filter((n) => !names.has(n) && !elsewhere.has(n));
    expect(missing).toEqual([]);
  });
  it.each(cases.map((c) => [`${c.file}:${c.line} ${c.table}/${c.chain} ${c.rule}`, c] as const))('%s', (_n, c) => {
    const r = runRule(c.rule, { family: c.family, table: c.table, chain: c.chain });
    if (c.ok) {
      expect(r).toEqual({ ok: true, saved: c.expected });
      // The saved form is canonical: parsing and printing it again changes nothing. Except where
      // iptables-save 1.8.9 itself prints what iptables-restore refuses: SNAT/MASQUERADE lose a
      // `/base` port and save it as `/0`, which does not load again.
      if (!/-j (SNAT|MASQUERADE) .*\/0\b/.test(c.expected!)) {
        expect(runRule(c.expected!, { family: c.family, table: c.table, chain: c.chain })).toEqual(r);
      }
    } else expect(r.ok, r.ok ? `accepted as: ${r.saved}` : '').toBe(false);
  });
});
