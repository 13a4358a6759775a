import { describe, expect, it } from 'vitest';
import { IptablesRuleBuilder } from '../../../src/compile/istio/builder.js';
import { fixture } from './vectors.js';

type Op = (b: IptablesRuleBuilder) => void;
const fb = (x: string): string[] => ['-f', 'foo', '-b', x];

/** TestBuilder in tools/istio-iptables/pkg/builder/iptables_builder_test.go, one row per case. */
const CASES: [string, boolean, boolean, Op, boolean][] = [
  ['insert-single-v4', true, false, (b) => b.insertRuleV4('chain', 'table', 2, fb('bar')), true],
  ['insert-single-v6', false, true, (b) => b.insertRuleV6('chain', 'table', 2, fb('bar')), true],
  ['append-single-v4', true, false, (b) => b.appendRuleV4('chain', 'table', fb('bar')), true],
  ['append-single-v6', false, true, (b) => b.appendRuleV6('chain', 'table', fb('bar')), true],
  [
    'append-multi-v4',
    true,
    false,
    (b) => {
      b.appendRuleV4('chain', 'table', fb('bar'));
      b.appendRuleV4('chain', 'table', ['-f', 'fu', '-b', 'bar']);
      b.appendRuleV4('chain', 'table', fb('baz'));
    },
    true,
  ],
  [
    'append-multi-v6',
    false,
    true,
    (b) => {
      b.appendRuleV6('chain', 'table', fb('bar'));
      b.appendRuleV6('chain', 'table', ['-f', 'fu', '-b', 'bar']);
      b.appendRuleV6('chain', 'table', fb('baz'));
    },
    true,
  ],
  [
    'insert-multi-v4',
    true,
    false,
    (b) => {
      b.insertRuleV4('chain', 'table', 1, fb('bar'));
      b.insertRuleV4('chain', 'table', 2, fb('baaz'));
      b.insertRuleV4('chain', 'table', 3, fb('baz'));
    },
    true,
  ],
  [
    'insert-multi-v6',
    false,
    true,
    (b) => {
      b.insertRuleV6('chain', 'table', 1, fb('bar'));
      b.insertRuleV6('chain', 'table', 2, fb('baaz'));
      b.insertRuleV6('chain', 'table', 3, fb('baz'));
    },
    true,
  ],
  [
    'append-insert-multi-v4',
    true,
    false,
    (b) => {
      b.appendRuleV4('chain', 'table', fb('bar'));
      b.insertRuleV4('chain', 'table', 2, fb('bar'));
      b.appendRuleV4('chain', 'table', fb('baz'));
    },
    true,
  ],
  [
    'append-insert-multi-v6',
    false,
    true,
    (b) => {
      b.appendRuleV6('chain', 'table', fb('bar'));
      b.insertRuleV6('chain', 'table', 2, fb('bar'));
      b.appendRuleV6('chain', 'table', fb('baz'));
    },
    true,
  ],
  [
    'multi-rules-new-chain',
    true,
    true,
    (b) => {
      b.appendRuleV4('chain', 'table', fb('bar'));
      b.insertRuleV4('chain', 'table', 2, fb('bar'));
      b.appendRuleV4('chain', 'table', fb('baz'));
      b.appendRuleV6('chain', 'table', fb('bar'));
      b.insertRuleV6('chain', 'table', 2, fb('bar'));
      b.insertRuleV6('chain', 'table', 1, fb('bar'));
      b.appendRuleV4('PREROUTING', 'nat', fb('bar'));
    },
    false,
  ],
];

const lines = (rules: string[][]): string => rules.map((r) => `${r.join(' ')}\n`).join('');

describe('the rule builder reproduces the builder goldens', () => {
  it.each(CASES)('%s', (name, expectV4, expectV6, op, shared) => {
    const b = new IptablesRuleBuilder({ enableIPv6: true });
    op(b);
    const golden = (family: string): string => (shared ? name.replace('-v4', '').replace('-v6', '') : `${name}-${family}`);
    for (const [family, expected, rules, restore] of [
      ['v4', expectV4, b.buildV4(), b.buildV4Restore()],
      ['v6', expectV6, b.buildV6(), b.buildV6Restore()],
    ] as const) {
      if (expected) {
        expect(lines(rules)).toBe(fixture(`builder/${golden(family)}.golden`));
        expect(restore).toBe(fixture(`builder/${golden(family)}-restore.golden`));
      } else {
        expect(rules).toEqual([]);
        expect(restore).toBe('');
      }
    }
  });

  it('writes nothing for IPv6 unless IPv6 is enabled', () => {
    const b = new IptablesRuleBuilder({ enableIPv6: false });
    b.appendRule('chain', 'table', fb('bar'));
    expect(b.buildV6()).toEqual([]);
    expect(b.buildV4()).toHaveLength(2);
  });

  it('declares jump targets that receive no rule', () => {
    const b = new IptablesRuleBuilder({ enableIPv6: false });
    b.appendRuleV4('PREROUTING', 'raw', ['-j', 'ISTIO_X']);
    expect(b.buildV4Restore()).toBe('* raw\n-N ISTIO_X\n-A PREROUTING -j ISTIO_X\nCOMMIT\n');
  });

  it('builds check, cleanup and guardrail commands as upstream (TestCheckRulesV4V6, TestCleanupRulesV4V6)', () => {
    const b = new IptablesRuleBuilder({ enableIPv6: true });
    b.insertRuleV4('chain', 'table', 2, fb('bar'));
    b.appendRuleV4('chain2', 'table2', fb('baz'));
    b.appendRuleV4('chain2', 'table', [...fb('baz'), '-j', 'chain']);
    expect(b.buildCheckV4()).toEqual([
      ['-t', 'table', '-C', 'chain', '-f', 'foo', '-b', 'bar'],
      ['-t', 'table2', '-C', 'chain2', '-f', 'foo', '-b', 'baz'],
      ['-t', 'table', '-C', 'chain2', '-f', 'foo', '-b', 'baz', '-j', 'chain'],
    ]);
    const c = new IptablesRuleBuilder({ enableIPv6: true });
    c.appendRuleV4('ISTIO_TEST', 'table', fb('bar'));
    c.insertRuleV4('chain', 'table', 1, [...fb('bar'), '-j', 'ISTIO_TEST']);
    c.appendRuleV4('chain', 'table', fb('bar'));
    expect(c.buildCleanupV4()).toEqual([
      ['-t', 'table', '-D', 'chain', '-f', 'foo', '-b', 'bar'],
      ['-t', 'table', '-D', 'chain', '-f', 'foo', '-b', 'bar', '-j', 'ISTIO_TEST'],
      ['-t', 'table', '-F', 'chain'],
      ['-t', 'table', '-X', 'chain'],
      ['-t', 'table', '-F', 'ISTIO_TEST'],
      ['-t', 'table', '-X', 'ISTIO_TEST'],
    ]);
    expect(c.buildGuardrails()[0]).toEqual(['-t', 'filter', '-I', 'INPUT', '1', '-p', 'tcp', '-j', 'DROP']);
    expect(c.buildCleanupGuardrails()[5]).toEqual(['-t', 'filter', '-D', 'OUTPUT', '-p', 'udp', '-j', 'DROP']);
  });
});
