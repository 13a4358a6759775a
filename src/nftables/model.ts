/**
 * The nftables model: plain, readonly, JSON-serializable data, as the kernel holds a rule set
 * after `nft -f` committed it. Families `ip`, `ip6` and `inet`; tables hold sets (and maps) and
 * chains in creation order, chains hold rules in order. Expressions are typed: every constant
 * carries its nft datatype, so the printer lists it as `nft list ruleset` does.
 *
 * Words are nft's own (table, family, base chain, hook, priority, expression, statement, set,
 * map, verdict map, handle). The model imports nothing but the shared span type.
 *
 * @module
 */
import type { Span } from '../model/types.js';

/** nft's address families. The engine runs `ip`, `ip6` and `inet` tables (see `NftEngine`). */
export type NftFamily = 'ip' | 'ip6' | 'inet' | 'arp' | 'bridge' | 'netdev';
/** nft's base chain hooks (`ingress`/`egress` take a device). */
export type NftHook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting' | 'ingress' | 'egress';
/** Base chain types. */
export type NftChainType = 'filter' | 'nat' | 'route';

/**
 * nft datatypes a constant can have (`src/datatype.c` names). `verdict` values are chain
 * verdicts in maps; `integer` is a plain number of `bits` bits.
 */
export type NftType =
  | 'ipv4_addr' | 'ipv6_addr' | 'inet_proto' | 'inet_service' | 'mark' | 'integer' | 'ifname' | 'iface_index'
  | 'uid' | 'gid' | 'nf_proto' | 'pkt_type' | 'ct_state' | 'ct_status' | 'ct_dir' | 'tcp_flag'
  | 'icmp_type' | 'icmpv6_type' | 'icmp_code' | 'icmpv6_code' | 'fib_addrtype' | 'boolean' | 'verdict'
  | 'ether_type' | 'ether_addr' | 'arp_op' | 'dscp' | 'ecn' | 'string' | 'ct_label' | 'ct_event' | 'realm' | 'devgroup'
  | 'iface_type' | 'tc_handle' | 'time' | 'date' | 'xinteger' | 'day' | 'hour' | 'igmp_type' | 'dccp_pkttype' | 'icmpx_code' | 'cgroupv2'
  | 'ipsec_dir' | 'queue' | 'icmp6_type' | 'ct_id' | 'sctp_chunk' | 'mh_type'
  /** Object maps' data (`type ipv4_addr : counter`). */
  | 'counter' | 'quota' | 'limit' | 'secmark' | 'synproxy';

/** A typed constant. Numbers that may not fit 53 bits (addresses) are bigints. */
export interface NftValue {
  readonly kind: 'value';
  readonly type: NftType;
  /** Width in bits (32 for ipv4_addr, 128 for ipv6_addr, 16 for inet_service, …). */
  readonly bits: number;
  readonly value: bigint;
  /** For `ifname`: the name (a trailing `*` is a wildcard). */
  readonly text?: string;
}

/** `low-high` (inclusive) or a prefix `addr/len`, kept as written for listing. */
export interface NftRange {
  readonly kind: 'range';
  readonly low: NftValue;
  readonly high: NftValue;
}
export interface NftPrefix {
  readonly kind: 'prefix';
  readonly value: NftValue;
  readonly length: number;
  /** The address was written with host bits set (`10.0.0.5/24`); nft keeps such a set a set. */
  readonly hostBits?: boolean;
}

/** Header fields (`ip saddr`, `tcp dport`, `ether type`, `vlan id` …), as nft's `proto.c` names them. */
export interface NftPayload {
  readonly kind: 'payload';
  readonly protocol: NftPayloadProtocol;
  readonly field: string;
}
/** The protocols of payload expressions. */
export type NftPayloadProtocol =
  | 'ip' | 'ip6' | 'tcp' | 'udp' | 'sctp' | 'th' | 'icmp' | 'icmpv6' | 'ether' | 'vlan' | 'arp' | 'igmp' | 'udplite' | 'dccp'
  | 'ah' | 'esp' | 'comp';
