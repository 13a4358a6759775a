/**
 * Parses `iptables-save` / `iptables-restore` text (iptables/iptables-restore.c,
 * xtables-restore.c): `*table` headers (`* nat` too), `:CHAIN POLICY [p:b]`, command lines with
 * an optional `[p:b]` prefix, `COMMIT`, `#` comments.
 *
 * @module
 */
import { diagnostic, NetfilterSimError, type Diagnostic } from '../../model/errors.js';
import type { Counters, Family, Ruleset, Span, TableName } from '../../model/types.js';
import { BUILTIN_CHAINS } from '../../model/types.js';
import { RulesetBuilder, isTableName } from './builder.js';
import { STANDARD_TARGET_NAMES, checkChainName, parseCommandTokens } from './command.js';
import { tokenizeLine } from './lexer.js';
import { MAX_RULES, pushAll, utf8Length } from '../../model/limits.js';
import { expectArgument, expectShape } from '../../model/guard.js';

/** iptables-restore reads lines into a 10 KiB buffer (`char buffer[10240]`). */
export const MAX_LINE_LENGTH = 10240;

/** Options for {@link parseIptablesSave}. */
export interface SaveParseOptions {
  /** 4 (iptables-restore, the default) or 6 (ip6tables-restore). */
  readonly family?: Family;
  /**
   * `strict`: exactly what `iptables-restore --test` accepts. `lenient`: also what generators
   * feed fake parsers (kube-proxy's unquoted multi-word comments, a missing final COMMIT).
   */
  readonly mode?: 'strict' | 'lenient';
  /** Start from this rule set, as `iptables-restore --noflush` does. */
  readonly noflush?: Ruleset;
  /** Keep `[p:b]` counters from the text, as `iptables-restore -c` does. */
  readonly counters?: boolean;
}

/** The result of parsing: the rule set as it would be loaded, and every problem found. */
export interface SaveParseResult {
  readonly ruleset: Ruleset;
  /**
   * `error`: the text is rejected (as `iptables-restore --test` rejects it). `warning`: the text
   * parses, but something iptables-restore would do differently or refuse at the load.
   */
  readonly diagnostics: readonly Diagnostic[];
  /**
   * The warnings among {@link diagnostics} for commands the load itself refuses, though
   * `iptables-restore --test` takes them (`-A` to a missing chain, `-X` of a chain that is still
   * referenced or not empty, `-P` on a user chain, `-D` of a rule that is not there): the
   * whole restore fails at that line. `check` reports them as errors.
   */
  readonly loadFailures: readonly Diagnostic[];
}

/**
 * Parses iptables-save or iptables-restore text into a rule set. Stops at the first error, as
 * iptables-restore does.
 *
 * @example
 * ```ts
 * const { ruleset, diagnostics } = parseIptablesSave('*nat\n-A OUTPUT -p tcp -j REDIRECT --to-ports 4140\nCOMMIT\n');
 * ```
 */
