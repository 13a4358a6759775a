/**
 * What the nft parser produces before evaluation: commands with their statements, where
 * constants are still symbols (`10.0.0.0/8`, `established`, `$var`) and take their type from
 * what they are compared with, as in nft's `parser_bison.y` → `evaluate.c` split.
 *
 * @module
 */
import type { Span } from '../../model/types.js';
import type { NftChainType, NftFamily, NftHook, NftObjectType, NftSelector } from '../model.js';

/** An unevaluated expression. */
export type RawExpr =
  | { readonly t: 'sym'; readonly text: string; readonly quoted: boolean; readonly span: Span }
  | { readonly t: 'var'; readonly name: string; readonly span: Span }
  | { readonly t: 'sel'; readonly sel: NftSelector; readonly span: Span }
  | { readonly t: 'binop'; readonly op: '&' | '|' | '^' | '<<' | '>>'; readonly left: RawExpr; readonly right: RawExpr; readonly span: Span }
  | { readonly t: 'concat'; readonly items: readonly RawExpr[]; readonly span: Span }
  | { readonly t: 'list'; readonly items: readonly RawExpr[]; readonly span: Span }
  | { readonly t: 'set'; readonly elements: readonly RawElement[]; readonly span: Span }
  | { readonly t: 'setref'; readonly name: string; readonly span: Span }
  | { readonly t: 'map'; readonly key: RawExpr; readonly mappings: RawExpr; readonly span: Span }
  | { readonly t: 'verdict'; readonly verdict: 'accept' | 'drop' | 'return' | 'continue' | 'jump' | 'goto'; readonly chain?: string; readonly span: Span }
  /** `LOW-HIGH` and `ADDR/LEN` written with spaces or from parts (`$a-$b`). */
  | { readonly t: 'range'; readonly low: RawExpr; readonly high: RawExpr; readonly span: Span }
  | { readonly t: 'prefix'; readonly value: RawExpr; readonly length: number; readonly span: Span };

/** A set element: key, and data for maps. */
export interface RawElement {
  readonly key: RawExpr;
  readonly data?: RawExpr;
  readonly counter?: { readonly packets: number; readonly bytes: number };
  readonly comment?: string;
  readonly timeout?: number;
  readonly expires?: number;
  /** Other stateful expressions on the element (`quota 10 bytes`, `limit rate …`). */
  readonly stateful?: readonly RawStatement[];
  readonly span: Span;
}

/** Relational operators (`implicit`: written without one). */
export type RawOp = 'implicit' | '==' | '!=' | '<' | '>' | '<=' | '>=' | 'neg';

