// The Istio default sidecar rules (test/fixtures/istio/kernel-save/derived/injected-sidecar-default.save)
// against the 15-row trace table of reference/istio.md §3 (pod IP 10.0.0.9, app uid 1000, Envoy 1337).
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectResult, ConnectSpec } from '../../src/engine/path/netns.js';
import { fixture } from './helpers.js';

const DEFAULT = fixture('istio/kernel-save/derived/injected-sidecar-default.save');
/** `-o 3306`: the outbound port exclusions go first in ISTIO_OUTPUT (run.go step 9). */
const EXCLUDE_3306 = DEFAULT.replace(
  '-A ISTIO_OUTPUT -s 127.0.0.6/32 -o lo -j RETURN\n',
  '-A ISTIO_OUTPUT -p tcp -m tcp --dport 3306 -j RETURN\n-A ISTIO_OUTPUT -p udp -m udp --dport 3306 -j RETURN\n-A ISTIO_OUTPUT -s 127.0.0.6/32 -o lo -j RETURN\n',
);
/** `-x 192.168.0.0/16`: CIDR exclusions after the 127.0.0.1 RETURN (step 16). */
const EXCLUDE_CIDR = DEFAULT.replace(
  '-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n',
  '-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN\n-A ISTIO_OUTPUT -d 192.168.0.0/16 -j RETURN\n',
);

const LISTEN = [15001, 15006, 15008, 15090, 15021, 15020, 8080, '53/udp'];
const pod = (rules = DEFAULT) => new Netns({ rules, listen: LISTEN, interfaces: { eth0: ['10.0.0.9/24'] } });

function deciding(r: ConnectResult): string {
  // the last ISTIO_OUTPUT / ISTIO_INBOUND rule the first packet matched
  const rules = r.steps.filter((s) => s.packet === r.steps[0]?.packet && s.event === 'rule' && s.chain.startsWith('ISTIO'));
  const last = rules[rules.length - 1];
  return last ? `${last.chain}:${last.rule} ${last.target}` : '';
}

interface Row {
  readonly n: number;
  readonly spec: ConnectSpec;
  readonly rules?: string;
  readonly expect: Partial<ConnectResult>;
  readonly rule?: string;
}

const app = (dst: string, extra: Partial<ConnectSpec> = {}): ConnectSpec => ({ from: 'local', uid: 1000, dst, ...extra }) as ConnectSpec;
const envoy = (dst: string, extra: Partial<ConnectSpec> = {}): ConnectSpec => ({ from: 'local', uid: 1337, gid: 1337, dst, ...extra }) as ConnectSpec;
const inbound = (dst: string): ConnectSpec => ({ from: 'remote', src: '10.0.0.5', sport: 40000, dst });

