import { describe, expect, it } from 'vitest';
import { parseIstioIptablesArgs } from '../../../src/compile/istio/args.js';
import { compileIstio } from '../../../src/compile/istio/compile.js';
import { INJECTED_ISTIO_INIT_ARGS } from '../../../src/compile/istio/defaults.js';
import { formatIstioCommands, formatIstioRestore } from '../../../src/compile/istio/format.js';
import { casesIn, fixture, type SidecarCase, stripSaves, toIstioConfig } from './vectors.js';

const sidecar = casesIn<SidecarCase>('sidecar-capture');

describe('istio-iptables reproduces the sidecar-capture goldens', () => {
  it('covers all 27 upstream cases', () => {
    expect(sidecar).toHaveLength(27);
  });

  it.each(sidecar)('%s: restore input', (_name, c) => {
    const result = compileIstio(toIstioConfig(c.config));
    expect(formatIstioRestore(result)).toBe(stripSaves(fixture(c.file)));
    expect(result.restore.map((r) => r.family)).toEqual(c.ipv6_rules_emitted ? [4, 6] : [4]);
  });

  it.each(sidecar)('%s: recorded commands, byte for byte', (_name, c) => {
    const result = compileIstio(toIstioConfig(c.config));
    expect(formatIstioCommands(result)).toBe(fixture(c.file));
  });

  it.each(sidecar)('%s: from the equivalent command line and environment', (_name, c) => {
    const config = parseIstioIptablesArgs(c.equivalent_cli, c.equivalent_env);
    const result = compileIstio({
      ...config,
      enableIPv6: c.config['EnableIPv6'] as boolean,
      dnsServersV4: c.config['DNSServersV4'] as string[],
      dnsServersV6: c.config['DNSServersV6'] as string[],
    });
    expect(formatIstioCommands(result)).toBe(fixture(c.file));
  });

  it('the injector default (derived/injected-sidecar-default) from the istio-init arguments', () => {
    const result = compileIstio(parseIstioIptablesArgs(['istio-iptables', ...INJECTED_ISTIO_INIT_ARGS]));
    expect(formatIstioRestore(result)).toBe(fixture('derived/injected-sidecar-default.restore'));
    expect(result.ipCommands).toEqual([]);
  });

  it('explains every rule', () => {
    const result = compileIstio(toIstioConfig((sidecar.find(([n]) => n === 'tproxy')![1]).config));
    expect(result.rules.length).toBeGreaterThan(40);
    for (const r of result.rules) expect(r.why).not.toBe('');
    const tunnel = result.rules.find((r) => r.text === '-A ISTIO_INBOUND -p tcp --dport 15008 -j RETURN');
    expect(tunnel?.option).toBe('-e/--inbound-tunnel-port');
  });
});

