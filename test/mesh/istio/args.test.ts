import { describe, expect, it } from 'vitest';
import {
  formatIstioIptablesArgs,
  parseIstioIptablesArgs,
  parseIstioIptablesCommandLine,
} from '../../../src/compile/istio/args.js';
import { istioConfig } from '../../../src/compile/istio/config.js';

describe('parseIstioIptablesArgs reads the flags as pflag does', () => {
  it.each([
    [['-p', '16001'], '16001'],
    [['-p16001'], '16001'],
    [['-p=16001'], '16001'],
    [['--envoy-port', '16001'], '16001'],
    [['--envoy-port=16001'], '16001'],
    [['-p='], '='],
  ])('%j', (argv, port) => {
    expect(parseIstioIptablesArgs(argv).proxyPort).toBe(port);
  });

  it('maps every short flag to its field', () => {
    const cfg = parseIstioIptablesArgs(
      ['-p', '1', '-z', '2', '-e', '3', '-u', '4', '-g', '5', '-m', 'TPROXY', '-b', '6', '-d', '7', '-c', 'eth9', '-i', '10.0.0.0/8',
        '-x', '10.1.0.0/16', '-q', '8', '-o', '9', '-k', 'net1', '-t', '10', '-r', '11', '-n'],
    );
    expect(cfg).toMatchObject({
      proxyPort: '1', inboundCapturePort: '2', inboundTunnelPort: '3', proxyUID: '4', proxyGID: '5',
      inboundInterceptionMode: 'TPROXY', inboundPortsInclude: '6', inboundPortsExclude: '7', excludeInterfaces: 'eth9',
      outboundIPRangesInclude: '10.0.0.0/8', outboundIPRangesExclude: '10.1.0.0/16', outboundPortsInclude: '8',
      outboundPortsExclude: '9', rerouteVirtualInterfaces: 'net1', inboundTProxyMark: '10', inboundTProxyRouteTable: '11', dryRun: true,
    });
  });

  it('reads boolean flags with and without a value, and combined short booleans', () => {
    expect(parseIstioIptablesArgs(['--redirect-dns', '--capture-all-dns=true', '--drop-invalid=false'])).toMatchObject({
      redirectDNS: true, captureAllDNS: true, dropInvalid: false,
    });
    expect(parseIstioIptablesArgs(['-nb', '*'])).toMatchObject({ dryRun: true, inboundPortsInclude: '*' });
  });

  it('takes the next argument as a value even if it starts with -', () => {
    expect(parseIstioIptablesArgs(['-x', '-b', '*']).outboundIPRangesExclude).toBe('-b');
  });

  it('accepts an empty value, the program name and istio log flags', () => {
    const { config, ignored } = parseIstioIptablesCommandLine(
      ['pilot-agent', 'istio-iptables', '-x', '', '--log_output_level=default:info', '--log_as_json', '--log_target', 'stdout', 'extra'],
    );
    expect(config.outboundIPRangesExclude).toBe('');
    expect(ignored).toEqual(['extra']);
  });

  it('binds the environment as upstream; the command line wins', () => {
    const env = { INBOUND_CAPTURE_PORT: '16006', ISTIO_META_DNS_CAPTURE: 'true', INVALID_DROP: 'true', ENVOY_PORT: '9',
      ISTIO_OUTBOUND_OWNER_GROUPS: 'java,202', ISTIO_OUTBOUND_IPV4_LOOPBACK_CIDR: '127.0.0.1/8', ISTIO_SERVICE_CIDR: '*' };
    expect(parseIstioIptablesArgs(['-i', '10.0.0.0/8'], env)).toMatchObject({
      inboundCapturePort: '16006', redirectDNS: true, dropInvalid: true, proxyPort: '15001',
      ownerGroupsInclude: 'java,202', hostIPv4LoopbackCidr: '127.0.0.1/8', outboundIPRangesInclude: '10.0.0.0/8',
    });
  });

  it.each([
    [['--bogus'], /unknown flag: --bogus/],
    [['-h'], /unknown shorthand flag: 'h' in -h/],
    [['-p'], /flag needs an argument/],
    [['--envoy-port'], /flag needs an argument: --envoy-port/],
    [['--redirect-dns=maybe'], /invalid argument "maybe"/],
    [['--iptables-probe-port', '70000'], /invalid argument "70000"/],
  ])('%j is an error', (argv, message) => {
    expect(() => parseIstioIptablesArgs(argv)).toThrow(message);
  });

  it('formatIstioIptablesArgs is its inverse', () => {
    const cfg = istioConfig({ inboundPortsInclude: '*', outboundIPRangesExclude: '', redirectDNS: true, ownerGroupsExclude: '888', networkNamespace: 'ns1' });
    const { argv, env } = formatIstioIptablesArgs(cfg);
    expect(argv).toEqual(['-b', '*', '--redirect-dns', '--network-namespace', 'ns1']);
    expect(parseIstioIptablesArgs(argv, env)).toEqual(cfg);
  });
});
