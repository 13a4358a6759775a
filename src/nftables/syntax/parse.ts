/**
 * The nft parser: tokens → commands, following nftables 1.0.6's `parser_bison.y` — the command
 * form (`add|create|insert|replace|delete|flush` of tables, chains, rules, sets, maps, elements,
 * stateful objects and flowtables) and the block form `nft list ruleset` prints, with
 * `define`/`redefine`/`undefine` in every block (each block a scope), comments and line
 * continuations. Names of tables, chains, sets and objects are the scanner's plain strings: not
 * quoted, not one of its keywords. A syntax error stops the parse and is reported at its token,
 * as nft's bison parser reports `FILE:LINE:COL: syntax error, unexpected …`.
 *
 * @module
 */
import { diagnostic, type Diagnostic } from '../../model/errors.js';
import type { Span } from '../../model/types.js';
import {
  BARE_META, CT_DIRECTIONAL, META_KEYS, TCPOPT_ALIASES, ctKeyType, exthdrFields, ipOptionFields, parseTime, payloadFields, tcpOptionFields,
  SCTP_CHUNKS, TCPOPT_KINDS, sctpChunkFieldBits,
} from '../datatypes.js';
import type { NftChainType, NftFamily, NftHook, NftObjectType, NftSelector } from '../model.js';
import type {
  RawChainSpec, RawCommand, RawElement, RawExpr, RawFlowtableSpec, RawObjectSpec, RawOp, RawPosition, RawSetSpec, RawStatement, RawBoundRule,
} from './ast.js';
import { tokenizeNft, type NftToken } from './lexer.js';

/** The commands of a file, or the first syntax error. */
export interface NftParseOutput {
  readonly commands: readonly RawCommand[];
  readonly diagnostics: readonly Diagnostic[];
}

/** Options for {@link parseNftCommands}. */
export interface NftSyntaxOptions {
  /**
   * Reads the file an `include "PATH"` names (relative to the including file's directory, as
   * nft's `-I` search path resolves it); returns its text, or undefined when there is none.
   * Without it, `include` is refused: the library never reads files.
   */
  readonly include?: (path: string) => string | undefined;
}

class SyntaxError_ extends Error {
  readonly diag: Diagnostic;
  constructor(diag: Diagnostic) {
    super(diag.message);
    this.diag = diag;
  }
}

const FAMILIES = new Set(['ip', 'ip6', 'inet', 'arp', 'bridge', 'netdev']);
const CHAIN_TYPES = new Set(['filter', 'nat', 'route']);
const HOOKS = new Set(['prerouting', 'input', 'forward', 'output', 'postrouting', 'ingress', 'egress']);
const RELOPS: Readonly<Record<string, RawOp>> = {
  '==': '==', eq: '==', '!=': '!=', ne: '!=', '<': '<', lt: '<', '>': '>', gt: '>', '<=': '<=', le: '<=', '>=': '>=', ge: '>=',
};
const BINOPS: Readonly<Record<string, '&' | '|' | '^' | '<<' | '>>'>> = {
  '&': '&', and: '&', '|': '|', or: '|', '^': '^', xor: '^', '<<': '<<', lshift: '<<', '>>': '>>', rshift: '>>',
};
const VERDICTS = new Set(['accept', 'drop', 'return', 'continue', 'jump', 'goto']);
const OBJECT_KEYWORDS: Readonly<Record<string, NftObjectType>> = {
  counter: 'counter', quota: 'quota', limit: 'limit', secmark: 'secmark', synproxy: 'synproxy',
};

/**
 * Words nft's scanner always returns as keywords (`scanner.l`, the rules without a start
 * condition): they can never be a table, chain, set or object name.
 */
const KEYWORDS: ReadonlySet<string> = new Set((
  'eq ne le lt ge gt lshift rshift xor and or not vmap include define redefine undefine describe hook device devices table '
  + 'chain rule set element map flowtable handle ruleset socket tproxy accept drop continue jump goto return inet netdev add '
  + 'replace update create insert delete get list reset flush rename import export monitor position index comment constant '
  + 'interval dynamic auto-merge timeout gc-interval elements expires policy size flow offload meter counter log queue limit '
  + 'quota hour day reject snat dnat masquerade redirect random th bridge ether type typeof vlan arp ip ecn time icmp icmpv6 '
  + 'igmp ip6 priority ah esp comp flags udp udplite tcp dccp sctp rt rt0 rt2 srh hbh frag dst mh meta mark iif iifname '
  + 'iiftype oif oifname oiftype skuid skgid nftrace rtclassid ibriport ibrname obriport obrname pkttype cpu iifgroup oifgroup '
  + 'cgroup ct numgen jhash symhash dup fwd fib osf synproxy notrack all exists missing exthdr ipsec secmark xt'
).split(' '));

/** The scanner's plain string: a letter, `_` or `.`, then letters, digits, `/`, `-`, `_`, `.`. */
const STRING_TOKEN = /^[A-Za-z_.][A-Za-z0-9/\-_.]*$/;

/** How bison names a token in `unexpected …`. */
function describe(t: NftToken): string {
  if (t.kind === 'eof') return 'end of file';
  if (t.kind === 'newline') return 'newline';
  if (t.kind === 'string') return 'quoted string';
  if (t.kind === 'punct') {
    switch (t.text) {
      case ',': return 'comma';
      case ';': return 'semicolon';
      case '==': case '!=': case '<': case '>': case '<=': case '>=': case '<<': case '>>': case '&': case '^': case '!': return t.text;
      default: return `'${t.text}'`;
    }
  }
  const w = t.text;
  if (KEYWORDS.has(w)) {
    const alias: Readonly<Record<string, string>> = { eq: '==', ne: '!=', le: '<=', lt: '<', ge: '>=', gt: '>', and: '&', or: "'|'", xor: '^', not: '!', lshift: '<<', rshift: '>>' };
    return alias[w] ?? w;
  }
  if (/^[0-9]+$|^0x[0-9a-f]+$/i.test(w)) return 'number';
  if (w === ':') return 'colon';
  if (w === '.') return '.';
  if (w === '-') return '-';
  if (w === '/') return '/';
  if (w.endsWith('*')) return 'string with a trailing asterisk';
  return w;
}

function join(a: Span, b: Span): Span {
  return { line: a.line, column: a.column, offset: a.offset, length: b.line === a.line ? b.offset + b.length - a.offset : a.length };
}

/** Parses nft input into commands. */
export function parseNftCommands(text: string, options: NftSyntaxOptions = {}): NftParseOutput {
  const lexed = tokenizeNft(text);
  if (lexed.diagnostics.length > 0) return { commands: [], diagnostics: lexed.diagnostics };
  const p = new Parser(lexed.tokens, options);
  try {
    p.file();
    return { commands: p.commands, diagnostics: [] };
  } catch (e) {
    if (e instanceof SyntaxError_) return { commands: p.commands, diagnostics: [e.diag] };
    throw e;
  }
}

/** nft's `MAX_INCLUDE_DEPTH`. */
const MAX_INCLUDE_DEPTH = 16;
/** nft's `SCOPE_NEST_MAX`: the file, a table, a chain and an anonymous chain. */
const SCOPE_NEST_MAX = 4;

type Scope = Map<string, RawExpr>;

class Parser {
  readonly commands: RawCommand[] = [];
  private i = 0;
  private tokens: readonly NftToken[];
  /** Innermost last; the file's scope first. */
  private readonly scopes: Scope[];
  private readonly options: NftSyntaxOptions;
  private readonly depth: number;

  constructor(tokens: readonly NftToken[], options: NftSyntaxOptions, scopes: Scope[] = [new Map()], depth = 1) {
    this.tokens = tokens;
    this.options = options;
    this.scopes = scopes;
    this.depth = depth;
  }

  // --- token helpers ----------------------------------------------------------------------

