/**
 * nftables rule sets in the engine: base chains registered at their hooks and priorities,
 * evaluated as `nft_do_chain` does (rules in order, expressions left to right, a failed match
 * breaks the rule, `jump` pushes a return point, `goto` does not, `accept` ends the base chain),
 * with statements applied through the same target effects the iptables side uses (NAT bindings,
 * marks, conntrack zone, TPROXY sockets).
 *
 * @module
 */
import { BITMASK_TYPES, allOnes, ifnameValue, selectorType } from '../../nftables/datatypes.js';
import type {
  NftAnonSet, NftBaseChain, NftChain, NftElement, NftFamily, NftHook, NftPrefix, NftRange, NftRight, NftRule, NftRuleset, NftSelector,
  NftSet, NftSetRef, NftStatement, NftTable, NftValue,
} from '../../nftables/model.js';
import { printNftRule } from '../../nftables/print.js';
import { ADDR_TYPE, CT_STATE } from '../../model/packet.js';
import type { Family, HookName } from '../../model/types.js';
import { NetfilterSimError, diagnostic } from '../../model/errors.js';
import { NF_NAT_MANIP_DST, NF_NAT_MANIP_SRC } from '../state/conntrack.js';
import { NF_INET } from '../state/constants.js';
import type { PacketState } from '../state/packet-state.js';
import { EXT, NF_ACCEPT, NF_DROP, XT_CONTINUE, applyTarget } from './targets.js';
import type { TargetHost, TargetSite } from './targets.js';
import type { TraceRecorder } from '../trace/events.js';
import { newBucket, takeToken, type Bucket } from '../../iptables/extensions/bucket.js';

const LIMIT_UNIT_SECONDS: Readonly<Record<'second' | 'minute' | 'hour' | 'day' | 'week', number>> = { second: 1, minute: 60, hour: 3600, day: 86400, week: 604800 };

const HOOK_INDEX: Readonly<Partial<Record<NftHook, number>>> = {
  prerouting: NF_INET.PRE_ROUTING, input: NF_INET.LOCAL_IN, forward: NF_INET.FORWARD, output: NF_INET.LOCAL_OUT, postrouting: NF_INET.POST_ROUTING,
};
/** @internal */
export const HOOK_NAME: readonly HookName[] = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

/** nf_tables.h: `NFT_JUMP_STACK_SIZE`. */
export const NFT_JUMP_STACK_SIZE = 16;

/** A base chain registered at a hook. @internal */
export interface NftHookEntry {
  readonly table: NftTable;
  readonly chain: NftChain;
  readonly base: NftBaseChain;
  readonly priority: number;
  /** Order of registration, for equal priorities. */
  readonly order: number;
}

/** What the engine needs from the namespace beyond the target host. @internal */
export interface NftHost extends TargetHost {
  /** A random draw, as `statistic --mode random` uses it (so enumeration covers numgen too). */
  random(probability: number): boolean;
}

/** A rule's outcome inside a base chain. @internal */
export type Verdict = { code: 'continue' } | { code: 'accept' } | { code: 'drop' } | { code: 'return' } | { code: 'jump' | 'goto'; chain: string };

function familyMatches(tableFamily: NftFamily, family: Family): boolean {
  return tableFamily === 'inet' || (tableFamily === 'ip' && family === 4) || (tableFamily === 'ip6' && family === 6);
}

/** What a lookup finds for a key held in a set from the packet path (it carries no data). */
const DYNAMIC_ELEMENT: NftElement = { key: [] };

/** An address as one integer. @internal */
export function addrValue(words: readonly number[], family: Family): bigint {
  if (family === 4) return BigInt(words[0]! >>> 0);
  let v = 0n;
  for (let i = 0; i < 4; i++) v = (v << 32n) | BigInt(words[i]! >>> 0);
  return v;
}

function valueWords(v: bigint, family: Family): number[] {
  if (family === 4) return [Number(v & 0xffffffffn)];
  return [3, 2, 1, 0].map((i) => Number((v >> BigInt(32 * i)) & 0xffffffffn));
}

/** @internal */
export const TRANSPORT: Readonly<Record<string, number>> = { tcp: 6, udp: 17, sctp: 132, icmp: 1, icmpv6: 58 };
/** @internal */
export const PORT_PROTOCOLS = new Set([6, 17, 132, 33, 136]);

/** nft's `ct state` bits for the packet. @internal */
export function ctStateBits(p: PacketState): number {
  const s = p.ctState;
  if (s === 0) return 0;
  // nft's ct_state bits: invalid 1, established 2, related 4, new 8, untracked 64.
  return s === CT_STATE.UNTRACKED ? 64 : s;
}

const ifnameKeys = new Map<string, bigint>();

/** An interface name as the value `iifname`/`oifname` compare (made once per name). @internal */
export function ifnameKey(name: string): bigint {
  let v = ifnameKeys.get(name);
  if (v === undefined) {
    v = ifnameValue(name);
    ifnameKeys.set(name, v);
  }
  return v;
}

/**
 * The nft side of a namespace: base chains by hook, evaluated on demand.
 * @internal
 */
export class NftEngine {
  readonly ruleset: NftRuleset;
  /** Per family (4, 6) and hook index: base chains in registration order. */
  private readonly entries: Map<string, NftHookEntry[]> = new Map();
  protected readonly numgenCounters = new Map<object, number>();
  /** `limit` statements' token buckets, by statement (or named object). */
  private readonly buckets = new Map<object, Bucket>();
  /**
   * Keys put in named sets from the packet path (`update @s { ip saddr }`, nft_dynset), by set:
   * the key's parts as text → when the element expires, in seconds on the namespace's clock.
   */
  protected readonly dynamicSets = new Map<NftSet, Map<string, number>>();
  /** Bytes counted by `quota` statements and named quotas. */
  private readonly quotas = new Map<object, bigint>();

