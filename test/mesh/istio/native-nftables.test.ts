import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compileIstio } from '../../../src/mesh/istio/compile.js';
import { formatIstioResult } from '../../../src/mesh/istio/format.js';
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
