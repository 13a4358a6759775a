import { describe, expect, it } from 'vitest';
import { parseIstioIptablesArgs } from '../../../src/compile/istio/args.js';
import { compileIstio } from '../../../src/compile/istio/compile.js';
import { INJECTED_ISTIO_INIT_ARGS } from '../../../src/compile/istio/defaults.js';
import { formatIstioRestore } from '../../../src/compile/istio/format.js';
import { parseIstioVersion } from '../../../src/compile/istio/version.js';
import { fixture } from './vectors.js';

const injected = parseIstioIptablesArgs(INJECTED_ISTIO_INIT_ARGS);
const restoreFor = (version: string, extra: Parameters<typeof compileIstio>[0] = {}): string =>
  formatIstioRestore(compileIstio({ ...injected, ...extra }, { upstreamVersion: version }));
const current = fixture('derived/injected-sidecar-default.restore');

describe('--upstream-version: rule shapes of older releases (reference §10)', () => {
  it.each(['1.25', '1.31.2', 'latest'])('%s writes the current shape', (v) => {
    expect(restoreFor(v)).toBe(current);
  });

  it('1.18 – 1.24: the OUTPUT jump is TCP only, -o excludes only TCP', () => {
    const expected = current.replace('-A OUTPUT -j ISTIO_OUTPUT', '-A OUTPUT -p tcp -j ISTIO_OUTPUT');
    expect(restoreFor('1.24')).toBe(expected);
    expect(restoreFor('1.18.0')).toBe(expected);
    const withExclude = restoreFor('1.24', { outboundPortsExclude: '3306' });
    expect(withExclude).toContain('-A ISTIO_OUTPUT -p tcp --dport 3306 -j RETURN\n-A ISTIO_OUTPUT -o lo -s 127.0.0.6/32');
    expect(withExclude).not.toContain('-p udp --dport 3306');
  });

  it('≤ 1.17: the loopback self-redirect has no -p tcp ! --dport 15008', () => {
    const text = restoreFor('1.17');
    expect(text).toContain('-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -m owner --uid-owner 1337 -j ISTIO_IN_REDIRECT\n');
    expect(text).toContain('-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -m owner --gid-owner 1337 -j ISTIO_IN_REDIRECT\n');
    expect(text).not.toContain('! --dport 15008');
    expect(text).not.toContain('--dport 22 ');
  });

  it('≤ 1.12: SSH (port 22) is never redirected inbound', () => {
    expect(restoreFor('1.12')).toContain('-A PREROUTING -p tcp -j ISTIO_INBOUND\n-A ISTIO_INBOUND -p tcp --dport 22 -j RETURN\n-A ISTIO_INBOUND -p tcp --dport 15090 -j RETURN');
  });

  it('≤ 1.22 with DNS capture: UDP DNS rules directly in nat OUTPUT and raw OUTPUT/PREROUTING', () => {
    const text = restoreFor('1.22', { redirectDNS: true, dnsServersV4: ['10.96.0.10'] });
    expect(text).toBe(`* nat
-N ISTIO_INBOUND
-N ISTIO_REDIRECT
-N ISTIO_IN_REDIRECT
-N ISTIO_OUTPUT
-A ISTIO_INBOUND -p tcp --dport 15008 -j RETURN
-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports 15001
-A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports 15006
-A PREROUTING -p tcp -j ISTIO_INBOUND
-A ISTIO_INBOUND -p tcp --dport 15090 -j RETURN
-A ISTIO_INBOUND -p tcp --dport 15021 -j RETURN
-A ISTIO_INBOUND -p tcp --dport 15020 -j RETURN
-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT
-A OUTPUT -p tcp -j ISTIO_OUTPUT
-A ISTIO_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN
-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp -m multiport ! --dports 53,15008 -m owner --uid-owner 1337 -j ISTIO_IN_REDIRECT
-A ISTIO_OUTPUT -o lo -p tcp ! --dport 53 -m owner ! --uid-owner 1337 -j RETURN
-A ISTIO_OUTPUT -m owner --uid-owner 1337 -j RETURN
-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --gid-owner 1337 -j ISTIO_IN_REDIRECT
-A ISTIO_OUTPUT -o lo -p tcp ! --dport 53 -m owner ! --gid-owner 1337 -j RETURN
-A ISTIO_OUTPUT -m owner --gid-owner 1337 -j RETURN
-A ISTIO_OUTPUT -p tcp --dport 53 -d 10.96.0.10/32 -j REDIRECT --to-ports 15053
-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN
-A ISTIO_OUTPUT -j ISTIO_REDIRECT
-A OUTPUT -p udp --dport 53 -m owner --uid-owner 1337 -j RETURN
-A OUTPUT -p udp --dport 53 -m owner --gid-owner 1337 -j RETURN
-A OUTPUT -p udp --dport 53 -d 10.96.0.10/32 -j REDIRECT --to-port 15053
COMMIT
* raw
-A OUTPUT -p udp --dport 53 -m owner --uid-owner 1337 -j CT --zone 1
-A OUTPUT -p udp --sport 15053 -m owner --uid-owner 1337 -j CT --zone 2
-A OUTPUT -p udp --dport 53 -m owner --gid-owner 1337 -j CT --zone 1
-A OUTPUT -p udp --sport 15053 -m owner --gid-owner 1337 -j CT --zone 2
-A OUTPUT -p udp --dport 53 -d 10.96.0.10/32 -j CT --zone 2
-A PREROUTING -p udp --sport 53 -s 10.96.0.10/32 -j CT --zone 1
COMMIT
`);
  });

  it('≤ 1.17 with DNS capture: the per-UID self-redirect skips only TCP 53', () => {
    expect(restoreFor('1.17', { redirectDNS: true, captureAllDNS: true })).toContain(
      '-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 53 -m owner --uid-owner 1337 -j ISTIO_IN_REDIRECT\n',
    );
  });

  it('≤ 1.17 drop-invalid drops directly in mangle PREROUTING', () => {
    expect(restoreFor('1.17', { dropInvalid: true })).toContain('* mangle\n-A PREROUTING -m conntrack --ctstate INVALID -j DROP\nCOMMIT\n');
  });

  it('1.23 DNS capture and 1.20 --drop-invalid have their release shapes (release-goldens.test.ts pins them)', () => {
    expect(restoreFor('1.23', { redirectDNS: true, captureAllDNS: true })).toContain('-A ISTIO_OUTPUT -p udp --dport 53 -j REDIRECT --to-port 15053\n');
    expect(restoreFor('1.20', { dropInvalid: true })).toContain('* mangle\n-A PREROUTING -m conntrack --ctstate INVALID -j DROP\nCOMMIT\n');
  });

  it('the state check (iptables-save first) exists from 1.24 on', () => {
    expect(compileIstio(injected, { upstreamVersion: '1.24' }).commands.slice(0, 2)).toEqual(['iptables-save', 'ip6tables-save']);
    expect(compileIstio(injected, { upstreamVersion: '1.23' }).commands[0]).toBe('* nat');
  });

  it('parses release names', () => {
    expect(parseIstioVersion('v1.22.0-beta.1')).toEqual({ major: 1, minor: 22, patch: 0 });
    expect(parseIstioVersion('1.30')).toEqual({ major: 1, minor: 30 });
    expect(() => parseIstioVersion('2.0')).toThrow(/only 1.x/);
    expect(() => parseIstioVersion('next')).toThrow(/bad Istio version/);
  });
});
