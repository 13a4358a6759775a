/**
 * The conntrack table: entries with an original and a reply tuple, NAT bindings per manip type,
 * status bits, mark and zone (`struct nf_conn`, `nf_conntrack_core.c`, `nf_nat_core.c`).
 *
 * Entries are integer handles into columns of typed arrays, and the tuple hash
 * (`nf_conntrack_hash`) is an open-addressing table over those columns, so tracking a connection
 * allocates nothing on the JavaScript heap and costs about a hundred bytes (see bench/).
 *
 * @module
 */
import { CT_STATE, CT_STATUS } from '../../model/packet.js';
import type { ConntrackView } from '../../model/packet.js';
import type { Family } from '../../model/types.js';
import { formatEndpoint } from '../../model/address.js';
import { DEFAULT_CONNTRACK_MAX } from '../../model/limits.js';

/** `enum ip_conntrack_dir`. */
export const IP_CT_DIR_ORIGINAL = 0;
export const IP_CT_DIR_REPLY = 1;

/** `enum nf_nat_manip_type`: bits kept in {@link ConntrackTable.natDone}. */
export const NF_NAT_MANIP_SRC = 1;
export const NF_NAT_MANIP_DST = 2;

/** One direction of a connection: `src:sport → dst:dport`. */
export interface Tuple {
  src: number[];
  dst: number[];
  sport: number;
  dport: number;
}

/** What {@link ConntrackTable.captureEntry} keeps of an entry. @internal */
export interface EntryTemplate {
  /** The reply tuple's words ({@link TUPLE_WORDS}). */
  readonly reply: readonly number[];
  readonly zone: number;
  readonly status: number;
  readonly natDone: number;
  readonly mark: number;
  /** The entry's conntrack labels (bit n: label n), 0n for none. */
  readonly labels: bigint;
  readonly tcpState: number;
  readonly tcpLast: number;
  /** The timer, and the timer when the entry was confirmed, relative to the capture's clock. */
  readonly expires: number;
  readonly confirmExpires: number;
}

/** Words per tuple in {@link ConntrackTable.tuples}: src[4], dst[4], sport, dport. */
export const TUPLE_WORDS = 10;
/** Offsets within a tuple. */
export const T_SRC = 0;
export const T_DST = 4;
export const T_SPORT = 8;
export const T_DPORT = 9;
/** Words per entry: the original tuple, then the reply tuple (`tuplehash[IP_CT_DIR_MAX]`). */
const ENTRY_WORDS = 2 * TUPLE_WORDS;

/**
 * `enum tcp_conntrack`: the TCP state of an entry (nf_conntrack_proto_tcp.c). Only the states the
 * engine's packets reach are used; the table below is the kernel's for them.
 */
export const TCP_CT = { NONE: 0, SYN_SENT: 1, SYN_RECV: 2, ESTABLISHED: 3, FIN_WAIT: 4, CLOSE_WAIT: 5, LAST_ACK: 6, TIME_WAIT: 7, CLOSE: 8, SYN_SENT2: 9 } as const;
/** `tcp_conntracks` marks for an invalid or ignored transition: the state is kept. */
const S_IV = 10;
const S_IG = 11;

/**
 * `tcp_conntracks[dir][index][state]` for the indices SYN, SYN-ACK, FIN, ACK, RST (rows) and the
 * states NONE … SYN_SENT2 (columns), as in nf_conntrack_proto_tcp.c.
 */
const TCP_CONNTRACKS: readonly (readonly (readonly number[])[])[] = [
  [
    /* syn    */ [1, 1, S_IG, S_IG, S_IG, S_IG, S_IG, 1, 1, 9],
    /* synack */ [S_IV, S_IV, 2, S_IV, S_IV, S_IV, S_IV, S_IV, S_IV, 2],
    /* fin    */ [S_IV, S_IV, 4, 4, 6, 6, 6, 7, 8, S_IV],
    /* ack    */ [3, S_IV, 3, 3, 5, 5, 7, 7, 8, S_IV],
    /* rst    */ [S_IV, 8, 8, 8, 8, 8, 8, 8, 8, 8],
  ],
  [
    /* syn    */ [S_IV, 9, S_IV, S_IV, S_IV, S_IV, S_IV, 1, S_IV, 9],
    /* synack */ [S_IV, 2, S_IG, S_IG, S_IG, S_IG, S_IG, S_IG, S_IG, 2],
    /* fin    */ [S_IV, S_IV, 4, 4, 6, 6, 6, 7, 8, S_IV],
    /* ack    */ [S_IV, S_IG, 2, 3, 5, 5, 7, 7, 8, S_IG],
    /* rst    */ [S_IV, 8, 8, 8, 8, 8, 8, 8, 8, 8],
  ],
];

