/**
 * compileProxyInit beyond the vectors: --netns, --simulate, -w, the re-run decisions, older
 * releases, and iptables' own answers to what proxy-init asks of it.
 */
import { describe, expect, it } from 'vitest';
import { compileProxyInit } from '../../../src/compile/linkerd/proxy-init.js';
import { checkAddressOption, runIptablesCommand, natStateFromSave } from '../../../src/compile/linkerd/iptables-model.js';

const base = { incomingProxyPort: 4143, outgoingProxyPort: 4140, proxyUid: 2102, ipv6: false };

describe('compileProxyInit', () => {
  it('wraps every command, saves included, in nsenter under --netns', () => {
    const r = compileProxyInit({ ...base, netns: '/var/run/netns/pod a' });
    expect(r.commands[0]).toBe("nsenter '--net=/var/run/netns/pod a' -- iptables-legacy-save -t nat");
    expect(r.commands.every((l) => l.startsWith("nsenter '--net=/var/run/netns/pod a' -- "))).toBe(true);
    expect(r.runs[0]!.argv[0]).toEqual(['-t', 'nat', '-N', 'PROXY_INIT_REDIRECT']);
  });

  it('under --simulate logs every command of a fresh run, ignores the existing rules, executes nothing', () => {
    const existing = '*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:PROXY_INIT_REDIRECT - [0:0]\nCOMMIT\n';
    const r = compileProxyInit({ ...base, simulate: true }, { existing });
    expect(r.commands[1]).toBe('iptables-legacy -t nat -N PROXY_INIT_REDIRECT');
    expect(r.runs[0]!.executed).toBe(false);
    expect(r.error).toBeUndefined();
  });

  it('appends -w last to mutating commands only', () => {
    const r = compileProxyInit({ ...base, useWaitFlag: true });
    expect(r.commands[0]).toBe('iptables-legacy-save -t nat');
    expect(r.commands.at(-1)).toBe('iptables-legacy-save -t nat');
    expect(r.commands.slice(1, -1).every((l) => l.endsWith(' -w'))).toBe(true);
  });

  it('matches existing jumps with upstream regexes: any comment, not anchored at the chain name end', () => {
    const existing = [
      '*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]',
      ':PROXY_INIT_REDIRECT - [0:0]', ':PROXY_INIT_REDIRECT_X - [0:0]',
      '-A PREROUTING -j PROXY_INIT_REDIRECT_X', 'COMMIT', '',
    ].join('\n');
    const r = compileProxyInit(base, { existing });
    expect(r.commands).toContain('iptables-legacy -t nat -F PROXY_INIT_REDIRECT');
    expect(r.commands.some((l) => l.includes('-A PREROUTING'))).toBe(false);
    expect(r.commands).toContain('iptables-legacy -t nat -N PROXY_INIT_OUTPUT');
    expect(r.commands.some((l) => l.includes('-A OUTPUT -j PROXY_INIT_OUTPUT'))).toBe(true);
  });

  it('only looks at the nat table of a full save', () => {
    const existing = '*filter\n:INPUT ACCEPT [0:0]\n:PROXY_INIT_OUTPUT - [0:0]\nCOMMIT\n*nat\n:PREROUTING ACCEPT [0:0]\nCOMMIT\n';
    const r = compileProxyInit(base, { existing });
    expect(r.commands).toContain('iptables-legacy -t nat -N PROXY_INIT_OUTPUT');
  });

  it('uses existing6 for the IPv6 pass', () => {
    const existing6 = '*nat\n:PREROUTING ACCEPT [0:0]\n:PROXY_INIT_OUTPUT - [0:0]\nCOMMIT\n';
    const r = compileProxyInit({ ...base, ipv6: true }, { existing6 });
    expect(r.commands).toContain('iptables-legacy -t nat -N PROXY_INIT_OUTPUT');
    expect(r.commands).toContain('ip6tables-legacy -t nat -F PROXY_INIT_OUTPUT');
  });

  it('fails as iptables does on a chain that a non-proxy-init tool left in a state the regexes miss', () => {
    // The chain exists but is not declared in what the save returned (e.g. a stale text).
    const r = compileProxyInit({ ...base, iptablesMode: 'nft' }, { existing: '*nat\n:PROXY_INIT_REDIRECT - [0:0]\n-A PREROUTING -j PROXY_INIT_REDIRECT\nCOMMIT\n' });
    expect(r.error).toBeUndefined();
    expect(r.commands[1]).toBe('iptables-nft -t nat -F PROXY_INIT_REDIRECT');
  });

  it('keeps going with continueOnError (library only)', () => {
    const r = compileProxyInit({ ...base, inboundPortsToIgnore: ['nope'] }, { continueOnError: true });
    expect(r.error).toBeUndefined();
    expect(r.runs[0]!.failed).toEqual([1]);
    expect(r.commands.at(-1)).toBe('iptables-legacy-save -t nat');
    expect(r.log).toContain('continuing despite error: exit status 2');
  });

  it('fails on values iptables rejects: uid above 4294967294, a --ports-to-redirect port out of range', () => {
    const uid = compileProxyInit({ ...base, proxyUid: 4294967295 });
    expect(uid.error).toMatchObject({ stage: 'iptables', toolExitCode: 2, failingCommandLine: 6 });
    expect(uid.error!.toolStderr).toBe('iptables v1.8.9 (legacy): owner: Bad value for "--uid-owner" option: "4294967295"\nTry `iptables -h\' or \'iptables --help\' for more information.\n');
    const port = compileProxyInit({ ...base, iptablesMode: 'nft', portsToRedirect: [8080, 70000] });
    expect(port.error!.toolStderr).toBe("iptables v1.8.9 (nf_tables): invalid port/service `70000' specified\nTry `iptables -h' or 'iptables --help' for more information.\n");
    expect(port.commands.at(-1)).toContain('--destination-port 70000');
  });
});