export function parseIptablesSave(text: string, options: SaveParseOptions = {}): SaveParseResult {
  expectArgument(text, 'string', 'text');
  expectShape(options, {
    kind: 'object',
    fields: { family: { kind: ['integer', 'undefined'], oneOf: [4, 6] }, mode: { kind: ['string', 'undefined'], oneOf: ['strict', 'lenient'] }, noflush: ['object', 'undefined'], counters: ['boolean', 'undefined'] },
  }, 'options');
  const family = options.family ?? 4;
  const mode = options.mode ?? 'strict';
  const builder = new RulesetBuilder(family, options.noflush);
  const diagnostics: Diagnostic[] = [];
  const loadFailures: Diagnostic[] = [];
  const done = (): SaveParseResult => ({ ruleset: builder.build(), diagnostics: explainInvisible(text, diagnostics), loadFailures });

  const nul = text.indexOf('\0');
  if (nul >= 0) {
    const { line, column } = position(text, nul);
    diagnostics.push(diagnostic('NUL_BYTE', 'NUL byte in input', { line, column, offset: nul, length: 1 }, '\\0'));
    return done();
  }

  let table: TableName | undefined;
  let tableSpan: Span | undefined;
  // Rules created so far (an upper bound: deleted rules still count), against MAX_RULES.
  let created = 0;
  for (const t of options.noflush?.tables ?? []) for (const c of t.chains) created += c.rules.length;
  let touched = false;
  let offset = 0;
  let lineNo = 0;
  let strippedCr = false;
  if (mode === 'lenient' && text.charCodeAt(0) === 0xfeff) {
    offset = 1;
    diagnostics.push({ ...diagnostic('BAD_VALUE', 'a UTF-8 byte-order mark (U+FEFF) starts the input; skipped (iptables-restore would refuse the first line)', { line: 1, column: 1, offset: 0, length: 1 }), severity: 'warning' });
  }
  while (offset < text.length) {
    lineNo++;
    const nl = text.indexOf('\n', offset);
    const hadNewline = nl >= 0;
    const end = hadNewline ? nl : text.length;
    let line = text.slice(offset, end);
    const lineOffset = offset;
    offset = hadNewline ? nl + 1 : text.length;
    const lineSpan = (col = 1, len = Math.max(1, line.length)): Span => ({ line: lineNo, column: col, offset: lineOffset + col - 1, length: len });

    // The buffer holds bytes: a line of non-ASCII text reaches the limit in fewer characters.
    if ((line.length + 1) * 3 > MAX_LINE_LENGTH && utf8Length(line) + 1 > MAX_LINE_LENGTH) {
      diagnostics.push(diagnostic('LINE_TOO_LONG', `line ${lineNo} is ${utf8Length(line)} bytes long; iptables-restore reads at most ${MAX_LINE_LENGTH - 1}`, lineSpan(1, 1)));
      return done();
    }
    if (mode === 'lenient' && line.endsWith('\r')) {
      line = line.slice(0, -1);
      if (!strippedCr) {
        strippedCr = true;
        diagnostics.push({ ...diagnostic('BAD_VALUE', 'CRLF line endings: the carriage returns are stripped (iptables-restore reads them as part of the line and would refuse it)', lineSpan(line.length + 1, 1), '\r'), severity: 'warning' });
      }
    }
    if (line.length === 0) continue;
    if (line[0] === '#') continue;
    if (mode === 'lenient' && line.trim().length === 0) {
      diagnostics.push({ ...diagnostic('BAD_COMMAND', 'a line of only blanks; skipped (iptables-restore would refuse it: no command specified)', lineSpan()), severity: 'warning' });
      continue;
    }
    if (mode === 'lenient' && line.trim().startsWith('#')) {
      diagnostics.push({ ...diagnostic('BAD_COMMAND', 'a comment after blanks; skipped (iptables-restore reads comments only at the start of a line)', lineSpan(line.indexOf('#') + 1)), severity: 'warning' });
      continue;
    }

    if (line[0] === '*') {
      if (table !== undefined && mode === 'strict') {
        diagnostics.push(diagnostic('MISSING_COMMIT', `table "${table}" was not committed before "${line}"`, lineSpan()));
        return done();
      }
      if (table !== undefined && !touched) builder.dropTable(table);
      // xtables-restore: strtok(buffer + 1, " \t\n"), so a CRLF file's "*filter\r" names "filter\r".
      const name = line.slice(1).replace(/^[ \t]+/, '').split(/[ \t]+/)[0] ?? '';
      const nameCol = line.indexOf(name, 1) + 1;
      if (!isTableName(name)) {
        diagnostics.push(diagnostic('UNKNOWN_TABLE', name === '' ? 'empty table name' : `table name "${name}" invalid`, lineSpan(nameCol, Math.max(1, name.length)), name));
        return done();
      }
      table = name;
      tableSpan = lineSpan();
      touched = builder.hasTable(name) && options.noflush !== undefined;
      if (!options.noflush) builder.resetTable(name);
      continue;
    }
    if (line === 'COMMIT' || (mode === 'lenient' && line.trim() === 'COMMIT')) {
      if (table === undefined) {
        diagnostics.push(diagnostic('COMMIT_OUTSIDE_TABLE', 'COMMIT outside of a table', lineSpan()));
        return done();
      }
      if (!touched) builder.dropTable(table);
      table = undefined;
      continue;
    }
    if (table === undefined) {
      diagnostics.push(diagnostic('RULE_OUTSIDE_TABLE', 'line outside of a table (expected "*table")', lineSpan(), line.split(/\s/)[0]));
      return done();
    }
    if (line[0] === ':') {
      const d = parseChainLine(line, lineNo, lineOffset, table, builder, options.counters ?? false);
      if (d) {
        diagnostics.push(d);
        return done();
      }
      touched = true;
      continue;
    }

    // A command line, optionally prefixed by [packets:bytes].
    let tokens = tokenizeLine(line, lineNo, lineOffset, hadNewline);
    let counters: Counters | undefined;
    if (tokens[0] && tokens[0].text.startsWith('[')) {
      const m = /^\[(\d+):(\d+)\]$/.exec(tokens[0].text);
      if (!m) {
        diagnostics.push(diagnostic('BAD_COUNTERS', `bad counters "${tokens[0].text}" (expected [packets:bytes])`, tokens[0].span, tokens[0].text));
        return done();
      }
      if (options.counters ?? false) {
        const big = counterPastLimit(m[1]!, m[2]!);
        if (big !== undefined) {
          diagnostics.push(diagnostic('BAD_COUNTERS', big, tokens[0].span, tokens[0].text));
          return done();
        }
      }
      counters = { packets: Number(m[1]), bytes: Number(m[2]) };
      tokens = tokens.slice(1);
    }
    if (mode === 'lenient') tokens = mergeUnquotedComments(tokens);
    if (tokens.length === 0) {
      diagnostics.push(diagnostic('BAD_COMMAND', 'no command specified', lineSpan()));
      return done();
    }
    for (const tk of tokens) {
      if (tk.text.length > 1023) {
        diagnostics.push(diagnostic('LINE_TOO_LONG', 'parameter too long (iptables allows 1023 characters)', tk.span, tk.text.slice(0, 20) + '…'));
        return done();
      }
    }
    try {
      const cmd = parseCommandTokens(tokens, { family, mode, restoreTable: table, text: line, onWarning: (d) => diagnostics.push({ ...d, severity: 'warning' }) });
      const withCounters = counters && (options.counters ?? false) ? { ...cmd, rules: cmd.rules.map((r) => ({ ...r, counters })) } : { ...cmd, rules: cmd.rules.map((r) => stripCounters(r, options.counters ?? false)) };
      if (cmd.command === 'new-chain' && cmd.chain !== undefined) checkChainName(cmd.chain, cmd.chainSpan!);
      created += cmd.rules.length;
      if (created > MAX_RULES) {
        diagnostics.push(diagnostic('TOO_MANY_RULES', `line ${lineNo} takes the rule set past ${MAX_RULES} rules, the most netfilter-sim reads`, cmd.span));
        return done();
      }
      const refusal = builder.apply(withCounters, table);
      touched = true;
      if (refusal) {
        const d: Diagnostic = { ...refusal, severity: 'warning' };
        diagnostics.push(d);
        loadFailures.push(d);
      }
    } catch (e) {
      if (e instanceof NetfilterSimError) {
        pushAll(diagnostics, e.diagnostics);
        return done();
      }
      throw e;
    }
  }
  if (table !== undefined) {
    if (mode === 'strict') {
      diagnostics.push(diagnostic('MISSING_COMMIT', `COMMIT expected at line ${lineNo + 1} (table "${table}" opened here)`, tableSpan));
    } else if (!touched) builder.dropTable(table);
  }
  return done();
}