/** A raw payload window `@ll|nh|th|ih,OFFSET,LENGTH` (bits); `ih` is the inner header, after a TCP or UDP header. */
export interface NftRawPayload {
  readonly kind: 'rawpayload';
  readonly base: 'll' | 'nh' | 'th' | 'ih';
  readonly offset: number;
  readonly length: number;
}
/** An IPv6 extension header field (`hbh nexthdr`, `frag more-fragments`, `srh sid[1]`). */
export interface NftExthdr {
  readonly kind: 'exthdr';
  readonly header: string;
  /** Absent for a presence test (`exthdr hbh exists`). */
  readonly field?: string;
}
/** An IPv4 option (`ip option rr ptr`, `ip option ra value`); without a field, its presence. */
export interface NftIpOption {
  readonly kind: 'ipopt';
  readonly option: 'lsrr' | 'rr' | 'ssrr' | 'ra';
  readonly field?: string;
}
/** A TCP option (`tcp option maxseg size`); without a field, its presence. */
export interface NftTcpOption {
  readonly kind: 'tcpopt';
  /** The option's name, or its kind as a number when nft has no name for it. */
  readonly option: string;
  readonly field?: string;
  /** `tcp option @KIND,OFFSET,LENGTH`: bits of the option, by offset and length. */
  readonly raw?: { readonly offset: number; readonly length: number };
}
/** An SCTP chunk (`sctp chunk init num-inbound-streams`); without a field, its presence. */
export interface NftSctpChunk {
  readonly kind: 'sctpchunk';
  readonly chunk: string;
  readonly field?: string;
}
/** Routing information of the packet (`rt mtu`, `rt ip nexthop`, `rt classid`, `rt ipsec`). */
export interface NftRt {
  readonly kind: 'rt';
  readonly key: 'classid' | 'nexthop' | 'mtu' | 'ipsec';
  readonly family?: 'ip' | 'ip6';
}
/** `jhash EXPR mod N [seed S] [offset O]` and `symhash mod N [offset O]`. */
export interface NftHash {
  readonly kind: 'hash';
  readonly mode: 'jhash' | 'symhash';
  readonly expr?: NftSelector;
  readonly modulus: number;
  readonly seed?: number;
  readonly offset: number;
}
/** `osf [ttl loose|skip] name|version`. */
export interface NftOsf {
  readonly kind: 'osf';
  readonly key: 'name' | 'version';
  readonly ttl?: 'loose' | 'skip';
}
/** `ipsec in|out [spnum N] reqid|spi|ip saddr|…`. */
export interface NftIpsec {
  readonly kind: 'ipsec';
  readonly dir: 'in' | 'out';
  readonly spnum: number;
  readonly key: 'reqid' | 'spi' | 'saddr' | 'daddr';
  readonly family?: 'ip' | 'ip6';
}
/** `meta KEY` (and the unqualified forms `mark`, `iifname`, `skuid` …). */
export interface NftMeta {
  readonly kind: 'meta';
  readonly key: string;
}
/** `ct [original|reply] [ip|ip6] KEY`. */
export interface NftCt {
  readonly kind: 'ct';
  readonly key: string;
  readonly direction?: 'original' | 'reply';
  readonly family?: 'ip' | 'ip6';
}
/** `fib saddr|daddr [. iif|oif|mark …] type|oif|oifname`. */
export interface NftFib {
  readonly kind: 'fib';
  readonly flags: readonly ('saddr' | 'daddr' | 'mark' | 'iif' | 'oif')[];
  readonly result: 'type' | 'oif' | 'oifname';
}
/** `socket transparent|mark|wildcard|cgroupv2 level N`. */
export interface NftSocket {
  readonly kind: 'socket';
  readonly key: 'transparent' | 'mark' | 'wildcard' | 'cgroupv2';
  readonly level?: number;
}
/** `numgen inc|random mod N [offset M]`. */
export interface NftNumgen {
  readonly kind: 'numgen';
  readonly mode: 'inc' | 'random';
  readonly modulus: number;
  readonly offset: number;
}
/**
 * A bitwise expression as the kernel's `nft_bitwise` evaluates it: `(x & mask) ^ xor`. Every
 * `&`, `|`, `^` chain over one selector folds into this form, as nft does at evaluation.
 */
export interface NftBitwise {
  readonly kind: 'bitwise';
  readonly operand: NftSelector;
  readonly mask: bigint;
  readonly xor: bigint;
  readonly bits: number;
  readonly type: NftType;
}
/** `EXPR << N` / `EXPR >> N` (the kernel's bitwise shift). */
export interface NftShift {
  readonly kind: 'shift';
  readonly operand: NftSelector;
  readonly op: '<<' | '>>';
  readonly by: number;
  readonly bits: number;
  readonly type: NftType;
}
/**
 * A constant inside a concatenation a set is updated with from the packet path (`add @s { ip saddr
 * . 22 }`): the value the key's field at its place gets, typed by the set.
 */
