/**
 * What a match sees of a packet while it crosses one hook: the kernel's `struct xt_action_param`
 * and the skb fields iptables matches read. The engine fills it; extension matches read it.
 *
 * Addresses are 32-bit words (one for IPv4, four for IPv6), as in {@link Cidr}.
 *
 * @module
 */
import type { Family, HookName, TableName } from './types.js';

/** IP protocol numbers used by the matches. */
export const IPPROTO = { icmp: 1, tcp: 6, udp: 17, icmpv6: 58, sctp: 132, udplite: 136, dccp: 33, gre: 47, esp: 50, ah: 51 } as const;

/** TCP flag bits, as in the TCP header (and `--tcp-flags`). */
export const TCP_FLAGS = { FIN: 0x01, SYN: 0x02, RST: 0x04, PSH: 0x08, ACK: 0x10, URG: 0x20, ECE: 0x40, CWR: 0x80 } as const;

/** Conntrack state bits as `xt_conntrack`/`xt_state` test them (`XT_STATE_BIT`). */
export const CT_STATE = { INVALID: 1, ESTABLISHED: 2, RELATED: 4, NEW: 8, UNTRACKED: 16 } as const;

/** Conntrack status bits that `--ctstatus` and the virtual SNAT/DNAT states read. */
export const CT_STATUS = { EXPECTED: 1, SEEN_REPLY: 2, ASSURED: 4, CONFIRMED: 8, SNAT: 16, DNAT: 32 } as const;

/** Route types, as `addrtype` names them (bit i = `1 << RTN_*`). */
export const ADDR_TYPE = {
  UNSPEC: 1 << 0,
  UNICAST: 1 << 1,
  LOCAL: 1 << 2,
  BROADCAST: 1 << 3,
  ANYCAST: 1 << 4,
  MULTICAST: 1 << 5,
  BLACKHOLE: 1 << 6,
  UNREACHABLE: 1 << 7,
  PROHIBIT: 1 << 8,
  THROW: 1 << 9,
  NAT: 1 << 10,
  XRESOLVE: 1 << 11,
} as const;

/** The socket a locally generated packet belongs to (owner match). */
export interface SocketView {
  readonly uid: number;
  readonly gid: number;
  /** Supplementary groups (`--suppl-groups`). */
  readonly groups: readonly number[];
}

/** The conntrack entry of a packet, as matches see it. */
export interface ConntrackView {
  /** One of the {@link CT_STATE} bits. */
  readonly state: number;
  /** {@link CT_STATUS} bits. */
  readonly status: number;
  readonly direction: 'ORIGINAL' | 'REPLY';
  readonly mark: number;
  readonly zone: number;
  readonly proto: number;
  readonly origSrc: readonly number[];
  readonly origDst: readonly number[];
  readonly origSport: number;
  readonly origDport: number;
  readonly replySrc: readonly number[];
  readonly replyDst: readonly number[];
  readonly replySport: number;
  readonly replyDport: number;
}

/**
 * A packet at a hook, as matches read it. Mutable fields are updated by targets. A view is valid
 * while its connection is being made: the namespace reuses the object for a later packet.
 */
export interface PacketView {
  readonly family: Family;
  /** IP protocol number ({@link IPPROTO}). */
  readonly proto: number;
  readonly src: readonly number[];
  readonly dst: readonly number[];
  /** Ports for TCP/UDP/SCTP/DCCP; 0 otherwise. */
  readonly sport: number;
  readonly dport: number;
  /** TCP flags ({@link TCP_FLAGS}); 0 for other protocols. */
  readonly tcpFlags: number;
  /** ICMP / ICMPv6 type and code; -1 for other protocols. */
  readonly icmpType: number;
  readonly icmpCode: number;
  /** Whether this is a non-first fragment (`-f`). */
  readonly fragment: boolean;
  readonly length: number;
  /** In/out interface names; null where the hook has none. */
  readonly inIface: string | null;
  readonly outIface: string | null;
  readonly hook: HookName;
  readonly table: TableName;
  /** skb->mark. */
  readonly mark: number;
  /** The owning socket of a locally generated packet; null for forwarded/arriving packets. */
  readonly socket: SocketView | null;
  /** The conntrack entry; null when untracked is not even known (raw table, before conntrack). */
  readonly ct: ConntrackView | null;
  /**
   * The route type of an address in this namespace ({@link ADDR_TYPE} bit), optionally restricted
   * to routes via one interface (`addrtype --limit-iface-*`).
   */
  addressType(addr: readonly number[], iface: string | null): number;
  /**
   * A random draw for `statistic --mode random`: true with the given probability, where
   * `probability` is the kernel's 31-bit fixed-point value. The engine decides how (seeded RNG,
   * or one branch of an enumeration).
   */
  statisticRandom(probability: number): boolean;
  /** IPv4 TTL or IPv6 hop limit; absent means 64 (Linux's `ip_default_ttl`/`hop_limit`). */
  readonly ttl?: number;
  /** IPv4 TOS byte or IPv6 traffic class; absent means 0. */
  readonly tos?: number;
  /** `skb->pkt_type` (`pkttype` match); absent means `unicast` (`PACKET_HOST`). */
  readonly pktType?: 'unicast' | 'broadcast' | 'multicast' | 'otherhost' | 'outgoing';
  /** Bridge ports the packet crossed (`physdev`); absent means the packet was not bridged. */
  readonly physIn?: string | null;
  readonly physOut?: string | null;
  /** The namespace's virtual clock in seconds since the epoch (time, rate limits); absent means 0. */
  readonly now?: number;
  /**
   * How many tracked connections have an original source (`daddr` false) or destination in
   * `addr`/`prefix` (`connlimit`); absent means none are counted.
   */
  connCount?(addr: readonly number[], prefix: number, daddr: boolean): number;
  /**
   * The namespace's `recent` list `name` (`/proc/net/xt_recent/NAME`), keyed by family and
   * masked address; absent means an empty list for every packet.
   */
  recentTable?(name: string): Map<string, { stamps: number[]; ttl: number }>;
  /**
   * The local socket an arriving packet belongs to (`nf_sk_lookup_slow_v4`/`_v6`, for `-m socket`):
   * the socket already assigned to it (TPROXY), else the connection with its 4-tuple, else the
   * listener of its destination. Absent means no socket is ever found.
   */
  socketLookup?(): PacketSocket | null;
  /** Sets `skb->mark` from a match (`socket --restore-skmark`); absent where the packet is read-only. */
  setMark?(mark: number): void;
}

/** What `-m socket` can see of the socket a packet belongs to. */
export interface PacketSocket {
  /** A listener bound to the wildcard address (0.0.0.0 or ::). */
  readonly wildcard: boolean;
  /** IP_TRANSPARENT (an accepted connection inherits its listener's). */
  readonly transparent: boolean;
  /** `sk_fullsock`: false for a connection still in the SYN-ACK stage or in TIME_WAIT. */
  readonly full: boolean;
  /** `SO_MARK` (0 when unset). */
  readonly mark: number;
}
