/**
 * Parses one `iptables`/`ip6tables` command (an argument vector with spans) the way iptables'
 * `do_parse` does: getopt_long over the main options and the options of every loaded extension
 * (unique prefixes accepted, the most recently loaded extension first), `!` before an option,
 * implicit protocol matches (`-p tcp --dport 80` loads `tcp`), one command per invocation.
 *
 * @module
 */
import { diagnostic, fail, NetfilterSimError, type Diagnostic } from '../../model/errors.js';
import { MATCHES, TARGETS } from '../extensions/registry.js';
import type { ExtensionContext, MatchExtension, OptionDef, OptionOccurrence, TargetExtension } from '../extensions/types.js';
import { MAX_CHAIN_NAME_LENGTH, type Cidr, type Counters, type Family, type Match, type Negatable, type Rule, type Span, type Target } from '../../model/types.js';
import { parseCidr } from '../../model/address.js';
import type { Token } from './lexer.js';
import { parseProtocol, protocolMatchName, protocolName } from '../../model/protocols.js';
import { MAX_RULES, utf8Length } from '../../model/limits.js';
import { expectArgument, expectArgv, expectOneOf } from '../../model/guard.js';

/** Interface names are at most 15 characters (`IFNAMSIZ` 16, including the NUL). */
export const MAX_INTERFACE_NAME_LENGTH = 15;

/** The commands iptables knows. */
export type CommandName =
  | 'append' | 'delete' | 'check' | 'insert' | 'replace' | 'list' | 'list-rules' | 'flush' | 'zero'
  | 'new-chain' | 'delete-chain' | 'rename-chain' | 'policy';

/** One parsed command. Rules are expanded: `-s a,b` gives two. */
export interface ParsedCommand {
  readonly command: CommandName;
  readonly table: string | undefined;
  readonly chain: string | undefined;
  readonly chainSpan: Span | undefined;
  /** `-I CHAIN N`, `-R CHAIN N`, `-D CHAIN N` (1-based). */
  readonly ruleNumber: number | undefined;
  readonly rules: readonly Rule[];
  readonly policy: string | undefined;
  readonly newName: string | undefined;
  readonly counters: Counters | undefined;
  readonly span: Span;
}

/** How to parse. */
export interface CommandOptions {
  readonly family: Family;
  /** `strict`: what iptables accepts; `lenient`: also what generators feed fake parsers. */
  readonly mode: 'strict' | 'lenient';
  /** Inside `iptables-restore` input: `-t` is refused and the table is given. */
  readonly restoreTable?: string;
  /** The original text of the rule line, kept on the rule. */
  readonly text?: string;
  /** Receives warnings (lenient mode's dropped options). */
  readonly onWarning?: (d: Diagnostic) => void;
}

interface MainOpt {
  readonly name: string;
  readonly short: string;
  readonly arg: 0 | 1 | 2;
}

/** iptables' `original_opts` (iptables/iptables.c, 1.8.9). */
const MAIN_OPTS: readonly MainOpt[] = [
  { name: 'append', short: 'A', arg: 1 }, { name: 'delete', short: 'D', arg: 1 },
  { name: 'check', short: 'C', arg: 1 }, { name: 'insert', short: 'I', arg: 1 },
  { name: 'replace', short: 'R', arg: 1 }, { name: 'list', short: 'L', arg: 2 },
  { name: 'list-rules', short: 'S', arg: 2 }, { name: 'flush', short: 'F', arg: 2 },
  { name: 'zero', short: 'Z', arg: 2 }, { name: 'new-chain', short: 'N', arg: 1 },
  { name: 'delete-chain', short: 'X', arg: 2 }, { name: 'rename-chain', short: 'E', arg: 1 },
  { name: 'policy', short: 'P', arg: 1 }, { name: 'source', short: 's', arg: 1 },
  { name: 'destination', short: 'd', arg: 1 }, { name: 'src', short: 's', arg: 1 },
  { name: 'dst', short: 'd', arg: 1 }, { name: 'protocol', short: 'p', arg: 1 },
  { name: 'in-interface', short: 'i', arg: 1 }, { name: 'jump', short: 'j', arg: 1 },
  { name: 'table', short: 't', arg: 1 }, { name: 'match', short: 'm', arg: 1 },
  { name: 'numeric', short: 'n', arg: 0 }, { name: 'out-interface', short: 'o', arg: 1 },
  { name: 'verbose', short: 'v', arg: 0 }, { name: 'wait', short: 'w', arg: 2 },
  { name: 'wait-interval', short: 'W', arg: 2 }, { name: 'exact', short: 'x', arg: 0 },
  { name: 'fragments', short: 'f', arg: 0 }, { name: 'version', short: 'V', arg: 0 },
  { name: 'help', short: 'h', arg: 2 }, { name: 'line-numbers', short: '0', arg: 0 },
  { name: 'modprobe', short: 'M', arg: 1 }, { name: 'set-counters', short: 'c', arg: 1 },
  { name: 'goto', short: 'g', arg: 1 }, { name: 'ipv4', short: '4', arg: 0 },
  { name: 'ipv6', short: '6', arg: 0 },
];
const SHORT_ARG: Record<string, 0 | 1 | 2> = {};
for (const o of MAIN_OPTS) SHORT_ARG[o.short] = o.arg;
SHORT_ARG['b'] = 0;

