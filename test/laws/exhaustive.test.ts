// The capture laws over every probe: they hold for what the Linkerd and Istio compilers write,
// and on planted bugs they find the smallest counterexample every time, including holes one
// port wide that sampling misses. Each counterexample replays with connect.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { connection, istioConfig, linkerdConfig } from '../../src/arbitraries/index.js';
import { Netns } from '../../src/engine/path/netns.js';
import {
  appTrafficReachesProxy, excludedNeverRedirected, istioCapture, linkerdCapture, proveAppTrafficReachesProxy, proveCaptureLaws,
  proveExcludedNeverRedirected, proveProxyNeverCapturesItself, proxyNeverCapturesItself,
  type CaptureSetup, type LawProof,
} from '../../src/laws/index.js';

function nat(outputRules: readonly string[]): string {
  return ['*nat', ':PREROUTING ACCEPT [0:0]', ':INPUT ACCEPT [0:0]', ':OUTPUT ACCEPT [0:0]', ':POSTROUTING ACCEPT [0:0]', ':IN - [0:0]', ':OUT - [0:0]',
    '-A PREROUTING -j IN', '-A IN -p tcp -m multiport --dports 4190,4191 -j RETURN', '-A IN -p tcp -j REDIRECT --to-ports 4143',
    '-A OUTPUT -j OUT', ...outputRules, 'COMMIT', ''].join('\n');
}

const GOOD = [
  '-A OUT -m owner --uid-owner 2102 -j RETURN',
  '-A OUT -o lo -j RETURN',
  '-A OUT -p tcp -m multiport --dports 4567,4568 -j RETURN',
  '-A OUT -p tcp -j REDIRECT --to-ports 4140',
];

function setup(rules: string): CaptureSetup {
  return {
    rules,
    proxy: { uids: [2102], outboundPort: 4140, inboundPort: 4143 },
    outbound: { excludedPorts: [{ min: 4567, max: 4568 }] },
    inbound: { excludedPorts: [{ min: 4190, max: 4191 }] },
  };
}

/** The counterexample's own connect gives what its message says, and is a broken probe. */
function expectReplays(r: LawProof, s: CaptureSetup): NonNullable<Extract<LawProof, { holds: false }>['counterexample']> {
  expect(r.holds).toBe(false);
  const cx = (r as Extract<LawProof, { holds: false }>).counterexample;
  expect(cx.command).toMatch(/^netfilter-sim connect --rules - --listen 4140,4143 --from (local|remote) /);
  const replay = new Netns({ rules: s.rules as string, listen: [4140, 4143] }).connect({ ...cx.probe!, sport: cx.probe!.from === 'local' ? 41000 : 40000 } as never);
  expect({ outcome: replay.outcome, address: replay.address, port: replay.port }).toEqual({ outcome: cx.result!.outcome, address: cx.result!.address, port: cx.result!.port });
  return cx;
}

describe('exhaustive capture laws', () => {
  it('hold for correct rules, with the classes as proof', () => {
    const s = setup(nat(GOOD));
    const r = proveCaptureLaws(s);
    expect(r.holds).toBe(true);
    const app = proveAppTrafficReachesProxy(s);
    expect(app.holds && app.cells).toBeGreaterThan(0);
    expect(app.spaces[0]!.classes.some((c) => c.outcome === 'local' && c.port === 4140)).toBe(true);
  });

  it('a dropped owner RETURN: the proxy captures itself; the smallest counterexample is uid 2102 to 0.0.0.1:1', () => {
    // 0.0.0.0 is the host itself: connect() sends to 127.0.0.1 through lo, which the rules exempt.
    const s = setup(nat(GOOD.slice(1)));
    const cx = expectReplays(proveProxyNeverCapturesItself(s), s);
    expect(cx.probe).toEqual({ from: 'local', uid: 2102, gid: 0, dst: '0.0.0.1:1', proto: 'tcp' });
    expect(cx.result!.port).toBe(4140);
  });

  it('a truncated port list: port 4568 is redirected, found exactly', () => {
    const s = setup(nat(GOOD.map((l) => l.replace('4567,4568', '4567'))));
    const cx = expectReplays(proveExcludedNeverRedirected(s), s);
    expect(cx.probe).toMatchObject({ from: 'local', uid: 0, dst: '1.0.0.0:4568' });
  });

  it('an off-by-one range: 4567:4569 exempts one port too many, which must be captured', () => {
    const s = setup(nat(GOOD.map((l) => l.replace('-m multiport --dports 4567,4568', '--dport 4567:4569'))));
    const cx = expectReplays(proveAppTrafficReachesProxy(s), s);
    expect(cx.probe).toMatchObject({ from: 'local', uid: 0, dst: '1.0.0.0:4569' });
  });

  it('a single skipped port: found every time, though 500 sampled probes miss it', () => {
    for (const port of [1, 8081, 31337, 65535]) {
      const s = setup(nat([...GOOD.slice(0, 3), `-A OUT -p tcp --dport ${port} -j RETURN`, GOOD[3]!]));
      const cx = expectReplays(proveAppTrafficReachesProxy(s), s);
      expect(cx.probe).toMatchObject({ from: 'local', dst: `1.0.0.0:${port}` });
    }
    // The sampled law, on the same hole, with a fixed seed: no probe lands on the one port.
    const s = setup(nat([...GOOD.slice(0, 3), '-A OUT -p tcp --dport 31337 -j RETURN', GOOD[3]!]));
    const found = fc.sample(connection({ from: 'local' }), { numRuns: 500, seed: 42 }).some((p) => appTrafficReachesProxy(s, p) !== undefined);
    expect(found).toBe(false);
  });

  test.prop([linkerdConfig({ ipv6: 'either' })], { numRuns: 6 })('hold for what proxy-init writes', (config) => {
    const r = proveCaptureLaws(linkerdCapture(config));
    expect(r.holds, r.holds ? '' : r.counterexample.message).toBe(true);
  });

  test.prop([istioConfig({ interceptionModes: ['REDIRECT'] })], { numRuns: 6 })('hold for what istio-iptables writes', (config) => {
    const r = proveCaptureLaws(istioCapture(config));
    expect(r.holds, r.holds ? '' : r.counterexample.message).toBe(true);
  });

  it('the sampled laws agree on each exhaustive counterexample', () => {
    const bugs: [string[], (s: CaptureSetup) => LawProof, typeof proxyNeverCapturesItself][] = [
      [GOOD.slice(1), proveProxyNeverCapturesItself, proxyNeverCapturesItself],
      [GOOD.map((l) => l.replace('4567,4568', '4567')), proveExcludedNeverRedirected, excludedNeverRedirected],
      [[...GOOD.slice(0, 3), '-A OUT -p tcp --dport 31337 -j RETURN', GOOD[3]!], proveAppTrafficReachesProxy, appTrafficReachesProxy],
    ];
    for (const [rules, prove, sampled] of bugs) {
      const s = setup(nat(rules));
      const r = prove(s);
      expect(r.holds).toBe(false);
      const cx = (r as Extract<LawProof, { holds: false }>).counterexample;
      expect(sampled(s, cx.probe!)?.law).toBe(cx.law);
    }
  });
});
