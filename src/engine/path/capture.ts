/**
 * Recording and replaying connections for the outcome cache ({@link NetnsOptions.outcomeCache}):
 * a probe's second connection is recorded while its packets run (its counters, conntrack entry,
 * sockets and result); the next connections of the probe are replayed from the recording with
 * their own source port, when nothing in the namespace holds their tuples. Which rule sets allow
 * it, and the shape of a recording: `outcome-cache.ts`.
 *
 * @module
 */
import type { SocketView } from '../../model/packet.js';
import type { Family } from '../../model/types.js';
import { T_DPORT, T_DST, T_SPORT, T_SRC, sameAddr } from '../state/conntrack.js';
import { formatEndpoint } from '../../model/address.js';
import { logCounters } from '../rules/iptables-evaluate.js';
import type { CounterLog } from '../rules/iptables-evaluate.js';
import type { Kernel } from './kernel.js';
import type { SocketRecord } from '../state/packet-state.js';
import type { RouteResult } from '../state/routing.js';
import { MAX_OUTCOME_TEMPLATES } from '../../model/limits.js';
import type { OutcomeTemplate, ProbeFields, SocketTemplate } from './outcome-cache.js';
import type { ConnectResult, LocalConnectSpec, NetnsOptions, RemoteConnectSpec } from './api.js';
import type { SourcePorts } from './ports.js';

/** Recordings after which the outcome cache judges whether it pays (see {@link OutcomeCache.usable}). */
const CACHE_JUDGE_AFTER = 4096;
/** Probes seen once that the outcome cache remembers (a probe seen again is recorded). */
const MAX_SEEN_PROBES = 4096;
/** Calls the outcome cache sits out when it does not pay. */
const CACHE_REST = 16 * 1024;

/** The connection being recorded for the outcome cache (see {@link OutcomeCache.begin}). */
export interface Capture extends ProbeFields {
  readonly key: string;
  readonly sport: number;
  readonly log: CounterLog;
  /** The conntrack table's next id, entries, the sockets and the TIME_WAIT list before. */
  readonly ids: number;
  readonly entries: number;
  readonly sockets: number;
  readonly timeWait: number;
}

/** The outcome cache's key of a local probe (every field its packets depend on), or null for none. */
export function localKey(spec: LocalConnectSpec, proto: number, mark: number, closing: boolean): string | null {
  const groups = spec.groups;
  if (groups !== undefined && !(Array.isArray(groups) && groups.every((g) => Number.isInteger(g)))) return null;
  // Optional fields only when given, each after '|' and a letter of its own; no value holds '|'.
  let key = `${closing ? 'L' : 'l'}${proto}|${spec.dst}|${spec.uid}`;
  if (spec.gid !== undefined) key += `|g${spec.gid}`;
  if (groups !== undefined) key += `|G${groups.join(',')}`;
  if (spec.src !== undefined) key += `|s${spec.src}`;
  if (mark !== 0) key += `|m${mark}`;
  if (spec.transparent === true) key += '|t';
  return key;
}

/** The outcome cache's key of a remote probe. */
export function remoteKey(spec: RemoteConnectSpec, proto: number, dev: string, closing: boolean): string {
  return `${closing ? 'R' : 'r'}${proto}|${spec.dst}|${spec.src}|${dev}`;
}

/** A namespace's recordings, and what it has made of them. */
export class OutcomeCache {
  /** Probe → what its last connection did (see {@link NetnsOptions.outcomeCache}); made at the first recording. */
  private outcomes: Map<string, OutcomeTemplate> | null = null;
  /** Probes connected once, without a recording yet (made at the first). */
  private seen: Set<string> | null = null;
  /** The connection being recorded for the cache, while its packets run. */
  capture: Capture | null = null;
  /** Connections the cache recorded, and replayed, since it last judged itself. */
  private recorded = 0;
  private replayed = 0;
  /** Connections left before the cache is used again, after it found its records seldom replayed. */
  private resting = 0;
  /** Connections replayed so far. */
  replays = 0;

  /** What the probe's last connection did, if it was recorded. */
  recording(key: string): OutcomeTemplate | undefined {
    return this.outcomes === null ? undefined : this.outcomes.get(key);
  }

