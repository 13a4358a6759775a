/**
 * A small rule-line parser and printer for the extension tests, standing in for the full
 * command parser: it tokenizes as iptables-restore does, dispatches `--options` to the loaded
 * extensions as getopt_long does in iptables (unique prefixes, newest extension first, implicit
 * protocol match on an unknown option after `-p`), and prints in iptables-save order. The
 * address and interface options are kept verbatim (`keep`), since they are not extensions.
 */
import { NetfilterSimError, fail } from '../../src/model/errors.js';
import { checkExtension } from '../../src/iptables/extensions/placement.js';
import { savedMatches } from '../../src/iptables/print/nft-matches.js';
import { MATCHES, TARGETS } from '../../src/iptables/extensions/registry.js';
import type { ExtensionContext, MatchExtension, OptionDef, OptionOccurrence, TargetExtension } from '../../src/iptables/extensions/types.js';
import type { Family, HookName, Negatable, Span } from '../../src/model/types.js';
import { parseProtocol, protocolMatchName, protocolName } from '../../src/model/protocols.js';

export interface Tok {
  readonly text: string;
  readonly span: Span;
}

/** Whitespace-separated tokens; `"` quotes, `\` escapes inside quotes (iptables-restore). */
export function tokenize(line: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < line.length) {
    while (i < line.length && /\s/.test(line[i]!)) i++;
    if (i >= line.length) break;
    const start = i;
    let text = '';
    let quoted = false;
    while (i < line.length && (quoted || !/\s/.test(line[i]!))) {
      const c = line[i]!;
      if (c === '"') {
        quoted = !quoted;
        i++;
        continue;
      }
      if (quoted && c === '\\' && i + 1 < line.length) {
        text += line[i + 1];
        i += 2;
        continue;
      }
      text += c;
      i++;
    }
    if (quoted) throw new Error('unterminated quote');
    out.push({ text, span: { line: 1, column: start + 1, offset: start, length: i - start } });
  }
  return out;
}

/** Long spellings of the main options the harness keeps or skips. */
const LONG_MAIN: Readonly<Record<string, string>> = {
  '--source': '-s', '--src': '-s', '--destination': '-d', '--dst': '-d', '--in-interface': '-i',
  '--out-interface': '-o', '--fragment': '-f', '--wait': '-w',
};

/** POSIX-shell words with single quotes only (the recorded linkerd commands need no more). */
export function shellWords(line: string): Tok[] {
  const out: Tok[] = [];
  const re = /'([^']*)'|(\S+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line)) !== null) {
    out.push({ text: m[1] ?? m[2]!, span: { line: 1, column: m.index + 1, offset: m.index, length: m[0].length } });
  }
  return out;
}

interface Loaded {
  readonly ext: MatchExtension | TargetExtension;
  readonly order: number;
  readonly span: Span;
  readonly occurrences: OptionOccurrence[];
}

export interface ParsedRule {
  readonly chain: string;
  readonly keep: { s?: string; d?: string; i?: string; o?: string; f?: string };
  readonly protocol: Negatable<string> | undefined;
  readonly matches: readonly { ext: MatchExtension; options: unknown }[];
  readonly target: { ext: TargetExtension; options: unknown } | { verdict: string; goto: boolean } | undefined;
}

export interface ParseOptions {
  readonly family: Family;
  readonly table: string;
  readonly chain: string;
  readonly mode?: 'strict' | 'lenient';
}

