/**
 * Probes: connections and packets in the shape `Netns.connect` takes (and the `connect` command
 * line spells), from a local process or from a remote host.
 *
 * @module
 */
import * as fc from 'fast-check';
import type { Family } from '../model/types.js';
import { formatAddress, parseAddress, parseCidr } from '../model/address.js';
import { addressWords } from './address.js';
import { badConstraint, checkFamily, checkKnownKeys, checkSubset } from './constraints.js';
import { port, type PortRange } from './ports.js';
import { expectArgument } from '../model/guard.js';

/**
 * A connection attempt, as `Netns.connect` takes it: from a local process (`uid`, `gid`) or
 * from a remote host (`src`), to `dst` (`10.96.0.10:80`, `[fd00::2]:8080`).
 *
 * @example
 * ```ts
 * const p: ConnectionProbe = { from: 'local', uid: 1000, gid: 1000, dst: '10.96.0.10:80', proto: 'tcp' };
 * ```
 */
export type ConnectionProbe =
  | { readonly from: 'local'; readonly uid: number; readonly gid: number; readonly dst: string; readonly proto: 'tcp' | 'udp' }
  | { readonly from: 'remote'; readonly src: string; readonly dst: string; readonly proto: 'tcp' | 'udp' };

/**
 * A single packet's probe: a {@link ConnectionProbe} with its source port.
 *
 * @example
 * ```ts
 * const p: PacketProbe = { from: 'remote', src: '10.1.0.5', sport: 40000, dst: '10.0.0.2:8080', proto: 'tcp' };
 * ```
 */
export type PacketProbe = ConnectionProbe & { readonly sport: number };

/**
 * Constraints of {@link connection} and {@link packet}.
 *
 * @example
 * ```ts
 * const c: ConnectionConstraints = { from: 'local', uids: [1000, 2102], destinations: ['10.96.0.0/12'] };
 * ```
 */
export interface ConnectionConstraints {
  /**
   * Address family.
   * @defaultValue 4
   */
  readonly family?: Family;
  /**
   * Where the connection starts: a local process or a remote host.
   * @defaultValue both
   */
  readonly from?: 'local' | 'remote';
  /**
   * Transport protocols.
   * @defaultValue ['tcp'] for `connection()`, ['tcp', 'udp'] for `packet()`
   */
  readonly protocols?: readonly ('tcp' | 'udp')[];
  /**
   * UIDs of local processes.
   * @defaultValue any UID from 0 to 65535, often a well-known one (0, 1000, 1337, 2102, 65534)
   */
  readonly uids?: readonly number[];
  /**
   * GIDs of local processes.
   * @defaultValue the process's UID, or any GID from 0 to 65535
   */
  readonly gids?: readonly number[];
  /**
   * Networks (`10.96.0.0/12`, `fd00::/64`) local connections go to; an address is drawn from
   * one of them.
   * @defaultValue anywhere, often a pod's neighbours (its own address, loopback, a service VIP)
   */
  readonly destinations?: readonly string[];
  /**
   * The pod's own addresses, where remote connections arrive.
   * @defaultValue ['10.0.0.2'] (IPv4) or ['fd00::2'] (IPv6), the default pod of `Netns`
   */
  readonly podAddresses?: readonly string[];
  /**
   * Networks remote connections come from.
   * @defaultValue anywhere but loopback and the pod's addresses
   */
  readonly sources?: readonly string[];
  /**
   * Destination ports: single ports or ranges to draw from.
   * @defaultValue any port from 1 to 65535, often a well-known one
   */
  readonly ports?: readonly (number | PortRange)[];
}

const KEYS = ['family', 'from', 'protocols', 'uids', 'gids', 'destinations', 'podAddresses', 'sources', 'ports'];

function idList(name: string, field: string, v: unknown): readonly number[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => !Number.isInteger(x) || x < 0 || x > 0xffffffff)) {
    badConstraint(name, field, 'must be a non-empty array of integers from 0 to 4294967295');
  }
  return v as number[];
}

