// The kernel behaviours the engine models, one by one (reference/netfilter-and-peers.md §B).
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import { NetfilterSimError } from '../../src/model/errors.js';
import type { NetnsOptions } from '../../src/engine/path/netns.js';
import type { TraceEvent } from '../../src/engine/trace/events.js';

function ns(rules: string, options: Omit<NetnsOptions, 'rules'> = {}): Netns {
  return new Netns({ rules, ...options });
}

/** `hook table` of every table entered, for one packet. */
function tablesVisited(trace: readonly TraceEvent[], packet = 0): string[] {
  return trace.filter((e) => e.packet === packet && (e.type === 'table' || (e.type === 'nat' && e.action === 'skipped'))).map((e) => `${(e as { hook: string }).hook} ${e.type === 'table' ? e.table : 'nat(skipped)'}`);
}

function ruleSteps(trace: readonly TraceEvent[], packet = 0): string[] {
  return trace
    .filter((e) => e.packet === packet && (e.type === 'rule' || e.type === 'return' || e.type === 'policy'))
    .map((e) => (e.type === 'rule' || e.type === 'return' || e.type === 'policy' ? `${e.table}:${e.chain}:${e.type}:${e.rule}` : ''));
}

const ALL_TABLES = `*raw
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
COMMIT
*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
COMMIT
*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A POSTROUTING -o nosuch0 -j MASQUERADE
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
COMMIT
*security
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
COMMIT
`;