/** Parses the argument part of a rule (after `-A CHAIN`). */
export function parseRuleArgs(tokens: readonly Tok[], opts: ParseOptions): ParsedRule {
  const { family } = opts;
  let invert = false;
  let protocol: Negatable<string> | undefined;
  let protoNum: number | undefined;
  let protoUsed = false;
  const keep: { -readonly [K in keyof ParsedRule['keep']]: string } = {};
  const loaded: Loaded[] = [];
  let target: Loaded | undefined;
  let verdict: { verdict: string; goto: boolean } | undefined;
  let order = 0;
  const bang = (): string => {
    const b = invert ? '! ' : '';
    invert = false;
    return b;
  };
  const load = (name: string, span: Span): void => {
    const ext = MATCHES.get(name);
    if (!ext || (ext.family !== 'both' && ext.family !== family)) fail('UNKNOWN_MATCH', `unknown match "${name}"`, span, name);
    loaded.push({ ext, order: order++, span, occurrences: [] });
  };
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i++]!;
    let text = t.text;
    if (text === '!') {
      if (invert) fail('MULTIPLE_NEGATION', 'multiple !', t.span, '!');
      invert = true;
      continue;
    }
    let inline: string | undefined;
    // -ptcp style short options with attached argument.
    if (/^-[pmjgsdio]./.test(text) && !text.startsWith('--')) {
      inline = text.slice(2);
      text = text.slice(0, 2);
    }
    const arg = (): Tok => {
      if (inline !== undefined) return { text: inline, span: t.span };
      const a = tokens[i++];
      if (!a) fail('MISSING_ARGUMENT', `option "${text}" requires an argument`, t.span, text);
      return a;
    };
    text = LONG_MAIN[text] ?? text;
    switch (text) {
      case '-w':
        if (tokens[i] && /^\d+$/.test(tokens[i]!.text)) i++;
        continue;
      case '-p': case '--protocol': {
        const a = arg();
        const n = parseProtocol(a.text.toLowerCase());
        if (n === null) fail('BAD_PROTOCOL', `unknown protocol "${a.text}"`, a.span, a.text);
        if (n === 0 && invert) fail('BAD_PROTOCOL', 'rule would never match protocol', a.span, a.text);
        protoNum = n;
        protocol = n === 0 ? undefined : { negated: invert, value: protocolName(n) };
        invert = false;
        continue;
      }
      case '-s': case '-d': case '-i': case '-o': {
        const b = bang();
        keep[text[1] as 's'] = `${b}${text} ${arg().text}`;
        continue;
      }
      case '-f':
        keep.f = `${bang()}-f`;
        continue;
      case '-m': case '--match': {
        const a = arg();
        load(a.text, a.span);
        continue;
      }
      case '-j': case '--jump': case '-g': case '--goto': {
        const a = arg();
        const ext = TARGETS.get(a.text);
        if ((text === '-j' || text === '--jump') && ext && (ext.family === 'both' || ext.family === family)) {
          target = { ext, order: order++, span: a.span, occurrences: [] };
        } else verdict = { verdict: a.text, goto: text === '-g' || text === '--goto' };
        continue;
      }
    }
    if (!text.startsWith('--')) fail('UNKNOWN_OPTION', `unknown option "${text}"`, t.span, text);
    const name = text.slice(2);
    // Newest extension first (xtables_merge_options), target included.
    const exts = [...loaded, ...(target ? [target] : [])].sort((a, b) => b.order - a.order);
    type Cand = { l: Loaded; def: OptionDef; n: string };
    const cands: Cand[] = [];
    for (const l of exts) for (const def of l.ext.options) {
      if (def.family !== undefined && def.family !== family) continue;
      for (const n of [def.name, ...(def.aliases ?? [])]) cands.push({ l, def, n });
    }
    let hit = cands.find((c) => c.n === name);
    if (!hit) {
      const pre = cands.filter((c) => c.n.startsWith(name));
      const distinct = new Set(pre.map((c) => `${c.l.order}:${c.def.name}`));
      if (distinct.size > 1) fail('UNKNOWN_OPTION', `option "${text}" is ambiguous`, t.span, text);
      hit = pre[0];
    }
    if (!hit) {
      if (protoNum !== undefined && !protoUsed) {
        protoUsed = true;
        const pm = protocolMatchName(protoNum, family);
        if (pm && MATCHES.has(pm) && !loaded.some((l) => l.ext.name === pm)) {
          load(pm, t.span);
          i--;
          continue;
        }
      }
      fail('UNKNOWN_OPTION', `unknown option "${text}"`, t.span, text);
    }
    const { l, def } = hit;
    if (invert && !def.negatable) fail('BAD_NEGATION', `option "${text}" cannot be inverted`, t.span, '!');
    let a: Tok | undefined;
    if (def.arg) a = arg();
    const extra: { text: string; span: Span }[] = [];
    // Like tcp_parse's argv[optind]: a further argument that looks like an option is not taken.
    for (let k = 0; k < (def.extraArgs ?? 0); k++) {
      const e = tokens[i];
      if (!e || e.text.startsWith('-') || e.text.startsWith('!')) break;
      extra.push({ text: e.text, span: e.span });
      i++;
    }
    if (!def.multi && l.occurrences.some((o) => o.name === def.name)) fail('DUPLICATE_OPTION', `option "--${def.name}" can only be used once`, t.span, text);
    const occ: { -readonly [K in keyof OptionOccurrence]: OptionOccurrence[K] } = {
      name: def.name, written: text, arg: a?.text, negated: invert, span: t.span, argSpan: a?.span,
    };
    if (extra.length > 0) occ.extra = extra;
    l.occurrences.push(occ);
    invert = false;
  }
  if (invert) fail('BAD_NEGATION', '! must be followed by an option', undefined, '!');
  const ctx = (span: Span): ExtensionContext => ({
    family, protocol, table: opts.table, chain: opts.chain, mode: opts.mode ?? 'strict', span,
  });
  const matches = loaded.map((l) => ({ ext: l.ext as MatchExtension, options: l.ext.parse(l.occurrences, ctx(l.span)) }));
  const t = target ? { ext: target.ext as TargetExtension, options: target.ext.parse(target.occurrences, ctx(target.span)) } : verdict;
  return { chain: opts.chain, keep, protocol, matches, target: t };
}