/**
 * Adds to an error what the eye cannot see on its line: a byte-order mark, a carriage return from
 * CRLF line endings, or CR-only line endings (the whole input is one line).
 */
function explainInvisible(text: string, diagnostics: Diagnostic[]): Diagnostic[] {
  return diagnostics.map((d) => {
    if (d.severity !== 'error' || !d.span) return d;
    let note = '';
    const start = lineStart(text, d.span.offset);
    const nl = text.indexOf('\n', start);
    const line = text.slice(start, nl < 0 ? text.length : nl);
    if (start === 0 && text.charCodeAt(0) === 0xfeff) note = 'the input starts with a UTF-8 byte-order mark (U+FEFF), which iptables-restore does not skip';
    else if (nl < 0 && start === 0 && line.slice(0, -1).includes('\r')) note = 'the input has CR-only line endings; iptables-restore reads lines that end in \\n';
    else if (line.endsWith('\r')) note = 'the line ends with a carriage return (\\r): CRLF line endings, which iptables-restore reads as part of the line; lenient mode strips them';
    return note === '' ? d : { ...d, message: `${d.message} (${note})` };
  });
}

function lineStart(text: string, offset: number): number {
  const nl = text.lastIndexOf('\n', Math.max(0, Math.min(offset, text.length) - 1));
  return nl < 0 ? 0 : nl + 1;
}

/**
 * Counters are kept as JavaScript numbers, exact up to 2^53 - 1 (9 PB of bytes); past that a kept
 * counter is refused rather than rounded. Without `counters`, as iptables-restore without -c, any
 * value is read and dropped.
 */
export function counterPastLimit(packets: string, bytes: string): string | undefined {
  for (const [what, v] of [['packet', packets], ['byte', bytes]] as const) {
    if (v.length >= 16 && BigInt(v) > BigInt(Number.MAX_SAFE_INTEGER)) {
      return `${what} counter ${v.length > 40 ? v.slice(0, 40) + '…' : v} is past ${Number.MAX_SAFE_INTEGER} (2^53 - 1), the largest counter netfilter-sim keeps exactly`;
    }
  }
  return undefined;
}

function stripCounters<R extends { counters?: Counters }>(r: R, keep: boolean): R {
  if (keep || !r.counters) return r;
  const { counters: _c, ...rest } = r;
  void _c;
  return rest as R;
}