/** `tcp_timeouts` (seconds), by {@link TCP_CT} state: the kernel's defaults. */
export const TCP_TIMEOUTS: readonly number[] = [0, 120, 60, 432000, 120, 60, 30, 120, 10, 120];
/** `nf_conntrack_tcp_timeout_unacknowledged`: the cap while no reply has been seen. */
const TCP_TIMEOUT_UNACK = 300;
/** `nf_conntrack_udp_timeout` / `_stream`: unreplied and replied UDP. */
export const UDP_TIMEOUT = 30;
export const UDP_TIMEOUT_STREAM = 120;
/** `nf_conntrack_icmp_timeout`, `nf_conntrack_generic_timeout`. */
const ICMP_TIMEOUT = 30;
const GENERIC_TIMEOUT = 600;

/** `get_conntrack_index`: the row of {@link TCP_CONNTRACKS} for a packet's flags (-1: none). */
function tcpIndex(flags: number): number {
  if (flags & 0x04) return 4; // RST
  if (flags & 0x02) return flags & 0x10 ? 1 : 0; // SYN, SYN-ACK
  if (flags & 0x01) return 2; // FIN
  if (flags & 0x10) return 3; // ACK
  return -1;
}

/**
 * The TCP state a packet moves an entry to (`tcp_packet`'s table step), or the state it had when
 * the kernel's table calls the packet invalid or ignored.
 */
export function tcpNextState(state: number, dir: number, flags: number): number {
  const i = tcpIndex(flags);
  if (i < 0) return state;
  const next = TCP_CONNTRACKS[dir]![i]![state]!;
  return next >= S_IV ? state : next;
}

/** What {@link ConntrackTable.tcpStep} made of a packet. */
export const TCP_STEP = { VALID: 0, IGNORED: 1, INVALID: 2, REOPEN: 3 } as const;
/** `tcpLast` with no packet seen yet, and its close-begun bit. */
const TCP_LAST_NONE = 7;
const TCP_LAST_CLOSE_INIT = 16;

/** Where an entry's slot stands. */
const FREE = 0;
const UNCONFIRMED = 1;
const CONFIRMED = 2;

