// The canonical printer's round-trip law over generated rule sets: print(parse(print(r))) === print(r).
import { test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import { ruleset, rulesetText } from '../../src/arbitraries/index.js';
import { explainCounterexample } from '../../src/laws/counterexample.js';
import { printParseRoundTrip } from '../../src/laws/round-trip.js';
import { printIptablesSave } from '../../src/iptables/print/save.js';
import { parseIptablesSave } from '../../src/iptables/syntax/save.js';

describe.each([4, 6] as const)('IPv%s', (family) => {
  test.prop([ruleset({ family })], { seed: 7 + family, numRuns: 300 })('print(parse(print(r))) === print(r)', (r) => {
    const cx = printParseRoundTrip(r);
    if (cx) throw new Error(explainCounterexample(cx));
  });

  test.prop([ruleset({ family, maxCommentLength: 255, maxChains: 8, maxRules: 10, maxMatches: 6 })], { seed: 70 + family, numRuns: 60 })(
    'print(parse(print(r))) === print(r) for large rule sets with long comments',
    (r) => {
      const cx = printParseRoundTrip(r);
      if (cx) throw new Error(explainCounterexample(cx));
    },
  );

  test.prop([rulesetText({ family, format: 'restore' })], { seed: 700 + family, numRuns: 100 })(
    'restore text written the way generators write it loads to its canonical form',
    (restore) => {
      // Parsing restore input and printing it gives iptables-save text that is a fixed point.
      const r = parseIptablesSave(restore, { family, mode: 'strict' });
      expect(r.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
      const printed = printIptablesSave(r.ruleset);
      expect(printIptablesSave(parseIptablesSave(printed, { family, mode: 'strict' }).ruleset)).toBe(printed);
    },
  );
});