  private peek(k = 0): NftToken {
    return this.tokens[Math.min(this.i + k, this.tokens.length - 1)]!;
  }
  private next(): NftToken {
    const t = this.peek();
    if (this.i < this.tokens.length - 1) this.i++;
    return t;
  }
  private isWord(text?: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'word' && (text === undefined || t.text === text);
  }
  private isPunct(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'punct' && t.text === text;
  }
  private atEnd(k = 0): boolean {
    const t = this.peek(k);
    return t.kind === 'newline' || t.kind === 'eof' || (t.kind === 'punct' && (t.text === ';' || t.text === '}'));
  }
  private fail(t: NftToken, expecting?: string): never {
    const msg = `syntax error, unexpected ${describe(t)}${expecting ? `, expecting ${expecting}` : ''}`;
    throw new SyntaxError_(diagnostic('UNEXPECTED_TOKEN', msg, t.span, t.text));
  }
  private failAt(span: Span, message: string, token?: string, code: Diagnostic['code'] = 'UNEXPECTED_TOKEN'): never {
    throw new SyntaxError_(diagnostic(code, message, span, token));
  }
  private expectWord(text?: string): NftToken {
    const t = this.peek();
    if (t.kind !== 'word' || (text !== undefined && t.text !== text)) this.fail(t, text ?? 'string');
    return this.next();
  }
  private expectPunct(text: string): NftToken {
    const t = this.peek();
    if (t.kind !== 'punct' || t.text !== text) this.fail(t, text === '{' || text === '}' || text === '=' ? `'${text}'` : text);
    return this.next();
  }
  /** `identifier`: a plain string token, not a keyword; `$var` where the grammar allows a variable. */
  private identifier(): NftToken {
    const t = this.peek();
    if (t.kind === 'word' && STRING_TOKEN.test(t.text) && !KEYWORDS.has(t.text)) return this.next();
    return this.fail(t, 'string');
  }
  /** `string`: a plain or quoted string (`comment "…"`, `device eth0`). */
  private string(): NftToken {
    const t = this.peek();
    if (t.kind === 'string' || (t.kind === 'word' && !KEYWORDS.has(t.text) && !/^[0-9]/.test(t.text) && !t.text.startsWith('$') && !t.text.startsWith('@'))) return this.next();
    return this.fail(t, 'string');
  }
  private skipNewlines(): void {
    while (this.peek().kind === 'newline') this.next();
  }
  /** `stmt_separator`: a newline or a semicolon. */
  private separator(): void {
    const t = this.peek();
    if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
      this.next();
      return;
    }
    this.fail(t, 'newline or semicolon');
  }
  /** The end of a command: a separator, or the end of the input. */
  private endCommand(): void {
    if (this.peek().kind === 'eof') return;
    this.separator();
  }
  private number(): { value: number; span: Span } {
    const t = this.peek();
    if (t.kind !== 'word' || !/^(0x[0-9a-f]+|[0-9]+)$/i.test(t.text)) this.fail(t);
    this.next();
    return { value: Number(t.text), span: t.span };
  }
  private bigNumber(): { value: bigint; span: Span } {
    const t = this.peek();
    if (t.kind !== 'word' || !/^(0x[0-9a-f]+|[0-9]+)$/i.test(t.text)) this.fail(t);
    this.next();
    return { value: BigInt(t.text), span: t.span };
  }
  private timeSpec(): { value: number; span: Span } {
    const t = this.peek();
    if (t.kind !== 'word') this.fail(t);
    const ms = parseTime(t.text);
    if (ms === undefined) this.failAt(t.span, 'Wrong time format, expecting seconds or ms', t.text, 'BAD_VALUE');
    this.next();
    return { value: ms, span: t.span };
  }

  // --- scopes -------------------------------------------------------------------------------

  private lookup(name: string): RawExpr | undefined {
    for (let s = this.scopes.length - 1; s >= 0; s--) {
      const v = this.scopes[s]!.get(name);
      if (v !== undefined) return v;
    }
    return undefined;
  }
  private variable(t: NftToken): RawExpr {
    const name = t.text.slice(1);
    const v = this.lookup(name);
    if (!v) this.failAt(t.span, `unknown identifier '${name}'`, t.text, 'BAD_VALUE');
    return v;
  }
  private openScope(): void {
    this.scopes.push(new Map());
  }
  private closeScope(): void {
    this.scopes.pop();
  }

  /** `include`, `define`, `redefine`, `undefine` (the grammar's `common_block`), if one starts here. */
  private commonBlock(): boolean {
    const t = this.peek();
    if (t.kind !== 'word') return false;
    switch (t.text) {
      case 'define': case 'redefine': {
        this.next();
        const name = this.identifier();
        const scope = this.scopes[this.scopes.length - 1]!;
        if (t.text === 'define' && this.lookup(name.text) !== undefined) this.failAt(name.span, `redefinition of symbol '${name.text}'`, name.text, 'BAD_VALUE');
        this.expectPunct('=');
        const value = this.initializer();
        scope.set(name.text, value);
        this.separator();
        return true;
      }
      case 'undefine': {
        this.next();
        const name = this.identifier();
        const scope = this.scopes[this.scopes.length - 1]!;
        if (!scope.delete(name.text)) this.failAt(name.span, `undefined symbol '${name.text}'`, name.text, 'BAD_VALUE');
        this.separator();
        return true;
      }
      case 'include': {
        this.next();
        const path = this.peek();
        if (path.kind !== 'string') this.fail(path, 'quoted string');
        this.next();
        this.include(path);
        this.separator();
        return true;
      }
      default:
        return false;
    }
  }

  /** `include "FILE"`: its commands in place, in the scope of the include. */
  private include(path: NftToken): void {
    const read = this.options.include;
    if (read === undefined) this.failAt(path.span, `include "${path.text}": the library reads no files (give the CLI the directory with -I DIR)`, path.text, 'UNSUPPORTED');
    if (this.depth >= MAX_INCLUDE_DEPTH) this.failAt(path.span, `Include nested too deeply, max ${MAX_INCLUDE_DEPTH} levels`, path.text, 'BAD_VALUE');
    const text = read(path.text);
    if (text === undefined) this.failAt(path.span, `Could not open file "${path.text}": No such file or directory`, path.text, 'BAD_VALUE');
    const lexed = tokenizeNft(text);
    // Positions inside an included file would point into another text: report at the include.
    if (lexed.diagnostics.length > 0) this.failAt(path.span, `in ${path.text}: ${lexed.diagnostics[0]!.message}`, path.text);
    const inner = new Parser(lexed.tokens, this.options, this.scopes, this.depth + 1);
    try {
      inner.file();
    } catch (e) {
      if (e instanceof SyntaxError_) {
        const d = e.diag;
        this.failAt(path.span, `in ${path.text}:${d.span?.line ?? 0}:${d.span?.column ?? 0}: ${d.message}`, path.text, d.code);
      }
      throw e;
    }
    const at = (c: RawCommand): RawCommand => relocate(c, path.span);
    this.commands.push(...inner.commands.map(at));
  }

  /** `initializer_expr`: a define's value. */
  private initializer(): RawExpr {
    if (this.isPunct('{') && this.isPunct('}', 1)) {
      const o = this.next();
      const c = this.next();
      return { t: 'set', elements: [], span: join(o.span, c.span) };
    }
    return this.rhs(true);
  }

  // --- top level ----------------------------------------------------------------------------

  file(): void {
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') return;
      if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
        this.next();
        continue;
      }
      if (this.commonBlock()) continue;
      this.command();
      this.endCommand();
    }
  }

  /** `family_spec`: an explicit family, or `ip`. */
  private family(): NftFamily {
    const t = this.peek();
    if (t.kind === 'word' && FAMILIES.has(t.text)) {
      this.next();
      return t.text as NftFamily;
    }
    return 'ip';
  }

  private command(): void {
    const t = this.peek();
    if (t.kind !== 'word') this.fail(t);
    switch (t.text) {
      case 'add': case 'create':
        this.next();
        return this.addCommand(t.text);
      case 'insert':
        this.next();
        this.expectWord('rule');
        return this.ruleCommand('insert', t.span);
      case 'replace':
        this.next();
        this.expectWord('rule');
        return this.ruleCommand('replace', t.span);
      case 'delete':
        this.next();
        return this.deleteCommand(t.span);
      case 'flush':
        this.next();
        return this.flushCommand(t.span);
      case 'list': case 'reset': case 'rename': case 'export': case 'monitor': case 'describe': case 'import': case 'get':
        return this.failAt(t.span, `"${t.text}" commands are not supported in rule files`, t.text, 'UNSUPPORTED');
      default:
        return this.addCommand('add');
    }
  }

  private addCommand(op: 'add' | 'create'): void {
    const kw = this.peek();
    if (kw.kind !== 'word') this.fail(kw);
    switch (kw.text) {
      case 'table': {
        this.next();
        const family = this.family();
        const name = this.identifier();
        const at = this.commands.length;
        this.commands.push({ c: 'table', op, family, table: name.text, span: kw.span });
        if (this.isPunct('{')) {
          const opts = this.tableBlock(family, name.text);
          this.commands[at] = { c: 'table', op, family, table: name.text, span: kw.span, ...opts };
        }
        return;
      }
      case 'chain': {
        this.next();
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        if (this.isPunct('{')) {
          this.next();
          this.openScope();
          const { spec, rules } = this.chainBody(family, table.text, name.text);
          this.closeScope();
          this.expectPunct('}');
          this.commands.push({ c: 'chain', op, family, table: table.text, chain: name.text, spec, span: kw.span, nameSpan: name.span });
          this.commands.push(...rules);
          return;
        }
        this.commands.push({ c: 'chain', op, family, table: table.text, chain: name.text, span: kw.span, nameSpan: name.span });
        return;
      }
      case 'rule':
        this.next();
        if (op === 'create') this.fail(kw);
        return this.ruleCommand('add', kw.span);
      case 'set': case 'map': {
        this.next();
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.expectPunct('{');
        const spec = this.setBody(kw.text === 'map');
        this.expectPunct('}');
        this.commands.push({ c: 'set', op, map: kw.text === 'map', family, table: table.text, name: name.text, spec, span: kw.span, nameSpan: name.span });
        return;
      }
      case 'element': {
        this.next();
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        const elements = this.setBlockExpr();
        this.commands.push({ c: 'element', op, family, table: table.text, name: name.text, elements, span: kw.span, nameSpan: name.span });
        return;
      }
      case 'flowtable': {
        this.next();
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.expectPunct('{');
        const spec = this.flowtableBody();
        this.expectPunct('}');
        this.commands.push({ c: 'flowtable', op, family, table: table.text, name: name.text, spec, span: kw.span, nameSpan: name.span });
        return;
      }
      case 'counter': case 'quota': case 'limit': case 'secmark': case 'synproxy': case 'ct': {
        this.next();
        let objType: NftObjectType = OBJECT_KEYWORDS[kw.text] as NftObjectType;
        if (kw.text === 'ct') {
          const k = this.expectWord();
          if (k.text !== 'helper' && k.text !== 'timeout' && k.text !== 'expectation') this.fail(k);
          objType = `ct ${k.text}` as NftObjectType;
        }
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        const spec = this.objectSpec(objType, op);
        this.commands.push({ c: 'object', op, objType, family, table: table.text, name: name.text, ...(spec ? { spec } : {}), span: kw.span, nameSpan: name.span });
        return;
      }
      default:
        // `[add] FAMILY TABLE CHAIN …`: the rule keyword may be left out.
        if (op === 'create') this.fail(kw);
        return this.ruleCommand('add', kw.span);
    }
  }

  private ruleCommand(op: 'add' | 'insert' | 'replace', span: Span): void {
    const family = this.family();
    const table = this.identifier();
    const chain = this.identifier();
    let position: RawPosition | undefined;
    if (this.isWord('handle') || this.isWord('index') || this.isWord('position')) {
      const k = this.next();
      const n = this.number();
      position = { kind: k.text as RawPosition['kind'], value: n.value, span: join(k.span, n.span) };
    }
    if (op === 'replace' && position?.kind !== 'handle') this.fail(this.peek(), 'handle');
    const statements = this.rule();
    this.commands.push({ c: 'rule', op, family, table: table.text, chain: chain.text, ...(position ? { position } : {}), statements, span, chainSpan: chain.span });
  }

  private deleteCommand(span: Span): void {
    const kw = this.expectWord();
    const byHandle = (): number | undefined => {
      if (!this.isWord('handle')) return undefined;
      this.next();
      return this.number().value;
    };
    switch (kw.text) {
      case 'table': {
        const family = this.family();
        const handle = byHandle();
        if (handle !== undefined) {
          this.commands.push({ c: 'table', op: 'delete', family, table: '', handle, span });
          return;
        }
        const name = this.identifier();
        this.commands.push({ c: 'table', op: 'delete', family, table: name.text, span });
        return;
      }
      case 'chain': {
        const family = this.family();
        const table = this.identifier();
        const handle = byHandle();
        if (handle !== undefined) {
          this.commands.push({ c: 'chain', op: 'delete', family, table: table.text, chain: '', handle, span, nameSpan: span });
          return;
        }
        const name = this.identifier();
        this.commands.push({ c: 'chain', op: 'delete', family, table: table.text, chain: name.text, span, nameSpan: name.span });
        return;
      }
      case 'rule': {
        const family = this.family();
        const table = this.identifier();
        const chain = this.identifier();
        const h = this.expectWord('handle');
        const n = this.number();
        this.commands.push({ c: 'rule', op: 'delete', family, table: table.text, chain: chain.text, position: { kind: 'handle', value: n.value, span: join(h.span, n.span) }, statements: [], span, chainSpan: chain.span });
        return;
      }
      case 'set': case 'map': {
        const family = this.family();
        const table = this.identifier();
        const handle = kw.text === 'set' ? byHandle() : undefined;
        if (handle !== undefined) {
          this.commands.push({ c: 'set', op: 'delete', map: false, family, table: table.text, name: '', handle, span, nameSpan: span });
          return;
        }
        const name = this.identifier();
        this.commands.push({ c: 'set', op: 'delete', map: kw.text === 'map', family, table: table.text, name: name.text, span, nameSpan: name.span });
        return;
      }
      case 'element': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        const elements = this.setBlockExpr();
        this.commands.push({ c: 'element', op: 'delete', family, table: table.text, name: name.text, elements, span, nameSpan: name.span });
        return;
      }
      case 'flowtable': {
        const family = this.family();
        const table = this.identifier();
        const handle = byHandle();
        if (handle !== undefined) {
          this.commands.push({ c: 'flowtable', op: 'delete', family, table: table.text, name: '', handle, span, nameSpan: span });
          return;
        }
        const name = this.identifier();
        if (this.isPunct('{')) {
          this.next();
          this.flowtableBody();
          this.expectPunct('}');
        }
        this.commands.push({ c: 'flowtable', op: 'delete', family, table: table.text, name: name.text, span, nameSpan: name.span });
        return;
      }
      case 'counter': case 'quota': case 'limit': case 'secmark': case 'synproxy': case 'ct': {
        let objType: NftObjectType = OBJECT_KEYWORDS[kw.text] as NftObjectType;
        if (kw.text === 'ct') {
          const k = this.expectWord();
          if (k.text !== 'helper' && k.text !== 'timeout' && k.text !== 'expectation') this.fail(k);
          objType = `ct ${k.text}` as NftObjectType;
        }
        const family = this.family();
        const table = this.identifier();
        const handle = kw.text !== 'ct' ? byHandle() : undefined;
        if (handle !== undefined) {
          this.commands.push({ c: 'object', op: 'delete', objType, family, table: table.text, name: '', handle, span, nameSpan: span });
          return;
        }
        const name = this.identifier();
        this.commands.push({ c: 'object', op: 'delete', objType, family, table: table.text, name: name.text, span, nameSpan: name.span });
        return;
      }
      default:
        return this.fail(kw);
    }
  }

  private flushCommand(span: Span): void {
    const kw = this.expectWord();
    switch (kw.text) {
      case 'ruleset': {
        const t = this.peek();
        if (t.kind === 'word' && FAMILIES.has(t.text)) {
          this.next();
          this.commands.push({ c: 'ruleset', op: 'flush', family: t.text as NftFamily, span });
          return;
        }
        this.commands.push({ c: 'ruleset', op: 'flush', span });
        return;
      }
      case 'table': {
        const family = this.family();
        const name = this.identifier();
        this.commands.push({ c: 'table', op: 'flush', family, table: name.text, span });
        return;
      }
      case 'chain': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.commands.push({ c: 'chain', op: 'flush', family, table: table.text, chain: name.text, span, nameSpan: name.span });
        return;
      }
      case 'set': case 'map': {
        const family = this.family();
        const table = this.identifier();
        const name = this.identifier();
        this.commands.push({ c: 'set', op: 'flush', map: kw.text === 'map', family, table: table.text, name: name.text, span, nameSpan: name.span });
        return;
      }
      default:
        return this.fail(kw);
    }
  }

  // --- blocks -------------------------------------------------------------------------------

  /** A table's block; returns its options. */
  private tableBlock(family: NftFamily, table: string): { comment?: string; dormant?: boolean } {
    this.expectPunct('{');
    this.openScope();
    let comment: string | undefined;
    let dormant: boolean | undefined;
    const objects: RawCommand[] = [];
    const sets: RawCommand[] = [];
    const flowtables: RawCommand[] = [];
    const chains: RawCommand[] = [];
    const rules: RawCommand[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'punct' && t.text === '}') {
        this.next();
        break;
      }
      if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
        this.next();
        continue;
      }
      if (this.commonBlock()) continue;
      if (t.kind !== 'word') this.fail(t);
      switch (t.text) {
        case 'chain': {
          this.next();
          const name = this.identifier();
          this.expectPunct('{');
          this.openScope();
          const body = this.chainBody(family, table, name.text);
          this.closeScope();
          this.expectPunct('}');
          chains.push({ c: 'chain', op: 'add', family, table, chain: name.text, spec: body.spec, span: t.span, nameSpan: name.span });
          rules.push(...body.rules);
          break;
        }
        case 'set': case 'map': {
          this.next();
          const name = this.identifier();
          this.expectPunct('{');
          this.openScope();
          const spec = this.setBody(t.text === 'map');
          this.closeScope();
          this.expectPunct('}');
          sets.push({ c: 'set', op: 'add', map: t.text === 'map', family, table, name: name.text, spec, span: t.span, nameSpan: name.span });
          break;
        }
        case 'flowtable': {
          this.next();
          const name = this.identifier();
          this.expectPunct('{');
          this.openScope();
          const spec = this.flowtableBody();
          this.closeScope();
          this.expectPunct('}');
          flowtables.push({ c: 'flowtable', op: 'add', family, table, name: name.text, spec, span: t.span, nameSpan: name.span });
          break;
        }
        case 'counter': case 'quota': case 'limit': case 'secmark': case 'synproxy': case 'ct': {
          this.next();
          let objType = OBJECT_KEYWORDS[t.text] as NftObjectType;
          if (t.text === 'ct') {
            const k = this.expectWord();
            if (k.text !== 'helper' && k.text !== 'timeout' && k.text !== 'expectation') this.fail(k);
            objType = `ct ${k.text}` as NftObjectType;
          }
          const name = this.identifier();
          if (!this.isPunct('{')) this.fail(this.peek(), "'{'");
          this.openScope();
          const spec = this.objectSpec(objType, 'add');
          this.closeScope();
          objects.push({ c: 'object', op: 'add', objType, family, table, name: name.text, ...(spec ? { spec } : {}), span: t.span, nameSpan: name.span });
          break;
        }
        case 'comment':
          this.next();
          comment = this.commentText();
          break;
        case 'flags': {
          this.next();
          const f = this.expectWord();
          if (f.text === 'dormant') dormant = true;
          else if (f.text !== 'owner') this.failAt(f.span, `unknown table option ${f.text}`, f.text, 'BAD_VALUE');
          else this.failAt(f.span, 'table flag owner: the table would belong to this nft process, which exits', f.text, 'UNSUPPORTED');
          break;
        }
        default:
          this.fail(t);
      }
      this.separator();
    }
    this.closeScope();
    // nft adds a block's objects, sets, flowtables and chains before its rules, so rules may
    // refer forward.
    this.commands.push(...objects, ...sets, ...flowtables, ...chains, ...rules);
    return { ...(comment !== undefined ? { comment } : {}), ...(dormant ? { dormant } : {}) };
  }

  /** `comment_spec`: a string of at most 128 bytes. */
  private commentText(): string {
    const s = this.string();
    if (s.text.length > 128) this.failAt(s.span, 'comment too long, 128 characters maximum allowed', s.text, 'BAD_VALUE');
    return s.text;
  }

  private chainBody(family: NftFamily, table: string, chain: string): { spec: RawChainSpec; rules: RawCommand[] } {
    let spec: { -readonly [K in keyof RawChainSpec]: RawChainSpec[K] } = {};
    const rules: RawCommand[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) break;
      if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
        this.next();
        continue;
      }
      if (this.commonBlock()) continue;
      if (t.kind === 'word' && t.text === 'type') {
        this.next();
        const type = this.expectWord();
        if (!STRING_TOKEN.test(type.text) || KEYWORDS.has(type.text)) this.fail(type, 'string');
        if (!CHAIN_TYPES.has(type.text)) this.failAt(type.span, `unknown chain type`, type.text, 'BAD_VALUE');
        this.expectWord('hook');
        const hook = this.expectWord();
        if (!STRING_TOKEN.test(hook.text) || KEYWORDS.has(hook.text)) this.fail(hook, 'string');
        if (!HOOKS.has(hook.text)) this.failAt(hook.span, `unknown chain hook`, hook.text, 'BAD_VALUE');
        let devices: RawExpr[] | undefined;
        if (this.isWord('device')) {
          this.next();
          const d = this.peek();
          if (d.kind === 'word' && d.text.startsWith('$')) devices = [{ ...this.variable(this.next()), span: d.span }];
          else {
            const s = this.string();
            devices = [{ t: 'sym', text: s.text, quoted: s.kind === 'string', span: s.span }];
          }
        } else if (this.isWord('devices')) {
          this.next();
          this.expectPunct('=');
          devices = this.deviceList();
        }
        this.expectWord('priority');
        const priority = this.priority();
        spec = { ...spec, type: { type: type.text as NftChainType, hook: hook.text as NftHook, priority, span: t.span, hookSpan: hook.span, typeSpan: type.span, ...(devices ? { devices } : {}) } };
        this.separator();
        continue;
      }
      if (t.kind === 'word' && t.text === 'policy') {
        this.next();
        const p = this.peek();
        if (p.kind === 'word' && p.text.startsWith('$')) {
          const v = this.variable(this.next());
          spec = { ...spec, policy: { policy: v.t === 'sym' ? v.text : '', span: p.span } };
        } else {
          if (!this.isWord('accept') && !this.isWord('drop')) this.fail(p, 'accept or drop');
          this.next();
          spec = { ...spec, policy: { policy: p.text, span: p.span } };
        }
        this.separator();
        continue;
      }
      if (t.kind === 'word' && t.text === 'flags') {
        this.next();
        this.expectWord('offload');
        spec = { ...spec, offload: true };
        this.separator();
        continue;
      }
      if (t.kind === 'word' && t.text === 'comment') {
        this.next();
        spec = { ...spec, comment: this.commentText() };
        this.separator();
        continue;
      }
      const statements = this.rule();
      rules.push({ c: 'rule', op: 'add', family, table, chain, statements, span: t.span, chainSpan: t.span });
      this.separator();
    }
    return { spec, rules };
  }

  /** `flowtable_expr`: `{ eth0, "eth1", $dev }` or a variable holding such a list. */
  private deviceList(): RawExpr[] {
    const t = this.peek();
    if (t.kind === 'word' && t.text.startsWith('$')) {
      const v = this.variable(this.next());
      if (v.t === 'set') return v.elements.map((e) => e.key);
      if (v.t === 'list') return [...v.items];
      return [{ ...v, span: t.span }];
    }
    this.expectPunct('{');
    const out: RawExpr[] = [];
    for (;;) {
      this.skipNewlines();
      const d = this.peek();
      if (d.kind === 'word' && d.text.startsWith('$')) out.push({ ...this.variable(this.next()), span: d.span });
      else {
        const s = this.string();
        out.push({ t: 'sym', text: s.text, quoted: s.kind === 'string', span: s.span });
      }
      this.skipNewlines();
      if (this.isPunct(',')) {
        this.next();
        this.skipNewlines();
        if (this.isPunct('}')) break;
        continue;
      }
      break;
    }
    this.expectPunct('}');
    return out;
  }

  private priority(): RawExpr {
    const t = this.peek();
    if (t.kind === 'word' && t.text.startsWith('$')) return { ...this.variable(this.next()), span: t.span };
    if (t.kind === 'word') {
      // `filter + 10`, `filter+10`, `filter - 5`: a name and an offset (one word or three).
      const glued = /^([a-z]+)([+-])([0-9]+)$/.exec(t.text);
      if (glued) {
        this.next();
        return { t: 'sym', text: `${glued[1]} ${glued[2]} ${Number(glued[3])}`, quoted: false, span: t.span };
      }
      if (/^[a-z]+$/.test(t.text)) {
        this.next();
        const sign = this.peek();
        if (sign.kind === 'word' && (sign.text === '+' || sign.text === '-')) {
          this.next();
          const n = this.number();
          return { t: 'sym', text: `${t.text} ${sign.text} ${n.value}`, quoted: false, span: join(t.span, n.span) };
        }
        if (sign.kind === 'word' && /^[+-][0-9]+$/.test(sign.text)) {
          this.next();
          return { t: 'sym', text: `${t.text} ${sign.text[0]} ${Number(sign.text.slice(1))}`, quoted: false, span: join(t.span, sign.span) };
        }
        return { t: 'sym', text: t.text, quoted: false, span: t.span };
      }
      if (/^-?[0-9]+$/.test(t.text)) {
        this.next();
        return { t: 'sym', text: t.text, quoted: false, span: t.span };
      }
      if (t.text === '-' && this.peek(1).kind === 'word' && /^[0-9]+$/.test(this.peek(1).text)) {
        this.next();
        const n = this.next();
        return { t: 'sym', text: `-${n.text}`, quoted: false, span: join(t.span, n.span) };
      }
    }
    if (t.kind === 'string') {
      this.next();
      return { t: 'sym', text: t.text, quoted: true, span: t.span };
    }
    return this.fail(t, 'number or priority name');
  }

  private dataTypes(): { types: string[]; span: Span } {
    const first = this.expectWord();
    const types = [first.text];
    let end = first.span;
    while (this.isWord('.')) {
      this.next();
      const w = this.expectWord();
      types.push(w.text);
      end = w.span;
    }
    return { types, span: join(first.span, end) };
  }

  private setBody(map: boolean): RawSetSpec {
    const flags: { flag: string; span: Span }[] = [];
    let spec: { -readonly [K in keyof RawSetSpec]: RawSetSpec[K] } = { flags };
    const stateful: RawStatement[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) break;
      if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
        this.next();
        continue;
      }
      if (this.commonBlock()) continue;
      if (t.kind !== 'word') this.fail(t);
      switch (t.text) {
        case 'type': {
          this.next();
          spec = { ...spec, key: this.dataTypes() };
          if (map) {
            this.expectWord(':');
            let interval = false;
            if (this.isWord('interval')) {
              this.next();
              interval = true;
            }
            const d = this.peek();
            if (!interval && d.kind === 'word' && (OBJECT_KEYWORDS[d.text] !== undefined)) {
              this.next();
              spec = { ...spec, objType: { type: OBJECT_KEYWORDS[d.text]!, span: d.span } };
            } else {
              const data = this.dataTypes();
              spec = { ...spec, data: { ...data, ...(interval ? { interval } : {}) } };
            }
          }
          this.separator();
          break;
        }
        case 'typeof': {
          this.next();
          const exprs = [this.typeofItem()];
          while (this.isWord('.')) {
            this.next();
            exprs.push(this.typeofItem());
          }
          spec = { ...spec, typeofKey: { exprs, span: join(exprs[0]!.span, exprs[exprs.length - 1]!.span) } };
          if (map) {
            this.expectWord(':');
            let interval = false;
            if (this.isWord('interval')) {
              this.next();
              interval = true;
            }
            const d = this.peek();
            if (d.kind === 'word' && d.text === 'verdict') {
              this.next();
              spec = { ...spec, data: { types: ['verdict'], span: d.span } };
            } else {
              const items = [this.typeofItem()];
              while (this.isWord('.')) {
                this.next();
                items.push(this.typeofItem());
              }
              const expr: RawExpr = items.length === 1 ? items[0]! : { t: 'concat', items, span: join(items[0]!.span, items[items.length - 1]!.span) };
              spec = { ...spec, typeofData: { expr, span: expr.span, ...(interval ? { interval } : {}) } };
            }
          }
          this.separator();
          break;
        }
        case 'flags':
          this.next();
          for (;;) {
            const f = this.expectWord();
            if (!['constant', 'interval', 'timeout', 'dynamic'].includes(f.text)) this.fail(f);
            flags.push({ flag: f.text, span: f.span });
            if (!this.isPunct(',')) break;
            this.next();
          }
          this.separator();
          break;
        case 'elements':
          this.next();
          this.expectPunct('=');
          spec = { ...spec, elements: this.setBlockExpr() };
          break;
        case 'size':
          this.next();
          spec = { ...spec, size: this.number().value };
          this.separator();
          break;
        case 'timeout':
          this.next();
          spec = { ...spec, timeout: this.timeSpec().value };
          this.separator();
          break;
        case 'gc-interval':
          this.next();
          spec = { ...spec, gcInterval: this.timeSpec().value };
          this.separator();
          break;
        case 'timeout': {
          const w = this.expectWord();
          const ms = parseTime(w.text);
          if (ms === null) this.failAt(w.span, `wrong time format: ${w.text}`, w.text, 'BAD_VALUE');
          spec = { ...spec, timeout: ms };
          break;
        }
        case 'comment':
          this.next();
          spec = { ...spec, comment: this.commentText() };
          this.separator();
          break;
        case 'policy': {
          this.next();
          const p = this.expectWord();
          if (p.text !== 'performance' && p.text !== 'memory') this.fail(p);
          spec = { ...spec, policy: p.text };
          this.separator();
          break;
        }
        case 'auto-merge':
          this.next();
          spec = { ...spec, autoMerge: true };
          break;
        case 'counter': case 'limit': case 'quota': case 'ct':
          if (t.text === 'ct' && !this.isWord('count', 1)) this.fail(this.peek(1));
          while (this.isWord('counter') || this.isWord('limit') || this.isWord('quota') || (this.isWord('ct') && this.isWord('count', 1))) stateful.push(this.statefulStatement());
          spec = { ...spec, stateful: [...stateful] };
          this.separator();
          break;
        default:
          this.fail(t);
      }
    }
    return spec;
  }

  /** An expression in `typeof`: a selector (without comparisons). */
  private typeofItem(): RawExpr {
    const t = this.peek();
    if (!this.selectorStart()) this.fail(t);
    const s = this.selector();
    return { t: 'sel', sel: s.sel, span: s.span };
  }

  private flowtableBody(): RawFlowtableSpec {
    let spec: { -readonly [K in keyof RawFlowtableSpec]: RawFlowtableSpec[K] } = {};
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) break;
      if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
        this.next();
        continue;
      }
      if (this.commonBlock()) continue;
      if (t.kind !== 'word') this.fail(t);
      switch (t.text) {
        case 'hook': {
          this.next();
          const h = this.expectWord();
          if (KEYWORDS.has(h.text)) this.fail(h, 'string');
          this.expectWord('priority');
          const priority = this.priority();
          spec = { ...spec, hook: { hook: h.text, priority, span: h.span } };
          this.separator();
          break;
        }
        case 'devices':
          this.next();
          this.expectPunct('=');
          spec = { ...spec, devices: this.deviceList() };
          this.separator();
          break;
        case 'counter':
          this.next();
          spec = { ...spec, counter: true };
          break;
        case 'flags':
          this.next();
          this.expectWord('offload');
          spec = { ...spec, offload: true };
          this.separator();
          break;
        default:
          this.fail(t);
      }
    }
    return spec;
  }

  /** A stateful object's body: `{ … }`, or for `add` the short forms (`add counter t c packets 1 bytes 2`). */
  private objectSpec(type: NftObjectType, op: 'add' | 'create'): RawObjectSpec | undefined {
    void op;
    if (!this.isPunct('{')) {
      if (this.atEnd()) {
        if (type === 'counter') return { type: 'counter', packets: 0, bytes: 0 };
        return this.fail(this.peek(), "'{'");
      }
      if (type.startsWith('ct ')) this.fail(this.peek(), "'{'");
      return this.objectConfig(type, undefined);
    }
    this.next();
    let spec: RawObjectSpec | undefined;
    let comment: string | undefined;
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof' || (t.kind === 'punct' && t.text === '}')) break;
      if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
        this.next();
        continue;
      }
      if (this.commonBlock()) continue;
      if (t.kind === 'word' && t.text === 'comment') {
        this.next();
        comment = this.commentText();
        continue;
      }
      spec = this.objectConfig(type, spec);
    }
    this.expectPunct('}');
    const base: RawObjectSpec = spec ?? emptyObject(type);
    return comment !== undefined ? { ...base, comment } : base;
  }

  /** One configuration line of an object. */
  private objectConfig(type: NftObjectType, prev: RawObjectSpec | undefined): RawObjectSpec {
    const t = this.peek();
    switch (type) {
      case 'counter': {
        this.expectWord('packets');
        const packets = this.number().value;
        this.expectWord('bytes');
        const bytes = this.number().value;
        return { type, packets, bytes };
      }
      case 'quota': {
        const q = this.quotaArgs();
        return { type, ...q };
      }
      case 'limit': {
        this.expectWord('rate');
        const l = this.limitArgs();
        return { type, rate: l.rate, unit: l.unit, over: l.over, ...(l.burst !== undefined ? { burst: l.burst } : {}), ...(l.bytes ? { bytes: true } : {}) };
      }
      case 'secmark': {
        const s = this.string();
        return { type, context: s.text };
      }
      case 'synproxy': {
        // In a block the parts are separated (`mss 1460; wscale 7; timestamp`); the command form
        // (`add synproxy t s mss 1460 wscale 7 timestamp`) ends at its own newline.
        const partSeparator = (next: readonly string[]): void => {
          if (this.atEnd() && !this.isPunct('}') && next.some((w) => this.isWord(w, 1))) this.separator();
        };
        this.expectWord('mss');
        const mss = this.number().value;
        partSeparator(['wscale']);
        this.expectWord('wscale');
        const wscale = this.number().value;
        partSeparator(['timestamp', 'sack-perm', 'sack-permitted']);
        const flags: ('timestamp' | 'sack-perm')[] = [];
        if (this.isWord('timestamp')) {
          this.next();
          flags.push('timestamp');
        }
        if (this.isWord('sack-perm') || this.isWord('sack-permitted')) {
          this.next();
          flags.push('sack-perm');
        }
        return { type, mss, wscale, flags };
      }
      case 'ct helper': {
        const p = (prev ?? emptyObject(type)) as Extract<RawObjectSpec, { type: 'ct helper' }>;
        if (this.isWord('type')) {
          this.next();
          const name = this.peek();
          if (name.kind !== 'string') this.fail(name, 'quoted string');
          this.next();
          this.expectWord('protocol');
          const proto = this.expectWord();
          if (proto.text !== 'tcp' && proto.text !== 'udp') this.fail(proto);
          this.separator();
          return { ...p, helper: { name: name.text, protocol: proto.text, span: name.span } };
        }
        if (this.isWord('l3proto')) {
          this.next();
          const f = this.expectWord();
          if (!FAMILIES.has(f.text)) this.fail(f);
          this.separator();
          return { ...p, l3proto: { value: f.text, span: f.span } };
        }
        return this.fail(t);
      }
      case 'ct timeout': {
        const p = (prev ?? emptyObject(type)) as Extract<RawObjectSpec, { type: 'ct timeout' }>;
        if (this.isWord('protocol')) {
          this.next();
          const proto = this.expectWord();
          if (proto.text !== 'tcp' && proto.text !== 'udp') this.fail(proto);
          this.separator();
          return { ...p, protocol: proto.text };
        }
        if (this.isWord('l3proto')) {
          this.next();
          const f = this.expectWord();
          if (!FAMILIES.has(f.text)) this.fail(f);
          this.separator();
          return { ...p, l3proto: { value: f.text, span: f.span } };
        }
        if (this.isWord('policy')) {
          const start = this.next();
          this.expectPunct('=');
          this.expectPunct('{');
          const policy: [string, number][] = [];
          for (;;) {
            const name = this.expectWord();
            const glued = /^([a-z_0-9]+):([0-9]+)$/.exec(name.text);
            if (glued) {
              policy.push([glued[1]!, Number(glued[2])]);
            } else {
              this.expectWord(':');
              const n = this.number();
              policy.push([name.text, n.value]);
            }
            if (!this.isPunct(',')) break;
            this.next();
          }
          this.expectPunct('}');
          this.separator();
          return { ...p, policy, policySpan: start.span };
        }
        return this.fail(t);
      }
      case 'ct expectation': {
        const p = (prev ?? emptyObject(type)) as Extract<RawObjectSpec, { type: 'ct expectation' }>;
        const k = this.expectWord();
        let out: RawObjectSpec;
        switch (k.text) {
          case 'protocol': {
            const proto = this.expectWord();
            if (proto.text !== 'tcp' && proto.text !== 'udp') this.fail(proto);
            out = { ...p, protocol: proto.text };
            break;
          }
          case 'dport': out = { ...p, dport: this.number().value }; break;
          case 'timeout': out = { ...p, timeout: this.timeSpec().value }; break;
          case 'size': out = { ...p, size: this.number().value }; break;
          case 'l3proto': {
            const f = this.expectWord();
            if (!FAMILIES.has(f.text)) this.fail(f);
            out = { ...p, l3proto: { value: f.text, span: f.span } };
            break;
          }
          default: return this.fail(k);
        }
        this.separator();
        return out;
      }
    }
  }

  // --- rules ----------------------------------------------------------------------------

  /** `rule`: statements, then an optional `comment "…"`. */
  private rule(): RawStatement[] {
    const out: RawStatement[] = [];
    while (!this.atEnd()) {
      if (this.isWord('comment')) {
        const c = this.next();
        const s = this.commentText();
        out.push({ t: 'comment', text: s, span: c.span });
        if (!this.atEnd()) this.fail(this.peek());
        break;
      }
      out.push(this.statement());
    }
    if (out.length === 0 || out.every((s) => s.t === 'comment')) this.fail(this.peek());
    return out;
  }

  /**
   * `jump|goto { RULE; … }` (after the verdict word): an anonymous chain. Its block is a scope, as
   * nft's `chain_block_alloc` opens one: inside a chain of a table block it is the fourth and last
   * level, so another inside it is "too many levels of nesting" (nft points at the verdict word's end).
   */
  private boundChain(verdict: NftToken): RawStatement {
    if (this.scopes.length >= SCOPE_NEST_MAX) {
      const last = verdict.span.length - 1;
      this.failAt({ line: verdict.span.line, column: verdict.span.column + last, offset: verdict.span.offset + last, length: 1 }, 'too many levels of nesting', verdict.text, 'UNEXPECTED_TOKEN');
    }
    this.expectPunct('{');
    this.openScope();
    const block: RawBoundRule[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind === 'punct' && t.text === '}') break;
      if (t.kind === 'newline' || (t.kind === 'punct' && t.text === ';')) {
        this.next();
        continue;
      }
      const statements = this.rule();
      block.push({ statements, span: join(statements[0]!.span, this.peek(-1).span) });
      this.separator();
    }
    const close = this.expectPunct('}');
    this.closeScope();
    return { t: 'verdict', verdict: verdict.text as 'jump', span: join(verdict.span, close.span), block };
  }

  private statement(): RawStatement {
    const t = this.peek();
    if (t.kind !== 'word') this.fail(t);
    switch (t.text) {
      case 'accept': case 'drop': case 'return': case 'continue':
        this.next();
        return { t: 'verdict', verdict: t.text, span: t.span };
      case 'jump': case 'goto': {
        this.next();
        if (this.isPunct('{')) return this.boundChain(t);
        const c = this.chainName();
        return { t: 'verdict', verdict: t.text, chain: c.text, span: join(t.span, c.span), chainSpan: c.span };
      }
      case 'counter': case 'quota': case 'limit':
        if (this.isWord('name', 1)) return this.objrefStatement();
        return this.statefulStatement();
      case 'log': return this.logStatement();
      case 'reject': return this.rejectStatement();
      case 'snat': case 'dnat': case 'masquerade': case 'redirect': return this.natStatement();
      case 'tproxy': return this.tproxyStatement();
      case 'notrack':
        this.next();
        return { t: 'notrack', span: t.span };
      case 'queue': return this.queueStatement();
      case 'dup': return this.dupStatement();
      case 'fwd': return this.fwdStatement();
      case 'synproxy':
        if (this.isWord('name', 1)) return this.objrefStatement();
        return this.synproxyStatement();
      case 'add': case 'update': case 'delete': case 'set':
        if (t.text === 'set' || this.peek(1).text.startsWith('@')) return this.dynsetStatement();
        return this.fail(t);
      case 'flow': {
        this.next();
        const k = this.expectWord();
        if (k.text !== 'add' && k.text !== 'offload') {
          if (k.text === 'table') this.failAt(k.span, 'meters (flow table …) are not supported', k.text, 'UNSUPPORTED');
          this.fail(k);
        }
        const ref = this.expectWord();
        if (!ref.text.startsWith('@') || ref.text.length < 2) this.fail(ref);
        return { t: 'flow', flowtable: ref.text.slice(1), span: join(t.span, ref.span) };
      }
      case 'meter': return this.meterStatement();
      case 'xt': return this.failAt(t.span, 'xt (iptables extension) statements cannot be loaded by nft', t.text, 'UNSUPPORTED');
      case 'ct':
        if (this.isWord('count', 1)) return this.statefulStatement();
        if ((this.isWord('helper', 1) || this.isWord('timeout', 1) || this.isWord('expectation', 1)) && this.isWord('set', 2)) return this.objrefStatement();
        return this.matchOrMangle();
      case 'meta':
        if (this.isWord('secmark', 1) && this.isWord('set', 2) && !this.isWord('ct', 3)) return this.objrefStatement();
        return this.matchOrMangle();
      case 'reset': {
        this.next();
        this.expectWord('tcp');
        this.expectWord('option');
        const o = this.expectWord();
        let option: string;
        if (/^[0-9]+$/.test(o.text)) {
          if (Number(o.text) > 255) this.failAt(o.span, 'value too large', o.text, 'BAD_VALUE');
          option = TCPOPT_KINDS[Number(o.text)] ?? String(Number(o.text));
        } else {
          option = TCPOPT_ALIASES[o.text] ?? o.text;
          if (tcpOptionFields(option) === undefined) this.fail(o);
        }
        return { t: 'optstrip', option, span: join(t.span, o.span) };
      }
      default:
        return this.matchOrMangle();
    }
  }

  /** `chain_expr`: a chain name or a variable holding one. */
  private chainName(): NftToken {
    const t = this.peek();
    if (t.kind === 'word' && t.text.startsWith('$')) {
      const v = this.variable(this.next());
      if (v.t !== 'sym') this.failAt(t.span, 'syntax error, expecting a chain name', t.text);
      return { kind: 'word', text: v.text, span: t.span };
    }
    return this.identifier();
  }

  /** `counter name X`, `quota name X`, `limit name X`, `synproxy name X`, `ct helper|timeout|expectation set X`, `meta secmark set X`. */
  private objrefStatement(): RawStatement {
    const start = this.next();
    let objType: NftObjectType;
    if (start.text === 'ct') {
      const k = this.next();
      objType = `ct ${k.text}` as NftObjectType;
      this.expectWord('set');
    } else if (start.text === 'meta') {
      this.next();
      this.expectWord('set');
      objType = 'secmark';
    } else {
      objType = OBJECT_KEYWORDS[start.text]!;
      this.expectWord('name');
    }
    const name = this.stmtExpr();
    return { t: 'objref', objType, name, span: join(start.span, name.span) };
  }

  /** `counter`, `limit rate …`, `quota …`, `ct count …`: the statements a set may carry. */
  private statefulStatement(): RawStatement {
    const t = this.next();
    switch (t.text) {
      case 'counter': {
        let packets = 0;
        let bytes = 0;
        while (this.isWord('packets') || this.isWord('bytes')) {
          const k = this.next();
          const n = this.number().value;
          if (k.text === 'packets') packets = n;
          else bytes = n;
        }
        return { t: 'counter', packets, bytes, span: t.span };
      }
      case 'limit': {
        this.expectWord('rate');
        const l = this.limitArgs();
        return { t: 'limit', rate: l.rate, unit: l.unit, over: l.over, ...(l.burst !== undefined ? { burst: l.burst } : {}), ...(l.bytes ? { bytes: true } : {}), span: t.span };
      }
      case 'quota': {
        const q = this.quotaArgs();
        return { t: 'quota', ...q, span: t.span };
      }
      case 'ct': {
        this.expectWord('count');
        let over = false;
        if (this.isWord('over')) {
          this.next();
          over = true;
        }
        const n = this.number();
        return { t: 'connlimit', count: n.value, over, span: join(t.span, n.span) };
      }
      default:
        return this.fail(t);
    }
  }

  /** `[over|until] N [bytes|kbytes|mbytes] [used N UNIT]`. */
  private quotaArgs(): { over: boolean; bytes: bigint; used: bigint } {
    let over = false;
    if (this.isWord('over')) {
      this.next();
      over = true;
    } else if (this.isWord('until')) this.next();
    const n = this.bigNumber();
    const bytes = n.value * this.byteUnit();
    let used = 0n;
    if (this.isWord('used')) {
      this.next();
      const u = this.bigNumber();
      used = u.value * this.byteUnit();
    }
    return { over, bytes, used };
  }

  /** `bytes`, `kbytes`, `mbytes` (`data_unit_parse`). */
  private byteUnit(): bigint {
    const u = this.expectWord();
    switch (u.text) {
      case 'bytes': return 1n;
      case 'kbytes': return 1024n;
      case 'mbytes': return 1024n * 1024n;
      default: return this.failAt(u.span, 'Wrong unit format, expecting bytes, kbytes or mbytes', u.text, 'BAD_VALUE');
    }
  }

  /** `[over|until] N/UNIT [burst N packets]` or a byte rate `N UNIT/TIME [burst N UNIT]`. */
  private limitArgs(): { rate: number; unit: 'second' | 'minute' | 'hour' | 'day' | 'week'; over: boolean; burst?: number; bytes?: boolean } {
    let over = false;
    if (this.isWord('over')) {
      this.next();
      over = true;
    } else if (this.isWord('until')) this.next();
    const units = ['second', 'minute', 'hour', 'day', 'week'];
    const r = this.expectWord();
    let rate: number;
    let unit: string;
    let bytes = false;
    const m = /^([0-9]+)\/(second|minute|hour|day|week)$/.exec(r.text);
    if (m) {
      rate = Number(m[1]);
      unit = m[2]!;
    } else if (/^[0-9]+$/.test(r.text) && (this.isWord('/') || /^\/[a-z]+$/.test(this.peek().text))) {
      rate = Number(r.text);
      const w = this.next();
      unit = w.text === '/' ? this.expectWord().text : w.text.slice(1);
      if (!units.includes(unit)) this.fail(this.peek(-1));
    } else if (/^[0-9]+$/.test(r.text) && this.isWord() && /^(bytes|kbytes|mbytes)(\/(second|minute|hour|day|week))?$/.test(this.peek().text)) {
      const w = this.next().text;
      const [u, t] = w.split('/') as [string, string | undefined];
      const mult = u === 'bytes' ? 1 : u === 'kbytes' ? 1024 : 1024 * 1024;
      rate = Number(r.text) * mult;
      if (t !== undefined) unit = t;
      else {
        if (this.isWord('/')) this.next();
        unit = this.expectWord().text;
      }
      if (!units.includes(unit)) this.fail(this.peek(-1));
      bytes = true;
    } else {
      return this.fail(r);
    }
    let burst: number | undefined;
    if (this.isWord('burst')) {
      this.next();
      burst = this.number().value;
      const u = this.expectWord();
      if (bytes) burst *= u.text === 'bytes' ? 1 : u.text === 'kbytes' ? 1024 : u.text === 'mbytes' ? 1024 * 1024 : NaN;
      else if (u.text !== 'packets') this.fail(u, 'packets');
      if (Number.isNaN(burst)) this.fail(u);
    }
    return { rate, unit: unit as 'second', over, ...(burst !== undefined ? { burst } : {}), ...(bytes ? { bytes } : {}) };
  }

  private logStatement(): RawStatement {
    const start = this.next();
    const s: { prefix?: string; level?: string; group?: number; snaplen?: number; queueThreshold?: number; flags?: string[] } = {};
    for (;;) {
      if (this.isWord('prefix')) {
        this.next();
        const p = this.string();
        s.prefix = this.expandVariables(p);
      } else if (this.isWord('level')) {
        this.next();
        const l = this.string();
        if (!['emerg', 'alert', 'crit', 'err', 'warn', 'notice', 'info', 'debug', 'audit'].includes(l.text)) this.failAt(l.span, `invalid log level`, l.text, 'BAD_VALUE');
        s.level = l.text;
      } else if (this.isWord('group')) {
        this.next();
        s.group = this.number().value;
      } else if (this.isWord('snaplen')) {
        this.next();
        s.snaplen = this.number().value;
      } else if (this.isWord('queue-threshold')) {
        this.next();
        s.queueThreshold = this.number().value;
      } else if (this.isWord('flags')) {
        this.next();
        const flags = s.flags ?? [];
        const f = this.expectWord();
        if (f.text === 'tcp') {
          for (;;) {
            const g = this.expectWord();
            if (g.text !== 'sequence' && g.text !== 'options') this.fail(g);
            flags.push(`tcp ${g.text}`);
            if (!this.isPunct(',')) break;
            this.next();
          }
        } else if (f.text === 'ip') {
          this.expectWord('options');
          flags.push('ip options');
        } else if (f.text === 'skuid' || f.text === 'ether' || f.text === 'all') flags.push(f.text);
        else this.fail(f);
        s.flags = flags;
      } else break;
    }
    return { t: 'log', ...s, span: start.span };
  }

  /** `log prefix "…$var…"`: variables in the prefix are replaced by their values. */
  private expandVariables(t: NftToken): string {
    if (!t.text.includes('$')) return t.text;
    return t.text.replace(/\$([A-Za-z0-9_]+)/g, (_m, name: string) => {
      const v = this.lookup(name);
      if (!v) this.failAt(t.span, `unknown identifier '${name}'`, t.text, 'BAD_VALUE');
      if (v.t !== 'sym') this.failAt(t.span, `${name}: only plain values can be used in a log prefix`, t.text, 'BAD_VALUE');
      return v.text;
    });
  }

  private rejectStatement(): RawStatement {
    const start = this.next();
    if (!this.isWord('with')) return { t: 'reject', span: start.span };
    this.next();
    const kind = this.expectWord();
    if (kind.text === 'tcp') {
      this.expectWord('reset');
      return { t: 'reject', with: { type: 'tcp-reset' }, span: start.span };
    }
    if (kind.text !== 'icmp' && kind.text !== 'icmpv6' && kind.text !== 'icmpx') this.fail(kind);
    if (this.isWord('type')) this.next();
    const code = this.peek();
    if (code.kind !== 'word' || KEYWORDS.has(code.text)) this.fail(code);
    this.next();
    const expr: RawExpr = code.text.startsWith('$') ? { ...this.variable(code), span: code.span } : { t: 'sym', text: code.text, quoted: false, span: code.span };
    return { t: 'reject', with: { type: kind.text, code: expr }, span: start.span };
  }

  private natFlags(): string[] {
    const flags: string[] = [];
    while (this.isWord('random') || this.isWord('fully-random') || this.isWord('persistent')) {
      flags.push(this.next().text);
      if (this.isPunct(',')) this.next();
    }
    return flags;
  }

  private natStatement(): RawStatement {
    const start = this.next();
    const type = start.text as 'snat' | 'dnat' | 'masquerade' | 'redirect';
    let family: 'ip' | 'ip6' | undefined;
    let concat = false;
    let interval = false;
    let prefix = false;
    if (type === 'snat' || type === 'dnat') {
      if (this.isWord('ip') || this.isWord('ip6')) {
        const f = this.peek(1);
        if (f.kind === 'word' && (f.text === 'to' || f.text === 'addr' || f.text === 'interval' || f.text === 'prefix')) family = this.next().text as 'ip' | 'ip6';
      }
      if (this.isWord('addr')) {
        this.next();
        this.expectWord('.');
        this.expectWord('port');
        concat = true;
      } else if (this.isWord('interval')) {
        this.next();
        interval = true;
      } else if (this.isWord('prefix')) {
        this.next();
        prefix = true;
      }
    }
    let addr: RawExpr | undefined;
    let port: RawExpr | undefined;
    const hadTo = this.isWord('to');
    if (hadTo) this.next();
    else if ((concat || interval || prefix || family) && !this.atEnd()) this.fail(this.peek(), 'to');
    if (type === 'masquerade' || type === 'redirect') {
      if (hadTo) {
        port = this.natPortOnly();
      }
    } else if (hadTo || (!this.atEnd() && !this.isNatFlag())) {
      ({ addr, port } = this.natTarget());
    } else {
      this.fail(this.peek());
    }
    const flags = this.natFlags();
    return {
      t: 'nat', type, ...(family ? { family } : {}), ...(addr ? { addr } : {}), ...(port ? { port } : {}), flags, span: start.span,
      ...(concat ? { concat } : {}), ...(interval ? { interval } : {}), ...(prefix ? { prefix } : {}),
    };
  }

  private isNatFlag(): boolean {
    return this.isWord('random') || this.isWord('fully-random') || this.isWord('persistent');
  }

  /** `redirect to :8080`, `redirect to 8080`, `masquerade to :1024-2048`, `to :$port`. */
  private natPortOnly(): RawExpr {
    const t = this.peek();
    if (t.kind === 'word' && t.text === ':') {
      this.next();
      return this.stmtExpr();
    }
    if (t.kind === 'word' && t.text.startsWith(':') && !t.text.startsWith('::')) {
      this.next();
      const rest = t.text.slice(1);
      const span: Span = { ...t.span, column: t.span.column + 1, offset: t.span.offset + 1, length: Math.max(1, rest.length) };
      return rest.startsWith('$') ? { ...this.variable({ kind: 'word', text: rest, span }), span } : { t: 'sym', text: rest, quoted: false, span };
    }
    return this.stmtExpr();
  }

  /** A NAT target: `ADDR`, `ADDR:PORT`, `[ADDR6]:PORT`, `:PORT`, ranges, maps, `$var` in either place. */
  private natTarget(): { addr?: RawExpr; port?: RawExpr } {
    const t = this.peek();
    if (t.kind === 'word' && (t.text === ':' || (t.text.startsWith(':') && !t.text.startsWith('::')))) return { port: this.natPortOnly() };
    if (t.kind === 'word' && !this.selectorStart() && !t.text.startsWith('$') && !t.text.startsWith('@') && (t.text.includes(':') || t.text.startsWith('['))) {
      // One word: `10.0.0.1:80`, `[fd00::1]:80`, `10.0.0.1-10.0.0.3:80-90`, a bare IPv6 address.
      const split = this.splitAddressPort(t);
      if (split) {
        this.next();
        const addr = this.continueRange(split.addr);
        let port = split.port;
        if (port === undefined && this.isWord(':')) {
          this.next();
          port = this.stmtExpr();
        } else if (port !== undefined) port = this.continueRange(port);
        return { addr, ...(port ? { port } : {}) };
      }
    }
    const addr = this.stmtExpr();
    if (this.isWord(':')) {
      this.next();
      return { addr, port: this.stmtExpr() };
    }
    const n = this.peek();
    if (n.kind === 'word' && n.text.startsWith(':') && !n.text.startsWith('::')) return { addr, port: this.natPortOnly() };
    return { addr };
  }

  /** After a value, ` - HIGH` written with spaces. */
  private continueRange(low: RawExpr): RawExpr {
    if (this.isWord('-')) {
      this.next();
      const high = this.primaryRhs();
      return { t: 'range', low, high, span: join(low.span, high.span) };
    }
    return low;
  }

  /** One word holding an address and a port (`ADDR:PORT`, `[ADDR]:PORT`), or undefined. */
  private splitAddressPort(word: NftToken): { addr: RawExpr; port?: RawExpr } | undefined {
    const text = word.text;
    const at = (offset: number, len: number): Span => ({ ...word.span, column: word.span.column + offset, offset: word.span.offset + offset, length: Math.max(1, len) });
    const sym = (s: string, offset: number): RawExpr => (s.startsWith('$')
      ? { ...this.variable({ kind: 'word', text: s, span: at(offset, s.length) }), span: at(offset, s.length) }
      : { t: 'sym', text: s, quoted: false, span: at(offset, s.length) });
    if (text.startsWith('[')) {
      const close = text.indexOf(']');
      if (close < 0) this.fail(word);
      let addr: RawExpr = sym(text.slice(1, close), 1);
      let end = close + 1;
      // `[A]-[B]` (a range) and `[A]/N` (a prefix), before an optional `:PORT`.
      if (text.startsWith('-[', end)) {
        const close2 = text.indexOf(']', end + 2);
        if (close2 < 0) this.fail(word);
        const high = sym(text.slice(end + 2, close2), end + 2);
        addr = { t: 'range', low: addr, high, span: at(0, close2 + 1) };
        end = close2 + 1;
      } else if (text[end] === '/') {
        const m = /^\/([0-9]+)/.exec(text.slice(end));
        if (!m) this.fail(word);
        addr = { t: 'prefix', value: addr, length: Number(m[1]), span: at(0, end + m[0].length) };
        end += m[0].length;
      }
      const rest = text.slice(end);
      if (rest === '') return { addr };
      if (!rest.startsWith(':')) this.fail(word);
      return { addr, ...(rest.length > 1 ? { port: sym(rest.slice(1), end + 1) } : {}) };
    }
    // IPv4 (or a range of them, or a variable) then `:PORT`.
    const m = /^((?:[0-9]+\.[0-9.]*|\$[A-Za-z0-9_]+)(?:-(?:[0-9]+\.[0-9.]*|\$[A-Za-z0-9_]+))?):(.*)$/.exec(text);
    if (m) {
      const a = m[1]!;
      const p = m[2]!;
      return { addr: this.symOrRange(a, at, 0), ...(p !== '' ? { port: this.symOrRange(p, at, a.length + 1) } : {}) };
    }
    return { addr: sym(text, 0) };
  }

  private symOrRange(text: string, at: (o: number, l: number) => Span, offset: number): RawExpr {
    const one = (s: string, o: number): RawExpr => (s.startsWith('$')
      ? { ...this.variable({ kind: 'word', text: s, span: at(o, s.length) }), span: at(o, s.length) }
      : { t: 'sym', text: s, quoted: false, span: at(o, s.length) });
    if (text.includes('$') && text.includes('-')) {
      const d = text.indexOf('-', 1);
      return { t: 'range', low: one(text.slice(0, d), offset), high: one(text.slice(d + 1), offset + d + 1), span: at(offset, text.length) };
    }
    return one(text, offset);
  }

  private tproxyStatement(): RawStatement {
    const start = this.next();
    let family: 'ip' | 'ip6' | undefined;
    if (this.isWord('ip') || this.isWord('ip6')) family = this.next().text as 'ip' | 'ip6';
    this.expectWord('to');
    const { addr, port } = this.natTarget();
    return { t: 'tproxy', ...(family ? { family } : {}), ...(addr ? { addr } : {}), ...(port ? { port } : {}), span: start.span };
  }

  private queueStatement(): RawStatement {
    const start = this.next();
    const flags: ('bypass' | 'fanout')[] = [];
    let num: RawExpr | undefined;
    const queueFlags = (): void => {
      for (;;) {
        const f = this.expectWord();
        if (f.text !== 'bypass' && f.text !== 'fanout') this.fail(f);
        if (!flags.includes(f.text)) flags.push(f.text);
        if (!this.isPunct(',')) break;
        this.next();
      }
    };
    // `queue num` takes a number, a range or a variable; `queue to` also a numgen, a hash or a
    // map lookup (any other expression must go on to `map`, as nft's grammar has it).
    const queueNum = (): RawExpr => {
      const t = this.peek();
      if (t.kind !== 'word' || !(/^[0-9]/.test(t.text) || t.text.startsWith('$'))) this.fail(t, "number or '$'");
      return this.stmtExpr();
    };
    const queueTo = (): RawExpr => {
      const e = this.stmtExpr();
      if (e.t === 'sel' && e.sel.kind !== 'numgen' && e.sel.kind !== 'hash') this.fail(this.peek(), '. or map');
      return e;
    };
    if (this.isWord('flags')) {
      this.next();
      queueFlags();
      if (this.isWord('to')) {
        this.next();
        num = queueTo();
      } else {
        this.expectWord('num');
        num = queueNum();
      }
    } else if (this.isWord('to')) {
      this.next();
      num = queueTo();
    } else {
      for (;;) {
        if (this.isWord('num')) {
          this.next();
          num = queueNum();
        } else if (this.isWord('bypass') || this.isWord('fanout')) queueFlags();
        else break;
      }
    }
    return { t: 'queue', ...(num ? { num } : {}), flags, span: start.span };
  }

  private dupStatement(): RawStatement {
    const start = this.next();
    this.expectWord('to');
    const addr = this.stmtExpr();
    let dev: RawExpr | undefined;
    if (this.isWord('device')) {
      this.next();
      dev = this.stmtExpr();
    }
    return { t: 'dup', addr, ...(dev ? { dev } : {}), span: start.span };
  }

  private fwdStatement(): RawStatement {
    const start = this.next();
    let family: 'ip' | 'ip6' | undefined;
    if (this.isWord('ip') || this.isWord('ip6')) family = this.next().text as 'ip' | 'ip6';
    this.expectWord('to');
    const first = this.stmtExpr();
    if (family) {
      this.expectWord('device');
      const dev = this.stmtExpr();
      return { t: 'fwd', family, addr: first, dev, span: start.span };
    }
    return { t: 'fwd', dev: first, span: start.span };
  }

  private synproxyStatement(): RawStatement {
    const start = this.next();
    let mss: number | undefined;
    let wscale: number | undefined;
    const flags: ('timestamp' | 'sack-perm')[] = [];
    for (;;) {
      if (this.isWord('mss') || this.isWord('maxseg')) {
        this.next();
        mss = this.number().value;
      } else if (this.isWord('wscale')) {
        this.next();
        wscale = this.number().value;
      } else if (this.isWord('timestamp')) {
        this.next();
        if (!flags.includes('timestamp')) flags.push('timestamp');
      } else if (this.isWord('sack-perm') || this.isWord('sack-permitted')) {
        this.next();
        if (!flags.includes('sack-perm')) flags.push('sack-perm');
      } else break;
    }
    return { t: 'synproxy', ...(mss !== undefined ? { mss } : {}), ...(wscale !== undefined ? { wscale } : {}), flags, span: start.span };
  }

  /** `add|update|delete @set { KEY [timeout T] [stateful…] [: DATA] }` and the older `set add KEY @set`. */
  private meterStatement(): RawStatement {
    const start = this.next();
    const name = this.identifier();
    let size: number | undefined;
    if (this.isWord('size')) {
      this.next();
      size = this.number().value;
    }
    this.expectPunct('{');
    const key = this.concatExpr();
    let timeout: number | undefined;
    for (;;) {
      if (this.isWord('timeout')) {
        this.next();
        timeout = this.timeSpec().value;
      } else if (this.isWord('comment')) {
        this.next();
        this.commentText();
      } else break;
    }
    const stmt = this.statefulStatement();
    const close = this.expectPunct('}');
    return { t: 'meter', name: name.text, ...(size !== undefined ? { size } : {}), key, ...(timeout !== undefined ? { timeout } : {}), stmt, span: join(start.span, close.span) };
  }

  private dynsetStatement(): RawStatement {
    const start = this.next();
    if (start.text === 'set') {
      const op = this.expectWord();
      if (op.text !== 'add' && op.text !== 'update' && op.text !== 'delete') this.fail(op);
      const key = this.concatExpr(true);
      const ref = this.expectWord();
      if (!ref.text.startsWith('@')) this.fail(ref);
      return { t: 'dynset', op: op.text, set: ref.text.slice(1), key, stateful: [], span: join(start.span, ref.span), setSpan: ref.span };
    }
    const ref = this.expectWord();
    if (!ref.text.startsWith('@') || ref.text.length < 2) this.fail(ref);
    this.expectPunct('{');
    const key = this.concatExpr(true);
    let timeout: number | undefined;
    const stateful: RawStatement[] = [];
    for (;;) {
      if (this.isWord('timeout')) {
        this.next();
        timeout = this.timeSpec().value;
      } else if (this.isWord('expires')) {
        this.next();
        this.timeSpec();
      } else if (this.isWord('comment')) {
        this.next();
        this.commentText();
      } else if (this.isWord('counter') || this.isWord('limit') || this.isWord('quota') || (this.isWord('ct') && this.isWord('count', 1))) {
        stateful.push(this.statefulStatement());
      } else break;
    }
    let data: RawExpr | undefined;
    if (this.isWord(':')) {
      this.next();
      // The data: header fields (`ip daddr . tcp dport`) or a value (`: 0x00000002`).
      data = this.selectorStart() ? this.concatExpr() : this.primaryRhs();
    }
    const close = this.expectPunct('}');
    return {
      t: 'dynset', op: start.text as 'add', set: ref.text.slice(1), key, ...(data ? { data } : {}), ...(timeout !== undefined ? { timeout } : {}), stateful,
      span: join(start.span, close.span), setSpan: ref.span,
    };
  }

  // --- expressions ------------------------------------------------------------------------

  /** Whether a selector (the left side of a match) starts here. */
  private selectorStart(k = 0): boolean {
    const t = this.peek(k);
    if (t.kind !== 'word') return false;
    if (/^@(ll|nh|th|ih)$/.test(t.text) && this.isPunct(',', k + 1)) return true;
    if (payloadFields(t.text) !== undefined || t.text === 'th') {
      const n = this.peek(k + 1);
      if (n.kind !== 'word') return false;
      if (t.text === 'tcp' && n.text === 'option') return true;
      if (t.text === 'sctp' && n.text === 'chunk') return true;
      if ((t.text === 'ip' || t.text === 'ip6') && n.text === 'option') return true;
      if (t.text === 'arp' && (n.text === 'saddr' || n.text === 'daddr')) return true;
      return payloadFields(t.text)?.[n.text] !== undefined;
    }
    if (exthdrFields(t.text) !== undefined) {
      const n = this.peek(k + 1);
      if (n.kind === 'word' && (exthdrFields(t.text)?.[n.text] !== undefined || /^(addr|sid)\[[0-9]+\]$/.test(n.text) || n.text === 'addr' || n.text === 'sid')) return true;
      if (t.text !== 'rt') return false;
    }
    return ['meta', 'ct', 'fib', 'socket', 'numgen', 'jhash', 'symhash', 'osf', 'ipsec', 'exthdr', 'rt'].includes(t.text) || (BARE_META.has(t.text) && META_KEYS[t.text] !== undefined);
  }

  private selector(): { sel: NftSelector; span: Span } {
    const t = this.next();
    const done = (sel: NftSelector): { sel: NftSelector; span: Span } => ({ sel, span: join(t.span, this.peek(-1).span) });
    if (t.text.startsWith('@')) {
      const base = t.text.slice(1);
      this.expectPunct(',');
      const offset = this.number().value;
      this.expectPunct(',');
      const length = this.number().value;
      return done({ kind: 'rawpayload', base: base as 'll', offset, length });
    }
    if (t.text === 'tcp' && this.isWord('option')) return done(this.tcpOption());
    if (t.text === 'sctp' && this.isWord('chunk')) {
      this.next();
      const c = this.expectWord();
      if (SCTP_CHUNKS[c.text] === undefined) this.fail(c);
      const f = this.peek();
      if (f.kind === 'word' && sctpChunkFieldBits(c.text, f.text) !== undefined) {
        this.next();
        return done({ kind: 'sctpchunk', chunk: c.text, field: f.text });
      }
      return done({ kind: 'sctpchunk', chunk: c.text });
    }
    if (t.text === 'ip' && this.isWord('option')) {
      // `ip option lsrr|rr|ssrr|ra [type|length|ptr|addr|value]`: without a field, its presence.
      this.next();
      const o = this.peek();
      if (o.kind !== 'word' || ipOptionFields(o.text) === undefined) this.fail(o, 'lsrr or rr or ssrr or ra');
      this.next();
      const f = this.peek();
      if (f.kind === 'word' && ['type', 'length', 'value', 'ptr', 'addr'].includes(f.text)) {
        this.next();
        if (ipOptionFields(o.text)![f.text] === undefined) this.failAt(t.span, 'unknown ip option type/field', f.text, 'BAD_VALUE');
        return done({ kind: 'ipopt', option: o.text as 'rr', field: f.text });
      }
      return done({ kind: 'ipopt', option: o.text as 'rr' });
    }
    if (t.text === 'ip6' && this.isWord('option')) this.fail(this.peek());
    const fields = payloadFields(t.text);
    if (fields !== undefined) {
      const fw = this.expectWord();
      let field = fw.text;
      // `vlan cfi` is the old name of the drop eligible indicator bit; nft lists it as `vlan dei`.
      if (t.text === 'vlan' && field === 'cfi') field = 'dei';
      if (t.text === 'arp' && (field === 'saddr' || field === 'daddr')) {
        const sub = this.expectWord();
        if (sub.text !== 'ether' && sub.text !== 'ip') this.fail(sub);
        field = `${field} ${sub.text}`;
      }
      if (fields[field] === undefined) {
        if (/^[a-z][a-z0-9-]*$/.test(field)) this.failAt(fw.span, `syntax error, unexpected ${fw.text}`, fw.text);
        this.fail(fw);
      }
      return done({ kind: 'payload', protocol: t.text as 'ip', field });
    }
    const ext = exthdrFields(t.text);
    if (ext !== undefined && !(t.text === 'rt' && ['classid', 'nexthop', 'mtu', 'ipsec', 'ip', 'ip6'].includes(this.peek().text))) {
      const fw = this.expectWord();
      const indexed = (t.text === 'srh' && fw.text.startsWith('sid')) || (t.text === 'rt0' && fw.text.startsWith('addr'));
      if (indexed) {
        // `srh sid[N]` (also `sid [N]`) and the same address of a type 0 header, `rt0 addr[N]`,
        // which nft lists as `srh sid[N]` (the two are the same bits). nft 1.0.6 knows the first two.
        let index = /^[a-z]+(\[[0-9]+\])$/.exec(fw.text)?.[1];
        if (index === undefined && /^(sid|addr)$/.test(fw.text) && /^\[[0-9]+\]$/.test(this.peek().text)) index = this.next().text;
        if (index === undefined) this.fail(fw);
        const n = Number(index.slice(1, -1));
        if (n === 0) this.failAt(this.peek().span, 'Could not parse integer', this.peek().text, 'BAD_VALUE');
        if (n > 2) this.failAt(this.peek().span, 'No symbol type information', this.peek().text, 'BAD_VALUE');
        return done({ kind: 'exthdr', header: 'srh', field: `sid[${n}]` });
      }
      if (ext[fw.text] === undefined) this.failAt(fw.span, `${t.text} ${fw.text}: this extension header field is not supported`, fw.text, 'UNSUPPORTED');
      return done({ kind: 'exthdr', header: t.text, field: fw.text });
    }
    switch (t.text) {
      case 'meta': {
        const k = this.expectWord();
        if (!META_KEYS[k.text]) this.failAt(k.span, `meta ${k.text}: unknown meta key`, k.text, 'BAD_VALUE');
        return done({ kind: 'meta', key: k.text === 'secpath' ? 'ipsec' : k.text === 'ibriport' ? 'ibrname' : k.text === 'obriport' ? 'obrname' : k.text });
      }
      case 'ct': {
        let direction: 'original' | 'reply' | undefined;
        let family: 'ip' | 'ip6' | undefined;
        if (this.isWord('original') || this.isWord('reply')) direction = this.next().text as 'original';
        if (direction && (this.isWord('ip') || this.isWord('ip6'))) family = this.next().text as 'ip';
        const k = this.expectWord();
        const addr = k.text === 'saddr' || k.text === 'daddr';
        if (!addr && !ctKeyType(k.text)) this.fail(k);
        if (family && !addr) this.fail(k);
        if (direction && !CT_DIRECTIONAL.has(k.text)) this.fail(k);
        return done({ kind: 'ct', key: k.text, ...(direction ? { direction } : {}), ...(family ? { family } : {}) });
      }
      case 'fib': {
        const flags: ('saddr' | 'daddr' | 'mark' | 'iif' | 'oif')[] = [];
        for (;;) {
          const f = this.expectWord();
          if (!['saddr', 'daddr', 'mark', 'iif', 'oif'].includes(f.text)) this.fail(f);
          flags.push(f.text as 'saddr');
          if (!this.isWord('.')) break;
          this.next();
        }
        const r = this.expectWord();
        if (r.text !== 'type' && r.text !== 'oif' && r.text !== 'oifname') this.fail(r);
        const span = join(t.span, r.span);
        if (!flags.includes('saddr') && !flags.includes('daddr')) this.failAt(span, 'fib: need either saddr or daddr', 'fib', 'BAD_VALUE');
        if (flags.includes('saddr') && flags.includes('daddr')) this.failAt(span, 'fib: saddr and daddr are mutually exclusive', 'fib', 'BAD_VALUE');
        if (flags.includes('iif') && flags.includes('oif')) this.failAt(span, 'fib: iif and oif are mutually exclusive', 'fib', 'BAD_VALUE');
        return done({ kind: 'fib', flags, result: r.text });
      }
      case 'socket': {
        const k = this.expectWord();
        if (k.text === 'cgroupv2') {
          this.expectWord('level');
          return done({ kind: 'socket', key: 'cgroupv2', level: this.number().value });
        }
        if (k.text !== 'transparent' && k.text !== 'mark' && k.text !== 'wildcard') this.fail(k);
        return done({ kind: 'socket', key: k.text });
      }
      case 'numgen': {
        const m = this.expectWord();
        if (m.text !== 'inc' && m.text !== 'random') this.fail(m);
        this.expectWord('mod');
        const mod = this.number();
        let offset = 0;
        if (this.isWord('offset')) {
          this.next();
          offset = this.number().value;
        }
        return done({ kind: 'numgen', mode: m.text, modulus: mod.value, offset });
      }
      case 'jhash': case 'symhash': {
        let expr: NftSelector | undefined;
        if (t.text === 'jhash') {
          const e = this.concatExpr();
          if (e.t !== 'sel' && e.t !== 'concat') this.failAt(e.span, 'jhash needs header fields to hash', undefined, 'BAD_VALUE');
          expr = rawToSelector(e);
        }
        this.expectWord('mod');
        const mod = this.number();
        let seed: number | undefined;
        if (t.text === 'jhash' && this.isWord('seed')) {
          this.next();
          seed = this.number().value;
        }
        let offset = 0;
        if (this.isWord('offset')) {
          this.next();
          offset = this.number().value;
        }
        return done({ kind: 'hash', mode: t.text, ...(expr ? { expr } : {}), modulus: mod.value, ...(seed !== undefined ? { seed } : {}), offset });
      }
      case 'rt': {
        let family: 'ip' | 'ip6' | undefined;
        if (this.isWord('ip') || this.isWord('ip6')) family = this.next().text as 'ip';
        const k = this.expectWord();
        if (!['classid', 'nexthop', 'mtu', 'ipsec'].includes(k.text)) this.fail(k);
        return done({ kind: 'rt', key: k.text as 'mtu', ...(family ? { family } : {}) });
      }
      case 'osf': {
        let ttl: 'loose' | 'skip' | undefined;
        if (this.isWord('ttl')) {
          this.next();
          const v = this.expectWord();
          if (v.text !== 'loose' && v.text !== 'skip') this.failAt(v.span, 'invalid ttl option', v.text, 'BAD_VALUE');
          ttl = v.text;
        }
        const k = this.expectWord();
        if (k.text !== 'name' && k.text !== 'version') this.fail(k);
        return done({ kind: 'osf', key: k.text, ...(ttl ? { ttl } : {}) });
      }
      case 'ipsec': {
        const d = this.expectWord();
        if (d.text !== 'in' && d.text !== 'out') this.fail(d);
        let spnum = 0;
        if (this.isWord('spnum')) {
          this.next();
          spnum = this.number().value;
          if (spnum > 255) this.failAt(this.peek(-1).span, 'Spnum 256 exceeds valid range 0-255', undefined, 'BAD_VALUE');
        }
        let family: 'ip' | 'ip6' | undefined;
        if (this.isWord('ip') || this.isWord('ip6')) family = this.next().text as 'ip';
        const k = this.expectWord();
        if (family ? k.text !== 'saddr' && k.text !== 'daddr' : k.text !== 'reqid' && k.text !== 'spi') this.fail(k);
        return done({ kind: 'ipsec', dir: d.text, spnum, key: k.text as 'spi', ...(family ? { family } : {}) });
      }
      case 'exthdr': {
        const h = this.expectWord();
        if (!['hbh', 'rt', 'frag', 'dst', 'mh'].includes(h.text)) this.fail(h);
        return done({ kind: 'exthdr', header: h.text });
      }
      default:
        if (BARE_META.has(t.text) && META_KEYS[t.text]) return done({ kind: 'meta', key: t.text === 'ibriport' ? 'ibrname' : t.text === 'obriport' ? 'obrname' : t.text });
        return this.fail(t);
    }
  }

  /** `tcp option NAME [FIELD]` (after `tcp`). */
  private tcpOption(): NftSelector {
    this.next();
    const o = this.expectWord();
    let option = TCPOPT_ALIASES[o.text] ?? o.text;
    if (/^[0-9]+$/.test(o.text)) {
      if (Number(o.text) > 255) this.failAt(o.span, `value too large`, o.text, 'BAD_VALUE');
      // A kind nft names is that option; another is a presence test by number.
      const named = TCPOPT_KINDS[Number(o.text)];
      if (named === undefined) return { kind: 'tcpopt', option: String(Number(o.text)) };
      option = named;
    }
    if (/^@[0-9]+$/.test(o.text)) {
      // `tcp option @KIND,OFFSET,LENGTH`
      const kind = Number(o.text.slice(1));
      if (kind > 255) this.failAt(o.span, `value too large`, o.text, 'BAD_VALUE');
      this.expectPunct(',');
      const offset = this.number().value;
      this.expectPunct(',');
      const length = this.number().value;
      return { kind: 'tcpopt', option: String(kind), raw: { offset, length } };
    }
    if (o.text === 'echo') this.failAt(o.span, 'tcp option echo is not supported', o.text, 'UNSUPPORTED');
    if (o.text === '@') this.failAt(o.span, 'raw tcp options are not supported', o.text, 'UNSUPPORTED');
    const fields = tcpOptionFields(option);
    if (fields === undefined) this.fail(o);
    const f = this.peek();
    if (f.kind === 'word' && fields[f.text] !== undefined && f.text !== 'kind') {
      this.next();
      if (option === 'sack' && o.text === 'sack0') option = 'sack';
      return { kind: 'tcpopt', option, field: f.text };
    }
    if (['sack', 'sack0', 'sack1', 'sack2', 'sack3', 'window', 'timestamp', 'maxseg', 'mptcp'].includes(option) && f.kind === 'word' && !this.atEnd()
      && ['left', 'right', 'count', 'tsval', 'tsecr', 'size', 'subtype', 'length'].includes(f.text)) this.fail(f);
    return { kind: 'tcpopt', option };
  }

  /** `concat_expr`: selectors (with bitwise operations) joined by `.`. */
  private concatExpr(constants = false): RawExpr {
    // A set updated from the packet path may take constants among its key's fields (`ip saddr . 22`).
    const item = (): RawExpr => (constants && !this.selectorStart() ? this.primaryRhs() : this.basicExpr());
    const items: RawExpr[] = [item()];
    while (this.isWord('.')) {
      this.next();
      items.push(item());
    }
    if (items.length === 1) return items[0]!;
    return { t: 'concat', items, span: join(items[0]!.span, items[items.length - 1]!.span) };
  }

  /** `basic_expr`: a primary expression with `<<`, `>>`, `&`, `^`, `|` (C precedence). */
  private basicExpr(): RawExpr {
    return this.binaryLevel(0, () => this.primaryExpr(), () => this.primaryRhs());
  }

  /** Binary operators by precedence: `|` < `^` < `&` < shifts. */
  private binaryLevel(level: number, first: () => RawExpr, rest: () => RawExpr): RawExpr {
    const levels: readonly (readonly string[])[] = [['|'], ['^'], ['&'], ['<<', '>>']];
    if (level >= levels.length) return first();
    let e = this.binaryLevel(level + 1, first, rest);
    for (;;) {
      const o = this.peek();
      const op = (o.kind === 'punct' || o.kind === 'word') ? BINOPS[o.text] : undefined;
      if (!op || !levels[level]!.includes(op)) break;
      this.next();
      const r = this.binaryLevel(level + 1, rest, rest);
      e = { t: 'binop', op, left: e, right: r, span: join(e.span, r.span) };
    }
    return e;
  }

  /** A primary expression on the left: a selector, `( … )`, or a constant. */
  private primaryExpr(): RawExpr {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === '(') {
      this.next();
      const e = this.basicExpr();
      this.expectPunct(')');
      return e;
    }
    if (this.selectorStart()) {
      const s = this.selector();
      return { t: 'sel', sel: s.sel, span: s.span };
    }
    if (t.kind === 'word' && t.text.startsWith('$')) return { ...this.variable(this.next()), span: t.span };
    return this.fail(t);
  }

  /** A constant operand: a symbol, a variable, keyword values, or `( … )`. */
  private primaryRhs(): RawExpr {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === '(') {
      this.next();
      // `(meta mark | 0x10) << 8` in a statement's value: a selector expression in parentheses.
      const e = this.selectorStart() ? this.basicExpr() : this.basicRhs();
      this.expectPunct(')');
      return e;
    }
    if (t.kind === 'word' && t.text.startsWith('$')) return { ...this.variable(this.next()), span: t.span };
    if (t.kind === 'word' && t.text.startsWith('@')) this.fail(t);
    if (t.kind === 'string') {
      this.next();
      return { t: 'sym', text: t.text, quoted: true, span: t.span };
    }
    if (t.kind === 'word') {
      if (t.text === '.' || t.text === ':' || t.text === '/' || t.text === '-' || t.text === '*') this.fail(t);
      if (KEYWORDS.has(t.text) && !RHS_KEYWORDS.has(t.text)) this.fail(t);
      this.next();
      return { t: 'sym', text: t.text, quoted: false, span: t.span };
    }
    return this.fail(t);
  }

  /** `basic_rhs_expr`: constants with bitwise operators. */
  private basicRhs(): RawExpr {
    return this.binaryLevel(0, () => this.primaryRhs(), () => this.primaryRhs());
  }

  /** A value with an optional ` - HIGH` or ` / LEN` written as separate words. */
  private multitonRhs(): RawExpr {
    const low = this.basicRhs();
    if (this.isWord('-')) {
      this.next();
      const high = this.basicRhs();
      return { t: 'range', low, high, span: join(low.span, high.span) };
    }
    if (this.isWord('/') && this.peek(1).kind === 'word' && /^[0-9]+$/.test(this.peek(1).text) && this.peek(2).kind !== 'punct') {
      // `ADDR / LEN` — but `tcp flags syn / syn,ack` is a flag mask (its mask is a list).
      if (!(this.peek(2).kind === 'punct' && this.peek(2).text === ',')) {
        this.next();
        const n = this.number();
        return { t: 'prefix', value: low, length: n.value, span: join(low.span, n.span) };
      }
    }
    return low;
  }

  /** `concat_rhs_expr`. */
  private concatRhs(): RawExpr {
    const items: RawExpr[] = [this.multitonRhs()];
    while (this.isWord('.')) {
      this.next();
      items.push(this.multitonRhs());
    }
    if (items.length === 1) return items[0]!;
    return { t: 'concat', items, span: join(items[0]!.span, items[items.length - 1]!.span) };
  }

  /**
   * A right-hand side: a value, a flag list, a concatenation, a set or a set reference. In a
   * `define` a list may end with a comma before the newline.
   */
  private rhs(inDefine: boolean): RawExpr {
    const t = this.peek();
    if (t.kind === 'punct' && t.text === '{') return this.setExpr();
    if (t.kind === 'word' && t.text.startsWith('@')) {
      this.next();
      return { t: 'setref', name: t.text.slice(1), span: t.span };
    }
    if (this.atEnd()) this.fail(t);
    const first = this.concatRhs();
    if (!this.isPunct(',') || first.t === 'concat') return first;
    const items: RawExpr[] = [first];
    while (this.isPunct(',')) {
      this.next();
      if (inDefine && this.peek().kind === 'newline') break;
      items.push(this.basicRhs());
    }
    return { t: 'list', items, span: join(first.span, items[items.length - 1]!.span) };
  }

  /** `set_block_expr`: `{ … }` or a variable holding a set. */
  private setBlockExpr(): RawExpr {
    const t = this.peek();
    if (t.kind === 'word' && t.text.startsWith('$')) {
      const v = this.variable(this.next());
      if (v.t !== 'set') this.failAt(t.span, `syntax error, expecting set`, t.text);
      return v;
    }
    return this.setExpr();
  }

  /** `{ elem, elem : data, … }` with newlines allowed inside; a variable holding a set merges in. */
  private setExpr(): RawExpr {
    const open = this.expectPunct('{');
    const elements: RawElement[] = [];
    for (;;) {
      this.skipNewlines();
      if (this.isPunct('}')) {
        if (elements.length === 0) this.fail(this.peek());
        break;
      }
      if (this.isPunct('{')) {
        const inner = this.setExpr();
        if (inner.t === 'set') elements.push(...inner.elements);
      } else {
        const t = this.peek();
        if (t.kind === 'word' && t.text.startsWith('$') && (this.isPunct(',', 1) || this.isPunct('}', 1) || this.peek(1).kind === 'newline')) {
          const v = this.variable(this.next());
          if (v.t === 'set') elements.push(...v.elements);
          else elements.push({ key: { ...v, span: t.span }, span: t.span });
        } else elements.push(this.setElement());
      }
      this.skipNewlines();
      if (this.isPunct(',')) {
        this.next();
        continue;
      }
      if (!this.isPunct('}')) this.fail(this.peek(), "comma or '}'");
    }
    const close = this.expectPunct('}');
    return { t: 'set', elements, span: join(open.span, close.span) };
  }

  private setElement(): RawElement {
    let key: RawExpr;
    if (this.isWord('*')) {
      const star = this.next();
      key = { t: 'sym', text: '*', quoted: false, span: star.span };
    } else key = this.concatRhs();
    let counter: { packets: number; bytes: number } | undefined;
    const stateful: RawStatement[] = [];
    let comment: string | undefined;
    let timeout: number | undefined;
    let expires: number | undefined;
    for (;;) {
      if (this.isWord('counter')) {
        this.next();
        counter = { packets: 0, bytes: 0 };
        if (this.isWord('packets')) {
          this.next();
          counter.packets = this.number().value;
          this.expectWord('bytes');
          counter.bytes = this.number().value;
        }
      } else if (this.isWord('limit') || this.isWord('quota') || (this.isWord('ct') && this.isWord('count', 1))) {
        stateful.push(this.statefulStatement());
      } else if (this.isWord('comment')) {
        this.next();
        comment = this.commentText();
      } else if (this.isWord('timeout')) {
        this.next();
        timeout = this.timeSpec().value;
      } else if (this.isWord('expires')) {
        this.next();
        expires = this.timeSpec().value;
      } else break;
    }
    let data: RawExpr | undefined;
    if (this.isWord(':')) {
      this.next();
      data = this.setData();
    }
    return {
      key, ...(data ? { data } : {}), ...(counter ? { counter } : {}), ...(comment !== undefined ? { comment } : {}),
      ...(timeout !== undefined ? { timeout } : {}), ...(expires !== undefined ? { expires } : {}), ...(stateful.length ? { stateful } : {}), span: key.span,
    };
  }

  private setData(): RawExpr {
    const t = this.peek();
    if (t.kind === 'word' && VERDICTS.has(t.text)) {
      this.next();
      if (t.text === 'jump' || t.text === 'goto') {
        const c = this.chainName();
        return { t: 'verdict', verdict: t.text, chain: c.text, span: join(t.span, c.span) };
      }
      return { t: 'verdict', verdict: t.text as 'accept', span: t.span };
    }
    return this.concatRhs();
  }

  /** `stmt_expr`: a map lookup, a concatenation, a range, a prefix or a list of symbols. */
  private stmtExpr(): RawExpr {
    const t = this.peek();
    if (this.atEnd()) this.fail(t);
    let first: RawExpr;
    if (this.selectorStart()) {
      first = this.concatExpr();
      if (this.isWord('map')) {
        this.next();
        const mappings = this.rhs(false);
        return { t: 'map', key: first, mappings, span: join(first.span, mappings.span) };
      }
      return first;
    }
    first = this.concatRhs();
    if (this.isWord('map')) {
      this.next();
      const mappings = this.rhs(false);
      return { t: 'map', key: first, mappings, span: join(first.span, mappings.span) };
    }
    if (!this.isPunct(',')) return first;
    const items = [first];
    while (this.isPunct(',')) {
      this.next();
      items.push(this.primaryRhs());
    }
    return { t: 'list', items, span: join(first.span, items[items.length - 1]!.span) };
  }

  private matchOrMangle(): RawStatement {
    const start = this.peek();
    if (!this.selectorStart()) {
      if (start.kind === 'word' && payloadFields(start.text) !== undefined) {
        const f = this.peek(1);
        if (f.kind === 'word' && /^[a-z][a-z0-9-]*$/.test(f.text)) this.failAt(f.span, `syntax error, unexpected ${f.text}`, f.text);
        this.fail(f);
      }
      this.fail(start);
    }
    const left = this.concatExpr();
    if (this.isWord('set')) {
      this.next();
      const value = this.stmtExpr();
      return { t: 'mangle', target: left, value, span: join(left.span, value.span) };
    }
    if (this.isWord('vmap')) {
      this.next();
      const mappings = this.rhs(false);
      return { t: 'vmap', key: left, mappings, span: join(left.span, mappings.span) };
    }
    let op: RawOp = 'implicit';
    const o = this.peek();
    if ((o.kind === 'punct' || o.kind === 'word') && RELOPS[o.text]) {
      this.next();
      op = RELOPS[o.text]!;
    } else if ((o.kind === 'punct' && o.text === '!') || (o.kind === 'word' && o.text === 'not')) {
      this.next();
      op = 'neg';
    }
    if (this.atEnd()) this.fail(this.peek());
    const right = this.rhs(false);
    if (this.isWord('/')) {
      this.next();
      const mask = this.basicRhs();
      const maskList = this.isPunct(',') ? this.flagList(mask) : mask;
      return { t: 'match', left, op, right, flagMask: maskList, span: join(left.span, maskList.span) };
    }
    return { t: 'match', left, op, right, span: join(left.span, right.span) };
  }

  private flagList(first: RawExpr): RawExpr {
    const items = [first];
    while (this.isPunct(',')) {
      this.next();
      items.push(this.basicRhs());
    }
    return { t: 'list', items, span: join(first.span, items[items.length - 1]!.span) };
  }
}

