import type { NftablesRuleBuilder } from '../../../src/compile/istio/nft-transaction.js';

/** TestBuilder in tools/istio-nftables/pkg/builder/nftables_builder_test.go: the builder calls behind each golden. */
export const T = 'inet-table';
export const CH = 'test-chain';
export const BUILDER_CASES: [string, (b: NftablesRuleBuilder) => void][] = [
  ['add-table-chain', () => {}],
  ['append-single-v4', (b) => b.appendRule(CH, T, 'ip', 'daddr', '127.0.0.1', 'return')],
  ['append-single-v6', (b) => b.appendV6RuleIfSupported(CH, T, 'ip6', 'daddr', '::ffff:7f00:1', 'return')],
  ['append-multi', (b) => {
    b.appendRule(CH, T, 'tcp', 'dport', '15008', 'return');
    b.appendRule(CH, T, 'meta', 'l4proto', 'tcp', 'jump', CH);
    b.appendRule(CH, T, 'meta', 'l4proto', 'tcp', 'redirect', 'to', ':15001');
  }],
  ['insert-single-v4', (b) => {
    b.appendRule(CH, T, 'tcp', 'dport', '15008', 'return');
    b.insertRule(CH, T, 0, 'ip', 'daddr', '127.0.0.1', 'return');
  }],
  ['insert-single-v6', (b) => {
    b.appendRule(CH, T, 'tcp', 'dport', '15008', 'return');
    b.insertV6RuleIfSupported(CH, T, 0, 'ip6', 'daddr', '::ffff:7f00:1', 'return');
  }],
  ['insert-multi', (b) => {
    b.appendRule(CH, T, 'tcp', 'dport', '15008', 'return');
    b.insertRule(CH, T, 0, 'meta', 'l4proto', 'tcp', 'jump', CH);
    b.insertRule(CH, T, 1, 'meta', 'l4proto', 'tcp', 'redirect', 'to', ':15001');
  }],
  ['append-insert-multi', (b) => {
    b.appendRule(CH, T, 'tcp', 'dport', '15008', 'return');
    b.insertRule(CH, T, 0, 'meta', 'l4proto', 'tcp', 'jump', CH);
    b.appendRule(CH, T, 'meta', 'l4proto', 'tcp', 'redirect', 'to', ':15001');
  }],
  ['multi-rules-v4-v6', (b) => {
    b.appendRule(CH, T, 'ip', 'daddr', '127.0.0.1', 'return');
    b.insertRule(CH, T, 0, 'tcp', 'dport', '15008', 'return');
    b.appendV6RuleIfSupported(CH, T, 'ip6', 'daddr', '::ffff:7f00:1', 'return');
  }],
];