const ROWS: Row[] = [
  { n: 1, spec: inbound('10.0.0.9:8080'), expect: { outcome: 'local', address: '10.0.0.9', port: 15006, originalDestination: '10.0.0.9:8080' }, rule: 'ISTIO_IN_REDIRECT:1 REDIRECT' },
  { n: 2, spec: inbound('10.0.0.9:15090'), expect: { outcome: 'local', address: '10.0.0.9', port: 15090 }, rule: 'ISTIO_INBOUND:2 RETURN' },
  { n: 2, spec: inbound('10.0.0.9:15021'), expect: { outcome: 'local', address: '10.0.0.9', port: 15021 }, rule: 'ISTIO_INBOUND:3 RETURN' },
  { n: 2, spec: inbound('10.0.0.9:15020'), expect: { outcome: 'local', address: '10.0.0.9', port: 15020 }, rule: 'ISTIO_INBOUND:4 RETURN' },
  { n: 3, spec: inbound('10.0.0.9:15008'), expect: { outcome: 'local', address: '10.0.0.9', port: 15008 }, rule: 'ISTIO_INBOUND:1 RETURN' },
  { n: 4, spec: app('10.96.0.10:80'), expect: { outcome: 'local', address: '127.0.0.1', port: 15001, originalDestination: '10.96.0.10:80' }, rule: 'ISTIO_REDIRECT:1 REDIRECT' },
  { n: 5, spec: envoy('10.0.0.5:8080'), expect: { outcome: 'remote', address: '10.0.0.5', port: 8080 }, rule: 'ISTIO_OUTPUT:4 RETURN' },
  { n: 6, spec: app('127.0.0.1:8080'), expect: { outcome: 'local', address: '127.0.0.1', port: 8080 }, rule: 'ISTIO_OUTPUT:3 RETURN' },
  { n: 7, spec: app('10.0.0.9:8080'), expect: { outcome: 'local', address: '10.0.0.9', port: 8080 }, rule: 'ISTIO_OUTPUT:3 RETURN' },
  { n: 8, spec: envoy('10.0.0.9:8080'), expect: { outcome: 'local', address: '127.0.0.1', port: 15006, originalDestination: '10.0.0.9:8080' }, rule: 'ISTIO_IN_REDIRECT:1 REDIRECT' },
  { n: 9, spec: envoy('10.0.0.9:8080', { src: '127.0.0.6' }), expect: { outcome: 'local', address: '10.0.0.9', port: 8080 }, rule: 'ISTIO_OUTPUT:1 RETURN' },
  { n: 10, spec: envoy('127.0.0.1:8080'), expect: { outcome: 'local', address: '127.0.0.1', port: 8080 }, rule: 'ISTIO_OUTPUT:4 RETURN' },
  { n: 11, spec: envoy('10.0.0.9:15008'), expect: { outcome: 'local', address: '10.0.0.9', port: 15008 }, rule: 'ISTIO_OUTPUT:4 RETURN' },
  { n: 12, spec: envoy('127.0.0.6:15002'), expect: { outcome: 'local', address: '127.0.0.1', port: 15006, originalDestination: '127.0.0.6:15002' }, rule: 'ISTIO_IN_REDIRECT:1 REDIRECT' },
  { n: 13, spec: app('10.96.0.10:53', { proto: 'udp' }), expect: { outcome: 'remote', address: '10.96.0.10', port: 53 } },
  { n: 14, spec: app('10.0.0.5:3306'), rules: EXCLUDE_3306, expect: { outcome: 'remote', address: '10.0.0.5', port: 3306 }, rule: 'ISTIO_OUTPUT:1 RETURN' },
  { n: 15, spec: app('192.168.1.1:443'), rules: EXCLUDE_CIDR, expect: { outcome: 'remote', address: '192.168.1.1', port: 443 }, rule: 'ISTIO_OUTPUT:9 RETURN' },
];

describe('istio sidecar default rules: the trace table of reference/istio.md §3', () => {
  for (const row of ROWS) {
    it(`#${row.n} ${row.spec.from === 'local' ? `uid ${row.spec.uid}` : 'inbound'} → ${row.spec.dst}${row.spec.proto === 'udp' ? ' udp' : ''}`, () => {
      const r = pod(row.rules).connect(row.spec);
      expect(r).toMatchObject(row.expect);
      if (row.rule) expect(deciding(r)).toBe(row.rule);
    });
  }

  it('#13: UDP reaches ISTIO_REDIRECT, whose only rule is for TCP, and comes back out unchanged', () => {
    const r = pod().connect(app('10.96.0.10:53', { proto: 'udp' }));
    expect(r.steps.filter((s) => s.chain.startsWith('ISTIO')).map((s) => `${s.chain}:${s.event}:${s.rule}`)).toEqual([
      'ISTIO_OUTPUT:rule:9',
      'ISTIO_REDIRECT:return:2',
      'ISTIO_OUTPUT:return:10',
    ]);
  });

  it('the same block for IPv6 (::6 and ::1) behaves the same', () => {
    const v6 = DEFAULT.replace('127.0.0.6/32', '::6/128').replace(/127\.0\.0\.1\/32/g, '::1/128');
    const n = new Netns({ rules6: v6, listen: LISTEN, interfaces: { eth0: ['10.0.0.9/24', 'fd00::9/64'] } });
    expect(n.connect(app('[fd00:96::10]:80'))).toMatchObject({ outcome: 'local', address: '::1', port: 15001, originalDestination: '[fd00:96::10]:80' });
    expect(n.connect({ from: 'remote', src: 'fd00::5', dst: '[fd00::9]:8080' })).toMatchObject({ outcome: 'local', address: 'fd00::9', port: 15006 });
  });
});