  /**
   * Whether this untraced call may use the cache. Every {@link CACHE_JUDGE_AFTER} recordings the
   * cache judges itself: when it replayed fewer than one connection per eight recordings (probes
   * that seldom repeat, where recording costs more than replaying saves), it drops its recordings
   * and rests for {@link CACHE_REST} calls, then records again.
   */
  usable(): boolean {
    if (this.resting > 0) {
      this.resting--;
      return false;
    }
    if (this.recorded >= CACHE_JUDGE_AFTER) {
      if (this.replayed * 8 < this.recorded) {
        // The recordings were seldom replayed: they go, and the cache rests.
        this.resting = CACHE_REST;
        this.outcomes?.clear();
      }
      this.recorded = 0;
      this.replayed = 0;
      return this.resting === 0;
    }
    return true;
  }

  /**
   * Whether a probe without a recording came before: the cache records a probe's second
   * connection, so that probes seen once (every connection to another address) cost no recording.
   */
  seenBefore(key: string): boolean {
    const seen = (this.seen ??= new Set());
    if (seen.has(key)) return true;
    if (seen.size >= MAX_SEEN_PROBES) seen.clear();
    seen.add(key);
    return false;
  }

  /**
   * Starts recording a connection for the cache, when nothing in the namespace holds its tuple and
   * the conntrack table has room: the recording then shows what any connection of the probe does.
   */
  begin(kernel: Kernel, ports: SourcePorts, key: string, family: Family, proto: number, src: readonly number[], sport: number, dst: readonly number[], dport: number, route: RouteResult | null, owner: SocketView | null, mark: number, transparent: boolean, dev: string | null): void {
    const ct = kernel.conntrack;
    if (ct.count >= ct.max || ct.lookup(0, proto, src, sport, dst, dport) >= 0) return;
    const log: CounterLog = { counts: [], slots: [] };
    this.recorded++;
    this.capture = {
      key, family, proto, src, sport, dst, dport, route, owner, mark, transparent, dev, log,
      ids: ct.nextEntryId, entries: ct.count, sockets: kernel.sockets.connections, timeWait: ports.timeWait.length,
    };
    logCounters(log);
  }

  /**
   * Keeps what the recorded connection did, when it is what every connection of its probe would do
   * with another source port: one conntrack entry at most, of its own tuple, whose reply goes back
   * to that port; sockets of its own tuple only; no text that shows the port but its source.
   */
  end(c: Capture, opened: readonly SocketRecord[], r: ConnectResult, kernel: Kernel, ports: SourcePorts): void {
    const ct = kernel.conntrack;
    const sockets = kernel.sockets;
    const now = kernel.now;
    const { family, proto, src, sport, dst, dport } = c;
    const ids = ct.nextEntryId - c.ids;
    const ref = ct.lookup(0, proto, src, sport, dst, dport);
    let entry: 0 | 1 | 2 = 0;
    let kept: OutcomeTemplate['ct'] = null;
    let serverAddr = dst;
    let serverPort = dport;
    if (ids === 1 && ref >= 0) {
      const e = ref >> 1;
      if ((ref & 1) !== 0 || ct.id[e] !== c.ids || ct.count !== c.entries + 1) return;
      kept = ct.captureEntry(e, now, ct.lastConfirmExpires);
      const w = kept.reply;
      if (kept.zone !== 0 || w[T_DPORT] !== sport) return;
      for (let i = 0; i < 4; i++) if (w[T_DST + i] !== (i < src.length ? src[i] : 0)) return;
      serverAddr = family === 4 ? [w[T_SRC]!] : w.slice(T_SRC, T_SRC + 4);
      serverPort = w[T_SPORT]!;
      entry = 2;
    } else if (ids === 1) {
      if (ct.count !== c.entries) return;
      entry = 1;
    } else if (ids !== 0 || ref >= 0 || ct.count !== c.entries) return;
    // Sockets: the client's (local clients) and the server's accepted one, nothing else.
    let clientKept = false;
    let clientState = 0;
    let accepted: SocketTemplate | null = null;
    let live = 0;
    for (let i = 0; i < opened.length; i++) {
      const o = opened[i]!;
      if (sockets.find(o.family, o.proto, o.local!, o.localPort, o.remote!, o.remotePort) !== o) continue;
      live++;
      const state = o.state >= 0 ? o.state - now : o.state;
      if (i === 0 && c.route !== null) {
        clientKept = true;
        clientState = state;
      } else if (o.remotePort === sport && sameAddr(o.remote!, src) && !(o.localPort === sport && sameAddr(o.local!, src))) {
        accepted = { local: o.local!, localPort: o.localPort, owner: o.owner, transparent: o.transparent, mark: o.mark, listener: o.listener, state };
      } else return;
    }
    if (sockets.connections !== c.sockets + live) return;
    const held = sockets.find(family, proto, serverAddr, serverPort, src, sport);
    if (held !== null && !opened.includes(held)) return;
    const tw = ports.timeWait.length - c.timeWait;
    if (tw < 0 || tw > 1 || (tw === 1 && (!clientKept || ports.timeWait[ports.timeWait.length - 1] !== opened[0]))) return;
    // The result: its source is the client's endpoint (as the result prints it, but for the
    // port); nothing else may show the port.
    const endpoint = formatEndpoint(src, 0, family).slice(0, -1);
    let sourced = false;
    if (r.source !== null) {
      if (r.source !== endpoint + sport) return;
      sourced = true;
    }
    const port = String(sport);
    if (r.port === sport || r.reason.includes(port) || r.address?.includes(port) || r.originalDestination?.includes(port) || r.error?.includes(port)) return;
    const outcomes = (this.outcomes ??= new Map());
    if (outcomes.size >= MAX_OUTCOME_TEMPLATES) outcomes.clear();
    outcomes.set(c.key, {
      family, proto, src, dst, dport, route: c.route, owner: c.owner, mark: c.mark, transparent: c.transparent, dev: c.dev,
      clientKept, clientState, clientTimeWait: tw === 1, serverAddr, serverPort, accepted, entry, ct: kept,
      counts: c.log.counts, slots: c.log.slots,
      outcome: r.outcome, address: r.address, port: r.port, originalDestination: r.originalDestination, source: sourced ? endpoint : null, reason: r.reason, error: r.error, errno: r.errno,
    });
  }