  constructor(ruleset: NftRuleset) {
    this.ruleset = ruleset;
    let order = 0;
    for (const t of ruleset.tables) {
      // A namespace has no bridge devices, so bridge chains never see a packet; ARP is not
      // simulated (as neighbour discovery is not), so arp chains see none either.
      if (t.family === 'bridge' || t.family === 'arp') continue;
      for (const c of t.chains) {
        if (!c.base) continue;
        const hook = HOOK_INDEX[c.base.hook];
        if (hook === undefined) {
          throw new NetfilterSimError([diagnostic('UNSUPPORTED', `nft: ${t.family} ${t.name} chain ${c.name} hooks ${c.base.hook} on ${(c.base.devices ?? []).join(', ')}: device hooks (ingress, egress) are not simulated`, c.span, c.name)]);
        }
        for (const family of [4, 6] as const) {
          if (!familyMatches(t.family, family)) continue;
          const key = `${family}:${hook}`;
          const list = this.entries.get(key) ?? [];
          list.push({ table: t, chain: c, base: c.base, priority: c.base.priority, order: order++ });
          this.entries.set(key, list);
        }
      }
    }
    for (const list of this.entries.values()) list.sort((a, b) => a.priority - b.priority || a.order - b.order);
    for (const t of ruleset.tables) {
      for (const c of t.chains) {
        for (const r of c.rules) {
          for (const st of r.statements) {
            if (st.kind !== 'dynset' || st.data !== undefined) continue;
            const set = t.sets.find((x) => x.name === st.set);
            if (set !== undefined) this.fed.add(set);
          }
        }
      }
    }
  }

  /** Sets some rule fills from the packet path. */
  private readonly fed = new Set<NftSet>();

  /** Whether a rule puts keys in this set from the packet path (its lookups must see them). */
  protected fedFromPacketPath(set: NftSet): boolean {
    return this.fed.has(set);
  }

  /** Base chains registered at a hook for a family, in priority order. */
  hookEntries(family: Family, hook: number): readonly NftHookEntry[] {
    return this.entries.get(`${family}:${hook}`) ?? [];
  }

  /** Whether any base chain of a family uses conntrack (to enable it, as loading nft_ct does). */
  usesConntrack(family: Family): boolean {
    return this.ruleset.tables.some((t) => familyMatches(t.family, family) && t.chains.some((c) => c.rules.some((r) => r.statements.some(statementUsesConntrack))));
  }

