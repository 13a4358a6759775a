// kube-proxy's own unit-test expectations (kubernetes/kubernetes pkg/proxy/iptables/proxier_test.go
// and pkg/proxy/nftables/proxier_test.go, Apache-2.0; see upstream-goldens.ts) against the
// compiler, on the same fixtures translated to snapshots (fixtures.ts).
//
// Upstream compares with its own normalisations, which these tests restate: iptables payloads
// are grouped by chain, KUBE-NODEPORTS and KUBE-SERVICES first, the rest by name, the rules of
// those two chains ordered by the service named in their comment (sortIPTablesRules); nftables
// states are sorted by object type, then name, rules kept in order (sortNFTablesTransaction).
// Upstream's fake proxier sets the masquerade mark as "0x4000"; kube-proxy itself formats it with
// %#08x ("0x00004000"), so the payload comparisons read one for the other.
import { describe, expect, it } from 'vitest';
import { compileKubeProxy } from '../../../src/compile/kube-proxy/index.js';
import { nftEndpointBase, nftServiceBase } from '../../../src/compile/kube-proxy/names.js';
import type { ProxyEndpoint, ProxyServicePort } from '../../../src/compile/kube-proxy/services.js';
import { formatIptablesSave } from '../../../src/iptables/fmt.js';
import { BAD_IPS, FAKE_IPTABLES, FAKE_NFTABLES, largeCluster, OVERALL, REPEATED_FIRST, snapshot, service, slice, TEST_NODE } from './fixtures.js';
import {
  DROP_INVALID, FIREWALL_RULE, KUBE_FORWARD_TAIL, LARGE_CLUSTER, MASQUERADE_RULE, NFT_BAD_IPS, NFT_BASE_RULES, NFT_NAME_BASES, NFT_OVERALL, NODE_PORTS_FIREWALL,
  OVERALL_IPTABLES, REPEATED_FIRST_IPTABLES,
} from './upstream-goldens.js';

// ---------------------------------------------------------------------------------------------
// iptables

/** The service a KUBE-SERVICES/KUBE-NODEPORTS rule is for: its comment up to a space or colon. */
function serviceOf(rule: string): string | null {
  const m = /--comment (?:"([^"]*)"|(\S+))/.exec(rule);
  if (!m) return null;
  const c = m[1] ?? m[2]!;
  const i = c.search(/[ :]/);
  return i < 0 ? c : c.slice(0, i);
}

/** sortIPTablesRules, restated: tables by name, chains NODEPORTS, SERVICES, KUBE-*, others; rules grouped by chain. */
function sortPayload(text: string): string {
  const tables = new Map<string, { chains: string[]; rules: Map<string, string[]> }>();
  let cur: { chains: string[]; rules: Map<string, string[]> } | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) {
      cur = { chains: [], rules: new Map() };
      tables.set(line.slice(1), cur);
    } else if (line.startsWith(':')) cur!.chains.push(line.slice(1).split(' ')[0]!);
    else if (line.startsWith('-A ')) {
      const chain = line.split(' ')[1]!;
      const list = cur!.rules.get(chain) ?? [];
      list.push(line);
      cur!.rules.set(chain, list);
    }
  }
  const rank = (c: string): [number, string] => [c === 'KUBE-NODEPORTS' ? 0 : c === 'KUBE-SERVICES' ? 1 : c.startsWith('KUBE-') ? 2 : 3, c];
  const out: string[] = [];
  for (const name of [...tables.keys()].sort()) {
    const t = tables.get(name)!;
    const chains = [...t.chains].sort((a, b) => {
      const [ra, na] = rank(a);
      const [rb, nb] = rank(b);
      return ra - rb || (na < nb ? -1 : na > nb ? 1 : 0);
    });
    out.push(`*${name}`, ...chains.map((c) => `:${c} - [0:0]`));
    for (const c of chains) {
      let rules = t.rules.get(c) ?? [];
      if (c === 'KUBE-NODEPORTS' || c === 'KUBE-SERVICES') {
        const last = (r: string): boolean => name === 'nat' && c === 'KUBE-SERVICES' && r.includes('must be the last rule');
        rules = rules
          .map((r, i) => ({ r, i }))
          .sort((a, b) => {
            if (last(a.r) !== last(b.r)) return last(a.r) ? 1 : -1;
            const sa = serviceOf(a.r) ?? '';
            const sb = serviceOf(b.r) ?? '';
            return sa < sb ? -1 : sa > sb ? 1 : a.i - b.i;
          })
          .map((x) => x.r);
      }
      out.push(...rules);
    }
    out.push('COMMIT');
  }
  return out.join('\n') + '\n';
}

