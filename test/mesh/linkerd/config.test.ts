/**
 * proxy-init's command line (cobra + pflag) and the configuration checks of
 * BuildFirewallConfiguration.
 */
import { describe, expect, it } from 'vitest';
import { formatProxyInitArgs, parseProxyInitArgs, proxyInitConfig } from '../../../src/compile/linkerd/config.js';
import { buildFirewallConfiguration, compileProxyInit } from '../../../src/compile/linkerd/proxy-init.js';

const ok = (argv: string[]) => {
  const r = parseProxyInitArgs(argv);
  if (!r.ok) throw new Error(r.error);
  return r;
};
const err = (argv: string[]) => {
  const r = parseProxyInitArgs(argv);
  if (r.ok) throw new Error('expected an error');
  return r.error;
};

describe('parseProxyInitArgs: pflag syntax', () => {
  it.each([
    [['--incoming-proxy-port', '4143'], 4143],
    [['--incoming-proxy-port=4143'], 4143],
    [['-p', '4143'], 4143],
    [['-p4143'], 4143],
    [['-p=4143'], 4143],
    [['-p', '0x1f'], 31],
    [['-p', '010'], 8],
    [['-p', '0o17'], 15],
    [['-p', '1_000'], 1000],
    [['-p', '+7'], 7],
    [['-p', '-5'], -5],
  ] as const)('%j sets the incoming port to %d', (argv, port) => {
    expect(ok([...argv]).config.incomingProxyPort).toBe(port);
  });

  it('reads bool flags as pflag does: bare is true, =value parses, a separate value is an ignored argument', () => {
    expect(ok(['--ipv6=false']).config.ipv6).toBe(false);
    expect(ok(['--ipv6=0']).config.ipv6).toBe(false);
    expect(ok(['--ipv6=F']).config.ipv6).toBe(false);
    expect(ok(['--ipv6']).config.ipv6).toBe(true);
    const r = ok(['--ipv6', 'false']);
    expect(r.config.ipv6).toBe(true);
    expect(r.positional).toEqual(['false']);
    expect(ok(['-w']).config.useWaitFlag).toBe(true);
    expect(ok(['-w=false']).config.useWaitFlag).toBe(false);
  });

  it('combines shorthands', () => {
    const r = ok(['-wp', '4143', '-o4140']);
    expect(r.config.useWaitFlag).toBe(true);
    expect(r.config.incomingProxyPort).toBe(4143);
    expect(r.config.outgoingProxyPort).toBe(4140);
  });

  it('appends repeated slice flags and splits string slices as one CSV record, untrimmed', () => {
    expect(ok(['-r', '8080', '-r', '9090,9091']).config.portsToRedirect).toEqual([8080, 9090, 9091]);
    expect(ok(['--outbound-ports-to-ignore', '443, 8080,+8443']).config.outboundPortsToIgnore).toEqual(['443', ' 8080', '+8443']);
    expect(ok(['--inbound-ports-to-ignore', '1', '--inbound-ports-to-ignore', '2,3']).config.inboundPortsToIgnore).toEqual(['1', '2', '3']);
    expect(ok(['--subnets-to-ignore', '"10.0.0.0/8,x",1.1.1.1/24 ']).config.subnetsToIgnore).toEqual(['10.0.0.0/8,x', '1.1.1.1/24 ']);
    expect(ok(['--inbound-ports-to-ignore', '']).config.inboundPortsToIgnore).toEqual([]);
  });

  it('takes the next argument as a value even when it looks like a flag', () => {
    expect(ok(['--log-level', '--ipv6']).config.logLevel).toBe('--ipv6');
  });

  it('stops at --', () => {
    const r = ok(['-p', '1', '--', '-o', '2']);
    expect(r.config.outgoingProxyPort).toBe(-1);
    expect(r.positional).toEqual(['-o', '2']);
  });

  it('reports help', () => {
    expect(ok(['-h']).help).toBe(true);
    expect(ok(['--help']).help).toBe(true);
  });

  it.each([
    [['--nope'], 'unknown flag: --nope'],
    [['--nope=1'], 'unknown flag: --nope'],
    [['-x'], "unknown shorthand flag: 'x' in -x"],
    [['-wx'], "unknown shorthand flag: 'x' in -x"],
    [['---p'], 'bad flag syntax: ---p'],
    [['--incoming-proxy-port'], 'flag needs an argument: --incoming-proxy-port'],
    [['-p'], "flag needs an argument: 'p' in -p"],
    [['-p', 'abc'], 'invalid argument "abc" for "-p, --incoming-proxy-port" flag: strconv.ParseInt: parsing "abc": invalid syntax'],
    [['--timeout-close-wait-secs', '1.5'], 'invalid argument "1.5" for "--timeout-close-wait-secs" flag: strconv.ParseInt: parsing "1.5": invalid syntax'],
    [['-p', '99999999999999999999'], 'invalid argument "99999999999999999999" for "-p, --incoming-proxy-port" flag: strconv.ParseInt: parsing "99999999999999999999": value out of range'],
    [['-r', '80,x'], 'invalid argument "80,x" for "-r, --ports-to-redirect" flag: strconv.Atoi: parsing "x": invalid syntax'],
    [['-r', '0x10'], 'invalid argument "0x10" for "-r, --ports-to-redirect" flag: strconv.Atoi: parsing "0x10": invalid syntax'],
    [['--ipv6=maybe'], 'invalid argument "maybe" for "--ipv6" flag: strconv.ParseBool: parsing "maybe": invalid syntax'],
    [['--inbound-ports-to-ignore', '4"1'], 'invalid argument "4\\"1" for "--inbound-ports-to-ignore" flag: parse error on line 1, column 2: bare " in non-quoted-field'],
  ] as const)('%j fails: %s', (argv, message) => {
    expect(err([...argv])).toBe(message);
  });

  it('knows only the flags of the release it reproduces', () => {
    expect(parseProxyInitArgs(['--proxy-gid', '1'], { upstreamVersion: 'v2.3.0' })).toEqual({ ok: false, error: 'unknown flag: --proxy-gid' });
    expect(parseProxyInitArgs(['-g', '1'], { upstreamVersion: 'v2.3.0' })).toEqual({ ok: false, error: "unknown shorthand flag: 'g' in -g" });
    expect(parseProxyInitArgs(['--ipv6=false'], { upstreamVersion: 'v2.2.0' })).toEqual({ ok: false, error: 'unknown flag: --ipv6' });
    expect(parseProxyInitArgs(['--subnets-to-ignore', '10.0.0.0/8'], { upstreamVersion: 'v1.5.1' })).toEqual({ ok: false, error: 'unknown flag: --subnets-to-ignore' });
    expect(parseProxyInitArgs(['--subnets-to-ignore', '10.0.0.0/8'], { upstreamVersion: 'v1.5.2' }).ok).toBe(true);
  });

  it('round-trips through formatProxyInitArgs', () => {
    const config = proxyInitConfig({
      incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102, proxyGid: 0, ipv6: false, iptablesMode: 'nft',
      inboundPortsToIgnore: ['4190', ' 4191', 'a"b'], portsToRedirect: [80, 81], subnetsToIgnore: ['10.0.0.0/8'], useWaitFlag: true,
    });
    expect(ok(formatProxyInitArgs(config)).config).toEqual(config);
  });
});