export interface NftConst {
  readonly kind: 'const';
  readonly value: NftValue;
}
/** `a . b . c`. */
export interface NftConcat {
  readonly kind: 'concat';
  readonly items: readonly NftSelector[];
}
/** An anonymous set `{ … }`. */
export interface NftAnonSet {
  readonly kind: 'set';
  readonly elements: readonly NftElement[];
  /** Key type(s), one per concatenated field. */
  readonly key: readonly NftType[];
  readonly interval: boolean;
}
/** `@name`. */
export interface NftSetRef {
  readonly kind: 'setref';
  readonly name: string;
}
/** `KEY map { … }` or `KEY map @m` as a value. */
export interface NftMapLookup {
  readonly kind: 'map';
  readonly key: NftSelector;
  readonly mappings: NftAnonSet | NftSetRef;
  /** The data type of the map's values. */
  readonly dataType: NftType;
  readonly dataBits: number;
}
/** The kinds of stateful objects a table holds. */
export type NftObjectType = 'counter' | 'quota' | 'limit' | 'ct helper' | 'ct timeout' | 'ct expectation' | 'secmark' | 'synproxy';
/** A comma list of flags (`established,related`) folded into one bitmask value. */

/** What a relational expression compares. */
export type NftSelector =
  | NftPayload | NftMeta | NftCt | NftFib | NftSocket | NftNumgen | NftBitwise | NftShift | NftConcat | NftRawPayload | NftExthdr
  | NftTcpOption | NftSctpChunk | NftRt | NftHash | NftOsf | NftIpsec | NftIpOption | NftConst;

/** One key of a set or map, with its data for maps. */
export interface NftElement {
  readonly key: readonly (NftValue | NftRange | NftPrefix)[];
  /** For maps: the value (a verdict for verdict maps; a concatenation or an interval for such data types). */
  readonly data?: NftValue | NftVerdict | NftConcatValue | NftRange | NftPrefix;
  /** `timeout 30s` (milliseconds). */
  readonly timeout?: number;
  /** `expires 10s` (milliseconds). */
  readonly expires?: number;
  /** A per-element counter (`{ 22 counter, 80 }`). */
  readonly counter?: { readonly packets: number; readonly bytes: number };
  /**
   * The element's other stateful expressions (`limit rate 1/second`, `quota 10 bytes`), listed
   * before its counter. A lookup does not run them (only a set update from the packet path does).
   */
  readonly stateful?: readonly NftStatement[];
  /** `comment "…"` after the key, as nft keeps it. */
  readonly comment?: string;
}

/** Right-hand sides of a match. */
export type NftRight = NftValue | NftRange | NftPrefix | NftAnonSet | NftSetRef | NftConcatValue;
/** A concatenated constant (`10.0.0.1 . 80`). */
export interface NftConcatValue {
  readonly kind: 'concat-value';
  readonly items: readonly (NftValue | NftRange | NftPrefix)[];
}

/** Relational operators; `implicit` is a comparison written without an operator. */
export type NftOp = 'implicit' | '==' | '!=' | '<' | '>' | '<=' | '>=';

/** Verdicts. */
export interface NftVerdict {
  readonly kind: 'verdict';
  readonly verdict: 'accept' | 'drop' | 'return' | 'continue' | 'jump' | 'goto';
  readonly chain?: string;
}

