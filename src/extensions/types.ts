/**
 * The shape of a netfilter extension module, after `struct xt_match` / `struct xt_target` and
 * iptables' `libxt_NAME.c`: one record per extension that knows its options, how to parse and
 * print them, where it is legal, and (for matches) how to test a packet.
 *
 * @module
 */
import type { Diagnostic } from '../errors.js';
import type { PacketView } from '../model/packet.js';
import type { Family, HookName, Negatable, Span, TableName } from '../model/types.js';

/** One long option an extension understands. */
export interface OptionDef {
  /** Canonical long name without dashes (`dports`). */
  readonly name: string;
  /** Other accepted long names (`destination-ports`). getopt-style unique prefixes are also accepted. */
  readonly aliases?: readonly string[];
  /** Whether the option takes an argument. */
  readonly arg: boolean;
  /** Whether `!` may precede it. */
  readonly negatable?: boolean;
  /** IPv4 (4) or IPv6 (6) only. */
  readonly family?: Family;
  /** Whether it may be given more than once in one match (`XTOPT_MULTI`). */
  readonly multi?: boolean;
}

/** One occurrence of an option on a rule line. */
export interface OptionOccurrence {
  /** The canonical name from {@link OptionDef.name}. */
  readonly name: string;
  /** As written, e.g. `--to-port`. */
  readonly written: string;
  readonly arg: string | undefined;
  readonly negated: boolean;
  readonly span: Span;
  readonly argSpan: Span | undefined;
}

/** What an extension's parser may know about the rule it is part of. */
export interface ExtensionContext {
  readonly family: Family;
  /** The rule's `-p`, when given. */
  readonly protocol: Negatable<string> | undefined;
  readonly table: string | undefined;
  readonly chain: string | undefined;
  readonly mode: 'strict' | 'lenient';
  /** The span of the `-m NAME` / `-j NAME` token, for errors about the extension as a whole. */
  readonly span: Span;
}

/** Where an extension may be used. Absent fields mean "anywhere". */
export interface Placement {
  readonly tables?: readonly TableName[];
  /** Hooks the rule's chain must be reachable from only (`xt_check_*` `hooks`). */
  readonly hooks?: readonly HookName[];
  /** Protocols (`-p`, not negated) the extension needs (`proto` in `xt_match`). */
  readonly protocols?: readonly string[];
}

/** Common to matches and targets. */
interface ExtensionBase<O> {
  readonly name: string;
  /** Other names for the same module (`NOTRACK` has none; `state` is its own module). */
  readonly family: 'both' | Family;
  readonly options: readonly OptionDef[];
  readonly placement?: Placement;
  /**
   * Builds the options from the occurrences, in order, like xtables' `x6_parse` + `x6_fcheck`.
   * Throws a `NetfilterSimError` (via `fail`) on bad input, naming the token and its span.
   */
  parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): O;
  /**
   * The options as iptables-save prints them, without `-m NAME`/`-j NAME` and with no leading or
   * trailing space (`--dports 80,443`, `! --uid-owner 1337`); empty when there are none.
   */
  save(options: O, family: Family): string;
  /** Load-time checks beyond placement; returns diagnostics (empty when fine). */
  check?(options: O, ctx: { family: Family; protocol: Negatable<string> | undefined }): Diagnostic[];
}

/** A match module (`-m NAME`). */
export interface MatchExtension<O = any> extends ExtensionBase<O> {
  readonly kind: 'match';
  /**
   * Lowers the options to a test, called once at load. The returned function runs per packet:
   * no allocation, no string comparison of names, no map lookup.
   */
  lower(options: O, family: Family): (packet: PacketView) => boolean;
}

/** A target module (`-j NAME`). Its effect is applied by the engine, which knows its name. */
export interface TargetExtension<O = any> extends ExtensionBase<O> {
  readonly kind: 'target';
  /** Whether the target ends the chain walk (DNAT, REDIRECT, REJECT…) or continues (MARK, LOG…). */
  readonly terminal: boolean;
}
