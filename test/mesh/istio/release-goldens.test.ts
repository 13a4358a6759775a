/**
 * `--upstream-version` against the goldens of the releases themselves: the capture goldens of
 * tools/istio-iptables at the 1.18.0 … 1.24.0 tags (test/fixtures/istio/releases, see
 * ATTRIBUTION.md there) for `--drop-invalid`, DNS capture and `-i CIDR`.
 *
 * Up to 1.23 upstream's test ran the rules as individual `iptables -t TABLE …` commands (its test
 * config leaves RestoreFormat off); the same rules, table by table and in order, are what the
 * restore text holds. From 1.24 the golden is the recorded command stream itself.
 */
import { describe, expect, it } from 'vitest';
import { compileIstio, type IstioCompileResult } from '../../../src/compile/istio/compile.js';
import { fixture, toIstioConfig } from './vectors.js';

/** constructTestConfig() of run_test.go in these releases. */
const BASE = {
  ProxyPort: '15001', InboundCapturePort: '15006', InboundTunnelPort: '15008', ProxyUID: '1337', ProxyGID: '1337',
  InboundTProxyMark: '1337', InboundTProxyRouteTable: '133', OwnerGroupsInclude: '*', HostIPv4LoopbackCidr: '127.0.0.1/32',
};
/** The test cases' overrides (the same in every release used here; EnableInboundIPv6 before 1.23 is EnableIPv6). */
const CASES: Record<string, Record<string, unknown>> = {
  'drop-invalid': { DropInvalid: true },
  'dns-uid-gid': { RedirectDNS: true, DNSServersV4: ['127.0.0.53'], DNSServersV6: ['::127.0.0.53'], ProxyGID: '1,2', ProxyUID: '3,4', EnableIPv6: true },
  'ip-range': { OutboundIPRangesExclude: '1.1.0.0/16', OutboundIPRangesInclude: '9.9.0.0/16', DryRun: true, RedirectDNS: true, EnableIPv6: false, ProxyGID: '1,2', ProxyUID: '3,4', DNSServersV4: ['127.0.0.53'] },
  'ipv6-dns-outbound-owner-groups-exclude': { EnableIPv6: true, RedirectDNS: true, OwnerGroupsExclude: '888,ftp' },
};
const GOLDENS: [string, string][] = [
  ['1.18.0', 'drop-invalid'], ['1.19.0', 'dns-uid-gid'], ['1.20.0', 'drop-invalid'], ['1.20.0', 'dns-uid-gid'],
  ['1.22.0', 'drop-invalid'], ['1.22.0', 'dns-uid-gid'], ['1.22.0', 'ip-range'],
  ['1.23.0', 'drop-invalid'], ['1.23.0', 'dns-uid-gid'], ['1.23.0', 'ip-range'], ['1.23.0', 'ipv6-dns-outbound-owner-groups-exclude'],
  ['1.24.0', 'drop-invalid'], ['1.24.0', 'dns-uid-gid'], ['1.24.0', 'ip-range'], ['1.24.0', 'ipv6-dns-outbound-owner-groups-exclude'],
];

const compileAt = (version: string, name: string): IstioCompileResult =>
  compileIstio(toIstioConfig({ ...BASE, ...CASES[name] }), { upstreamVersion: version });

/** `iptables -t T ARGS` lines keyed by family and table, in order. */
function commandTables(golden: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of golden.split('\n')) {
    const m = /^(ip6?tables) -t (\S+) (.*)$/.exec(line);
    if (!m) continue;
    const key = `${m[1] === 'iptables' ? 4 : 6} ${m[2]}`;
    out.set(key, [...(out.get(key) ?? []), m[3]!]);
  }
  return out;
}

/** The restore texts' rule lines keyed the same way. */
function restoreTables(r: IstioCompileResult): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { family, text } of r.restore) {
    let table = '';
    for (const line of text.split('\n')) {
      if (line.startsWith('* ')) table = line.slice(2);
      else if (line.startsWith('-')) out.set(`${family} ${table}`, [...(out.get(`${family} ${table}`) ?? []), line]);
    }
  }
  return out;
}

describe('--upstream-version reproduces the release goldens', () => {
  it.each(GOLDENS)('%s %s', (tag, name) => {
    const golden = fixture(`releases/${tag}/${name}.golden`);
    const r = compileAt(tag, name);
    if (golden.startsWith('iptables -t ')) {
      expect(restoreTables(r)).toEqual(commandTables(golden));
      // From 1.21 the test recorded the final saves too (before, it printed the builder's commands only).
      const saves = golden.split('\n').filter((l) => l.endsWith('-save'));
      if (saves.length > 0) expect(r.commands.filter((c) => c.endsWith('-save'))).toEqual(saves);
    } else {
      expect(`${r.commands.join('\n')}`).toBe(golden.replace(/\n$/, ''));
    }
  });
});