const COMMAND_OF: Record<string, CommandName> = {
  A: 'append', D: 'delete', C: 'check', I: 'insert', R: 'replace', L: 'list', S: 'list-rules',
  F: 'flush', Z: 'zero', N: 'new-chain', X: 'delete-chain', E: 'rename-chain', P: 'policy',
};
const INVERTIBLE = new Set(['s', 'd', 'p', 'i', 'o', 'f']);
const STANDARD_VERDICTS = new Set(['ACCEPT', 'DROP', 'RETURN']);
/** The names `xtables_find_target` maps to the standard target. */
export const STANDARD_TARGET_NAMES: ReadonlySet<string> = new Set(['ACCEPT', 'DROP', 'QUEUE', 'RETURN']);
/** Target extensions Debian's iptables 1.8.9 can load (`/usr/lib/…/xtables/lib{xt,ipt,ip6t}_NAME.so`). */
export const LOADABLE_TARGETS: ReadonlySet<string> = new Set([
  'AUDIT', 'CHECKSUM', 'CLASSIFY', 'CLUSTERIP', 'CONNMARK', 'CONNSECMARK', 'CT', 'DNAT', 'DNPT', 'DSCP', 'ECN', 'HL', 'HMARK',
  'IDLETIMER', 'LED', 'LOG', 'MARK', 'MASQUERADE', 'NETMAP', 'NFLOG', 'NFQUEUE', 'NOTRACK', 'RATEEST', 'REDIRECT',
  'REJECT', 'SECMARK', 'SET', 'SNAT', 'SNPT', 'SYNPROXY', 'TCPMSS', 'TCPOPTSTRIP', 'TEE', 'TOS', 'TPROXY', 'TRACE', 'TTL', 'ULOG',
]);

/**
 * Extensions iptables 1.8.9 knows but the kernel the differential suites run on (Debian 12's) has
 * no module for: iptables-restore --test takes the rule with a warning ("Extension NAME revision 0
 * not supported, missing kernel module?") and the load fails at its line (RULE_APPEND failed (No
 * such file or directory)). Refused here as the load refuses them. Name → kernel module.
 */
export const KERNEL_MISSING_MATCHES: ReadonlyMap<string, string> = new Map([['ipvs', 'xt_ipvs']]);
/** Targets, as {@link KERNEL_MISSING_MATCHES}. */
export const KERNEL_MISSING_TARGETS: ReadonlyMap<string, string> = new Map([['LED', 'xt_LED']]);

function kernelMissing(kind: 'match' | 'target', name: string, module: string, span: Span) {
  return diagnostic('UNSUPPORTED', `${kind} "${name}": the kernel has no ${module} module (iptables warns "Extension ${name} revision 0 not supported, missing kernel module?" and the load fails: RULE_APPEND failed (No such file or directory))`, span, name);
}

/** An extension loaded into the rule being parsed. */
interface Loaded {
  readonly kind: 'match' | 'target';
  readonly ext: MatchExtension | TargetExtension;
  readonly name: string;
  readonly span: Span;
  readonly implicit: boolean;
  readonly occurrences: OptionOccurrence[];
  /** `-p` as it stood when the extension's first option was parsed (modules read it then). */
  protocolAtFirst?: Negatable<string> | undefined | null;
}

/** An option candidate for getopt matching. */
type Candidate = { readonly main: MainOpt } | { readonly loaded: Loaded; readonly def: OptionDef; readonly alias?: string };

interface PrefixEntry {
  first: Candidate;
  exact: Candidate | undefined;
  keys: string[];
  by: Loaded | null;
}

function prefixKey(c: Candidate): string {
  return 'main' in c ? `main:${c.main.short}` : `${c.loaded.span.offset}:${canonicalDefName(c)}`;
}

/** Adds every prefix of `c`'s name to `index`; a later `by` (a newer extension) is chosen first. */
function indexPrefixes(index: Map<string, PrefixEntry>, c: Candidate, by: Loaded | null): void {
  const name = candidateName(c);
  const key = prefixKey(c);
  for (let n = 1; n <= name.length; n++) {
    const p = name.slice(0, n);
    const e = index.get(p);
    if (!e) {
      index.set(p, { first: c, exact: n === name.length ? c : undefined, keys: [key], by });
      continue;
    }
    if (n === name.length && (e.exact === undefined || (by !== null && e.by !== by))) e.exact = c;
    if (by !== null && e.by !== by) {
      e.first = c;
      e.by = by;
    }
    if (!e.keys.includes(key) && e.keys.length < 2) e.keys.push(key);
  }
}