/** Statements, in the order nft lists them. */
export type NftStatement =
  | { readonly kind: 'match'; readonly left: NftSelector; readonly op: NftOp; readonly right: NftRight; readonly span?: Span;
      /** A flag test written `tcp flags syn / syn,ack` (value / mask). */
      readonly flagMask?: NftValue }
  | NftVerdict & { readonly span?: Span }
  | { readonly kind: 'vmap'; readonly key: NftSelector; readonly mappings: NftAnonSet | NftSetRef; readonly span?: Span }
  | { readonly kind: 'counter'; readonly packets: number; readonly bytes: number; readonly span?: Span }
  | { readonly kind: 'log'; readonly prefix?: string; readonly level?: string; readonly group?: number; readonly snaplen?: number;
      readonly queueThreshold?: number; readonly flags?: readonly string[]; readonly span?: Span }
  | { readonly kind: 'limit'; readonly rate: number; readonly unit: 'second' | 'minute' | 'hour' | 'day' | 'week';
      readonly over: boolean; readonly burst: number; readonly bytes?: string; readonly span?: Span }
  | { readonly kind: 'reject'; readonly with?: { readonly type: 'icmp' | 'icmpv6' | 'icmpx' | 'tcp-reset'; readonly code?: string }; readonly span?: Span }
  | { readonly kind: 'nat'; readonly type: 'snat' | 'dnat' | 'masquerade' | 'redirect'; readonly family?: 'ip' | 'ip6';
      readonly addr?: NftValue | NftRange | NftPrefix | NftMapLookup; readonly port?: NftValue | NftRange | NftMapLookup;
      readonly flags: readonly string[]; readonly span?: Span;
      /** The map's data are ranges or prefixes (nft then lists the family: `snat ip to … map { … : A-B }`). */
      readonly intervalData?: boolean;
      /** `dnat ip addr . port to …`: the map gives address and port. */
      readonly concat?: boolean;
      /** `dnat ip interval to …` / `snat prefix to …`: the map gives a range or a prefix. */
      readonly interval?: boolean;
      readonly prefix?: boolean }
  | { readonly kind: 'tproxy'; readonly family?: 'ip' | 'ip6'; readonly addr?: NftValue; readonly port?: NftValue; readonly span?: Span }
  | { readonly kind: 'mangle'; readonly target: NftSelector; readonly value: NftValue | NftSelector | NftMapLookup | NftConcatValue;
      readonly span?: Span }
  | { readonly kind: 'notrack'; readonly span?: Span }
  /** `reset tcp option NAME|KIND` (nft_exthdr's option stripping). */
  | { readonly kind: 'optstrip'; readonly option: string; readonly span?: Span }
  /** A named object used by a rule: `counter name "c"`, `ct helper set "ftp"`, `quota name @m` (by a map). */
  | { readonly kind: 'objref'; readonly objType: NftObjectType; readonly name?: string; readonly map?: NftMapLookup; readonly span?: Span }
  | { readonly kind: 'quota'; readonly over: boolean; readonly bytes: bigint; readonly used: bigint; readonly span?: Span }
  | { readonly kind: 'connlimit'; readonly count: number; readonly over: boolean; readonly span?: Span }
  | { readonly kind: 'queue'; readonly num?: NftValue | NftRange | NftSelector | NftMapLookup; readonly flags: readonly ('bypass' | 'fanout')[]; readonly span?: Span }
  | { readonly kind: 'dup'; readonly addr?: NftValue | NftMapLookup; readonly dev?: NftValue | NftMapLookup; readonly span?: Span }
  | { readonly kind: 'fwd'; readonly family?: 'ip' | 'ip6'; readonly addr?: NftValue; readonly dev: NftValue | NftMapLookup; readonly span?: Span }
  | { readonly kind: 'synproxy'; readonly mss?: number; readonly wscale?: number; readonly flags: readonly ('timestamp' | 'sack-perm')[]; readonly span?: Span }
  /** `add|update|delete @set { KEY [timeout T] [STATEFUL…] }` and `… @map { KEY : DATA }`. */
  | { readonly kind: 'dynset'; readonly op: 'add' | 'update' | 'delete'; readonly set: string; readonly key: NftSelector;
      readonly data?: NftSelector | NftValue; readonly timeout?: number; readonly stateful: readonly NftStatement[]; readonly span?: Span;
      /** Written as `meter NAME size N { … }`: the set is the meter's own, and lists with the rule. */
      readonly meter?: { readonly size: number } }
  /** `flow add @ft` (offload to a flowtable). */
  | { readonly kind: 'flow'; readonly flowtable: string; readonly span?: Span };

/** A rule. `handle` as `nft -a list ruleset` shows it. */
export interface NftRule {
  readonly handle: number;
  readonly statements: readonly NftStatement[];
  readonly comment?: string;
  readonly span?: Span;
}

/** A base chain's hook registration. */
export interface NftBaseChain {
  readonly type: NftChainType;
  readonly hook: NftHook;
  readonly priority: number;
  readonly policy: 'accept' | 'drop';
  /** `device "eth0"` / `devices = { … }` (netdev and inet ingress chains). */
  readonly devices?: readonly string[];
  /** `flags offload`. */
  readonly offload?: boolean;
}