  /** Runs a base chain: NF_ACCEPT or NF_DROP. */
  runBaseChain(e: NftHookEntry, hook: number, p: PacketState, host: NftHost, tr: TraceRecorder | null): number {
    const stack: { chain: NftChain; rule: number }[] = [];
    let chain = e.chain;
    let i = 0;
    const hookName = HOOK_NAME[hook]!;
    const tableLabel = `${e.table.family} ${e.table.name}`;
    for (;;) {
      if (i >= chain.rules.length) {
        const top = stack.pop();
        if (top === undefined) {
          if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook: hookName, table: tableLabel as never, chain: e.chain.name, rule: e.chain.rules.length + 1, policy: e.base.policy === 'accept' ? 'ACCEPT' : 'DROP' });
          if (e.base.policy === 'drop') p.dropReason = `policy drop of ${tableLabel} ${e.chain.name}`;
          return e.base.policy === 'accept' ? NF_ACCEPT : NF_DROP;
        }
        if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'return', hook: hookName, table: tableLabel as never, chain: chain.name, rule: chain.rules.length + 1 });
        chain = top.chain;
        i = top.rule;
        continue;
      }
      const rule = chain.rules[i]!;
      const v = this.runRule(rule, e.table, chain, i, hookName, tableLabel, p, host, tr);
      i++;
      switch (v.code) {
        case 'continue':
          continue;
        case 'accept':
          return NF_ACCEPT;
        case 'drop':
          return NF_DROP;
        case 'return': {
          const top = stack.pop();
          if (top === undefined) {
            if (tr !== null) tr.push({ packet: tr.packet, label: tr.label, type: 'policy', hook: hookName, table: tableLabel as never, chain: e.chain.name, rule: i, policy: e.base.policy === 'accept' ? 'ACCEPT' : 'DROP' });
            return e.base.policy === 'accept' ? NF_ACCEPT : NF_DROP;
          }
          chain = top.chain;
          i = top.rule;
          continue;
        }
        case 'jump': case 'goto': {
          const next = e.table.chains.find((c) => c.name === v.chain);
          if (!next) return NF_DROP;
          if (v.code === 'jump') {
            if (stack.length >= NFT_JUMP_STACK_SIZE) {
              p.dropReason = 'nft jump stack overflow';
              return NF_DROP;
            }
            stack.push({ chain, rule: i });
          }
          chain = next;
          i = 0;
          continue;
        }
      }
    }
  }

  protected runRule(rule: NftRule, table: NftTable, chain: NftChain, index: number, hook: HookName, tableLabel: string, p: PacketState, host: NftHost, tr: TraceRecorder | null): Verdict {
    const site: TargetSite = { hook, table: tableLabel as never, chain: chain.name, rule: index + 1, name: 'nft' };
    const stmts = rule.statements;
    for (let k = 0; k < stmts.length; k++) {
      const s = stmts[k]!;
      const r = this.statement(s, table, p, host, tr, site);
      if (r === 'break') return { code: 'continue' };
      if (r !== 'next') {
        if (tr !== null) this.traceRule(tr, hook, tableLabel, chain, index, rule, table, r.code === 'jump' || r.code === 'goto' ? r.chain : r.code, r.code === 'jump' || r.code === 'goto' ? r.code : 'verdict');
        return r;
      }
    }
    if (tr !== null) this.traceRule(tr, hook, tableLabel, chain, index, rule, table, '', 'none');
    return { code: 'continue' };
  }

  /** A matched rule, named in nft's words: table with family, chain, handle, the rule as listed. */
  protected traceRule(tr: TraceRecorder, hook: HookName, tableLabel: string, chain: NftChain, index: number, rule: NftRule, table: NftTable, target: string, action: 'verdict' | 'jump' | 'goto' | 'none'): void {
    tr.push({
      packet: tr.packet, label: tr.label, type: 'rule', hook, table: tableLabel as never, chain: chain.name, rule: index + 1, target, action,
      text: `${printNftRule(rule, table)} # handle ${rule.handle}`, comment: rule.comment ?? null, span: rule.span ?? null,
    });
  }

  /** One statement: 'next' (go on), 'break' (the rule stops), or a verdict. */
  protected statement(s: NftStatement, table: NftTable, p: PacketState, host: NftHost, tr: TraceRecorder | null, site: TargetSite): 'next' | 'break' | Verdict {
    switch (s.kind) {
      case 'match':
        return this.match(s, table, p, host) ? 'next' : 'break';
      case 'verdict':
        if (s.verdict === 'jump' || s.verdict === 'goto') return { code: s.verdict, chain: s.chain! };
        return { code: s.verdict };
      case 'vmap': {
        const key = this.readParts(s.key, p, host);
        if (key === null) return 'break';
        const e = this.lookup(s.mappings, table, s.key, key, p);
        if (!e || e.data?.kind !== 'verdict') return 'break';
        const d = e.data;
        if (d.verdict === 'jump' || d.verdict === 'goto') return { code: d.verdict, chain: d.chain! };
        return { code: d.verdict };
      }
      case 'counter':
        return 'next';
      case 'log':
        // nft_log: the packet is logged (here: a trace event) and the rule goes on.
        applyTarget(EXT.LOG, undefined, p, host, tr, namedSite(site, 'log'));
        return 'next';
      case 'limit':
        return this.limit(s, s, p) ? 'next' : 'break';
      case 'quota':
        return this.quota(s, s.bytes, s.over, p) ? 'next' : 'break';
      case 'objref':
        return this.objref(s, table, p, host);
      case 'optstrip':
        // The option becomes NOPs: nothing a connection's way depends on changes.
        return 'next';
      case 'notrack': {
        const v = applyTarget(EXT.NOTRACK, undefined, p, host, tr, site);
        return v === XT_CONTINUE ? 'next' : { code: 'drop' };
      }
      case 'reject': {
        const code = s.with?.type === 'tcp-reset' ? 'tcp-reset' : `icmp-${s.with?.code ?? 'port-unreachable'}`;
        if (s.with?.type === 'tcp-reset' && p.proto !== 6) return 'break';
        applyTarget(EXT.REJECT, { rejectWith: code }, p, host, tr, site);
        return { code: 'drop' };
      }
      case 'queue': {
        const num = s.num === undefined ? 0 : s.num.kind === 'value' ? Number(s.num.value) : s.num.kind === 'range' ? Number(s.num.low.value) : 0;
        const total = s.num?.kind === 'range' ? Number(s.num.high.value - s.num.low.value) + 1 : 1;
        const v = applyTarget(EXT.NFQUEUE, { queue: num, total, bypass: s.flags.includes('bypass'), cpuFanout: s.flags.includes('fanout') }, p, host, tr, namedSite(site, 'queue'));
        return v === NF_ACCEPT ? { code: 'accept' } : { code: 'drop' };
      }
      case 'mangle': return this.mangle(s, table, p, host, tr, site);
      case 'nat': return this.nat(s, p, host, tr, site);
      case 'tproxy': {
        const fam: Family = s.family === 'ip6' ? 6 : s.family === 'ip' ? 4 : p.family;
        if (fam !== p.family) return 'break';
        const onIp = s.addr ? valueWords(s.addr.value, p.family) : undefined;
        const sock = host.tproxyLookup(p, onIp, s.port ? Number(s.port.value) : p.dport);
        if (sock === null) return 'break';
        p.assignedSocket = sock;
        return 'next';
      }
      case 'dup':
        // nf_dup: a copy goes to another address; the packet itself goes on unchanged.
        return 'next';
      case 'flow':
        // A flowtable offloads forwarded connections after their first packets; connections to
        // and from this namespace are never offloaded (flow add only runs at the forward hook).
        return 'next';
      case 'dynset': {
        // nft_dynset on a set (not a map, no per-element statements): the key is put in, renewed
        // or taken out; lookups of the set then see it until it expires.
        if (s.meter !== undefined) return unsupported(`meter ${s.set}: the statement it keeps per key is not evaluated (${printNftStatementKind(s)})`);
        if (s.data !== undefined || s.stateful.length > 0) {
          return unsupported(`${s.op} @${s.set} statements with map data or per-element statements are not evaluated (${printNftStatementKind(s)})`);
        }
        const set = table.sets.find((x) => x.name === s.set);
        const parts = this.readParts(s.key, p, host);
        if (set === undefined || parts === null) return 'break';
        let held = this.dynamicSets.get(set);
        if (held === undefined) {
          held = new Map();
          this.dynamicSets.set(set, held);
        }
        const k = parts.join(' ');
        const now = p.now;
        if (s.op === 'delete') {
          held.delete(k);
          return 'next';
        }
        const timeout = s.timeout ?? set.timeout;
        const until = timeout === undefined ? Infinity : now + timeout / 1000;
        const old = held.get(k);
        // `add` leaves a live element as it is; `update` also renews its timeout.
        if (s.op === 'update' || old === undefined || old <= now) held.set(k, until);
        return 'next';
      }
      case 'fwd': case 'synproxy': case 'connlimit':
        return unsupported(`${s.kind === 'connlimit' ? 'ct count' : s.kind} statements are not evaluated (${printNftStatementKind(s)})`);
    }
  }

  /** `limit rate …` (one bucket per statement, or per named object). */
  protected limit(key: object, l: { rate: number; unit: 'second' | 'minute' | 'hour' | 'day' | 'week'; burst: number; over: boolean; bytes?: unknown }, p: PacketState): boolean {
    // nft_limit_pkts: a bucket of `burst` packets' worth of nanoseconds, full at the first
    // packet, refilled by the namespace's clock; a packet costs unit / rate. Under the rate the
    // rule goes on (`over`: it stops), over the rate it stops (`over`: it goes on).
    if (l.bytes) return unsupported('byte-rate limits are not evaluated');
    const unitNs = BigInt(LIMIT_UNIT_SECONDS[l.unit]) * 1_000_000_000n;
    const cost = unitNs / BigInt(l.rate);
    const cap = cost * BigInt(l.burst || 1);
    const now = BigInt(Math.round(p.now * 1e6)) * 1000n;
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      bucket = newBucket(cap, now);
      this.buckets.set(key, bucket);
    }
    const under = takeToken(bucket, cost, cap, now);
    return under !== l.over;
  }

  /** `quota [over] N bytes` (nft_quota): bytes counted per statement or named object. */
  protected quota(key: object, bytes: bigint, over: boolean, p: PacketState, used = 0n): boolean {
    const consumed = (this.quotas.get(key) ?? used) + BigInt(p.length);
    this.quotas.set(key, consumed);
    const exceeded = consumed > bytes;
    return exceeded === over;
  }

  private objref(s: Extract<NftStatement, { kind: 'objref' }>, table: NftTable, p: PacketState, host: NftHost): 'next' | 'break' | Verdict {
    let name = s.name;
    if (s.map) {
      const key = this.readParts(s.map.key, p, host);
      const e = key === null ? undefined : this.lookup(s.map.mappings, table, s.map.key, key, p);
      if (e === undefined || e.data?.kind !== 'value') return 'break';
      name = e.data.text;
    }
    const obj = (table.objects ?? []).find((o) => o.name === name && o.type === s.objType);
    if (obj === undefined) return 'break';
    switch (obj.type) {
      case 'counter': case 'secmark': case 'ct timeout': case 'ct expectation':
        return 'next';
      case 'ct helper':
        // The helper is attached to the connection; a TCP connection to a listener does not
        // depend on it (helpers only open expectations for related flows).
        return 'next';
      case 'quota': return this.quota(obj, obj.bytes, obj.over, p, obj.used) ? 'next' : 'break';
      case 'limit': return this.limit(obj, obj, p) ? 'next' : 'break';
      case 'synproxy': return unsupported('synproxy is not evaluated');
    }
  }

  private mangle(s: Extract<NftStatement, { kind: 'mangle' }>, table: NftTable, p: PacketState, host: NftHost, tr: TraceRecorder | null, site: TargetSite): 'next' | 'break' | Verdict {
    const t = s.target;
    if (t.kind === 'tcpopt' || (t.kind === 'meta' && (t.key === 'nftrace' || t.key === 'priority' || t.key === 'secmark'))
      || (t.kind === 'ct' && (t.key === 'event' || t.key === 'secmark'))) {
      // No effect on where the packet goes: the MSS clamp, trace flag, tc priority, secmark,
      // conntrack event mask.
      return 'next';
    }
    if (t.kind === 'ct' && t.key === 'label') {
      // `ct label set N`: label N is added to the connection's labels (nf_connlabels_replace with
      // the label's bit as both value and mask); `ct label` reads them back.
      if (s.value.kind !== 'value') return unsupported('ct label set from an expression is not evaluated');
      if (p.ct !== null && p.ctEntry >= 0) p.ct.addLabels(1n << s.value.value);
      return 'next';
    }
    let v: bigint | null;
    if (s.value.kind === 'value') v = s.value.value;
    else if (s.value.kind === 'map') {
      const key = this.readParts(s.value.key, p, host);
      const e = key === null ? undefined : this.lookup(s.value.mappings, table, s.value.key, key, p);
      v = e?.data?.kind === 'value' ? e.data.value : null;
    } else if (s.value.kind === 'concat-value' || s.value.kind === 'concat') return unsupported('setting a concatenation is not evaluated');
    else v = this.read(s.value, p, host);
    if (v === null) return 'break';
    const n = Number(v & 0xffffffffn);
    if (t.kind === 'meta') {
      if (t.key === 'mark') p.mark = n >>> 0;
      else return unsupported(`meta ${t.key} set is not evaluated`);
      return 'next';
    }
    if (t.kind === 'ct') {
      if (t.key === 'mark') {
        if (p.ctEntry >= 0) p.ctTable!.mark[p.ctEntry] = n >>> 0;
      } else if (t.key === 'zone') {
        applyTarget(EXT.CT, { notrack: false, zone: n }, p, host, tr, site);
      } else return unsupported(`ct ${t.key} set is not evaluated`);
      return 'next';
    }
    if (t.kind === 'payload' && (t.protocol === 'ip' || t.protocol === 'ip6') && (p.family === 4) === (t.protocol === 'ip')) {
      switch (t.field) {
        case 'ttl': case 'hoplimit':
          applyTarget(EXT.TTL, { mode: 'set', value: n }, p, host, tr, namedSite(site, t.protocol === 'ip' ? 'ttl' : 'hoplimit'));
          return 'next';
        case 'dscp':
          applyTarget(EXT.DSCP, { dscp: n }, p, host, tr, namedSite(site, 'dscp'));
          return 'next';
        case 'ecn':
          p.tos = ((p.tos & 0xfc) | (n & 3)) & 0xff;
          return 'next';
        default:
          break;
      }
    }
    return unsupported(`${printSelectorKind(t)} set is not evaluated (only marks, ct zone, ttl, dscp and ecn are rewritten)`);
  }

  private nat(s: Extract<NftStatement, { kind: 'nat' }>, p: PacketState, host: NftHost, tr: TraceRecorder | null, site: TargetSite): 'next' | 'break' | Verdict {
    if (s.family && (s.family === 'ip' ? 4 : 6) !== p.family) return 'break';
    if (s.prefix || s.interval) return unsupported('prefix and interval NAT maps are not evaluated');
    const c = natConstants(s);
    let ports = c.ports;
    let v: number;
    switch (s.type) {
      case 'redirect':
        v = applyTarget(EXT.REDIRECT, c.options, p, host, tr, namedSite(site, 'redirect'));
        break;
      case 'masquerade':
        v = applyTarget(EXT.MASQUERADE, c.options, p, host, tr, namedSite(site, 'masquerade'));
        break;
      case 'dnat': case 'snat': {
        let addr: readonly number[] | null = null;
        if (s.addr) {
          let a: NftValue | NftRange | NftPrefix | undefined;
          if (s.addr.kind === 'map') {
            const key = this.readParts(s.addr.key, p, host);
            const e = key === null ? undefined : this.lookup(s.addr.mappings, undefined, s.addr.key, key, p);
            if (!e) return 'break';
            if (s.concat && e.data?.kind === 'concat-value') {
              const [ad, pt] = e.data.items as [NftValue | NftRange | NftPrefix, NftValue | NftRange | NftPrefix];
              a = ad;
              const lo = pt.kind === 'value' ? pt.value : pt.kind === 'range' ? pt.low.value : pt.value.value;
              const hi = pt.kind === 'value' ? pt.value : pt.kind === 'range' ? pt.high.value : pt.value.value;
              ports = { min: Number(lo), max: Number(hi) };
            } else if (e.data?.kind === 'value') a = e.data;
            else return 'break';
          } else a = s.addr;
          const first = a.kind === 'value' ? a : a.kind === 'range' ? a.low : a.value;
          if ((first.type === 'ipv6_addr' ? 6 : 4) !== p.family) return 'break';
          addr = valueWords(first.value, p.family);
        }
        if (s.port?.kind === 'map') {
          const key = this.readParts(s.port.key, p, host);
          const e = key === null ? undefined : this.lookup(s.port.mappings, undefined, s.port.key, key, p);
          if (!e || e.data?.kind !== 'value') return 'break';
          ports = { min: Number(e.data.value), max: Number(e.data.value) };
        }
        const manip = s.type === 'dnat' ? NF_NAT_MANIP_DST : NF_NAT_MANIP_SRC;
        v = host.natSetup(p, manip, addr, ports ?? null, s.type === 'dnat' ? 'DNAT' : 'SNAT', tr);
        break;
      }
    }
    // A nat statement ends the rule with its verdict (NF_ACCEPT: the binding is made).
    return v === NF_ACCEPT ? { code: 'accept' } : { code: 'drop' };
  }

  // ---- expressions ---------------------------------------------------------------------------

  /** A selector's value for the packet, or null when the packet has no such field. */
  read(sel: NftSelector, p: PacketState, host: NftHost): bigint | null {
    switch (sel.kind) {
      case 'const': return sel.value.value;
      case 'payload': {
        const proto = sel.protocol;
        if (proto === 'ip' || proto === 'ip6') {
          if ((proto === 'ip' ? 4 : 6) !== p.family) return null;
          switch (sel.field) {
            case 'saddr': return addrValue(p.src, p.family);
            case 'daddr': return addrValue(p.dst, p.family);
            case 'protocol': case 'nexthdr': return BigInt(p.proto);
            case 'ttl': case 'hoplimit': return BigInt(p.ttl);
            case 'length': return BigInt(p.length);
            case 'version': return proto === 'ip' ? 4n : 6n;
            case 'hdrlength': return 5n;
            case 'dscp': return BigInt(p.tos >> 2);
            case 'ecn': return BigInt(p.tos & 3);
            default: return unsupported(`${proto} ${sel.field} is not read by the engine`);
          }
        }
        if (proto === 'th') {
          if (!PORT_PROTOCOLS.has(p.proto) || p.fragment) return null;
        } else if (TRANSPORT[proto] !== undefined) {
          if (p.proto !== TRANSPORT[proto] || p.fragment) return null;
          if (proto === 'icmp' && p.family !== 4) return null;
          if (proto === 'icmpv6' && p.family !== 6) return null;
        } else {
          // Headers a TCP or UDP connection of this namespace never carries (ether, vlan, arp,
          // igmp, ah, esp, …): the packet has no such header.
          if (proto === 'ether' || proto === 'vlan' || proto === 'arp') return unsupported(`${proto} headers are not simulated`);
          return null;
        }
        switch (sel.field) {
          case 'sport': return BigInt(p.sport);
          case 'dport': return BigInt(p.dport);
          case 'flags': return BigInt(p.tcpFlags);
          case 'type': return BigInt(p.icmpType);
          case 'code': return BigInt(p.icmpCode);
          default: return unsupported(`${proto} ${sel.field} is not read by the engine`);
        }
      }
      case 'meta':
        switch (sel.key) {
          case 'mark': return BigInt(p.mark >>> 0);
          case 'l4proto': return BigInt(p.proto);
          case 'nfproto': return p.family === 4 ? 2n : 10n;
          case 'protocol': return p.family === 4 ? 0x0800n : 0x86ddn;
          // nft_meta_store_ifindex / _ifname: no device reads as index 0 and the empty name.
          case 'iif': return p.inIface === null ? 0n : p.inIface === 'lo' ? 1n : BigInt(p.inIndex);
          case 'oif': return p.outIface === null ? 0n : p.outIface === 'lo' ? 1n : BigInt(p.outIndex);
          case 'iifname': return p.inIface === null ? 0n : ifnameKey(p.inIface);
          case 'oifname': return p.outIface === null ? 0n : ifnameKey(p.outIface);
          case 'iiftype': return p.inIface === null ? null : p.inIface === 'lo' ? 772n : 1n;
          case 'oiftype': return p.outIface === null ? null : p.outIface === 'lo' ? 772n : 1n;
          case 'iifgroup': return p.inIface === null ? null : 0n;
          case 'oifgroup': return p.outIface === null ? null : 0n;
          case 'skuid': return p.socket === null ? null : BigInt(p.socket.uid);
          case 'skgid': return p.socket === null ? null : BigInt(p.socket.gid);
          case 'pkttype': return 0n;
          case 'length': return BigInt(p.length);
          case 'nftrace': return 0n;
          // nft_meta_get_eval: the wall clock (the namespace's clock, UTC: the kernel's time zone
          // offset is 0 unless set) as nanoseconds, the weekday (Sunday 0), seconds since midnight.
          case 'time': return BigInt(Math.floor(p.now * 1e6)) * 1000n;
          case 'day': return BigInt((4 + Math.floor(Math.floor(p.now) / 86400)) % 7);
          case 'hour': return BigInt(Math.floor(p.now) % 86400);
          default: return unsupported(`meta ${sel.key} is not read by the engine`);
        }
      case 'ct': {
        if (sel.key === 'state') return BigInt(ctStateBits(p));
        const ct = p.ct;
        if (ct === null || p.ctEntry < 0) return null;
        switch (sel.key) {
          case 'status': return BigInt(ct.status);
          case 'mark': return BigInt(ct.mark >>> 0);
          case 'zone': return BigInt(ct.zone);
          case 'direction': return ct.direction === 'ORIGINAL' ? 0n : 1n;
          case 'l3proto': return p.family === 4 ? 2n : 10n;
          case 'protocol': return BigInt(ct.proto);
          case 'saddr': case 'daddr': {
            if (sel.family && (sel.family === 'ip' ? 4 : 6) !== p.family) return null;
            const orig = sel.direction !== 'reply';
            return addrValue(sel.key === 'saddr' ? (orig ? ct.origSrc : ct.replySrc) : (orig ? ct.origDst : ct.replyDst), p.family);
          }
          case 'proto-src': return BigInt(sel.direction === 'reply' ? (ct as unknown as { replySport: number }).replySport : ct.origSport);
          case 'proto-dst': return BigInt(sel.direction === 'reply' ? (ct as unknown as { replyDport: number }).replyDport : ct.origDport);
          case 'helper': return 0n;
          case 'label': return ct.labels;
          default: return unsupported(`ct ${sel.key} is not read by the engine`);
        }
      }
      case 'fib': {
        const useSaddr = sel.flags.includes('saddr');
        const addr = useSaddr ? p.src : p.dst;
        const iface = sel.flags.includes('iif') ? p.inIface : sel.flags.includes('oif') ? p.outIface : null;
        const bits = p.addressType(addr, iface);
        if (sel.result === 'type') {
          for (let t = 0; t < 12; t++) if (bits === 1 << t || (bits & (1 << t)) !== 0) return BigInt(t);
          return 0n;
        }
        // oif / oifname: where a reply would be routed; "missing" when nothing routes it.
        return bits & ADDR_TYPE.UNREACHABLE ? 0n : 1n;
      }
      case 'socket': {
        // nft_socket_eval: the packet's socket, else a lookup as for an arriving packet; no
        // socket (or a key a request or TIME_WAIT socket lacks) breaks the rule.
        if (sel.key === 'cgroupv2') return unsupported('socket cgroupv2 is not read by the engine');
        const sk = p.socketLookup();
        if (sk === null) return null;
        if (sel.key === 'transparent') return sk.transparent ? 1n : 0n;
        if (!sk.full) return null;
        if (sel.key === 'wildcard') return sk.wildcard ? 1n : 0n;
        return BigInt(sk.mark >>> 0);
      }
      case 'numgen': {
        if (sel.mode === 'inc') {
          const n = this.numgenCounters.get(sel) ?? 0;
          this.numgenCounters.set(sel, n + 1);
          return BigInt((n % sel.modulus) + sel.offset);
        }
        for (let i = 0; i < sel.modulus - 1; i++) if (host.random(1 / (sel.modulus - i))) return BigInt(i + sel.offset);
        return BigInt(sel.modulus - 1 + sel.offset);
      }
      case 'bitwise': {
        const v = this.read(sel.operand, p, host);
        return v === null ? null : (v & sel.mask) ^ sel.xor;
      }
      case 'shift': {
        const v = this.read(sel.operand, p, host);
        if (v === null) return null;
        return sel.op === '<<' ? (v << BigInt(sel.by)) & allOnes(sel.bits) : v >> BigInt(sel.by);
      }
      case 'exthdr':
        // A TCP or UDP packet of this namespace carries no IPv6 extension headers.
        if (p.family !== 6) return sel.field === undefined ? 0n : null;
        return sel.field === undefined ? 0n : null;
      case 'ipopt':
        // nft_exthdr_ipv4_eval: the namespace's packets carry no IPv4 options, so an option is
        // missing (its presence reads 0) and its fields break the rule; not IPv4, it breaks.
        if (p.family !== 4) return null;
        return sel.field === undefined ? 0n : null;
      case 'sctpchunk':
        // Only SCTP packets have chunks; the namespace's connections are TCP and UDP.
        if (p.proto !== 132) return null;
        return unsupported(`sctp chunk ${sel.chunk} is not read by the engine`);
      case 'tcpopt':
        return unsupported(`tcp option ${sel.option} is not read by the engine`);
      case 'rt':
        return unsupported(`rt ${sel.key} is not read by the engine`);
      case 'hash': {
        if (sel.mode === 'jhash' && sel.seed !== undefined && sel.expr) {
          // nft_jhash_eval: jhash over the key's registers (each part padded to 4 bytes),
          // scaled into [0, mod) by reciprocal_scale, plus the offset.
          const bytes = this.keyBytes(sel.expr, p, host);
          if (bytes === null) return null;
          const h = jhash(bytes, sel.seed >>> 0);
          return BigInt(Number((BigInt(h) * BigInt(sel.modulus)) >> 32n) + sel.offset);
        }
        // Without a seed the kernel draws one at random when the rule is loaded (and symhash
        // hashes the flow with a per-boot key): which value a flow gets is a draw.
        for (let i = 0; i < sel.modulus - 1; i++) if (host.random(1 / (sel.modulus - i))) return BigInt(i + sel.offset);
        return BigInt(sel.modulus - 1 + sel.offset);
      }
      case 'rawpayload':
        return unsupported(`raw payload @${sel.base},${sel.offset},${sel.length}${sel.base === 'ih' ? ' (inner header)' : ''} is not read by the engine`);
      case 'osf': case 'ipsec':
        return unsupported(`${sel.kind} expressions are not read by the engine`);
      case 'concat':
        return null;
    }
  }

  /** A key's bytes as the kernel's registers hold them: each part big-endian (host order for host types), padded to 4 bytes. */
  private keyBytes(sel: NftSelector, p: PacketState, host: NftHost): number[] | null {
    const items = sel.kind === 'concat' ? sel.items : [sel];
    const out: number[] = [];
    for (const i of items) {
      const v = this.read(i, p, host);
      if (v === null) return null;
      const st = selectorType(i);
      const n = Math.ceil(st.bits / 8);
      const be: number[] = [];
      for (let k = n - 1; k >= 0; k--) be.push(Number((v >> BigInt(8 * k)) & 0xffn));
      const bytes = st.host ? be.reverse() : be;
      out.push(...bytes);
      while (out.length % 4 !== 0) out.push(0);
    }
    return out;
  }

  protected readParts(sel: NftSelector, p: PacketState, host: NftHost): bigint[] | null {
    if (sel.kind !== 'concat') {
      const v = this.read(sel, p, host);
      return v === null ? null : [v];
    }
    const out: bigint[] = [];
    for (const i of sel.items) {
      const v = this.read(i, p, host);
      if (v === null) return null;
      out.push(v);
    }
    return out;
  }

  protected lookup(m: NftAnonSet | NftSetRef, table: NftTable | undefined, sel: NftSelector, key: bigint | bigint[], p: PacketState): NftElement | undefined {
    void p;
    const keys = Array.isArray(key) ? key : [key];
    const named = m.kind === 'setref' ? table?.sets.find((s: NftSet) => s.name === m.name) ?? this.findSet(m.name) : undefined;
    const elements = m.kind === 'set' ? m.elements : (named?.elements ?? []);
    void sel;
    const found = elements.find((e) => e.key.length === keys.length && e.key.every((k, i) => inPart(k, keys[i]!)));
    if (found !== undefined) return found;
    if (named !== undefined && this.dynamicHas(named, keys, p.now)) return DYNAMIC_ELEMENT;
    // nft_set_catchall_lookup: what no element matched, the catch-all element (`*`) does.
    return elements.find((e) => e.key.length === 0);
  }

  /** Whether a key was put in a named set from the packet path and has not expired. */
  protected dynamicHas(set: NftSet, keys: readonly (bigint | number)[], now: number): boolean {
    const held = this.dynamicSets.get(set);
    if (held === undefined) return false;
    const until = held.get(keys.join(' '));
    return until !== undefined && until > now;
  }

  protected findSet(name: string): NftSet | undefined {
    for (const t of this.ruleset.tables) {
      const s = t.sets.find((x) => x.name === name);
      if (s) return s;
    }
    return undefined;
  }

  private match(s: Extract<NftStatement, { kind: 'match' }>, table: NftTable, p: PacketState, host: NftHost): boolean {
    const parts = this.readParts(s.left, p, host);
    if (parts === null) return false;
    const right = s.right;
    const st = s.left.kind === 'concat' ? undefined : selectorType(s.left);
    if (s.flagMask) return (parts[0]! & s.flagMask.value) === (right as NftValue).value;
    if (right.kind === 'set' || right.kind === 'setref') {
      const hit = this.lookup(right, table, s.left, parts.length === 1 ? parts[0]! : parts, p) !== undefined;
      return s.op === '!=' ? !hit : hit;
    }
    if (right.kind === 'concat-value') {
      const hit = right.items.every((k, i) => inPart(k, parts[i]!));
      return s.op === '!=' ? !hit : hit;
    }
    const v = parts[0]!;
    if (right.kind === 'value' && st && s.left.kind !== 'bitwise' && BITMASK_TYPES.has(st.type) && (s.op === 'implicit' || s.op === '!=')) {
      // Flags: `ct state established,related` is (state & flags) != 0; `ct label N` tests bit N.
      const hit = (v & (st.type === 'ct_label' ? 1n << right.value : right.value)) !== 0n;
      return s.op === '!=' ? !hit : hit;
    }
    switch (s.op) {
      case 'implicit': case '==': return inPart(right as NftValue | NftRange | NftPrefix, v);
      case '!=': return !inPart(right as NftValue | NftRange | NftPrefix, v);
      case '<': return v < (right as NftValue).value;
      case '>': return v > (right as NftValue).value;
      case '<=': return v <= (right as NftValue).value;
      case '>=': return v >= (right as NftValue).value;
    }
  }
}

