// Each law catches the bug it is about, reports it with a replayable command, and holds for
// rules without the bug.
import { test } from '@fast-check/vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connection } from '../../src/arbitraries/index.js';
import { runConnect } from '../../src/cli/commands/connect.js';
import { memoryIO } from '../../src/cli/io.js';
import type { Ruleset } from '../../src/model/types.js';
import { applyIptablesCommands } from '../../src/iptables/syntax/apply.js';
import {
  appTrafficReachesProxy, checkCaptureLaws, connectCommand, excludedNeverRedirected, explainCounterexample,
  inboundReachesProxy, nonTcpNeverRedirected, printParseRoundTrip, proveProxyNeverCapturesItself, proxyNeverCapturesItself, rerunChangesNothing,
  type CaptureSetup, type Counterexample,
} from '../../src/laws/index.js';

/** A hand-written Linkerd-like rule set, with the rule lines given. */
function nat(outputRules: readonly string[], preroutingRules: readonly string[] = ['-A PREROUTING -j IN', '-A IN -p tcp -j REDIRECT --to-ports 4143']): string {
  return ['*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', ':IN - [0:0]', ':OUT - [0:0]',
    ...preroutingRules, '-A OUTPUT -j OUT', ...outputRules, 'COMMIT', ''].join('\n');
}

const GOOD = nat([
  '-A OUT -m owner --uid-owner 2102 -j RETURN',
  '-A OUT -o lo -j RETURN',
  '-A OUT -p tcp -m multiport --dports 4567,4568 -j RETURN',
  '-A OUT -p tcp -j REDIRECT --to-ports 4140',
]);

function setup(rules: string, extra: Partial<CaptureSetup> = {}): CaptureSetup {
  return {
    rules,
    proxy: { uids: [2102], outboundPort: 4140, inboundPort: 4143 },
    outbound: { excludedPorts: [{ min: 4567, max: 4568 }] },
    inbound: {},
    ...extra,
  };
}

function expectBroken(cx: Counterexample | undefined, law: RegExp): Counterexample {
  expect(cx).toBeDefined();
  expect(cx!.law).toMatch(law);
  return cx!;
}

describe('the laws hold for correct rules', () => {
  test.prop([connection({ protocols: ['tcp', 'udp'] })], { seed: 1, numRuns: 200 })('every capture law', (probe) => {
    const cx = checkCaptureLaws(setup(GOOD), probe);
    if (cx) throw new Error(explainCounterexample(cx));
  });
});

