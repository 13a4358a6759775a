/**
 * What the nft parser produces before evaluation: commands with their statements, where
 * constants are still symbols (`10.0.0.0/8`, `established`, `$var`) and take their type from
 * what they are compared with, as in nft's `parser_bison.y` → `evaluate.c` split.
 *
 * @module
 */
import type { Span } from '../../model/types.js';
import type { NftChainType, NftFamily, NftHook, NftSelector } from '../model.js';

/** An unevaluated expression. */
export type RawExpr =
  | { readonly t: 'sym'; readonly text: string; readonly quoted: boolean; readonly span: Span }
  | { readonly t: 'var'; readonly name: string; readonly span: Span }
  | { readonly t: 'sel'; readonly sel: NftSelector; readonly span: Span }
  | { readonly t: 'binop'; readonly op: '&' | '|' | '^'; readonly left: RawExpr; readonly right: RawExpr; readonly span: Span }
  | { readonly t: 'concat'; readonly items: readonly RawExpr[]; readonly span: Span }
  | { readonly t: 'list'; readonly items: readonly RawExpr[]; readonly span: Span }
  | { readonly t: 'set'; readonly elements: readonly RawElement[]; readonly span: Span }
  | { readonly t: 'setref'; readonly name: string; readonly span: Span }
  | { readonly t: 'map'; readonly key: RawExpr; readonly mappings: RawExpr; readonly span: Span }
  | { readonly t: 'verdict'; readonly verdict: 'accept' | 'drop' | 'return' | 'continue' | 'jump' | 'goto'; readonly chain?: string; readonly span: Span };

/** A set element: key, and data for maps. */
export interface RawElement {
  readonly key: RawExpr;
  readonly data?: RawExpr;
  readonly counter?: { readonly packets: number; readonly bytes: number };
  readonly comment?: string;
  readonly span: Span;
}

/** An unevaluated statement. */
export type RawStatement =
  | { readonly t: 'match'; readonly left: RawExpr; readonly op: 'implicit' | '==' | '!=' | '<' | '>' | '<=' | '>='; readonly right: RawExpr; readonly span: Span; readonly flagMask?: RawExpr }
  | { readonly t: 'vmap'; readonly key: RawExpr; readonly mappings: RawExpr; readonly span: Span }
  | { readonly t: 'verdict'; readonly verdict: 'accept' | 'drop' | 'return' | 'continue' | 'jump' | 'goto'; readonly chain?: string; readonly span: Span; readonly chainSpan?: Span }
  | { readonly t: 'counter'; readonly packets: number; readonly bytes: number; readonly span: Span }
  | { readonly t: 'log'; readonly prefix?: string; readonly level?: string; readonly group?: number; readonly snaplen?: number; readonly queueThreshold?: number; readonly flags?: readonly string[]; readonly span: Span }
  | { readonly t: 'limit'; readonly rate: number; readonly unit: 'second' | 'minute' | 'hour' | 'day' | 'week'; readonly over: boolean; readonly burst?: number; readonly bytes?: string; readonly span: Span }
  | { readonly t: 'reject'; readonly with?: { readonly type: 'icmp' | 'icmpv6' | 'icmpx' | 'tcp-reset'; readonly code?: RawExpr }; readonly span: Span }
  | { readonly t: 'nat'; readonly type: 'snat' | 'dnat' | 'masquerade' | 'redirect'; readonly family?: 'ip' | 'ip6'; readonly addr?: RawExpr; readonly port?: RawExpr; readonly flags: readonly string[]; readonly span: Span }
  | { readonly t: 'tproxy'; readonly family?: 'ip' | 'ip6'; readonly addr?: RawExpr; readonly port?: RawExpr; readonly span: Span }
  | { readonly t: 'mangle'; readonly target: RawExpr; readonly value: RawExpr; readonly span: Span }
  | { readonly t: 'notrack'; readonly span: Span }
  | { readonly t: 'setupdate'; readonly op: 'add' | 'update'; readonly set: string; readonly setSpan: Span; readonly key: RawExpr; readonly span: Span }
  | { readonly t: 'comment'; readonly text: string; readonly span: Span };

/** A chain's `{ type … hook … priority …; policy …; }`. */
export interface RawChainSpec {
  readonly type?: { readonly type: NftChainType; readonly hook: NftHook; readonly priority: RawExpr; readonly span: Span; readonly hookSpan: Span; readonly typeSpan: Span };
  readonly policy?: { readonly policy: string; readonly span: Span };
  readonly comment?: string;
}

/** A set's or map's declaration body. */
export interface RawSetSpec {
  readonly key?: { readonly types: readonly string[]; readonly span: Span };
  readonly data?: { readonly type: string; readonly span: Span };
  readonly flags: readonly { readonly flag: string; readonly span: Span }[];
  readonly elements?: RawExpr;
  readonly size?: number;
  readonly comment?: string;
  /** `timeout 3h`, in milliseconds. */
  readonly timeout?: number;
}

/** Where `add/insert rule` puts the rule. */
export interface RawPosition {
  readonly kind: 'handle' | 'index' | 'position';
  readonly value: number;
  readonly span: Span;
}

/** One command, as `nft -f` runs them in order. Block forms are expanded into commands. */
export type RawCommand =
  | { readonly c: 'table'; readonly op: 'add' | 'create' | 'delete' | 'flush'; readonly family: NftFamily; readonly table: string; readonly span: Span; readonly comment?: string }
  | { readonly c: 'chain'; readonly op: 'add' | 'create' | 'delete' | 'flush'; readonly family: NftFamily; readonly table: string; readonly chain: string; readonly spec?: RawChainSpec; readonly span: Span; readonly nameSpan: Span }
  | { readonly c: 'rule'; readonly op: 'add' | 'insert' | 'replace' | 'delete'; readonly family: NftFamily; readonly table: string; readonly chain: string; readonly position?: RawPosition; readonly statements: readonly RawStatement[]; readonly span: Span; readonly chainSpan: Span }
  | { readonly c: 'set'; readonly op: 'add' | 'create' | 'delete' | 'flush'; readonly map: boolean; readonly family: NftFamily; readonly table: string; readonly name: string; readonly spec?: RawSetSpec; readonly span: Span; readonly nameSpan: Span }
  | { readonly c: 'element'; readonly op: 'add' | 'delete'; readonly family: NftFamily; readonly table: string; readonly name: string; readonly elements: RawExpr; readonly span: Span; readonly nameSpan: Span }
  | { readonly c: 'ruleset'; readonly op: 'flush'; readonly span: Span };