describe('hook order (nf_hook_slow, NF_IP_PRI_*)', () => {
  // (The MASQUERADE rule, which never matches, turns conntrack on, as a NAT target does.)
  it('a locally generated packet to a remote host: OUTPUT raw, mangle, nat, filter, security, then POSTROUTING mangle, nat', () => {
    const r = ns(ALL_TABLES).connect({ from: 'local', uid: 1000, dst: '10.1.0.5:80' });
    expect(r.outcome).toBe('remote');
    expect(tablesVisited(r.trace!)).toEqual([
      'OUTPUT raw', 'OUTPUT mangle', 'OUTPUT nat', 'OUTPUT filter', 'OUTPUT security',
      'POSTROUTING mangle', 'POSTROUTING nat',
    ]);
    // routing comes before OUTPUT
    const first = r.trace!.find((e) => e.type === 'route' || e.type === 'table');
    expect(first?.type).toBe('route');
  });

  it('an arriving packet for a local socket: PREROUTING raw, mangle, nat, routing, INPUT mangle, filter, security, nat', () => {
    const r = ns(ALL_TABLES, { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('local');
    expect(tablesVisited(r.trace!)).toEqual([
      'PREROUTING raw', 'PREROUTING mangle', 'PREROUTING nat',
      'INPUT mangle', 'INPUT filter', 'INPUT security', 'INPUT nat',
    ]);
    const kinds = r.trace!.filter((e) => e.packet === 0 && (e.type === 'route' || e.type === 'table')).map((e) => (e.type === 'table' ? e.hook : 'route'));
    expect(kinds.indexOf('route')).toBe(3);
  });

  it('a forwarded packet: PREROUTING, FORWARD mangle, filter, security, POSTROUTING', () => {
    const r = ns(ALL_TABLES, { ipForward: true, interfaces: { eth0: ['10.0.0.2/24'], eth1: ['10.2.0.1/24'] } }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.2.0.7:80' });
    expect(r.outcome).toBe('remote');
    expect(tablesVisited(r.trace!)).toEqual([
      'PREROUTING raw', 'PREROUTING mangle', 'PREROUTING nat',
      'FORWARD mangle', 'FORWARD filter', 'FORWARD security',
      'POSTROUTING mangle', 'POSTROUTING nat',
    ]);
  });

  it('without ip_forward (a new namespace), a packet for someone else is not forwarded', () => {
    const r = ns(ALL_TABLES).connect({ from: 'remote', src: '10.0.0.5', dst: '10.2.0.7:80' });
    expect(r.outcome).toBe('dropped');
    expect(r.reason).toMatch(/forwarding/);
  });
});

const LINKERD_LIKE = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:OUT - [0:0]
:IN - [0:0]
-A PREROUTING -j IN
-A OUTPUT -j OUT
-A OUT -m owner --uid-owner 2102 -j RETURN
-A OUT -o lo -j RETURN
-A OUT -p tcp -j REDIRECT --to-ports 4140
-A IN -p tcp -j REDIRECT --to-ports 4143
COMMIT
`;

describe('conntrack and NAT (nf_nat_core.c)', () => {
  it('nat rules see only the first packet; later packets and replies follow the binding', () => {
    const r = ns(LINKERD_LIKE, { listen: [4140, 4143] }).connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' });
    expect(r).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140, originalDestination: '10.96.0.10:80' });
    // SYN: nat OUTPUT runs; SYN-ACK (reply) and ACK: no nat rules at all
    expect(r.steps.filter((s) => s.table === 'nat' && s.packet === 'SYN').length).toBeGreaterThan(0);
    expect(r.steps.filter((s) => s.table === 'nat' && s.packet !== 'SYN')).toEqual([]);
    const applied = r.trace!.filter((e) => e.type === 'nat' && e.action === 'apply').map((e) => `${e.label} ${e.type === 'nat' ? `${e.manip} ${e.from} > ${e.to}` : ''}`);
    expect(applied).toEqual([
      'SYN DST 10.96.0.10:80 > 127.0.0.1:4140',
      'SYN-ACK SRC 127.0.0.1:4140 > 10.96.0.10:80',
      'ACK DST 10.96.0.10:80 > 127.0.0.1:4140',
    ]);
  });

  it('loopback re-entry: nat PREROUTING and nat INPUT are not consulted for a locally generated connection', () => {
    const r = ns(LINKERD_LIKE, { listen: [4140, 4143, 9090] }).connect({ from: 'local', uid: 1000, dst: '10.0.0.2:9090' });
    // -o lo RETURN in OUTPUT; the packet comes back in on lo but IN (PREROUTING) never sees it
    expect(r).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 9090 });
    expect(r.steps.some((s) => s.chain === 'IN')).toBe(false);
    const skipped = r.trace!.filter((e) => e.packet === 0 && e.type === 'nat' && e.action === 'skipped').map((e) => (e.type === 'nat' ? e.hook : ''));
    expect(skipped).toEqual(['PREROUTING', 'INPUT']);
  });

  it('a rule set without a nat table or conntrack matches does not turn conntrack on: SO_ORIGINAL_DST fails', () => {
    const r = ns('*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n', { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 8080, originalDestination: null });
    const withNat = ns(LINKERD_LIKE.replace('-A PREROUTING -j IN\n', ''), { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(withNat.originalDestination).toBe('10.0.0.2:8080');
    // A nat table alone is not enough: only NAT targets (xt_nat_checkentry…) take a reference.
    const natTableOnly = ns('*nat\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A PREROUTING -p tcp --dport 9 -j RETURN\nCOMMIT\n', { listen: [8080] });
    const r2 = natTableOnly.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r2.originalDestination).toBeNull();
    expect(r2.steps).toEqual([]);
  });

  it('the SYN-ACK is ESTABLISHED (reply direction) and the conntrack table keeps the connection', () => {
    const n = ns(LINKERD_LIKE, { listen: [4140] });
    const r = n.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' });
    const states = r.trace!.filter((e) => e.type === 'conntrack' && (e.action === 'new' || e.action === 'found')).map((e) => (e.type === 'conntrack' ? `${e.label} ${e.state} ${e.direction}` : ''));
    expect(states).toEqual(['SYN NEW ORIGINAL', 'SYN-ACK ESTABLISHED REPLY', 'ACK ESTABLISHED ORIGINAL']);
    expect(n.conntrack()).toHaveLength(1);
    expect(n.conntrack()[0]).toMatchObject({ original: '10.0.0.2:49142 > 10.96.0.10:80', reply: '127.0.0.1:4140 > 10.0.0.2:49142' });
  });

  it('NOTRACK in raw: the packet is UNTRACKED and nat is not applied', () => {
    const rules = LINKERD_LIKE + '*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -j NOTRACK\nCOMMIT\n';
    const r = ns(rules, { listen: [4140] }).connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' });
    expect(r).toMatchObject({ outcome: 'remote', address: '10.96.0.10', port: 80 });
  });
});

describe('REDIRECT (nf_nat_redirect.c)', () => {
  it('in OUTPUT: to 127.0.0.1, and ::1 for IPv6', () => {
    const r6 = LINKERD_LIKE;
    const n = new Netns({ rules: LINKERD_LIKE, rules6: r6, listen: [4140, 4143] });
    expect(n.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' })).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140 });
    expect(n.connect({ from: 'local', uid: 1000, dst: '[fd00:96::10]:80' })).toMatchObject({ outcome: 'local', address: '::1', port: 4140, originalDestination: '[fd00:96::10]:80' });
  });

  it('in PREROUTING: to the first address of the incoming interface', () => {
    const n = ns(LINKERD_LIKE, { listen: [4143], interfaces: { eth0: ['10.0.0.9/24', '10.0.0.42/24', '192.168.7.1/24'] } });
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.42:8080' })).toMatchObject({ outcome: 'local', address: '10.0.0.9', port: 4143, originalDestination: '10.0.0.42:8080' });
  });

  it('in PREROUTING on an interface without an address of the family: dropped', () => {
    const n = ns(LINKERD_LIKE, { listen: [4143], interfaces: { eth0: ['10.0.0.2/24'], eth1: [] }, routes: [{ dst: '10.9.0.0/16', dev: 'eth1' }] });
    const r = n.connect({ from: 'remote', src: '10.9.0.5', iface: 'eth1', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(r.reason).toMatch(/no address/);
  });

  it('without --to-ports the port is unchanged', () => {
    const rules = LINKERD_LIKE.replace('-A IN -p tcp -j REDIRECT --to-ports 4143', '-A IN -p tcp -j REDIRECT');
    const r = ns(rules, { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 8080 });
  });
});

describe('traversal (ipt_do_table)', () => {
  const FILTER = (body: string, policy = 'ACCEPT') => `*filter\n:INPUT ${policy} [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:A - [0:0]\n:B - [0:0]\n${body}COMMIT\n`;

  it('ACCEPT ends the table at that hook, not the journey: a later table still drops', () => {
    const rules = FILTER('-A INPUT -j ACCEPT\n') + '*security\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp --dport 8080 -j DROP\nCOMMIT\n';
    const r = ns(rules, { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(ruleSteps(r.trace!)).toEqual(['filter:INPUT:rule:1', 'security:INPUT:rule:1']);
  });

  it('a rule without a target only counts; traversal goes on', () => {
    const r = ns(FILTER('-A INPUT -p tcp\n-A INPUT -p tcp -j DROP\n'), { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(ruleSteps(r.trace!)).toEqual(['filter:INPUT:rule:1', 'filter:INPUT:rule:2']);
  });

  it('falling off a user chain returns to the caller (TRACE: return)', () => {
    const r = ns(FILTER('-A INPUT -j A\n-A INPUT -j DROP\n-A A -s 192.168.0.0/16 -j ACCEPT\n'), { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(ruleSteps(r.trace!)).toEqual(['filter:INPUT:rule:1', 'filter:A:return:2', 'filter:INPUT:rule:2']);
  });

  it('RETURN in a built-in chain, and falling off it, apply the policy', () => {
    const r = ns(FILTER('-A INPUT -p tcp -j RETURN\n-A INPUT -j ACCEPT\n', 'DROP'), { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(ruleSteps(r.trace!)).toEqual(['filter:INPUT:rule:1', 'filter:INPUT:policy:3']);
  });

  it('-g does not push a return point: RETURN after a goto goes back to the last -j caller', () => {
    // INPUT -j A; A -g B; B RETURN → resumes in INPUT after the jump to A (rule 2), not in A
    const body = '-A INPUT -j A\n-A INPUT -j DROP\n-A A -g B\n-A A -j ACCEPT\n-A B -j RETURN\n';
    const r = ns(FILTER(body), { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(ruleSteps(r.trace!)).toEqual(['filter:INPUT:rule:1', 'filter:A:rule:1', 'filter:B:rule:1', 'filter:INPUT:rule:2']);
  });

  it('a goto straight from a built-in chain: RETURN means the built-in policy', () => {
    const r = ns(FILTER('-A INPUT -g B\n-A INPUT -j ACCEPT\n-A B -j RETURN\n', 'DROP'), { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
    expect(ruleSteps(r.trace!)).toEqual(['filter:INPUT:rule:1', 'filter:B:rule:1', 'filter:INPUT:policy:3']);
  });

  it('REJECT answers: the attempt is refused', () => {
    const r = ns(FILTER('-A INPUT -p tcp --dport 8080 -j REJECT --reject-with tcp-reset\n'), { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('refused');
  });

  it('a rejected SYN-ACK is answered towards the server: the client hears nothing (dropped)', () => {
    for (const w of ['', ' --reject-with tcp-reset', ' --reject-with icmp-host-prohibited']) {
      const out = ns(FILTER(`-A OUTPUT -p tcp -d 10.1.0.5/32 -j REJECT${w}\n`), { listen: [8080] }).connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' });
      expect(out.outcome, w).toBe('dropped');
      expect(out.reason, w).toMatch(/^the SYN-ACK: REJECT .*not to the client/);
      // The answer is sent (to the pod's own listener address), and the trace shows it.
      const answer = out.trace!.find((e) => e.type === 'packet' && e.packet === 2);
      expect(answer, w).toMatchObject({ label: w.includes('tcp-reset') ? 'RST' : 'ICMP', dst: '10.0.0.2' });
      const inp = ns(FILTER(`-A INPUT -p tcp --sport 80 -j REJECT${w}\n`)).connect({ from: 'local', uid: 1000, dst: '10.7.7.7:80' });
      expect(inp.outcome, w).toBe('dropped');
    }
  });

  it('a rejected ACK is answered to the client that sent it: refused', () => {
    const r = ns(FILTER('-A INPUT -p tcp --tcp-flags SYN,ACK,RST ACK -j REJECT\n'), { listen: [8080] }).connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('refused');
    const local = ns(FILTER('-A OUTPUT -p tcp --tcp-flags SYN,ACK,RST ACK -j REJECT --reject-with tcp-reset\n'), { listen: [8080] }).connect({ from: 'local', uid: 1000, dst: '127.0.0.1:8080' });
    expect(local.outcome).toBe('refused');
    // ... unless its answer is lost on the way.
    const lost = ns(FILTER('-A INPUT -p tcp --tcp-flags SYN,ACK,RST ACK -j REJECT\n-A OUTPUT -p icmp -j DROP\n'), { listen: [8080] }).connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8080' });
    expect(lost.outcome).toBe('dropped');
  });

  it('REJECT never answers a RST with a RST, nor an ICMP error with an ICMP error', () => {
    const rst = ns(FILTER('-A INPUT -p tcp --dport 8081 -j REJECT --reject-with tcp-reset\n-A OUTPUT -p tcp --tcp-flags RST RST -j REJECT --reject-with tcp-reset\n')).connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8081' });
    expect(rst.outcome).toBe('dropped');
    expect(rst.trace!.filter((e) => e.type === 'packet').map((e) => (e as { label: string }).label)).toEqual(['SYN', 'RST']);
    const icmp = ns(FILTER('-A INPUT -p tcp --dport 8081 -j REJECT\n-A OUTPUT -p icmp -j REJECT\n')).connect({ from: 'local', uid: 1000, dst: '127.0.0.1:8081' });
    expect(icmp.outcome).toBe('dropped');
    expect(icmp.trace!.filter((e) => e.type === 'packet').map((e) => (e as { label: string }).label)).toEqual(['SYN', 'ICMP']);
    // A closed port's RST rejected with an ICMP error: the error goes to the RST's sender, the pod.
    const closed = ns(FILTER('-A OUTPUT -p tcp --tcp-flags RST RST -j REJECT\n')).connect({ from: 'remote', src: '10.1.0.5', dst: '10.0.0.2:8081' });
    expect(closed.outcome).toBe('dropped');
    expect(closed.trace!.filter((e) => e.type === 'packet').map((e) => `${(e as { label: string }).label}>${(e as { dst: string }).dst}`)).toEqual(['SYN>10.0.0.2', 'RST>10.1.0.5', 'ICMP>10.0.0.2']);
  });
});

describe('owner (xt_owner.c)', () => {
  const OWNER = `*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A OUTPUT -m owner ! --uid-owner 1337 -j DROP
COMMIT
`;
  it('a packet from a socket is tested on its owner', () => {
    const n = ns(OWNER);
    expect(n.connect({ from: 'local', uid: 1337, dst: '10.1.0.5:80' }).outcome).toBe('remote');
    expect(n.connect({ from: 'local', uid: 1000, dst: '10.1.0.5:80' }).outcome).toBe('dropped');
  });

  it('the kernel\'s RST has a socket without a file: a negated owner test passes, a positive one fails', () => {
    // No listener on 9999: the only packet the pod sends is the RST, from the kernel's control
    // socket, which has no owner.
    const neg = ns(OWNER.replace('-A OUTPUT -m owner ! --uid-owner 1337 -j DROP', '-A OUTPUT -m owner ! --uid-owner 1337 -j DROP'));
    expect(neg.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:9999' }).outcome).toBe('dropped');
    const pos = ns(OWNER.replace('-A OUTPUT -m owner ! --uid-owner 1337 -j DROP', '-A OUTPUT -m owner --uid-owner 0 -j DROP'));
    expect(pos.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:9999' }).outcome).toBe('refused');
    // ... and the socket exists (xt_owner: "Socket exists but user wanted ! --socket-exists").
    const exists = ns(OWNER.replace('-A OUTPUT -m owner ! --uid-owner 1337 -j DROP', '-A OUTPUT -m owner ! --socket-exists -j DROP'));
    expect(exists.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:9999' }).outcome).toBe('refused');
  });

  it('a forwarded packet has no socket at all', () => {
    const rules = OWNER.replace('*filter', '*mangle\n:PREROUTING ACCEPT [0:0]\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n-A POSTROUTING -m owner --socket-exists -j DROP\nCOMMIT\n*filter');
    const n = ns(rules, { ipForward: true, interfaces: { eth0: ['10.0.0.2/24'], eth1: ['10.2.0.1/24'] } });
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.2.0.7:80' }).outcome).toBe('remote');
  });

  it('the SYN-ACK is owned by the listening socket', () => {
    // From a remote client the SYN-ACK is the only packet the pod sends.
    const rules = OWNER.replace('-A OUTPUT -m owner ! --uid-owner 1337 -j DROP', '-A OUTPUT -m owner --uid-owner 2102 -j DROP');
    const n = ns(rules, { listen: [{ port: 8080, uid: 2102 }, { port: 9090, uid: 0 }] });
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' }).outcome).toBe('dropped');
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:9090' }).outcome).toBe('local');
  });
});

describe('routing', () => {
  it('OUTPUT sees the original route\'s device; POSTROUTING the re-routed one', () => {
    const rules = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A OUTPUT -p tcp -j REDIRECT --to-ports 4140
-A POSTROUTING -o lo -j ACCEPT
COMMIT
*filter
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
-A OUTPUT -o eth0 -j ACCEPT
COMMIT
`;
    const r = ns(rules, { listen: [4140] }).connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' });
    expect(r.outcome).toBe('local');
    const syn = r.steps.filter((s) => s.packet === 'SYN' && s.event === 'rule').map((s) => `${s.table}:${s.chain}:${s.rule}`);
    expect(syn).toEqual(['nat:OUTPUT:1', 'filter:OUTPUT:1', 'nat:POSTROUTING:1']);
  });

  it('traffic to the pod\'s own address leaves through lo', () => {
    const r = ns('*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -o lo -j ACCEPT\nCOMMIT\n', { listen: [8080] }).connect({ from: 'local', uid: 1000, dst: '10.0.0.2:8080' });
    expect(r).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 8080 });
    expect(r.steps[0]).toMatchObject({ chain: 'OUTPUT', rule: 1, event: 'rule' });
  });

  it('DNAT to 127.0.0.1 from eth0 is martian unless route_localnet', () => {
    const rules = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p tcp --dport 80 -j DNAT --to-destination 127.0.0.1:8080
COMMIT
`;
    const off = ns(rules, { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:80' });
    expect(off.outcome).toBe('dropped');
    expect(off.reason).toMatch(/martian/);
    const on = ns(rules, { listen: [8080], routeLocalnet: true }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:80' });
    expect(on).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 8080, originalDestination: '10.0.0.2:80' });
  });

  it('IPv6 has no route_localnet: ::1 is never reached from eth0, even by DNAT', () => {
    const rules = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p tcp --dport 80 -j DNAT --to-destination [::1]:8080
COMMIT
`;
    const r = new Netns({ rules6: rules, listen: [8080], routeLocalnet: true }).connect({ from: 'remote', src: 'fd00::5', dst: '[fd00::2]:80' });
    expect(r.outcome).toBe('dropped');
  });

  it('a 127/8 packet arriving on eth0 is martian', () => {
    const r = ns('', { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '127.0.0.1:8080' });
    expect(r.outcome).toBe('dropped');
  });
});