function parseChainLine(line: string, lineNo: number, lineOffset: number, table: TableName, builder: RulesetBuilder, keepCounters: boolean): Diagnostic | undefined {
  const parts: { text: string; col: number }[] = [];
  const re = /[^ \t]+/g;
  let m: RegExpExecArray | null;
  const body = line.slice(1);
  while ((m = re.exec(body))) parts.push({ text: m[0], col: m.index + 2 });
  const span = (p: { text: string; col: number } | undefined): Span =>
    p ? { line: lineNo, column: p.col, offset: lineOffset + p.col - 1, length: Math.max(1, p.text.length) } : { line: lineNo, column: 1, offset: lineOffset, length: Math.max(1, line.length) };
  const [name, policy, ctrs] = parts;
  if (!name || body[0] === ' ' || body[0] === '\t') return diagnostic('BAD_CHAIN_LINE', 'chain line without a chain name', span(undefined));
  try {
    checkChainName(name.text, span(name));
  } catch (e) {
    if (e instanceof NetfilterSimError) return e.diagnostics[0];
    throw e;
  }
  // xtables-restore: xtables_find_target(chain, XTF_DONT_LOAD) sees only the standard target here.
  if (STANDARD_TARGET_NAMES.has(name.text)) return diagnostic('BAD_CHAIN_NAME', `chain name "${name.text}" may not clash with a target name`, span(name), name.text);
  if (!policy) return diagnostic('BAD_CHAIN_LINE', `chain "${name.text}" has no policy`, span(name), name.text);
  // xtables-restore reads the policy word of a built-in chain only: on a user chain any word is
  // taken and ignored (iptables-save prints `-`). A bad one on a built-in chain passes --test and
  // fails the load ("Bad policy name"), which is where this refuses it.
  const builtin = (BUILTIN_CHAINS[table] as readonly string[]).includes(name.text);
  if (builtin && policy.text !== 'ACCEPT' && policy.text !== 'DROP' && policy.text !== '-') {
    return diagnostic('BAD_POLICY', `policy "${policy.text}" invalid for built-in chain ${name.text} (ACCEPT, DROP or -; iptables-restore --test takes it, the load refuses it: "Bad policy name")`, span(policy), policy.text);
  }
  let counters: Counters | undefined;
  if (ctrs) {
    // parse_counters: sscanf("[%llu:%llu]") ignores what follows the bracket (a CR, say).
    const cm = /^\[(\d+):(\d+)\]/.exec(ctrs.text);
    if (!cm) return diagnostic('BAD_COUNTERS', `bad counters "${ctrs.text}" (expected [packets:bytes])`, span(ctrs), ctrs.text);
    if (keepCounters) {
      const big = counterPastLimit(cm[1]!, cm[2]!);
      if (big !== undefined) return diagnostic('BAD_COUNTERS', big, span(ctrs), ctrs.text);
      counters = { packets: Number(cm[1]), bytes: Number(cm[2]) };
    }
  }
  return builder.declareChain(table, name.text, builtin ? policy.text : '-', counters, span(name));
}

/**
 * kube-proxy's fake parser accepts `--comment kubernetes service portals` unquoted; in lenient
 * mode the words after `--comment` up to the next option become one argument.
 */
function mergeUnquotedComments<T extends { text: string; quoted: boolean; span: Span }>(tokens: T[]): T[] {
  const out: T[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    out.push(t);
    if (t.text === '--comment' && i + 1 < tokens.length) {
      const first = tokens[i + 1]!;
      let j = i + 2;
      let text = first.text;
      let last = first;
      while (j < tokens.length && !first.quoted && !tokens[j]!.text.startsWith('-') && tokens[j]!.text !== '!') {
        text += ' ' + tokens[j]!.text;
        last = tokens[j]!;
        j++;
      }
      out.push({ ...first, text, span: { ...first.span, length: last.span.offset + last.span.length - first.span.offset } });
      i = j - 1;
    }
  }
  return out;
}

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let last = -1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) {
    line++;
    last = i;
  }
  return { line, column: offset - last };
}

/**
 * Like {@link parseIptablesSave}, but throws a `NetfilterSimError` carrying the diagnostics when
 * the text is rejected.
 *
 * @example
 * ```ts
 * const ruleset = parseIptablesSaveOrThrow(text, { family: 6 });
 * ```
 */
export function parseIptablesSaveOrThrow(text: string, options: SaveParseOptions = {}): Ruleset {
  const r = parseIptablesSave(text, options);
  const errors = r.diagnostics.filter((d) => d.severity === 'error');
  if (errors.length > 0) throw new NetfilterSimError(errors);
  return r.ruleset;
}
