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

/** The address families this simulator reads (nft also has `arp`, `bridge`, `netdev`). */
export type NftFamily = 'ip' | 'ip6' | 'inet';
/** nft's base chain hooks for the ip, ip6 and inet families (`ingress` is not modelled). */
export type NftHook = 'prerouting' | 'input' | 'forward' | 'output' | 'postrouting';
/** Base chain types. */
export type NftChainType = 'filter' | 'nat' | 'route';

/**
 * nft datatypes a constant can have (`src/datatype.c` names). `verdict` values are chain
 * verdicts in maps; `integer` is a plain number of `bits` bits.
 */
export type NftType =
  | 'ipv4_addr' | 'ipv6_addr' | 'inet_proto' | 'inet_service' | 'mark' | 'integer' | 'ifname' | 'iface_index'
  | 'uid' | 'gid' | 'nf_proto' | 'pkt_type' | 'ct_state' | 'ct_status' | 'ct_dir' | 'tcp_flag'
  | 'icmp_type' | 'icmpv6_type' | 'icmp_code' | 'icmpv6_code' | 'fib_addrtype' | 'boolean' | 'verdict';

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

/** The header fields the simulator knows (`ip saddr`, `tcp dport`, …). */
export interface NftPayload {
  readonly kind: 'payload';
  readonly protocol: 'ip' | 'ip6' | 'tcp' | 'udp' | 'sctp' | 'th' | 'icmp' | 'icmpv6';
  readonly field: string;
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
/** `socket transparent|mark|wildcard`. */
export interface NftSocket {
  readonly kind: 'socket';
  readonly key: 'transparent' | 'mark' | 'wildcard';
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
/** A comma list of flags (`established,related`) folded into one bitmask value. */

/** What a relational expression compares. */
export type NftSelector = NftPayload | NftMeta | NftCt | NftFib | NftSocket | NftNumgen | NftBitwise | NftConcat;

/** One key of a set or map, with its data for maps. */
export interface NftElement {
  readonly key: readonly (NftValue | NftRange | NftPrefix)[];
  /** For maps: the value (a verdict for verdict maps). */
  readonly data?: NftValue | NftVerdict;
  /** A per-element counter (`{ 22 counter, 80 }`). */
  readonly counter?: { readonly packets: number; readonly bytes: number };
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
      readonly flags: readonly string[]; readonly span?: Span }
  | { readonly kind: 'tproxy'; readonly family?: 'ip' | 'ip6'; readonly addr?: NftValue; readonly port?: NftValue; readonly span?: Span }
  | { readonly kind: 'mangle'; readonly target: NftMeta | NftCt; readonly value: NftValue | NftBitwise | NftMeta | NftCt | NftMapLookup | NftNumgen;
      readonly span?: Span }
  | { readonly kind: 'notrack'; readonly span?: Span }
  /** `update @set { key }` / `add @set { key }`: puts the packet's key in a named set (nft_dynset). */
  | { readonly kind: 'setupdate'; readonly op: 'add' | 'update'; readonly set: string; readonly key: NftSelector; readonly span?: Span };

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
}

/** A chain; `base` is set for base chains. */
export interface NftChain {
  readonly name: string;
  readonly handle: number;
  readonly base?: NftBaseChain;
  readonly rules: readonly NftRule[];
  readonly comment?: string;
  readonly span?: Span;
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
  /** `timeout`: how long an element added from the packet path lives, in milliseconds. */
  readonly timeout?: number;
  readonly span?: Span;
}

/** A table. */
export interface NftTable {
  readonly family: NftFamily;
  readonly name: string;
  readonly handle: number;
  readonly sets: readonly NftSet[];
  readonly chains: readonly NftChain[];
  readonly comment?: string;
  readonly span?: Span;
}

/** What `nft list ruleset` shows for the families this simulator reads. */
export interface NftRuleset {
  readonly kind: 'nftables';
  readonly tables: readonly NftTable[];
}
