// A program bound to a namespace's queues (Netns `queueReader`): NFQUEUE and nft `queue` hand it
// the packet and apply its answer; an accept may set a conntrack label, which `ct label` reads.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/index.js';
import type { QueuedPacket } from '../../src/engine/rules/targets.js';

const NFT = `table inet t {
  chain postrouting { type filter hook postrouting priority srcnat - 5; policy accept;
    ct label 7 ct state established,related accept
    ip daddr 10.0.0.9 queue flags bypass to 98
  }
  chain input { type filter hook input priority 0; policy accept;
    ct label 7 accept
    ip saddr 10.0.0.9 queue to 98
  }
}`;

const probe = { from: 'local' as const, uid: 1000, gid: 1000, dst: '10.0.0.9:80' };

describe('queue readers', () => {
  it('without a reader, bypass accepts and no bypass drops', () => {
    const ns = new Netns({ nft: NFT });
    const r = ns.connect(probe);
    // The SYN is bypassed in postrouting; the SYN-ACK meets `queue to 98` (no bypass) in input.
    expect(r.trace?.some((e) => e.type === 'effect' && e.hook === 'POSTROUTING' && e.detail === 'no program reads queue 98: bypassed (accepted)')).toBe(true);
    expect(r.outcome).toBe('dropped');
    expect(r.reason).toContain('NFQUEUE: no program reads queue 98');
  });

  it('the reader sees the packet and its answer decides; the trace says it was queued and who answered', () => {
    const seen: QueuedPacket[] = [];
    const ns = new Netns({ nft: NFT, queueReader: (q) => { seen.push(q); return { verdict: 'drop', by: 'the test', why: 'port 80' }; } });
    const r = ns.connect(probe);
    expect(r.outcome).toBe('dropped');
    expect(seen.length).toBe(1);
    expect(seen[0]).toMatchObject({ queue: 98, hook: 'POSTROUTING', family: 4, proto: 6, dport: 80, isNew: true, outIface: 'eth0' });
    expect(r.trace?.some((e) => e.type === 'effect' && e.detail === 'queued to queue 98; the test answered drop (port 80)')).toBe(true);
  });

  it('an accept with a label marks the connection: its answer passes `ct label 7` instead of being queued again', () => {
    const seen: QueuedPacket[] = [];
    const ns = new Netns({ nft: NFT, queueReader: (q) => { seen.push(q); return { verdict: 'accept', by: 'the test', label: 7 }; } });
    const r = ns.connect(probe);
    expect(r.outcome).toBe('remote');
    // The SYN and the ACK leave through postrouting: the SYN is queued, the ACK is established and labelled.
    expect(seen.map((q) => q.hook)).toEqual(['POSTROUTING']);
    expect(r.steps.some((s) => s.packet === 'SYN-ACK' && s.text?.startsWith('ct label 7 accept'))).toBe(true);
    expect(r.steps.some((s) => s.packet === 'ACK' && s.text?.startsWith('ct label 7 ct state established,related accept'))).toBe(true);
  });

  it('an accept without the label: the answer is queued again (no bypass: the reader answers it)', () => {
    const seen: QueuedPacket[] = [];
    const ns = new Netns({ nft: NFT, queueReader: (q) => { seen.push(q); return { verdict: 'accept', by: 'the test' }; } });
    expect(ns.connect(probe).outcome).toBe('remote');
    expect(seen.map((q) => `${q.hook} ${q.isNew}`)).toEqual(['POSTROUTING true', 'INPUT false', 'POSTROUTING false']);
  });

  it('iptables NFQUEUE asks the same reader; a reader that answers null leaves the queue unbound', () => {
    const rules = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -d 10.0.0.9/32 -j NFQUEUE --queue-num 3\nCOMMIT\n';
    expect(new Netns({ rules, queueReader: () => ({ verdict: 'accept', by: 'x' }) }).connect(probe).outcome).toBe('remote');
    const unbound = new Netns({ rules, queueReader: () => null }).connect(probe);
    expect(unbound.outcome).toBe('dropped');
    expect(unbound.reason).toContain('NFQUEUE: no program reads queue 3');
  });

  it('a reader that is not a function is a typed error', () => {
    expect(() => new Netns({ nft: NFT, queueReader: 5 as never })).toThrow(/queueReader must be a function/);
  });
});