interface NatConstants {
  readonly ports: { readonly min: number; readonly max: number } | undefined;
  readonly options: unknown;
}

const natCache = new WeakMap<object, NatConstants>();

/** A nat statement's ports and target options, worked out once per statement. */
function natConstants(s: Extract<NftStatement, { kind: 'nat' }>): NatConstants {
  let c = natCache.get(s);
  if (c === undefined) {
    const ports = s.port ? (s.port.kind === 'value' ? { min: Number(s.port.value), max: Number(s.port.value) } : s.port.kind === 'range' ? { min: Number(s.port.low.value), max: Number(s.port.high.value) } : undefined) : undefined;
    const options = s.type === 'redirect' ? { ...(ports ? { toPorts: ports } : {}), random: false }
      : s.type === 'masquerade' ? { ...(ports ? { toPorts: ports } : {}), random: false, randomFully: false } : undefined;
    c = { ports, options };
    natCache.set(s, c);
  }
  return c;
}

const namedSites = new WeakMap<TargetSite, Map<string, TargetSite>>();

/** A site under a statement's own name (the trace says `redirect`, not `nft`), made once per site. */
function namedSite(site: TargetSite, name: string): TargetSite {
  let m = namedSites.get(site);
  if (m === undefined) {
    m = new Map();
    namedSites.set(site, m);
  }
  let s = m.get(name);
  if (s === undefined) {
    s = { ...site, name };
    m.set(name, s);
  }
  return s;
}