/** An unevaluated statement. */
export type RawStatement =
  | { readonly t: 'match'; readonly left: RawExpr; readonly op: RawOp; readonly right: RawExpr; readonly span: Span; readonly flagMask?: RawExpr }
  | { readonly t: 'vmap'; readonly key: RawExpr; readonly mappings: RawExpr; readonly span: Span }
  | { readonly t: 'verdict'; readonly verdict: 'accept' | 'drop' | 'return' | 'continue' | 'jump' | 'goto'; readonly chain?: string; readonly span: Span; readonly chainSpan?: Span;
      /** `jump { RULE; … }`: an anonymous chain bound to this rule, its rules as written. */
      readonly block?: readonly RawBoundRule[] }
  | { readonly t: 'counter'; readonly packets: number; readonly bytes: number; readonly span: Span }
  | { readonly t: 'log'; readonly prefix?: string; readonly level?: string; readonly group?: number; readonly snaplen?: number; readonly queueThreshold?: number; readonly flags?: readonly string[]; readonly span: Span }
  | { readonly t: 'limit'; readonly rate: number; readonly unit: 'second' | 'minute' | 'hour' | 'day' | 'week'; readonly over: boolean; readonly burst?: number; readonly bytes?: boolean; readonly span: Span }
  | { readonly t: 'reject'; readonly with?: { readonly type: 'icmp' | 'icmpv6' | 'icmpx' | 'tcp-reset'; readonly code?: RawExpr }; readonly span: Span }
  | { readonly t: 'nat'; readonly type: 'snat' | 'dnat' | 'masquerade' | 'redirect'; readonly family?: 'ip' | 'ip6'; readonly addr?: RawExpr; readonly port?: RawExpr;
      readonly flags: readonly string[]; readonly span: Span; readonly concat?: boolean; readonly interval?: boolean; readonly prefix?: boolean }
  | { readonly t: 'tproxy'; readonly family?: 'ip' | 'ip6'; readonly addr?: RawExpr; readonly port?: RawExpr; readonly span: Span }
  | { readonly t: 'mangle'; readonly target: RawExpr; readonly value: RawExpr; readonly span: Span }
  | { readonly t: 'notrack'; readonly span: Span }
  /** `reset tcp option NAME|KIND`: the option is overwritten with NOPs. */
  | { readonly t: 'optstrip'; readonly option: string; readonly span: Span }
  | { readonly t: 'comment'; readonly text: string; readonly span: Span }
  | { readonly t: 'objref'; readonly objType: NftObjectType; readonly name: RawExpr; readonly span: Span }
  | { readonly t: 'quota'; readonly over: boolean; readonly bytes: bigint; readonly used: bigint; readonly span: Span }
  | { readonly t: 'connlimit'; readonly count: number; readonly over: boolean; readonly span: Span }
  | { readonly t: 'queue'; readonly num?: RawExpr; readonly flags: readonly ('bypass' | 'fanout')[]; readonly span: Span }
  | { readonly t: 'dup'; readonly addr?: RawExpr; readonly dev?: RawExpr; readonly span: Span }
  | { readonly t: 'fwd'; readonly family?: 'ip' | 'ip6'; readonly addr?: RawExpr; readonly dev: RawExpr; readonly span: Span }
  | { readonly t: 'synproxy'; readonly mss?: number; readonly wscale?: number; readonly flags: readonly ('timestamp' | 'sack-perm')[]; readonly span: Span }
  /** `meter NAME [size N] { KEY [timeout T] STATEMENT }`: an update of a set only the rule names. */
  | { readonly t: 'meter'; readonly name: string; readonly size?: number; readonly key: RawExpr; readonly timeout?: number; readonly stmt: RawStatement; readonly span: Span }
  | { readonly t: 'dynset'; readonly op: 'add' | 'update' | 'delete'; readonly set: string; readonly key: RawExpr; readonly data?: RawExpr;
      readonly timeout?: number; readonly stateful: readonly RawStatement[]; readonly span: Span; readonly setSpan: Span }
  | { readonly t: 'flow'; readonly flowtable: string; readonly span: Span };

/** A rule of an anonymous chain (`jump { … }`). */
export interface RawBoundRule {
  readonly statements: readonly RawStatement[];
  readonly span: Span;
}

/** A chain's `{ type … hook … priority …; policy …; }`. */
export interface RawChainSpec {
  readonly type?: {
    readonly type: NftChainType; readonly hook: NftHook; readonly priority: RawExpr; readonly span: Span; readonly hookSpan: Span; readonly typeSpan: Span;
    readonly devices?: readonly RawExpr[];
  };
  readonly policy?: { readonly policy: string; readonly span: Span };
  readonly comment?: string;
  readonly offload?: boolean;
}

/** A set's or map's declaration body. */
export interface RawSetSpec {
  readonly key?: { readonly types: readonly string[]; readonly span: Span };
  /** `typeof EXPR . EXPR`: the key's expressions. */
  readonly typeofKey?: { readonly exprs: readonly RawExpr[]; readonly span: Span };
  readonly data?: { readonly types: readonly string[]; readonly span: Span; readonly interval?: boolean };
  readonly typeofData?: { readonly expr: RawExpr; readonly span: Span; readonly interval?: boolean };
  /** `type … : counter` (object maps). */
  readonly objType?: { readonly type: NftObjectType; readonly span: Span };
  readonly flags: readonly { readonly flag: string; readonly span: Span }[];
  readonly elements?: RawExpr;
  readonly size?: number;
  readonly comment?: string;
  readonly timeout?: number;
  readonly gcInterval?: number;
  readonly policy?: 'performance' | 'memory';
  readonly autoMerge?: boolean;
  readonly stateful?: readonly RawStatement[];
}

