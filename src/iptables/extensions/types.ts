/**
 * The shape of a netfilter extension module, after `struct xt_match` / `struct xt_target` and
 * iptables' `libxt_NAME.c`: one record per extension that knows its options, how to parse and
 * print them, where it is legal, and (for matches) how to test a packet.
 *
 * @module
 */
import type { Diagnostic } from '../../model/errors.js';
import type { PacketView } from '../../model/packet.js';
import type { Family, HookName, Negatable, Span, TableName } from '../../model/types.js';

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
  /**
   * Further arguments the option consumes after the first one, as getopt's callers do by hand
   * (`--tcp-flags mask comp` takes one more). The dispatcher passes them in
   * {@link OptionOccurrence.extra}; iptables refuses a further argument that starts with `-` or `!`.
   */
  readonly extraArgs?: number;
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
  /** The further arguments of an option with {@link OptionDef.extraArgs}, in order. */
  readonly extra?: readonly { readonly text: string; readonly span: Span }[];
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
  /** Reports something iptables accepts but a user should hear about (a comment cut to 255). */
  readonly warn?: (d: Diagnostic) => void;
  /**
   * User and group names for `owner --uid-owner NAME` (iptables asks `getpwnam`/`getgrnam` of the
   * machine it runs on). Absent: the small Debian base table in `values.ts` (`root` = 0, …).
   */
  readonly accounts?: Accounts;
}

/** Name-to-id tables standing in for `/etc/passwd` and `/etc/group`. */
export interface Accounts {
  readonly users: ReadonlyMap<string, number>;
  readonly groups: ReadonlyMap<string, number>;
}

/** What an extension's load-time check may know about where its rule sits. */
export interface CheckContext {
  readonly family: Family;
  readonly protocol: Negatable<string> | undefined;
  /** The rule's table, when known. */
  readonly table?: string;
  /** The hooks the rule's chain is reachable from, when known (`xt_check_*` `hook_mask`). */
  readonly hooks?: readonly HookName[];
  /**
   * False for a rule in a user chain: the nf_tables back end calls `checkentry` there with an
   * empty `hook_mask` (`nft_match_set_mtchk_param`), so checks a `checkentry` makes on the hook
   * mask itself pass (the extension's `hooks` field is still enforced at commit).
   */
  readonly builtinChain?: boolean;
  /** `nft` (the default) or `legacy`: the back end the rules are loaded with. */
  readonly backend?: 'nft' | 'legacy';
  /** The rule's matches, for a target whose check reads them (`xt_tgchk_param.entryinfo`). */
  readonly matches?: readonly { readonly name: string; readonly options: unknown }[];
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
  /**
   * Other names that load the same module (`-m icmpv6` and `-m ipv6-icmp` load `icmp6`, as
   * `xtables_find_match` maps them). The registry maps them too; iptables-save prints {@link name}.
   */
  readonly aliases?: readonly string[];
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
  /**
   * Load-time checks beyond the static {@link Placement} (option-dependent hooks, protocol needs
   * of one option); returns diagnostics (empty when fine). `checkExtension` in `placement.ts`
   * runs the placement and this together.
   */
  check?(options: O, ctx: CheckContext): Diagnostic[];
}

/** A match module (`-m NAME`). */
export interface MatchExtension<O = any> extends ExtensionBase<O> {
  readonly kind: 'match';
  /**
   * Lowers the options to a test, called once at load. The returned function runs per packet:
   * no allocation, no string comparison of names, no map lookup.
   */
  lower(options: O, family: Family, env?: LowerEnvironment): (packet: PacketView) => boolean;
  /**
   * How faithfully {@link lower} decides: `exact` (default), or `assumed` when the match reads
   * state the simulator does not model (L2 addresses, rate limits, `recent` lists, IPsec…) and
   * lower() follows a documented rule instead. The engine reports such matches in traces.
   */
  readonly evaluates?: 'exact' | 'assumed';
  /**
   * The rule lower() follows for this instance when it is not evaluated exactly (for traces:
   * "assumed: …"), or undefined when it is exact. Present on every `assumed` match and on exact
   * ones with an option we cannot evaluate (`tcp --tcp-option`, `conntrack --ctexpire`).
   */
  assumption?(options: O): string | undefined;
}

/** A target module (`-j NAME`). Its effect is applied by the engine, which knows its name. */
export interface TargetExtension<O = any> extends ExtensionBase<O> {
  readonly kind: 'target';
  /** Whether the target ends the chain walk (DNAT, REDIRECT, REJECT…) or continues (MARK, LOG…). */
  readonly terminal: boolean;
}

/**
 * An ipset as the engine holds it while a namespace runs (the kernel's `struct ip_set`): the
 * `set` match tests packets against it, the `SET` target adds and deletes members.
 */
export interface RuntimeIpset {
  readonly name: string;
  readonly family: Family;
  /** 1 for `hash:ip`/`hash:net`, 2 for the `…,port` types. */
  readonly dimension: number;
  /**
   * `ip_set_test`: whether the address (and, for two dimensions, protocol and port) is a
   * member: `match`, `nomatch` (a `hash:net` exception), or `none`.
   */
  test(addr: readonly number[], proto: number, port: number): 'match' | 'nomatch' | 'none';
  add(addr: readonly number[], proto: number, port: number): void;
  del(addr: readonly number[], proto: number, port: number): void;
}

/**
 * A rate estimator as the engine holds it while a namespace runs (`struct xt_rateest`): `RATEEST`
 * counts packets into it, `rateest` reads its rates. Times are seconds on the namespace's clock.
 */
export interface RuntimeRateEstimator {
  readonly name: string;
  /** One packet of `length` bytes at `now`. */
  add(length: number, now: number): void;
  /** Brings {@link bps} and {@link pps} up to `now`. */
  sample(now: number): void;
  /** Bytes per second at the last {@link sample} (32-bit, as the match reads it). */
  readonly bps: number;
  /** Packets per second at the last {@link sample}. */
  readonly pps: number;
}

/** What lowering may know besides the rule: the namespace's ipsets, by name. */
export interface LowerEnvironment {
  readonly ipsets?: ReadonlyMap<string, RuntimeIpset>;
  /** The namespace's rate estimators (`RATEEST` feeds them, `rateest` reads them), by name. */
  readonly rateEstimators?: ReadonlyMap<string, RuntimeRateEstimator>;
}