describe('TPROXY with policy routing', () => {
  const TPROXY = `*mangle
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A PREROUTING -p tcp -j TPROXY --on-port 15006 --on-ip 0.0.0.0 --tproxy-mark 0x539/0xffffffff
COMMIT
`;
  const routing: Pick<NetnsOptions, 'ipRules' | 'routes'> = {
    ipRules: [{ fwmark: 1337, table: 133 }],
    routes: [{ dst: '0.0.0.0/0', dev: 'lo', type: 'local', table: 133 }, { dst: '::/0', dev: 'lo', type: 'local', table: 133 }],
  };

  it('delivers to the transparent listener with the original destination as its local address', () => {
    const n = ns(TPROXY, { ...routing, listen: [{ port: 15006, transparent: true }, 8080] });
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' })).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 8080 });
    const r = n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.reason).toMatch(/15006/);
  });

  it('a non-local destination reaches the socket only through the fwmark route', () => {
    const with_ = ns(TPROXY, { ...routing, listen: [{ port: 15006, transparent: true }] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.77:8080' });
    expect(with_).toMatchObject({ outcome: 'local', address: '10.0.0.77', port: 8080 });
    const without = ns(TPROXY, { listen: [{ port: 15006, transparent: true }] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.77:8080' });
    expect(without.outcome).toBe('dropped');
  });

  it('without a transparent listener the packet is dropped', () => {
    const r = ns(TPROXY, { ...routing, listen: [15006] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('dropped');
  });
});

describe('statistic', () => {
  const RULES = `*nat
:PREROUTING ACCEPT [0:0]
:INPUT ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
-A OUTPUT -p tcp -m statistic --mode random --probability 0.25000000000 -j DNAT --to-destination 10.1.0.1:80
-A OUTPUT -p tcp -m statistic --mode random --probability 0.50000000000 -j DNAT --to-destination 10.1.0.2:80
-A OUTPUT -p tcp -j DNAT --to-destination 10.1.0.3:80
COMMIT
`;
  it('enumerate mode explores every branch, with its probability', () => {
    const all = ns(RULES).connectAll({ from: 'local', uid: 1000, dst: '10.96.0.10:80' });
    expect(all.map((r) => r.address)).toEqual(['10.1.0.1', '10.1.0.2', '10.1.0.3']);
    expect(all.map((r) => r.probability)).toEqual([0.25, 0.375, 0.375]);
  });

  it('the seeded RNG is deterministic', () => {
    const a = ns(RULES, { seed: 7 });
    const b = ns(RULES, { seed: 7 });
    for (let i = 0; i < 10; i++) expect(a.connect({ from: 'local', uid: 1, dst: '10.96.0.10:80' }).address).toBe(b.connect({ from: 'local', uid: 1, dst: '10.96.0.10:80' }).address);
  });
});

describe('matches the engine cannot decide exactly', () => {
  it('are reported in the trace (evaluates: assumed)', () => {
    const rules = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -m mac --mac-source 00:11:22:33:44:55 -j ACCEPT\nCOMMIT\n';
    const r = ns(rules, { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    const assumed = r.trace!.find((e) => e.type === 'assumed');
    expect(assumed).toMatchObject({ match: 'mac', hook: 'INPUT', table: 'filter', chain: 'INPUT', rule: 1 });
    const ref = new Netns({ rules, listen: [8080], evaluator: 'reference' }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(ref).toEqual(r);
  });
});

describe('osf, which reads OS fingerprints the namespace does not have', () => {
  it('never matches, and the trace says it was assumed', () => {
    const rules = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -p tcp -m osf --genre Linux -j DROP\n-A INPUT -p tcp -m osf ! --genre Linux -j DROP\nCOMMIT\n';
    const r = ns(rules, { listen: [8080] }).connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' });
    expect(r.outcome).toBe('local');
    const assumed = r.trace!.filter((e) => e.type === 'assumed');
    expect(assumed.length).toBeGreaterThanOrEqual(2);
    expect(assumed[0]).toMatchObject({ match: 'osf', hook: 'INPUT', table: 'filter', chain: 'INPUT', rule: 1 });
    expect(JSON.stringify(assumed[0])).toContain('no fingerprint is loaded');
  });
});

describe('UDP', () => {
  it('one datagram: delivered, or refused (ICMP port unreachable) without a socket', () => {
    const n = ns('', { listen: ['53/udp'] });
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:53', proto: 'udp' })).toMatchObject({ outcome: 'local', port: 53 });
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:54', proto: 'udp' }).outcome).toBe('refused');
    expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:53' }).outcome).toBe('refused');
  });
});

describe('loading', () => {
  it('a rule set that fails check is refused with its diagnostics', () => {
    const loop = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:A - [0:0]\n-A INPUT -j A\n-A A -j A\nCOMMIT\n';
    expect(() => ns(loop)).toThrow(expect.objectContaining({ code: 'CHAIN_LOOP' }));
  });

  it('rule text is read as iptables-restore reads it: a typo is a typed error at its line and column', () => {
    const typo = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m mutliport --dports 80,443 -j DROP\nCOMMIT\n';
    let err: unknown;
    try {
      ns(typo);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(NetfilterSimError);
    expect(err).toMatchObject({ code: 'UNKNOWN_MATCH', span: { line: 5, column: 21 } });
    expect((err as Error).message).toMatch(/^<input>:5:21: unknown match "mutliport" \(did you mean "multiport"\?\)/);
    expect(() => new Netns({ rules: '', rules6: typo })).toThrow(/unknown match "mutliport"/);
    // A missing COMMIT, which iptables-restore refuses, too.
    expect(() => ns('*filter\n-A INPUT -j DROP\n')).toThrow(NetfilterSimError);
  });

  it('lenient reading drops what it cannot read, and says so in warnings', () => {
    const typo = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp -m mutliport --dports 80,443 -j DROP\nCOMMIT\n';
    const n = new Netns({ rules: typo, lenient: true });
    expect(n.warnings.map((w) => [w.code, w.span?.line, w.span?.column])).toEqual([['UNKNOWN_MATCH', 5, 21], ['UNKNOWN_OPTION', 5, 31]]);
    expect(n.warnings[0]!.message).toMatch(/^IPv4 rules: unknown match "mutliport".*\(ignored\)$/);
    // With the match (and its option) dropped, the rule drops every TCP connection.
    expect(n.connect({ from: 'local', uid: 1000, dst: '10.1.0.5:22' }).outcome).toBe('dropped');
    expect(ns(LINKERD_LIKE).warnings).toEqual([]);
  });

  it('a parsed rule set can be given instead of text, and conntrack can be flushed', () => {
    const n = ns(LINKERD_LIKE, { listen: [4140] });
    const again = new Netns({ rules: n.ruleset4, listen: [4140] });
    expect(again.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }).port).toBe(4140);
    expect(again.conntrack()).toHaveLength(1);
    again.flushConntrack();
    expect(again.conntrack()).toHaveLength(0);
  });
});

describe('trace of one packet', () => {
  it('arriving: PREROUTING, routing, INPUT, socket lookup', () => {
    const r = ns(LINKERD_LIKE, { listen: [4143] }).trace('tcp 10.0.0.5:40000 > 10.0.0.2:8080 in eth0');
    expect(r).toMatchObject({ outcome: 'local', address: '10.0.0.2', port: 4143, originalDestination: '10.0.0.2:8080' });
  });

  it('local: sent by a process with an owner', () => {
    const n = ns(LINKERD_LIKE, { listen: [4140] });
    expect(n.trace('tcp > 10.96.0.10:80 uid 1000')).toMatchObject({ outcome: 'local', address: '127.0.0.1', port: 4140 });
    expect(n.trace('tcp > 10.96.0.10:80 uid 2102')).toMatchObject({ outcome: 'remote', address: '10.96.0.10', port: 80 });
  });

  it('a bare SYN-ACK with no connection is INVALID', () => {
    const r = ns(LINKERD_LIKE).trace('tcp 10.0.0.5:80 > 10.0.0.2:41000 flags SA');
    const ct = r.trace!.find((e) => e.type === 'conntrack');
    expect(ct).toMatchObject({ state: 'INVALID' });
  });

  it('refuses bad packet descriptions with BAD_PROBE', () => {
    expect(() => ns('').trace('tcp 10.0.0.5 10.0.0.2')).toThrow(/bad packet/);
    expect(() => ns('').trace('tcp > 10.0.0.2')).toThrow(/needs a port/);
  });
});

describe('many connections in one namespace', () => {
  it('each gets a fresh source port, so thousands of attempts stay independent', () => {
    const n = ns(LINKERD_LIKE, { listen: [4143] });
    for (let i = 0; i < 1500; i++) expect(n.connect({ from: 'remote', src: '10.0.0.5', dst: '10.0.0.2:8080' }, { trace: false }).outcome).toBe('local');
    expect(n.conntrack()).toHaveLength(1500);
  });
});