/** Prints the rule part in iptables-save order (without `-A CHAIN`). */
export function printRule(r: ParsedRule, family: Family): string {
  const out: string[] = [];
  if (r.keep.s) out.push(r.keep.s);
  if (r.keep.d) out.push(r.keep.d);
  if (r.keep.i) out.push(r.keep.i);
  if (r.keep.o) out.push(r.keep.o);
  if (r.protocol) out.push(`${r.protocol.negated ? '! ' : ''}-p ${r.protocol.value}`);
  if (r.keep.f) out.push(r.keep.f);
  out.push(...savedMatches(r.matches.map((m) => ({ name: m.ext.name, options: m.options })), family));
  if (r.target) {
    if ('verdict' in r.target) out.push(`${r.target.goto ? '-g' : '-j'} ${r.target.verdict}`);
    else {
      const s = r.target.ext.save(r.target.options, family);
      out.push(s ? `-j ${r.target.ext.name} ${s}` : `-j ${r.target.ext.name}`);
    }
  }
  return out.join(' ');
}

/** Runs the kernel's load-time checks for every extension of the rule. */
export function checkRule(r: ParsedRule, family: Family, table: string, hooks: readonly HookName[] | undefined): string[] {
  const msgs: string[] = [];
  const ctx = { family, protocol: r.protocol, table, ...(hooks ? { hooks } : {}) };
  for (const m of r.matches) for (const d of checkExtension(m.ext, m.options, ctx)) msgs.push(d.message);
  if (r.target && !('verdict' in r.target)) for (const d of checkExtension(r.target.ext, r.target.options, ctx)) msgs.push(d.message);
  return msgs;
}

export type Outcome = { ok: true; saved: string } | { ok: false; error: string };

const BUILTIN: readonly string[] = ['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING'];

/** Parses, checks and prints one rule as iptables would for `iptables -t TABLE -A CHAIN rule`. */
export function runRule(line: string, opts: ParseOptions): Outcome {
  try {
    const r = parseRuleArgs(tokenize(line), opts);
    const hooks = BUILTIN.includes(opts.chain) ? [opts.chain as HookName] : undefined;
    const problems = checkRule(r, opts.family, opts.table, hooks);
    if (problems.length > 0) return { ok: false, error: problems.join('; ') };
    return { ok: true, saved: printRule(r, opts.family) };
  } catch (e) {
    if (e instanceof NetfilterSimError) return { ok: false, error: e.message };
    throw e;
  }
}

/** One test line of a `.t` file. */
export interface VectorLine {
  readonly file: string;
  readonly line: number;
  readonly chains: readonly string[];
  readonly table: string;
  readonly rule: string;
  readonly expected: string | null;
  readonly ok: boolean;
}

/** Reads the iptables `.t` shape: `:CHAIN,…`, `*table`, `#` comments, `rule;expected|=;OK|FAIL`. */
export function readVectors(file: string, text: string): VectorLine[] {
  const out: VectorLine[] = [];
  let chains: string[] = [];
  let table = 'filter';
  text.split('\n').forEach((raw, idx) => {
    const l = raw.trimEnd();
    if (l === '' || l.startsWith('#')) return;
    if (l.startsWith(':')) {
      chains = l.slice(1).split(',');
      return;
    }
    if (l.startsWith('*')) {
      table = l.slice(1);
      return;
    }
    const parts = l.split(';');
    if (parts.length !== 3) throw new Error(`${file}:${idx + 1}: expected "rule;saved;OK|FAIL"`);
    const [rule, saved, res] = parts as [string, string, string];
    out.push({
      file, line: idx + 1, chains, table, rule,
      expected: saved === '=' ? rule : saved === '' ? null : saved,
      ok: res === 'OK',
    });
  });
  return out;
}