/** Keywords that may stand as values on a right-hand side (`keyword_expr`, protocol names, `exists`). */
const RHS_KEYWORDS: ReadonlySet<string> = new Set([
  'ether', 'ip', 'ip6', 'vlan', 'arp', 'dnat', 'snat', 'ecn', 'reset', 'original', 'reply', 'label', 'tcp', 'udp', 'udplite', 'esp',
  'ah', 'icmp', 'igmp', 'icmpv6', 'comp', 'dccp', 'sctp', 'redirect', 'exists', 'missing', 'mark', 'day', 'hour', 'time', 'rt',
]);

function emptyObject(type: NftObjectType): RawObjectSpec {
  switch (type) {
    case 'counter': return { type, packets: 0, bytes: 0 };
    case 'quota': return { type, over: false, bytes: 0n, used: 0n };
    case 'limit': return { type, rate: 0, unit: 'second', over: false };
    case 'ct helper': return { type };
    case 'ct timeout': return { type, policy: [] };
    case 'ct expectation': return { type };
    case 'secmark': return { type, context: '' };
    case 'synproxy': return { type, mss: 0, wscale: 0, flags: [] };
  }
}

function rawToSelector(e: RawExpr): NftSelector {
  if (e.t === 'sel') return e.sel;
  if (e.t === 'concat') return { kind: 'concat', items: e.items.map(rawToSelector) };
  throw new SyntaxError_(diagnostic('UNEXPECTED_TOKEN', 'syntax error, expecting a header field', e.span));
}

/** A command read from an included file, its positions moved to the `include` line. */
function relocate(c: RawCommand, span: Span): RawCommand {
  const move = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(move);
    if (v !== null && typeof v === 'object') {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) o[k] = k.endsWith('pan') && x !== null && typeof x === 'object' && 'line' in (x as object) ? span : move(x);
      return o;
    }
    return v;
  };
  return move(c) as RawCommand;
}
