/**
 * The conntrack table: entries with an original and a reply tuple, NAT bindings per manip type,
 * status bits, mark and zone (`struct nf_conn`, `nf_conntrack_core.c`, `nf_nat_core.c`).
 *
 * @module
 */
import { CT_STATE, CT_STATUS } from '../model/packet.js';
import type { ConntrackView } from '../model/packet.js';
import type { Family } from '../model/types.js';
import { formatAddress } from '../syntax/address.js';

/** `enum ip_conntrack_dir`. */
export const IP_CT_DIR_ORIGINAL = 0;
export const IP_CT_DIR_REPLY = 1;

/** `enum nf_nat_manip_type`: bits kept in {@link ConntrackEntry.natDone}. */
export const NF_NAT_MANIP_SRC = 1;
export const NF_NAT_MANIP_DST = 2;

/** One direction of a connection: `src:sport → dst:dport`. */
export interface Tuple {
  src: number[];
  dst: number[];
  sport: number;
  dport: number;
}

/** A connection (`struct nf_conn`). */
export class ConntrackEntry {
  readonly id: number;
  readonly family: Family;
  readonly proto: number;
  readonly zone: number;
  /** `tuplehash[IP_CT_DIR_ORIGINAL]`: never changes. */
  readonly orig: Tuple;
  /** `tuplehash[IP_CT_DIR_REPLY]`: altered by NAT (`nf_conntrack_alter_reply`). */
  reply: Tuple;
  /** {@link CT_STATUS} bits. */
  status = 0;
  /** Which manip types have been initialised (`IPS_SRC_NAT_DONE`, `IPS_DST_NAT_DONE`). */
  natDone = 0;
  /** ctmark (CONNMARK). */
  mark = 0;
  /** Kind of the rule that set each binding, for traces. */
  dstNatBy: string | null = null;
  srcNatBy: string | null = null;

  constructor(id: number, family: Family, proto: number, zone: number, orig: Tuple) {
    this.id = id;
    this.family = family;
    this.proto = proto;
    this.zone = zone;
    this.orig = orig;
    this.reply = invertTuple(orig);
  }

  /** `nf_ct_tuple` of a direction. */
  tuple(dir: number): Tuple {
    return dir === IP_CT_DIR_ORIGINAL ? this.orig : this.reply;
  }
}

/** `nf_ct_invert_tuple`. */
export function invertTuple(t: Tuple): Tuple {
  return { src: t.dst.slice(), dst: t.src.slice(), sport: t.dport, dport: t.sport };
}

