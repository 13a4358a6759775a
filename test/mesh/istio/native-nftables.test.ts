import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileIstio } from '../../../src/compile/istio/compile.js';
import { formatIstioResult } from '../../../src/compile/istio/format.js';
import { NftablesRuleBuilder } from '../../../src/compile/istio/nft-transaction.js';
import { NetfilterSimError } from '../../../src/model/errors.js';
import { BUILDER_CASES, CH, T } from './nft-builder-cases.js';
import { toIstioConfig } from './vectors.js';

const DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'istio-nftables');
const read = (f: string): string => readFileSync(join(DIR, f), 'utf8');
const cases = Object.entries(JSON.parse(read('cases.json')) as Record<string, { file: string; overrides: Record<string, unknown> }>)
  .filter(([k]) => k.startsWith('capture-nft/'))
  .map(([k, v]) => [k.slice('capture-nft/'.length), v] as const);

/** constructTestConfig() of tools/istio-nftables/pkg/capture/run_test.go (cases.json _meta). */
const BASE = {
  ProxyPort: '15001', InboundCapturePort: '15006', InboundTunnelPort: '15008', ProxyUID: '1337', ProxyGID: '1337',
  InboundTProxyMark: '1337', InboundTProxyRouteTable: '133', OwnerGroupsInclude: '*', HostIPv4LoopbackCidr: '127.0.0.1/32',
};

describe('istio-iptables --native-nftables: the capture goldens', () => {
  it('has the 22 capture cases', () => expect(cases).toHaveLength(22));

  it.each(cases)('%s: the nft -f transaction, byte for byte', (_n, c) => {
    const r = compileIstio({ ...toIstioConfig({ ...BASE, ...c.overrides }), nativeNftables: true });
    expect(formatIstioResult(r, 'commands')).toBe(read(c.file));
  });

  it.each(cases.filter(([, c]) => (c as { kernel?: { accepted: boolean } }).kernel?.accepted === true))('%s: save equals what nft list ruleset listed', (_n, c) => {
    const r = compileIstio({ ...toIstioConfig({ ...BASE, ...c.overrides }), nativeNftables: true });
    expect(formatIstioResult(r, 'save')).toBe((c as unknown as { kernel: { list: string } }).kernel.list);
  });

  it('refuses releases before 1.27', () => {
    expect(() => compileIstio({ nativeNftables: true }, { upstreamVersion: '1.26' })).toThrow(/from Istio 1.27/);
  });
});

describe('the nftables rule builder: the builder goldens', () => {
  const goldens = readdirSync(join(DIR, 'builder-nft')).filter((f) => f.endsWith('.golden')).map((f) => f.slice(0, -'.golden'.length));

  it('has a case for each of the 9 builder goldens', () => {
    expect(goldens).toHaveLength(9);
    expect(BUILDER_CASES.map(([n]) => n).sort()).toEqual([...goldens].sort());
  });

  it.each(BUILDER_CASES)('%s: the knftables fake dump, byte for byte', (name, calls) => {
    const b = new NftablesRuleBuilder({ enableIPv6: true });
    calls(b);
    expect(b.dump(T, [{ name: CH }])).toBe(read(`builder-nft/${name}.golden`));
  });

  it('adds no IPv6 rule unless IPv6 is enabled', () => {
    const b = new NftablesRuleBuilder({ enableIPv6: false });
    b.appendV6RuleIfSupported(CH, T, 'ip6', 'daddr', '::1', 'return').insertV6RuleIfSupported(CH, T, 0, 'ip6', 'daddr', '::2', 'return');
    expect(b.rulesOf(T)).toEqual([]);
    expect(b.dump(T, [{ name: CH }])).toBe(read('builder-nft/add-table-chain.golden'));
  });

  it('writes base chains with their hook, chains in name order', () => {
    const b = new NftablesRuleBuilder({ enableIPv6: false });
    b.appendRule('output', T, 'counter', 'jump', 'istio-output');
    b.appendRule('istio-output', T, 'counter', 'return');
    expect(b.dump(T, [{ name: 'output', type: 'nat', hook: 'output', priority: -100 }, { name: 'istio-output' }])).toBe(
      'add table inet inet-table\n' +
        'add chain inet inet-table istio-output\n' +
        'add rule inet inet-table istio-output counter return\n' +
        'add chain inet inet-table output { type nat hook output priority -100 ; }\n' +
        'add rule inet inet-table output counter jump istio-output\n',
    );
  });

  it('refuses a rule in, or a jump to, a chain that does not exist', () => {
    const inMissing = new NftablesRuleBuilder({ enableIPv6: false }).appendRule('nope', T, 'return');
    expect(() => inMissing.dump(T, [{ name: CH }])).toThrow(NetfilterSimError);
    const jump = new NftablesRuleBuilder({ enableIPv6: false }).appendRule(CH, T, 'jump', 'nope');
    expect(() => jump.dump(T, [{ name: CH }])).toThrow(/no such chain "nope"/);
  });
});