describe('the release points of --drop-invalid and DNS capture', () => {
  const mangle = (v: string): string => compileAt(v, 'drop-invalid').restore[0]!.text.split('COMMIT')[0]!;

  it('--drop-invalid: -j DROP in mangle PREROUTING up to 1.23, the ISTIO_DROP chain from 1.24', () => {
    for (const v of ['1.13', '1.18', '1.21.4', '1.23.6']) expect(mangle(v)).toBe('* mangle\n-A PREROUTING -m conntrack --ctstate INVALID -j DROP\n');
    for (const v of ['1.24', '1.24.0', '1.25', '1.31']) {
      expect(mangle(v)).toBe('* mangle\n-N ISTIO_DROP\n-A PREROUTING -m conntrack --ctstate INVALID -j ISTIO_DROP\n-A ISTIO_DROP -j DROP\n');
    }
  });

  it('--drop-invalid does not exist in 1.12: refused as upstream refused the flag', () => {
    expect(() => compileAt('1.12', 'drop-invalid')).toThrow(/unknown flag: --drop-invalid \(added in Istio 1.13/);
    expect(compileAt('1.12', 'dns-uid-gid').restore[0]!.text).not.toContain('INVALID');
  });

  it('DNS: UDP rules in nat/raw OUTPUT up to 1.22, in ISTIO_OUTPUT (entered by -p udp) in 1.23–1.24, ISTIO_OUTPUT_DNS from 1.25', () => {
    const nat = (v: string): string => compileAt(v, 'dns-uid-gid').restore[0]!.text;
    expect(nat('1.22')).toContain('-A OUTPUT -p udp --dport 53 -d 127.0.0.53/32 -j REDIRECT --to-port 15053\n');
    expect(nat('1.22')).not.toContain('-A OUTPUT -p udp -j ISTIO_OUTPUT');
    for (const v of ['1.23', '1.24.6']) {
      const t = nat(v);
      expect(t).toContain('-A OUTPUT -p udp -j ISTIO_OUTPUT\n');
      expect(t).toContain('* raw\n-N ISTIO_OUTPUT\n-A OUTPUT -p udp -j ISTIO_OUTPUT\n');
      expect(t).toContain('-A ISTIO_OUTPUT -p udp --dport 53 -d 127.0.0.53/32 -j REDIRECT --to-port 15053\n');
      expect(t).not.toContain('ISTIO_OUTPUT_DNS');
    }
    expect(nat('1.25')).toContain('-A ISTIO_OUTPUT_DNS -p udp --dport 53 -d 127.0.0.53/32 -j REDIRECT --to-port 15053\n');
  });

  it('DNS: the zone-1 rule for resolver answers matched -d SERVER up to 1.19, -s SERVER from 1.20', () => {
    expect(compileAt('1.19', 'dns-uid-gid').restore[0]!.text).toContain('-A PREROUTING -p udp --sport 53 -d 127.0.0.53/32 -j CT --zone 1\n');
    expect(compileAt('1.20', 'dns-uid-gid').restore[0]!.text).toContain('-A PREROUTING -p udp --sport 53 -s 127.0.0.53/32 -j CT --zone 1\n');
  });

  it('-i CIDRS: ISTIO_OUTPUT ended with -j RETURN up to 1.22', () => {
    expect(compileAt('1.22', 'ip-range').restore[0]!.text).toContain('-A ISTIO_OUTPUT -d 9.9.0.0/16 -j ISTIO_REDIRECT\n-A ISTIO_OUTPUT -j RETURN\n');
    expect(compileAt('1.23', 'ip-range').restore[0]!.text).not.toContain('-A ISTIO_OUTPUT -j RETURN\n');
  });

  it('refuses releases older than 1.12 and newer than the latest known, with a typed error', () => {
    for (const v of ['1.11', '1.0', '1.11.8', '1.32', '1.40.1']) {
      expect(() => compileAt(v, 'drop-invalid')).toThrow(expect.objectContaining({ code: 'BAD_VALUE', message: expect.stringMatching(/unknown Istio version/) }));
    }
    expect(() => compileAt('1.11', 'empty')).toThrow(/the oldest release known here is 1.12/);
  });
});
