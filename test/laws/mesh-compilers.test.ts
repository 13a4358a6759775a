// The mesh compilers obey the capture laws across their option space: proxy-init (Linkerd) and
// istio-iptables, each configuration from the arbitraries, each probe from `connection()`.
import { fc, test } from '@fast-check/vitest';
import { describe } from 'vitest';
import { connection, istioConfig, linkerdConfig } from '../../src/arbitraries/index.js';
import type { ConnectionProbe } from '../../src/arbitraries/index.js';
import {
  appTrafficReachesProxy, excludedNeverRedirected, explainCounterexample, inboundReachesProxy, istioCapture, linkerdCapture,
  linkerdRerunIsIdempotent, nonTcpNeverRedirected, proxyNeverCapturesItself,
  type CaptureSetup, type Counterexample,
} from '../../src/laws/index.js';

type Law = (setup: CaptureSetup, probe: ConnectionProbe) => Counterexample | undefined;

const LAWS: readonly [string, Law, fc.Arbitrary<ConnectionProbe>][] = [
  ['the proxy never captures its own traffic', proxyNeverCapturesItself, connection({ from: 'local' })],
  ['every TCP connection from an app reaches the outbound proxy unless its port or destination is excluded', appTrafficReachesProxy,
    connection({ from: 'local', uids: [0, 1000, 33, 65534], gids: [0, 1000, 33] })],
  ['excluded ports and ranges are never redirected', excludedNeverRedirected, connection()],
  ['non-TCP traffic is never redirected', nonTcpNeverRedirected, connection({ protocols: ['udp'] })],
  ['inbound connections reach the inbound proxy unless skipped', inboundReachesProxy, connection({ from: 'remote' })],
];

function holds(cx: Counterexample | undefined): void {
  if (cx) throw new Error(explainCounterexample(cx));
}

describe('Linkerd proxy-init', () => {
  for (const [name, law, arb] of LAWS) {
    test.prop([linkerdConfig({ ipv6: 'either' }), arb], { seed: 4140, numRuns: 150 })(name, (config, probe) => {
      holds(law(linkerdCapture(config), probe));
    });
  }

  test.prop([linkerdConfig({ ipv6: true }), connection({ family: 6, protocols: ['tcp', 'udp'] })], { seed: 4143, numRuns: 100 })(
    'every capture law holds for IPv6 passes',
    (config, probe) => {
      const setup = linkerdCapture(config);
      for (const [, law] of LAWS) holds(law(setup, probe));
    },
  );

  test.prop([linkerdConfig({ ipv6: 'either', invalidPortEntries: true })], { seed: 2102, numRuns: 100 })(
    'compiling twice over existing rules changes nothing',
    (config) => holds(linkerdRerunIsIdempotent(config)),
  );
});

describe('istio-iptables', () => {
  for (const [name, law, arb] of LAWS) {
    test.prop([istioConfig(), arb], { seed: 15001, numRuns: 150 })(name, (config, probe) => {
      holds(law(istioCapture(config), probe));
    });
  }

  test.prop([istioConfig({ ipv6: true }), connection({ family: 6, protocols: ['tcp', 'udp'] })], { seed: 15006, numRuns: 100 })(
    'every capture law holds for IPv6 pods',
    (config, probe) => {
      const setup = istioCapture(config);
      for (const [, law] of LAWS) holds(law(setup, probe));
    },
  );
});

