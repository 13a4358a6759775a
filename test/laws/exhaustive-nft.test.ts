// The exhaustive capture laws on Istio's native nftables output (--native-nftables): they hold for
// what the compiler writes across the arbitraries, and on bugs planted in the nft transaction they
// find the smallest counterexample every time, one port wide included. Each counterexample
// replays with connect on the same nft rules.
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { connection, istioConfig } from '../../src/arbitraries/index.js';
import { Netns } from '../../src/engine/path/netns.js';
import { compileIstio } from '../../src/compile/istio/compile.js';
import type { IstioConfig } from '../../src/compile/istio/config.js';
import {
  appTrafficReachesProxy, explainCounterexample, inboundReachesProxy, istioCapture, proveAppTrafficReachesProxy, proveCaptureLaws,
  proveExcludedNeverRedirected, proveInboundReachesProxy, proveProxyNeverCapturesItself,
  type CaptureSetup, type LawProof,
} from '../../src/laws/index.js';

const CONFIG: Partial<IstioConfig> = { nativeNftables: true, outboundIPRangesInclude: '*', outboundPortsExclude: '4567,4568', inboundPortsInclude: '*', inboundPortsExclude: '4190' };
const SETUP = istioCapture(CONFIG);
const NFT = compileIstio(CONFIG).nft!;

/** The setup with its nft transaction changed by `plant`. */
function planted(plant: (lines: string[]) => string[]): CaptureSetup {
  const nft = plant(NFT.trimEnd().split('\n')).join('\n') + '\n';
  expect(nft).not.toBe(NFT);
  return { ...SETUP, nft };
}

/** The counterexample names the nft rules, and its own connect gives what it says. */
function expectReplays(r: LawProof, s: CaptureSetup): NonNullable<Extract<LawProof, { holds: false }>['counterexample']> {
  expect(r.holds).toBe(false);
  const cx = (r as Extract<LawProof, { holds: false }>).counterexample;
  expect(cx.rules).toBe(s.nft);
  expect(cx.command).toMatch(/^netfilter-sim connect --rules - --listen 15001,15006 --from (local|remote) /);
  expect(explainCounterexample(cx)).toContain(cx.law);
  const replay = new Netns({ nft: s.nft!, listen: [15001, 15006] }).connect({ ...cx.probe!, sport: cx.probe!.from === 'local' ? 41000 : 40000 } as never);
  expect({ outcome: replay.outcome, address: replay.address, port: replay.port }).toEqual({ outcome: cx.result!.outcome, address: cx.result!.address, port: cx.result!.port });
  return cx;
}

describe('exhaustive capture laws on native nftables', () => {
  it('hold for what istio-iptables --native-nftables writes, with classes as proof', () => {
    const r = proveCaptureLaws(SETUP);
    expect(r.holds, r.holds ? '' : r.counterexample.message).toBe(true);
    const app = proveAppTrafficReachesProxy(SETUP);
    expect(app.holds && app.spaces[0]!.classes.some((c) => c.outcome === 'local' && c.port === 15001)).toBe(true);
  });

  test.prop([istioConfig({ interceptionModes: ['REDIRECT'] })], { numRuns: 6 })('hold across the Istio arbitraries (native nftables)', (config) => {
    const r = proveCaptureLaws(istioCapture({ ...config, nativeNftables: true }));
    expect(r.holds, r.holds ? '' : r.counterexample.message).toBe(true);
  });

  it('a dropped owner return: the proxy (uid 1337) captures itself', () => {
    const s = planted((l) => l.filter((x) => !/istio-output skuid 1337 counter return$/.test(x)));
    const cx = expectReplays(proveProxyNeverCapturesItself(s), s);
    expect(cx.probe).toMatchObject({ from: 'local', uid: 1337 });
    expect(cx.result!.port).toBe(15001);
  });

  it('a truncated port list: port 4568 is redirected, found exactly', () => {
    const s = planted((l) => l.filter((x) => !/tcp dport 4568 counter return$/.test(x)));
    const cx = expectReplays(proveExcludedNeverRedirected(s), s);
    expect(cx.probe).toMatchObject({ from: 'local', uid: 0, dst: '1.0.0.0:4568' });
  });

  it('an off-by-one range: 4567-4569 exempts one port too many, which must be captured', () => {
    const s = planted((l) => l.map((x) => x.replace('tcp dport 4567 counter return', 'tcp dport 4567-4569 counter return')));
    const cx = expectReplays(proveAppTrafficReachesProxy(s), s);
    expect(cx.probe).toMatchObject({ from: 'local', uid: 0, dst: '1.0.0.0:4569' });
  });

  it('a single skipped port, outbound and inbound: found every time, though 500 sampled probes miss it', () => {
    for (const port of [1, 8081, 31337, 65535]) {
      const s = planted((l) => l.flatMap((x) => (/ output counter jump istio-output$/.test(x) ? [x.replace('counter jump istio-output', `tcp dport ${port} return`), x] : [x])));
      const cx = expectReplays(proveAppTrafficReachesProxy(s), s);
      expect(cx.probe).toMatchObject({ from: 'local', dst: `1.0.0.0:${port}` });
    }
    const s = planted((l) => l.flatMap((x) => (/ prerouting meta l4proto tcp counter jump istio-inbound$/.test(x) ? [x.replace('meta l4proto tcp counter jump istio-inbound', 'tcp dport 31337 return'), x] : [x])));
    const cx = expectReplays(proveInboundReachesProxy(s), s);
    expect(cx.probe).toMatchObject({ from: 'remote', dst: expect.stringMatching(/:31337$/) });
    // The sampled laws, on the same holes, with a fixed seed: no probe lands on the one port.
    const out = planted((l) => l.flatMap((x) => (/ output counter jump istio-output$/.test(x) ? [x.replace('counter jump istio-output', 'tcp dport 31337 return'), x] : [x])));
    expect(fc.sample(connection({ from: 'local' }), { numRuns: 500, seed: 42 }).some((p) => appTrafficReachesProxy(out, p) !== undefined)).toBe(false);
    expect(fc.sample(connection({ from: 'remote' }), { numRuns: 500, seed: 42 }).some((p) => inboundReachesProxy(s, p) !== undefined)).toBe(false);
  });
});
