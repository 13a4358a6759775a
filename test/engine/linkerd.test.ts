// The Linkerd default rules (test/fixtures/linkerd/injected-default.save) and the probes of
// proxy-init's integration lab (test/fixtures/linkerd/lab.json, kernel-verified there).
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectResult, ConnectSpec } from '../../src/engine/path/netns.js';
import { fixture } from './helpers.js';

const DEFAULT = fixture('linkerd/injected-default.save');

describe('linkerd injected-default rules', () => {
  const ns = () => new Netns({ rules: DEFAULT, listen: [4140, 4143, 8080, 4191] });

  it('an app connection to a service goes to the outbound proxy, with SO_ORIGINAL_DST', () => {
    const r = ns().connect({ from: 'local', uid: 1000, gid: 1000, dst: '10.96.0.10:80' });
    expect(r).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140, originalDestination: '10.96.0.10:80' });
    expect(r.steps.filter((s) => s.packet === 'SYN' && s.event === 'rule').map((s) => `${s.chain}:${s.rule} ${s.target}`)).toEqual([
      'OUTPUT:1 PROXY_INIT_OUTPUT',
      'PROXY_INIT_OUTPUT:4 REDIRECT',
    ]);
  });

  it('the proxy (uid 2102) is not redirected', () => {
    expect(ns().connect({ from: 'local', uid: 2102, dst: '10.96.0.10:80' })).toMatchObject({ outcome: 'remote', address: '10.96.0.10', port: 80, originalDestination: null });
  });

  it('outbound ports 4567,4568 are skipped', () => {
    expect(ns().connect({ from: 'local', uid: 1000, dst: '10.1.0.5:4567' })).toMatchObject({ outcome: 'remote', address: '10.1.0.5', port: 4567 });
  });

  it('inbound goes to 4143, except the ignored ports', () => {
    const n = ns();
    expect(n.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' })).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 4143, originalDestination: '10.0.0.2:8080' });
    expect(n.connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:4191' })).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 4191 });
  });

  it('counts packets per rule, as iptables -L -v', () => {
    const n = ns();
    n.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }, { trace: false });
    n.connect({ from: 'local', uid: 1000, dst: '10.96.0.11:80' }, { trace: false });
    // only each connection's first packet crosses the nat chains
    expect(n.counters().filter((c) => c.chain === 'PROXY_INIT_OUTPUT')).toEqual([{ table: 'nat', chain: 'PROXY_INIT_OUTPUT', rule: 4, packets: 2 }]);
  });

  it('loopback traffic is left alone, including to the pod IP', () => {
    const n = ns();
    expect(n.connect({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' })).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 8080 });
    expect(n.connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' })).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 8080 });
  });
});

// ---- the integration lab -----------------------------------------------------------------------

interface Listener {
  readonly container: string;
  readonly port: number;
  readonly uid: number;
}
interface Probe {
  readonly from: 'remote' | 'local';
  readonly uid: number | null;
  readonly dstAddress: string;
  readonly dstPort: number;
  readonly expected: 'proxy' | 'app' | 'refused' | 'not-redirected';
  readonly redirected: boolean;
  readonly matchedRules: readonly string[];
}
interface Pod {
  readonly args: readonly string[] | null;
  readonly listeners: readonly Listener[];
  readonly probes: readonly Probe[];
}

const LAB = JSON.parse(fixture('linkerd/lab.json')) as { pods: Record<string, Pod> };

/**
 * The rules each lab pod's proxy-init args give, written out as iptables-save prints them (the
 * pattern of the kernel-captured cases: `rerun-existing-rules` has exactly the lab's base args).
 */
const BASE = fixture('linkerd/rerun-existing-rules.save');
const REDIRECT_ALL = '-A PROXY_INIT_REDIRECT -p tcp -m comment --comment "proxy-init/redirect-all-incoming-to-proxy-port" -j REDIRECT --to-ports 8080\n';
const LAB_RULES: Record<string, string | null> = {
  'pod-with-no-rules': null,
  'pod-with-existing-rules': BASE,
  'pod-redirects-all-ports': BASE,
  'pod-redirects-whitelisted': BASE.replace(
    REDIRECT_ALL,
    '-A PROXY_INIT_REDIRECT -p tcp -m tcp --dport 9090 -m comment --comment "proxy-init/redirect-port-9090-to-proxy-port" -j REDIRECT --to-ports 8080\n' +
      '-A PROXY_INIT_REDIRECT -p tcp -m tcp --dport 9099 -m comment --comment "proxy-init/redirect-port-9099-to-proxy-port" -j REDIRECT --to-ports 8080\n',
  ),
  'pod-doesnt-redirect-blacklisted': BASE.replace(
    REDIRECT_ALL,
    '-A PROXY_INIT_REDIRECT -p tcp -m multiport --dports 6000:8000 -m comment --comment "proxy-init/ignore-port-6000:8000" -j RETURN\n' + REDIRECT_ALL,
  ),
  'pod-ignores-subnets': BASE.replace(
    REDIRECT_ALL,
    '-A PROXY_INIT_REDIRECT -s 0.0.0.0/0 -m comment --comment "proxy-init/ignore-subnet-0.0.0.0/0" -j RETURN\n' + REDIRECT_ALL,
  ),
};

const POD_IP = '10.0.0.2';
const OTHER_POD_IP = '10.0.0.3'; // pod-with-no-rules, seen from the other pods
const CLIENT_IP = '10.0.0.5';

function addressOf(name: string): string {
  return name === 'pod' ? POD_IP : name === '127.0.0.1' ? '127.0.0.1' : OTHER_POD_IP;
}

function matchedRules(r: ConnectResult): string[] {
  return (r.trace ?? [])
    .filter((e) => e.packet === 0 && e.type === 'rule' && e.table === 'nat')
    .map((e) => (e.type === 'rule' ? (e.comment ?? '').replace(/^proxy-init\//, '') : ''));
}

describe('linkerd proxy-init integration lab (kernel-verified probes)', () => {
  for (const [name, pod] of Object.entries(LAB.pods)) {
    describe(name, () => {
      const rules = LAB_RULES[name];
      const other = LAB.pods['pod-with-no-rules']!;
      const make = () =>
        new Netns({
          ...(rules ? { rules } : {}),
          listen: pod.listeners.map((l) => ({ port: l.port, uid: l.uid, proto: 'tcp' as const })),
          peers: { [OTHER_POD_IP]: other.listeners.map((l) => l.port) },
        });
      for (const p of pod.probes) {
        it(`${p.from}${p.uid !== null ? ` uid ${p.uid}` : ''} → ${p.dstAddress}:${p.dstPort}: ${p.expected}`, () => {
          const dst = `${addressOf(p.dstAddress)}:${p.dstPort}`;
          const spec: ConnectSpec = p.from === 'local' ? { from: 'local', uid: p.uid ?? 0, dst } : { from: 'remote', src: CLIENT_IP, dst };
          const r = make().connect(spec);
          switch (p.expected) {
            case 'proxy':
              expect(r).toMatchObject({ outcome: 'local', port: 8080 });
              break;
            case 'app':
              expect(r).toMatchObject({ outcome: 'local', port: p.dstPort });
              break;
            case 'refused':
              expect(r.outcome).toBe('refused');
              break;
            case 'not-redirected':
              expect(r.port).toBe(p.dstPort);
              expect(r.address).toBe(addressOf(p.dstAddress));
              break;
          }
          expect(matchedRules(r)).toEqual(p.matchedRules);
          const redirected = (r.trace ?? []).some((e) => e.type === 'nat' && e.action === 'REDIRECT');
          expect(redirected).toBe(p.redirected);
        });
      }
    });
  }
});
