/**
 * `-m u32` (`libxt_u32.c`, kernel `xt_u32.c`): up to 10 `&&`-joined tests, each reading a 32-bit
 * word of the packet at a location computed with `&`, `<<`, `>>` and `@`, compared with a list
 * of values and ranges. iptables-save prints every number in hex, quoted.
 *
 * The engine's packets have no bytes to read: the tests are taken to fail (so only `!` holds) —
 * an assumption the trace shows.
 *
 * @module
 */
import type { MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, badValue, requireOption, strtoulPrefix, unknownOption, UINT32_MAX } from '../values.js';

/** `XT_U32_MAXSIZE`. */
const MAXSIZE = 10;

/** One u32 test: numbers joined by operators, then values. */
export interface U32Test {
  readonly location: readonly { readonly op: '' | '&' | '<<' | '>>' | '@'; readonly number: number }[];
  readonly values: readonly { readonly min: number; readonly max: number }[];
}

/** Options of `-m u32`. */
export interface U32Options {
  readonly negated: boolean;
  readonly tests: readonly U32Test[];
}

/** `u32_parse`, state machine and messages included. */
function parseU32(o: OptionOccurrence): U32Test[] {
  const s = argOf(o);
  const tests: U32Test[] = [];
  let loc: { op: U32Test['location'][number]['op']; number: number }[] = [];
  let vals: { min: number; max: number }[] = [];
  let state = 0;
  let i = 0;
  const err = (m: string): never => badValue(o, `u32: at char ${i}: ${m}`);
  const num = (): number => {
    const r = strtoulPrefix(s.slice(i));
    if (!r || r.value > UINT32_MAX) err('not a number or out of range');
    i += r!.end;
    return r!.value;
  };
  for (;;) {
    while (/\s/.test(s[i] ?? '')) i++;
    if (i >= s.length) {
      if (state === 0) badValue(o, 'u32: abrupt end of input after location specifier');
      if (vals.length === 0) badValue(o, 'u32: test ended with no value specified');
      tests.push({ location: loc, values: vals });
      if (tests.length > MAXSIZE) err('too many "&&"s');
      return tests;
    }
    if (state === 0) {
      if (s[i] === '=') {
        if (loc.length === 0) err('location spec missing');
        i++;
        state = 1;
        continue;
      }
      let op: U32Test['location'][number]['op'] = '';
      if (loc.length !== 0) {
        const c = s[i];
        if (c === '&') op = '&';
        else if (c === '<') {
          if (s[++i] !== '<') err("a second '<' was expected");
          op = '<<';
        } else if (c === '>') {
          if (s[++i] !== '>') err("a second '>' was expected");
          op = '>>';
        } else if (c === '@') op = '@';
        else err('operator expected');
        i++;
      }
      loc.push({ op, number: num() });
      if (loc.length > MAXSIZE) err('too many operators');
    } else if (s[i] === '&') {
      if (s[++i] !== '&') err("a second '&' was expected");
      if (vals.length === 0) err('value spec missing');
      tests.push({ location: loc, values: vals });
      if (tests.length > MAXSIZE) err('too many "&&"s');
      i++;
      state = 0;
      loc = [];
      vals = [];
    } else {
      if (vals.length > 0) {
        if (s[i] !== ',') err('expected "," or "&&"');
        i++;
      }
      const min = num();
      while (/\s/.test(s[i] ?? '')) i++;
      let max = min;
      if (s[i] === ':') {
        i++;
        max = num();
      }
      vals.push({ min, max });
      if (vals.length > MAXSIZE) err('too many ","s');
    }
  }
}

const h = (n: number): string => `0x${n.toString(16)}`;

/** `-m u32`. */
export const u32: MatchExtension<U32Options> = {
  kind: 'match',
  name: 'u32',
  family: 'both',
  options: [{ name: 'u32', arg: true, negatable: true }],
  parse(occurrences, ctx) {
    requireOption(ctx, occurrences, 'u32', 'u32');
    let r: U32Options = { negated: false, tests: [] };
    for (const o of occurrences) {
      if (o.name !== 'u32') unknownOption('u32', o);
      r = { negated: o.negated, tests: parseU32(o) };
    }
    return r;
  },
  save(o) {
    const tests = o.tests.map((t) =>
      `${t.location.map((l) => `${l.op}${h(l.number)}`).join('')}=${t.values.map((v) => (v.min === v.max ? h(v.min) : `${h(v.min)}:${h(v.max)}`)).join(',')}`);
    return `${o.negated ? '! ' : ''}--u32 "${tests.join('&&')}"`;
  },
  lower(o) {
    const v = o.negated;
    return () => v;
  },
  evaluates: 'assumed',
  assumption() {
    return 'payload bytes are not modelled: the u32 tests are taken to fail';
  },
};