describe('older proxy-init releases', () => {
  const ts = 1681263857;

  it('v2.3.0: timestamped comments, flush-and-reuse, IPv6 failures only logged', () => {
    const r = compileProxyInit({ ...base, ipv6: true, subnetsToIgnore: ['10.0.0.0/8'] }, { upstreamVersion: 'v2.3.0', timestamp: ts });
    expect(r.commands[1]).toBe('iptables-legacy -t nat -N PROXY_INIT_REDIRECT');
    expect(r.commands[2]).toBe(`iptables-legacy -t nat -A PROXY_INIT_REDIRECT -p all -j RETURN -s 10.0.0.0/8 -m comment --comment proxy-init/ignore-subnet-10.0.0.0/8/${ts}`);
    expect(r.error).toBeUndefined();
    expect(r.warnings).toHaveLength(1);
    expect(r.ipv6).toBe(true);
  });

  it('v2.4.0: no timestamps, gid rule, but an IPv6 failure is still survived', () => {
    const r = compileProxyInit({ ...base, proxyGid: 7, ipv6: true, subnetsToIgnore: ['10.0.0.0/8'] }, { upstreamVersion: 'v2.4.0' });
    expect(r.commands.some((l) => l.includes('--gid-owner 7'))).toBe(true);
    expect(r.commands.some((l) => l.endsWith('/1681263857'))).toBe(false);
    expect(r.error).toBeUndefined();
    expect(compileProxyInit({ ...base, ipv6: true, subnetsToIgnore: ['10.0.0.0/8'] }, { upstreamVersion: 'v2.4.1' }).error?.pass).toBe('ipv6');
  });

  it('refuses options the release does not have, as its command line would', () => {
    expect(compileProxyInit({ ...base, proxyGid: 7 }, { upstreamVersion: 'v2.3.0' }).error?.message).toBe('unknown flag: --proxy-gid');
    expect(compileProxyInit({ ...base, iptablesMode: 'nft' }, { upstreamVersion: 'v2.2.0' }).error?.message).toBe('unknown flag: --iptables-mode');
  });

  it('v2.1.0: chains created with a comment, every jump added, no IPv6 pass', () => {
    const r = compileProxyInit({ ...base, ipv6: true, firewallBinPath: 'iptables-nft', firewallSaveBinPath: 'iptables-nft-save' }, { upstreamVersion: 'v2.1.0', timestamp: ts });
    expect(r.commands[0]).toBe('iptables-nft-save -t nat');
    expect(r.commands[1]).toBe(`iptables-nft -t nat -N PROXY_INIT_REDIRECT -m comment --comment proxy-init/redirect-common-chain/${ts}`);
    expect(r.runs).toHaveLength(1);
    expect(r.ipv6).toBe(false);
  });

  it('v2.1.0: skips the run when proxy-init rules exist; crashes on an empty leftover chain', () => {
    const withRules = '*nat\n:PREROUTING ACCEPT [0:0]\n:PROXY_INIT_OUTPUT - [0:0]\n-A PROXY_INIT_OUTPUT -o lo -j RETURN\nCOMMIT\n';
    const skipped = compileProxyInit(base, { upstreamVersion: 'v2.1.0', timestamp: ts, existing: withRules });
    expect(skipped.commands).toEqual(['iptables-save -t nat']);
    expect(skipped.runs[0]!.skipped).toBe(true);
    expect(skipped.log).toContain('skipping iptables setup: found 1 existing chains');

    const empty = '*nat\n:PREROUTING ACCEPT [0:0]\n:PROXY_INIT_REDIRECT - [0:0]\nCOMMIT\n';
    const crash = compileProxyInit(base, { upstreamVersion: 'v2.1.0', timestamp: ts, existing: empty });
    expect(crash.commands).toHaveLength(2);
    expect(crash.error).toMatchObject({ stage: 'iptables', message: 'exit status 1', toolExitCode: 1, toolStderr: 'iptables: Chain already exists.\n' });
  });

  it('v1.3.12: the redirect-non-loopback-local-traffic rule before the uid RETURN', () => {
    const r = compileProxyInit(base, { upstreamVersion: 'v1.3.12', timestamp: ts });
    const i = r.commands.findIndex((l) => l.includes('redirect-non-loopback-local-traffic'));
    expect(r.commands[i]).toBe(`iptables -t nat -A PROXY_INIT_OUTPUT -m owner --uid-owner 2102 -o lo '!' -d 127.0.0.1/32 -j PROXY_INIT_REDIRECT -m comment --comment proxy-init/redirect-non-loopback-local-traffic/${ts}`);
    expect(r.commands[i + 1]).toContain('ignore-proxy-user-id');
  });

  it('rejects releases it does not model', () => {
    expect(() => compileProxyInit(base, { upstreamVersion: 'v1.2.0' })).toThrow(/oldest modelled release/);
    expect(() => compileProxyInit(base, { upstreamVersion: 'banana' })).toThrow(/unknown proxy-init version/);
  });
});

