/**
 * ipsets while a namespace runs (`ip_set_core.c`, `ip_set_hash_*.c`): members are tested by the
 * `set` match and changed by the `SET` target.
 *
 * @module
 */
import { fail } from '../../model/errors.js';
import type { Ipset, IpsetEntry, IpsetType } from '../../model/ipset.js';
import type { Family, Ruleset } from '../../model/types.js';
import type { RuntimeIpset } from '../../iptables/extensions/types.js';

interface Member {
  readonly addr: readonly number[];
  readonly prefix: number;
  readonly proto: number;
  readonly port: number;
  readonly nomatch: boolean;
}

function masked(addr: readonly number[], prefix: number, i: number): number {
  const bits = Math.max(0, Math.min(32, prefix - 32 * i));
  return bits === 0 ? 0 : bits === 32 ? addr[i]! >>> 0 : (addr[i]! & (~0 << (32 - bits))) >>> 0;
}

/** One set. @internal */
export class IpsetInstance implements RuntimeIpset {
  readonly name: string;
  readonly family: Family;
  readonly type: IpsetType;
  readonly dimension: number;
  private members: Member[];
  /** hash:ip, IPv4: the addresses, for a constant-time test. */
  private readonly hosts4 = new Set<number>();

  constructor(set: Ipset) {
    this.name = set.name;
    this.family = set.family;
    this.type = set.type;
    this.dimension = set.type.endsWith(',port') ? 2 : 1;
    this.members = [];
    for (const e of set.entries) this.insert(e);
  }

  private insert(e: IpsetEntry): void {
    const m: Member = { addr: e.addr, prefix: e.prefix, proto: e.proto ?? 0, port: e.port ?? 0, nomatch: e.nomatch };
    if (this.members.some((x) => this.same(x, m))) return;
    this.members.push(m);
    if (this.type === 'hash:ip' && this.family === 4) this.hosts4.add(m.addr[0]! >>> 0);
  }

  private same(a: Member, b: Member): boolean {
    return a.prefix === b.prefix && a.proto === b.proto && a.port === b.port && a.addr.every((w, i) => w === b.addr[i]);
  }

  test(addr: readonly number[], proto: number, port: number): 'match' | 'nomatch' | 'none' {
    if (this.type === 'hash:ip' && this.family === 4) return this.hosts4.has(addr[0]! >>> 0) ? 'match' : 'none';
    // hash:net: the most specific prefix decides (nomatch entries are exceptions to wider ones).
    let best: Member | null = null;
    for (const m of this.members) {
      if (this.dimension === 2 && (m.proto !== proto || m.port !== port)) continue;
      let ok = true;
      for (let i = 0; i < m.addr.length; i++) {
        if (masked(addr, m.prefix, i) !== m.addr[i]) {
          ok = false;
          break;
        }
      }
      if (ok && (best === null || m.prefix > best.prefix)) best = m;
    }
    if (best === null) return 'none';
    return best.nomatch ? 'nomatch' : 'match';
  }

  private member(addr: readonly number[], proto: number, port: number): Member {
    const prefix = this.family === 4 ? 32 : 128;
    const two = this.dimension === 2;
    return { addr: addr.map((_, i) => masked(addr, prefix, i)), prefix, proto: two ? proto : 0, port: two ? port : 0, nomatch: false };
  }

  add(addr: readonly number[], proto: number, port: number): void {
    this.insert(this.member(addr, proto, port));
  }

  del(addr: readonly number[], proto: number, port: number): void {
    const m = this.member(addr, proto, port);
    this.members = this.members.filter((x) => !this.same(x, m));
    if (this.type === 'hash:ip' && this.family === 4) this.hosts4.delete(m.addr[0]! >>> 0);
  }

  /** The members, as `ipset save` would list them (for snapshots). */
  entries(): IpsetEntry[] {
    return this.members.map((m) => ({ addr: m.addr, prefix: m.prefix, ...(this.dimension === 2 ? { proto: m.proto, port: m.port } : {}), nomatch: m.nomatch }));
  }
}

/** The table of namespaces without sets (one, shared, never written). */
const NO_SETS: ReadonlyMap<string, IpsetInstance> = new Map();

/** The sets of a namespace by name; refuses two sets of one name. @internal */
export function ipsetTable(sets: readonly Ipset[]): ReadonlyMap<string, IpsetInstance> {
  // Namespaces without sets share one empty table.
  if (sets.length === 0) return NO_SETS;
  const out = new Map<string, IpsetInstance>();
  for (const s of sets) {
    if (out.has(s.name)) fail('BAD_CONFIG', `ipset "${s.name}" is given twice`, undefined, s.name);
    out.set(s.name, new IpsetInstance(s));
  }
  return out;
}

/**
 * What the kernel checks when a rule naming a set is loaded (`ip_set_nfnl_get_byindex` in
 * `set_match_v4_checkentry`/`set_target_v3_checkentry`): the set exists, and its family is the
 * rule set's ("The protocol family of set X is IPv6, which is not applicable"). @internal
 */
export function checkIpsetReferences(rs: Ruleset, sets: ReadonlyMap<string, IpsetInstance>): void {
  for (const t of rs.tables) {
    for (const c of t.chains) {
      for (const r of c.rules) {
        const names: string[] = [];
        for (const m of r.matches) if (m.name === 'set') names.push((m.options as { name: string }).name);
        const tg = r.target;
        if (tg?.kind === 'extension' && tg.name === 'SET') {
          const o = tg.options as { add: { name: string } | null; del: { name: string } | null };
          if (o.add) names.push(o.add.name);
          if (o.del) names.push(o.del.name);
        }
        for (const n of names) {
          const s = sets.get(n);
          if (!s) {
            fail('UNKNOWN_SET', `Set ${n} doesn't exist (give its contents with the ipsets option, --ipset ${n}=ADDR,… or --ipsets FILE)`, r.span, n);
          }
          if (s.family !== rs.family) {
            fail('WRONG_FAMILY', `The protocol family of set ${n} is IPv${s.family}, which is not applicable to IPv${rs.family} rules`, r.span, n);
          }
        }
      }
    }
  }
}