describe('TPROXY policy routing', () => {
  it('adds the fwmark rule and the local route per family, and ::6 on lo for IPv6', () => {
    const result = compileIstio({ inboundInterceptionMode: 'TPROXY', inboundPortsInclude: '*', enableIPv6: true });
    expect(result.ipCommands).toEqual([
      ['ip', '-6', 'addr', 'add', '::6/128', 'dev', 'lo'],
      ['ip', '-4', 'rule', 'add', 'fwmark', '1337', 'lookup', '133'],
      ['ip', '-6', 'rule', 'add', 'fwmark', '1337', 'lookup', '133'],
      ['ip', '-4', 'route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '133'],
      ['ip', '-6', 'route', 'add', 'local', '::/0', 'dev', 'lo', 'table', '133'],
    ]);
  });

  it('follows -t and -r, and needs inbound capture', () => {
    expect(compileIstio({ inboundInterceptionMode: 'TPROXY', inboundPortsInclude: '80', inboundTProxyMark: '7', inboundTProxyRouteTable: '99' }).ipCommands).toEqual([
      ['ip', '-4', 'rule', 'add', 'fwmark', '7', 'lookup', '99'],
      ['ip', '-4', 'route', 'add', 'local', '0.0.0.0/0', 'dev', 'lo', 'table', '99'],
    ]);
    expect(compileIstio({ inboundInterceptionMode: 'TPROXY' }).ipCommands).toEqual([]);
  });

  it('fails like upstream on a route table that is not a number', () => {
    expect(() => compileIstio({ inboundInterceptionMode: 'TPROXY', inboundPortsInclude: '*', inboundTProxyRouteTable: 'main' })).toThrow(
      /InboundTProxyRouteTable/,
    );
  });
});

describe('upstream behaviours outside the goldens', () => {
  it('-x "*" is an error', () => {
    expect(() => compileIstio({ outboundIPRangesExclude: '*' })).toThrow(/invalid value for OUTBOUND_IP_RANGES_EXCLUDE/);
  });

  it('1.26 and older ignore unparsable CIDRs with a warning; CIDRs are printed as Go does', () => {
    const r = compileIstio({ outboundIPRangesInclude: '10.0.0.1/8,bogus,2001:DB8:0:0::/32', enableIPv6: true }, { upstreamVersion: '1.26' });
    expect(r.warnings.join('\n')).toMatch(/Ignoring error for bug compatibility.*bogus/);
    const text = formatIstioRestore(r);
    expect(text).toContain('-A ISTIO_OUTPUT -d 10.0.0.1/8 -j ISTIO_REDIRECT');
    expect(text).toContain('-A ISTIO_OUTPUT -d 2001:db8::/32 -j ISTIO_REDIRECT');
  });

  it('-o excludes TCP and UDP before the self-redirect rules', () => {
    const text = formatIstioRestore(compileIstio({ outboundPortsExclude: '3306' }));
    expect(text).toContain('-A OUTPUT -j ISTIO_OUTPUT\n-A ISTIO_OUTPUT -p tcp --dport 3306 -j RETURN\n-A ISTIO_OUTPUT -p udp --dport 3306 -j RETURN\n-A ISTIO_OUTPUT -o lo -s 127.0.0.6/32');
  });

  it('DNS capture disabled without servers (warning), captured for all with --capture-all-dns', () => {
    expect(compileIstio({ redirectDNS: true }).warnings).toContain(
      'REDIRECT_DNS is set, but CAPTURE_ALL_DNS is false, and no DNS servers provided. DNS capture disabled.',
    );
    const text = formatIstioRestore(compileIstio({ redirectDNS: true, captureAllDNS: true }));
    expect(text).toContain('-A ISTIO_OUTPUT_DNS -p udp --dport 53 -j REDIRECT --to-port 15053');
    expect(text).toContain('-A PREROUTING -j ISTIO_INBOUND');
  });

  it('an empty ISTIO_OUTBOUND_OWNER_GROUPS returns everything (upstream InterceptOnly with no groups)', () => {
    expect(formatIstioRestore(compileIstio({ ownerGroupsInclude: '' }))).toContain('-A ISTIO_OUTPUT -j RETURN\n');
  });

  it('validates owner groups and the loopback CIDR as Config.Validate does', () => {
    const groups = Array.from({ length: 65 }, (_, i) => String(i)).join(',');
    expect(() => compileIstio({ ownerGroupsInclude: groups })).toThrow(/cannot exceed 64/);
    expect(() => compileIstio({ hostIPv4LoopbackCidr: '10.0.0.1/32' })).toThrow(/IPv4 loopback/);
    expect(() => compileIstio({ hostIPv4LoopbackCidr: '127.0.0.1/4' })).toThrow(/range \[8, 32\]/);
  });

  it('--skip-rule-apply writes nothing', () => {
    const r = compileIstio({ skipRuleApply: true, inboundPortsInclude: '*' });
    expect(r.restore).toEqual([]);
    expect(r.commands).toEqual([]);
  });

  it('--cleanup-only deletes instead of applying', () => {
    const r = compileIstio({ cleanupOnly: true });
    expect(r.restore).toEqual([]);
    expect(r.commands).toEqual([
      'iptables-save',
      'ip6tables-save',
      // UndoRules keeps rules inside ISTIO_* chains only when they jump to another ISTIO_* chain.
      'iptables -t nat -D ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --gid-owner 1337 -j ISTIO_IN_REDIRECT',
      'iptables -t nat -D ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --uid-owner 1337 -j ISTIO_IN_REDIRECT',
      'iptables -t nat -D OUTPUT -j ISTIO_OUTPUT',
      'iptables -t nat -F ISTIO_OUTPUT',
      'iptables -t nat -X ISTIO_OUTPUT',
      'iptables -t nat -F ISTIO_IN_REDIRECT',
      'iptables -t nat -X ISTIO_IN_REDIRECT',
      'iptables -t nat -F ISTIO_REDIRECT',
      'iptables -t nat -X ISTIO_REDIRECT',
      'iptables -t nat -F ISTIO_INBOUND',
      'iptables -t nat -X ISTIO_INBOUND',
      'iptables-save',
    ]);
  });

  it('--native-nftables gives the nft transaction instead of restore text', () => {
    const r = compileIstio({ nativeNftables: true });
    expect(r.restore).toEqual([]);
    expect(r.nft?.startsWith('add table inet istio-proxy-nat\n')).toBe(true);
  });
});
