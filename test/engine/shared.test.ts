// Namespaces built from the same rule text share what does not change: the rule set read and
// checked, its lowered program, the routing of the same interfaces and routes, the listeners. A
// namespace built from what others share must behave exactly as one built alone, and namespaces
// sharing must not see each other's connections, counters or rate limits.
import { describe, expect, it } from 'vitest';
import { Netns } from '../../src/engine/path/netns.js';
import type { ConnectResult, ConnectSpec, NetnsOptions } from '../../src/engine/path/netns.js';
import { MAX_SHARED_RULE_SETS, MAX_SHARED_TEXT, SHAREABLE_MATCHES, UNSHARED_MATCHES, forgetShared } from '../../src/engine/path/shared.js';
import { MATCHES, TARGETS } from '../../src/iptables/extensions/registry.js';
import type { LoweredRuleset } from '../../src/engine/rules/iptables-lower.js';
import { generateConnectCase } from '../kernel/generate.js';
import { generateNftConnectCase } from '../kernel/nft-generate.js';

/** The lowered IPv4 program a namespace runs (null with the reference evaluator). */
function program4(ns: Netns): LoweredRuleset | null {
  const ev = (ns as unknown as { driver: { kernel: { ev4: { program?: LoweredRuleset } } } }).driver.kernel.ev4;
  return ev.program ?? null;
}

/** Everything a namespace shows after a run. */
function state(ns: Netns): unknown {
  return { conntrack: ns.conntrack(), counters4: ns.counters(4), counters6: ns.counters(6), recent: ns.recentLists() };
}

const json = (r: ConnectResult): string => JSON.stringify(r);

/** Each probe three times (the outcome cache records the second and replays the third), traced and not, some closed. */
function schedule(probes: readonly ConnectSpec[], seed: number): { p: ConnectSpec; trace: boolean; close: boolean }[] {
  const out: { p: ConnectSpec; trace: boolean; close: boolean }[] = [];
  for (let round = 0; round < 3; round++) {
    probes.forEach((p, i) => out.push({ p, trace: (i + round + seed) % 4 === 0, close: (i + seed) % 5 === 0 }));
  }
  return out;
}