describe('what iptables 1.8.9 answers', () => {
  it.each([
    [4, '10.0.0.0/8', undefined],
    [4, '10.0.0.0/010', undefined],
    [4, '10.0.0.0/08', "invalid mask `08' specified"],
    [4, 'fd00::/8', "host/network `fd00::' not found"],
    [4, 'fd00::/64', "invalid mask `64' specified"],
    [4, 'fd00::/0', undefined],
    [4, '::ffff:1.2.3.4/128', "invalid mask `128' specified"],
    [6, '10.0.0.0/8', "host/network `10.0.0.0' not found"],
    [6, '0.0.0.0/0', undefined],
    [6, '::ffff:1.2.3.4/96', undefined],
    [6, 'fd00::/09', "invalid mask `09' specified"],
    [6, '127.0.0.1/32', "host/network `127.0.0.1' not found"],
  ] as const)('family %d, -s %s: %s', (family, address, message) => {
    expect(checkAddressOption(family, address)).toBe(message);
  });

  it('-N on an existing chain, -F / -A on a missing one', () => {
    const state = natStateFromSave('*nat\n:PROXY_INIT_OUTPUT - [0:0]\nCOMMIT\n');
    expect(runIptablesCommand(6, 'ip6tables-nft', ['-t', 'nat', '-N', 'PROXY_INIT_OUTPUT'], state)).toEqual({ exitCode: 1, stderr: 'ip6tables: Chain already exists.\n' });
    expect(runIptablesCommand(4, 'iptables', ['-t', 'nat', '-F', 'PROXY_INIT_REDIRECT'], state)).toEqual({ exitCode: 1, stderr: 'iptables: No chain/target/match by that name.\n' });
    expect(runIptablesCommand(4, 'iptables', ['-t', 'nat', '-N', 'PROXY_INIT_REDIRECT'], state)).toBeUndefined();
    expect(runIptablesCommand(4, 'iptables', ['-t', 'nat', '-A', 'PROXY_INIT_REDIRECT', '-o', 'lo', '-j', 'RETURN'], state)).toBeUndefined();
  });
});