const fakeMark = (s: string): string => s.replaceAll('0x00004000', '0x4000');

/** One chain's rules in a payload, in order. */
function chainRules(payload: string, table: string, chain: string): string {
  let t = '';
  const out: string[] = [];
  for (const line of payload.split('\n')) {
    if (line.startsWith('*')) t = line.slice(1);
    else if (t === table && line.startsWith(`-A ${chain} `)) out.push(line);
  }
  return out.map((l) => l + '\n').join('');
}

describe('kube-proxy iptables mode: upstream expectations', () => {
  it('TestOverallIPTablesRules: the restore payload, byte for byte after upstream\'s sort', () => {
    const payload = compileKubeProxy(OVERALL, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    expect(sortPayload(fakeMark(payload))).toBe(sortPayload(OVERALL_IPTABLES));
    // The expected text is already in upstream's sorted form.
    expect(sortPayload(OVERALL_IPTABLES)).toBe(OVERALL_IPTABLES);
  });

  it('TestOverallIPTablesRules: iptables-save prints the same for the expected payload and ours', () => {
    const ours = compileKubeProxy(OVERALL, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    expect(formatIptablesSave(ours)).toBe(formatIptablesSave(OVERALL_IPTABLES));
    // Same bytes without the mark reading: iptables-save prints the mark as a number either way.
    expect(formatIptablesSave(ours)).toContain('-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n');
  });

  it('TestSyncProxyRulesRepeated, first sync', () => {
    const payload = compileKubeProxy(REPEATED_FIRST, TEST_NODE, { ...FAKE_IPTABLES, format: 'restore' });
    expect(sortPayload(fakeMark(payload))).toBe(sortPayload(REPEATED_FIRST_IPTABLES));
  });

  it.each([false, true])('TestMasqueradeRule (random-fully %s)', (randomFully) => {
    const payload = compileKubeProxy(snapshot([], []), TEST_NODE, { ...FAKE_IPTABLES, randomFully, format: 'restore' });
    expect(fakeMark(chainRules(payload, 'nat', 'KUBE-POSTROUTING'))).toBe(MASQUERADE_RULE(randomFully));
  });

  it.each(DROP_INVALID)('TestDropInvalidRule (nfacct $nfacct, tcp_be_liberal $tcpLiberal)', (c) => {
    const payload = compileKubeProxy(snapshot([], []), TEST_NODE, { ...FAKE_IPTABLES, nfacct: c.nfacct, conntrackTCPBeLiberal: c.tcpLiberal, format: 'restore' });
    expect(fakeMark(chainRules(payload, 'filter', 'KUBE-FORWARD'))).toBe((c.dropRule === '' ? '' : c.dropRule + '\n') + KUBE_FORWARD_TAIL);
  });

  it.each(NODE_PORTS_FIREWALL)('TestNodePorts: KUBE-FIREWALL, $name', (c) => {
    const svcIP = c.family === 4 ? '172.30.0.41' : 'fd00:172:30::41';
    const eps = c.family === 4 ? ['10.180.0.1', '10.180.2.1'] : ['fd00:10:180::1', 'fd00:10:180::2:1'];
    const snap = snapshot(
      [service('ns1', 'svc1', { type: 'NodePort', clusterIP: svcIP, ports: [{ name: 'p80', port: 80, protocol: 'TCP', nodePort: 3001 }] })],
      [slice('ns1', 'svc1', [{ addresses: [eps[0]!] }, { addresses: [eps[1]!], nodeName: TEST_NODE }], [{ name: 'p80', port: 80, protocol: 'TCP' }], { addressType: c.family === 4 ? 'IPv4' : 'IPv6' })],
    );
    const payload = compileKubeProxy(snap, TEST_NODE, {
      ...FAKE_IPTABLES,
      clusterCIDR: c.family === 4 ? '10.0.0.0/8' : 'fd00:10::/64',
      family: c.family,
      localhostNodePorts: c.localhostNodePorts,
      ...(c.nodePortAddresses ? { nodePortAddresses: c.nodePortAddresses } : {}),
      format: 'restore',
    });
    expect(chainRules(payload, 'filter', 'KUBE-FIREWALL')).toBe(c.expectFirewall ? FIREWALL_RULE : '');
  });

  it('TestSyncProxyRulesLargeClusterMode: comments on endpoint rules stop past 1000 endpoints', () => {
    const dnat = (payload: string, ep: string): { line: string; count: number; comments: number } => {
      let line = '';
      let count = 0;
      let comments = 0;
      for (const l of payload.split('\n')) {
        if (!l.startsWith('-A KUBE-SEP-') || !l.includes('-j DNAT')) continue;
        count++;
        if (l.includes('--comment')) comments++;
        if (l.includes(ep)) line = l;
      }
      return { line, count, comments };
    };
    const opts = { ...FAKE_IPTABLES, masqueradeAll: true, format: 'restore' } as const;
    const first = dnat(compileKubeProxy(largeCluster(false), TEST_NODE, opts), '10.0.0.0');
    expect(first.line).toBe(LARGE_CLUSTER.firstWithComment);
    expect(first.count).toBe(998);
    expect(first.comments).toBe(998);
    // Upstream's partial sync writes only the third service; a full sync writes every one, all without comments.
    const after = compileKubeProxy(largeCluster(true), TEST_NODE, opts);
    expect(dnat(after, '203.0.113.4').line).toBe(LARGE_CLUSTER.thirdNoComment);
    const all = dnat(after, '10.0.0.0');
    expect(all.line).toBe(LARGE_CLUSTER.firstNoComment);
    expect(all.count).toBe(1001);
    expect(all.comments).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------
// nftables

/** Replays a knftables transaction (add, flush, delete) into the `add` lines of the state it leaves. */
function replay(tx: string): string[] {
  const objects = new Map<string, string>();
  const rules = new Map<string, string[]>();
  const elements = new Map<string, string[]>();
  for (const line of tx.split('\n')) {
    if (line === '') continue;
    const w = line.split(' ');
    const [verb, type] = [w[0]!, w[1]!];
    const name = type === 'table' ? '' : w[4]!;
    const key = `${type} ${name}`;
    if (verb === 'add' && (type === 'table' || type === 'chain' || type === 'set' || type === 'map')) {
      if (!objects.has(key) || line.includes('{')) objects.set(key, line);
    } else if (verb === 'add' && type === 'rule') {
      rules.set(name, [...(rules.get(name) ?? []), line]);
    } else if (verb === 'add' && type === 'element') {
      elements.set(name, [...(elements.get(name) ?? []), line]);
    } else if (verb === 'flush') {
      if (type === 'chain') rules.delete(name);
      else elements.delete(name);
    } else if (verb === 'delete' && type === 'element') {
      const k = /\{ (.*) \}$/.exec(line)![1]!;
      const keyOf = (l: string): string => /\{ (.*?)(?: comment "[^"]*")?(?: : .*)? \}$/.exec(l)![1]!;
      elements.set(name, (elements.get(name) ?? []).filter((l) => keyOf(l) !== k));
    } else if (verb === 'delete') {
      objects.delete(key);
      if (type === 'chain') rules.delete(name);
      else elements.delete(name);
    } else throw new Error(`unexpected operation: ${line}`);
  }
  return [...objects.values(), ...[...rules.values()].flat(), ...[...elements.values()].flat()];
}

const ORDER: Readonly<Record<string, number>> = { table: 0, chain: 1, set: 2, map: 3, rule: 4, element: 5 };

/** sortNFTablesTransaction, restated: by object type, then object name; rules keep their order. */
function sortState(lines: readonly string[]): string {
  const kept = lines.map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const keyed = kept.map((l, i) => ({ l, i, w: l.split(' ') }));
  keyed.sort((a, b) => {
    const ta = ORDER[a.w[1]!] ?? 9;
    const tb = ORDER[b.w[1]!] ?? 9;
    if (ta !== tb) return ta - tb;
    const na = a.w[4] ?? '';
    const nb = b.w[4] ?? '';
    if (na !== nb) return na < nb ? -1 : 1;
    if (a.w[1] === 'rule') return a.i - b.i;
    return a.l < b.l ? -1 : a.l > b.l ? 1 : 0;
  });
  return keyed.map((x) => x.l).join('\n');
}

describe('kube-proxy nftables mode: upstream expectations', () => {
  it.each(['1.34', '1.35'] as const)('TestOverallNFTablesRules (%s)', (version) => {
    const tx = compileKubeProxy(OVERALL, TEST_NODE, { ...FAKE_NFTABLES, version, family: 4, format: 'restore' });
    expect(sortState(replay(fakeMark(tx)))).toBe(sortState((NFT_BASE_RULES + NFT_OVERALL).split('\n')));
  });

  it('TestBadIPs: addresses with leading zeros are read as decimal', () => {
    const tx = compileKubeProxy(BAD_IPS, TEST_NODE, { ...FAKE_NFTABLES, family: 4, format: 'restore' });
    expect(sortState(replay(fakeMark(tx)))).toBe(sortState((NFT_BASE_RULES + NFT_BAD_IPS).split('\n')));
  });

  it('1.33 hooks its filter chains at dstnat-10 and jumps to cluster-ips-check from filter-output-post-dnat', () => {
    const state = replay(compileKubeProxy(OVERALL, TEST_NODE, { ...FAKE_NFTABLES, version: '1.33', family: 4, format: 'restore' }));
    const chains = state.filter((l) => l.startsWith('add chain') && l.includes('hook'));
    expect(chains).toEqual([
      'add chain ip kube-proxy filter-prerouting { type filter hook prerouting priority -110 ; }',
      'add chain ip kube-proxy filter-input { type filter hook input priority -110 ; }',
      'add chain ip kube-proxy filter-forward { type filter hook forward priority -110 ; }',
      'add chain ip kube-proxy filter-output { type filter hook output priority -110 ; }',
      'add chain ip kube-proxy filter-output-post-dnat { type filter hook output priority -90 ; }',
      'add chain ip kube-proxy nat-prerouting { type nat hook prerouting priority -100 ; }',
      'add chain ip kube-proxy nat-output { type nat hook output priority -100 ; }',
      'add chain ip kube-proxy nat-postrouting { type nat hook postrouting priority 100 ; }',
    ]);
    expect(state).toContain('add rule ip kube-proxy filter-output-post-dnat ct state new jump cluster-ips-check');
    expect(state).toContain('add rule ip kube-proxy filter-prerouting ct state new jump firewall-check');
    const services = (v: '1.33' | '1.35'): string[] => replay(compileKubeProxy(OVERALL, TEST_NODE, { ...FAKE_NFTABLES, version: v, family: 4, format: 'restore' })).filter((l) => /(service|endpoint|external|firewall|affinity)-[A-Z0-9]{8}-/.test(l));
    // Apart from that, 1.33 matched the protocol and port again in the service chain's masquerade rule.
    const older = services('1.33').map((l) => l.replace(/ tcp dport 80 ip saddr != /, ' ip saddr != '));
    expect(older).toEqual(services('1.35'));
    expect(services('1.33')).toContain('add rule ip kube-proxy service-ULMVA6XW-ns1/svc1/tcp/p80 ip daddr 172.30.0.41 tcp dport 80 ip saddr != 10.0.0.0/8 jump mark-for-masquerade');
  });

  it.each(NFT_NAME_BASES)('chain name base $expected', (c) => {
    const p = { namespace: c.ns, name: c.name, portName: c.port, protocol: c.protocol } as ProxyServicePort;
    if (c.endpoint === undefined) expect(nftServiceBase(p)).toBe(c.expected);
    else {
      const m = /^\[?(.*?)\]?:(\d+)$/.exec(c.endpoint)!;
      expect(nftEndpointBase(p, { ip: m[1]!, port: Number(m[2]) } as ProxyEndpoint)).toBe(c.expected);
    }
  });
});