/** A stateful object's declaration body. */
export type RawObjectSpec =
  | { readonly type: 'counter'; readonly packets: number; readonly bytes: number; readonly comment?: string }
  | { readonly type: 'quota'; readonly over: boolean; readonly bytes: bigint; readonly used: bigint; readonly comment?: string }
  | { readonly type: 'limit'; readonly rate: number; readonly unit: 'second' | 'minute' | 'hour' | 'day' | 'week'; readonly over: boolean;
      readonly burst?: number; readonly bytes?: boolean; readonly comment?: string }
  | { readonly type: 'ct helper'; readonly helper?: { readonly name: string; readonly protocol: string; readonly span: Span };
      readonly l3proto?: { readonly value: string; readonly span: Span }; readonly comment?: string }
  | { readonly type: 'ct timeout'; readonly protocol?: string; readonly l3proto?: { readonly value: string; readonly span: Span };
      readonly policy: readonly (readonly [string, number])[]; readonly comment?: string; readonly policySpan?: Span }
  | { readonly type: 'ct expectation'; readonly protocol?: string; readonly dport?: number; readonly timeout?: number; readonly size?: number;
      readonly l3proto?: { readonly value: string; readonly span: Span }; readonly comment?: string }
  | { readonly type: 'secmark'; readonly context: string; readonly comment?: string }
  | { readonly type: 'synproxy'; readonly mss: number; readonly wscale: number; readonly flags: readonly ('timestamp' | 'sack-perm')[]; readonly comment?: string };

/** A flowtable's declaration body. */
export interface RawFlowtableSpec {
  readonly hook?: { readonly hook: string; readonly priority: RawExpr; readonly span: Span };
  readonly devices?: readonly RawExpr[];
  readonly counter?: boolean;
  readonly offload?: boolean;
}

/** Where `add/insert rule` puts the rule. */
export interface RawPosition {
  readonly kind: 'handle' | 'index' | 'position';
  readonly value: number;
  readonly span: Span;
}

/** One command, as `nft -f` runs them in order. Block forms are expanded into commands. */
export type RawCommand =
  | { readonly c: 'table'; readonly op: 'add' | 'create' | 'delete' | 'flush'; readonly family: NftFamily; readonly table: string; readonly span: Span; readonly comment?: string;
      readonly dormant?: boolean; readonly handle?: number }
  | { readonly c: 'chain'; readonly op: 'add' | 'create' | 'delete' | 'flush'; readonly family: NftFamily; readonly table: string; readonly chain: string; readonly spec?: RawChainSpec; readonly span: Span; readonly nameSpan: Span;
      readonly handle?: number }
  | { readonly c: 'rule'; readonly op: 'add' | 'insert' | 'replace' | 'delete'; readonly family: NftFamily; readonly table: string; readonly chain: string; readonly position?: RawPosition; readonly statements: readonly RawStatement[]; readonly span: Span; readonly chainSpan: Span }
  | { readonly c: 'set'; readonly op: 'add' | 'create' | 'delete' | 'flush'; readonly map: boolean; readonly family: NftFamily; readonly table: string; readonly name: string; readonly spec?: RawSetSpec; readonly span: Span; readonly nameSpan: Span;
      readonly handle?: number }
  | { readonly c: 'element'; readonly op: 'add' | 'create' | 'delete'; readonly family: NftFamily; readonly table: string; readonly name: string; readonly elements: RawExpr; readonly span: Span; readonly nameSpan: Span }
  | { readonly c: 'object'; readonly op: 'add' | 'create' | 'delete'; readonly objType: NftObjectType; readonly family: NftFamily; readonly table: string; readonly name: string;
      readonly spec?: RawObjectSpec; readonly span: Span; readonly nameSpan: Span; readonly handle?: number }
  | { readonly c: 'flowtable'; readonly op: 'add' | 'create' | 'delete'; readonly family: NftFamily; readonly table: string; readonly name: string;
      readonly spec?: RawFlowtableSpec; readonly span: Span; readonly nameSpan: Span; readonly handle?: number }
  | { readonly c: 'ruleset'; readonly op: 'flush'; readonly family?: NftFamily; readonly span: Span };