const MAIN_PREFIXES = new Map<string, PrefixEntry>();
for (const m of MAIN_OPTS) indexPrefixes(MAIN_PREFIXES, { main: m }, null);

function candidateName(c: Candidate): string {
  return 'main' in c ? c.main.name : (c.alias ?? c.def.name);
}

function isNonOption(t: Token | undefined): boolean {
  return t !== undefined && t.text[0] !== '-' && t.text[0] !== '!';
}

const spanAfter = (s: Span): Span => ({ line: s.line, column: s.column + s.length, offset: s.offset + s.length, length: 1 });

/**
 * Parses a command's tokens. Throws {@link NetfilterSimError} with the span of the offending
 * token on the first error, as iptables stops at the first error.
 */
export function parseCommandTokens(tokens: readonly Token[], options: CommandOptions): ParsedCommand {
  const { family } = options;
  const first = tokens[0];
  const wholeSpan: Span = first
    ? { ...first.span, length: Math.max(1, tokens[tokens.length - 1]!.span.offset + tokens[tokens.length - 1]!.span.length - first.span.offset) }
    : { line: 1, column: 1, offset: 0, length: 1 };

  let command: CommandName | undefined;
  let commandSpan: Span | undefined;
  let chain: string | undefined;
  let chainSpan: Span | undefined;
  let ruleNumber: number | undefined;
  let policy: string | undefined;
  let policySpan: Span | undefined;
  let newName: string | undefined;
  let table = options.restoreTable;
  let counters: Counters | undefined;
  let invert = false;
  let invertSpan: Span | undefined;

  const seen = new Set<string>();
  let sources: { negated: boolean; values: Cidr[] } | undefined;
  let destinations: { negated: boolean; values: Cidr[] } | undefined;
  let inInterface: Negatable<string> | undefined;
  let outInterface: Negatable<string> | undefined;
  let protocol: Negatable<string> | undefined;
  let protocolNumber: number | undefined;
  let protoUsed = false;
  let fragment: Negatable<true> | undefined;
  const loaded: Loaded[] = [];
  let targetLoaded: Loaded | undefined;
  let target: Target | null = null;
  let jumpSeen = false;

  const setCommand = (c: CommandName, t: Token): void => {
    if (command !== undefined) fail('BAD_COMMAND', `cannot use -${t.text.replace(/^-+/, '')} with another command (-${commandShort(command)})`, t.span, t.text);
    command = c;
    commandSpan = t.span;
  };

  const ctxFor = (l: Loaded): ExtensionContext => ({
    family, protocol: l.protocolAtFirst === null ? protocol : l.protocolAtFirst, table, chain, mode: options.mode, span: l.span,
    ...(options.onWarning ? { warn: options.onWarning } : {}),
  });

  const loadMatch = (name: string, span: Span, implicit: boolean): Loaded | undefined => {
    const ext = MATCHES.get(name);
    if (!ext || (ext.family !== 'both' && ext.family !== family)) {
      const module = ext ? undefined : KERNEL_MISSING_MATCHES.get(name);
      const d = module !== undefined ? kernelMissing('match', name, module, span) : ext
        ? diagnostic('UNKNOWN_MATCH', `match "${name}" exists only in ${ext.family === 4 ? 'iptables' : 'ip6tables'}, not ${family === 4 ? 'iptables' : 'ip6tables'}`, span, name)
        : diagnostic('UNKNOWN_MATCH', `unknown match "${name}"${suggest(name, [...MATCHES.keys()])}`, span, name);
      if (options.mode === 'lenient' && options.onWarning) {
        options.onWarning({ ...d, message: d.message + ' (ignored)' });
        return undefined;
      }
      throw new NetfilterSimError(d);
    }
    const l: Loaded = { kind: 'match', ext, name: ext.name, span, implicit, occurrences: [], protocolAtFirst: null };
    loaded.push(l);
    indexLoaded(l);
    return l;
  };

  const candidates = (): Candidate[] => {
    const out: Candidate[] = [];
    for (const m of MAIN_OPTS) out.push({ main: m });
    // xtables_merge_options places newly loaded options before older ones.
    const exts = targetLoaded ? [...loaded, targetLoaded] : [...loaded];
    exts.sort((a, b) => b.span.offset - a.span.offset);
    for (const l of exts) for (const def of l.ext.options) {
      if (def.family !== undefined && def.family !== family) continue;
      out.push({ loaded: l, def });
      for (const alias of def.aliases ?? []) out.push({ loaded: l, def, alias });
    }
    return out;
  };

  // Extension option names, exactly (the most recently loaded extension first), and, once an
  // abbreviation is seen, every prefix of them with the option it selects first and up to two
  // distinct options it could mean. Both are kept up to date as extensions load, so that finding an
  // option costs its length, not the number of options loaded so far (a command with thousands of
  // -m would otherwise be quadratic). Main options, which come first, are in MAIN_PREFIXES.
  const exactExt = new Map<string, { c: Candidate; by: Loaded }>();
  let prefixes: Map<string, PrefixEntry> | null = null;
  const indexOne = (l: Loaded, c: Candidate): void => {
    const name = candidateName(c);
    const e = exactExt.get(name);
    if (!e || e.by !== l) exactExt.set(name, { c, by: l });
    if (prefixes) indexPrefixes(prefixes, c, l);
  };
  const indexLoaded = (l: Loaded): void => {
    for (const def of l.ext.options) {
      if (def.family !== undefined && def.family !== family) continue;
      indexOne(l, { loaded: l, def });
      for (const alias of def.aliases ?? []) indexOne(l, { loaded: l, def, alias });
    }
  };
  const prefixIndex = (): Map<string, PrefixEntry> => {
    if (prefixes) return prefixes;
    const built = new Map<string, PrefixEntry>();
    const all = targetLoaded ? [...loaded, targetLoaded] : [...loaded];
    all.sort((a, b) => a.span.offset - b.span.offset);
    for (const l of all) for (const def of l.ext.options) {
      if (def.family !== undefined && def.family !== family) continue;
      indexPrefixes(built, { loaded: l, def }, l);
      for (const alias of def.aliases ?? []) indexPrefixes(built, { loaded: l, def, alias }, l);
    }
    return (prefixes = built);
  };

  // Option names each loaded extension has seen, for "can only be used once" in constant time.
  const seenOptions = new Map<Loaded, Set<string>>();
  const occurred = (l: Loaded, name: string): boolean => {
    let set = seenOptions.get(l);
    if (!set) seenOptions.set(l, (set = new Set()));
    if (set.has(name)) return true;
    set.add(name);
    return false;
  };

  const findLong = (name: string, t: Token): Candidate | undefined => {
    const m = MAIN_PREFIXES.get(name);
    if (m?.exact) return m.exact;
    const x = exactExt.get(name);
    if (x) return x.c;
    const e = prefixIndex().get(name);
    if (!m && !e) return undefined;
    const keys = new Set([...(m?.keys ?? []), ...(e?.keys ?? [])]);
    if (keys.size > 1) {
      const prefixed = candidates().filter((c) => candidateName(c).startsWith(name));
      fail('UNKNOWN_OPTION', `option "--${name}" is ambiguous (${prefixed.map((c) => '--' + candidateName(c)).join(', ')})`, t.span, t.text);
    }
    return m?.first ?? e!.first;
  };

  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!;
    const text = t.text;
    i++;
    if (text === '!' ) {
      if (invert) fail('MULTIPLE_NEGATION', 'multiple consecutive ! not allowed', t.span, text);
      invert = true;
      invertSpan = t.span;
      continue;
    }
    if (text.length < 2 || text[0] !== '-') {
      fail('UNEXPECTED_TOKEN', `bad argument "${text}"`, t.span, text);
    }

    let shortOpt: string | undefined;
    let cand: Candidate | undefined;
    let inlineArg: string | undefined;
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const name = eq >= 0 ? text.slice(2, eq) : text.slice(2);
      if (eq >= 0) inlineArg = text.slice(eq + 1);
      if (name.length === 0) fail('UNEXPECTED_TOKEN', `bad argument "${text}"`, t.span, text);
      cand = findLong(name, t);
      if (!cand) {
        // command_default: try loading the protocol's match, then retry the option.
        if (protocolNumber !== undefined && !protoUsed) {
          const pm = protocolMatchName(protocolNumber, family);
          protoUsed = true;
          if (pm && MATCHES.has(pm) && !loaded.some((l) => l.name === pm)) {
            loadMatch(pm, t.span, true);
            i--;
            continue;
          }
        }
        if (options.mode === 'lenient' && options.onWarning) {
          // Lenient: the option is dropped with a warning, as fake parsers ignore what they don't know.
          options.onWarning(diagnostic('UNKNOWN_OPTION', `unknown option "${text}" ignored (iptables would refuse it)`, t.span, text));
          if (inlineArg === undefined && isNonOption(tokens[i])) i++;
          continue;
        }
        fail('UNKNOWN_OPTION', `unknown option "${text}"${protocolHint(name, protocol)}`, t.span, text);
      }
      if ('main' in cand) shortOpt = cand.main.short;
    } else {
      shortOpt = text[1]!;
      if (SHORT_ARG[shortOpt] === undefined) fail('UNKNOWN_OPTION', `unknown option "${text}"`, t.span, text);
      if (text.length > 2) inlineArg = text.slice(2);
    }

    // Fetch the argument as getopt would.
    const takeArg = (kind: 0 | 1 | 2): { value: string | undefined; span: Span | undefined } => {
      if (kind === 0) {
        if (inlineArg !== undefined && text.startsWith('--')) fail('UNEXPECTED_TOKEN', `option "${text.split('=')[0]}" doesn't allow an argument`, t.span, text);
        return { value: undefined, span: undefined };
      }
      if (inlineArg !== undefined) return { value: inlineArg, span: t.span };
      if (kind === 1) {
        const a = tokens[i];
        if (!a) fail('MISSING_ARGUMENT', `option "${text}" requires an argument`, spanAfter(t.span), text);
        i++;
        return { value: a.text, span: a.span };
      }
      return { value: undefined, span: undefined };
    };

    if (cand && !('main' in cand)) {
      const { loaded: l, def } = cand;
      const arg = takeArg(def.arg ? 1 : 0);
      if (invert && !def.negatable) fail('BAD_NEGATION', `option "--${def.name}" cannot be inverted`, invertSpan, '!');
      const canonical = canonicalDefName(cand);
      if (!def.multi && occurred(l, canonical)) {
        fail('DUPLICATE_OPTION', `option "--${canonical}" can only be used once`, t.span, text);
      }
      const extra: { text: string; span: Span }[] = [];
      for (let k = 0; k < (def.extraArgs ?? 0); k++) {
        const nt = tokens[i];
        if (!isNonOption(nt)) break;
        extra.push({ text: nt!.text, span: nt!.span });
        i++;
      }
      if (l.occurrences.length === 0) l.protocolAtFirst = protocol;
      const occ: OptionOccurrence = def.extraArgs
        ? { name: canonical, written: text, arg: arg.value, negated: invert, span: t.span, argSpan: arg.span, extra }
        : { name: canonical, written: text, arg: arg.value, negated: invert, span: t.span, argSpan: arg.span };
      l.occurrences.push(occ);
      invert = false;
      continue;
    }

    const s = shortOpt!;
    const needsInvert = INVERTIBLE.has(s);
    if (invert && !needsInvert) fail('BAD_NEGATION', `cannot have ! before -${s}`, invertSpan, '!');
    const negated = invert;
    invert = false;

    switch (s) {
      case 'A': case 'C': case 'D': case 'I': case 'R': case 'N': case 'E': case 'P': {
        const a = takeArg(1);
        setCommand(COMMAND_OF[s]!, t);
        chain = a.value;
        chainSpan = a.span;
        if (s === 'N' || s === 'E') checkChainName(chain!, chainSpan!);
        if (s === 'N' && (STANDARD_TARGET_NAMES.has(chain!) || LOADABLE_TARGETS.has(chain!) || TARGETS.has(chain!))) {
          fail('BAD_CHAIN_NAME', `chain name "${chain}" may not clash with a target name`, chainSpan, chain);
        }
        if (s === 'I' || s === 'D' || s === 'R') {
          if (isNonOption(tokens[i])) {
            const n = tokens[i]!;
            i++;
            ruleNumber = parseRuleNumber(n);
          } else if (s === 'R') fail('BAD_RULE_NUMBER', '-R requires a rule number', spanAfter(a.span!), text);
          else if (s === 'I') ruleNumber = 1;
        }
        if (s === 'P' || s === 'E') {
          if (!isNonOption(tokens[i])) fail('MISSING_ARGUMENT', s === 'P' ? '-P requires a chain and a policy' : '-E requires old-chain-name and new-chain-name', spanAfter(a.span!), text);
          const n = tokens[i]!;
          i++;
          if (s === 'P') {
            policy = n.text;
            policySpan = n.span;
          } else {
            newName = n.text;
            checkChainName(n.text, n.span);
          }
        }
        break;
      }
      case 'L': case 'S': case 'F': case 'Z': case 'X': {
        const a = takeArg(2);
        setCommand(COMMAND_OF[s]!, t);
        if (a.value !== undefined) {
          chain = a.value;
          chainSpan = a.span;
        } else if (isNonOption(tokens[i])) {
          chain = tokens[i]!.text;
          chainSpan = tokens[i]!.span;
          i++;
        }
        if ((s === 'L' || s === 'S' || s === 'Z') && chain !== undefined && isNonOption(tokens[i])) {
          ruleNumber = parseRuleNumber(tokens[i]!);
          i++;
        }
        break;
      }
      case 's': case 'd': {
        const a = takeArg(1);
        if (seen.has(s)) fail('DUPLICATE_OPTION', `multiple -${s} flags not allowed`, t.span, text);
        seen.add(s);
        const values = a.value!.split(',').map((part) => {
          const c = parseCidr(part, family);
          if (!c) fail('BAD_ADDRESS', `invalid ${family === 4 ? 'IPv4' : 'IPv6'} address "${part}"`, a.span, a.value);
          return c;
        });
        if (s === 's') sources = { negated, values };
        else destinations = { negated, values };
        if (negated && values.length > 1) fail('BAD_NEGATION', `! not allowed with multiple ${s === 's' ? 'source' : 'destination'} or ${s === 's' ? 'destination' : 'source'} IP addresses`, invertSpan, '!');
        break;
      }
      case 'p': {
        const a = takeArg(1);
        if (seen.has('p')) fail('DUPLICATE_OPTION', 'multiple -p flags not allowed', t.span, text);
        seen.add('p');
        const lower = a.value!.toLowerCase();
        const num = parseProtocol(lower);
        if (num === null) fail('BAD_PROTOCOL', `unknown protocol "${a.value}" specified`, a.span, a.value);
        if (num === 0 && negated) fail('BAD_PROTOCOL', 'rule would never match protocol', a.span, a.value);
        if (family === 6 && num === 44) fail('BAD_PROTOCOL', '"-p ipv6-frag" is not supported by ip6tables (use -m frag)', a.span, a.value);
        protocolNumber = num;
        protocol = num === 0 ? undefined : { negated, value: protocolName(num) };
        break;
      }
      case 'i': case 'o': {
        const a = takeArg(1);
        if (seen.has(s)) fail('DUPLICATE_OPTION', `multiple -${s} flags not allowed`, t.span, text);
        seen.add(s);
        const name = a.value!;
        if (utf8Length(name) > MAX_INTERFACE_NAME_LENGTH) fail('BAD_INTERFACE', `interface name "${name}" must be shorter than ${MAX_INTERFACE_NAME_LENGTH + 1} bytes`, a.span, name);
        if (/[\s/]/.test(name)) fail('BAD_INTERFACE', `invalid character in interface name "${name}"`, a.span, name);
        const v = { negated, value: name };
        if (s === 'i') inInterface = v;
        else outInterface = v;
        break;
      }
      case 'f': {
        takeArg(0);
        if (family === 6) fail('UNKNOWN_OPTION', 'unknown option "-f" (ip6tables has no -f; use -m frag)', t.span, text);
        if (seen.has('f')) fail('DUPLICATE_OPTION', 'multiple -f flags not allowed', t.span, text);
        seen.add('f');
        fragment = { negated, value: true };
        break;
      }
      case 'j': case 'g': {
        const a = takeArg(1);
        if (jumpSeen) fail('DUPLICATE_OPTION', 'multiple -j/-g flags not allowed', t.span, text);
        jumpSeen = true;
        const name = a.value!;
        if (name.length === 0) fail('BAD_VALUE', 'invalid target name (too short)', a.span, name);
        if (utf8Length(name) > MAX_CHAIN_NAME_LENGTH) fail('CHAIN_NAME_TOO_LONG', `invalid target name "${name}" (${MAX_CHAIN_NAME_LENGTH} bytes max)`, a.span, name);
        if (/\s/.test(name)) fail('BAD_CHAIN_NAME', `invalid target name "${name}"`, a.span, name);
        if (s === 'g') {
          target = { kind: 'goto', chain: name, span: a.span! };
          break;
        }
        if (STANDARD_VERDICTS.has(name)) {
          target = { kind: 'verdict', verdict: name as 'ACCEPT', span: a.span! };
          break;
        }
        const ext = TARGETS.get(name);
        if (ext && (ext.family === 'both' || ext.family === family)) {
          targetLoaded = { kind: 'target', ext, name: ext.name, span: a.span!, implicit: false, occurrences: [], protocolAtFirst: null };
          indexLoaded(targetLoaded);
        } else if (!ext && KERNEL_MISSING_TARGETS.has(name) && options.mode !== 'lenient') {
          throw new NetfilterSimError(kernelMissing('target', name, KERNEL_MISSING_TARGETS.get(name)!, a.span!));
        } else if (!ext && LOADABLE_TARGETS.has(name) && options.mode !== 'lenient') {
          // iptables would load the extension; say so rather than blame its options.
          fail('UNSUPPORTED', `target "${name}" is an iptables extension netfilter-sim does not support`, a.span, name);
        } else {
          target = { kind: 'jump', chain: name, span: a.span! };
        }
        break;
      }
      case 'm': {
        const a = takeArg(1);
        loadMatch(a.value!, a.span!, false);
        break;
      }
      case 't': {
        const a = takeArg(1);
        if (options.restoreTable !== undefined) fail('BAD_COMMAND', 'the -t option cannot be used in iptables-restore input', t.span, text);
        if (seen.has('t')) fail('DUPLICATE_OPTION', 'multiple -t flags not allowed', t.span, text);
        seen.add('t');
        table = a.value;
        break;
      }
      case 'c': {
        const a = takeArg(1);
        const b = tokens[i];
        if (!isNonOption(b) && !/^\d+$/.test(b?.text ?? '')) fail('BAD_COUNTERS', '-c requires packet and byte counter', spanAfter(a.span!), text);
        i++;
        const p = Number(a.value);
        const by = Number(b!.text);
        if (!/^\d+$/.test(a.value!) || !/^\d+$/.test(b!.text)) fail('BAD_COUNTERS', 'invalid counters for -c', a.span, a.value);
        if (!Number.isSafeInteger(p) || !Number.isSafeInteger(by)) {
          fail('BAD_COUNTERS', `-c ${a.value} ${b!.text}: a counter past ${Number.MAX_SAFE_INTEGER} (2^53 - 1), the largest netfilter-sim keeps exactly`, a.span, a.value);
        }
        counters = { packets: p, bytes: by };
        break;
      }
      case 'w': case 'W': {
        const a = takeArg(2);
        if (a.value === undefined && isNonOption(tokens[i])) i++;
        break;
      }
      case 'M': takeArg(1); break;
      case 'n': case 'v': case 'x': case '0': case '4': case '6': case 'b':
        takeArg(0);
        if (s === '4' && family === 6) fail('WRONG_FAMILY', 'this is ip6tables; -4 is not allowed', t.span, text);
        if (s === '6' && family === 4) fail('WRONG_FAMILY', 'this is iptables; -6 is not allowed', t.span, text);
        break;
      case 'V': case 'h':
        fail('BAD_COMMAND', `-${s} is not a rule command`, t.span, text);
        break;
      default:
        fail('UNKNOWN_OPTION', `unknown option "${text}"`, t.span, text);
    }
  }
  if (invert) fail('BAD_NEGATION', '! must be followed by an option', invertSpan, '!');
  if (command === undefined) fail('BAD_COMMAND', 'no command specified', wholeSpan, first?.text);
  void commandSpan;

  // do_parse: DROP is refused in the nat table, as a rule's -j/-g or as -P's policy (the chain
  // lines of restore input do not pass here: ":PREROUTING DROP" loads).
  if ((table ?? 'filter') === 'nat') {
    const dropAt = target !== null && (target.kind === 'verdict' ? target.verdict === 'DROP' : target.kind === 'goto' && target.chain === 'DROP') ? target.span : policy === 'DROP' ? policySpan : undefined;
    if (dropAt !== undefined) {
      const d = diagnostic('INVALID_TABLE', 'The "nat" table is not intended for filtering, the use of DROP is therefore inhibited (iptables refuses the rule, even with --test)', dropAt, 'DROP');
      if (options.mode === 'lenient' && options.onWarning) options.onWarning({ ...d, message: `${d.message}; kept, and it drops` });
      else throw new NetfilterSimError(d);
    }
  }

  // Build matches (x6_fcheck runs for every loaded extension).
  const matches: Match[] = loaded.map((l) => {
    const opts = l.ext.parse(l.occurrences, ctxFor(l)) as Readonly<Record<string, unknown>>;
    const m: { -readonly [K in keyof Match]: Match[K] } = { name: l.name, options: opts, span: l.span };
    if (l.implicit) m.implicit = true;
    return m;
  });
  if (targetLoaded) {
    const opts = targetLoaded.ext.parse(targetLoaded.occurrences, ctxFor(targetLoaded)) as Readonly<Record<string, unknown>>;
    target = { kind: 'extension', name: targetLoaded.name, options: opts, span: targetLoaded.span };
  }

  const takesRule = command === 'append' || command === 'insert' || command === 'check' || command === 'replace' || (command === 'delete' && ruleNumber === undefined);
  if (!takesRule && (loaded.length > 0 || target !== null || seen.has('s') || seen.has('d') || seen.has('p') || seen.has('i') || seen.has('o'))) {
    fail('BAD_COMMAND', `rule options are not allowed with -${commandShort(command)}`, wholeSpan, first?.text);
  }
  if (chain === undefined && (command === 'append' || command === 'insert' || command === 'check' || command === 'replace' || command === 'delete' || command === 'new-chain' || command === 'policy' || command === 'rename-chain')) {
    fail('MISSING_ARGUMENT', 'no chain given', wholeSpan, first?.text);
  }

  // do_parse: interfaces that cannot exist at a built-in hook.
  if (takesRule && chain !== undefined) {
    if ((chain === 'PREROUTING' || chain === 'INPUT') && outInterface) fail('INVALID_HOOK', `can't use -o with ${chain}`, wholeSpan, '-o');
    if ((chain === 'POSTROUTING' || chain === 'OUTPUT') && inInterface) fail('INVALID_HOOK', `can't use -i with ${chain}`, wholeSpan, '-i');
  }

  const rules: Rule[] = [];
  if (takesRule) {
    const srcs = sources ? sources.values : [undefined];
    const dsts = destinations ? destinations.values : [undefined];
    if (srcs.length * dsts.length > MAX_RULES) {
      fail('TOO_MANY_RULES', `-s and -d expand to ${srcs.length} × ${dsts.length} = ${srcs.length * dsts.length} rules; netfilter-sim reads at most ${MAX_RULES} rules`, wholeSpan, first?.text);
    }
    for (const sv of srcs) for (const dv of dsts) {
      const r: { -readonly [K in keyof Rule]: Rule[K] } = { matches, target };
      if (sv) r.source = { negated: sources!.negated, value: sv };
      if (dv) r.destination = { negated: destinations!.negated, value: dv };
      if (inInterface && inInterface.value !== '+') r.inInterface = inInterface;
      else if (inInterface && inInterface.negated) r.inInterface = inInterface;
      if (outInterface && outInterface.value !== '+') r.outInterface = outInterface;
      else if (outInterface && outInterface.negated) r.outInterface = outInterface;
      if (protocol) r.protocol = protocol;
      if (fragment) r.fragment = fragment;
      if (counters) r.counters = counters;
      r.span = wholeSpan;
      if (options.text !== undefined) r.text = options.text;
      rules.push(r);
    }
  }
  return { command, table, chain, chainSpan, ruleNumber, rules, policy, newName, counters, span: wholeSpan };
}