describe('each law catches its bug', () => {
  it('the proxy never captures its own traffic: a UID exemption after the redirect', () => {
    const rules = nat(['-A OUT -o lo -j RETURN', '-A OUT -p tcp -j REDIRECT --to-ports 4140', '-A OUT -m owner --uid-owner 2102 -j RETURN']);
    const cx = expectBroken(proxyNeverCapturesItself(setup(rules), { from: 'local', uid: 1000, dst: '10.96.0.10:80' }), /never captures its own/);
    expect(cx.probe).toMatchObject({ from: 'local', uid: 2102, dst: '10.96.0.10:80' });
    expect(cx.result).toMatchObject({ outcome: 'local', port: 4140 });
    expect(cx.command).toBe('netfilter-sim connect --rules - --listen 4140,4143,80 --from local --uid 2102 --dst 10.96.0.10:80');
  });

  it('every app connection reaches the proxy: an undeclared exemption', () => {
    const rules = nat(['-A OUT -m owner --uid-owner 2102 -j RETURN', '-A OUT -d 10.96.0.0/12 -j RETURN', '-A OUT -p tcp -j REDIRECT --to-ports 4140']);
    expectBroken(appTrafficReachesProxy(setup(rules), { from: 'local', uid: 1000, dst: '10.96.0.10:80' }), /reaches the outbound proxy/);
    expect(appTrafficReachesProxy(setup(rules, { outbound: { excludedDestinations: ['10.96.0.0/12'] } }), { from: 'local', uid: 1000, dst: '10.96.0.10:80' })).toBeUndefined();
  });

  it('excluded ports are never redirected: a skip list cut short', () => {
    const ports = Array.from({ length: 16 }, (_, i) => 9000 + i);
    const rules = nat(['-A OUT -m owner --uid-owner 2102 -j RETURN', `-A OUT -p tcp -m multiport --dports ${ports.slice(0, 15).join(',')} -j RETURN`, '-A OUT -p tcp -j REDIRECT --to-ports 4140']);
    const s = setup(rules, { outbound: { excludedPorts: ports.map((p) => ({ min: p, max: p })) } });
    expect(excludedNeverRedirected(s, { from: 'local', uid: 1000, dst: '10.1.0.5:9000' })).toBeUndefined();
    expectBroken(excludedNeverRedirected(s, { from: 'local', uid: 1000, dst: '10.1.0.5:9015' }), /excluded ports/);
  });

  it('non-TCP traffic is never redirected: a REDIRECT without -p tcp', () => {
    const rules = nat(['-A OUT -m owner --uid-owner 2102 -j RETURN', '-A OUT -p udp -j REDIRECT --to-ports 4140']);
    expectBroken(nonTcpNeverRedirected(setup(rules), { from: 'local', uid: 1000, dst: '10.96.0.10:53', proto: 'udp' }), /non-TCP/);
    expect(nonTcpNeverRedirected(setup(rules, { dns: { port: 53, listenPort: 4140 } }), { from: 'local', uid: 1000, dst: '10.96.0.10:53', proto: 'udp' })).toBeUndefined();
  });

  it('inbound connections reach the inbound proxy: a missing PREROUTING jump', () => {
    const rules = nat(['-A OUT -m owner --uid-owner 2102 -j RETURN', '-A OUT -p tcp -j REDIRECT --to-ports 4140'], ['-A IN -p tcp -j REDIRECT --to-ports 4143']);
    expectBroken(inboundReachesProxy(setup(rules), { from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' }), /inbound proxy/);
    expect(inboundReachesProxy(setup(GOOD), { from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' })).toBeUndefined();
  });

  it('the proxy never captures its own traffic: 0.0.0.0 and :: are the host itself, and asserted too', () => {
    // connect() to 0.0.0.0 (::) reaches 127.0.0.1 (::1) through lo: the proxy's own port is not a capture.
    expect(proxyNeverCapturesItself(setup(GOOD), { from: 'local', uid: 2102, dst: '0.0.0.0:4140' })).toBeUndefined();
    expect(proxyNeverCapturesItself(setup(GOOD, { rules6: GOOD }), { from: 'local', uid: 2102, dst: '[::]:4140' })).toBeUndefined();
    // Without the lo exemption and with the uid exemption after the redirect, it is captured.
    const rules = nat(['-A OUT -p tcp -j REDIRECT --to-ports 4140', '-A OUT -m owner --uid-owner 2102 -j RETURN']);
    const cx = expectBroken(proxyNeverCapturesItself(setup(rules), { from: 'local', uid: 1000, dst: '0.0.0.0:80' }), /never captures its own/);
    expect(cx.result).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140, originalDestination: '127.0.0.1:80' });
  });

  test.prop([connection({ from: 'local', destinations: ['10.96.0.0/12', '192.168.0.0/16', '10.1.0.0/16'] })], { seed: 3, numRuns: 100 })(
    'properties find the broken UID rule from any probe',
    (probe) => {
      const rules = nat(['-A OUT -p tcp -j REDIRECT --to-ports 4140', '-A OUT -m owner --uid-owner 2102 -j RETURN']);
      expect(proxyNeverCapturesItself(setup(rules), probe)?.law).toBe('the proxy never captures its own traffic');
    },
  );
});

describe('rule text', () => {
  const typo = nat(['-A OUT -m owner --uid-owner 2102 -j RETURN', '-A OUT -p tcp -m mutliport --dports 4567,4568 -j RETURN', '-A OUT -p tcp -j REDIRECT --to-ports 4140']);

  it('is read strictly: a typo is a BAD_CONFIG error at its line and column', () => {
    expect(() => proxyNeverCapturesItself(setup(typo), { from: 'local', uid: 1000, dst: '10.96.0.10:80' }))
      .toThrow(expect.objectContaining({ code: 'BAD_CONFIG', span: expect.objectContaining({ line: 12, column: 18 }), message: expect.stringMatching(/^<input>:12:18: CaptureSetup: the IPv4 rules do not parse: unknown match "mutliport"/) }));
  });

  it('read leniently, every counterexample and proof lists what was dropped', () => {
    // The dropped match turns the port exemption into a RETURN for every TCP connection.
    const cx = appTrafficReachesProxy(setup(typo, { lenient: true }), { from: 'local', uid: 1000, dst: '10.96.0.10:80' })!;
    expect(cx.warnings).toEqual([
      'IPv4 rules, line 12, column 18: unknown match "mutliport" (did you mean "multiport"?) (ignored)',
      'IPv4 rules, line 12, column 28: unknown option "--dports" ignored (iptables would refuse it)',
    ]);
    expect(explainCounterexample(cx)).toContain('Read leniently: the rules the law ran leave out what these say was dropped:\n  IPv4 rules, line 12, column 18: unknown match "mutliport"');
    const proof = proveProxyNeverCapturesItself(setup(typo, { lenient: true }));
    expect(proof.holds).toBe(true);
    expect(proof.warnings).toEqual(cx.warnings);
    expect(appTrafficReachesProxy(setup(GOOD, { lenient: true }), { from: 'local', uid: 1000, dst: '10.96.0.10:80' })).toBeUndefined();
  });
});

describe('counterexamples', () => {
  it('explain the law, the replay command with the rules, and the trace', () => {
    const rules = nat(['-A OUT -p tcp -j REDIRECT --to-ports 4140', '-A OUT -m owner --uid-owner 2102 -j RETURN']);
    const cx = proxyNeverCapturesItself(setup(rules), { from: 'local', uid: 1000, dst: '10.96.0.10:80' })!;
    const text = explainCounterexample(cx);
    expect(text).toContain('Law broken: the proxy never captures its own traffic');
    expect(text).toContain(`${cx.command} <<'EOF'`);
    expect(text).toContain('-A OUT -p tcp -j REDIRECT --to-ports 4140');
    expect(text).toContain('REDIRECT');
    expect(text).toMatch(/delivered to 127\.0\.0\.1:4140/);
  });

  it('print the probe that was run, and a replay snippet that bash runs as printed', () => {
    const rules = nat(['-A OUT -p tcp -j REDIRECT --to-ports 4140', '-A OUT -m owner --uid-owner 2102 -j RETURN']);
    // The law makes the connection as the proxy (uid and gid 2102), whatever the generated probe's owner.
    const cx = proxyNeverCapturesItself(setup(rules), { from: 'local', uid: 1000, gid: 7, dst: '10.96.0.10:8080', proto: 'tcp' })!;
    const text = explainCounterexample(cx);
    expect(text).toContain('Probe (the connection the law made):\n    {"from":"local","uid":2102,"gid":2102,"dst":"10.96.0.10:8080","proto":"tcp"}\n');
    const lines = text.split('\n');
    const start = lines.indexOf(`${cx.command} <<'EOF'`);
    const end = lines.indexOf('EOF', start);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    expect(lines.slice(start + 1, end).join('\n') + '\n').toBe(cx.rules);
    const snippet = lines.slice(start, end + 1).join('\n');
    // bash, with netfilter-sim on the PATH (the built CLI), runs the snippet exactly as printed.
    const main = resolve(import.meta.dirname, '../../dist/cli/main.js');
    expect(existsSync(main), 'needs the built dist/ (npm test builds first)').toBe(true);
    const bin = mkdtempSync(join(tmpdir(), 'nfsim-replay-'));
    try {
      writeFileSync(join(bin, 'netfilter-sim'), `#!/bin/sh\nexec "${process.execPath}" "${main}" "$@"\n`);
      chmodSync(join(bin, 'netfilter-sim'), 0o755);
      const r = spawnSync('bash', ['-c', `${snippet.replace(' <<', ' --json <<')}\n`], { encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` } });
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toMatchObject({ outcome: cx.result!.outcome, address: cx.result!.address, port: cx.result!.port });
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('replay with the connect command to the same outcome', async () => {
    const rules = nat(['-A OUT -p tcp -j REDIRECT --to-ports 4140', '-A OUT -m owner --uid-owner 2102 -j RETURN']);
    const cx = proxyNeverCapturesItself(setup(rules), { from: 'local', uid: 1000, dst: '10.96.0.10:80' })!;
    const io = memoryIO({}, cx.rules);
    expect(await runConnect([...cx.command!.split(' ').slice(2), '--json'], io)).toBe(0);
    expect(JSON.parse(io.out)).toMatchObject({ outcome: cx.result!.outcome, address: cx.result!.address, port: cx.result!.port });
  });

  it('write IPv6 probes with --rules6', () => {
    expect(connectCommand({ from: 'remote', src: 'fd01::5', dst: '[fd00::2]:8080', proto: 'udp' }, [4143], 6))
      .toBe("netfilter-sim connect --rules6 - --listen 4143 --from remote --src fd01::5 --dst '[fd00::2]:8080' --proto udp");
  });

  it('name the interfaces and gateway of a namespace that is not the default pod', () => {
    const s = setup(nat(['-A OUT -p tcp -j REDIRECT --to-ports 4140']), {
      netns: { interfaces: { eth0: ['10.1.2.3/16'] }, gateway: '10.1.0.1' },
    });
    const cx = proxyNeverCapturesItself(s, { from: 'local', uid: 1000, dst: '10.96.0.10:80' })!;
    expect(cx.command).toBe('netfilter-sim connect --rules - --listen 4140,4143,80 --iface eth0=10.1.2.3/16 --gateway 10.1.0.1 --from local --uid 2102 --dst 10.96.0.10:80');
  });
});

describe('rerunChangesNothing', () => {
  const commands = [['-t', 'nat', '-N', 'OUT'], ['-t', 'nat', '-A', 'OUTPUT', '-j', 'OUT'], ['-t', 'nat', '-A', 'OUT', '-p', 'tcp', '-j', 'REDIRECT', '--to-ports', '4140']];
  it('catches a generator that appends its rules again', () => {
    const run = (existing: Ruleset | undefined): Ruleset =>
      applyIptablesCommands(existing, existing ? commands.slice(1) : commands, { family: 4 });
    const cx = expectBroken(rerunChangesNothing(run, 4), /twice/);
    expect(cx.details).toContain('First difference');
  });
  it('catches a generator whose second run fails', () => {
    const run = (existing: Ruleset | undefined): Ruleset => applyIptablesCommands(existing, commands, { family: 4 });
    expect(expectBroken(rerunChangesNothing(run, 4), /twice/).message).toMatch(/second run failed/);
  });
  it('holds for a generator that flushes and reuses its chain', () => {
    const run = (existing: Ruleset | undefined): Ruleset =>
      applyIptablesCommands(existing, existing ? [['-t', 'nat', '-F', 'OUT'], commands[2]!] : commands, { family: 4 });
    expect(rerunChangesNothing(run, 4)).toBeUndefined();
  });
});

describe('printParseRoundTrip', () => {
  it('holds for a parsed rule set', () => {
    expect(printParseRoundTrip(applyIptablesCommands(undefined, [['-t', 'nat', '-A', 'OUTPUT', '-p', 'tcp', '--dport', '80', '-j', 'REDIRECT', '--to-port', '4140']], { family: 4 }))).toBeUndefined();
  });
  it('reports text that does not parse back', () => {
    const broken: Ruleset = { family: 4, tables: [{ name: 'filter', chains: [
      { name: 'INPUT', builtin: true, policy: 'ACCEPT', counters: { packets: 0, bytes: 0 }, rules: [{ matches: [{ name: 'nosuchmatch', options: {} }], target: null }] },
    ] }] };
    expect(printParseRoundTrip(broken)?.message).toMatch(/does not parse back/);
  });
});