/** A chain; `base` is set for base chains. */
export interface NftChain {
  readonly name: string;
  readonly handle: number;
  readonly base?: NftBaseChain;
  readonly rules: readonly NftRule[];
  readonly comment?: string;
  readonly span?: Span;
  /**
   * An anonymous chain (`jump { … }`), bound to the one rule that jumps to it: the kernel names
   * it `__chainN` (N from a counter of its own), nft lists it inside that rule, and it goes when
   * the rule goes.
   */
  readonly binding?: boolean;
}

/** A named set or map. */
export interface NftSet {
  readonly name: string;
  readonly handle: number;
  /** Key type, one entry per concatenated field. */
  readonly key: readonly NftType[];
  /** Map data type (`verdict` for verdict maps); absent for sets. */
  readonly data?: NftType;
  readonly flags: readonly ('constant' | 'interval' | 'timeout' | 'dynamic')[];
  readonly elements: readonly NftElement[];
  readonly comment?: string;
  readonly size?: number;
  readonly span?: Span;
  /** `typeof EXPR …`: the key (and data) as written, listed back instead of `type`. */
  readonly typeofKey?: readonly NftSelector[];
  readonly typeofData?: NftSelector;
  /** Concatenated map data (`type … : ipv4_addr . inet_service`), one type per part after the first. */
  readonly dataConcat?: readonly NftType[];
  /** `: interval TYPE` map data. */
  readonly dataInterval?: boolean;
  /** Default element timeout and garbage collection interval (milliseconds). */
  readonly timeout?: number;
  readonly gcInterval?: number;
  readonly policy?: 'performance' | 'memory';
  readonly autoMerge?: boolean;
  /** Stateful expressions every element gets (`counter`, `quota …`, `limit …`, `ct count …`). */
  readonly stateful?: readonly NftStatement[];
  /** The set of a `meter` statement: `nft list ruleset` does not list it (`nft list meters` does). */
  readonly meter?: boolean;
}

/** A named stateful object. */
export type NftObject = { readonly name: string; readonly handle: number; readonly comment?: string; readonly span?: Span } & (
  | { readonly type: 'counter'; readonly packets: number; readonly bytes: number }
  | { readonly type: 'quota'; readonly over: boolean; readonly bytes: bigint; readonly used: bigint }
  | { readonly type: 'limit'; readonly rate: number; readonly unit: 'second' | 'minute' | 'hour' | 'day' | 'week'; readonly over: boolean;
      readonly burst: number; readonly bytes?: boolean }
  | { readonly type: 'ct helper'; readonly helper: string; readonly protocol: 'tcp' | 'udp'; readonly l3proto: 'ip' | 'ip6' | 'inet' }
  | { readonly type: 'ct timeout'; readonly protocol: string; readonly l3proto: 'ip' | 'ip6' | 'inet';
      readonly policy: readonly (readonly [string, number])[] }
  | { readonly type: 'ct expectation'; readonly protocol: string; readonly dport: number; readonly timeout: number; readonly size: number;
      readonly l3proto: 'ip' | 'ip6' | 'inet' }
  | { readonly type: 'secmark'; readonly context: string }
  | { readonly type: 'synproxy'; readonly mss: number; readonly wscale: number; readonly flags: readonly ('timestamp' | 'sack-perm')[] });

/** A flowtable (`flow add @ft` offloads to it). */
export interface NftFlowtable {
  readonly name: string;
  readonly handle: number;
  readonly hook: 'ingress';
  readonly priority: number;
  readonly devices: readonly string[];
  readonly counter?: boolean;
  readonly offload?: boolean;
  readonly span?: Span;
}

/** A table. */
export interface NftTable {
  readonly family: NftFamily;
  readonly name: string;
  readonly handle: number;
  readonly sets: readonly NftSet[];
  readonly chains: readonly NftChain[];
  /** Named stateful objects, in creation order (absent: none). */
  readonly objects?: readonly NftObject[];
  readonly flowtables?: readonly NftFlowtable[];
  /** `flags dormant`. */
  readonly dormant?: boolean;
  readonly comment?: string;
  readonly span?: Span;
}

/** What `nft list ruleset` shows for the families this simulator reads. */
export interface NftRuleset {
  readonly kind: 'nftables';
  readonly tables: readonly NftTable[];
}