describe('BuildFirewallConfiguration', () => {
  const base = { incomingProxyPort: 4143, outgoingProxyPort: 4140 };
  it.each([
    [{ ...base, incomingProxyPort: 100000 }, '--incoming-proxy-port must be a valid TCP port number'],
    [{ ...base, outgoingProxyPort: -1 }, '--outgoing-proxy-port must be a valid TCP port number'],
    [{ ...base, subnetsToIgnore: ['0.0.0.0'] }, '0.0.0.0 is not a valid CIDR address'],
    [{ ...base, subnetsToIgnore: ['010.0.0.0/8'] }, '010.0.0.0/8 is not a valid CIDR address'],
    [{ ...base, subnetsToIgnore: ['10.0.0.0/33'] }, '10.0.0.0/33 is not a valid CIDR address'],
    [{ ...base, subnetsToIgnore: ['fe80::1%eth0/64'] }, 'fe80::1%eth0/64 is not a valid CIDR address'],
    [{ ...base, subnetsToIgnore: [' 10.0.0.0/+8 '] }, '10.0.0.0/+8 is not a valid CIDR address'],
    [{ ...base, iptablesMode: 'auto' }, '--iptables-mode valid values are only "legacy", "nft" and "plain"'],
    [{ ...base, firewallBinPath: '/sbin/iptables' }, '--firewall-bin-path valid values are only "iptables-legacy", "iptables-nft" and "iptables"'],
  ] as const)('%j: %s', (fields, message) => {
    expect(buildFirewallConfiguration(proxyInitConfig(fields), 4)).toEqual({ ok: false, error: message });
  });

  it('accepts what net.ParseCIDR accepts, trimmed', () => {
    const r = buildFirewallConfiguration(proxyInitConfig({ ...base, subnetsToIgnore: ['1.1.1.1/24 ', ' fd00::/8', '::ffff:10.0.0.1/120', '10.0.0.0/08'] }), 4);
    expect(r.ok && r.value.subnetsToIgnore).toEqual(['1.1.1.1/24', 'fd00::/8', '::ffff:10.0.0.1/120', '10.0.0.0/08']);
  });

  it('picks binaries from --iptables-mode, else --firewall-bin-path (the save path is never used)', () => {
    const bins = (fields: object, family: 4 | 6) => {
      const r = buildFirewallConfiguration(proxyInitConfig({ ...base, ...fields }), family);
      return r.ok ? [r.value.binPath, r.value.saveBinPath] : r.error;
    };
    expect(bins({}, 4)).toEqual(['iptables-legacy', 'iptables-legacy-save']);
    expect(bins({ iptablesMode: 'plain' }, 6)).toEqual(['ip6tables', 'ip6tables-save']);
    expect(bins({ firewallBinPath: 'iptables-nft', firewallSaveBinPath: 'whatever' }, 6)).toEqual(['ip6tables-nft', 'ip6tables-nft-save']);
    expect(bins({ firewallBinPath: 'iptables' }, 4)).toEqual(['iptables', 'iptables-save']);
    expect(bins({ iptablesMode: 'legacy', firewallBinPath: 'nonsense' }, 4)).toEqual(['iptables-legacy', 'iptables-legacy-save']);
  });

  it('checks the log level before the configuration, after the close-wait sysctl', () => {
    const r = compileProxyInit({ timeoutCloseWaitSecs: 3600, logLevel: 'chatty' });
    expect(r.commands).toEqual(['sysctl -w net.netfilter.nf_conntrack_tcp_timeout_close_wait=3600']);
    expect(r.error).toMatchObject({ stage: 'config', message: 'not a valid logrus Level: "chatty"', stderrFirstLine: 'Error: not a valid logrus Level: "chatty"' });
    expect(compileProxyInit({ ...base, logLevel: 'WARNING', ipv6: false }).error).toBeUndefined();
  });
});