/** An address within one of `cidrs` (text), host bits drawn at random. */
function addressIn(name: string, field: string, family: Family, cidrs: readonly string[]): fc.Arbitrary<readonly number[]> {
  if (!Array.isArray(cidrs) || cidrs.length === 0) badConstraint(name, field, 'must be a non-empty array of networks');
  const parsed = cidrs.map((c) => {
    const p = typeof c === 'string' ? parseCidr(c, family) : null;
    if (!p) badConstraint(name, field, `has ${JSON.stringify(c)}, which is not an IPv${family} network`);
    return p;
  });
  return fc.tuple(fc.nat(parsed.length - 1), addressWords(family)).map(([i, w]) => {
    const c = parsed[i]!;
    return c.addr.map((a, k) => (a | (w[k]! & ~c.mask[k]!)) >>> 0);
  });
}

function endpoint(family: Family, words: readonly number[], p: number): string {
  const a = formatAddress(words, family);
  return family === 6 ? `[${a}]:${p}` : `${a}:${p}`;
}

function isLoopback(family: Family, w: readonly number[]): boolean {
  return family === 4 ? w[0]! >>> 24 === 127 : w.every((x, i) => (i < 3 ? x === 0 : x === 1));
}

function probe(name: string, c: ConnectionConstraints, defaultProtocols: readonly ('tcp' | 'udp')[]): fc.Arbitrary<ConnectionProbe> {
  checkKnownKeys(name, c, KEYS);
  const family = checkFamily(name, c.family);
  if (c.from !== undefined && c.from !== 'local' && c.from !== 'remote') badConstraint(name, 'from', `must be "local" or "remote", got ${JSON.stringify(c.from)}`);
  const protocols = checkSubset(name, 'protocols', c.protocols, ['tcp', 'udp'] as const, defaultProtocols);
  if (protocols.length === 0) badConstraint(name, 'protocols', 'must not be empty');
  const uids = idList(name, 'uids', c.uids);
  const gids = idList(name, 'gids', c.gids);
  const known = [0, 1000, 1337, 2102, 65534, 101, 33];
  const uid = uids ? fc.constantFrom(...uids) : fc.oneof(fc.constantFrom(...known), fc.integer({ min: 0, max: 65535 }));
  const gid = gids ? fc.constantFrom(...gids) : fc.option(fc.oneof(fc.constantFrom(...known), fc.integer({ min: 0, max: 65535 })), { nil: undefined, freq: 2 });

  let ports: fc.Arbitrary<number>;
  if (c.ports === undefined) ports = port(1, 65535);
  else {
    if (!Array.isArray(c.ports) || c.ports.length === 0) badConstraint(name, 'ports', 'must be a non-empty array of ports or ranges');
    const ranges = c.ports.map((p) => (typeof p === 'number' ? { min: p, max: p } : p));
    for (const r of ranges) {
      if (!r || !Number.isInteger(r.min) || !Number.isInteger(r.max) || r.min < 1 || r.max > 65535 || r.min > r.max) {
        badConstraint(name, 'ports', `has ${JSON.stringify(r)}, which is not a port or range within 1..65535 (TCP and UDP cannot connect to port 0)`);
      }
    }
    ports = fc.tuple(fc.nat(ranges.length - 1), fc.nat(65535)).map(([i, k]) => {
      const r = ranges[i]!;
      return r.min + (k % (r.max - r.min + 1));
    });
  }
  const pods = (c.podAddresses ?? [family === 4 ? '10.0.0.2' : 'fd00::2']).map((a) => {
    const w = typeof a === 'string' ? parseAddress(a, family) : null;
    if (!w) badConstraint(name, 'podAddresses', `has ${JSON.stringify(a)}, which is not an IPv${family} address`);
    return w;
  });
  if (pods.length === 0) badConstraint(name, 'podAddresses', 'must not be empty');
  const podKeys = new Set(pods.map((w) => w.join('.')));
  const dst = c.destinations !== undefined ? addressIn(name, 'destinations', family, c.destinations) : addressWords(family);
  const src = (c.sources !== undefined ? addressIn(name, 'sources', family, c.sources) : addressWords(family)).map((w) => {
    if (c.sources !== undefined) return w;
    // A remote host is neither loopback nor the pod: move such draws to a neighbour on the pod's network.
    if (isLoopback(family, w) || podKeys.has(w.join('.'))) return family === 4 ? [0x0a010005] : [0xfd010000, 0, 0, 5];
    return w;
  });
  const proto = fc.constantFrom(...protocols);

  const local = fc.record({ uid, gid, dst, port: ports, proto }).map(({ uid: u, gid: g, dst: d, port: p, proto: pr }) => ({
    from: 'local' as const, uid: u, gid: g ?? u, dst: endpoint(family, d, p), proto: pr,
  }));
  const remote = fc.record({ src, pod: fc.constantFrom(...pods), port: ports, proto }).map(({ src: s, pod, port: p, proto: pr }) => ({
    from: 'remote' as const, src: formatAddress(s, family), dst: endpoint(family, pod, p), proto: pr,
  }));
  if (c.from === 'local') return local;
  if (c.from === 'remote') return remote;
  return fc.oneof(local, remote);
}

