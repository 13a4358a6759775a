// kube-proxy's TestTracePacket fixture (test/fixtures/kubernetes, Apache-2.0) with the outcomes listed in
// test/fixtures/kubernetes/ATTRIBUTION.md and ../shared/corpus/README.md. The node: node IPs local (192.168.0.2, 192.168.1.2, 192.168.99.11,
// 2001:db8::1, 2001:db8:1::2), pods behind cbr0 (10.0.0.0/8), forwarding on, as a node has it.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import { fixture } from './helpers.js';

const RULES = fixture('kubernetes/kube-proxy_tracepacket-fixture.kernel-save');

const node = () =>
  new Netns({
    rules: RULES,
    interfaces: {
      eth0: ['192.168.0.2/24', '192.168.1.2/24', '192.168.99.11/24', '2001:db8::1/64', '2001:db8:1::2/64'],
      cbr0: ['10.0.0.1/8'],
    },
    gateway: ['192.168.0.1'],
    ipForward: true,
    routeLocalnet: true,
    listen: [30000],
  });

describe('kube-proxy TestTracePacket fixture', () => {
  it('no match: 10.0.0.2 → 10.0.0.3:80 is forwarded unchanged', () => {
    expect(node().connect({ from: 'remote', src: '10.0.0.2', dst: '10.0.0.3:80' })).toMatchObject({ outcome: 'remote', address: '10.0.0.3', port: 80 });
  });

  it('single endpoint: 10.0.0.2 → 172.30.0.41:80 is DNATed to 10.180.0.1:80', () => {
    expect(node().connect({ from: 'remote', src: '10.0.0.2', dst: '172.30.0.41:80' })).toMatchObject({ outcome: 'remote', address: '10.180.0.1', port: 80 });
  });

  it('multiple endpoints: 10.0.0.2 → 172.30.0.44:80 goes to either endpoint, each with probability 1/2', () => {
    const all = node().connectAll({ from: 'remote', src: '10.0.0.2', dst: '172.30.0.44:80' });
    expect(all.map((r) => `${r.address}:${r.port}`)).toEqual(['10.180.0.4:80', '10.180.0.5:80']);
    expect(all.map((r) => r.probability)).toEqual([0.5, 0.5]);
  });

  it('LOCAL source: 192.168.0.2 → 192.168.99.22:80 is DNATed to 10.180.0.2:80 and masqueraded', () => {
    const r = node().connect({ from: 'local', uid: 0, src: '192.168.0.2', dst: '192.168.99.22:80' });
    expect(r).toMatchObject({ outcome: 'remote', address: '10.180.0.2', port: 80 });
    expect(r.steps.some((s) => s.chain === 'KUBE-MARK-MASQ')).toBe(true);
    expect(r.steps.some((s) => s.chain === 'KUBE-POSTROUTING' && s.target === 'MASQUERADE')).toBe(true);
    const masq = r.trace!.find((e) => e.type === 'nat' && e.action === 'MASQUERADE');
    expect(masq).toMatchObject({ to: '10.0.0.1:58180' });
  });

  it('DROP: 203.0.113.2 → 192.168.99.22:80 (no local endpoints) is dropped by KUBE-EXTERNAL-SERVICES', () => {
    const r = node().connect({ from: 'remote', src: '203.0.113.2', dst: '192.168.99.22:80' });
    expect(r.outcome).toBe('dropped');
    expect(r.steps.at(-1)).toMatchObject({ chain: 'KUBE-EXTERNAL-SERVICES', target: 'DROP' });
  });

  it('ACCEPT: 192.168.0.2 → 192.168.0.2:30000 (health check node port) is accepted by KUBE-NODEPORTS', () => {
    const r = node().connect({ from: 'local', uid: 0, dst: '192.168.0.2:30000' });
    expect(r).toMatchObject({ outcome: 'local', address: '192.168.0.2', port: 30000 });
    expect(r.steps.some((s) => s.table === 'filter' && s.chain === 'KUBE-NODEPORTS' && s.target === 'ACCEPT')).toBe(true);
  });

  it('REJECT: 10.0.0.2 → 172.30.0.46:80 (no endpoints) is rejected', () => {
    const r = node().connect({ from: 'remote', src: '10.0.0.2', dst: '172.30.0.46:80' });
    expect(r.outcome).toBe('refused');
    expect(r.steps.filter((s) => s.packet === 'SYN').at(-1)).toMatchObject({ chain: 'KUBE-SERVICES', target: 'REJECT' });
    // the ICMP error goes back through OUTPUT and POSTROUTING to the client
    expect(r.trace!.some((e) => e.label === 'ICMP' && e.type === 'wire' && e.dev === 'cbr0')).toBe(true);
  });
});