/** Whether two address word arrays are equal. */
export function sameAddr(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** murmur3's finaliser: spreads every input bit over the hash. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** `hash_conntrack_raw`: a 32-bit hash of a tuple with its zone and protocol. */
function hashTuple(zone: number, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number): number {
  let h = Math.imul(zone ^ (proto << 16), 0x9e3779b1) ^ ((sport << 16) | dport);
  for (let i = 0; i < src.length; i++) h = Math.imul(h ^ src[i]!, 0x01000193) + 0x7feb352d;
  for (let i = 0; i < dst.length; i++) h = Math.imul(h ^ dst[i]!, 0x01000193) + 0x68e31da4;
  return fmix(h);
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
  /** TCP: the entry's state as `conntrack -L` names it (`ESTABLISHED`, `TIME_WAIT`…); else null. */
  readonly state: string | null;
  /** When the entry's timer fires, in seconds on the namespace's clock. */
  readonly expires: number;
}

export const TCP_STATE_NAMES = ['NONE', 'SYN_SENT', 'SYN_RECV', 'ESTABLISHED', 'FIN_WAIT', 'CLOSE_WAIT', 'LAST_ACK', 'TIME_WAIT', 'CLOSE', 'SYN_SENT2'] as const;

const INITIAL_CAPACITY = 4;

/**
 * The next length of a column that is full: half as long again. Every entry slot costs its bytes
 * in each column, so the unused tail is at most a third of a column (a half with doubling), under
 * a fifth on average over table sizes (over a quarter with doubling); the copies still cost a
 * constant per entry.
 */
function nextCapacity(n: number): number {
  return n < INITIAL_CAPACITY ? INITIAL_CAPACITY : n + (n >> 1);
}
/** The hash of a table that has never confirmed anything: one empty slot, never written. */
const EMPTY_SLOTS: Int32Array = new Int32Array(1);
/** The columns of a table that has never created an entry (never written: grow() replaces them). */
const NO_U8: Uint8Array = new Uint8Array(0);
const NO_U16: Uint16Array = new Uint16Array(0);
const NO_U32: Uint32Array = new Uint32Array(0);
const NO_I32: Int32Array = new Int32Array(0);
const NO_F64: Float64Array = new Float64Array(0);

/**
 * The connections of a namespace (`nf_conntrack_hash` and the `nf_conn` objects). An entry is an
 * integer; its fields live in the public columns below, indexed by it. A lookup answers a
 * reference: `entry * 2 + direction`, or -1.
 */
export class ConntrackTable {
  /** Entry slots allocated (the columns' length). */
  private capacity = 0;
  /** `tuplehash[dir].tuple` of every entry: {@link ENTRY_WORDS} words each. */
  tuples = NO_U32;
  family = NO_U8;
  proto = NO_U8;
  zone = NO_U16;
  /** {@link CT_STATUS} bits. */
  status = NO_U8;
  /** Which manip types have been initialised (`IPS_SRC_NAT_DONE`, `IPS_DST_NAT_DONE`). */
  natDone = NO_U8;
  /** ctmark (CONNMARK). */
  mark = NO_U32;
  /** Conntrack labels (`ct label set`, a queue verdict's label) of the entries that have any, bit n for label n. */
  labels = new Map<number, bigint>();
  id = NO_U32;
  /** When the entry was confirmed (orders {@link entries}). */
  private confirmedAt = NO_U32;
  /** {@link TCP_CT} state of a TCP entry. */
  tcpState = NO_U8;
  /**
   * TCP history `tcp_packet` keeps: the last valid or ignored packet's table row (bits 0–2, 7
   * for none) and direction (bit 3), and whether a FIN began a close (bit 4,
   * `IP_CT_TCP_FLAG_CLOSE_INIT` of either side).
   */
  private tcpLast = NO_U8;
  /** When the entry's timer fires, on the namespace's clock (seconds). */
  expires = NO_F64;
  /** Timers of confirmed entries: a binary min-heap on (time, entry, id), checked lazily. */
  private heapTime = NO_F64;
  private heapEntry = NO_I32;
  private heapId = NO_U32;
  private heapSize = 0;
  private state = NO_U8;
  private free = NO_I32;
  private freeTop = 0;
  /** Slots allocated so far (slots below are in use or on the free list). */
  private used = 0;
  /** Open-addressing hash of confirmed tuples: reference + 1, 0 for an empty slot. */
  private slots = EMPTY_SLOTS;
  private slotMask = EMPTY_SLOTS.length - 1;
  private keys = 0;
  private confirmedCount = 0;
  private confirmSeq = 0;
  private nextId = 1;
  /**
   * `nf_conntrack_max`: entries (confirmed or not) the table holds; `init_conntrack` of one more
   * fails and the packet is dropped ("nf_conntrack: table full, dropping packet").
   */
  max: number = DEFAULT_CONNTRACK_MAX;

  /** Entries allocated, confirmed or not (`nf_conntrack_count`). */
  get count(): number {
    return this.used - this.freeTop;
  }

  // The columns start empty (a namespace whose rules need no conntrack never fills them) and
  // grow by half as entries are created (see {@link nextCapacity}).
  private grow(capacity: number): void {
    // The first columns copy nothing: an empty copy would still give each small column (kept in
    // V8's heap) an ArrayBuffer object of its own.
    const copy = this.capacity !== 0;
    const u8 = (a: Uint8Array): Uint8Array => {
      const b = new Uint8Array(capacity);
      if (copy) b.set(a);
      return b;
    };
    const u32 = (a: Uint32Array, k = 1): Uint32Array => {
      const b = new Uint32Array(capacity * k);
      if (copy) b.set(a);
      return b;
    };
    this.tuples = u32(this.tuples, ENTRY_WORDS);
    this.family = u8(this.family);
    this.proto = u8(this.proto);
    const zone = new Uint16Array(capacity);
    if (copy) zone.set(this.zone);
    this.zone = zone;
    this.status = u8(this.status);
    this.natDone = u8(this.natDone);
    this.mark = u32(this.mark);
    this.id = u32(this.id);
    this.confirmedAt = u32(this.confirmedAt);
    this.state = u8(this.state);
    this.tcpState = u8(this.tcpState);
    this.tcpLast = u8(this.tcpLast);
    const expires = new Float64Array(capacity);
    if (copy) expires.set(this.expires);
    this.expires = expires;
    const free = new Int32Array(capacity);
    if (copy) free.set(this.free);
    this.free = free;
    this.capacity = capacity;
  }

  private rehash(size: number): void {
    const old = this.slots;
    this.slots = new Int32Array(size);
    this.slotMask = size - 1;
    this.keys = 0;
    for (let i = 0; i < old.length; i++) {
      const v = old[i]!;
      if (v !== 0) this.insertRef(v - 1);
    }
  }

  // ---- entries -------------------------------------------------------------------------------

  /** A new, unconfirmed entry (`init_conntrack`). It joins the hash at {@link confirm}. */
  create(family: Family, proto: number, zone: number, src: readonly number[], sport: number, dst: readonly number[], dport: number): number {
    let e: number;
    if (this.freeTop > 0) e = this.free[--this.freeTop]!;
    else {
      if (this.used === this.capacity) this.grow(nextCapacity(this.capacity));
      e = this.used++;
    }
    const t = this.tuples;
    const o = e * ENTRY_WORDS;
    const r = o + TUPLE_WORDS;
    for (let i = 0; i < 4; i++) {
      const s = i < src.length ? src[i]! : 0;
      const d = i < dst.length ? dst[i]! : 0;
      t[o + T_SRC + i] = s;
      t[o + T_DST + i] = d;
      // nf_ct_invert_tuple
      t[r + T_SRC + i] = d;
      t[r + T_DST + i] = s;
    }
    t[o + T_SPORT] = sport;
    t[o + T_DPORT] = dport;
    t[r + T_SPORT] = dport;
    t[r + T_DPORT] = sport;
    this.family[e] = family;
    this.proto[e] = proto;
    this.zone[e] = zone;
    this.status[e] = 0;
    this.natDone[e] = 0;
    this.mark[e] = 0;
    if (this.labels.size > 0) this.labels.delete(e);
    this.id[e] = this.nextId++;
    this.state[e] = UNCONFIRMED;
    this.tcpState[e] = TCP_CT.NONE;
    this.tcpLast[e] = TCP_LAST_NONE;
    this.expires[e] = 0;
    return e;
  }

  /** Gives back an entry that was never confirmed (the kernel frees it with its skb). */
  release(e: number): void {
    if (this.state[e] !== UNCONFIRMED) return;
    this.state[e] = FREE;
    this.free[this.freeTop++] = e;
  }

  /** Whether the entry is in the hash. */
  isConfirmed(e: number): boolean {
    return this.state[e] === CONFIRMED;
  }

  /** The id the next {@link create} gives. */
  get nextEntryId(): number {
    return this.nextId;
  }

  /** The timer of the entry last confirmed, when it was confirmed (its first timer push). */
  lastConfirmExpires = 0;

  /**
   * A confirmed entry's fields other than its original tuple, with its timers relative to `now`:
   * what {@link restoreConfirmed} writes into another entry (the outcome cache). @internal
   */
  captureEntry(e: number, now: number, confirmExpires: number): EntryTemplate {
    const t = this.tuples;
    const r = e * ENTRY_WORDS + TUPLE_WORDS;
    return {
      reply: [t[r]!, t[r + 1]!, t[r + 2]!, t[r + 3]!, t[r + 4]!, t[r + 5]!, t[r + 6]!, t[r + 7]!, t[r + 8]!, t[r + 9]!],
      zone: this.zone[e]!,
      status: this.status[e]!,
      natDone: this.natDone[e]!,
      mark: this.mark[e]!,
      labels: this.labels.get(e) ?? 0n,
      tcpState: this.tcpState[e]!,
      tcpLast: this.tcpLast[e]!,
      expires: this.expires[e]! - now,
      confirmExpires: confirmExpires - now,
    };
  }

  /**
   * Gives a new, unconfirmed entry the fields of `t` (its reply tuple's source from `t`, its
   * destination the entry's original source), and confirms it as {@link confirm} did when `t` was
   * captured: the timer first armed at `t.confirmExpires`, then moved to `t.expires`. @internal
   */
  restoreConfirmed(e: number, t: EntryTemplate, now: number): void {
    const tu = this.tuples;
    const o = e * ENTRY_WORDS;
    const r = o + TUPLE_WORDS;
    for (let i = 0; i < 4; i++) {
      tu[r + T_SRC + i] = t.reply[T_SRC + i]!;
      tu[r + T_DST + i] = tu[o + T_SRC + i]!;
    }
    tu[r + T_SPORT] = t.reply[T_SPORT]!;
    tu[r + T_DPORT] = tu[o + T_SPORT]!;
    this.status[e] = t.status & ~CT_STATUS.CONFIRMED;
    this.natDone[e] = t.natDone;
    this.mark[e] = t.mark;
    if (t.labels !== 0n) this.labels.set(e, t.labels);
    else if (this.labels.size > 0) this.labels.delete(e);
    this.tcpState[e] = t.tcpState;
    this.tcpLast[e] = t.tcpLast;
    this.expires[e] = now + t.confirmExpires;
    this.confirm(e);
    this.status[e] = t.status;
    this.expires[e] = now + t.expires;
  }

  /** Word offset of a direction's tuple in {@link tuples}. */
  tupleAt(e: number, dir: number): number {
    return e * ENTRY_WORDS + dir * TUPLE_WORDS;
  }

  /** Copies a tuple's address (`T_SRC` or `T_DST`) into `out` (1 or 4 words, by family). */
  readAddr(e: number, dir: number, which: number, out: number[]): number[] {
    const base = e * ENTRY_WORDS + dir * TUPLE_WORDS + which;
    const n = this.family[e] === 4 ? 1 : 4;
    for (let i = 0; i < n; i++) out[i] = this.tuples[base + i]!;
    if (out.length !== n) out.length = n;
    return out;
  }

  /** A tuple's port (`T_SPORT` or `T_DPORT`). */
  port(e: number, dir: number, which: number): number {
    return this.tuples[e * ENTRY_WORDS + dir * TUPLE_WORDS + which]!;
  }

  /** Whether a tuple's address equals `a`. */
  addrIs(e: number, dir: number, which: number, a: readonly number[]): boolean {
    const base = e * ENTRY_WORDS + dir * TUPLE_WORDS + which;
    for (let i = 0; i < a.length; i++) if (this.tuples[base + i] !== a[i]) return false;
    return true;
  }

  /** Whether an address of one tuple equals an address of another (same entry). */
  sameAddrs(e: number, dirA: number, whichA: number, dirB: number, whichB: number): boolean {
    const a = e * ENTRY_WORDS + dirA * TUPLE_WORDS + whichA;
    const b = e * ENTRY_WORDS + dirB * TUPLE_WORDS + whichB;
    const n = this.family[e] === 4 ? 1 : 4;
    for (let i = 0; i < n; i++) if (this.tuples[a + i] !== this.tuples[b + i]) return false;
    return true;
  }

  /**
   * `nf_conntrack_alter_reply`: sets the reply tuple to the inverse of `src:sport → dst:dport`
   * (the tuple as the original direction would see it after NAT).
   */
  setReplyInverse(e: number, src: readonly number[], sport: number, dst: readonly number[], dport: number): void {
    const confirmed = this.state[e] === CONFIRMED;
    if (confirmed) this.deleteKey(e * 2 + IP_CT_DIR_REPLY);
    const t = this.tuples;
    const r = e * ENTRY_WORDS + TUPLE_WORDS;
    for (let i = 0; i < 4; i++) {
      t[r + T_SRC + i] = i < dst.length ? dst[i]! : 0;
      t[r + T_DST + i] = i < src.length ? src[i]! : 0;
    }
    t[r + T_SPORT] = dport;
    t[r + T_DPORT] = sport;
    if (confirmed) this.insertRef(e * 2 + IP_CT_DIR_REPLY);
  }

  // ---- the hash ------------------------------------------------------------------------------

  private hashRef(ref: number): number {
    const e = ref >> 1;
    const base = e * ENTRY_WORDS + (ref & 1) * TUPLE_WORDS;
    const t = this.tuples;
    const n = this.family[e] === 4 ? 1 : 4;
    let h = Math.imul(this.zone[e]! ^ (this.proto[e]! << 16), 0x9e3779b1) ^ ((t[base + T_SPORT]! << 16) | t[base + T_DPORT]!);
    for (let i = 0; i < n; i++) h = Math.imul(h ^ t[base + T_SRC + i]!, 0x01000193) + 0x7feb352d;
    for (let i = 0; i < n; i++) h = Math.imul(h ^ t[base + T_DST + i]!, 0x01000193) + 0x68e31da4;
    return fmix(h);
  }

  private sameKey(a: number, b: number): boolean {
    const ea = a >> 1;
    const eb = b >> 1;
    if (this.family[ea] !== this.family[eb] || this.proto[ea] !== this.proto[eb] || this.zone[ea] !== this.zone[eb]) return false;
    const t = this.tuples;
    const ba = ea * ENTRY_WORDS + (a & 1) * TUPLE_WORDS;
    const bb = eb * ENTRY_WORDS + (b & 1) * TUPLE_WORDS;
    for (let i = 0; i < TUPLE_WORDS; i++) if (t[ba + i] !== t[bb + i]) return false;
    return true;
  }

  /** Inserts a reference, replacing one with the same tuple (a map's `set`). */
  private insertRef(ref: number): void {
    if ((this.keys + 1) * 2 > this.slots.length) this.rehash(this.slots === EMPTY_SLOTS ? INITIAL_CAPACITY * 4 : this.slots.length * 2);
    const slots = this.slots;
    let i = this.hashRef(ref) & this.slotMask;
    for (;;) {
      const v = slots[i]!;
      if (v === 0) {
        slots[i] = ref + 1;
        this.keys++;
        return;
      }
      if (this.sameKey(v - 1, ref)) {
        slots[i] = ref + 1;
        return;
      }
      i = (i + 1) & this.slotMask;
    }
  }

  /** Deletes whatever reference holds this reference's tuple (a map's `delete`). */
  private deleteKey(ref: number): void {
    const slots = this.slots;
    const mask = this.slotMask;
    let i = this.hashRef(ref) & mask;
    for (;;) {
      const v = slots[i]!;
      if (v === 0) return;
      if (this.sameKey(v - 1, ref)) break;
      i = (i + 1) & mask;
    }
    // Backward-shift deletion keeps linear probing free of tombstones.
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const v = slots[j]!;
      if (v === 0) break;
      const home = this.hashRef(v - 1) & mask;
      // Move v into the hole unless its home lies cyclically in (hole, j].
      if (hole <= j ? home <= hole || home > j : home <= hole && home > j) {
        slots[hole] = v;
        hole = j;
      }
    }
    slots[hole] = 0;
    this.keys--;
  }

  /**
   * `nf_conntrack_find_get`: the entry whose original or reply tuple is this one, as a reference
   * (`entry * 2 + direction`), or -1.
   */
  lookup(zone: number, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number): number {
    const slots = this.slots;
    const mask = this.slotMask;
    const n = src.length;
    const family = n === 1 ? 4 : 6;
    const t = this.tuples;
    let i = hashTuple(zone, proto, src, sport, dst, dport) & mask;
    for (;;) {
      const v = slots[i]!;
      if (v === 0) return -1;
      const ref = v - 1;
      const e = ref >> 1;
      const b = e * ENTRY_WORDS + (ref & 1) * TUPLE_WORDS;
      if (t[b + T_SPORT] === sport && t[b + T_DPORT] === dport && this.proto[e] === proto && this.zone[e] === zone && this.family[e] === family) {
        let same = true;
        for (let k = 0; k < n; k++) {
          if (t[b + T_SRC + k] !== src[k] || t[b + T_DST + k] !== dst[k]) {
            same = false;
            break;
          }
        }
        if (same) return ref;
      }
      i = (i + 1) & mask;
    }
  }

  /** `__nf_conntrack_confirm`: inserts both tuples. */
  confirm(e: number): void {
    if (this.status[e]! & CT_STATUS.CONFIRMED) return;
    this.lastConfirmExpires = this.expires[e]!;
    this.status[e] = this.status[e]! | CT_STATUS.CONFIRMED;
    this.state[e] = CONFIRMED;
    this.confirmedAt[e] = this.confirmSeq++;
    this.confirmedCount++;
    this.insertRef(e * 2 + IP_CT_DIR_ORIGINAL);
    this.insertRef(e * 2 + IP_CT_DIR_REPLY);
    this.heapPush(this.expires[e]!, e, this.id[e]!);
  }

  // ---- timers --------------------------------------------------------------------------------

  /**
   * `nf_conntrack_tcp_packet`'s state step for a packet of an existing entry, by the kernel's
   * table: {@link TCP_STEP.VALID} moves the state on and re-arms the timer (as {@link refresh});
   * {@link TCP_STEP.IGNORED} lets the packet through with the entry, state and timer untouched (a
   * SYN in ESTABLISHED, a SYN-ACK the entry does not expect); {@link TCP_STEP.INVALID} takes the
   * entry from the packet (an ACK while the entry is still SYN_SENT); {@link TCP_STEP.REOPEN}
   * asks for the entry to be killed and the packet looked up again (a SYN after a close or an
   * abort by the same side).
   */
  tcpStep(e: number, dir: number, flags: number, now: number): number {
    const i = tcpIndex(flags);
    if (i < 0) return TCP_STEP.INVALID;
    const old = this.tcpState[e]!;
    let next = TCP_CONNTRACKS[dir]![i]![old]!;
    const last = this.tcpLast[e]!;
    const lastIndex = last & 7;
    const lastDir = (last >> 3) & 1;
    if (next === TCP_CT.SYN_SENT && old >= TCP_CT.TIME_WAIT) {
      if (last & TCP_LAST_CLOSE_INIT || (lastDir === dir && lastIndex === 4)) return TCP_STEP.REOPEN;
      next = S_IG;
    }
    if (next === S_IG) {
      // b) a SYN-ACK answering a SYN the entry ignored: the ends are in step, the entry catches up.
      if (i === 1 && lastIndex === 0 && lastDir !== dir) next = TCP_CT.SYN_RECV;
      else {
        this.tcpLast[e] = (last & TCP_LAST_CLOSE_INIT) | (dir << 3) | i;
        return TCP_STEP.IGNORED;
      }
    }
    if (next === S_IV) return TCP_STEP.INVALID;
    let l = (last & TCP_LAST_CLOSE_INIT) | (dir << 3) | i;
    if (old !== next && next === TCP_CT.FIN_WAIT) l |= TCP_LAST_CLOSE_INIT;
    this.tcpLast[e] = l;
    this.tcpState[e] = next;
    let timeout = TCP_TIMEOUTS[next]!;
    if (!(this.status[e]! & CT_STATUS.SEEN_REPLY) && timeout > TCP_TIMEOUT_UNACK) timeout = TCP_TIMEOUT_UNACK;
    this.expires[e] = now + timeout;
    return TCP_STEP.VALID;
  }

  /**
   * `nf_conntrack_*_packet`: moves the entry's state on for a packet of direction `dir` and
   * (re)arms its timer from `now` with the kernel's default timeout for the new state.
   */
  refresh(e: number, dir: number, flags: number, now: number): void {
    const proto = this.proto[e]!;
    let timeout: number;
    if (proto === 6) {
      const old = this.tcpState[e]!;
      const next = tcpNextState(old, dir, flags);
      this.tcpState[e] = next;
      const i = tcpIndex(flags);
      if (i >= 0) this.tcpLast[e] = (this.tcpLast[e]! & TCP_LAST_CLOSE_INIT) | (dir << 3) | i | (old !== next && next === TCP_CT.FIN_WAIT ? TCP_LAST_CLOSE_INIT : 0);
      timeout = TCP_TIMEOUTS[next]!;
      if (!(this.status[e]! & CT_STATUS.SEEN_REPLY) && timeout > TCP_TIMEOUT_UNACK) timeout = TCP_TIMEOUT_UNACK;
    } else if (proto === 17 || proto === 136) {
      timeout = this.status[e]! & CT_STATUS.SEEN_REPLY ? UDP_TIMEOUT_STREAM : UDP_TIMEOUT;
    } else if (proto === 1 || proto === 58) timeout = ICMP_TIMEOUT;
    else timeout = GENERIC_TIMEOUT;
    this.expires[e] = now + timeout;
  }

  private heapPush(time: number, e: number, id: number): void {
    if (this.heapSize === this.heapTime.length) {
      const n = nextCapacity(this.heapSize);
      const t = new Float64Array(n);
      const en = new Int32Array(n);
      const ids = new Uint32Array(n);
      if (this.heapSize !== 0) {
        t.set(this.heapTime);
        en.set(this.heapEntry);
        ids.set(this.heapId);
      }
      this.heapTime = t;
      this.heapEntry = en;
      this.heapId = ids;
    }
    const ht = this.heapTime;
    const he = this.heapEntry;
    const hi = this.heapId;
    let i = this.heapSize++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (ht[parent]! <= time) break;
      ht[i] = ht[parent]!;
      he[i] = he[parent]!;
      hi[i] = hi[parent]!;
      i = parent;
    }
    ht[i] = time;
    he[i] = e;
    hi[i] = id;
  }

  private heapPop(): void {
    const ht = this.heapTime;
    const he = this.heapEntry;
    const hi = this.heapId;
    const n = --this.heapSize;
    if (n === 0) return;
    const time = ht[n]!;
    const e = he[n]!;
    const id = hi[n]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && ht[c + 1]! < ht[c]!) c++;
      if (ht[c]! >= time) break;
      ht[i] = ht[c]!;
      he[i] = he[c]!;
      hi[i] = hi[c]!;
      i = c;
    }
    ht[i] = time;
    he[i] = e;
    hi[i] = id;
  }

  /**
   * The timers that fired by `now` (`nf_ct_gc_expired`): those entries leave the table. Returns
   * how many did. Each timer costs O(log n) once, and once more per re-arm that outlived it.
   */
  expire(now: number): number {
    let n = 0;
    while (this.heapSize > 0 && this.heapTime[0]! <= now) {
      const e = this.heapEntry[0]!;
      const id = this.heapId[0]!;
      this.heapPop();
      if (this.state[e] !== CONFIRMED || this.id[e] !== id) continue;
      const at = this.expires[e]!;
      if (at > now) this.heapPush(at, e, id);
      else {
        this.remove(e);
        n++;
      }
    }
    return n;
  }

  /** Whether a tuple of the (unconfirmed) entry is in the hash already (`__nf_conntrack_confirm`'s check). */
  clashes(e: number): boolean {
    const t = this.tuples;
    const n = this.family[e] === 4 ? 1 : 4;
    for (let dir = 0; dir < 2; dir++) {
      const b = e * ENTRY_WORDS + dir * TUPLE_WORDS;
      const src = n === 1 ? [t[b + T_SRC]!] : [t[b + T_SRC]!, t[b + T_SRC + 1]!, t[b + T_SRC + 2]!, t[b + T_SRC + 3]!];
      const dst = n === 1 ? [t[b + T_DST]!] : [t[b + T_DST]!, t[b + T_DST + 1]!, t[b + T_DST + 2]!, t[b + T_DST + 3]!];
      const ref = this.lookup(this.zone[e]!, this.proto[e]!, src, t[b + T_SPORT]!, dst, t[b + T_DPORT]!);
      if (ref >= 0 && ref >> 1 !== e) return true;
    }
    return false;
  }

  /** The reply tuple, printed. */
  describeReply(e: number): string {
    return this.formatTuple(e, IP_CT_DIR_REPLY, this.family[e] as Family);
  }

  /** `nf_nat_used_tuple`: whether another connection already answers to this reply tuple. */
  replyTupleTaken(e: number, src: readonly number[], sport: number, dst: readonly number[], dport: number): boolean {
    const ref = this.lookup(this.zone[e]!, this.proto[e]!, src, sport, dst, dport);
    return ref >= 0 && ref >> 1 !== e;
  }

  /** Removes an entry (`nf_ct_kill`). */
  remove(e: number): void {
    if (this.state[e] !== CONFIRMED) return;
    this.deleteKey(e * 2 + IP_CT_DIR_ORIGINAL);
    this.deleteKey(e * 2 + IP_CT_DIR_REPLY);
    this.state[e] = FREE;
    this.free[this.freeTop++] = e;
    this.confirmedCount--;
  }

  /** Empties the table (`conntrack -F`). Entries not yet confirmed stay valid. */
  flush(): void {
    for (let e = 0; e < this.used; e++) {
      if (this.state[e] === CONFIRMED) {
        this.state[e] = FREE;
        this.free[this.freeTop++] = e;
      }
    }
    if (this.slots !== EMPTY_SLOTS) this.slots.fill(0);
    this.keys = 0;
    this.confirmedCount = 0;
    this.heapSize = 0;
  }

  /** Number of confirmed entries. */
  get size(): number {
    return this.confirmedCount;
  }

  /** The confirmed entries, oldest first. */
  entries(): number[] {
    const out: number[] = [];
    for (let e = 0; e < this.used; e++) if (this.state[e] === CONFIRMED) out.push(e);
    return out.sort((a, b) => this.confirmedAt[a]! - this.confirmedAt[b]!);
  }

  /** Compact, printable entries. */
  snapshot(): ConntrackSnapshot[] {
    return this.entries().map((e) => {
      const f = this.family[e] as Family;
      return {
        id: this.id[e]!,
        proto: this.proto[e]!,
        zone: this.zone[e]!,
        original: this.formatTuple(e, IP_CT_DIR_ORIGINAL, f),
        reply: this.formatTuple(e, IP_CT_DIR_REPLY, f),
        status: statusNames(this.status[e]!),
        mark: this.mark[e]!,
        state: this.proto[e] === 6 ? TCP_STATE_NAMES[this.tcpState[e]!]! : null,
        expires: this.expires[e]!,
      };
    });
  }

  private formatTuple(e: number, dir: number, f: Family): string {
    const src = this.readAddr(e, dir, T_SRC, []);
    const dst = this.readAddr(e, dir, T_DST, []);
    return `${formatEndpoint(src, this.port(e, dir, T_SPORT), f)} > ${formatEndpoint(dst, this.port(e, dir, T_DPORT), f)}`;
  }

  /** A copy with the same confirmed entries (entries not yet confirmed are not copied). */
  clone(): ConntrackTable {
    const t = new ConntrackTable();
    t.max = this.max;
    if (this.capacity === 0) return t;
    t.grow(this.capacity);
    t.tuples.set(this.tuples);
    t.family.set(this.family);
    t.proto.set(this.proto);
    t.zone.set(this.zone);
    t.status.set(this.status);
    t.natDone.set(this.natDone);
    t.mark.set(this.mark);
    t.labels = new Map(this.labels);
    t.id.set(this.id);
    t.confirmedAt.set(this.confirmedAt);
    t.tcpState.set(this.tcpState);
    t.tcpLast.set(this.tcpLast);
    t.expires.set(this.expires);
    t.heapTime = this.heapTime.slice();
    t.heapEntry = this.heapEntry.slice();
    t.heapId = this.heapId.slice();
    t.heapSize = this.heapSize;
    t.used = this.used;
    t.nextId = this.nextId;
    t.confirmSeq = this.confirmSeq;
    t.confirmedCount = this.confirmedCount;
    for (let e = 0; e < this.used; e++) {
      if (this.state[e] === CONFIRMED) t.state[e] = CONFIRMED;
      else t.free[t.freeTop++] = e;
    }
    t.slots = this.slots === EMPTY_SLOTS ? EMPTY_SLOTS : this.slots.slice();
    t.slotMask = this.slotMask;
    t.keys = this.keys;
    return t;
  }
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
  table: ConntrackTable | null = null;
  /** The entry, or -1. */
  entry = -1;
  /** One {@link CT_STATE} bit. */
  state: number = CT_STATE.INVALID;
  dir = IP_CT_DIR_ORIGINAL;

  get status(): number {
    return this.entry >= 0 ? this.table!.status[this.entry]! : 0;
  }
  get direction(): 'ORIGINAL' | 'REPLY' {
    return this.dir === IP_CT_DIR_ORIGINAL ? 'ORIGINAL' : 'REPLY';
  }
  get mark(): number {
    return this.entry >= 0 ? this.table!.mark[this.entry]! : 0;
  }
  /** The entry's conntrack labels, bit n for label n. */
  get labels(): bigint {
    return this.entry >= 0 ? this.table!.labels.get(this.entry) ?? 0n : 0n;
  }
  /** Sets labels on the entry (`nf_connlabels_replace` with the bits as the mask: the bits are ORed in). */
  addLabels(bits: bigint): void {
    if (this.entry < 0) return;
    const t = this.table!;
    t.labels.set(this.entry, (t.labels.get(this.entry) ?? 0n) | bits);
  }
  get zone(): number {
    return this.entry >= 0 ? this.table!.zone[this.entry]! : 0;
  }
  get proto(): number {
    return this.entry >= 0 ? this.table!.proto[this.entry]! : 0;
  }
  get origSrc(): readonly number[] {
    return this.entry >= 0 ? this.table!.readAddr(this.entry, IP_CT_DIR_ORIGINAL, T_SRC, []) : EMPTY;
  }
  get origDst(): readonly number[] {
    return this.entry >= 0 ? this.table!.readAddr(this.entry, IP_CT_DIR_ORIGINAL, T_DST, []) : EMPTY;
  }
  get origSport(): number {
    return this.entry >= 0 ? this.table!.port(this.entry, IP_CT_DIR_ORIGINAL, T_SPORT) : 0;
  }
  get origDport(): number {
    return this.entry >= 0 ? this.table!.port(this.entry, IP_CT_DIR_ORIGINAL, T_DPORT) : 0;
  }
  get replySrc(): readonly number[] {
    return this.entry >= 0 ? this.table!.readAddr(this.entry, IP_CT_DIR_REPLY, T_SRC, []) : EMPTY;
  }
  get replyDst(): readonly number[] {
    return this.entry >= 0 ? this.table!.readAddr(this.entry, IP_CT_DIR_REPLY, T_DST, []) : EMPTY;
  }
  get replySport(): number {
    return this.entry >= 0 ? this.table!.port(this.entry, IP_CT_DIR_REPLY, T_SPORT) : 0;
  }
  get replyDport(): number {
    return this.entry >= 0 ? this.table!.port(this.entry, IP_CT_DIR_REPLY, T_DPORT) : 0;
  }
}