/** Whether two address word arrays are equal. */
export function sameAddr(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether two tuples are equal. */
export function sameTuple(a: Tuple, b: Tuple): boolean {
  return a.sport === b.sport && a.dport === b.dport && sameAddr(a.src, b.src) && sameAddr(a.dst, b.dst);
}

/** A map key for an address (IPv4 has one word, IPv6 four). @internal */
export function addrKey(a: readonly number[]): string {
  return a.length === 1 ? `${a[0]}` : `${a[0]}.${a[1]}.${a[2]}.${a[3]}`;
}

function tupleKey(zone: number, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number): string {
  return `${zone}/${proto}/${addrKey(src)}/${sport}/${addrKey(dst)}/${dport}`;
}

/** A hit in the table: the entry and the direction the packet travels in. */
export interface ConntrackHit {
  readonly entry: ConntrackEntry;
  readonly dir: number;
}

/** A compact, printable view of an entry (as `conntrack -L` shows it). */
export interface ConntrackSnapshot {
  readonly id: number;
  readonly proto: number;
  readonly zone: number;
  readonly original: string;
  readonly reply: string;
  readonly status: readonly string[];
  readonly mark: number;
}

/** The confirmed connections of a namespace (`nf_conntrack_hash`). */
export class ConntrackTable {
  private readonly byTuple = new Map<string, ConntrackHit>();
  private readonly all = new Set<ConntrackEntry>();
  private nextId = 1;

  /** A new, unconfirmed entry (`init_conntrack`). It joins the table at {@link confirm}. */
  create(family: Family, proto: number, zone: number, orig: Tuple): ConntrackEntry {
    return new ConntrackEntry(this.nextId++, family, proto, zone, {
      src: orig.src.slice(),
      dst: orig.dst.slice(),
      sport: orig.sport,
      dport: orig.dport,
    });
  }

  /** `nf_conntrack_find_get`: the entry whose original or reply tuple is this one. */
  lookup(zone: number, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number): ConntrackHit | null {
    return this.byTuple.get(tupleKey(zone, proto, src, sport, dst, dport)) ?? null;
  }

  /** `__nf_conntrack_confirm`: inserts both tuples. */
  confirm(entry: ConntrackEntry): void {
    if (entry.status & CT_STATUS.CONFIRMED) return;
    entry.status |= CT_STATUS.CONFIRMED;
    const o = entry.orig;
    const r = entry.reply;
    this.byTuple.set(tupleKey(entry.zone, entry.proto, o.src, o.sport, o.dst, o.dport), { entry, dir: IP_CT_DIR_ORIGINAL });
    this.byTuple.set(tupleKey(entry.zone, entry.proto, r.src, r.sport, r.dst, r.dport), { entry, dir: IP_CT_DIR_REPLY });
    this.all.add(entry);
  }

  /** `nf_nat_used_tuple`: whether another connection already answers to this reply tuple. */
  replyTupleTaken(entry: ConntrackEntry, reply: Tuple): boolean {
    const hit = this.lookup(entry.zone, entry.proto, reply.src, reply.sport, reply.dst, reply.dport);
    return hit !== null && hit.entry !== entry;
  }

  /** Removes an entry (`nf_ct_kill`). */
  remove(entry: ConntrackEntry): void {
    if (!this.all.delete(entry)) return;
    const o = entry.orig;
    const r = entry.reply;
    this.byTuple.delete(tupleKey(entry.zone, entry.proto, o.src, o.sport, o.dst, o.dport));
    this.byTuple.delete(tupleKey(entry.zone, entry.proto, r.src, r.sport, r.dst, r.dport));
  }

  /** Empties the table (`conntrack -F`). */
  flush(): void {
    this.byTuple.clear();
    this.all.clear();
  }

  /** Number of confirmed entries. */
  get size(): number {
    return this.all.size;
  }

  /** The confirmed entries, oldest first. */
  entries(): ConntrackEntry[] {
    return [...this.all];
  }

  /** Compact, printable entries. */
  snapshot(): ConntrackSnapshot[] {
    return this.entries().map((e) => ({
      id: e.id,
      proto: e.proto,
      zone: e.zone,
      original: formatTuple(e.orig, e.family),
      reply: formatTuple(e.reply, e.family),
      status: statusNames(e.status),
      mark: e.mark,
    }));
  }

  /** A copy with the same entries (entries themselves are copied too). */
  clone(): ConntrackTable {
    const t = new ConntrackTable();
    t.nextId = this.nextId;
    for (const e of this.all) {
      const c = new ConntrackEntry(e.id, e.family, e.proto, e.zone, e.orig);
      c.reply = { ...e.reply, src: e.reply.src.slice(), dst: e.reply.dst.slice() };
      c.status = e.status & ~CT_STATUS.CONFIRMED;
      c.natDone = e.natDone;
      c.mark = e.mark;
      c.dstNatBy = e.dstNatBy;
      c.srcNatBy = e.srcNatBy;
      t.confirm(c);
    }
    return t;
  }
}

/** `src:sport > dst:dport` with IPv6 in brackets. */
export function formatTuple(t: Tuple, family: Family): string {
  return `${formatEndpoint(t.src, t.sport, family)} > ${formatEndpoint(t.dst, t.dport, family)}`;
}

/** `addr:port`, `[v6]:port`. */
export function formatEndpoint(addr: readonly number[], port: number, family: Family): string {
  const a = formatAddress(addr, family);
  return family === 6 ? `[${a}]:${port}` : `${a}:${port}`;
}

function statusNames(status: number): string[] {
  const out: string[] = [];
  for (const [name, bit] of Object.entries(CT_STATUS)) if (status & bit) out.push(name);
  return out;
}

const EMPTY: readonly number[] = [];

/**
 * What matches see of a packet's conntrack entry. One instance lives in each packet and is
 * re-pointed rather than re-allocated. Without an entry (INVALID, UNTRACKED) the tuples are empty.
 * @internal
 */
export class ConntrackViewImpl implements ConntrackView {
  entry: ConntrackEntry | null = null;
  /** One {@link CT_STATE} bit. */
  state: number = CT_STATE.INVALID;
  dir = IP_CT_DIR_ORIGINAL;

  get status(): number {
    return this.entry ? this.entry.status : 0;
  }
  get direction(): 'ORIGINAL' | 'REPLY' {
    return this.dir === IP_CT_DIR_ORIGINAL ? 'ORIGINAL' : 'REPLY';
  }
  get mark(): number {
    return this.entry ? this.entry.mark : 0;
  }
  get zone(): number {
    return this.entry ? this.entry.zone : 0;
  }
  get proto(): number {
    return this.entry ? this.entry.proto : 0;
  }
  get origSrc(): readonly number[] {
    return this.entry ? this.entry.orig.src : EMPTY;
  }
  get origDst(): readonly number[] {
    return this.entry ? this.entry.orig.dst : EMPTY;
  }
  get origSport(): number {
    return this.entry ? this.entry.orig.sport : 0;
  }
  get origDport(): number {
    return this.entry ? this.entry.orig.dport : 0;
  }
  get replySrc(): readonly number[] {
    return this.entry ? this.entry.reply.src : EMPTY;
  }
  get replyDst(): readonly number[] {
    return this.entry ? this.entry.reply.dst : EMPTY;
  }
  get replySport(): number {
    return this.entry ? this.entry.reply.sport : 0;
  }
  get replyDport(): number {
    return this.entry ? this.entry.reply.dport : 0;
  }
}