/**
 * Connection attempts (TCP by default) in the shape `Netns.connect` takes: from a local process
 * to anywhere, or from a remote host to the pod.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { Netns } from 'netfilter-sim';
 * import { connection } from 'netfilter-sim/arbitraries';
 * const ns = new Netns({ rules, listen: [4140, 4143] });
 * fc.assert(fc.property(connection({ from: 'local', uids: [2102] }), (probe) => ns.connect(probe).port !== 4140));
 * ```
 */
export function connection(constraints: ConnectionConstraints = {}): fc.Arbitrary<ConnectionProbe> {
  return probe('connection', constraints, ['tcp']);
}

/**
 * Single-packet probes: a {@link connection} with a source port (used by remote probes; a local
 * socket's port is the namespace's choice), TCP or UDP by default.
 * {@link formatPacket} writes one as `netfilter-sim trace --packet` reads it.
 *
 * @example
 * ```ts
 * import * as fc from 'fast-check';
 * import { packet, formatPacket } from 'netfilter-sim/arbitraries';
 * fc.sample(packet({ from: 'remote' }), { seed: 5, numRuns: 1 }).map(formatPacket);
 * // e.g. ['udp 10.1.0.5:40000 > 10.0.0.2:53 in eth0']
 * ```
 */
export function packet(constraints: ConnectionConstraints = {}): fc.Arbitrary<PacketProbe> {
  const base = probe('packet', constraints, ['tcp', 'udp']);
  return fc.tuple(base, fc.oneof(fc.integer({ min: 32768, max: 60999 }), fc.integer({ min: 1, max: 65535 }))).map(([p, sport]) => ({ ...p, sport }));
}

/**
 * Writes a packet probe as `netfilter-sim trace --packet` reads it:
 * `tcp 10.1.0.5:40000 > 10.0.0.2:8080 in eth0` (remote) or `tcp > 10.96.0.10:80 uid 1000 gid 1000`
 * (local: the namespace picks the source address and port, as `connect()` does).
 *
 * @example
 * ```ts
 * formatPacket({ from: 'local', uid: 1000, gid: 1000, sport: 40000, dst: '10.96.0.10:80', proto: 'tcp' });
 * // 'tcp > 10.96.0.10:80 uid 1000 gid 1000'
 * ```
 */
export function formatPacket(p: PacketProbe): string {
  expectArgument(p, 'object', 'probe');
  if (p.from === 'remote') {
    const src = p.src.includes(':') ? `[${p.src}]` : p.src;
    return `${p.proto} ${src}:${p.sport} > ${p.dst} in eth0`;
  }
  return `${p.proto} > ${p.dst} uid ${p.uid} gid ${p.gid}`;
}
