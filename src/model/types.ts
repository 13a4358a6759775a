/**
 * The rule-set model: plain, readonly, JSON-serializable data.
 *
 * A {@link Ruleset} holds one address family. Tables hold chains in declaration order, chains hold
 * rules in order. Every rule keeps its source span and original text, so traces and diagnostics
 * can point back at what the user wrote. The model imports nothing.
 *
 * @module
 */

/** Address family: 4 for iptables, 6 for ip6tables. */
export type Family = 4 | 6;

/** The tables iptables knows, in the order iptables-nft-save prints them. */
export const TABLE_NAMES = ['raw', 'mangle', 'nat', 'filter', 'security'] as const;
/** A table name. */
export type TableName = (typeof TABLE_NAMES)[number];

/** Netfilter hooks, named as iptables names the built-in chains. */
export const HOOK_NAMES = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'] as const;
/** A hook (and built-in chain) name. */
export type HookName = (typeof HOOK_NAMES)[number];

/** Built-in chains of each table, in hook order (iptables(8), TABLES). */
export const BUILTIN_CHAINS: { readonly [T in TableName]: readonly HookName[] } = {
  raw: ['PREROUTING', 'OUTPUT'],
  mangle: ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'],
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
  security: ['INPUT', 'FORWARD', 'OUTPUT'],
};

/** A position in source text. `line` and `column` count from 1; `offset` from 0. */
export interface Span {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
  readonly length: number;
}

/** A value with an optional `!` in front of its option. */
export interface Negatable<T> {
  readonly negated: boolean;
  readonly value: T;
}

/**
 * An address with a mask, pre-parsed. IPv4 uses one 32-bit word, IPv6 four, most significant
 * first; each word is an unsigned 32-bit integer. Host bits are already cleared (`addr & mask`),
 * as iptables does at parse time.
 */
export interface Cidr {
  readonly family: Family;
  readonly addr: readonly number[];
  readonly mask: readonly number[];
}

/** Packet and byte counters (`[packets:bytes]`). */
export interface Counters {
  readonly packets: number;
  readonly bytes: number;
}

/**
 * A match extension instance (`-m NAME ...`). The options are owned by the extension module in
 * `src/extensions/match/NAME.ts`; the model carries them as data.
 */
export interface Match {
  readonly name: string;
  readonly options: Readonly<Record<string, unknown>>;
  /** True when the match was implied by `-p tcp --dport ...` rather than written as `-m tcp`. */
  readonly implicit?: boolean;
  readonly span?: Span;
}

/** The verdicts a rule can name directly with `-j`. */
export type StandardVerdict = 'ACCEPT' | 'DROP' | 'RETURN';

/** What a rule does when it matches. */
export type Target =
  | { readonly kind: 'verdict'; readonly verdict: StandardVerdict; readonly span?: Span }
  | { readonly kind: 'jump'; readonly chain: string; readonly span?: Span }
  | { readonly kind: 'goto'; readonly chain: string; readonly span?: Span }
  | {
      readonly kind: 'extension';
      readonly name: string;
      readonly options: Readonly<Record<string, unknown>>;
      readonly span?: Span;
    };

/** One rule. Fields in the order iptables-save prints them. */
export interface Rule {
  readonly source?: Negatable<Cidr>;
  readonly destination?: Negatable<Cidr>;
  readonly inInterface?: Negatable<string>;
  readonly outInterface?: Negatable<string>;
  /** Protocol as iptables-save prints it (`tcp`, `udp`, `icmp`, `ipv6-icmp`, or a number). */
  readonly protocol?: Negatable<string>;
  /** `-f` / `! -f` (IPv4 only). */
  readonly fragment?: Negatable<true>;
  readonly matches: readonly Match[];
  /** `null`: no `-j`/`-g`; the rule only counts. */
  readonly target: Target | null;
  readonly counters?: Counters;
  readonly span?: Span;
  /** The rule as it was written, for traces and messages. */
  readonly text?: string;
}

/** A chain. Built-in chains have a policy; user chains have `policy: null`. */
export interface Chain {
  readonly name: string;
  readonly builtin: boolean;
  readonly policy: 'ACCEPT' | 'DROP' | null;
  readonly counters: Counters;
  readonly rules: readonly Rule[];
  readonly span?: Span;
}

/** A table and its chains, built-ins first in hook order, then user chains in creation order. */
export interface Table {
  readonly name: TableName;
  readonly chains: readonly Chain[];
}

/** A whole rule set of one family: the tables that were mentioned, in first-mention order. */
export interface Ruleset {
  readonly family: Family;
  readonly tables: readonly Table[];
}

/**
 * Chain names are at most 28 characters: `XT_EXTENSION_MAXNAMELEN` (29,
 * include/uapi/linux/netfilter/x_tables.h) less the NUL. iptables refuses longer ones.
 */
export const MAX_CHAIN_NAME_LENGTH = 28;