describe('namespaces built from shared readings', () => {
  it('behave exactly as namespaces built alone, while a sibling sharing with them runs other probes (generated pods)', () => {
    let compared = 0;
    let sharedPrograms = 0;
    for (let seed = 1; seed <= 80; seed++) {
      for (const c of [generateConnectCase(seed), generateNftConnectCase(seed, seed % 2 === 0)]) {
        const options = { ...c.sim, ...('nft' in c ? { nft: c.nft } : {}) } as unknown as NetnsOptions;
        const build = (): Netns | null => {
          try {
            return new Netns(options);
          } catch {
            return null;
          }
        };
        // Two namespaces built alone (nothing kept before each), then two sharing one reading.
        forgetShared();
        const aloneA = build();
        if (aloneA === null) continue;
        forgetShared();
        const aloneB = build()!;
        forgetShared();
        const a = build()!;
        const b = build()!;
        expect(a.ruleset4).toBe(b.ruleset4);
        expect(a.routing).toBe(b.routing);
        if ('nft' in c) {
          expect(a.nftRuleset).toBe(b.nftRuleset);
          expect(a.nftRuleset).not.toBe(aloneA.nftRuleset);
        }
        if (typeof options.rules === 'string') expect(a.ruleset4).not.toBe(aloneA.ruleset4);
        const pa = program4(a);
        if (pa !== null && pa === program4(b) && pa.tables.some((t) => t !== null)) sharedPrograms++;
        const probes = c.probes as unknown as ConnectSpec[];
        const forA = schedule(probes, seed);
        const forB = schedule([...probes].reverse(), seed + 1);
        for (let i = 0; i < forA.length; i++) {
          const s = forA[i]!;
          const t = forB[i]!;
          // a and b take turns: whatever they share, each must see only its own connections.
          expect(json(a.connect(s.p, s)), `seed ${seed}, step ${i}`).toBe(json(aloneA.connect(s.p, s)));
          expect(json(b.connect(t.p, t)), `seed ${seed}, step ${i} (b)`).toBe(json(aloneB.connect(t.p, t)));
          compared += 2;
          if (i % 7 === 6) {
            a.advance(30);
            aloneA.advance(30);
          }
        }
        expect(state(a)).toEqual(state(aloneA));
        expect(state(b)).toEqual(state(aloneB));
      }
    }
    expect(compared).toBeGreaterThan(4000);
    // The comparison is not vacuous: most generated pods' programs were shared.
    expect(sharedPrograms).toBeGreaterThan(30);
  });

  it('keep the programs of rules with state per namespace: limit, quota, statistic --mode nth', () => {
    const rules = [
      '*nat',
      ':PREROUTING ACCEPT [0:0]',
      ':INPUT ACCEPT [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      ':POSTROUTING ACCEPT [0:0]',
      '-A OUTPUT -p tcp -d 10.96.0.10/32 -m statistic --mode nth --every 2 --packet 0 -j REDIRECT --to-ports 4140',
      '-A OUTPUT -p tcp -d 10.96.0.11/32 -m limit --limit 1/hour --limit-burst 1 -j REDIRECT --to-ports 4140',
      '-A OUTPUT -p tcp -d 10.96.0.12/32 -m quota --quota 120 -j REDIRECT --to-ports 4140',
      'COMMIT',
      '',
    ].join('\n');
    const options: NetnsOptions = { rules, listen: [4140], outcomeCache: false };
    forgetShared();
    const alone = new Netns(options);
    const a = new Netns(options);
    const b = new Netns(options);
    expect(a.ruleset4).toBe(b.ruleset4);
    expect(program4(a)).not.toBe(program4(b));
    for (const dst of ['10.96.0.10:80', '10.96.0.11:80', '10.96.0.12:80']) {
      const p: ConnectSpec = { from: 'local', uid: 1000, dst };
      // b's connections must not advance a's counter, bucket or quota.
      for (let i = 0; i < 3; i++) {
        const want = json(alone.connect(p, { trace: false }));
        b.connect(p, { trace: false });
        expect(json(a.connect(p, { trace: false })), `${dst}, connection ${i}`).toBe(want);
      }
    }
    // The three rules did redirect some connections and not others: each kept its own state.
    const ports = [0, 1, 2].map(() => alone.connect({ from: 'local', uid: 1000, dst: '10.96.0.10:80' }, { trace: false }).port);
    expect(new Set(ports).size).toBe(2);
  });

  it('name every built-in match either shareable or not', () => {
    for (const name of MATCHES.keys()) expect(SHAREABLE_MATCHES.has(name) !== UNSHARED_MATCHES.has(name), name).toBe(true);
    expect([...SHAREABLE_MATCHES, ...UNSHARED_MATCHES].filter((n) => !MATCHES.has(n))).toEqual([]);
  });

  it('freeze the rule set they share', () => {
    forgetShared();
    const text = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp --dport 81 -j DROP\nCOMMIT\n';
    const ns = new Netns({ rules: text });
    const rule = ns.ruleset4.tables[0]!.chains[2]!.rules[0]!;
    expect(Object.isFrozen(rule)).toBe(true);
    expect(() => {
      (rule as { target: unknown }).target = null;
    }).toThrow(TypeError);
    expect(new Netns({ rules: text }).ruleset4).toBe(ns.ruleset4);
  });

  it('are not built from a reading made with another registry, nor keep a parsed rule set they were given', () => {
    forgetShared();
    const text = '*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp --dport 81 -j DROP\nCOMMIT\n';
    const kept = new Netns({ rules: text }).ruleset4;
    const registry = { matches: new Map(MATCHES), targets: new Map(TARGETS) };
    const own = new Netns({ rules: text, registry });
    expect(own.ruleset4).not.toBe(kept);
    expect(new Netns({ rules: text, registry }).ruleset4).not.toBe(own.ruleset4);
    const parsed = own.ruleset4;
    expect(new Netns({ rules: parsed }).ruleset4).toBe(parsed);
    // Read leniently or strictly, with the legacy backend or not: each reading is its own.
    expect(new Netns({ rules: text, lenient: true }).ruleset4).not.toBe(kept);
    expect(new Netns({ rules: text, check: { backend: 'legacy' } }).ruleset4).not.toBe(kept);
  });

  it('give the lenient reading\'s warnings to every namespace built from it', () => {
    forgetShared();
    const text = '*filter\r\n:INPUT ACCEPT [0:0]\r\n:FORWARD ACCEPT [0:0]\r\n:OUTPUT ACCEPT [0:0]\r\n-A OUTPUT -m mutliport --dports 80 -j DROP\r\n';
    const first = new Netns({ rules: text, lenient: true });
    const second = new Netns({ rules: text, lenient: true });
    expect(first.warnings.length).toBeGreaterThan(0);
    expect(second.warnings).toEqual(first.warnings);
    expect(second.warnings).not.toBe(first.warnings);
    expect(second.ruleset4).toBe(first.ruleset4);
  });

  it('keep at most MAX_SHARED_RULE_SETS texts, the newest, and no text longer than MAX_SHARED_TEXT', () => {
    forgetShared();
    const text = (i: number): string => `*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A OUTPUT -p tcp --dport ${i} -j DROP\nCOMMIT\n`;
    const first = new Netns({ rules: text(1) }).ruleset4;
    expect(new Netns({ rules: text(1) }).ruleset4).toBe(first);
    for (let i = 2; i <= MAX_SHARED_RULE_SETS + 1; i++) new Netns({ rules: text(i) });
    expect(new Netns({ rules: text(1) }).ruleset4).not.toBe(first);
    const last = new Netns({ rules: text(MAX_SHARED_RULE_SETS + 1) }).ruleset4;
    expect(new Netns({ rules: text(MAX_SHARED_RULE_SETS + 1) }).ruleset4).toBe(last);
    const long = `${'# a comment line to pad the text\n'.repeat(Math.ceil(MAX_SHARED_TEXT / 32))}${text(7)}`;
    expect(new Netns({ rules: long }).ruleset4).not.toBe(new Netns({ rules: long }).ruleset4);
  });

  it('share routing only between namespaces with the same interfaces, routes and rules, and never with an observer', () => {
    forgetShared();
    const a = new Netns({ interfaces: { eth0: ['10.0.0.2/24'] } });
    expect(new Netns({ interfaces: { eth0: ['10.0.0.2/24'] } }).routing).toBe(a.routing);
    expect(new Netns({ interfaces: { eth0: ['10.0.0.3/24'] } }).routing).not.toBe(a.routing);
    expect(new Netns({ interfaces: { eth0: ['10.0.0.2/24'] }, routes: [{ dst: '10.9.0.0/16', dev: 'eth0' }] }).routing).not.toBe(a.routing);
    const observed = new Netns({ interfaces: { eth0: ['10.0.0.2/24'] }, observe: { addr: () => {}, port: () => {} } });
    expect(observed.routing).not.toBe(a.routing);
    expect(observed.routing.observer).not.toBeNull();
    expect(a.routing.observer).toBeNull();
    // Two addresses, a gateway, route_localnet: each another routing.
    const two = new Netns({ interfaces: { eth0: ['10.0.0.2/24', '10.0.0.3/24'] } });
    expect(two.routing).not.toBe(a.routing);
    expect(new Netns({ interfaces: { eth0: ['10.0.0.2/24'] }, gateway: '10.0.0.9' }).routing).not.toBe(a.routing);
    expect(new Netns({ interfaces: [{ name: 'eth0', addresses: ['10.0.0.2/24'], routeLocalnet: true }] }).routing).not.toBe(a.routing);
    expect(new Netns({ interfaces: { eth0: ['10.0.0.2/24'] }, routeLocalnet: true }).routing).not.toBe(a.routing);
    // A text that is not one address is refused, whatever was built before.
    expect(() => new Netns({ interfaces: { eth0: ['10.0.0.2/24 10.0.0.3/24'] } })).toThrow(/bad prefix length/);
    expect(() => new Netns({ interfaces: { 'eth0 10.0.0.2/24': [] } })).toThrow(/bad interface name/);
  });
});