function rol32(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Bob Jenkins' lookup3 hash as the kernel's `jhash()` computes it (words read little-endian). */
function jhash(key: readonly number[], initval: number): number {
  let length = key.length;
  let a = (0xdeadbeef + length + initval) >>> 0;
  let b = a;
  let c = a;
  const word = (o: number): number => ((key[o]! | (key[o + 1]! << 8) | (key[o + 2]! << 16) | (key[o + 3]! << 24)) >>> 0);
  const mix = (): void => {
    a = (a - c) >>> 0; a = (a ^ rol32(c, 4)) >>> 0; c = (c + b) >>> 0;
    b = (b - a) >>> 0; b = (b ^ rol32(a, 6)) >>> 0; a = (a + c) >>> 0;
    c = (c - b) >>> 0; c = (c ^ rol32(b, 8)) >>> 0; b = (b + a) >>> 0;
    a = (a - c) >>> 0; a = (a ^ rol32(c, 16)) >>> 0; c = (c + b) >>> 0;
    b = (b - a) >>> 0; b = (b ^ rol32(a, 19)) >>> 0; a = (a + c) >>> 0;
    c = (c - b) >>> 0; c = (c ^ rol32(b, 4)) >>> 0; b = (b + a) >>> 0;
  };
  const final = (): void => {
    c = (c ^ b) >>> 0; c = (c - rol32(b, 14)) >>> 0;
    a = (a ^ c) >>> 0; a = (a - rol32(c, 11)) >>> 0;
    b = (b ^ a) >>> 0; b = (b - rol32(a, 25)) >>> 0;
    c = (c ^ b) >>> 0; c = (c - rol32(b, 16)) >>> 0;
    a = (a ^ c) >>> 0; a = (a - rol32(c, 4)) >>> 0;
    b = (b ^ a) >>> 0; b = (b - rol32(a, 14)) >>> 0;
    c = (c ^ b) >>> 0; c = (c - rol32(b, 24)) >>> 0;
  };
  let o = 0;
  while (length > 12) {
    a = (a + word(o)) >>> 0;
    b = (b + word(o + 4)) >>> 0;
    c = (c + word(o + 8)) >>> 0;
    mix();
    length -= 12;
    o += 12;
  }
  if (length === 0) return c;
  const k = (i: number): number => key[o + i] ?? 0;
  // The tail: bytes 8-11 into c, 4-7 into b, 0-3 into a (the kernel's fall-through switch).
  for (let i = length - 1; i >= 0; i--) {
    const v = (k(i) << (8 * (i % 4))) >>> 0;
    if (i >= 8) c = (c + v) >>> 0;
    else if (i >= 4) b = (b + v) >>> 0;
    else a = (a + v) >>> 0;
  }
  final();
  return c;
}

/** An expression or statement the engine does not evaluate: a named refusal, never a guess. */
function unsupported(what: string): never {
  throw new NetfilterSimError([diagnostic('UNSUPPORTED', `nft: ${what}`)]);
}

function printSelectorKind(sel: NftSelector): string {
  switch (sel.kind) {
    case 'payload': return `${sel.protocol} ${sel.field}`;
    case 'meta': return `meta ${sel.key}`;
    case 'ct': return `ct ${sel.key}`;
    case 'exthdr': return `${sel.header} ${sel.field ?? ''}`.trim();
    case 'tcpopt': return `tcp option ${sel.option}`;
    case 'sctpchunk': return `sctp chunk ${sel.chunk}${sel.field !== undefined ? ` ${sel.field}` : ''}`;
    default: return sel.kind;
  }
}

function printNftStatementKind(s: NftStatement): string {
  return s.kind;
}

/** Whether a selector reads conntrack (a `ct` expression anywhere in it). */
function selectorUsesConntrack(sel: NftSelector): boolean {
  switch (sel.kind) {
    case 'ct': return true;
    case 'bitwise': case 'shift': return selectorUsesConntrack(sel.operand);
    case 'concat': return sel.items.some(selectorUsesConntrack);
    default: return false;
  }
}

/** Whether a statement needs conntrack: it reads or sets `ct` state, or makes a NAT binding. */
function statementUsesConntrack(s: NftStatement): boolean {
  switch (s.kind) {
    case 'match': return selectorUsesConntrack(s.left);
    case 'vmap': return selectorUsesConntrack(s.key);
    case 'nat': case 'notrack': return true;
    case 'mangle': return s.target.kind === 'ct' || (s.value.kind === 'map' ? selectorUsesConntrack(s.value.key) : s.value.kind !== 'value' && s.value.kind !== 'concat-value' && selectorUsesConntrack(s.value));
    case 'objref': return s.objType === 'ct helper' || s.objType === 'ct timeout' || s.objType === 'ct expectation';
    case 'connlimit': return true;
    default: return false;
  }
}

/** Whether a value lies in an element's key part. @internal */
export function inPart(k: NftValue | NftRange | NftPrefix, v: bigint): boolean {
  if (k.kind === 'value') return k.value === v;
  if (k.kind === 'range') return v >= k.low.value && v <= k.high.value;
  const mask = allOnes(k.value.bits) ^ allOnes(k.value.bits - k.length);
  return (v & mask) === (k.value.value & mask);
}

/** Whether a right-hand side is a constant (for callers that pre-check rule shapes). @internal */
export function isConstant(r: NftRight): boolean {
  return r.kind === 'value' || r.kind === 'range' || r.kind === 'prefix';
}