  /**
   * Does again what the probe's last connection did, for a connection from `sport`; null (nothing
   * done) when the namespace now holds one of its tuples or its conntrack table is full, which
   * the connection's packets would meet.
   */
  replay(t: OutcomeTemplate, sport: number, kernel: Kernel, ports: SourcePorts): ConnectResult | null {
    const ct = kernel.conntrack;
    const sockets = kernel.sockets;
    const { family, proto, src, dst, dport } = t;
    if (ct.lookup(0, proto, src, sport, dst, dport) >= 0) return null;
    if (t.entry !== 0 && ct.count >= ct.max) return null;
    if (t.entry === 2 && ct.lookup(0, proto, t.serverAddr, t.serverPort, src, sport) >= 0) return null;
    if (sockets.find(family, proto, t.serverAddr, t.serverPort, src, sport) !== null) return null;
    this.replayed++;
    this.replays++;
    const now = kernel.now;
    if (t.clientKept) {
      const sock: SocketRecord = {
        family, proto, local: src, localPort: sport, remote: dst, remotePort: dport,
        owner: t.owner!, transparent: t.transparent, mark: t.mark, listener: null, state: t.clientState >= 0 ? now + t.clientState : t.clientState,
      };
      sockets.addConnection(sock);
      if (t.clientTimeWait) ports.timeWait.push(sock);
    }
    if (t.entry !== 0) {
      const e = ct.create(family, proto, 0, src, sport, dst, dport);
      if (t.entry === 2) ct.restoreConfirmed(e, t.ct!, now);
      else ct.release(e);
    }
    const a = t.accepted;
    if (a !== null) {
      sockets.addConnection({
        family, proto, local: a.local, localPort: a.localPort, remote: src, remotePort: sport,
        owner: a.owner, transparent: a.transparent, mark: a.mark, listener: a.listener, state: a.state >= 0 ? now + a.state : a.state,
      });
    }
    const counts = t.counts;
    const slots = t.slots;
    for (let i = 0; i < counts.length; i++) counts[i]![slots[i]!]!++;
    const r: { -readonly [K in keyof ConnectResult]: ConnectResult[K] } = {
      outcome: t.outcome,
      address: t.address,
      port: t.port,
      originalDestination: t.originalDestination,
      source: t.source === null ? null : t.source + sport,
      errno: t.errno,
      steps: [],
      reason: t.reason,
    };
    if (t.error !== undefined) r.error = t.error;
    return r;
  }
}