function canonicalDefName(c: { readonly def: OptionDef }): string {
  return c.def.name;
}

function commandShort(c: CommandName): string {
  for (const [k, v] of Object.entries(COMMAND_OF)) if (v === c) return k;
  return '?';
}

function parseRuleNumber(t: Token): number {
  if (!/^[0-9]+$/.test(t.text) || Number(t.text) < 1 || Number(t.text) > 0x7fffffff) {
    fail('BAD_RULE_NUMBER', `invalid rule number "${t.text}"`, t.span, t.text);
  }
  return Number(t.text);
}

/** Checks a new chain name as iptables does before creating it. */
export function checkChainName(name: string, span: Span): void {
  if (utf8Length(name) > MAX_CHAIN_NAME_LENGTH) fail('CHAIN_NAME_TOO_LONG', `chain name "${name}" is too long (${utf8Length(name)} bytes; at most ${MAX_CHAIN_NAME_LENGTH})`, span, name);
  if (name.length === 0 || name[0] === '-' || name[0] === '!') fail('BAD_CHAIN_NAME', `invalid chain name "${name}"`, span, name);
  if (/\s/.test(name)) fail('BAD_CHAIN_NAME', `invalid chain name "${name}" (contains whitespace)`, span, name);
}

function protocolHint(name: string, protocol: Negatable<string> | undefined): string {
  if (protocol) return '';
  if (/^(dport|sport|destination-port|source-port|syn|tcp-flags)$/.test(name)) return ' (did you forget -p tcp?)';
  return '';
}

