/**
 * iptables' own extension vectors (`extensions/*.t` of iptables 1.8.11, GPL-2.0), read from the
 * shared corpus at test time and never copied: every OK line of a module we implement must
 * parse, pass the load-time checks in each listed chain and save to the expected text; every
 * FAIL line must be refused. Lines we knowingly do not support are listed in KNOWN_GAPS.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { describeShared, sharedPath } from '../shared-data.js';
import { readVectors, runRule, type VectorLine } from './harness.js';

const DIR_REL = 'corpus/iptables-extension-tests';
const DIR = sharedPath(DIR_REL);

/** Whole files that test rule-level options (the command parser's job), not extensions. */
const NOT_EXTENSIONS = new Set(['libipt_standard.t', 'libxt_standard.t']);

/**
 * `file:line` of vector lines we knowingly do not reproduce, with the reason. The vectors are
 * from iptables 1.8.11; we follow 1.8.9, checked against the binary (see
 * test/kernel/extensions.differential.test.ts).
 */
const KNOWN_GAPS: ReadonlyMap<string, string> = new Map([
  ['libxt_conntrack.t:17', '1.8.9 accepts --ctexpire 4:3 as given (1.8.11 refuses a reversed range)'],
  ['libxt_conntrack.t:26', '1.8.9 accepts --ctproto 0 and saves "--ctproto 0"'],
  ['libxt_conntrack.t:27', '1.8.9 accepts ! --ctproto 0'],
  ['libxt_conntrack.t:33', '1.8.9 accepts a reversed --ctorigsrcport range as given'],
  ['libxt_conntrack.t:39', '1.8.9 accepts a reversed --ctreplsrcport range as given'],
  ['libxt_conntrack.t:45', '1.8.9 accepts a reversed --ctorigdstport range as given'],
  ['libxt_conntrack.t:51', '1.8.9 accepts a reversed --ctrepldstport range as given'],
  ['libxt_tcp.t:10', '1.8.9 never prints a full port range, even negated: "-p tcp -m tcp" (nf_tables: "-p tcp")'],
  ['libxt_tcp.t:16', '1.8.9 never prints a full port range, even negated: "-p tcp -m tcp" (nf_tables: "-p tcp")'],
  ['libxt_udp.t:10', '1.8.9 never prints a full port range, even negated: "-p udp -m udp" (nf_tables: "-p udp")'],
  ['libxt_udp.t:14', '1.8.9 udp takes a reversed port range as given'],
  ['libxt_udp.t:16', '1.8.9 never prints a full port range, even negated: "-p udp -m udp" (nf_tables: "-p udp")'],
  ['libxt_udp.t:20', '1.8.9 udp takes a reversed port range as given'],
]);

describeShared('iptables extension vectors (upstream .t, read in place)', [DIR_REL], () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.t') && !NOT_EXTENSIONS.has(f)).sort();
  const cases: (VectorLine & { chain: string; family: 4 | 6 })[] = [];
  for (const f of files) {
    const family = f.startsWith('libip6t_') ? 6 : 4;
    for (const v of readVectors(f, readFileSync(join(DIR, f), 'utf8'))) {
      if (KNOWN_GAPS.has(`${f}:${v.line}`)) continue;
      for (const chain of v.chains) cases.push({ ...v, chain, family });
    }
  }
  it('finds the vector files', () => {
    expect(files.length).toBeGreaterThan(15);
  });
  it('every known gap still names a line that exists', () => {
    for (const k of KNOWN_GAPS.keys()) {
      const [f, line] = k.split(':') as [string, string];
      expect(files, k).toContain(f);
      const text = readFileSync(join(DIR, f), 'utf8').split('\n')[Number(line) - 1];
      expect(text, k).toMatch(/;/);
    }
  });
  it.each(cases.map((c) => [`${c.file}:${c.line} ${c.chain} ${c.rule}`, c] as const))('%s', (_name, c) => {
    const r = runRule(c.rule, { family: c.family, table: c.table, chain: c.chain });
    if (c.ok) {
      expect(r).toEqual({ ok: true, saved: c.expected });
    } else {
      expect(r.ok, r.ok ? `accepted as: ${r.saved}` : '').toBe(false);
    }
  });
});