/** " (did you mean "x"?)" for a close name, else "". */
export function suggest(name: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestD = 3;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best ? ` (did you mean "${best}"?)` : '';
}

function editDistance(a: string, b: string): number {
  const dp: number[] = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

/** Parses one argument vector (no spans in the source: positions count arguments). */
export function parseIptablesArgv(argv: readonly string[], options: CommandOptions): ParsedCommand {
  expectArgv(argv, 'argv');
  expectArgument(options, 'object', 'options');
  expectOneOf(options.family, [4, 6], 'options.family');
  expectOneOf(options.mode, ['strict', 'lenient'], 'options.mode', true);
  let col = 1;
  const tokens: Token[] = argv.map((text) => {
    const t: Token = { text, quoted: false, span: { line: 1, column: col, offset: col - 1, length: Math.max(1, text.length) } };
    col += text.length + 1;
    return t;
  });
  return parseCommandTokens(tokens, options);
}

/** Collects instead of throwing. */
export function tryParse<T>(f: () => T): { value: T; diagnostics: Diagnostic[] } | { value: undefined; diagnostics: Diagnostic[] } {
  try {
    return { value: f(), diagnostics: [] };
  } catch (e) {
    if (e instanceof NetfilterSimError) return { value: undefined, diagnostics: [...e.diagnostics] };
    return { value: undefined, diagnostics: [diagnostic('BAD_VALUE', e instanceof Error ? e.message : String(e))] };
  }
}
